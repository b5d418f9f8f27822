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

/// A value in a unary rule's formula. Arithmetic on terms builds the
/// broadcasting dlc ops at the forward op's location, and a number beside a
/// term becomes a rank-0 constant of the term's element type, so a rule
/// reads as its formula: `g * (1.0 - y * y)`.
struct Term {
  OpBuilder &b;
  Location loc;
  Value value;

  Term with(Value v) const { return {b, loc, v}; }
  Term constant(double c) const { return with(scalarLike(b, loc, value, c)); }
};

Term operator-(Term t) { return t.with(neg(t.b, t.loc, t.value)); }
Term operator+(Term l, Term r) {
  return l.with(add(l.b, l.loc, l.value, r.value));
}
Term operator-(Term l, Term r) {
  return l.with(sub(l.b, l.loc, l.value, r.value));
}
Term operator*(Term l, Term r) {
  return l.with(mul(l.b, l.loc, l.value, r.value));
}
Term operator/(Term l, Term r) {
  return l.with(div(l.b, l.loc, l.value, r.value));
}
Term operator+(Term l, double r) { return l + l.constant(r); }
Term operator-(Term l, double r) { return l - l.constant(r); }
Term operator*(Term l, double r) { return l * l.constant(r); }
Term operator-(double l, Term r) { return r.constant(l) - r; }

/// The unary op `OpT` applied to `t`.
template <typename OpT> Term apply(Term t) {
  return t.with(OpT::create(t.b, t.loc, t.value));
}

/// Sets the gradient of unary `op`'s operand to `rule(x, y, g)`, for
/// y = op(x) and g the gradient of y: the chain rule g * op'(x), with op'
/// written in x or y, whichever is cheaper.
template <typename OpT, typename Rule>
LogicalResult chainRule(OpT op, OpBuilder &b, ArrayRef<Value> resultGrads,
                        MutableArrayRef<Value> operandGrads, Rule rule) {
  Location loc = op.getLoc();
  Term x{b, loc, op.getInput()}, y{b, loc, op.getResult()};
  operandGrads[0] = rule(x, y, Term{b, loc, resultGrads[0]}).value;
  return success();
}

/// `lhs <predicate> rhs` with broadcasting.
Value compare(OpBuilder &b, Location loc, ComparePredicate predicate, Value lhs,
              Value rhs) {
  return CompareOp::create(b, loc, predicate, lhs, rhs);
}

/// `condition ? 0 : v`, broadcast.
Value zeroWhere(OpBuilder &b, Location loc, Value condition, Value v) {
  return SelectOp::create(b, loc, condition, scalarLike(b, loc, v, 0.0), v);
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
  Value half = mul(b, loc, grad, scalarLike(b, loc, grad, 0.5));
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
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return -g; });
}

// d|x| = g * sign(x), so 0 at x = 0
LogicalResult AbsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * apply<SignOp>(x); });
}

// sign is piecewise constant: zero gradient
LogicalResult SignOp::buildGradient(OpBuilder &, ArrayRef<Value>,
                                    MutableArrayRef<Value>) {
  return success();
}

// d exp(x) = g * exp(x)
LogicalResult ExpOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * y; });
}

// d log(x) = g / x
LogicalResult LogOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g / x; });
}

// d sqrt(x) = g / (2 sqrt(x))
LogicalResult SqrtOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g / (y * 2.0); });
}

// d x^(-1/2) = -g/2 * y^3
LogicalResult RsqrtOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  return chainRule(
      *this, b, resultGrads, operandGrads,
      [](Term x, Term y, Term g) { return g * -0.5 * (y * y * y); });
}

// d (1/x) = -g * y^2
LogicalResult ReciprocalOp::buildGradient(OpBuilder &b,
                                          ArrayRef<Value> resultGrads,
                                          MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return -g * (y * y); });
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
  return chainRule(
      *this, b, resultGrads, operandGrads, [](Term x, Term y, Term g) {
        return g * (apply<ExpOp>(-(x * x)) * 1.12837916709551257390);
      });
}

// d sin(x) = g * cos(x)
LogicalResult SinOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * apply<CosOp>(x); });
}

// d cos(x) = -g * sin(x)
LogicalResult CosOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return -g * apply<SinOp>(x); });
}

// d tanh(x) = g * (1 - y^2)
LogicalResult TanhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * (1.0 - y * y); });
}

// d tan(x) = g * (1 + y^2)
LogicalResult TanOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * (y * y + 1.0); });
}

// d asin(x) = g * rsqrt(1 - x^2)
LogicalResult AsinOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  return chainRule(
      *this, b, resultGrads, operandGrads,
      [](Term x, Term y, Term g) { return g * apply<RsqrtOp>(1.0 - x * x); });
}

// d acos(x) = -g * rsqrt(1 - x^2)
LogicalResult AcosOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  return chainRule(
      *this, b, resultGrads, operandGrads,
      [](Term x, Term y, Term g) { return -g * apply<RsqrtOp>(1.0 - x * x); });
}

// d atan(x) = g / (1 + x^2)
LogicalResult AtanOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g / (x * x + 1.0); });
}

// d sinh(x) = g * cosh(x)
LogicalResult SinhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * apply<CoshOp>(x); });
}

// d cosh(x) = g * sinh(x)
LogicalResult CoshOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * apply<SinhOp>(x); });
}

// d asinh(x) = g * rsqrt(x^2 + 1)
LogicalResult AsinhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  return chainRule(
      *this, b, resultGrads, operandGrads,
      [](Term x, Term y, Term g) { return g * apply<RsqrtOp>(x * x + 1.0); });
}

// d acosh(x) = g * rsqrt(x^2 - 1)
LogicalResult AcoshOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  return chainRule(
      *this, b, resultGrads, operandGrads,
      [](Term x, Term y, Term g) { return g * apply<RsqrtOp>(x * x - 1.0); });
}

// d atanh(x) = g / (1 - x^2)
LogicalResult AtanhOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g / (1.0 - x * x); });
}

// d sigmoid(x) = g * y * (1 - y)
LogicalResult SigmoidOp::buildGradient(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       MutableArrayRef<Value> operandGrads) {
  return chainRule(*this, b, resultGrads, operandGrads,
                   [](Term x, Term y, Term g) { return g * (y * (1.0 - y)); });
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

// d(x / y) = (g / y, -g * (x / y) / y)
LogicalResult DivOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0], x = getLhs(), y = getRhs();
  // -g * ((x / y) / y), in PyTorch's order: y * y would overflow f16 for
  // |y| >= 256.
  Value rhsGrad = neg(b, loc, mul(b, loc, g, div(b, loc, getResult(), y)));
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
  Value zero = scalarLike(b, loc, x, 0.0);
  Value lower =
      PowOp::create(b, loc, x, sub(b, loc, y, scalarLike(b, loc, y, 1.0)));
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
      mul(b, loc, mul(b, loc, g, kept), scalarLike(b, loc, g, scale));
  return success();
}
