//===- Passes.td - Passes on the execution-plan level ---------*- tablegen -*-===//
//
// After memory planning, a compiled function is lowered to plan ops
// (ir/PlanOps.td) and every backend decision is one of these passes
// (DESIGN.md, decision 11); codegen/ModuleWriter.cpp serializes the result
// one op to one step. dlc-compile runs them as buildPlanPipeline
// (codegen/plan/Passes.h) and prints the result with --emit=plan.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_PLAN_PASSES_TD
#define DLC_CODEGEN_PLAN_PASSES_TD

include "mlir/Pass/PassBase.td"

def DLCLowerToPlan : Pass<"dlc-lower-to-plan", "ModuleOp"> {
  let summary = "lowers memory-planned functions to execution-plan ops";
  let description = [{
    Each dlc.fusion becomes a dlc.plan.launch of its kernel, with the
    schedule the kernel emitter chooses for the target; dlc.attention and
    dlc.attention_grad (kept for CUDA's fused kernels) become launches of
    their hand-tiled kernels; dlc.matmul becomes dlc.plan.matmul, a library
    call; a returned value that cannot be computed into its result buffer
    (an argument, a constant, a value returned twice) gets a dlc.plan.copy.
    Each convolution (dlc.conv and its gradient ops) becomes a
    dlc.plan.conv of the engine `conv-engine` names; a demand the target
    cannot honour (`direct` on CUDA; `library` for a CPU convolution
    oneDNN does not take) is an error.
    Fusions that only transpose a matmul operand (views in the memory plan)
    are left to dlc-fold-transposes. Every op without a compiled path on
    the target is reported in one error. Records the target on the module
    (`dlc.plan_target`), which the later plan passes read.
  }];
  let options = [
    Option<"target", "target", "::mlir::dlc::codegen::Target",
           "::mlir::dlc::codegen::Target::Cpu",
           "the target whose kernels the plan launches",
           [{::llvm::cl::values(
               clEnumValN(::mlir::dlc::codegen::Target::Cpu, "cpu",
                          "C++ kernels, oneDNN/BLAS library calls"),
               clEnumValN(::mlir::dlc::codegen::Target::Cuda, "cuda",
                          "CUDA kernels, cuBLASLt/cuDNN library calls"))}]>,
    Option<"convEngine", "conv-engine", "::mlir::dlc::ConvEngine",
           "::mlir::dlc::ConvEngine::automatic",
           "what runs the convolutions (dlc.plan.conv's engine)",
           "::mlir::dlc::codegen::convEngineValues()">,
  ];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCFoldTransposes : Pass<"dlc-fold-transposes", "ModuleOp"> {
  let summary = "reads transposed matmul operands through the library's flag";
  let description = [{
    A dlc.plan.matmul operand computed by a fusion that only swaps its
    input's last two dimensions, when every user of that fusion is a
    library matmul, is read from the fusion's input with the operand's
    transposed flag flipped (BLAS, oneDNN and cuBLASLt read either layout);
    the fusion, which the memory plan gave no storage (a view,
    passes/memory/BufferPlacement.h), is erased.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCFoldEpilogues : Pass<"dlc-fold-epilogues", "ModuleOp"> {
  let summary = "lets library matmuls apply their bias (and ReLU) epilogue";
  let description = [{
    cuBLASLt adds a bias vector to every row (then applies ReLU) as it
    stores a product. A dlc.plan.matmul that dlc-fuse marked (`dlc.epilogue`)
    whose only user is a launch computing nothing but that bias add (and
    its ReLU) takes the launch over: the matmul writes the launch's result
    with epilogue `bias` or `bias_relu`, and the launch and its pass over
    the product disappear. Only where it is sound in memory: no step may
    come between the two (views and constants may), and the result's
    buffer must not overlap what the matmul reads (the memory plan, run
    with keep-epilogue-operands, allows for this). float32, bfloat16 and
    float16 products; float64 ones keep their kernel until a GPU run shows
    cuBLASLt has bias-epilogue algorithms for them. For the CUDA target.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCHorizontalFusion : Pass<"dlc-horizontal-fusion", "ModuleOp"> {
  let summary = "runs independent kernel launches as one launch (CUDA)";
  let description = [{
    A training step's optimizer update is one small kernel per parameter;
    on a GPU each launch costs microseconds. This pass merges independent
    launches of the same threads per iteration into one dlc.plan.launch
    whose kernel lays their iteration spaces end to end
    (codegen/HorizontalFusion.h decides the groups from the buffers each
    step reads and writes, so any step may be proven independent and moved
    past). A group sits where its first member was; a buffer several
    members read is one argument. Needs a CUDA plan.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

def DLCNameKernels : Pass<"dlc-name-kernels", "ModuleOp"> {
  let summary = "names each launch's kernel, identical kernels once";
  let description = [{
    Gives every dlc.plan.launch the name of its generated kernel,
    `dlc_kernel_N` in order of first launch over the module's functions:
    launches whose kernels have the same source (the same body and shapes,
    as a ResNet's repeated blocks produce) share one kernel, generated and
    compiled once.
  }];
  let dependentDialects = ["::mlir::dlc::DLCDialect"];
}

#endif // DLC_CODEGEN_PLAN_PASSES_TD
