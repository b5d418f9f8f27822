//===- GradientUtils.cpp - Building blocks of gradient rules --------------===//

#include "ir/GradientUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::dlc;

RankedTensorType grad::typeOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

Value grad::splat(OpBuilder &b, Location loc, RankedTensorType type,
                  double value) {
  Type element = type.getElementType();
  Attribute attr;
  if (auto floatType = dyn_cast<FloatType>(element))
    attr = b.getFloatAttr(floatType, value);
  else
    attr = b.getIntegerAttr(element, static_cast<int64_t>(value));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, attr));
}

Value grad::scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  return splat(b, loc, RankedTensorType::get({}, elementType), value);
}

Value grad::scalarLike(OpBuilder &b, Location loc, Value like, double value) {
  return scalar(b, loc, typeOf(like).getElementType(), value);
}

Value grad::sumAll(OpBuilder &b, Location loc, Value v) {
  int64_t rank = typeOf(v).getRank();
  if (rank == 0)
    return v;
  return ReduceSumOp::create(b, loc, v,
                             llvm::to_vector(llvm::seq<int64_t>(0, rank)),
                             /*keep_dims=*/false);
}

Value grad::sumToShape(OpBuilder &b, Location loc, Value grad,
                       RankedTensorType target) {
  RankedTensorType type = typeOf(grad);
  if (type.getShape() == target.getShape())
    return grad;
  int64_t lead = type.getRank() - target.getRank();
  assert(lead >= 0 && "a broadcast never lowers the rank");
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d < lead ||
        (target.getDimSize(d - lead) == 1 && type.getDimSize(d) != 1))
      axes.push_back(d);
  Value summed = grad;
  if (!axes.empty())
    summed = ReduceSumOp::create(b, loc, grad, axes, /*keep_dims=*/false);
  return reshape(b, loc, summed, target.getShape());
}

namespace {

/// `v` given `shape` by a `ShapeOp` (broadcast_to or reshape); `v` itself
/// when already so.
template <typename ShapeOp>
Value toShape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  RankedTensorType type = grad::typeOf(v);
  if (type.getShape() == shape)
    return v;
  return ShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v);
}

} // namespace

Value grad::broadcastTo(OpBuilder &b, Location loc, Value v,
                        ArrayRef<int64_t> shape) {
  return toShape<BroadcastToOp>(b, loc, v, shape);
}

Value grad::reshape(OpBuilder &b, Location loc, Value v,
                    ArrayRef<int64_t> shape) {
  return toShape<ReshapeOp>(b, loc, v, shape);
}

Value grad::differsFrom(OpBuilder &b, Location loc, Value v, double value) {
  return CompareOp::create(b, loc, ComparePredicate::ne, v,
                           splat(b, loc, typeOf(v), value));
}

Value grad::boundedIndex(OpBuilder &b, Location loc, Value indices,
                         int64_t size) {
  Type type = typeOf(indices).getElementType();
  Value zero = scalar(b, loc, type, 0);
  Value negative = CompareOp::create(b, loc, ComparePredicate::lt, indices, zero);
  Value wrapped = SelectOp::create(
      b, loc, negative,
      add(b, loc, indices, scalar(b, loc, type, static_cast<double>(size))),
      indices);
  return MinOp::create(b, loc, MaxOp::create(b, loc, wrapped, zero),
                       scalar(b, loc, type, static_cast<double>(size - 1)));
}

std::pair<Value, Value> grad::indexInRankSlice(OpBuilder &b, Location loc,
                                               Value indices, int64_t slice,
                                               int64_t ranks) {
  Type type = typeOf(indices).getElementType();
  SmallVector<APInt> firsts;
  for (int64_t r = 0; r < ranks; ++r)
    firsts.push_back(APInt(type.getIntOrFloatBitWidth(), r * slice));
  Value everyFirst = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({ranks}, type), firsts));
  Value first = reshape(
      b, loc, RankShardOp::create(b, loc, everyFirst, ranks, /*tensor=*/true),
      {});
  Value local = sub(b, loc, indices, first);
  Value atLeastFirst = CompareOp::create(b, loc, ComparePredicate::ge, local,
                                         scalar(b, loc, type, 0));
  Value beforeNext =
      CompareOp::create(b, loc, ComparePredicate::lt, local,
                        scalar(b, loc, type, static_cast<double>(slice)));
  Value mine = AndOp::create(b, loc, atLeastFirst, beforeNext);
  return {mine, SelectOp::create(b, loc, mine, local, scalar(b, loc, type, 0))};
}

Value grad::transposeLastTwo(OpBuilder &b, Location loc, Value v) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 2], perm[rank - 1]);
  return TransposeOp::create(b, loc, v, perm);
}

Value grad::castTo(OpBuilder &b, Location loc, Value v, Type elementType) {
  RankedTensorType type = typeOf(v);
  if (type.getElementType() == elementType)
    return v;
  return CastOp::create(b, loc, type.clone(elementType), v);
}

Value grad::add(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return AddOp::create(b, loc, lhs, rhs);
}
Value grad::sub(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return SubOp::create(b, loc, lhs, rhs);
}
Value grad::mul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return MulOp::create(b, loc, lhs, rhs);
}
Value grad::div(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return DivOp::create(b, loc, lhs, rhs);
}
Value grad::neg(OpBuilder &b, Location loc, Value v) {
  return NegOp::create(b, loc, v);
}

Value grad::selectOrZero(OpBuilder &b, Location loc, Value condition,
                         Value onTrue) {
  Value zero = scalarLike(b, loc, onTrue, 0.0);
  return SelectOp::create(b, loc, condition, onTrue, zero);
}

Value grad::scatterAddIntoZeros(OpBuilder &b, Location loc,
                                RankedTensorType type, Value indices,
                                Value updates, int64_t axis) {
  return ScatterElementsOp::create(b, loc, splat(b, loc, type, 0.0), indices,
                                   updates, axis, ScatterReduction::add);
}
