//===- RuleUtils.h - Helpers shared by the op rule files --------*- C++ -*-===//
//
// The rules in frontend/ops/ are split into one file per kind of op; the
// few helpers that more than one of those files needs are defined here
// once rather than in each file's anonymous namespace. This header is
// private to frontend/ops/: the rest of the importer sees only the
// add*Rules functions of NodeContext.h.
//
// The window helpers read the attributes that Conv, ConvTranspose and the
// pools share (strides, dilations, pads, auto_pad) with ONNX's defaults,
// and report malformed values as errors at the node.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_FRONTEND_OPS_RULEUTILS_H
#define DLC_FRONTEND_OPS_RULEUTILS_H

#include "frontend/NodeContext.h"
#include "ir/ShapeUtils.h"

#include <optional>
#include <string>

namespace mlir::dlc {

//===----------------------------------------------------------------------===//
// Types, messages and result shapes
//===----------------------------------------------------------------------===//

/// Range results and OneHot depths this large are refused: they are far
/// beyond any position table or class count and would only exhaust memory.
constexpr int64_t kMaxRangeElements = int64_t(1) << 24;

/// The ranked tensor type of `v`; null for a null `v` (a failed build).
inline RankedTensorType typeOf(Value v) {
  return v ? cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

/// The element type of `v`, which must not be null.
inline Type elemType(Value v) { return typeOf(v).getElementType(); }

/// A rank-0 constant of x's element type holding `value`; null for a null x.
inline Value scalarLike(NodeContext &c, Value x, double value) {
  return x ? c.scalar(elemType(x), value) : Value();
}

/// ceil(a / b) for a >= 0 and b > 0.
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A number for messages in its shortest form ("2", "0.5", "1e-10"), where
/// diagnostics would print 2.000000e+00.
std::string number(double value);

/// Errors unless a result shape has no negative dimension and at most
/// kMaxTensorElements elements: shapes come from the model's values
/// (Expand's shape, Tile's repeats, pads), and a larger count would wrap in
/// later size computations or exhaust memory when the program runs.
bool checkResultShape(NodeContext &c, ArrayRef<int64_t> shape);

//===----------------------------------------------------------------------===//
// Activations shared by their ONNX ops and the recurrent ops' activation
// lists (defined in Elementwise.cpp, which says how they are composed so
// that the generic gradient rules give PyTorch's derivative at the kinks)
//===----------------------------------------------------------------------===//

/// select(x <= 0, 0, x): relu'(0) = 0 and NaN passes, as torch.relu.
Value reluOf(NodeContext &c, Value x);
/// select(x > 0, x, alpha * x): the slope owns 0, as torch's leaky_relu.
Value leakyReluOf(NodeContext &c, Value x, double alpha);
/// alpha * (exp(x) - 1) where x <= 0, else x, as torch's elu (the
/// exponential owns 0); exp never sees the unselected large x.
Value eluOf(NodeContext &c, Value x, double alpha);
/// clamp(alpha * x + beta, 0, 1) with torch's hardsigmoid gradient: alpha
/// strictly inside (0, 1), else 0 (NaN too).
Value hardSigmoidOf(NodeContext &c, Value x, double alpha, double beta);

//===----------------------------------------------------------------------===//
// Window attributes shared by Conv, ConvTranspose and the pools
//===----------------------------------------------------------------------===//

/// Integer attribute `name` with one entry per spatial dimension, each at
/// least `minValue` and at most kMaxTensorElements (so products of two
/// such values cannot overflow int64); `defaultValue` repeated when absent.
std::optional<SmallVector<int64_t>> spatialAttr(NodeContext &c, StringRef name,
                                                int64_t spatial,
                                                int64_t defaultValue,
                                                int64_t minValue);

/// The `pads` attribute ([x1_begin, x2_begin, ..., x1_end, x2_end, ...]) split
/// into begins and ends, each in [0, kMaxTensorElements].
bool readPads(NodeContext &c, int64_t spatial, SmallVectorImpl<int64_t> &low,
              SmallVectorImpl<int64_t> &high);

/// ONNX's auto_pad values.
enum class AutoPad { NotSet, Valid, SameUpper, SameLower };

/// The auto_pad attribute (NOTSET when absent or empty); an error for any
/// other value than the four ONNX defines.
std::optional<AutoPad> readAutoPad(NodeContext &c);

/// The extent (kernel - 1) * dilation + 1 of a window in spatial dimension
/// `dim`; an error if it exceeds kMaxTensorElements. `kernel` and `dilation`
/// must be positive (spatialAttr's checks).
std::optional<int64_t> windowExtent(NodeContext &c, int64_t kernel,
                                    int64_t dilation, int64_t dim);

/// Rewrites the padding of a convolution or pool for auto_pad: VALID is no
/// padding; SAME pads so that the output has ceil(input / stride) elements,
/// the odd element at the end (SAME_UPPER) or the beginning (SAME_LOWER).
/// `kernel`, `strides` and `dilations` must be in [1, kMaxTensorElements]
/// (spatialAttr's checks); false after an error (a window extent too
/// large).
bool applyAutoPad(NodeContext &c, AutoPad mode, ArrayRef<int64_t> input,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, SmallVectorImpl<int64_t> &low,
                  SmallVectorImpl<int64_t> &high);

} // namespace mlir::dlc

#endif // DLC_FRONTEND_OPS_RULEUTILS_H
