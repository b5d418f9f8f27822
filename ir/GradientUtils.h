//===- GradientUtils.h - Building blocks of gradient rules ----------------===//
//
// What the vector-Jacobian products in ir/gradients/ have in common: undoing
// broadcasting, splat constants, and short builders for the ops rules use
// most. Every helper builds at the builder's insertion point with the given
// location.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_GRADIENTUTILS_H
#define DLC_IR_GRADIENTUTILS_H

#include "ir/Dialect.h"

#include "mlir/IR/Builders.h"

namespace mlir::dlc::grad {

/// The ranked tensor type of `v`.
RankedTensorType typeOf(Value v);

/// A constant of `type` with every element `value`.
Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value);
/// A scalar (rank 0) constant of element type `elementType`.
Value scalar(OpBuilder &b, Location loc, Type elementType, double value);
/// A scalar (rank 0) constant in the element type of `like`.
Value scalarLike(OpBuilder &b, Location loc, Value like, double value);

/// Sums `grad` (the gradient of a value broadcast from `target`) back to
/// `target`'s shape: over the leading dimensions `target` lacks and over
/// those where `target` has size 1. Returns `grad` itself when the shapes
/// already agree.
Value sumToShape(OpBuilder &b, Location loc, Value grad,
                 RankedTensorType target);

/// The sum of every element of `v`, a scalar; `v` itself when a scalar.
Value sumAll(OpBuilder &b, Location loc, Value v);

/// Broadcasts `v` to `shape` (NumPy rules); `v` itself when already so.
Value broadcastTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape);

/// `v` reshaped to `shape` (same element count); `v` itself when already so.
Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape);

/// `v` with its last two dimensions swapped (rank 2 or more).
Value transposeLastTwo(OpBuilder &b, Location loc, Value v);

/// `v` cast to `elementType`; `v` itself when already so.
Value castTo(OpBuilder &b, Location loc, Value v, Type elementType);

/// Elementwise arithmetic with broadcasting.
Value add(OpBuilder &b, Location loc, Value lhs, Value rhs);
Value sub(OpBuilder &b, Location loc, Value lhs, Value rhs);
Value mul(OpBuilder &b, Location loc, Value lhs, Value rhs);
Value div(OpBuilder &b, Location loc, Value lhs, Value rhs);
Value neg(OpBuilder &b, Location loc, Value v);
/// Whether each element of `v` differs from `value` (a boolean tensor):
/// the labels a loss counts, for an ignore index.
Value differsFrom(OpBuilder &b, Location loc, Value v, double value);
/// Integer `indices` into an axis of `size` as gathers and scatters read
/// them: a negative index counts from the end, and one still out of range
/// is clamped to it.
Value boundedIndex(OpBuilder &b, Location loc, Value indices, int64_t size);
/// Integer `indices` into an axis of `slice` x `ranks` entries that
/// tensor-parallel ranks hold in consecutive slices of `slice` (rank r
/// from entry r x `slice`): whether each index is in this rank's slice,
/// and where in it (0 where it is not). The rank's first entry comes from
/// dlc.rank_shard among the tensor ranks.
std::pair<Value, Value> indexInRankSlice(OpBuilder &b, Location loc,
                                         Value indices, int64_t slice,
                                         int64_t ranks);
/// `select(condition, onTrue, 0)` in the type of `onTrue`, broadcast.
Value selectOrZero(OpBuilder &b, Location loc, Value condition, Value onTrue);

/// Zeros of `type` with `updates` added at `indices` along `axis`
/// (scatter_elements, reduction add): where a gradient goes back to the
/// elements a gather or top_k read, summed over repeated reads.
Value scatterAddIntoZeros(OpBuilder &b, Location loc, RankedTensorType type,
                          Value indices, Value updates, int64_t axis);

} // namespace mlir::dlc::grad

#endif // DLC_IR_GRADIENTUTILS_H
