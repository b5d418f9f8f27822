//===- Passes.h - Passes on the execution-plan level ------------*- C++ -*-===//
#ifndef DLC_CODEGEN_PLAN_PASSES_H
#define DLC_CODEGEN_PLAN_PASSES_H

#include "codegen/KernelEmitter.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::dlc::codegen {

/// The values of every conv-engine option (dlc-lower-to-plan's,
/// dlc-plan-pipeline's, dlc-compile --conv-engine).
inline llvm::cl::ValuesClass convEngineValues() {
  return llvm::cl::values(
      clEnumValN(ConvEngine::automatic, "auto",
                 "the runtime chooses: the library where it takes the "
                 "shape, dlc's direct loops otherwise (default)"),
      clEnumValN(ConvEngine::library, "library", "cuDNN or oneDNN"),
      clEnumValN(ConvEngine::direct, "direct", "dlc's direct loops (CPU)"));
}

#define GEN_PASS_DECL
#include "codegen/plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/plan/Passes.h.inc"

/// From a memory-planned module (passes/Pipeline.h's execution pipeline)
/// to the execution plan the module writer serializes for `target`:
/// lowering, transposes as library flags, then for CUDA library epilogues
/// and horizontal groups, then kernel names. Convolutions run on
/// `convEngine`.
void buildPlanPipeline(OpPassManager &pm, Target target,
                       ConvEngine convEngine = ConvEngine::automatic);

/// Registers buildPlanPipeline as
/// `dlc-plan-pipeline{target=... conv-engine=...}`.
void registerPlanPipeline();

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_PLAN_PASSES_H
