//===- Loss.cpp - ONNX loss ops -------------------------------------------===//
//
// NegativeLogLikelihoodLoss picks input[n, target[n, d...], d...] without a
// gather: the target, unsqueezed at axis 1, compared with the class indices
// [1, C, 1, ...] is a one-hot mask; selecting the input by it and summing
// over C gives the picked values, and the same against the class weights
// gives each target's weight. A target equal to ignore_index (which may lie
// outside [0, C)) gets loss 0 and weight 0, so it drops out of the sums and
// of the weighted mean's denominator. This follows ONNX's reference: mean is
// sum(w * loss) / sum(w) when weights or ignore_index are given, the plain
// mean otherwise. SoftmaxCrossEntropyLoss is the same on the log-softmax of
// the scores over axis 1.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/ops/RuleUtils.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

enum class Reduction { None, Sum, Mean };

std::optional<Reduction> readReduction(NodeContext &c) {
  std::string reduction = c.stringAttr("reduction", "mean");
  if (reduction == "none")
    return Reduction::None;
  if (reduction == "sum")
    return Reduction::Sum;
  if (reduction == "mean")
    return Reduction::Mean;
  c.error() << "reduction '" << reduction
            << "' is not one of none, sum, mean";
  return std::nullopt;
}

/// The loss of log-probabilities `input` [N, C, d...] at the class indices
/// `target` [N, d...], with optional class weights `weight` [C], reduced as
/// the node's `reduction` says.
Value nllLoss(NodeContext &c, Value input, Value target, Value weight) {
  if (!input || !target)
    return {};
  RankedTensorType inputType = typeOf(input), targetType = typeOf(target);
  int64_t rank = inputType.getRank();
  if (rank < 2) {
    c.error() << "input must have rank 2 or more (N, C, d...), got "
              << inputType;
    return {};
  }
  SmallVector<int64_t> expected(inputType.getShape());
  int64_t classes = expected[1];
  expected.erase(expected.begin() + 1);
  if (targetType.getShape() != ArrayRef<int64_t>(expected)) {
    c.error() << "target shape [" << targetType.getShape()
              << "] must be the input shape [" << inputType.getShape()
              << "] without dimension 1";
    return {};
  }
  if (!targetType.getElementType().isSignlessInteger() ||
      targetType.getElementType().isInteger(1)) {
    c.error() << "target must hold integer class indices, got " << targetType;
    return {};
  }
  if (weight && typeOf(weight).getShape() != ArrayRef<int64_t>{classes}) {
    c.error() << "weight has shape [" << typeOf(weight).getShape()
              << "], expected [" << classes << "]";
    return {};
  }
  std::optional<Reduction> reduction = readReduction(c);
  if (!reduction)
    return {};

  Type type = inputType.getElementType();
  Type i64 = IntegerType::get(c.context(), 64);
  Value zero = c.scalar(type, 0.0);
  Value index = c.cast(target, i64);
  SmallVector<int64_t> unsqueezed(expected);
  unsqueezed.insert(unsqueezed.begin() + 1, 1);
  SmallVector<int64_t> classShape(rank, 1);
  classShape[1] = classes;
  Tensor iota(DType::I64, {classes});
  for (int64_t i = 0; i < classes; ++i)
    iota.data<int64_t>()[i] = i;
  Value oneHot = c.compare(ComparePredicate::eq, c.reshape(index, unsqueezed),
                           c.reshape(c.constant(iota), classShape));
  auto pick = [&](Value values) {
    return c.reduce<ReduceSumOp>(c.select(oneHot, values, zero), {1},
                                 /*keepDims=*/false);
  };
  Value loss = c.unary<NegOp>(pick(input));
  // The per-element weight, where weights or ignore_index make one.
  Value w = weight ? pick(c.reshape(weight, classShape)) : Value();
  if (c.hasAttr("ignore_index")) {
    Value ignored = c.scalar(i64, static_cast<double>(c.intAttr("ignore_index", 0)));
    Value valid = c.compare(ComparePredicate::ne, index, ignored);
    loss = c.select(valid, loss, zero);
    w = w ? c.select(valid, w, zero) : c.cast(valid, type);
  }
  if (weight)
    loss = c.build<MulOp>({loss, w});
  if (!loss)
    return {};

  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
  switch (*reduction) {
  case Reduction::None:
    return loss;
  case Reduction::Sum:
    return c.reduce<ReduceSumOp>(loss, all, false);
  case Reduction::Mean:
    if (!w)
      return c.mean(loss, all, false);
    return c.build<DivOp>({c.reduce<ReduceSumOp>(loss, all, false),
                           c.reduce<ReduceSumOp>(w, all, false)});
  }
  return {};
}

Value optionalInput(NodeContext &c, size_t i) {
  return c.hasInput(i) ? c.input(i) : Value();
}

void nllLossRule(NodeContext &c) {
  c.setOutput(0, nllLoss(c, c.input(0), c.input(1), optionalInput(c, 2)));
}

void softmaxCrossEntropyRule(NodeContext &c) {
  Value scores = c.input(0);
  if (!scores)
    return;
  if (typeOf(scores).getRank() < 2) {
    c.error() << "scores must have rank 2 or more (N, C, d...), got "
              << typeOf(scores);
    return;
  }
  Value logProb = c.logSoftmax(scores, 1);
  c.setOutput(0, nllLoss(c, logProb, c.input(1), optionalInput(c, 2)));
  c.setOutput(1, logProb);
}

} // namespace

void mlir::dlc::addLossRules(OpRuleTable &t) {
  t["NegativeLogLikelihoodLoss"] = {nllLossRule, 12};
  t["SoftmaxCrossEntropyLoss"] = {softmaxCrossEntropyRule, 12};
}
