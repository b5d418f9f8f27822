//===- KernelEmitter.h - dlc.fusion to C++ and CUDA C++ kernels -*- C++ -*-===//
//
// One fused-kernel representation, two targets. A fusion is evaluated by
// demand: each yielded value is computed at the output index, and every op
// computes its value at an index by asking its operands for theirs at the
// indices it reads (broadcast, transpose, slice, gather...), opening inner
// loops for reductions and pooling windows. The resulting per-element body
// is the same C-like code for both targets; only the kernel wrapper (how
// iterations map to threads) and the prelude of math helpers differ, and
// CUDA adds warp-split reductions, 16-byte elementwise groups and kernels
// that run several fusions' kernels in one launch.
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
  /// CUDA: the threads that run one iteration (dlcm.fbs KernelStep.
  /// threads_per_iteration): 32 for a kernel whose reductions are split
  /// over a warp's lanes, else 1. Always 1 on the CPU.
  int64_t threadsPerIteration = 1;
};

/// Emits the kernel of `fusion` as an `extern "C"` function `name` whose
/// buffers are the fusion's operands then its results (runtime/module/
/// dlcm.fbs states the ABI of each target). Fails with a diagnostic at an
/// op codegen does not handle.
FailureOr<EmittedKernel> emitKernel(FusionOp fusion, llvm::StringRef name,
                                    Target target);

/// A kernel run in a horizontal group (emitKernelGroup): its fusion, and
/// for each of the fusion's operands then results, the index of its buffer
/// among the group's.
struct GroupMember {
  FusionOp fusion;
  llvm::ArrayRef<unsigned> slots;
};

/// Emits one CUDA kernel `name` over `numBuffers` buffers that runs the
/// kernels of `members` side by side (codegen/HorizontalFusion.h says
/// which): member k's iterations follow member k - 1's, and an iteration
/// runs the code of its member's own kernel, found by a binary search over
/// the members' first iterations. A warp's iterations are consecutive, so
/// its lanes disagree only where one member ends. The members must run the
/// same threads per iteration and touch no memory another writes. Fails as
/// emitKernel does.
FailureOr<EmittedKernel> emitKernelGroup(llvm::ArrayRef<GroupMember> members,
                                         size_t numBuffers,
                                         llvm::StringRef name);

/// Every line of `text`, indented by `spaces`.
std::string indent(llvm::StringRef text, unsigned spaces);

/// The statement that keeps a kernel's iteration bound `bound` within the
/// compiled `iterations`: a corrupt plan cannot run past the compiled
/// shapes.
std::string clampIterations(llvm::StringRef bound, int64_t iterations);

/// A CUDA kernel's signature (the ABI of dlcm.fbs `table Kernel`) and its
/// buffer array `b`. A kernel of a block per iteration is launched with
/// `threads` threads a block, and says so, so that NVRTC keeps its registers
/// within what a block that size may have.
std::string cudaSignature(llvm::StringRef name, size_t buffers,
                          int64_t threads);

/// What every kernel source for `target` starts with: fixed-width types and
/// the math helpers kernels call.
llvm::StringRef kernelPrelude(Target target);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_KERNELEMITTER_H
