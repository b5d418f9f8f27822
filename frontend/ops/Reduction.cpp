//===- Reduction.cpp - ONNX reductions, arg reductions and CumSum ---------===//
//
// dlc has four reductions (sum, prod, max, min); the other ONNX Reduce* ops
// are compositions of them with elementwise ops, as their ONNX definitions
// read (ReduceL2 = sqrt(sum(x * x)), ReduceLogSumExp = log(sum(exp(x - m)))
// + m with m the maximum, for stability). The axes moved from an attribute
// to an input (ReduceSum in opset 13, the others in 18; the importer only
// knows schemas up to 17), so every rule accepts both forms.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/ops/RuleUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// A float-only unary op on any numeric tensor: integers go through f64
/// and back (truncating, like NumPy's astype in ONNX's reference).
template <typename OpT> Value floatUnary(NodeContext &c, Value x) {
  if (!x)
    return {};
  Type elementType = typeOf(x).getElementType();
  if (isa<FloatType>(elementType))
    return c.unary<OpT>(x);
  Value y = c.unary<OpT>(c.cast(x, Float64Type::get(c.context())));
  return c.cast(y, elementType);
}

/// A reduction over normalized `axes` (non-empty unless the input is a
/// scalar), keeping the reduced dimensions or not.
using Reducer = Value (*)(NodeContext &, Value, ArrayRef<int64_t>, bool);

template <typename ReduceOpT>
Value reduceOp(NodeContext &c, Value x, ArrayRef<int64_t> axes,
               bool keepDims) {
  return c.reduce<ReduceOpT>(x, axes, keepDims);
}

/// ReduceMax and ReduceMin also take bool (opset 20): reduce as i8.
template <typename ReduceOpT>
Value reduceExtremum(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                     bool keepDims) {
  if (!x)
    return {};
  Type elementType = typeOf(x).getElementType();
  if (!elementType.isInteger(1))
    return c.reduce<ReduceOpT>(x, axes, keepDims);
  Value wide = c.cast(x, IntegerType::get(c.context(), 8));
  return c.cast(c.reduce<ReduceOpT>(wide, axes, keepDims), elementType);
}

Value reduceMean(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                 bool keepDims) {
  return c.mean(x, axes, keepDims);
}

Value reduceL1(NodeContext &c, Value x, ArrayRef<int64_t> axes,
               bool keepDims) {
  return c.reduce<ReduceSumOp>(c.unary<AbsOp>(x), axes, keepDims);
}

Value reduceSumSquare(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                      bool keepDims) {
  return c.reduce<ReduceSumOp>(c.build<MulOp>({x, x}), axes, keepDims);
}

Value reduceL2(NodeContext &c, Value x, ArrayRef<int64_t> axes,
               bool keepDims) {
  return floatUnary<SqrtOp>(c, reduceSumSquare(c, x, axes, keepDims));
}

Value reduceLogSum(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                   bool keepDims) {
  return floatUnary<LogOp>(c, c.reduce<ReduceSumOp>(x, axes, keepDims));
}

Value reduceLogSumExp(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                      bool keepDims) {
  if (!x)
    return {};
  Type elementType = typeOf(x).getElementType();
  if (!isa<FloatType>(elementType))
    return c.cast(reduceLogSumExp(c, c.cast(x, Float64Type::get(c.context())),
                                  axes, keepDims),
                  elementType);
  // log(sum(exp(x - m))) + m with m the maximum; an infinite maximum (all
  // -inf, or an inf present) shifts by 0 instead so no inf - inf = NaN
  // appears where the unshifted formula is well defined.
  Value m = c.reduce<ReduceMaxOp>(x, axes, /*keepDims=*/true);
  double inf = std::numeric_limits<double>::infinity();
  Value finite = c.compare(ComparePredicate::lt, c.unary<AbsOp>(m),
                           scalarLike(c, m, inf));
  m = c.select(finite, m, scalarLike(c, m, 0.0));
  Value e = c.unary<ExpOp>(c.build<SubOp>({x, m}));
  Value sum = c.reduce<ReduceSumOp>(e, axes, keepDims);
  Value shift = m;
  if (!keepDims && sum)
    shift = c.reshape(m, typeOf(sum).getShape());
  return c.build<AddOp>({c.unary<LogOp>(sum), shift});
}

/// Reduce*: axes from the attribute (older opsets) or input 1, keepdims
/// (default 1) and noop_with_empty_axes.
template <Reducer R> void reduceRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> axes = c.intsAttrOrInput("axes", 1);
  if (!x || !axes)
    return;
  int64_t rank = typeOf(x).getRank();
  std::optional<SmallVector<int64_t>> normalized =
      c.normalizeAxes(*axes, rank);
  if (!normalized)
    return;
  if (normalized->empty()) {
    if (c.intAttr("noop_with_empty_axes", 0) != 0) {
      c.setOutput(0, x);
      return;
    }
    for (int64_t d = 0; d < rank; ++d)
      normalized->push_back(d);
  }
  c.setOutput(0, R(c, x, *normalized, c.intAttr("keepdims", 1) != 0));
}

template <typename ArgOpT> void argReduceRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", 0), typeOf(x).getRank());
  if (!axis)
    return;
  SmallVector<NamedAttribute> attrs = {c.namedI64("axis", *axis)};
  if (c.intAttr("keepdims", 1) != 0)
    attrs.push_back(c.named("keep_dims", c.builder().getUnitAttr()));
  if (c.intAttr("select_last_index", 0) != 0)
    attrs.push_back(c.named("select_last_index", c.builder().getUnitAttr()));
  c.setOutput(0, c.build<ArgOpT>({x}, attrs));
}

void cumSumRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> axisValue =
      c.requireConstantInts(1, "axis");
  if (!x || !axisValue)
    return;
  if (axisValue->size() != 1) {
    c.error() << "axis must be a scalar, got " << axisValue->size()
              << " values";
    return;
  }
  std::optional<int64_t> axis =
      c.normalizeAxis(axisValue->front(), typeOf(x).getRank());
  if (!axis)
    return;
  SmallVector<NamedAttribute> attrs = {c.namedI64("axis", *axis)};
  if (c.intAttr("exclusive", 0) != 0)
    attrs.push_back(c.named("exclusive", c.builder().getUnitAttr()));
  if (c.intAttr("reverse", 0) != 0)
    attrs.push_back(c.named("reverse", c.builder().getUnitAttr()));
  c.setOutput(0, c.buildTyped<CumSumOp>(x.getType(), {x}, attrs));
}

} // namespace

void mlir::dlc::addReductionRules(OpRuleTable &t) {
  // Reduce* (version 1 already has axes and keepdims; later versions add
  // types, ReduceSum-13's axes input and noop_with_empty_axes).
  t["ReduceSum"] = {reduceRule<reduceOp<ReduceSumOp>>, 1};
  t["ReduceProd"] = {reduceRule<reduceOp<ReduceProdOp>>, 1};
  t["ReduceMax"] = {reduceRule<reduceExtremum<ReduceMaxOp>>, 1};
  t["ReduceMin"] = {reduceRule<reduceExtremum<ReduceMinOp>>, 1};
  t["ReduceMean"] = {reduceRule<reduceMean>, 1};
  t["ReduceL1"] = {reduceRule<reduceL1>, 1};
  t["ReduceL2"] = {reduceRule<reduceL2>, 1};
  t["ReduceSumSquare"] = {reduceRule<reduceSumSquare>, 1};
  t["ReduceLogSum"] = {reduceRule<reduceLogSum>, 1};
  t["ReduceLogSumExp"] = {reduceRule<reduceLogSumExp>, 1};

  // Index of the extremum (select_last_index arrived in version 12 and
  // defaults to the first index, which is version 1's behavior).
  t["ArgMax"] = {argReduceRule<ArgMaxOp>, 1};
  t["ArgMin"] = {argReduceRule<ArgMinOp>, 1};

  // Scans.
  t["CumSum"] = {cumSumRule, 11};
}
