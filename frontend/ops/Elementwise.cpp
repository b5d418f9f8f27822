//===- Elementwise.cpp - ONNX elementwise, comparison and cast ops --------===//
//
// Math ops with a dlc counterpart map one to one; activations are written as
// the compositions of their ONNX definitions (Relu = max(x, 0), Elu =
// select(x < 0, alpha * (exp(x) - 1), x), ...), so the dialect stays small
// and autodiff needs rules only for the primitives.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/ops/RuleUtils.h"
#include "frontend/TensorProto.h"
#include "ir/eval/Evaluator.h"

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

/// clamp(alpha * x + beta, 0, 1).
Value hardSigmoid(NodeContext &c, Value x, double alpha, double beta) {
  Value y = c.build<AddOp>({c.build<MulOp>({x, scalarLike(c, x, alpha)}),
                            scalarLike(c, x, beta)});
  y = c.build<MinOp>({y, scalarLike(c, x, 1.0)});
  return c.build<MaxOp>({y, zeroLike(c, x)});
}

void clipRule(NodeContext &c) {
  Value x = c.input(0);
  Value lo, hi;
  if (c.version() < 11) {
    // Clip-6 takes its bounds as attributes.
    lo = scalarLike(c, x, c.floatAttr("min", -std::numeric_limits<float>::infinity()));
    hi = scalarLike(c, x, c.floatAttr("max", std::numeric_limits<float>::infinity()));
  } else {
    lo = c.hasInput(1) ? c.input(1) : Value();
    hi = c.hasInput(2) ? c.input(2) : Value();
  }
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

void leakyReluRule(NodeContext &c) {
  Value x = c.input(0);
  double alpha = c.floatAttr("alpha", 0.01f);
  c.setOutput(0, c.select(isNegative(c, x),
                          c.build<MulOp>({x, scalarLike(c, x, alpha)}), x));
}

void preluRule(NodeContext &c) {
  Value x = c.input(0);
  Value y = c.select(isNegative(c, x), c.build<MulOp>({x, c.input(1)}), x);
  // The slope broadcasts to x ("unidirectional"): the result keeps x's shape.
  if (y && y.getType() != x.getType()) {
    c.error() << "slope shape does not broadcast to the input's shape";
    return;
  }
  c.setOutput(0, y);
}

void eluRule(NodeContext &c) {
  Value x = c.input(0);
  double alpha = c.floatAttr("alpha", 1.0f);
  Value expm1 = c.build<SubOp>({c.unary<ExpOp>(x), scalarLike(c, x, 1.0)});
  Value neg = c.build<MulOp>({expm1, scalarLike(c, x, alpha)});
  c.setOutput(0, c.select(isNegative(c, x), neg, x));
}

void seluRule(NodeContext &c) {
  Value x = c.input(0);
  double alpha = c.floatAttr("alpha", 1.67326319217681884765625f);
  double gamma = c.floatAttr("gamma", 1.05070102214813232421875f);
  Value expm1 = c.build<SubOp>({c.unary<ExpOp>(x), scalarLike(c, x, 1.0)});
  Value neg = c.build<MulOp>({expm1, scalarLike(c, x, alpha)});
  Value notPositive = c.compare(ComparePredicate::le, x, zeroLike(c, x));
  c.setOutput(0, c.build<MulOp>({c.select(notPositive, neg, x),
                                 scalarLike(c, x, gamma)}));
}

void celuRule(NodeContext &c) {
  Value x = c.input(0);
  double alpha = c.floatAttr("alpha", 1.0f);
  Value scaled = c.build<DivOp>({x, scalarLike(c, x, alpha)});
  Value expm1 = c.build<SubOp>({c.unary<ExpOp>(scaled), scalarLike(c, x, 1.0)});
  Value neg = c.build<MinOp>(
      {zeroLike(c, x), c.build<MulOp>({expm1, scalarLike(c, x, alpha)})});
  c.setOutput(0, c.build<AddOp>({c.build<MaxOp>({x, zeroLike(c, x)}), neg}));
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

void thresholdedReluRule(NodeContext &c) {
  Value x = c.input(0);
  Value above = c.compare(ComparePredicate::gt, x,
                          scalarLike(c, x, c.floatAttr("alpha", 1.0f)));
  c.setOutput(0, c.select(above, x, zeroLike(c, x)));
}

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
  std::optional<::dlc::DType> dtype = dtypeFromOnnx(static_cast<int32_t>(to));
  if (!dtype) {
    c.error() << "cast to " << onnxTypeName(static_cast<int32_t>(to))
              << " is not supported";
    return;
  }
  c.setOutput(0, c.cast(c.input(0), elementTypeOf(c.context(), *dtype)));
}

void dropoutRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  double ratio = c.floatAttr("ratio", 0.5f);
  bool training = false;
  if (c.version() >= 12) {
    if (c.hasInput(1)) {
      std::optional<::dlc::Tensor> r = c.requireConstant(1, "ratio");
      if (!r)
        return;
      if (r->numElements() != 1) {
        c.error() << "ratio " << r->describe() << " must be a scalar";
        return;
      }
      ratio = r->getDouble(0);
    }
    if (c.hasInput(2)) {
      std::optional<::dlc::Tensor> t = c.requireConstant(2, "training_mode");
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
  if (!training || ratio == 0.0) {
    // Inference (or ratio 0): the identity with an all-true mask.
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
  auto maskType = type.clone(IntegerType::get(c.context(), 1));
  auto op = DropoutOp::create(
      c.builder(), c.loc(), type, maskType, x,
      c.builder().getF64FloatAttr(ratio),
      c.builder().getI64IntegerAttr(c.intAttr("seed", 0)));
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
  t["Relu"] = {[](NodeContext &c) {
                 Value x = c.input(0);
                 c.setOutput(0, c.build<MaxOp>({x, zeroLike(c, x)}));
               }, 6};
  t["LeakyRelu"] = {leakyReluRule, 6};
  t["PRelu"] = {preluRule, 7};
  t["Elu"] = {eluRule, 6};
  t["Selu"] = {seluRule, 6};
  t["Celu"] = {celuRule, 12};
  t["Gelu"] = {geluRule, 20};
  t["Clip"] = {clipRule, 6};
  t["HardSigmoid"] = {[](NodeContext &c) {
                        c.setOutput(0, hardSigmoid(c, c.input(0),
                                                   c.floatAttr("alpha", 0.2f),
                                                   c.floatAttr("beta", 0.5f)));
                      }, 6};
  t["HardSwish"] = {[](NodeContext &c) {
                      Value x = c.input(0);
                      c.setOutput(0, c.build<MulOp>(
                                         {x, hardSigmoid(c, x, 1.0 / 6, 0.5)}));
                    }, 14};
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
