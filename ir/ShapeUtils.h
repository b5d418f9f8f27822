//===- ShapeUtils.h - Static shape arithmetic shared by dlc ---------------===//
//
// Size limits, broadcasting and window arithmetic used by the verifiers and
// the importer, so both agree on every shape; all of it is overflow-checked
// because shapes come from untrusted IR and models.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_SHAPEUTILS_H
#define DLC_IR_SHAPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::dlc {

/// The largest tensor dlc accepts, in elements (2^40: 4 TiB of float32).
/// Every shape computation stays far from int64 overflow below it.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// The element count of `shape`, or nullopt if a dimension is negative or
/// the count exceeds kMaxTensorElements.
std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape);

/// True if `type` has a static shape of at most kMaxTensorElements
/// elements (the dlc tensor type constraint).
bool hasSupportedSize(ShapedType type);

/// NumPy broadcast of two shapes, or nullopt if they are incompatible.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b);

/// True if `from` broadcasts to exactly `to`.
bool isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to);

/// Output size of a sliding window over one dimension: the input padded by
/// `low`/`high`, a window of `window` elements dilated by `dilation`, at
/// steps of `stride`. Nullopt if the window does not
/// fit once, a parameter is out of range (non-positive window, stride or
/// dilation, negative padding) or a size exceeds kMaxTensorElements.
std::optional<int64_t> windowOutputSize(int64_t input, int64_t window,
                                        int64_t stride, int64_t low,
                                        int64_t high, int64_t dilation);

/// The permutation from a channels-first tensor of `rank` ([N, C, s...]) to
/// its channels-last form ([N, s..., C]): dimension i of the channels-last
/// tensor is dimension result[i] of the channels-first one.
SmallVector<int64_t> channelsLastPermutation(int64_t rank);

/// `shape` with dimension i taken from shape[permutation[i]].
SmallVector<int64_t> permuteShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> permutation);

/// The inverse of `permutation`.
SmallVector<int64_t> invertPermutation(ArrayRef<int64_t> permutation);

/// [N, s..., C] -> [N, C, s...] (rank 2 or more).
SmallVector<int64_t> channelsFirstShape(ArrayRef<int64_t> channelsLast);

/// Whether transposing a tensor of `shape` by `permutation` leaves its
/// elements in the same row-major order, i.e. is a reshape: the dimensions
/// larger than 1 keep their relative order.
bool isTransposeAReshape(ArrayRef<int64_t> shape,
                         ArrayRef<int64_t> permutation);

} // namespace mlir::dlc

#endif // DLC_IR_SHAPEUTILS_H
