//===- Training.h - The training loop over train_step -----------*- C++ -*-===//
//
// Feeds train_step batches from the --data .npz (runtime/support's
// DataLoader: per-epoch shuffles, the same order as dlc-run --train), logs
// each step's loss and metrics exactly as dlc-run --interpret --train does,
// and saves checkpoints from which a run resumes bit-exactly: a checkpoint
// holds every global (parameters, optimizer state, step counter, dropout
// seed) and, as metadata, the data position and order, the steps done and
// the run's target, so that training 10 steps, or 5, a checkpoint and 5
// more, log the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_TRAINING_H
#define DLC_TOOLS_RUNNER_TRAINING_H

#include "tools/runner/LoadedModule.h"
#include "tools/runner/Options.h"

namespace dlc::runner {

/// Trains `module` in `session` as `options` (with --data) say. Progress
/// goes to stderr, evaluation results to stdout. Throws on failure, after
/// which the log holds the steps done and the last checkpoint is intact.
void runTraining(const LoadedModule &module, rt::Session &session,
                 const Options &options);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_TRAINING_H
