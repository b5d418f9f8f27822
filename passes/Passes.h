//===- Passes.h - dlc passes ----------------------------------------------===//
#ifndef DLC_PASSES_PASSES_H
#define DLC_PASSES_PASSES_H

#include "ir/Dialect.h"
#include "passes/TrainingChoices.h"

#include "mlir/Pass/Pass.h"

namespace mlir::dlc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::dlc

#endif // DLC_PASSES_PASSES_H
