//===- GradCheck.cpp - Analytic and numeric gradients of a function -------===//

#include "tools/dlc-run/GradCheck.h"

#include "ir/eval/Evaluator.h"
#include "passes/training/Autodiff.h"

#include "llvm/ADT/ScopeExit.h"

#include <cmath>

using namespace mlir;
using mlir::dlc::Tensor;

namespace {

bool isFloat64(Type type) {
  return cast<RankedTensorType>(type).getElementType().isF64();
}

/// sum_i <cotangents[i], results[float i]> in float64.
double pairing(ArrayRef<Tensor> results, ArrayRef<Tensor> cotangents,
               TypeRange resultTypes) {
  double sum = 0;
  size_t next = 0;
  for (auto [result, type] : llvm::zip(results, resultTypes)) {
    if (!isa<FloatType>(cast<RankedTensorType>(type).getElementType()))
      continue;
    const Tensor &cot = cotangents[next++];
    for (int64_t j = 0; j < result.numElements(); ++j)
      sum += cot.getDouble(j) * result.getDouble(j);
  }
  return sum;
}

} // namespace

namespace mlir::dlc::tools {

FailureOr<NamedTensors> checkGradients(func::FuncOp func,
                                       ArrayRef<Tensor> inputs,
                                       ArrayRef<Tensor> cotangents) {
  for (Type type : func.getArgumentTypes())
    if (isa<FloatType>(cast<RankedTensorType>(type).getElementType()) &&
        !isFloat64(type))
      return func.emitError()
             << "the gradient check needs float64 arguments, got " << type;
  FailureOr<func::FuncOp> vjp = mlir::dlc::buildVJPFunction(func);
  if (failed(vjp))
    return failure();
  // The module is the caller's: the helper function goes when done.
  llvm::scope_exit eraseVJP([&] { vjp->erase(); });
  auto module = func->getParentOfType<ModuleOp>();
  FailureOr<mlir::dlc::Evaluator> evaluator =
      mlir::dlc::Evaluator::create(module);
  if (failed(evaluator))
    return failure();

  SmallVector<Tensor> vjpInputs(inputs.begin(), inputs.end());
  vjpInputs.append(cotangents.begin(), cotangents.end());
  FailureOr<SmallVector<Tensor>> analytic = evaluator->run(*vjp, vjpInputs);
  if (failed(analytic))
    return failure();

  NamedTensors out;
  unsigned numResults = func.getNumResults();
  for (unsigned i = 0; i < numResults; ++i)
    out.emplace_back("result" + std::to_string(i), (*analytic)[i]);
  unsigned next = numResults;
  for (auto [k, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (!isa<FloatType>(cast<RankedTensorType>(type).getElementType()))
      continue;
    out.emplace_back("grad" + std::to_string(k), (*analytic)[next++]);
    // Central differences with a step scaled to the element, which keeps
    // the truncation error O(h^2) and the rounding error O(eps / h) both
    // near 1e-10 relative in float64.
    Tensor fd = inputs[k];
    SmallVector<Tensor> probe(inputs.begin(), inputs.end());
    for (int64_t j = 0; j < inputs[k].numElements(); ++j) {
      double x = inputs[k].getDouble(j);
      double h = 1e-6 * std::max(1.0, std::fabs(x));
      double values[2];
      for (int side = 0; side < 2; ++side) {
        probe[k].data<double>()[j] = side == 0 ? x + h : x - h;
        FailureOr<SmallVector<Tensor>> r = evaluator->run(func, probe);
        if (failed(r))
          return failure();
        values[side] = pairing(*r, cotangents, func.getResultTypes());
      }
      probe[k].data<double>()[j] = x;
      fd.data<double>()[j] = (values[0] - values[1]) / (2 * h);
    }
    out.emplace_back("fd_grad" + std::to_string(k), std::move(fd));
  }
  return out;
}

} // namespace mlir::dlc::tools
