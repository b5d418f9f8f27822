//===- NNGradients.cpp - Matmul, convolution and pooling: gradients -------===//
//
// Matmul's gradients are two matmuls with a transposed operand, summed over
// the batch dimensions the operand was broadcast along. A convolution's
// gradients are dlc.conv_grad_input and dlc.conv_grad_filter (cuDNN's
// backward-data and backward-filter), and max_pool's is dlc.max_pool_grad.
// sum_pool is a depthwise convolution with a filter of ones, so its
// gradient is that convolution's conv_grad_input: padding positions are
// simply not in the input, which is exact.
//
// A transposed convolution is dlc.conv_grad_input, linear in both
// operands: its data gradient is the forward convolution of dr with the
// same filter, and its filter gradient conv_grad_filter with dr as the
// input and its own input as the output gradient.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientUtils.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::grad;

// dlhs = dy @ rhs^T, drhs = lhs^T @ dy, each over the result's batch
// dimensions, then summed back to the operand's (broadcast) shape; a 2-D
// rhs shared by every batch entry gets its sum as one product
LogicalResult MatmulOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value dy = resultGrads[0], lhs = getLhs(), rhs = getRhs();
  if (isDifferentiableOperand(0))
    operandGrads[0] = sumToShape(
        b, loc, MatmulOp::create(b, loc, dy, transposeLastTwo(b, loc, rhs)),
        typeOf(lhs));
  if (!isDifferentiableOperand(1))
    return success();
  RankedTensorType lhsType = typeOf(lhs);
  if (typeOf(rhs).getRank() == 2 && lhsType.getRank() > 2) {
    // A weight shared by every batch entry (a Linear layer on [B, T, C]):
    // one product over the batch's rows together, lhs^T [K, B*M] @ dy
    // [B*M, N], instead of a [B, K, N] product per entry summed after.
    int64_t k = lhsType.getShape().back();
    int64_t n = typeOf(dy).getShape().back();
    int64_t rows = 1;
    for (int64_t size : lhsType.getShape().drop_back())
      rows *= size;
    operandGrads[1] = MatmulOp::create(
        b, loc, transposeLastTwo(b, loc, reshape(b, loc, lhs, {rows, k})),
        reshape(b, loc, dy, {rows, n}));
    return success();
  }
  operandGrads[1] = sumToShape(
      b, loc, MatmulOp::create(b, loc, transposeLastTwo(b, loc, lhs), dy),
      typeOf(rhs));
  return success();
}

// dx = conv_grad_input(dy, w), dw = conv_grad_filter(x, dy)
LogicalResult ConvOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value dy = resultGrads[0], x = getInput(), w = getFilter();
  // An empty operand's gradient is empty: left null (zero).
  bool wantX = typeOf(x).getNumElements() > 0;
  bool wantW = typeOf(w).getNumElements() > 0;
  if (wantX)
    operandGrads[0] = ConvGradInputOp::create(
        b, loc, typeOf(x), dy, w, getStride(), getPadLow(), getPadHigh(),
        getDilation(), getGroups(), getChannelsLast());
  if (wantW)
    operandGrads[1] = ConvGradFilterOp::create(
        b, loc, typeOf(w), x, dy, getStride(), getPadLow(), getPadHigh(),
        getDilation(), getGroups(), getChannelsLast());
  return success();
}

// r = conv_grad_input(g, w) is linear in g and w: dg = conv(dr, w) and
// dw = conv_grad_filter(dr, g), with r's attributes (the file header)
LogicalResult
ConvGradInputOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                               MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value dr = resultGrads[0], g = getGradOutput(), w = getFilter();
  if (typeOf(g).getNumElements() > 0)
    operandGrads[0] =
        ConvOp::create(b, loc, dr, w, getStride(), getPadLow(), getPadHigh(),
                       getDilation(), getGroups(), getChannelsLast());
  if (typeOf(w).getNumElements() > 0)
    operandGrads[1] = ConvGradFilterOp::create(
        b, loc, typeOf(w), dr, g, getStride(), getPadLow(), getPadHigh(),
        getDilation(), getGroups(), getChannelsLast());
  return success();
}

// dx = max_pool_grad(x, dy): each window's dy to its first maximum
LogicalResult MaxPoolOp::buildGradient(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       MutableArrayRef<Value> operandGrads) {
  Value x = getInput();
  operandGrads[0] = MaxPoolGradOp::create(
      b, getLoc(), typeOf(x), x, resultGrads[0], getWindow(), getStride(),
      getPadLow(), getPadHigh(), getDilation());
  return success();
}

// dx = conv_grad_input(dy, ones): each window's dy to all its elements
LogicalResult SumPoolOp::buildGradient(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  RankedTensorType xType = typeOf(getInput());
  int64_t channels = xType.getDimSize(1);
  if (xType.getNumElements() == 0)
    return success();
  // sum_pool is conv with a ones filter [C, 1, window...] and C groups.
  SmallVector<int64_t> filterShape = {channels, 1};
  filterShape.append(getWindow().begin(), getWindow().end());
  Value ones = splat(
      b, loc, RankedTensorType::get(filterShape, xType.getElementType()), 1.0);
  operandGrads[0] = ConvGradInputOp::create(
      b, loc, xType, resultGrads[0], ones, getStride(), getPadLow(),
      getPadHigh(), getDilation(), static_cast<uint64_t>(channels));
  return success();
}

/// Fails when a gradient flows into result 1 of `op`, a log-sum-exp that
/// attention and cross-entropy return for their own gradients only.
static LogicalResult checkNoLseGradient(Operation *op,
                                        ArrayRef<Value> resultGrads) {
  if (resultGrads[1])
    return op->emitOpError() << "has a gradient flowing into its log-sum-exp "
                                "result, which has no gradient rule";
  return success();
}

// The bias (a mask or a constant position bias) carries no gradient: the
// dlc-fuse-attention pass only forms attention over biases no gradient can
// reach.
bool AttentionOp::isDifferentiableOperand(unsigned index) { return index < 3; }

// dq, dk, dv = attention_grad(...): the probabilities are recomputed from
// the log-sum-exp, so nothing of size Tq x Tk lives from forward to backward
LogicalResult AttentionOp::buildGradient(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         MutableArrayRef<Value> operandGrads) {
  if (failed(checkNoLseGradient(*this, resultGrads)))
    return failure();
  if (!resultGrads[0])
    return success();
  auto grad = AttentionGradOp::create(
      b, getLoc(), typeOf(getQ()), typeOf(getK()), typeOf(getV()), getQ(),
      getK(), getV(), getOut(), getLse(), resultGrads[0], getBias(),
      getScaleAttr());
  operandGrads[0] = grad.getGradQ();
  operandGrads[1] = grad.getGradK();
  operandGrads[2] = grad.getGradV();
  return success();
}

// Only the logits: labels are integers, and lse is an output.
bool CrossEntropyOp::isDifferentiableOperand(unsigned index) {
  return index == 0;
}

// d logits = cross_entropy_grad(...): the probabilities are recomputed from
// the logits and the log-sum-exp
LogicalResult CrossEntropyOp::buildGradient(
    OpBuilder &b, ArrayRef<Value> resultGrads,
    MutableArrayRef<Value> operandGrads) {
  if (failed(checkNoLseGradient(*this, resultGrads)))
    return failure();
  if (!resultGrads[0])
    return success();
  operandGrads[0] = CrossEntropyGradOp::create(
      b, getLoc(), typeOf(getLogits()), getLogits(), getLabels(), getLse(),
      resultGrads[0], getIgnoreIndexAttr(), getLabelSmoothingAttr());
  return success();
}
