//===- ShapeUtils.h - Static shape arithmetic shared by dlc ---------------===//
//
// Broadcasting and window arithmetic used by the verifiers, the importer and
// the evaluator, so all three agree on every shape.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_SHAPEUTILS_H
#define DLC_IR_SHAPEUTILS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::dlc {

/// NumPy broadcast of two shapes, or nullopt if they are incompatible.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b);

/// True if `from` broadcasts to exactly `to`.
bool isBroadcastableTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to);

/// Output size of a sliding window over one dimension: the input dilated by
/// `inputDilation`, padded by `low`/`high`, a window of `window` elements
/// dilated by `dilation`, at steps of `stride`. Nullopt if the window does not
/// fit once.
std::optional<int64_t> windowOutputSize(int64_t input, int64_t window,
                                        int64_t stride, int64_t low,
                                        int64_t high, int64_t dilation,
                                        int64_t inputDilation);

} // namespace mlir::dlc

#endif // DLC_IR_SHAPEUTILS_H
