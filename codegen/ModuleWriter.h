//===- ModuleWriter.h - dlc IR to a .dlcm compiled module -------*- C++ -*-===//
//
// The last stage of dlc-compile: from a module lowered to the execution
// plan (codegen/plan/Passes.h, buildPlanPipeline), serializes each
// function's plan one op to one step, generates and compiles each named
// kernel for the target, and writes everything with the module's globals
// into the FlatBuffers container of runtime/module/dlcm.fbs.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_MODULEWRITER_H
#define DLC_CODEGEN_MODULEWRITER_H

#include "codegen/KernelEmitter.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::dlc::codegen {

struct ModuleWriterOptions {
  Target target = Target::Cpu;
  /// The functions to compile, in this order (each must exist).
  std::vector<std::string> functions;
  std::string modelName;
  std::string producer;
  std::string trainingOptions;
  /// The ONNX model minus the initializers that are globals (may be empty).
  std::string onnxModel;
  /// Whether globals' initial values go into the module.
  bool embedParameters = true;
  /// CPU: the host C++ compiler and the -march it targets.
  std::string hostCompiler = "c++";
  std::string hostCpu = "native";
  /// CUDA: the architectures to build cubins for; PTX is for the first's
  /// virtual architecture, so newer GPUs can JIT it.
  std::vector<std::string> cudaArchitectures = {"sm_80", "sm_90a"};
  /// CUDA: whether float32 matmuls and convolutions may run on TF32 tensor
  /// cores (dlcm.fbs Module.cuda_allow_tf32).
  bool cudaAllowTf32 = false;
  /// CUDA: whether convolutions may take engines cuDNN marks
  /// nondeterministic (dlcm.fbs Module.cuda_allow_nondeterministic).
  bool cudaAllowNondeterministic = false;
};

/// The bytes of the .dlcm file. Errors are emitted as diagnostics at the op
/// that cannot be compiled, or at the module for tool failures (the host
/// compiler, NVRTC).
FailureOr<std::string> writeModule(ModuleOp module,
                                   const ModuleWriterOptions &options);

/// The kernel source `writeModule` would compile (the prelude then every
/// distinct kernel), for reading.
FailureOr<std::string> generateKernelSource(ModuleOp module,
                                            const ModuleWriterOptions &options);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_MODULEWRITER_H
