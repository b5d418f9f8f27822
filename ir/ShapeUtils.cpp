//===- ShapeUtils.cpp - Static shape arithmetic shared by dlc -------------===//

#include "ir/ShapeUtils.h"

#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::dlc {

std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    std::optional<int64_t> next = llvm::checkedMul(count, d);
    if (!next || *next > kMaxTensorElements)
      return std::nullopt;
    count = *next;
  }
  return count;
}

bool hasSupportedSize(ShapedType type) {
  return type.hasStaticShape() &&
         checkedNumElements(type.getShape()).has_value();
}

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right; missing leading dims count as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = da == 1 ? db : da;
  }
  return result;
}

bool isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i])
      return false;
  return true;
}

std::optional<int64_t> windowOutputSize(int64_t input, int64_t window,
                                        int64_t stride, int64_t low,
                                        int64_t high, int64_t dilation) {
  if (input < 0 || window <= 0 || stride <= 0 || dilation <= 0 || low < 0 ||
      high < 0)
    return std::nullopt;
  // Every intermediate is bounded by kMaxTensorElements, far from overflow.
  auto bounded = [](std::optional<int64_t> v) {
    return v && *v <= kMaxTensorElements ? v : std::nullopt;
  };
  std::optional<int64_t> padded;
  if (std::optional<int64_t> withLow = llvm::checkedAdd(input, low))
    padded = bounded(llvm::checkedAdd(*withLow, high));
  std::optional<int64_t> effectiveWindow =
      bounded(llvm::checkedMulAdd(window - 1, dilation, int64_t(1)));
  if (!padded || !effectiveWindow || *padded < *effectiveWindow)
    return std::nullopt;
  return (*padded - *effectiveWindow) / stride + 1;
}

SmallVector<int64_t> channelsLastPermutation(int64_t rank) {
  SmallVector<int64_t> permutation = {0};
  for (int64_t d = 2; d < rank; ++d)
    permutation.push_back(d);
  if (rank > 1)
    permutation.push_back(1);
  return permutation;
}

SmallVector<int64_t> permuteShape(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> permuted;
  for (int64_t p : permutation)
    permuted.push_back(shape[p]);
  return permuted;
}

SmallVector<int64_t> invertPermutation(ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i)
    inverse[permutation[i]] = static_cast<int64_t>(i);
  return inverse;
}

SmallVector<int64_t> channelsFirstShape(ArrayRef<int64_t> channelsLast) {
  return permuteShape(
      channelsLast,
      invertPermutation(channelsLastPermutation(channelsLast.size())));
}

bool isTransposeAReshape(ArrayRef<int64_t> shape,
                         ArrayRef<int64_t> permutation) {
  int64_t last = -1;
  for (int64_t p : permutation) {
    if (shape[p] == 1)
      continue;
    if (p < last)
      return false;
    last = p;
  }
  return true;
}

} // namespace mlir::dlc
