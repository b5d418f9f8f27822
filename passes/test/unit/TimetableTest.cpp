//===- TimetableTest.cpp - The 1F1B schedule's order and bubble -----------===//

#include "passes/parallel/Timetable.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace mlir::dlc;

namespace {

llvm::SmallVector<PipelineTask> uniform(int64_t stages, int64_t micro) {
  llvm::SmallVector<double> forward(stages, 1), backward(stages, 2);
  return oneForwardOneBackward(stages, micro, forward, backward);
}

/// Stage `stage`'s tasks in order, "F0 F1 B0 ...".
std::string orderOf(llvm::ArrayRef<PipelineTask> tasks, int64_t stage) {
  std::string text;
  for (const PipelineTask &t : tasks)
    if (t.stage == stage)
      text += (text.empty() ? "" : " ") + std::string(t.backward ? "B" : "F") +
              std::to_string(t.micro);
  return text;
}

TEST(Timetable, EachStageRunsWarmupThenOneForwardOneBackward) {
  auto tasks = uniform(4, 6);
  EXPECT_EQ(orderOf(tasks, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(orderOf(tasks, 1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5");
  EXPECT_EQ(orderOf(tasks, 2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5");
  EXPECT_EQ(orderOf(tasks, 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  // Fewer micro-batches than stages: all forwards, then all backwards.
  auto few = uniform(4, 2);
  EXPECT_EQ(orderOf(few, 0), "F0 F1 B0 B1");
  EXPECT_EQ(orderOf(few, 3), "F0 B0 F1 B1");
}

TEST(Timetable, OrderIsSequentialAndRespectsDependencies) {
  for (int64_t stages : {1, 2, 3, 5})
    for (int64_t micro : {1, 2, 4, 7}) {
      auto tasks = uniform(stages, micro);
      ASSERT_EQ(static_cast<int64_t>(tasks.size()), 2 * stages * micro);
      // finish[stage][micro][backward], and the position in the order.
      std::map<std::tuple<int64_t, int64_t, bool>, const PipelineTask *> at;
      for (size_t i = 0; i < tasks.size(); ++i) {
        const PipelineTask &t = tasks[i];
        if (i > 0)
          EXPECT_LE(tasks[i - 1].start, t.start);
        // What it waits for is earlier in the order and done when it starts.
        std::tuple<int64_t, int64_t, bool> input =
            t.backward ? std::tuple(t.stage + 1, t.micro, true)
                       : std::tuple(t.stage - 1, t.micro, false);
        bool first = t.backward ? t.stage + 1 == stages : t.stage == 0;
        if (t.backward && first) // the last stage's backward: its forward
          input = std::tuple(t.stage, t.micro, false);
        if (!first || t.backward) {
          auto it = at.find(input);
          ASSERT_NE(it, at.end()) << "stage " << t.stage << " micro " << t.micro
                                  << " backward " << t.backward;
          EXPECT_LE(it->second->finish, t.start);
        }
        at[{t.stage, t.micro, t.backward}] = &t;
      }
    }
}

// With equal stages, every stage idles (p - 1) / (m + p - 1) of the step:
// the bound the runner's measured idle times are held to.
TEST(Timetable, EqualStagesIdleTheOneForwardOneBackwardBubble) {
  for (int64_t stages : {2, 3, 4, 8})
    for (int64_t micro : {1, 4, 8, 16}) {
      auto tasks = uniform(stages, micro);
      double bound = static_cast<double>(stages - 1) /
                     static_cast<double>(micro + stages - 1);
      for (int64_t s = 0; s < stages; ++s)
        EXPECT_NEAR(idleFraction(tasks, s), bound, 1e-12)
            << stages << " stages, " << micro << " micro-batches, stage " << s;
    }
}

TEST(Timetable, UnequalStagesWaitForTheSlowest) {
  // Stage 1 twice as slow: the step takes m of its (F + B) plus the fill
  // and drain of the others.
  llvm::SmallVector<double> forward = {1, 2}, backward = {2, 4};
  auto tasks = oneForwardOneBackward(2, 4, forward, backward);
  double end = 0;
  for (const PipelineTask &t : tasks)
    end = std::max(end, t.finish);
  EXPECT_DOUBLE_EQ(end, 1 + 4 * 6 + 2);
  EXPECT_DOUBLE_EQ(idleFraction(tasks, 1), 3.0 / 27);
}

} // namespace
