//===- Pipeline.h - dlc's pass pipelines ----------------------------------===//
//
// dlc-compile is these pipelines on a PassManager; each pass is also
// runnable alone in dlc-opt with the same options.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_PIPELINE_H
#define DLC_PASSES_PIPELINE_H

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace mlir::dlc {

/// The options of every training pass.
struct TrainingPipelineOptions {
  DLCAddLossOptions loss;
  DLCAutodiffOptions autodiff;
  DLCOptimizerOptions optimizer;
};

/// From a module with @forward (inference semantics) and @forward_train
/// (training semantics) sharing their dlc.global parameters, to one that
/// also has @loss, @loss_grad and @train_step, every function taking its
/// parameters and state as arguments.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// From a module whose functions run (@forward, @train_step) to one ready
/// for codegen: every op in a dlc.fusion or a library op, every value
/// placed in memory. `functionalize` first turns globals into arguments
/// (an inference import; the training pipeline has done it already).
/// `foldsEpilogues` says that the target folds marked epilogues into its
/// library calls (CUDA: cuBLASLt), which the memory plan must allow for.
void buildExecutionPipeline(OpPassManager &pm, bool functionalize,
                            bool foldsEpilogues);

} // namespace mlir::dlc

#endif // DLC_PASSES_PIPELINE_H
