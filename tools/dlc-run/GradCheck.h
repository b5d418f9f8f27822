//===- GradCheck.h - Analytic and numeric gradients of a function ---------===//
#ifndef DLC_TOOLS_DLC_RUN_GRADCHECK_H
#define DLC_TOOLS_DLC_RUN_GRADCHECK_H

#include "ir/RuntimeNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::dlc::tools {

/// For `func` (float64 arguments get gradients) at `inputs` with one
/// cotangent per float result, computes the gradient of
/// L = sum_i <cotangent_i, result_i> with respect to every float argument
/// twice: by the autodiff engine's vector-Jacobian product (evaluated), and
/// by central finite differences of the evaluated function in float64.
/// Returns "result<i>", "grad<k>" and "fd_grad<k>" (k: argument number).
mlir::FailureOr<NamedTensors> checkGradients(mlir::func::FuncOp func,
                                             llvm::ArrayRef<Tensor> inputs,
                                             llvm::ArrayRef<Tensor> cotangents);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_DLC_RUN_GRADCHECK_H
