//===- Timetable.cpp - The 1F1B pipeline schedule -------------------------===//

#include "passes/parallel/Timetable.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

namespace mlir::dlc {

llvm::SmallVector<PipelineTask>
oneForwardOneBackward(int64_t stages, int64_t micro,
                      llvm::ArrayRef<double> forward,
                      llvm::ArrayRef<double> backward) {
  // Each stage's own order.
  std::vector<std::vector<PipelineTask>> order(stages);
  for (int64_t s = 0; s < stages; ++s) {
    int64_t warmup = std::min(stages - s - 1, micro);
    auto add = [&](int64_t m, bool b) {
      PipelineTask task;
      task.stage = s;
      task.micro = m;
      task.backward = b;
      order[s].push_back(task);
    };
    for (int64_t m = 0; m < warmup; ++m)
      add(m, false);
    for (int64_t m = 0; m < micro - warmup; ++m) {
      add(warmup + m, false);
      add(m, true);
    }
    for (int64_t m = micro - warmup; m < micro; ++m)
      add(m, true);
  }
  // Ties in the start times below order tasks by stage; with costs above
  // 0 no task starts when one it waits for does.
  assert(llvm::all_of(forward, [](double c) { return c > 0; }) &&
         llvm::all_of(backward, [](double c) { return c > 0; }) &&
         "every task must take some time");
  // finish[s][m][backward], -1 until it has run.
  std::vector<std::vector<std::array<double, 2>>> finish(
      stages, std::vector<std::array<double, 2>>(micro, {-1, -1}));
  std::vector<size_t> next(stages, 0);
  std::vector<double> free(stages, 0);
  llvm::SmallVector<PipelineTask> tasks;
  // Run every stage as far as its inputs allow, until none can go on (the
  // 1F1B orders never wait on each other in a cycle, so all run).
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t s = 0; s < stages; ++s)
      for (; next[s] < order[s].size(); ++next[s]) {
        PipelineTask task = order[s][next[s]];
        double input = 0;
        if (!task.backward && s > 0)
          input = finish[s - 1][task.micro][0];
        if (task.backward && s + 1 < stages)
          input = finish[s + 1][task.micro][1];
        if (input < 0)
          break;
        task.start = std::max(free[s], input);
        task.finish = task.start + (task.backward ? backward[s] : forward[s]);
        free[s] = finish[s][task.micro][task.backward] = task.finish;
        tasks.push_back(task);
        progress = true;
      }
  }
  llvm::stable_sort(tasks, [](const PipelineTask &a, const PipelineTask &b) {
    return a.start < b.start || (a.start == b.start && a.stage < b.stage);
  });
  return tasks;
}

double idleFraction(llvm::ArrayRef<PipelineTask> tasks, int64_t stage) {
  double end = 0, busy = 0;
  for (const PipelineTask &task : tasks) {
    end = std::max(end, task.finish);
    if (task.stage == stage)
      busy += task.finish - task.start;
  }
  return end > 0 ? 1 - busy / end : 0;
}

} // namespace mlir::dlc
