//===- Passes.h - Passes on the execution-plan level ------------*- C++ -*-===//
#ifndef DLC_CODEGEN_PLAN_PASSES_H
#define DLC_CODEGEN_PLAN_PASSES_H

#include "codegen/KernelEmitter.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::dlc::codegen {

#define GEN_PASS_DECL
#include "codegen/plan/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/plan/Passes.h.inc"

/// From a memory-planned module (passes/Pipeline.h's execution pipeline)
/// to the execution plan the module writer serializes for `target`:
/// lowering, transposes as library flags, then for CUDA library epilogues
/// and horizontal groups, then kernel names.
void buildPlanPipeline(OpPassManager &pm, Target target);

/// Registers buildPlanPipeline as `dlc-plan-pipeline{target=...}`.
void registerPlanPipeline();

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_PLAN_PASSES_H
