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

#include <optional>

namespace mlir::dlc {

/// The options of every training pass.
struct TrainingPipelineOptions {
  /// Data augmentation of the training function's images (none when its
  /// transforms are empty).
  DLCAugmentOptions augment;
  DLCAddLossOptions loss;
  /// Mixed precision (bf16/fp16), when set: before autodiff.
  std::optional<DLCMixedPrecisionOptions> mixedPrecision;
  DLCAutodiffOptions autodiff;
  DLCOptimizerOptions optimizer;
};

/// From a module with @forward (inference semantics) and @forward_train
/// (training semantics) sharing their dlc.global parameters, to one that
/// also has @loss, @loss_grad and @train_step, every function taking its
/// parameters and state as arguments.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// How a target runs what the execution pipeline leaves.
struct ExecutionPipelineOptions {
  /// Turn globals into arguments first (an inference import; the training
  /// pipeline has done it already).
  bool functionalize = false;
  /// The target folds marked epilogues into its library calls (CUDA:
  /// cuBLASLt), which the memory plan must allow for.
  bool foldsEpilogues = false;
  /// The target runs dlc.attention and its gradient as fused kernels
  /// (CUDA), so the ops those kernels take are not decomposed.
  bool fusedAttention = false;
  /// The target is a GPU that reductions of few long rows would leave
  /// idle (CUDA): they become two reductions (dlc-split-reductions).
  bool splitReductions = false;
  /// Convolutions and the work between them are stored channels-last
  /// (dlc-channels-last): the CUDA target's tensor-core convolutions.
  bool channelsLast = false;
  /// The target is a GPU on which a scatter's walk over thousands of
  /// updates is slow (CUDA): embedding gradients become sorted segment
  /// sums (dlc-sort-scatters).
  bool sortScatters = false;
};

/// From a module whose functions run (@forward, @train_step) to one ready
/// for codegen: every op in a dlc.fusion, a library op or a fused kernel's
/// op, every value placed in memory.
void buildExecutionPipeline(OpPassManager &pm,
                            const ExecutionPipelineOptions &options);

} // namespace mlir::dlc

#endif // DLC_PASSES_PIPELINE_H
