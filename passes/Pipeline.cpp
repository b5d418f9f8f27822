//===- Pipeline.cpp - dlc's pass pipelines --------------------------------===//

#include "passes/Pipeline.h"

#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dlc;

void mlir::dlc::buildTrainingPipeline(OpPassManager &pm,
                                      const TrainingPipelineOptions &options) {
  // Random augmentation of the images, drawn in the step itself.
  if (!options.augment.transforms.empty())
    pm.addPass(createDLCAugment(options.augment));
  // Attention becomes one op, whose gradient rule recomputes what it needs.
  pm.addPass(createDLCFuseAttention());
  // Parameters and state become arguments and results.
  pm.addPass(createDLCFunctionalize());
  // @forward_train -> @loss.
  pm.addPass(createDLCAddLoss(options.loss));
  // Matmuls and convolutions in bf16/fp16, before autodiff, whose gradient
  // rules then carry the types into the backward ops.
  if (options.mixedPrecision)
    pm.addPass(createDLCMixedPrecision(*options.mixedPrecision));
  // @loss -> @loss_grad.
  pm.addPass(createDLCAutodiff(options.autodiff));
  // @loss_grad -> @train_step.
  pm.addPass(createDLCOptimizer(options.optimizer));
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
  // Group ops into kernels (passes/fusion), then place every value
  // (passes/memory); codegen/plan lowers the result to the execution
  // plan.
  pm.addPass(createDLCFuse());
  DLCPlanMemoryOptions memory;
  memory.keepEpilogueOperands = options.foldsEpilogues;
  pm.addPass(createDLCPlanMemory(memory));
}
