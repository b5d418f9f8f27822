//===- Evaluation.h - --eval-data: accuracy of forward ----------*- C++ -*-===//
//
// Runs forward over every full batch of an evaluation .npz (in file order)
// with the session's current parameters and counts the samples whose
// highest-scoring class, argmax over forward's first output [B, C], is the
// label; samples labelled with the ignore index are not counted. The
// ranks of a data-parallel job share the batches out (rank r takes batches
// r, r + N, ...) and sum their counts, which are then exactly one
// process's.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_EVALUATION_H
#define DLC_TOOLS_RUNNER_EVALUATION_H

#include "runtime/support/DataLoader.h"
#include "tools/runner/Engine.h"

#include <memory>
#include <string>

namespace dlc::runner {

struct EvaluationResult {
  /// Samples counted (labels other than the ignore index).
  int64_t samples = 0;
  int64_t correct = 0;
  /// correct / samples; NaN for no samples.
  double accuracy() const;
};

class Evaluation {
public:
  /// Checks that `path` can be evaluated with `engine`'s forward and that
  /// train_step has a class label (named by the file's label array).
  /// Throws naming what is missing.
  Evaluation(const Engine &engine, const std::string &path);

  /// Runs forward on this rank's batches (every one for one process) with
  /// `engine`'s current globals; the counts of this rank alone.
  EvaluationResult run(Engine &engine, int rank = 0, int ranks = 1);

  const std::string &path() const { return path_; }

private:
  std::string path_;
  rt::Signature forward_;
  int64_t ignoreIndex_ = -100;
  std::unique_ptr<DataLoader> loader_;
};

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_EVALUATION_H
