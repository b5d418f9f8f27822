//===- Pipeline.h - dlc's pass pipelines ----------------------------------===//
//
// dlc-compile is these pipelines on a PassManager; each pass is also
// runnable alone in dlc-opt with the same options, and the training
// pipeline as a whole as dlc-opt's --dlc-training-pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_PIPELINE_H
#define DLC_PASSES_PIPELINE_H

#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::dlc {

/// The training pipeline's options, registered as the pipeline
/// `dlc-training-pipeline` (dlc-opt) and, the same objects, as the training
/// options of dlc-compile and dlc-run (tools/common/TrainingOptions.h).
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<LossKind, EnumParser<LossKind>> loss{
      *this, "loss", llvm::cl::desc("The loss"),
      llvm::cl::init(LossKind::CrossEntropy), enumValues<LossKind>()};
  Option<std::string> lossOutput{
      *this, "loss-output",
      llvm::cl::desc("The model output the loss is computed from "
                     "(default: the only output)"),
      llvm::cl::value_desc("name")};
  Option<std::string> labelInput{
      *this, "label-input",
      llvm::cl::desc("The name of the label input (default labels)"),
      llvm::cl::init("labels"), llvm::cl::value_desc("name")};
  Option<int64_t> ignoreIndex{
      *this, "ignore-index",
      llvm::cl::desc("cross_entropy: label value to ignore (default -100)"),
      llvm::cl::init(-100)};
  Option<double> labelSmoothing{
      *this, "label-smoothing",
      llvm::cl::desc("cross_entropy: label smoothing in [0, 1]"),
      llvm::cl::init(0.0)};
  Option<std::string> augment{
      *this, "augment",
      llvm::cl::desc("Random augmentation of image inputs [N, C, H, W] in "
                     "each training step: comma-separated hflip, vflip, "
                     "crop:P, rotate:D, normalize:MEAN/STD (dlc-augment)"),
      llvm::cl::value_desc("list")};
  Option<OptimizerKind, EnumParser<OptimizerKind>> optimizer{
      *this, "optimizer", llvm::cl::desc("The optimizer"),
      llvm::cl::init(OptimizerKind::Sgd), enumValues<OptimizerKind>()};
  Option<double> lr{*this, "lr", llvm::cl::desc("Learning rate (default 1e-3)"),
                    llvm::cl::init(1e-3)};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("sgd: momentum"),
                          llvm::cl::init(0.0)};
  Option<double> dampening{*this, "dampening", llvm::cl::desc("sgd: dampening"),
                           llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov",
                        llvm::cl::desc("sgd: Nesterov momentum"),
                        llvm::cl::init(false)};
  Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("Weight decay (default 0; 0.01 for adamw, decoupled)"),
      llvm::cl::init(-1.0)};
  ListOption<double> betas{
      *this, "betas", llvm::cl::desc("adam, adamw: B1,B2 (default 0.9,0.999)")};
  Option<double> eps{*this, "eps",
                     llvm::cl::desc("adam, adamw: epsilon (default 1e-8)"),
                     llvm::cl::init(1e-8)};
  Option<double> clipGradNorm{
      *this, "clip-grad-norm",
      llvm::cl::desc("Clip the gradients' global 2-norm to this (default "
                     "off)"),
      llvm::cl::init(0.0)};
  Option<LrSchedule, EnumParser<LrSchedule>> schedule{
      *this, "lr-schedule",
      llvm::cl::desc("The learning rate's factor after warmup"),
      llvm::cl::init(LrSchedule::Constant), enumValues<LrSchedule>()};
  Option<int64_t> warmupSteps{*this, "warmup-steps",
                              llvm::cl::desc("Steps of linear warmup from 0"),
                              llvm::cl::init(0)};
  Option<int64_t> totalSteps{
      *this, "total-steps",
      llvm::cl::desc("linear, cosine: the step at which the rate reaches 0"),
      llvm::cl::init(0)};
  Option<Precision, EnumParser<Precision>> precision{
      *this, "precision", llvm::cl::desc("The numerics of training"),
      llvm::cl::init(Precision::Fp32), enumValues<Precision>()};
  Option<LossScalingMode, EnumParser<LossScalingMode>> lossScaling{
      *this, "loss-scaling", llvm::cl::desc("Loss scaling"),
      llvm::cl::init(LossScalingMode::Auto), enumValues<LossScalingMode>()};
  Option<double> lossScaleInit{
      *this, "loss-scale-init",
      llvm::cl::desc("The first loss scale (default 65536)"),
      llvm::cl::init(65536.0)};
  Option<double> lossScaleGrowthFactor{
      *this, "loss-scale-growth-factor",
      llvm::cl::desc("The scale's factor after --loss-scale-growth-interval "
                     "clean steps (default 2)"),
      llvm::cl::init(2.0)};
  Option<double> lossScaleBackoffFactor{
      *this, "loss-scale-backoff-factor",
      llvm::cl::desc("The scale's factor after a step with an inf or NaN "
                     "gradient, which is skipped (default 0.5)"),
      llvm::cl::init(0.5)};
  Option<int64_t> lossScaleGrowthInterval{
      *this, "loss-scale-growth-interval",
      llvm::cl::desc("Clean steps in a row before the scale grows (default "
                     "2000)"),
      llvm::cl::init(2000)};
  Option<std::string> freeze{
      *this, "freeze",
      llvm::cl::desc("Keep the parameters whose whole name matches this "
                     "regular expression fixed"),
      llvm::cl::value_desc("regex")};
  Option<int64_t> dp{
      *this, "dp",
      llvm::cl::desc("Data-parallel ranks: each takes its share of the "
                     "--batch-size samples, and the gradients are averaged "
                     "over them (dlc-data-parallel; default 1)"),
      llvm::cl::init(1)};
  Option<bool> syncBatchnorm{
      *this, "sync-batchnorm",
      llvm::cl::desc("--dp: BatchNorm normalizes with the global batch's "
                     "statistics, averaged over the ranks (PyTorch's "
                     "SyncBatchNorm; default: each rank's own, as DDP)"),
      llvm::cl::init(false)};
  Option<double> dpBucketMb{
      *this, "dp-bucket-mb",
      llvm::cl::desc("--dp: MiB of gradients per all-reduce (default 25, as "
                     "PyTorch DDP)"),
      llvm::cl::init(25.0)};
  Option<int64_t> zero{
      *this, "zero",
      llvm::cl::desc("--dp: ZeRO stage; 1 shards the optimizer state over the "
                     "ranks, with --pp each stage's over its replicas (the "
                     "gradients are reduce-scattered, each rank updates its "
                     "shard, the parameters all-gathered; default 0)"),
      llvm::cl::init(0)};
  Option<int64_t> tp{
      *this, "tp",
      llvm::cl::desc("Tensor-parallel ranks: each holds a slice of the "
                     "split matmul pairs' weights (MLP blocks, attention by "
                     "heads), of the token embedding and of a cross-entropy's "
                     "class head, and computes its part of them "
                     "(dlc-tensor-parallel, Megatron-LM's split; mpirun -np "
                     "is --dp times --tp times --pp; default 1)"),
      llvm::cl::init(1)};
  Option<int64_t> pp{
      *this, "pp",
      llvm::cl::desc("Pipeline stages: the model cut into this many "
                     "consecutive stages of balanced cost, each step running "
                     "--microbatches through them in the 1F1B order "
                     "(dlc-pipeline-partition, dlc-pipeline-schedule; CPU "
                     "ranks, mpirun -np is --dp times --tp times --pp; "
                     "default 1)"),
      llvm::cl::init(1)};
  Option<int64_t> microbatches{
      *this, "microbatches",
      llvm::cl::desc("--pp: micro-batches each step's batch is cut into, "
                     "which must divide it (default 1)"),
      llvm::cl::init(1)};
  Option<bool> reportPartition{
      *this, "report-partition",
      llvm::cl::desc("--tp, --pp: print each matmul's split and why a "
                     "replicated one is, or each pipeline stage's cost and "
                     "memory, to standard error"),
      llvm::cl::init(false)};

  /// The first error in the options (what the passes cannot tell from
  /// their own options, and options the chosen loss, optimizer or schedule
  /// would ignore), as one sentence naming the option, or std::nullopt.
  std::optional<std::string> error() const;
  /// Whether training scales the loss dynamically: loss-scaling dynamic,
  /// or precision fp16 without loss-scaling none.
  bool dynamicLossScaling() const;
  /// dlc-mixed-precision's options for precision bf16 or fp16, else none.
  std::optional<DLCMixedPrecisionOptions> mixedPrecision() const;
  /// The options given (set explicitly), as "--name", in declaration order.
  llvm::SmallVector<llvm::cl::Option *> given() const;
  /// Every option, in declaration order.
  llvm::SmallVector<llvm::cl::Option *> all() const;
};

/// From a module with @forward (inference semantics) and @forward_train
/// (training semantics) sharing their dlc.global parameters, to one that
/// also has @loss, @loss_grad and @train_step, every function taking its
/// parameters and state as arguments. `options` must have no error().
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers buildTrainingPipeline as `dlc-training-pipeline`, whose
/// options are TrainingPipelineOptions' (dlc-compile's training options).
void registerTrainingPipeline();

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
