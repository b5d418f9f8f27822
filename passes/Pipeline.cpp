//===- Pipeline.cpp - dlc's pass pipelines --------------------------------===//

#include "passes/Pipeline.h"

#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dlc;

void mlir::dlc::buildTrainingPipeline(OpPassManager &pm,
                                      const TrainingPipelineOptions &options) {
  pm.addPass(createDLCFunctionalize());
  pm.addPass(createDLCAddLoss(options.loss));
  pm.addPass(createDLCAutodiff(options.autodiff));
  pm.addPass(createDLCOptimizer(options.optimizer));
  // Gradient rules build what they need without looking around (zeros that
  // are added, reshapes that undo reshapes): canonicalization and CSE clean
  // that up.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}
