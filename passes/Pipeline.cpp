//===- Pipeline.cpp - dlc's pass pipelines --------------------------------===//

#include "passes/Pipeline.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;

llvm::SmallVector<llvm::cl::Option *> TrainingPipelineOptions::all() const {
  // (cl::list overloads operator&, hence addressof.)
  auto *self = const_cast<TrainingPipelineOptions *>(this);
  return {&self->loss,
          &self->lossOutput,
          &self->labelInput,
          &self->ignoreIndex,
          &self->labelSmoothing,
          &self->augment,
          &self->optimizer,
          &self->lr,
          &self->momentum,
          &self->dampening,
          &self->nesterov,
          &self->weightDecay,
          std::addressof(self->betas),
          &self->eps,
          &self->clipGradNorm,
          &self->schedule,
          &self->warmupSteps,
          &self->totalSteps,
          &self->precision,
          &self->lossScaling,
          &self->lossScaleInit,
          &self->lossScaleGrowthFactor,
          &self->lossScaleBackoffFactor,
          &self->lossScaleGrowthInterval,
          &self->freeze,
          &self->dp,
          &self->dpBucketMb,
          &self->syncBatchnorm,
          &self->zero,
          &self->tp,
          &self->pp,
          &self->microbatches,
          &self->reportPartition};
}

llvm::SmallVector<llvm::cl::Option *> TrainingPipelineOptions::given() const {
  llvm::SmallVector<llvm::cl::Option *> options = all();
  llvm::erase_if(options, [](llvm::cl::Option *option) {
    return option->getNumOccurrences() == 0;
  });
  return options;
}

bool TrainingPipelineOptions::dynamicLossScaling() const {
  return lossScaling == LossScalingMode::Auto
             ? precision == Precision::Fp16
             : lossScaling == LossScalingMode::Dynamic;
}

std::optional<DLCMixedPrecisionOptions>
TrainingPipelineOptions::mixedPrecision() const {
  if (precision != Precision::Bf16 && precision != Precision::Fp16)
    return std::nullopt;
  DLCMixedPrecisionOptions result;
  result.precision =
      precision == Precision::Bf16 ? LowPrecision::Bf16 : LowPrecision::Fp16;
  return result;
}

std::optional<std::string> TrainingPipelineOptions::error() const {
  if (weightDecay.getNumOccurrences() && !(weightDecay >= 0))
    return std::string("--weight-decay must be a number >= 0");
  // An option the chosen loss, optimizer or schedule does not read is a
  // mistake worth reporting, not something to ignore silently.
  auto given = [](const llvm::cl::Option &option) {
    return option.getNumOccurrences() > 0;
  };
  // The first of `options` given, as "--name", or "".
  auto firstGiven =
      [&](std::initializer_list<const llvm::cl::Option *> options) {
        for (const llvm::cl::Option *option : options)
          if (given(*option))
            return "--" + option->ArgStr.str();
        return std::string();
      };
  std::string name;
  if (loss != LossKind::CrossEntropy &&
      !(name = firstGiven({&ignoreIndex, &labelSmoothing})).empty())
    return name + " applies to --loss cross_entropy";
  if (loss == LossKind::Model && given(labelInput))
    return std::string(
        "--label-input does not apply to --loss model (no label)");
  bool sgd = optimizer == OptimizerKind::Sgd;
  if (!sgd && !(name = firstGiven({&momentum, &dampening, &nesterov})).empty())
    return name + " applies to --optimizer sgd";
  if (sgd && !(name = firstGiven({std::addressof(betas), &eps})).empty())
    return name + " applies to --optimizer adam and adamw";
  if (schedule == LrSchedule::Constant && given(totalSteps))
    return std::string(
        "--total-steps applies to --lr-schedule linear and cosine");
  if (!dynamicLossScaling() &&
      !(name = firstGiven({&lossScaleInit, &lossScaleGrowthFactor,
                           &lossScaleBackoffFactor, &lossScaleGrowthInterval}))
           .empty())
    return name + " applies to dynamic loss scaling (--precision fp16 or "
                  "--loss-scaling dynamic)";
  // GradScaler's own checks, and a scale that is a number.
  float scale = static_cast<float>(lossScaleInit);
  if (!(std::isnormal(scale) && scale > 0 && std::isfinite(1.0f / scale)))
    return std::string("--loss-scale-init must be a float32 number > 0 whose "
                       "reciprocal is finite");
  if (!(lossScaleGrowthFactor > 1 && std::isfinite(lossScaleGrowthFactor)))
    return std::string(
        "--loss-scale-growth-factor must be a finite number > 1");
  if (!(lossScaleBackoffFactor > 0 && lossScaleBackoffFactor < 1))
    return std::string("--loss-scale-backoff-factor must be in (0, 1)");
  if (lossScaleGrowthInterval < 1)
    return std::string("--loss-scale-growth-interval must be >= 1");
  if (dp < 1)
    return "--dp must be a number of ranks >= 1, not " + std::to_string(dp);
  if (!(dpBucketMb > 0) || !std::isfinite(dpBucketMb))
    return std::string("--dp-bucket-mb must be a positive number of MiB");
  if (zero != 0 && zero != 1)
    return "--zero must be 0 or 1 (stage 1 shards the optimizer state), not " +
           std::to_string(zero);
  if (dp == 1 &&
      !(name = firstGiven({&dpBucketMb, &syncBatchnorm, &zero})).empty())
    return name + " applies to --dp N with N > 1";
  if (tp < 1)
    return "--tp must be a number of ranks >= 1, not " + std::to_string(tp);
  if (pp < 1)
    return "--pp must be a number of stages >= 1, not " + std::to_string(pp);
  if (microbatches < 1)
    return "--microbatches must be >= 1, not " + std::to_string(microbatches);
  if (pp == 1 && given(microbatches))
    return std::string("--microbatches applies to --pp N with N > 1");
  if (tp == 1 && pp == 1 && reportPartition)
    return std::string(
        "--report-partition applies to --tp N or --pp N with N > 1");
  return std::nullopt;
}

void mlir::dlc::buildTrainingPipeline(OpPassManager &pm,
                                      const TrainingPipelineOptions &options) {
  // Random augmentation of the images, drawn in the step itself.
  if (!options.augment.empty()) {
    DLCAugmentOptions augment;
    augment.transforms = options.augment;
    pm.addPass(createDLCAugment(augment));
  }
  // Attention becomes one op, whose gradient rule recomputes what it needs.
  pm.addPass(createDLCFuseAttention());
  // MLP blocks split over the tensor ranks, on the forward functions: the
  // backward's collectives come from autodiff.
  if (options.tp > 1) {
    DLCTensorParallelOptions tensorParallel;
    tensorParallel.ranks = options.tp;
    tensorParallel.report = options.reportPartition;
    // A cross-entropy loss reads class scores split over the ranks.
    if (options.loss == LossKind::CrossEntropy)
      tensorParallel.classFunction = DLCAddLossOptions().functionName;
    pm.addPass(createDLCTensorParallel(tensorParallel));
  }
  // Parameters and state become arguments and results.
  pm.addPass(createDLCFunctionalize());
  // @forward_train -> @loss.
  DLCAddLossOptions loss;
  loss.loss = options.loss;
  loss.output = options.lossOutput;
  loss.label = options.labelInput;
  loss.ignoreIndex = options.ignoreIndex;
  loss.labelSmoothing = options.labelSmoothing;
  pm.addPass(createDLCAddLoss(loss));
  // Matmuls and convolutions in bf16/fp16, before autodiff, whose gradient
  // rules then carry the types into the backward ops.
  if (std::optional<DLCMixedPrecisionOptions> precision =
          options.mixedPrecision())
    pm.addPass(createDLCMixedPrecision(*precision));
  // @loss (of one micro-batch) in consecutive stages of balanced cost,
  // before autodiff, which gives each backward op its forward op's stage.
  if (options.pp > 1) {
    DLCPipelinePartitionOptions pipeline;
    pipeline.stages = options.pp;
    pipeline.microbatches = options.microbatches;
    pipeline.report = options.reportPartition;
    pm.addPass(createDLCPipelinePartition(pipeline));
  }
  // @loss -> @loss_grad.
  DLCAutodiffOptions autodiff;
  autodiff.freeze = options.freeze;
  autodiff.lossScale = options.dynamicLossScaling();
  pm.addPass(createDLCAutodiff(autodiff));
  // The step over the micro-batches, in the stages' 1F1B order.
  if (options.pp > 1) {
    DLCPipelineScheduleOptions schedule;
    schedule.microbatches = options.microbatches;
    pm.addPass(createDLCPipelineSchedule(schedule));
  }
  // Each rank's gradients are averaged over the ranks before the optimizer
  // reads them, so N ranks take the step one device takes on the batch.
  if (options.dp > 1) {
    DLCDataParallelOptions parallel;
    parallel.ranks = options.dp;
    parallel.bucketMb = options.dpBucketMb;
    parallel.zero = options.zero;
    pm.addPass(createDLCDataParallel(parallel));
  }
  // @loss_grad -> @train_step.
  DLCOptimizerOptions optimizer;
  optimizer.optimizer = options.optimizer;
  optimizer.lr = options.lr;
  optimizer.momentum = options.momentum;
  optimizer.dampening = options.dampening;
  optimizer.nesterov = options.nesterov;
  optimizer.weightDecay = options.weightDecay;
  optimizer.betas.assign(options.betas.begin(), options.betas.end());
  optimizer.eps = options.eps;
  optimizer.clipGradNorm = options.clipGradNorm;
  optimizer.schedule = options.schedule;
  optimizer.warmupSteps = options.warmupSteps;
  optimizer.totalSteps = options.totalSteps;
  optimizer.initScale = options.lossScaleInit;
  optimizer.growthFactor = options.lossScaleGrowthFactor;
  optimizer.backoffFactor = options.lossScaleBackoffFactor;
  optimizer.growthInterval = options.lossScaleGrowthInterval;
  pm.addPass(createDLCOptimizer(optimizer));
  // Gradient rules build what they need without looking around (zeros that
  // are added, reshapes that undo reshapes): canonicalization and CSE clean
  // that up.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::dlc::buildExecutionPipeline(
    OpPassManager &pm, const ExecutionPipelineOptions &options) {
  // Compiled functions take their parameters and state as arguments.
  if (options.functionalize)
    pm.addPass(createDLCFunctionalize());
  // Fold and deduplicate first, so fusion sees the fewest ops.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Attention (formed here for inference, by the training pipeline before
  // autodiff otherwise) stays one op where the target has a fused kernel
  // for it; elsewhere it and cross-entropy, and their gradients, become
  // matmuls, reductions and elementwise ops. After CSE, which would merge a
  // gradient's recomputed scores with the forward's and keep those alive
  // from one to the other.
  pm.addPass(createDLCFuseAttention());
  DLCDecomposeOptions decompose;
  decompose.keepAttention = options.fusedAttention;
  pm.addPass(createDLCDecompose(decompose));
  // Elementwise intermediates a gradient reads far from where the forward
  // computed them are recomputed there instead of kept.
  pm.addPass(createDLCRematerialize());
  // After both, so that the layout follows the ops that run.
  if (options.channelsLast)
    pm.addPass(createDLCChannelsLast());
  // Embedding gradients sort their token ids once instead of walking them
  // for every row.
  if (options.sortScatters)
    pm.addPass(createDLCSortScatters());
  // Few long rows reduce in two kernels, so that they fill the GPU.
  if (options.splitReductions)
    pm.addPass(createDLCSplitReductions());
  // A pipelined module's ops on the stages that run them, so that each
  // kernel is one stage's (nothing to do without stages).
  pm.addPass(createDLCPipelinePlace());
  // Group ops into kernels (passes/fusion), then place every value
  // (passes/memory); codegen/plan lowers the result to the execution
  // plan.
  pm.addPass(createDLCFuse());
  DLCPlanMemoryOptions memory;
  memory.keepEpilogueOperands = options.foldsEpilogues;
  pm.addPass(createDLCPlanMemory(memory));
}

void mlir::dlc::registerTrainingPipeline() {
  registerPassPipeline(
      "dlc-training-pipeline",
      "adds the loss, its gradient and the optimizer step to an imported "
      "model (@forward and @forward_train), as dlc-compile --train does; "
      "its options are dlc-compile's training options (dlc-compile --help), "
      "e.g. 'loss=mse optimizer=adamw lr=3e-4'",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        TrainingPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (std::optional<std::string> error = options.error())
          return errorHandler(*error);
        buildTrainingPipeline(pm, options);
        return success();
      },
      // Not listed again under dlc-opt --help, which stays a screen or two.
      [](function_ref<void(const mlir::detail::PassOptions &)>) {});
}
