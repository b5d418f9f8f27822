//===- Autodiff.h - Reverse-mode differentiation of dlc IR ----------------===//
//
// The engine behind the dlc-autodiff pass, usable on its own (dlc-run's
// gradient check builds vector-Jacobian products with it).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_TRAINING_AUTODIFF_H
#define DLC_PASSES_TRAINING_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dlc {

/// Builds, at `builder`'s insertion point (after every op of `block` it
/// reads), the gradients of sum_i <outputs[i], cotangents[i]> with respect
/// to each of `wrt`, one value of each `wrt` value's type, or null where no
/// output depends on it. Fails with one error at `errorLoc` listing every
/// op between `wrt` and `outputs` that has no gradient rule, or with the
/// error of a rule that fails.
FailureOr<SmallVector<Value>> buildGradients(OpBuilder &builder, Block &block,
                                             ArrayRef<Value> outputs,
                                             ArrayRef<Value> cotangents,
                                             ArrayRef<Value> wrt,
                                             Location errorLoc);

/// Adds `<func>_vjp` next to `func`: its arguments followed by one cotangent
/// per float result; returns the results followed by the gradient of every
/// float argument.
FailureOr<func::FuncOp> buildVJPFunction(func::FuncOp func);

} // namespace mlir::dlc

#endif // DLC_PASSES_TRAINING_AUTODIFF_H
