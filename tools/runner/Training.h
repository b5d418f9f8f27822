//===- Training.h - The training loop over train_step -----------*- C++ -*-===//
//
// The one training loop of dlc, for compiled modules (dlc-run MODULE.dlcm,
// training binaries) and the reference evaluator (dlc-run --interpret
// --train) alike, over runner::Engine. It feeds train_step batches from
// --data (runtime/support's DataLoader: per-epoch shuffles from --seed),
// logs each step's loss and metrics (--log, --tensorboard, progress on
// stderr), evaluates (--eval-data), and saves checkpoints from which a run
// resumes bit-exactly: a checkpoint holds every global (parameters,
// optimizer state, step counter, dropout seed) and, as metadata, the data
// position and order, the steps done and the run's target, so that training
// 10 steps, or 5, a checkpoint and 5 more, log the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_TRAINING_H
#define DLC_TOOLS_RUNNER_TRAINING_H

#include "tools/runner/Engine.h"
#include "tools/runner/Options.h"

namespace dlc::runner {

/// Trains `engine`'s program as `options` (with --data) say. Progress goes
/// to stderr, evaluation results to stdout. Throws on failure, after which
/// the log holds the steps done and the last checkpoint is intact. With
/// `comm` (a module compiled with --dp N, on N ranks), every rank reads the
/// same global batches and trains on its share of their rows; the logged
/// values are averaged over the ranks, and rank 0 alone logs, checkpoints,
/// evaluates and exports.
void runTraining(Engine &engine, const Options &options, rt::Comm *comm);

/// Where a training run saves its checkpoints: --checkpoint-dir, or else
/// the directory it resumes from (a run resumed from a checkpoint directory
/// goes on saving there); empty when it saves none.
std::string checkpointDirectory(const Options &options);

/// A file's directory, "." for a bare name.
std::string directoryOf(const std::string &path);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_TRAINING_H
