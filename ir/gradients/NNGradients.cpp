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
// A transposed convolution (input_dilation > 1, what ConvTranspose imports
// as) has no library gradient op of its own; its gradients are again
// convolutions, expressed with dlc.conv itself:
//  - data: dy, dilated by the forward stride, correlated with the filter
//    flipped in space and with its channel axes swapped in each group, at a
//    stride of the forward input_dilation;
//  - filter: x and dy with their batch and channel axes exchanged (groups
//    folded into the channel axis), correlated with dy as the filter: the
//    forward dilation becomes the stride and the forward stride the
//    dilation.
// Padding that the algebra makes negative becomes zero padding and a slice
// of the result.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientUtils.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::grad;

namespace {

/// `v` reshaped to `shape`, permuted by `perm`, reshaped to `result`.
Value regroup(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape,
              ArrayRef<int64_t> perm, ArrayRef<int64_t> result) {
  Value permuted = TransposeOp::create(b, loc, reshape(b, loc, v, shape), perm);
  return reshape(b, loc, permuted, result);
}

/// The spatial window of `v` ([N, C, spatial...]) that starts at `start`
/// with `sizes`; `v` itself when that is all of it.
Value cropSpatial(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> start,
                  ArrayRef<int64_t> sizes) {
  RankedTensorType type = typeOf(v);
  if (llvm::all_of(start, [](int64_t s) { return s == 0; }) &&
      type.getShape().drop_front(2) == sizes)
    return v;
  SmallVector<int64_t> offsets = {0, 0}, extent(type.getShape().take_front(2));
  offsets.append(start.begin(), start.end());
  extent.append(sizes.begin(), sizes.end());
  SmallVector<int64_t> strides(type.getRank(), 1);
  return SliceOp::create(b, loc, v, offsets, extent, strides);
}

/// The gradient of a transposed convolution with respect to its input.
Value transposedConvGradInput(OpBuilder &b, Location loc, ConvOp op, Value dy) {
  RankedTensorType xType = typeOf(op.getInput()),
                   wType = typeOf(op.getFilter());
  RankedTensorType yType = typeOf(dy);
  int64_t spatial = xType.getRank() - 2;
  int64_t groups = static_cast<int64_t>(op.getGroups());
  int64_t outChannels = wType.getDimSize(0),
          groupChannels = wType.getDimSize(1);
  int64_t groupOutChannels = outChannels / groups;
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);

  // v[j*Cg + c, o, k] = w[j*Og + o, c, K - 1 - k].
  SmallVector<int64_t> grouped = {groups, groupOutChannels, groupChannels};
  grouped.append(kernel.begin(), kernel.end());
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t d = 0; d < spatial; ++d)
    perm.push_back(3 + d);
  SmallVector<int64_t> swapped = {groups * groupChannels, groupOutChannels};
  swapped.append(kernel.begin(), kernel.end());
  Value v = regroup(b, loc, op.getFilter(), grouped, perm, swapped);
  SmallVector<int64_t> offsets(spatial + 2, 0), steps(spatial + 2, 1);
  for (int64_t d = 0; d < spatial; ++d) {
    offsets[d + 2] = kernel[d] - 1;
    steps[d + 2] = -1;
  }
  v = SliceOp::create(b, loc, v, offsets, swapped, steps);

  // dx[i] = sum_k v[k] dyd[i*idil + k*d - lo], dyd = dy dilated by the
  // stride, lo = (K-1)d - pad_low; the last output reads up to
  // (Nx-1)*idil + pad_low, which fixes the high padding.
  SmallVector<int64_t> lows(spatial), highs(spatial), lead(spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t dil = op.getDilation()[d], idil = op.getInputDilation()[d];
    int64_t s = op.getStride()[d], padLow = op.getPadLow()[d];
    int64_t nx = xType.getDimSize(d + 2), ny = yType.getDimSize(d + 2);
    int64_t lo = (kernel[d] - 1) * dil - padLow;
    int64_t hi = (nx - 1) * idil + padLow - (ny - 1) * s;
    lead[d] = lo < 0 ? (-lo + idil - 1) / idil : 0;
    lows[d] = lo + lead[d] * idil;
    highs[d] = std::max<int64_t>(hi, 0);
  }
  Value dx = ConvOp::create(b, loc, dy, v, op.getInputDilation(), lows, highs,
                            op.getDilation(), op.getStride(),
                            static_cast<uint64_t>(groups));
  return cropSpatial(b, loc, dx, lead, xType.getShape().drop_front(2));
}

/// The gradient of a transposed convolution with respect to its filter.
Value transposedConvGradFilter(OpBuilder &b, Location loc, ConvOp op,
                               Value dy) {
  RankedTensorType xType = typeOf(op.getInput()),
                   wType = typeOf(op.getFilter());
  RankedTensorType yType = typeOf(dy);
  int64_t spatial = xType.getRank() - 2;
  int64_t groups = static_cast<int64_t>(op.getGroups());
  int64_t batch = xType.getDimSize(0);
  int64_t groupChannels = wType.getDimSize(1);
  ArrayRef<int64_t> xSpatial = xType.getShape().drop_front(2);
  ArrayRef<int64_t> ySpatial = yType.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);

  // x [N, G*Cg, xs] -> [Cg, G*N, xs]: the channel within the group becomes
  // the batch, and each group's batch its own channel group.
  SmallVector<int64_t> perm = {2, 1, 0};
  SmallVector<int64_t> xGrouped = {batch, groups, groupChannels};
  SmallVector<int64_t> xSwapped = {groupChannels, groups * batch};
  xGrouped.append(xSpatial.begin(), xSpatial.end());
  xSwapped.append(xSpatial.begin(), xSpatial.end());
  for (int64_t d = 0; d < spatial; ++d)
    perm.push_back(3 + d);
  Value input = regroup(b, loc, op.getInput(), xGrouped, perm, xSwapped);
  // dy [N, G*Og, ys] -> [G*Og, N, ys]: the filter, N channels per group.
  SmallVector<int64_t> dyPerm = {1, 0};
  for (int64_t d = 0; d < spatial; ++d)
    dyPerm.push_back(2 + d);
  Value filter = TransposeOp::create(b, loc, dy, dyPerm);

  // dw[k] = sum_y dy[y] xd[k*d + y*s - pad_low]: stride d, dilation s.
  SmallVector<int64_t> highs(spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t dil = op.getDilation()[d], idil = op.getInputDilation()[d];
    int64_t s = op.getStride()[d], padLow = op.getPadLow()[d];
    int64_t hi = (kernel[d] - 1) * dil + (ySpatial[d] - 1) * s - padLow -
                 (xSpatial[d] - 1) * idil;
    highs[d] = std::max<int64_t>(hi, 0);
  }
  Value r = ConvOp::create(
      b, loc, input, filter, op.getDilation(), op.getPadLow(), highs,
      op.getStride(), op.getInputDilation(), static_cast<uint64_t>(groups));
  r = cropSpatial(b, loc, r, SmallVector<int64_t>(spatial, 0), kernel);
  // [Cg, O, K] -> [O, Cg, K].
  Value dw = TransposeOp::create(b, loc, r, dyPerm);
  assert(typeOf(dw) == wType && "filter gradient has the filter's type");
  return dw;
}

} // namespace

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

// dx = conv_grad_input(dy, w), dw = conv_grad_filter(x, dy); a transposed
// convolution's are convolutions again (see the file header)
LogicalResult ConvOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value dy = resultGrads[0], x = getInput(), w = getFilter();
  // An empty operand's gradient is empty: left null (zero).
  bool wantX = typeOf(x).getNumElements() > 0;
  bool wantW = typeOf(w).getNumElements() > 0;
  if (llvm::any_of(getInputDilation(), [](int64_t v) { return v != 1; })) {
    if (wantX)
      operandGrads[0] = transposedConvGradInput(b, loc, *this, dy);
    if (wantW)
      operandGrads[1] = transposedConvGradFilter(b, loc, *this, dy);
    return success();
  }
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
