//===- Constants.cpp - ONNX constant-producing ops ------------------------===//
//
// Constant, ConstantOfShape, Range and EyeLike produce values known at
// import, so each becomes a dlc.constant; Range and EyeLike compute theirs
// here in 64 bits and cast it to the element type the node asks for.
// Range's start, limit and delta must be constants, like ConstantOfShape's
// shape, since they decide the result's shape. ConstantOfShape's fill is a
// broadcast scalar (dlc.broadcast_to), so a large result is not
// materialized as a constant. Results too large to hold (Range lengths from
// 2^24, shapes whose element count overflows int64) are errors at the node
// rather than allocations.
//
//===----------------------------------------------------------------------===//

#include "frontend/TensorProto.h"
#include "frontend/ops/RuleUtils.h"
#include "ir/eval/Evaluator.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;
using mlir::dlc::DType;
using mlir::dlc::Tensor;

namespace {

void constantRule(NodeContext &c) {
  if (c.hasAttr("sparse_value")) {
    c.error() << "sparse constants are not supported";
    return;
  }
  if (c.hasAttr("value_string") || c.hasAttr("value_strings")) {
    c.error() << "string constants are not supported";
    return;
  }
  if (c.hasAttr("value")) {
    std::optional<Tensor> t = c.tensorAttr("value");
    if (t)
      c.setOutput(0, c.constant(*t));
    return;
  }
  if (c.hasAttr("value_float")) {
    Tensor t(DType::F32, {});
    t.data<float>()[0] = c.floatAttr("value_float", 0.0f);
    c.setOutput(0, c.constant(t));
    return;
  }
  if (c.hasAttr("value_floats")) {
    std::vector<float> v = c.floatsAttr("value_floats");
    Tensor t(DType::F32, {static_cast<int64_t>(v.size())});
    llvm::copy(v, t.data<float>());
    c.setOutput(0, c.constant(t));
    return;
  }
  if (c.hasAttr("value_int")) {
    Tensor t(DType::I64, {});
    t.data<int64_t>()[0] = c.intAttr("value_int", 0);
    c.setOutput(0, c.constant(t));
    return;
  }
  if (c.hasAttr("value_ints")) {
    c.setOutput(0, c.i64Constant(c.intsAttr("value_ints")));
    return;
  }
  c.error() << "one of the value attributes is required";
}

void constantOfShapeRule(NodeContext &c) {
  std::optional<std::vector<int64_t>> shape = c.requireConstantInts(0, "shape");
  if (!shape)
    return;
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
    c.error() << "shape [" << ArrayRef<int64_t>(*shape)
              << "] has a negative dimension";
    return;
  }
  Tensor fill(DType::F32, {});
  if (c.hasAttr("value")) {
    std::optional<Tensor> t = c.tensorAttr("value");
    if (!t)
      return;
    if (t->numElements() != 1) {
      c.error() << "value " << t->describe() << " must have one element";
      return;
    }
    fill = std::move(*t);
  }
  // A broadcast scalar: large results stay a broadcast_to instead of a
  // materialized constant.
  Value scalar = c.reshape(c.constant(fill), {});
  if (!checkResultShape(c, *shape))
    return;
  c.setOutput(0, c.broadcastTo(scalar, *shape));
}

/// Number of elements of range(start, limit, delta) for integers, without
/// overflow: ceil((limit - start) / delta), at least 0.
uint64_t integerRangeCount(int64_t start, int64_t limit, int64_t delta) {
  if (delta > 0 && limit > start)
    return (static_cast<uint64_t>(limit) - static_cast<uint64_t>(start) - 1) /
               static_cast<uint64_t>(delta) +
           1;
  if (delta < 0 && start > limit)
    return (static_cast<uint64_t>(start) - static_cast<uint64_t>(limit) - 1) /
               (0 - static_cast<uint64_t>(delta)) +
           1;
  return 0;
}

void rangeRule(NodeContext &c) {
  std::optional<Tensor> start = c.requireConstant(0, "start");
  if (!start)
    return;
  std::optional<Tensor> limit = c.requireConstant(1, "limit");
  if (!limit)
    return;
  std::optional<Tensor> delta = c.requireConstant(2, "delta");
  if (!delta)
    return;
  if (start->numElements() != 1 || limit->numElements() != 1 ||
      delta->numElements() != 1) {
    c.error() << "start, limit and delta must be scalars";
    return;
  }
  Type elementType = c.inputElementType(0);
  bool floating = isFloat(start->dtype());
  Tensor result;
  if (floating) {
    double s = start->getDouble(0), l = limit->getDouble(0),
           d = delta->getDouble(0);
    if (d == 0) {
      c.error() << "delta is 0";
      return;
    }
    double count = std::ceil((l - s) / d);
    if (!(count < static_cast<double>(kMaxRangeElements))) {
      c.error() << "range(" << number(s) << ", " << number(l) << ", "
                << number(d) << ") has too many elements";
      return;
    }
    int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
    result = Tensor(DType::F64, {n});
    for (int64_t i = 0; i < n; ++i)
      result.data<double>()[i] = s + static_cast<double>(i) * d;
  } else {
    int64_t s = start->getInt(0), l = limit->getInt(0), d = delta->getInt(0);
    if (d == 0) {
      c.error() << "delta is 0";
      return;
    }
    uint64_t count = integerRangeCount(s, l, d);
    if (count >= static_cast<uint64_t>(kMaxRangeElements)) {
      c.error() << "range(" << s << ", " << l << ", " << d
                << ") has too many elements";
      return;
    }
    int64_t n = static_cast<int64_t>(count);
    result = Tensor(DType::I64, {n});
    for (int64_t i = 0; i < n; ++i)
      result.data<int64_t>()[i] = s + i * d;
  }
  c.setOutput(0, c.cast(c.constant(result), elementType));
}

/// EyeLike: a constant with ones on diagonal k, in `dtype` or the input's
/// element type.
void eyeLikeRule(NodeContext &c) {
  RankedTensorType type = c.inputType(0);
  if (!type)
    return;
  if (type.getRank() != 2) {
    c.error() << "input " << type << " must have rank 2";
    return;
  }
  Type elementType = type.getElementType();
  if (c.hasAttr("dtype")) {
    int32_t code = static_cast<int32_t>(c.intAttr("dtype", 0));
    std::optional<DType> dtype = dtypeFromOnnx(code);
    if (!dtype) {
      c.error() << "dtype " << onnxTypeName(code) << " is not supported";
      return;
    }
    elementType = elementTypeOf(c.context(), *dtype);
  }
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t k = c.intAttr("k", 0);
  Tensor eye(DType::F64, {rows, cols});
  // |k| below both sizes keeps i + k from overflowing.
  if (k > -rows && k < cols)
    for (int64_t i = 0; i < rows; ++i)
      if (i + k >= 0 && i + k < cols)
        eye.data<double>()[i * cols + i + k] = 1.0;
  c.setOutput(0, c.cast(c.constant(eye), elementType));
}

} // namespace

void mlir::dlc::addConstantRules(OpRuleTable &t) {
  t["Constant"] = {constantRule, 1};
  t["ConstantOfShape"] = {constantOfShapeRule, 9};
  t["Range"] = {rangeRule, 11};
  t["EyeLike"] = {eyeLikeRule, 9};
}
