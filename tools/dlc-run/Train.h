//===- Train.h - dlc-run --train: a training loop on the evaluator --------===//
#ifndef DLC_TOOLS_DLC_RUN_TRAIN_H
#define DLC_TOOLS_DLC_RUN_TRAIN_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace dlc::tools {

struct TrainLoopOptions {
  std::string dataFile;
  int64_t steps = 0;
  bool shuffle = true;
  uint64_t seed = 0;
  std::string logFile;
  std::string saveStateFile;
};

/// Runs @train_step of `module` `options.steps` times on batches of
/// `options.dataFile`, printing a line per step and writing the metrics and
/// final state as asked. Returns the exit code (errors are printed as one
/// line each, with `tool`).
int runTrainingLoop(mlir::ModuleOp module, const TrainLoopOptions &options,
                    llvm::StringRef tool);

} // namespace dlc::tools

#endif // DLC_TOOLS_DLC_RUN_TRAIN_H
