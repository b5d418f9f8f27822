//===- Progress.h - Training progress on stderr -----------------*- C++ -*-===//
//
// On a terminal, one live line rewritten in place:
//   step 12/100  loss 2.3012  1,234 samples/s  elapsed 0:07  ETA 0:42
// Elsewhere (a log file, CI), a plain line after the first step, every
// max(1, steps / 20) steps of the run and after the last:
//   step 12/100 loss 2.3012 1234.5 samples/s elapsed 0:07 ETA 0:42
// A language model trained on a token file counts tokens instead of
// samples. Elapsed is the run's wall time; the ETA is the steps left at
// the current rate.
// The rate is measured over the interval since the previous line (or
// redraw), checkpoints and evaluations left out, so it follows the current
// training speed; the closing summary gives the run's average over its
// wall time.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_PROGRESS_H
#define DLC_TOOLS_RUNNER_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace dlc::runner {

/// 1234567 -> "1,234,567".
std::string withThousands(int64_t value);
/// Seconds as "m:ss", or "h:mm:ss" from an hour on.
std::string formatDuration(double seconds);

class Progress {
public:
  using Clock = std::chrono::steady_clock;

  /// A run from step `firstStep` (steps already done) to `lastStep`, each
  /// step `itemsPerStep` of `unit` ("samples", "tokens"), reported to
  /// `out`; `live` chooses the rewritten line.
  Progress(std::FILE *out, bool live, int64_t firstStep, int64_t lastStep,
           int64_t itemsPerStep, std::string unit = "samples");
  /// Ends an open live line, so that an error message is a line of its own.
  ~Progress() { interrupt(); }
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// After each step: `stepsDone` steps in all, the step's loss.
  void update(int64_t stepsDone, double loss);
  /// Leaves `pause` (a checkpoint, an evaluation) out of the current
  /// interval's rate.
  void exclude(Clock::duration pause) { lastTime_ += pause; }
  /// Ends the live line so other output starts on a line of its own.
  void interrupt();
  /// Prints the summary: steps, wall time and mean rate of this run.
  void finish();

private:
  void print(int64_t stepsDone, double loss, Clock::time_point now);

  std::FILE *out_;
  bool live_;
  int64_t firstStep_, lastStep_, itemsPerStep_, every_;
  std::string unit_;
  Clock::time_point start_, lastTime_;
  /// The steps done at the last update and at the last line printed.
  int64_t doneStep_, printedStep_;
  bool lineOpen_ = false;
};

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_PROGRESS_H
