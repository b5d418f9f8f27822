//===- Schedule.h - How generated CUDA kernels spread their work -*- C++ -*-===//
//
// The policies behind a kernel's shape, kept apart from the code that emits
// it so unit tests drive them directly (codegen/test/unit).
//  - A kernel whose iterations are reductions runs each iteration on T
//    cooperating threads: 1 (a thread per row), 32 (a warp per row,
//    combined with shuffles) or 64..1024 (a block per row: shuffles within
//    each warp, then the warps' partials through shared memory in a fixed
//    order). Every combination order is fixed by T alone, so results do not
//    depend on the grid: no atomics, and the same inputs give the same bits.
//  - Rows too few to fill the chip even at a block each (BatchNorm
//    statistics of a wide stem over a large batch), and strided rows too
//    few to fill it at a thread each (channels-last statistics, bias
//    gradients), are split into chunks: dlc-split-reductions reduces each
//    chunk to a partial in one kernel and the partials in order in a
//    second, so the result stays deterministic.
//  - A scatter with many updates per line (what dlc-sort-scatters leaves:
//    embedding gradients of more tokens than it sorts, other scatters)
//    splits each line's targets into chunks, one iteration each: every
//    iteration walks all of its line's updates in order and applies those
//    that land in its chunk, so each result element is still written by
//    one thread, in the evaluator's order.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_FUSION_SCHEDULE_H
#define DLC_PASSES_FUSION_SCHEDULE_H

#include <cstdint>

namespace mlir::dlc {

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

/// The chunks each row of `shape` splits into, each reduced to a partial
/// before a second kernel combines a row's partials in order:
///  - Rows along a strided axis (channels-last BatchNorm statistics, bias
///    gradients: columns of a [rows x columns] matrix) fewer than a wave's
///    threads: as many chunks as make a wave of rows, each at least 8
///    elements. The partials are then enough rows to stay a thread each,
///    and neighbouring threads read neighbouring columns: coalesced, where
///    a warp or block per column would read one element per 32-byte sector.
///  - Contiguous rows that take a block each (chooseReductionThreads gives
///    1024) and are fewer than two blocks per multiprocessor: as many
///    chunks as make two blocks per multiprocessor, while each chunk still
///    gives every thread of its block at least 64 bytes to fold.
///  - Otherwise 1.
int64_t chooseReductionSplit(const ReductionShape &shape,
                             const DeviceModel &device = DeviceModel());

/// The most updates a line of a scatter may have for its result to be
/// computed element by element, each element scanning its line's updates
/// (KernelEmitter's gathered form); wider scatters walk their updates.
constexpr int64_t kMaxGatheredUpdates = 16;

/// The chunks each of `lines` lines of a scatter splits its `targets`
/// target positions into, for `updates` updates a line: as many as make
/// lines x chunks fill one wave of `device`, at most one a target, and at
/// most 64 x targets / updates, so that the walks over the updates (chunks
/// x updates a line) read no more than 64 indices per result element.
int64_t chooseScatterChunks(int64_t lines, int64_t targets, int64_t updates,
                            const DeviceModel &device = DeviceModel());

} // namespace mlir::dlc

#endif // DLC_PASSES_FUSION_SCHEDULE_H
