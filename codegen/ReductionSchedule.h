//===- ReductionSchedule.h - How a CUDA reduction kernel uses the chip -*- C++ -*-===//
//
// The policy behind a reducing kernel's shape, kept apart from the code that
// emits it so unit tests drive it directly (codegen/test/unit). A kernel
// whose iterations are reductions runs each iteration on T cooperating
// threads: 1 (a thread per row), 32 (a warp per row, combined with shuffles)
// or 64..1024 (a block per row: shuffles within each warp, then the warps'
// partials through shared memory in a fixed order). Every combination order
// is fixed by T alone, so results do not depend on the grid: no atomics, and
// the same inputs give the same bits.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_REDUCTIONSCHEDULE_H
#define DLC_CODEGEN_REDUCTIONSCHEDULE_H

#include <cstdint>

namespace mlir::dlc::codegen {

/// What a reducing kernel's schedule is chosen from.
struct ReductionShape {
  /// Iterations: the outputs, each one row to reduce.
  int64_t rows = 0;
  /// Elements reduced per output (the kernel's longest reduction).
  int64_t rowLength = 0;
  /// Bytes of one reduced element.
  int64_t elementBytes = 4;
  /// Whether the reduction runs along the contiguous innermost axis, so
  /// that neighbouring threads of a row read neighbouring elements.
  bool contiguous = true;
};

/// The GPU a schedule is sized for. Kernels run correctly on any GPU; this
/// only decides how many threads share a row. The default is an H100/H200
/// (132 multiprocessors of 2048 resident threads).
struct DeviceModel {
  int64_t multiprocessors = 132;
  int64_t threadsPerMultiprocessor = 2048;

  /// Threads resident at once: one wave.
  int64_t wave() const { return multiprocessors * threadsPerMultiprocessor; }
};

/// The threads that cooperate on one row of `shape` on `device`: 1, 32, or
/// a power of two from 64 to 1024 (a block per row).
///  - Rows shorter than 64 elements stay on one thread: splitting them costs
///    more in the combining steps than it saves.
///  - A reduction across a strided axis with enough rows to fill a wave
///    stays on one thread per row: neighbouring threads then read
///    neighbouring rows, which is what coalesces.
///  - Otherwise rows start on a warp and double their threads while every
///    thread still folds at least 64 bytes of its row and all rows together
///    stay within four waves. Few long rows (BatchNorm statistics over batch
///    x spatial) get whole blocks and keep the chip busy; many long rows
///    (the loss's softmax over a 50k-class axis) get blocks of 64 to 256;
///    many short rows (attention's softmax) stay on warps.
int64_t chooseReductionThreads(const ReductionShape &shape,
                               const DeviceModel &device = DeviceModel());

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_REDUCTIONSCHEDULE_H
