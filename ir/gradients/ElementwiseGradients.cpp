//===- ElementwiseGradients.cpp - Elementwise, select, cast, dropout -----===//
//
// Vector-Jacobian products of the elementwise ops. Each follows PyTorch's
// autograd formula (tools/autograd/derivatives.yaml) for the matching torch
// function, including its choices at non-differentiable points: sign, floor,
// ceil and round have zero gradient, abs'(0) = 0, maximum/minimum split the
// gradient evenly on ties, and pow's special cases at exponent 0 and base 0.
// Binary ops broadcast, so each operand's contribution is summed back to the
// operand's shape.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientUtils.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::grad;

namespace {

/// A rank-0 constant in the element type of `like`.
Value constantLike(OpBuilder &b, Location loc, Value like, double value) {
  return scalar(b, loc, typeOf(like).getElementType(), value);
}

/// `lhs <predicate> rhs` with broadcasting.
Value compare(OpBuilder &b, Location loc, ComparePredicate predicate, Value lhs,
              Value rhs) {
  return CompareOp::create(b, loc, predicate, lhs, rhs);
}

/// `condition ? 0 : v`, broadcast.
Value zeroWhere(OpBuilder &b, Location loc, Value condition, Value v) {
  return SelectOp::create(b, loc, condition, constantLike(b, loc, v, 0.0), v);
}

/// Sets the gradients of a broadcasting binary op's operands from their
/// contributions at the result's shape.
LogicalResult setBinary(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        Value lhsGrad, Value rhsGrad,
                        MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = sumToShape(b, loc, lhsGrad, typeOf(lhs));
  operandGrads[1] = sumToShape(b, loc, rhsGrad, typeOf(rhs));
  return success();
}

/// The gradients of torch.maximum (`isMax`) or torch.minimum: the gradient
/// goes to the chosen operand, half to each on ties.
LogicalResult minMax(OpBuilder &b, Location loc, bool isMax, Value lhs,
                     Value rhs, Value grad,
                     MutableArrayRef<Value> operandGrads) {
  Value half = mul(b, loc, grad, constantLike(b, loc, grad, 0.5));
  Value shared = SelectOp::create(
      b, loc, compare(b, loc, ComparePredicate::eq, lhs, rhs), half, grad);
  Value lhsLoses = compare(
      b, loc, isMax ? ComparePredicate::lt : ComparePredicate::gt, lhs, rhs);
  Value rhsLoses = compare(
      b, loc, isMax ? ComparePredicate::gt : ComparePredicate::lt, lhs, rhs);
  return setBinary(b, loc, lhs, rhs, zeroWhere(b, loc, lhsLoses, shared),
                   zeroWhere(b, loc, rhsLoses, shared), operandGrads);
}

} // namespace

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

// d(-x) = -g
LogicalResult NegOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = neg(b, getLoc(), resultGrads[0]);
  return success();
}

// d|x| = g * sign(x), so 0 at x = 0
LogicalResult AbsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  operandGrads[0] =
      mul(b, loc, resultGrads[0], SignOp::create(b, loc, getInput()));
  return success();
}

// sign is piecewise constant: zero gradient
LogicalResult SignOp::buildGradient(OpBuilder &, ArrayRef<Value>,
                                    MutableArrayRef<Value>) {
  return success();
}

// d exp(x) = g * exp(x)
LogicalResult ExpOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = mul(b, getLoc(), resultGrads[0], getResult());
  return success();
}

// d log(x) = g / x
LogicalResult LogOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = div(b, getLoc(), resultGrads[0], getInput());
  return success();
}

// d sqrt(x) = g / (2 sqrt(x))
LogicalResult SqrtOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value twice =
      mul(b, loc, getResult(), constantLike(b, loc, getResult(), 2.0));
  operandGrads[0] = div(b, loc, resultGrads[0], twice);
  return success();
}

// d x^(-1/2) = -g/2 * y^3
LogicalResult RsqrtOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value y = getResult();
  Value cube = mul(b, loc, mul(b, loc, y, y), y);
  Value scaled = mul(b, loc, resultGrads[0], constantLike(b, loc, y, -0.5));
  operandGrads[0] = mul(b, loc, scaled, cube);
  return success();
}

// d (1/x) = -g * y^2
LogicalResult ReciprocalOp::buildGradient(OpBuilder &b,
                                          ArrayRef<Value> resultGrads,
                                          MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value y = getResult();
  operandGrads[0] = mul(b, loc, neg(b, loc, resultGrads[0]), mul(b, loc, y, y));
  return success();
}

// ceil is piecewise constant: zero gradient
LogicalResult CeilOp::buildGradient(OpBuilder &, ArrayRef<Value>,
                                    MutableArrayRef<Value>) {
  return success();
}

// floor is piecewise constant: zero gradient
LogicalResult FloorOp::buildGradient(OpBuilder &, ArrayRef<Value>,
                                     MutableArrayRef<Value>) {
  return success();
}

// round is piecewise constant: zero gradient
LogicalResult RoundOp::buildGradient(OpBuilder &, ArrayRef<Value>,
                                     MutableArrayRef<Value>) {
  return success();
}

// d erf(x) = g * 2/sqrt(pi) * exp(-x^2)
LogicalResult ErfOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput();
  Value gauss = ExpOp::create(b, loc, neg(b, loc, mul(b, loc, x, x)));
  Value scale = constantLike(b, loc, x, 1.12837916709551257390); // 2/sqrt(pi)
  operandGrads[0] = mul(b, loc, resultGrads[0], mul(b, loc, gauss, scale));
  return success();
}

// d sin(x) = g * cos(x)
LogicalResult SinOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  operandGrads[0] =
      mul(b, loc, resultGrads[0], CosOp::create(b, loc, getInput()));
  return success();
}

// d cos(x) = -g * sin(x)
LogicalResult CosOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  operandGrads[0] = mul(b, loc, neg(b, loc, resultGrads[0]),
                        SinOp::create(b, loc, getInput()));
  return success();
}

// d tanh(x) = g * (1 - y^2)
LogicalResult TanhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value y = getResult();
  Value d = sub(b, loc, constantLike(b, loc, y, 1.0), mul(b, loc, y, y));
  operandGrads[0] = mul(b, loc, resultGrads[0], d);
  return success();
}

// d tan(x) = g * (1 + y^2)
LogicalResult TanOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value y = getResult();
  Value d = add(b, loc, mul(b, loc, y, y), constantLike(b, loc, y, 1.0));
  operandGrads[0] = mul(b, loc, resultGrads[0], d);
  return success();
}

// d asin(x) = g * rsqrt(1 - x^2)
LogicalResult AsinOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput();
  Value d = RsqrtOp::create(
      b, loc, sub(b, loc, constantLike(b, loc, x, 1.0), mul(b, loc, x, x)));
  operandGrads[0] = mul(b, loc, resultGrads[0], d);
  return success();
}

// d acos(x) = -g * rsqrt(1 - x^2)
LogicalResult AcosOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput();
  Value d = RsqrtOp::create(
      b, loc, sub(b, loc, constantLike(b, loc, x, 1.0), mul(b, loc, x, x)));
  operandGrads[0] = mul(b, loc, neg(b, loc, resultGrads[0]), d);
  return success();
}

// d atan(x) = g / (1 + x^2)
LogicalResult AtanOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput();
  Value d = add(b, loc, mul(b, loc, x, x), constantLike(b, loc, x, 1.0));
  operandGrads[0] = div(b, loc, resultGrads[0], d);
  return success();
}

// d sinh(x) = g * cosh(x)
LogicalResult SinhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  operandGrads[0] =
      mul(b, loc, resultGrads[0], CoshOp::create(b, loc, getInput()));
  return success();
}

// d cosh(x) = g * sinh(x)
LogicalResult CoshOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  operandGrads[0] =
      mul(b, loc, resultGrads[0], SinhOp::create(b, loc, getInput()));
  return success();
}

// d asinh(x) = g * rsqrt(x^2 + 1)
LogicalResult AsinhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput();
  Value d = RsqrtOp::create(
      b, loc, add(b, loc, mul(b, loc, x, x), constantLike(b, loc, x, 1.0)));
  operandGrads[0] = mul(b, loc, resultGrads[0], d);
  return success();
}

// d acosh(x) = g * rsqrt(x^2 - 1)
LogicalResult AcoshOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput();
  Value d = RsqrtOp::create(
      b, loc, sub(b, loc, mul(b, loc, x, x), constantLike(b, loc, x, 1.0)));
  operandGrads[0] = mul(b, loc, resultGrads[0], d);
  return success();
}

// d atanh(x) = g / (1 - x^2)
LogicalResult AtanhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value x = getInput();
  Value d = sub(b, loc, constantLike(b, loc, x, 1.0), mul(b, loc, x, x));
  operandGrads[0] = div(b, loc, resultGrads[0], d);
  return success();
}

// d sigmoid(x) = g * y * (1 - y)
LogicalResult SigmoidOp::buildGradient(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value y = getResult();
  Value d = mul(b, loc, y, sub(b, loc, constantLike(b, loc, y, 1.0), y));
  operandGrads[0] = mul(b, loc, resultGrads[0], d);
  return success();
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

// d(x + y) = (g, g)
LogicalResult AddOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Value g = resultGrads[0];
  return setBinary(b, getLoc(), getLhs(), getRhs(), g, g, operandGrads);
}

// d(x - y) = (g, -g)
LogicalResult SubOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0];
  return setBinary(b, loc, getLhs(), getRhs(), g, neg(b, loc, g), operandGrads);
}

// d(x * y) = (g * y, g * x)
LogicalResult MulOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0];
  return setBinary(b, loc, getLhs(), getRhs(), mul(b, loc, g, getRhs()),
                   mul(b, loc, g, getLhs()), operandGrads);
}

// d(x / y) = (g / y, -g * x / y^2)
LogicalResult DivOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0], x = getLhs(), y = getRhs();
  Value rhsGrad =
      div(b, loc, mul(b, loc, neg(b, loc, g), x), mul(b, loc, y, y));
  return setBinary(b, loc, x, y, div(b, loc, g, y), rhsGrad, operandGrads);
}

// fmod(x, y) = x - trunc(x / y) * y: (g, -g * trunc(x / y))
LogicalResult RemOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0], x = getLhs(), y = getRhs();
  Value quotient = div(b, loc, x, y);
  Value truncated =
      mul(b, loc, SignOp::create(b, loc, quotient),
          FloorOp::create(b, loc, AbsOp::create(b, loc, quotient)));
  return setBinary(b, loc, x, y, g, mul(b, loc, neg(b, loc, g), truncated),
                   operandGrads);
}

// d x^y = (y == 0 ? 0 : g * y * x^(y-1),
//          g * (x == 0 && y >= 0 ? 0 : x^y * log(x)))
LogicalResult PowOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0], x = getLhs(), y = getRhs();
  Value zero = constantLike(b, loc, x, 0.0);
  Value lower =
      PowOp::create(b, loc, x, sub(b, loc, y, constantLike(b, loc, y, 1.0)));
  Value lhsGrad =
      zeroWhere(b, loc, compare(b, loc, ComparePredicate::eq, y, zero),
                mul(b, loc, g, mul(b, loc, y, lower)));
  Value baseZero =
      AndOp::create(b, loc, compare(b, loc, ComparePredicate::eq, x, zero),
                    compare(b, loc, ComparePredicate::ge, y, zero));
  Value logTerm = mul(b, loc, getResult(), LogOp::create(b, loc, x));
  Value rhsGrad = mul(b, loc, g, zeroWhere(b, loc, baseZero, logTerm));
  return setBinary(b, loc, x, y, lhsGrad, rhsGrad, operandGrads);
}

// torch.maximum: g to the larger operand, g/2 to each on ties
LogicalResult MaxOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return minMax(b, getLoc(), /*isMax=*/true, getLhs(), getRhs(), resultGrads[0],
                operandGrads);
}

// torch.minimum: g to the smaller operand, g/2 to each on ties
LogicalResult MinOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return minMax(b, getLoc(), /*isMax=*/false, getLhs(), getRhs(),
                resultGrads[0], operandGrads);
}

//===----------------------------------------------------------------------===//
// Select, cast and dropout
//===----------------------------------------------------------------------===//

// d select(c, a, b) = (none, c ? g : 0, c ? 0 : g)
LogicalResult SelectOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0], condition = getCondition();
  operandGrads[1] = sumToShape(b, loc, selectOrZero(b, loc, condition, g),
                               typeOf(getOnTrue()));
  operandGrads[2] =
      sumToShape(b, loc, zeroWhere(b, loc, condition, g), typeOf(getOnFalse()));
  return success();
}

// float -> float: g cast back to the input's type; otherwise no gradient
LogicalResult CastOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  Type input = typeOf(getInput()).getElementType();
  if (!resultGrads[0] || !isa<FloatType>(input) ||
      !isa<FloatType>(typeOf(getResult()).getElementType()))
    return success();
  operandGrads[0] = castTo(b, getLoc(), resultGrads[0], input);
  return success();
}

// d dropout(x) = g * mask / (1 - ratio); the seed gets none
LogicalResult DropoutOp::buildGradient(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       MutableArrayRef<Value> operandGrads) {
  if (!resultGrads[0])
    return success();
  Location loc = getLoc();
  Value g = resultGrads[0];
  double scale = 1.0 / (1.0 - getRatio().convertToDouble());
  Value kept = castTo(b, loc, getMask(), typeOf(g).getElementType());
  operandGrads[0] =
      mul(b, loc, mul(b, loc, g, kept), constantLike(b, loc, g, scale));
  return success();
}
