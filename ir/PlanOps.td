//===- PlanOps.td - The execution-plan level of dlc IR --------*- tablegen -*-===//
//
// After memory planning, codegen/plan's passes lower a compiled function to
// these ops (DESIGN.md, decision 11): each top-level op is one step of the
// module's plan (runtime/module/dlcm.fbs), beside views (dlc.reshape) and
// constants, which are no steps. Every backend decision (which transposes
// become library flags, which epilogues a library call applies, which
// kernels share a launch, which kernels are one) is a pass on this level,
// and the module writer serializes it one op to one step. Values keep the
// memory plan's placements: an op's `dlc.arena_offsets` and the function's
// arguments and results (passes/memory/BufferPlacement.h).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PLAN_OPS_TD
#define DLC_PLAN_OPS_TD

include "ir/DLCDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class DLC_PlanOp<string mnemonic, list<Trait> traits = []>
    : Op<DLC_Dialect, "plan." # mnemonic, traits>;

def DLC_LaunchOp : DLC_PlanOp<"launch",
    [IsolatedFromAbove, RecursiveMemoryEffects, SingleBlock]> {
  let summary = "one launch of one generated kernel";
  let description = [{
    Runs the kernel generated from its body over its operands (the buffers
    it reads) and results (the buffers it writes), with the schedule the
    kernel emitter chose: `iterations` (the iteration space the runtime
    splits among threads, or the CUDA grid covers), `grain` (the fewest
    iterations worth a CPU thread) and `threads` (CUDA threads per
    iteration: 32 for warp-split reductions). The body holds one
    dlc.fusion, one fused attention op (dlc.attention, dlc.attention_grad),
    or, after dlc-horizontal-fusion, several independent fusions run side
    by side, whose operands are the launch's arguments (a buffer several
    members read is one argument) and whose results are yielded in member
    order. `kernel` is the generated kernel's name, set by
    dlc-name-kernels, which gives identical kernels one name.

    Example:
    ```mlir
    %y = dlc.plan.launch "dlc_kernel_0" (%x, %b) iterations 32 grain 2048
        threads 1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %0 = dlc.fusion %a, %c : (...) -> tensor<4x8xf32> { ... }
      dlc.plan.yield %0 : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<DLC_Tensor>:$inputs,
                       OptionalAttr<StrAttr>:$kernel,
                       I64Attr:$iterations, I64Attr:$grain,
                       I64Attr:$threads);
  let results = (outs Variadic<DLC_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    ($kernel^)? `(` $inputs `)` `iterations` $iterations `grain` $grain
    `threads` $threads attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The fusions the kernel runs, in member order (none for attention).
    ::llvm::SmallVector<::mlir::dlc::FusionOp> getMembers();
    /// The fused attention op the kernel runs, or null.
    ::mlir::Operation *getAttention();
  }];
}

def DLC_PlanYieldOp : DLC_PlanOp<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"LaunchOp">]> {
  let summary = "the results of a launch's body";
  let arguments = (ins Variadic<DLC_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def DLC_PlanMatmulOp : DLC_PlanOp<"matmul", [Pure]> {
  let summary = "a library matrix product (cuBLASLt, oneDNN, BLAS)";
  let description = [{
    `result = epilogue(op(lhs) x op(rhs))`, batched as dlc.matmul, where
    op() swaps the last two dimensions of an operand marked transposed
    (the library reads it transposed; dlc-fold-transposes) and the
    epilogue adds `bias` (n elements, added to every row) and, for
    `bias_relu`, clamps at zero (cuBLASLt's epilogues; dlc-fold-epilogues).
    An operand's batch dimensions are all the result's or none.
    The evaluator rounds the product to the element type before the
    epilogue, as the ops it replaced did; cuBLASLt rounds once, which is
    within that rounding.

    Example:
    ```mlir
    %y = dlc.plan.matmul %x, %w rhs_transposed bias %b epilogue bias_relu
        : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins DLC_NumericTensor:$lhs, DLC_NumericTensor:$rhs,
                       UnitAttr:$lhs_transposed, UnitAttr:$rhs_transposed,
                       Optional<DLC_NumericTensor>:$bias,
                       DefaultValuedAttr<DLC_MatmulEpilogue,
                           "::mlir::dlc::MatmulEpilogue::none">:$epilogue);
  let results = (outs DLC_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs (`lhs_transposed` $lhs_transposed^)? `,` $rhs
    (`rhs_transposed` $rhs_transposed^)? (`bias` $bias^)?
    (`epilogue` $epilogue^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def DLC_PlanConvOp : DLC_PlanOp<"conv", [Pure]> {
  let summary = "a library convolution (cuDNN, oneDNN) or its direct loops";
  let description = [{
    One of a convolution's three products, as dlc.conv, dlc.conv_grad_input
    and dlc.conv_grad_filter compute them, with their attributes and
    operand orders: `forward` takes (x, w) and returns y, `backward_data`
    (dy, w) and returns dx, `backward_filter` (x, dy) and returns dw
    (`channels_last` as dlc.conv's). The op's x, w and y are the ConvStep's.

    `engine` is the step's engine slot: `auto` (the default) lets the
    runtime choose (cuDNN's heuristics; on the CPU oneDNN where it takes the
    shape, dlc's direct loops otherwise); `library` demands cuDNN or
    oneDNN, `direct` dlc's direct loops (the CPU's, exact in float64
    sums), and a session that cannot honour the demand refuses the module.
    dlc-lower-to-plan sets it (its conv-engine option, dlc-compile
    --conv-engine). The evaluator computes every engine by definition.

    Example:
    ```mlir
    %dx = dlc.plan.conv backward_data %dy, %w stride [1, 1] pad_low [1, 1]
        pad_high [1, 1] dilation [1, 1] groups 1 engine direct
        : (tensor<1x16x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins DLC_ConvKind:$kind, DLC_FloatTensor:$lhs,
                       DLC_FloatTensor:$rhs,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$pad_low,
                       DenseI64ArrayAttr:$pad_high, DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups, UnitAttr:$channels_last,
                       DefaultValuedAttr<DLC_ConvEngine,
                           "::mlir::dlc::ConvEngine::automatic">:$engine);
  let results = (outs DLC_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs (`channels_last` $channels_last^)? `stride` $stride
    `pad_low` $pad_low `pad_high` $pad_high `dilation` $dilation
    `groups` $groups (`engine` $engine^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The convolution's input, filter and output, whichever the kind
    /// computes.
    ::mlir::Value getX();
    ::mlir::Value getW();
    ::mlir::Value getY();
  }];
}

def DLC_PlanAllReduceOp : DLC_PlanOp<"all_reduce",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "one bucket of a data-parallel gradient all-reduce";
  let description = [{
    dlc.all_reduce at the plan level: each result is the sum, or the mean,
    of its operand over the module's data-parallel ranks. The step packs the
    operands into one contiguous buffer, reduces it with one collective of
    the session's communicator (MPI on CPU ranks) and unpacks the reduced
    values into the results' buffers. The operands share one element type,
    which the collective reduces. `bucket` numbers the buckets in the order
    the ranks issue them. With `tensor`, the ranks are those of this
    rank's tensor-parallel group instead (a dlc.tp_reduce's partial sums).

    Example:
    ```mlir
    %gw, %gb = dlc.plan.all_reduce mean bucket 0 %dw, %db
        : tensor<16x8xf32>, tensor<16xf32>
    %y = dlc.plan.all_reduce sum tensor bucket 1 %partial : tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Variadic<DLC_FloatTensor>:$inputs,
                       DLC_RankReduction:$reduction,
                       UnitAttr:$tensor,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$bucket);
  let results = (outs Variadic<DLC_FloatTensor>:$results);
  let assemblyFormat = [{
    $reduction (`tensor` $tensor^)? `bucket` $bucket $inputs attr-dict `:`
    type($inputs)
  }];
  let hasVerifier = 1;
}

def DLC_PlanCopyOp : DLC_PlanOp<"copy", [Pure, SameOperandsAndResultType]> {
  let summary = "a copy into a function result's buffer";
  let description = [{
    Copies its operand into new storage: the plan returns a copy where a
    value cannot be computed in place into the result buffer (an argument
    or constant returned, or a value returned twice).

    Example:
    ```mlir
    %r = dlc.plan.copy %x : tensor<8xf32>
    ```
  }];
  let arguments = (ins DLC_Tensor:$input);
  let results = (outs DLC_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

#endif // DLC_PLAN_OPS_TD
