//===- KernelEmitter.h - dlc.fusion to C++ and CUDA C++ kernels -*- C++ -*-===//
//
// One fused-kernel representation, two targets. A fusion is evaluated by
// demand: each yielded value is computed at the output index, and every op
// computes its value at an index by asking its operands for theirs at the
// indices it reads (broadcast, transpose, slice, gather...), opening inner
// loops for reductions and pooling windows. The resulting per-element body
// is the same C-like code for both targets; only the kernel wrapper (how
// iterations map to threads) and the prelude of math helpers differ.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_KERNELEMITTER_H
#define DLC_CODEGEN_KERNELEMITTER_H

#include "ir/Dialect.h"

#include <string>

namespace mlir::dlc::codegen {

enum class Target { Cpu, Cuda };

struct EmittedKernel {
  /// The kernel's definition (without the prelude).
  std::string source;
  /// The iteration count the runtime splits among threads (CPU) or that
  /// the grid covers (CUDA).
  int64_t iterations = 0;
  /// CPU: the fewest iterations worth a thread (dlcm.fbs KernelStep.grain):
  /// about 2048 elements' worth of the buffers the kernel touches.
  int64_t grain = 1;
};

/// Emits the kernel of `fusion` as an `extern "C"` function `name` whose
/// parameters are the fusion's operands then its results (runtime/module/
/// dlcm.fbs states the ABI). Fails with a diagnostic at an op codegen does
/// not handle.
FailureOr<EmittedKernel> emitKernel(FusionOp fusion, llvm::StringRef name,
                                    Target target);

/// What every kernel source for `target` starts with: fixed-width types and
/// the math helpers kernels call.
llvm::StringRef kernelPrelude(Target target);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_KERNELEMITTER_H
