//===- Sorting.cpp - ONNX TopK --------------------------------------------===//
//
// TopK maps onto dlc.top_k, whose order is ONNX's: NaN above every number,
// equal values by position. K moved from an attribute (TopK-1) to an input
// (TopK-10), which must be a constant since it decides the result shape;
// TopK-11 added `largest` and `sorted`. dlc.top_k always returns the sorted
// order, which is one of the orders `sorted = 0` allows.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// K: the `k` attribute before TopK-10, the one-element constant input 1
/// from then on. Nullopt after an error.
std::optional<int64_t> readK(NodeContext &c) {
  if (c.version() < 10) {
    if (!c.hasAttr("k")) {
      c.error() << "attribute 'k' is required";
      return std::nullopt;
    }
    return c.intAttr("k", 0);
  }
  std::optional<std::vector<int64_t>> k = c.requireConstantInts(1, "K");
  if (!k)
    return std::nullopt;
  if (k->size() != 1) {
    c.error() << "K must hold one value, got " << k->size();
    return std::nullopt;
  }
  return k->front();
}

void topKRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<int64_t> k = readK(c);
  if (!x || !k)
    return;
  RankedTensorType type = typeOf(x);
  if (type.getElementType().isInteger(1)) {
    c.error() << "input " << type << " must be numeric";
    return;
  }
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", -1), type.getRank());
  if (!axis)
    return;
  int64_t dim = type.getDimSize(*axis);
  if (*k < 0 || *k > dim) {
    c.error() << "k " << *k << " is out of range [0, " << dim << "] for axis "
              << *axis << " of " << type;
    return;
  }
  bool largest = c.version() < 11 || c.intAttr("largest", 1) != 0;
  bool sorted = c.version() < 11 || c.intAttr("sorted", 1) != 0;

  SmallVector<NamedAttribute> attrs = {c.namedI64("k", *k),
                                       c.namedI64("axis", *axis)};
  if (largest)
    attrs.push_back(c.named("largest", c.builder().getUnitAttr()));
  if (sorted)
    attrs.push_back(c.named("sorted", c.builder().getUnitAttr()));
  // Both result types follow from the checks above (dlc.top_k's inference
  // says the same); two results are built directly, not through
  // NodeContext::build, which builds single-result ops.
  SmallVector<int64_t> shape(type.getShape());
  shape[*axis] = *k;
  Type valuesType = RankedTensorType::get(shape, type.getElementType());
  Type indicesType =
      RankedTensorType::get(shape, IntegerType::get(c.context(), 64));
  SmallVector<Value> results;
  c.builder().createOrFold<TopKOp>(results, c.loc(),
                                   TypeRange{valuesType, indicesType},
                                   ValueRange{x}, attrs);
  c.setOutput(0, results[0]);
  c.setOutput(1, results[1]);
}

} // namespace

void mlir::dlc::addSortingRules(OpRuleTable &t) {
  // TopK-1 has K as an attribute, TopK-10 as an input; TopK-11 adds
  // largest and sorted.
  t["TopK"] = {topKRule, 1};
}
