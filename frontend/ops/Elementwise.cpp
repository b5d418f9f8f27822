//===- Elementwise.cpp - ONNX elementwise, comparison and cast ops --------===//
//
// Math ops with a dlc counterpart map one to one; activations are written as
// compositions of their ONNX definitions, so the dialect stays small and
// autodiff needs rules only for the primitives.
//
// The compositions are chosen so that the generic gradient rules give
// PyTorch's derivative where the activation has a kink: a piecewise
// function is a dlc.select between its pieces, with the comparison PyTorch's
// backward uses deciding which piece owns the kink (Relu is
// select(x <= 0, 0, x), so relu'(0) = 0; LeakyRelu selects on x > 0, so its
// slope owns 0), never max or min, whose gradient splits ties evenly. A
// piece that can overflow where it is not selected (Elu's exp) is fed a
// value clamped by the same select, so its unused gradient is 0 rather than
// 0 * inf = NaN. Clamps (Clip, HardSigmoid) pass the gradient where PyTorch
// does, NaN inputs included, and return NaN for NaN through a NaN constant
// branch that no gradient flows into.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/ops/RuleUtils.h"
#include "frontend/TensorProto.h"
#include "ir/eval/Evaluator.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dlc;

namespace {

template <typename OpT> void unaryRule(NodeContext &c) {
  c.setOutput(0, c.unary<OpT>(c.input(0)));
}

template <typename OpT> void binaryRule(NodeContext &c) {
  c.setOutput(0, c.build<OpT>({c.input(0), c.input(1)}));
}

template <ComparePredicate P> void compareRule(NodeContext &c) {
  c.setOutput(0, c.compare(P, c.input(0), c.input(1)));
}

/// Sum, Max, Min: a left fold over any number of inputs.
template <typename OpT> Value foldInputs(NodeContext &c) {
  Value acc = c.input(0);
  for (size_t i = 1; i < c.numInputs(); ++i)
    acc = c.build<OpT>({acc, c.input(i)});
  return acc;
}

Value zeroLike(NodeContext &c, Value x) { return scalarLike(c, x, 0.0); }

Value isNegative(NodeContext &c, Value x) {
  return c.compare(ComparePredicate::lt, x, zeroLike(c, x));
}

/// max(x, 0) + log(1 + exp(-|x|)): log(1 + exp(x)) without overflow.
Value softplus(NodeContext &c, Value x) {
  Value positive = c.build<MaxOp>({x, zeroLike(c, x)});
  Value e = c.unary<ExpOp>(c.unary<NegOp>(c.unary<AbsOp>(x)));
  Value log1p = c.unary<LogOp>(c.build<AddOp>({scalarLike(c, x, 1.0), e}));
  return c.build<AddOp>({positive, log1p});
}

Value nanLike(NodeContext &c, Value x) {
  return scalarLike(c, x, std::numeric_limits<double>::quiet_NaN());
}

/// select(x <= 0, onNonPositive(select(x <= 0, x, 0)), x): the negative
/// piece of Elu, Selu and Celu sees x only where it is selected, so an
/// exp there cannot overflow into a NaN gradient for large x.
template <typename Fn>
Value exponentialBelowZero(NodeContext &c, Value x, Fn onNonPositive) {
  Value zero = zeroLike(c, x);
  Value notPositive = c.compare(ComparePredicate::le, x, zero);
  Value safe = c.select(notPositive, x, zero);
  return c.select(notPositive, onNonPositive(safe), x);
}

/// Whether every element of `lo` is at most every element of `hi`, both
/// constants without NaN: then Clip needs no case for crossed bounds.
bool boundsOrdered(const Tensor &lo, const Tensor &hi) {
  double maxLo = -std::numeric_limits<double>::infinity();
  double minHi = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < lo.numElements(); ++i) {
    double v = lo.getDouble(i);
    if (std::isnan(v))
      return false;
    maxLo = std::max(maxLo, v);
  }
  for (int64_t i = 0; i < hi.numElements(); ++i) {
    double v = hi.getDouble(i);
    if (std::isnan(v))
      return false;
    minHi = std::min(minHi, v);
  }
  return maxLo <= minHi;
}

bool hasNaN(const Tensor &t) {
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (std::isnan(t.getDouble(i)))
      return true;
  return false;
}

/// Clip of a float x, forward as ONNX's min(max(x, lo), hi) (hi where the
/// bounds cross) and backward as torch.clamp: x's gradient passes where
/// lo <= x <= hi (not for NaN x), lo's where x < lo, hi's where x > hi or
/// hi < lo. `lo` and `hi` may be null (no bound); `loValue` and `hiValue`
/// are their values when known at import.
///
///   y = select(x > hi or hi < lo, hi,
///              select(x < lo, lo, select(x >= lo, x, NaN)))
///
/// The innermost select gives NaN x (and NaN bounds) a NaN result without
/// a gradient. With constant bounds known to be ordered, `hi < lo` is left
/// out; constant bounds with NaN keep max and min, whose NaN propagation is
/// ONNX's.
Value clipFloat(NodeContext &c, Value x, Value lo, Value hi,
                const std::optional<Tensor> &loValue,
                const std::optional<Tensor> &hiValue) {
  if ((loValue && hasNaN(*loValue)) || (hiValue && hasNaN(*hiValue))) {
    if (lo)
      x = c.build<MaxOp>({x, lo});
    if (hi)
      x = c.build<MinOp>({x, hi});
    return x;
  }
  if (!lo && !hi)
    return x;
  Value y = x;
  if (lo)
    y = c.select(c.compare(ComparePredicate::ge, x, lo), x, nanLike(c, x));
  else
    y = c.select(c.compare(ComparePredicate::le, x, hi), x, nanLike(c, x));
  if (lo)
    y = c.select(c.compare(ComparePredicate::lt, x, lo), lo, y);
  if (hi) {
    Value above = c.compare(ComparePredicate::gt, x, hi);
    if (lo && !(loValue && hiValue && boundsOrdered(*loValue, *hiValue)))
      above = c.build<OrOp>({above, c.compare(ComparePredicate::lt, hi, lo)});
    y = c.select(above, hi, y);
  }
  return y;
}

void clipRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  Value lo, hi;
  std::optional<Tensor> loValue, hiValue;
  if (c.version() < 11) {
    // Clip-6 takes its bounds as attributes; an absent one is no bound.
    auto attrBound = [&](StringRef name, Value &bound,
                         std::optional<Tensor> &value) {
      if (!c.hasAttr(name))
        return;
      Tensor t(DType::F64, {});
      t.data<double>()[0] = c.floatAttr(name, 0.0f);
      bound = scalarLike(c, x, t.getDouble(0));
      value = std::move(t);
    };
    attrBound("min", lo, loValue);
    attrBound("max", hi, hiValue);
  } else {
    if (c.hasInput(1)) {
      lo = c.input(1);
      loValue = c.constantValue(1);
    }
    if (c.hasInput(2)) {
      hi = c.input(2);
      hiValue = c.constantValue(2);
    }
  }
  if (c.failed())
    return;
  if (isa<FloatType>(elemType(x))) {
    c.setOutput(0, clipFloat(c, x, lo, hi, loValue, hiValue));
    return;
  }
  // Integers have no gradient: max and min.
  if (lo)
    x = c.build<MaxOp>({x, lo});
  if (hi)
    x = c.build<MinOp>({x, hi});
  c.setOutput(0, x);
}

void modRule(NodeContext &c) {
  Value a = c.input(0), b = c.input(1);
  Value r = c.build<RemOp>({a, b});
  if (c.intAttr("fmod", 0) == 0) {
    // Python's modulo takes the divisor's sign: add b where r is non-zero
    // and its sign differs from b's.
    Value nonZero = c.compare(ComparePredicate::ne, r, zeroLike(c, r));
    Value differ = c.build<XorOp>({isNegative(c, r), isNegative(c, b)});
    Value adjust = c.build<AndOp>({nonZero, differ});
    r = c.select(adjust, c.build<AddOp>({r, b}), r);
  }
  c.setOutput(0, r);
}

void powRule(NodeContext &c) {
  Value base = c.input(0);
  Value exponent = c.cast(c.input(1), c.inputElementType(0));
  c.setOutput(0, c.build<PowOp>({base, exponent}));
}

void meanRule(NodeContext &c) {
  Value sum = foldInputs<AddOp>(c);
  c.setOutput(0, c.build<DivOp>(
                     {sum, scalarLike(c, sum, double(c.numInputs()))}));
}

Value isPositive(NodeContext &c, Value x) {
  return c.compare(ComparePredicate::gt, x, zeroLike(c, x));
}

void leakyReluRule(NodeContext &c) {
  c.setOutput(0, leakyReluOf(c, c.input(0), c.floatAttr("alpha", 0.01f)));
}

/// select(x > 0, x, slope * x), as PyTorch's prelu: at 0 the input's
/// gradient is the slope and the slope's is x (0). The product sees 0
/// where x > 0, so the slope's gradient there is 0 even for x = inf.
void preluRule(NodeContext &c) {
  Value x = c.input(0);
  Value positive = isPositive(c, x);
  Value safe = c.select(positive, zeroLike(c, x), x);
  Value y = c.select(positive, x, c.build<MulOp>({safe, c.input(1)}));
  // The slope broadcasts to x ("unidirectional"): the result keeps x's shape.
  if (y && y.getType() != x.getType()) {
    c.error() << "slope shape does not broadcast to the input's shape";
    return;
  }
  c.setOutput(0, y);
}

void eluRule(NodeContext &c) {
  c.setOutput(0, eluOf(c, c.input(0), c.floatAttr("alpha", 1.0f)));
}

/// gamma * (alpha * (exp(x) - 1) where x <= 0, else x), as Elu.
void seluRule(NodeContext &c) {
  Value x = c.input(0);
  double alpha = c.floatAttr("alpha", 1.67326319217681884765625f);
  double gamma = c.floatAttr("gamma", 1.05070102214813232421875f);
  Value y = exponentialBelowZero(c, x, [&](Value xn) {
    Value expm1 = c.build<SubOp>({c.unary<ExpOp>(xn), scalarLike(c, x, 1.0)});
    return c.build<MulOp>({expm1, scalarLike(c, x, alpha)});
  });
  c.setOutput(0, c.build<MulOp>({y, scalarLike(c, x, gamma)}));
}

/// ONNX's max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) is, for any
/// alpha, alpha * (exp(x / alpha) - 1) where x <= 0 and x elsewhere; in that
/// form the gradient at 0 is PyTorch's (celu is its elu with input scale
/// 1 / alpha) and large x cannot overflow the unused exponential.
void celuRule(NodeContext &c) {
  Value x = c.input(0);
  double alpha = c.floatAttr("alpha", 1.0f);
  c.setOutput(0, exponentialBelowZero(c, x, [&](Value xn) {
                Value scaled = c.build<DivOp>({xn, scalarLike(c, x, alpha)});
                Value expm1 = c.build<SubOp>(
                    {c.unary<ExpOp>(scaled), scalarLike(c, x, 1.0)});
                return c.build<MulOp>({expm1, scalarLike(c, x, alpha)});
              }));
}

void geluRule(NodeContext &c) {
  Value x = c.input(0);
  Value half = c.build<MulOp>({x, scalarLike(c, x, 0.5)});
  std::string approximate = c.stringAttr("approximate", "none");
  Value inner;
  if (approximate == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    Value cube = c.build<MulOp>({c.build<MulOp>({x, x}), x});
    Value poly = c.build<AddOp>(
        {x, c.build<MulOp>({cube, scalarLike(c, x, 0.044715)})});
    inner = c.unary<TanhOp>(
        c.build<MulOp>({poly, scalarLike(c, x, 0.7978845608028654)}));
  } else if (approximate == "none") {
    // 0.5 x (1 + erf(x / sqrt(2)))
    inner = c.unary<ErfOp>(
        c.build<MulOp>({x, scalarLike(c, x, 0.7071067811865476)}));
  } else {
    c.error() << "approximate '" << approximate << "' is not supported";
    return;
  }
  c.setOutput(0, c.build<MulOp>(
                     {half, c.build<AddOp>({scalarLike(c, x, 1.0), inner})}));
}

/// x * clamp(x / 6 + 1 / 2, 0, 1), written as
/// select(x < -3, 0, select(x <= 3, x * (x / 6 + 1 / 2), x)) so the gradient
/// is PyTorch's hardswish backward: 0 below -3, x / 3 + 1 / 2 on [-3, 3]
/// (both ends included), 1 above 3 and for NaN. The product sees 0 where x
/// is above 3 or NaN, so its unused gradient is 0 rather than 0 * NaN.
void hardSwishRule(NodeContext &c) {
  Value x = c.input(0);
  Value inside = c.compare(ComparePredicate::le, x, scalarLike(c, x, 3.0));
  Value xs = c.select(inside, x, zeroLike(c, x));
  Value t = c.build<AddOp>({c.build<MulOp>({xs, scalarLike(c, x, 1.0 / 6)}),
                            scalarLike(c, x, 0.5)});
  Value upper = c.select(inside, c.build<MulOp>({xs, t}), x);
  c.setOutput(0, c.select(c.compare(ComparePredicate::lt, x,
                                    scalarLike(c, x, -3.0)),
                          zeroLike(c, x), upper));
}

/// select(x > alpha, x, 0): the gradient is 0 at alpha, as PyTorch's
/// threshold backward. NaN gives 0 as ONNX's definition says (PyTorch's
/// Threshold would pass it).
void thresholdedReluRule(NodeContext &c) {
  Value x = c.input(0);
  Value above = c.compare(ComparePredicate::gt, x,
                          scalarLike(c, x, c.floatAttr("alpha", 1.0f)));
  c.setOutput(0, c.select(above, x, zeroLike(c, x)));
}

/// x + bias below -lambd, x - bias above lambd, else 0: the gradient is 0 on
/// [-lambd, lambd] inclusive, as PyTorch's hardshrink and softshrink.
void shrinkRule(NodeContext &c) {
  Value x = c.input(0);
  double bias = c.floatAttr("bias", 0.0f), lambd = c.floatAttr("lambd", 0.5f);
  Value below = c.compare(ComparePredicate::lt, x, scalarLike(c, x, -lambd));
  Value above = c.compare(ComparePredicate::gt, x, scalarLike(c, x, lambd));
  Value y = c.select(above, c.build<SubOp>({x, scalarLike(c, x, bias)}),
                     zeroLike(c, x));
  c.setOutput(0, c.select(below, c.build<AddOp>({x, scalarLike(c, x, bias)}),
                          y));
}

void isInfRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  double inf = std::numeric_limits<double>::infinity();
  bool detectPos = c.intAttr("detect_positive", 1) != 0;
  bool detectNeg = c.intAttr("detect_negative", 1) != 0;
  Value pos, neg;
  if (detectPos)
    pos = c.compare(ComparePredicate::eq, x, scalarLike(c, x, inf));
  if (detectNeg)
    neg = c.compare(ComparePredicate::eq, x, scalarLike(c, x, -inf));
  Value result;
  if (detectPos && detectNeg) {
    result = c.build<OrOp>({pos, neg});
  } else if (detectPos || detectNeg) {
    result = detectPos ? pos : neg;
  } else {
    // Neither: every element is false.
    Value no = c.scalar(IntegerType::get(c.context(), 1), 0.0);
    result = c.broadcastTo(no, typeOf(x).getShape());
  }
  c.setOutput(0, result);
}

void castRule(NodeContext &c) {
  int64_t to = c.intAttr("to", 0);
  std::optional<DType> dtype = dtypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype) {
    c.error() << "cast to " << onnxTypeName(static_cast<int32_t>(to))
              << " is not supported";
    return;
  }
  c.setOutput(0, c.cast(c.input(0), elementTypeOf(c.context(), *dtype)));
}

/// Dropout. As exported, the node drops only when its training_mode input
/// (opset 12 on) is a constant true, with the mask seeded by its `seed`
/// attribute and stream 0. In training mode every Dropout with a ratio
/// above 0 drops, whatever its training_mode, each with its own stream of
/// the function's random seed. In inference mode every Dropout is the
/// identity. A Dropout that does not drop returns x and an all-true mask.
void dropoutRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  ImportMode mode = c.mode();
  // Before opset 12 the ratio is an attribute and the node never trains
  // as exported (ONNX leaves dropping to the runtime's training mode).
  double ratio = c.floatAttr("ratio", 0.5f);
  bool training = mode == ImportMode::Training;
  if (c.version() >= 12 && mode != ImportMode::Inference) {
    if (c.hasInput(1)) {
      std::optional<Tensor> r = c.requireConstant(1, "ratio");
      if (!r)
        return;
      if (r->numElements() != 1) {
        c.error() << "ratio " << r->describe() << " must be a scalar";
        return;
      }
      ratio = r->getDouble(0);
    }
    if (c.hasInput(2) && mode == ImportMode::AsExported) {
      std::optional<Tensor> t = c.requireConstant(2, "training_mode");
      if (!t)
        return;
      if (t->numElements() != 1) {
        c.error() << "training_mode " << t->describe() << " must be a scalar";
        return;
      }
      training = t->getInt(0) != 0;
    }
  }
  if (c.failed())
    return;
  RankedTensorType type = typeOf(x);
  if (mode == ImportMode::Inference || !training || ratio == 0.0) {
    c.setOutput(0, x);
    if (c.wantsOutput(1)) {
      Value yes = c.scalar(IntegerType::get(c.context(), 1), 1.0);
      c.setOutput(1, c.broadcastTo(yes, type.getShape()));
    }
    return;
  }
  if (!(ratio > 0.0 && ratio < 1.0)) {
    c.error() << "ratio " << ratio << " is outside [0, 1)";
    return;
  }
  Value seed;
  int64_t stream = 0;
  if (mode == ImportMode::Training) {
    seed = c.rngSeed();
    stream = c.nextDropoutStream();
  } else {
    Tensor value(DType::I64, {});
    value.data<int64_t>()[0] = c.intAttr("seed", 0);
    seed = c.constant(value);
  }
  if (!seed || c.failed())
    return;
  auto maskType = type.clone(IntegerType::get(c.context(), 1));
  auto op =
      DropoutOp::create(c.builder(), c.loc(), type, maskType, x, seed,
                        /*offset=*/Value(), c.builder().getF64FloatAttr(ratio),
                        c.builder().getI64IntegerAttr(stream));
  c.setOutput(0, op.getOutput());
  c.setOutput(1, op.getMask());
}

} // namespace

void mlir::dlc::addElementwiseRules(OpRuleTable &t) {
  // Arithmetic (version 7 introduced multidirectional broadcasting).
  t["Add"] = {binaryRule<AddOp>, 7};
  t["Sub"] = {binaryRule<SubOp>, 7};
  t["Mul"] = {binaryRule<MulOp>, 7};
  t["Div"] = {binaryRule<DivOp>, 7};
  t["Pow"] = {powRule, 7};
  t["Mod"] = {modRule, 10};
  t["Sum"] = {[](NodeContext &c) { c.setOutput(0, foldInputs<AddOp>(c)); }, 8};
  t["Max"] = {[](NodeContext &c) { c.setOutput(0, foldInputs<MaxOp>(c)); }, 8};
  t["Min"] = {[](NodeContext &c) { c.setOutput(0, foldInputs<MinOp>(c)); }, 8};
  t["Mean"] = {meanRule, 8};

  // Unary math (version 6 dropped the legacy consumed_inputs attribute).
  t["Neg"] = {unaryRule<NegOp>, 6};
  t["Abs"] = {unaryRule<AbsOp>, 6};
  t["Sign"] = {unaryRule<SignOp>, 9};
  t["Exp"] = {unaryRule<ExpOp>, 6};
  t["Log"] = {unaryRule<LogOp>, 6};
  t["Sqrt"] = {unaryRule<SqrtOp>, 6};
  t["Reciprocal"] = {unaryRule<ReciprocalOp>, 6};
  t["Ceil"] = {unaryRule<CeilOp>, 6};
  t["Floor"] = {unaryRule<FloorOp>, 6};
  t["Round"] = {unaryRule<RoundOp>, 11};
  t["Erf"] = {unaryRule<ErfOp>, 9};
  t["Sin"] = {unaryRule<SinOp>, 7};
  t["Cos"] = {unaryRule<CosOp>, 7};
  t["Tanh"] = {unaryRule<TanhOp>, 6};
  t["Tan"] = {unaryRule<TanOp>, 7};
  t["Asin"] = {unaryRule<AsinOp>, 7};
  t["Acos"] = {unaryRule<AcosOp>, 7};
  t["Atan"] = {unaryRule<AtanOp>, 7};
  t["Sinh"] = {unaryRule<SinhOp>, 9};
  t["Cosh"] = {unaryRule<CoshOp>, 9};
  t["Asinh"] = {unaryRule<AsinhOp>, 9};
  t["Acosh"] = {unaryRule<AcoshOp>, 9};
  t["Atanh"] = {unaryRule<AtanhOp>, 9};
  t["Sigmoid"] = {unaryRule<SigmoidOp>, 6};

  // Activations, as compositions.
  t["Relu"] = {[](NodeContext &c) { c.setOutput(0, reluOf(c, c.input(0))); },
               6};
  t["LeakyRelu"] = {leakyReluRule, 6};
  t["PRelu"] = {preluRule, 7};
  t["Elu"] = {eluRule, 6};
  t["Selu"] = {seluRule, 6};
  t["Celu"] = {celuRule, 12};
  t["Gelu"] = {geluRule, 20};
  t["Clip"] = {clipRule, 6};
  t["HardSigmoid"] = {[](NodeContext &c) {
                        c.setOutput(0, hardSigmoidOf(c, c.input(0),
                                                     c.floatAttr("alpha", 0.2f),
                                                     c.floatAttr("beta", 0.5f)));
                      }, 6};
  t["HardSwish"] = {hardSwishRule, 14};
  t["Softplus"] = {[](NodeContext &c) {
                     c.setOutput(0, softplus(c, c.input(0)));
                   }, 1};
  t["Softsign"] = {[](NodeContext &c) {
                     Value x = c.input(0);
                     Value d = c.build<AddOp>(
                         {scalarLike(c, x, 1.0), c.unary<AbsOp>(x)});
                     c.setOutput(0, c.build<DivOp>({x, d}));
                   }, 1};
  t["Mish"] = {[](NodeContext &c) {
                 Value x = c.input(0);
                 c.setOutput(0, c.build<MulOp>(
                                    {x, c.unary<TanhOp>(softplus(c, x))}));
               }, 18};
  t["ThresholdedRelu"] = {thresholdedReluRule, 10};
  t["Shrink"] = {shrinkRule, 9};

  // Predicates, comparisons and logic.
  t["IsNaN"] = {[](NodeContext &c) {
                  Value x = c.input(0);
                  c.setOutput(0, c.compare(ComparePredicate::ne, x, x));
                }, 9};
  t["IsInf"] = {isInfRule, 10};
  t["Equal"] = {compareRule<ComparePredicate::eq>, 7};
  t["Less"] = {compareRule<ComparePredicate::lt>, 7};
  t["LessOrEqual"] = {compareRule<ComparePredicate::le>, 12};
  t["Greater"] = {compareRule<ComparePredicate::gt>, 7};
  t["GreaterOrEqual"] = {compareRule<ComparePredicate::ge>, 12};
  t["Not"] = {unaryRule<NotOp>, 1};
  t["And"] = {binaryRule<AndOp>, 7};
  t["Or"] = {binaryRule<OrOp>, 7};
  t["Xor"] = {binaryRule<XorOp>, 7};
  t["Where"] = {[](NodeContext &c) {
                  c.setOutput(0, c.select(c.input(0), c.input(1), c.input(2)));
                }, 9};

  // Identity-like and casts.
  t["Identity"] = {[](NodeContext &c) { c.setOutput(0, c.input(0)); }, 1};
  t["Cast"] = {castRule, 6};
  t["CastLike"] = {[](NodeContext &c) {
                     c.setOutput(0, c.cast(c.input(0), c.inputElementType(1)));
                   }, 15};
  t["Dropout"] = {dropoutRule, 7};
}

//===----------------------------------------------------------------------===//
// Activations shared with the recurrent ops (RuleUtils.h)
//===----------------------------------------------------------------------===//

Value mlir::dlc::reluOf(NodeContext &c, Value x) {
  Value zero = zeroLike(c, x);
  return c.select(c.compare(ComparePredicate::le, x, zero), zero, x);
}

Value mlir::dlc::leakyReluOf(NodeContext &c, Value x, double alpha) {
  return c.select(isPositive(c, x), x,
                  c.build<MulOp>({x, scalarLike(c, x, alpha)}));
}

Value mlir::dlc::eluOf(NodeContext &c, Value x, double alpha) {
  return exponentialBelowZero(c, x, [&](Value xn) {
    Value expm1 = c.build<SubOp>({c.unary<ExpOp>(xn), scalarLike(c, x, 1.0)});
    return c.build<MulOp>({expm1, scalarLike(c, x, alpha)});
  });
}

/// select(t <= 0, 0, select(t >= 1, 1, select(t < 1, t, NaN))) for
/// t = alpha * x + beta: t's gradient passes only strictly inside (0, 1),
/// and NaN reaches the NaN constant, which takes no gradient.
Value mlir::dlc::hardSigmoidOf(NodeContext &c, Value x, double alpha,
                               double beta) {
  Value t = c.build<AddOp>({c.build<MulOp>({x, scalarLike(c, x, alpha)}),
                            scalarLike(c, x, beta)});
  Value zero = zeroLike(c, x), one = scalarLike(c, x, 1.0);
  Value below = c.select(c.compare(ComparePredicate::lt, t, one), t,
                         nanLike(c, x));
  Value upper = c.select(c.compare(ComparePredicate::ge, t, one), one, below);
  return c.select(c.compare(ComparePredicate::le, t, zero), zero, upper);
}
