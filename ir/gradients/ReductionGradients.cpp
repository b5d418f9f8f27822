//===- ReductionGradients.cpp - Reductions, scans and top_k: gradients ---===//
//
// Vector-Jacobian products of the reductions, cumsum and top_k, following
// PyTorch's autograd: torch.prod's gradient is exact with zeros in the input
// (the product of the other elements, not result / x), and amax/amin split
// the gradient evenly among all the elements equal to the extremum. A
// reduction's result gradient is first reshaped to keep the reduced
// dimensions with size 1, so it broadcasts against the input.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientUtils.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::grad;

namespace {

/// `v`, shaped like the result of reducing `input` over `axes`, reshaped to
/// keep the reduced dimensions with size 1.
Value keepReduced(OpBuilder &b, Location loc, Value v, Value input,
                  ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape(typeOf(input).getShape());
  for (int64_t axis : axes)
    shape[axis] = 1;
  return reshape(b, loc, v, shape);
}

/// Sets the gradient of amax or amin (`op`): g divided evenly among the
/// elements equal to the result, as torch does; g itself over no axes.
template <typename OpT>
LogicalResult extremumGradient(OpT op, OpBuilder &b,
                               ArrayRef<Value> resultGrads,
                               MutableArrayRef<Value> operandGrads) {
  Value input = op.getInput(), grad = resultGrads[0];
  ArrayRef<int64_t> axes = op.getAxes();
  if (axes.empty()) {
    operandGrads[0] = grad;
    return success();
  }
  Location loc = op.getLoc();
  Value hit =
      CompareOp::create(b, loc, ComparePredicate::eq, input,
                        keepReduced(b, loc, op.getResult(), input, axes));
  Value hits = castTo(b, loc, hit, typeOf(input).getElementType());
  Value count = ReduceSumOp::create(b, loc, hits, axes, /*keep_dims=*/true);
  Value share = div(b, loc, keepReduced(b, loc, grad, input, axes), count);
  operandGrads[0] = mul(b, loc, share, hits);
  return success();
}

} // namespace

// d sum(x) = g broadcast over the reduced dimensions
LogicalResult ReduceSumOp::buildGradient(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value kept = keepReduced(b, loc, resultGrads[0], getInput(), getAxes());
  operandGrads[0] = broadcastTo(b, loc, kept, typeOf(getInput()).getShape());
  return success();
}

// d prod(x) / dx_i = g * (product of the other elements): y / x_i when
// x_i != 0; for x_i == 0 the product of the nonzeros if x_i is the only
// zero of its group, else 0
LogicalResult ReduceProdOp::buildGradient(OpBuilder &b,
                                          ArrayRef<Value> resultGrads,
                                          MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput(), g = resultGrads[0];
  ArrayRef<int64_t> axes = getAxes();
  if (axes.empty()) {
    operandGrads[0] = g;
    return success();
  }
  Value one = scalarLike(b, loc, x, 1.0);
  Value isZero = CompareOp::create(b, loc, ComparePredicate::eq, x,
                                   scalarLike(b, loc, x, 0.0));
  Value nonzeros = SelectOp::create(b, loc, isZero, one, x);
  Value nonzeroProduct = ReduceProdOp::create(b, loc, nonzeros, axes, true);
  Value zeroCount = ReduceSumOp::create(
      b, loc, castTo(b, loc, isZero, typeOf(x).getElementType()), axes, true);
  Value onlyZero =
      CompareOp::create(b, loc, ComparePredicate::eq, zeroCount, one);
  Value others = SelectOp::create(
      b, loc, isZero, selectOrZero(b, loc, onlyZero, nonzeroProduct),
      div(b, loc, keepReduced(b, loc, getResult(), x, axes), x));
  operandGrads[0] = mul(b, loc, keepReduced(b, loc, g, x, axes), others);
  return success();
}

// amax: g / count to each element equal to the maximum
LogicalResult ReduceMaxOp::buildGradient(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         MutableArrayRef<Value> operandGrads) {
  return extremumGradient(*this, b, resultGrads, operandGrads);
}

// amin: g / count to each element equal to the minimum
LogicalResult ReduceMinOp::buildGradient(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         MutableArrayRef<Value> operandGrads) {
  return extremumGradient(*this, b, resultGrads, operandGrads);
}

// y_i = sum_{j <= i} x_j (or j < i with exclusive) => dx_j = sum_{i >= j} g_i:
// the same scan of g in the other direction
LogicalResult CumSumOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = CumSumOp::create(b, getLoc(), resultGrads[0], getAxis(),
                                     getExclusive(), !getReverse());
  return success();
}

// dx = zeros with g added at the positions `indices` took the values from
LogicalResult TopKOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  if (!resultGrads[0])
    return success();
  operandGrads[0] =
      scatterAddIntoZeros(b, getLoc(), typeOf(getInput()), getIndices(),
                          resultGrads[0], static_cast<int64_t>(getAxis()));
  return success();
}

// y = the ranks' sum or mean of x, the same on every rank. Data-parallel
// training averages the ranks' gradients of their own losses, so rank r's
// share of d(mean loss)/dx_r, scaled as the others are, is the same
// reduction of every rank's g: dx = all_reduce(g), in one collective for
// the results that have a gradient.
LogicalResult AllReduceOp::buildGradient(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         MutableArrayRef<Value> operandGrads) {
  SmallVector<Value> grads;
  SmallVector<unsigned> operands;
  for (auto [i, g] : llvm::enumerate(resultGrads))
    if (g) {
      grads.push_back(g);
      operands.push_back(i);
    }
  if (grads.empty())
    return success();
  auto reduced =
      AllReduceOp::create(b, getLoc(), grads, getReduction(), getBucket());
  for (auto [i, result] : llvm::zip(operands, reduced.getResults()))
    operandGrads[i] = result;
  return success();
}

// Megatron-LM's conjugate pair. y = x on every rank of a tensor group, and
// each rank's part of the loss depends on its own y: dL/dx is the sum over
// the group of every rank's g.
LogicalResult TpCopyOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = TpReduceOp::create(b, getLoc(), resultGrads[0]);
  return success();
}

// y = the group's sum of its ranks' x: each x adds to y with weight one, and
// g (like y) is the same on every rank of the group.
LogicalResult TpReduceOp::buildGradient(OpBuilder &b,
                                        ArrayRef<Value> resultGrads,
                                        MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = TpCopyOp::create(b, getLoc(), resultGrads[0]);
  return success();
}

// Treated as a constant: nothing flows to x.
bool StopGradientOp::isDifferentiableOperand(unsigned) { return false; }

LogicalResult StopGradientOp::buildGradient(OpBuilder &, ArrayRef<Value>,
                                            MutableArrayRef<Value>) {
  return success();
}
