//===- TrainingOptions.h - The training options dlc-compile and dlc-run share
//
// `dlc-compile --train` and `dlc-run --interpret --train` take the training
// pipeline's options (passes/Pipeline.h, TrainingPipelineOptions) as their
// flags: --loss is the pipeline's loss=, the same option object, also
// registered as a top-level command-line option.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_COMMON_TRAININGOPTIONS_H
#define DLC_TOOLS_COMMON_TRAININGOPTIONS_H

#include "frontend/Importer.h"
#include "passes/Pipeline.h"

namespace mlir::dlc::tools {

/// Registers the training options (call before parsing).
void registerTrainingOptions();

/// Checks the options (TrainingPipelineOptions::error). Prints one
/// "tool: error: ..." line and returns false on a bad value.
bool checkTrainingOptions(llvm::StringRef tool);

/// The parsed options.
const mlir::dlc::TrainingPipelineOptions &trainingPipelineOptions();

/// dlc-mixed-precision's options for --precision bf16 or fp16, else none.
std::optional<mlir::dlc::DLCMixedPrecisionOptions> mixedPrecisionOptions();

/// Whether --precision is tf32.
bool tf32Given();

/// Whether --precision was given at all.
bool precisionGiven();

/// The category of the training options in --help.
const llvm::cl::OptionCategory &trainingOptionCategory();

/// The training options given on the command line that only compiling can
/// apply (all but --lr, --weight-decay and --precision), as "--name".
llvm::SmallVector<std::string> compileOnlyTrainingOptionsGiven();

/// The --lr and --weight-decay values given on the command line, by the
/// name of the global train_step reads them from (dlc.lr,
/// dlc.weight_decay): run-time inputs that override a module's initial
/// values.
llvm::SmallVector<std::pair<std::string, double>> hyperparametersGiven();

/// Imports `path` for training: @forward with inference semantics and
/// @forward_train with training semantics, sharing their globals.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
importForTraining(mlir::MLIRContext *context, llvm::StringRef path,
                  const mlir::dlc::ImportOptions &options);

/// Imports `path` for training and runs the training pipeline; reports
/// errors as diagnostics on `context`.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
compileForTraining(mlir::MLIRContext *context, llvm::StringRef path,
                   const mlir::dlc::ImportOptions &options);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_COMMON_TRAININGOPTIONS_H
