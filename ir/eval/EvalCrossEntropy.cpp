//===- EvalCrossEntropy.cpp - Reference rules of dlc.cross_entropy --------===//
//
// Row by row in the accumulation type (double for float32): the row's
// maximum, the log of the sum of exp(x - maximum), the picked and mean
// logits; each result rounded once. Labels are wrapped and clamped as
// dlc.gather_elements reads them.
//
//===----------------------------------------------------------------------===//
#include "ir/eval/EvalSupport.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

namespace {

/// The class `label` picks among `classes` (negative counts from the end,
/// out of range is clamped).
int64_t pickedClass(int64_t label, int64_t classes) {
  if (label < 0)
    label += classes;
  return std::clamp<int64_t>(label, 0, classes - 1);
}

/// A row's log-sum-exp.
template <typename A> A logSumExp(const A *row, int64_t classes) {
  A m = -std::numeric_limits<A>::infinity();
  for (int64_t c = 0; c < classes; ++c)
    m = std::isnan(row[c]) || row[c] > m ? row[c] : m;
  A sum = 0;
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(row[c] - m);
  return m + std::log(sum);
}

} // namespace

LogicalResult eval::evalCrossEntropy(CrossEntropyOp op, Operands operands,
                                     Results &results) {
  const Tensor &logits = operands[0];
  std::vector<int64_t> labels = readIndices(operands[1]);
  int64_t classes = logits.shape().back();
  int64_t ignore = op.getIgnoreIndex();
  double smoothing = op.getLabelSmoothing().convertToDouble();
  Tensor loss = resultTensor(op, 0), lse = resultTensor(op, 1);
  LogicalResult status = visitDomain<Domain::Float>(op, loss.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> x = widen<T>(logits);
    std::vector<A> l(labels.size()), r(labels.size());
    for (size_t row = 0; row < labels.size(); ++row) {
      const A *xs = &x[row * classes];
      r[row] = logSumExp(xs, classes);
      if (labels[row] == ignore)
        continue;
      A picked = xs[pickedClass(labels[row], classes)];
      A mean = 0;
      if (smoothing > 0) {
        for (int64_t c = 0; c < classes; ++c)
          mean += xs[c];
        mean /= static_cast<A>(classes);
      }
      l[row] = r[row] - static_cast<A>(1 - smoothing) * picked -
               static_cast<A>(smoothing) * mean;
    }
    storeAccumulated<T>(loss, l);
    storeAccumulated<T>(lse, r);
  });
  if (failed(status))
    return failure();
  results.push_back(std::move(loss));
  results.push_back(std::move(lse));
  return success();
}

LogicalResult eval::evalCrossEntropyGrad(CrossEntropyGradOp op,
                                         Operands operands, Results &results) {
  const Tensor &logits = operands[0];
  std::vector<int64_t> labels = readIndices(operands[1]);
  int64_t classes = logits.shape().back();
  int64_t ignore = op.getIgnoreIndex();
  double smoothing = op.getLabelSmoothing().convertToDouble();
  Tensor grad = resultTensor(op);
  LogicalResult status = visitDomain<Domain::Float>(op, grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> x = widen<T>(logits), lse = widen<T>(operands[2]),
                   g = widen<T>(operands[3]);
    std::vector<A> d(x.size(), A(0));
    A uniform = static_cast<A>(smoothing / classes);
    for (size_t row = 0; row < labels.size(); ++row) {
      if (labels[row] == ignore)
        continue;
      int64_t picked = pickedClass(labels[row], classes);
      for (int64_t c = 0; c < classes; ++c) {
        size_t i = row * classes + c;
        A target = c == picked ? static_cast<A>(1 - smoothing) : A(0);
        d[i] = g[row] * (std::exp(x[i] - lse[row]) - target - uniform);
      }
    }
    storeAccumulated<T>(grad, d);
  });
  if (failed(status))
    return failure();
  results.push_back(std::move(grad));
  return success();
}
