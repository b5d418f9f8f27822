//===- Timetable.h - The 1F1B pipeline schedule ---------------------------===//
//
// PipeDream-Flush's one-forward-one-backward schedule (Narayanan et al.
// 2021), Megatron-LM's default: stage s of p runs min(p - s - 1, m)
// forwards of its m micro-batches, then a backward and a forward in turn,
// then its remaining backwards. A forward waits for the stage before it, a
// backward for the stage after it. With equal stages each stage idles
// (p - 1) / (m + p - 1) of the step, GPipe's bubble, but holds at most
// p - s micro-batches' activations instead of m.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_PARALLEL_TIMETABLE_H
#define DLC_PASSES_PARALLEL_TIMETABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir::dlc {

/// One stage's forward or backward of one micro-batch, and when it runs.
struct PipelineTask {
  int64_t stage = 0, micro = 0;
  bool backward = false;
  double start = 0, finish = 0;
};

/// Every task of `stages` stages over `micro` micro-batches, forwards
/// costing `forward[s]` and backwards `backward[s]` (> 0) on stage s, each task
/// starting as soon as its stage and its input are free; ordered by start
/// time, ties by stage. The order is a valid sequential order of all the
/// work (a task comes after the ones it waits for), and each stage's tasks
/// in it are that stage's 1F1B order.
llvm::SmallVector<PipelineTask>
oneForwardOneBackward(int64_t stages, int64_t micro,
                      llvm::ArrayRef<double> forward,
                      llvm::ArrayRef<double> backward);

/// The fraction of [0, the last finish] in which `stage` runs no task.
double idleFraction(llvm::ArrayRef<PipelineTask> tasks, int64_t stage);

} // namespace mlir::dlc

#endif // DLC_PASSES_PARALLEL_TIMETABLE_H
