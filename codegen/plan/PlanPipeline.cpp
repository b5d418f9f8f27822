//===- PlanPipeline.cpp - The passes from a memory plan to the module -----===//

#include "codegen/plan/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::dlc::codegen;

void mlir::dlc::codegen::buildPlanPipeline(OpPassManager &pm, Target target,
                                           mlir::dlc::ConvEngine convEngine) {
  pm.addPass(createDLCLowerToPlan({target, convEngine}));
  // Before epilogues: a transposing view between a matmul and its epilogue
  // would keep them apart.
  pm.addPass(createDLCFoldTransposes());
  if (target == Target::Cuda) {
    // Before grouping, so that an epilogue's launch is gone rather than
    // grouped.
    pm.addPass(createDLCFoldEpilogues());
    pm.addPass(createDLCHorizontalFusion());
  }
  // Last: a group's kernel is a kernel of its own.
  pm.addPass(createDLCNameKernels());
}

namespace {
struct PlanPipelineOptions : public PassPipelineOptions<PlanPipelineOptions> {
  Option<Target> target{
      *this, "target", llvm::cl::desc("the target the plan is for"),
      llvm::cl::init(Target::Cpu),
      llvm::cl::values(clEnumValN(Target::Cpu, "cpu", "the CPU"),
                       clEnumValN(Target::Cuda, "cuda", "CUDA"))};
  Option<mlir::dlc::ConvEngine> convEngine{
      *this, "conv-engine",
      llvm::cl::desc("what runs the convolutions (dlc-lower-to-plan)"),
      llvm::cl::init(mlir::dlc::ConvEngine::automatic), convEngineValues()};
};
} // namespace

void mlir::dlc::codegen::registerPlanPipeline() {
  PassPipelineRegistration<PlanPipelineOptions>(
      "dlc-plan-pipeline",
      "lowers a memory-planned module to the execution plan dlc-compile "
      "serializes (dlc-lower-to-plan, dlc-fold-transposes, then for CUDA "
      "dlc-fold-epilogues and dlc-horizontal-fusion, then dlc-name-kernels)",
      [](OpPassManager &pm, const PlanPipelineOptions &options) {
        buildPlanPipeline(pm, options.target, options.convEngine);
      });
}
