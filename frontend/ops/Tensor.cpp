//===- Tensor.cpp - ONNX shape, data movement and constant ops ------------===//
//
// dlc shapes are static, so every ONNX input that decides a shape (Reshape's
// shape, Slice's starts, Pad's pads, Expand's shape...) must be a constant
// once the importer has folded the shape subgraph that computes it; rules
// resolve those values here, with ONNX's clamping and defaults, and emit
// dlc ops with plain integer attributes. Ops without a dlc counterpart are
// compositions: Tile is reshape + broadcast_to + reshape, Trilu a select
// with a constant mask, OneHot a compare against a constant iota, negative
// pads a slice. Constant-producing ops (Shape, Size, Range, Constant,
// ConstantOfShape) become dlc.constant.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "frontend/TensorProto.h"
#include "ir/ShapeUtils.h"
#include "ir/eval/Evaluator.h"

#include <cmath>
#include <limits>
#include <sstream>

using namespace mlir;
using namespace mlir::dlc;
using ::dlc::DType;
using ::dlc::Tensor;

namespace {

/// Range results and OneHot depths this large are refused: they are far
/// beyond any position table or class count and would only exhaust memory.
constexpr int64_t kMaxRangeElements = int64_t(1) << 24;

RankedTensorType typeOf(Value v) {
  return v ? cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

/// A number for messages in its shortest form ("2", "0.5", "1e-10"), where
/// diagnostics would print 2.000000e+00.
std::string number(double value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

/// 0..n-1.
SmallVector<int64_t> iota(int64_t n) {
  return llvm::to_vector(llvm::seq<int64_t>(0, n));
}

/// Errors unless a result shape's element count fits in int64: shapes come
/// from the model's values (Expand's shape, Tile's repeats, pads), and an
/// overflowing count would wrap in every later size computation.
bool checkResultShape(NodeContext &c, ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > std::numeric_limits<int64_t>::max() / d)) {
      c.error() << "result shape [" << shape << "] is too large";
      return false;
    }
    count *= d;
  }
  return true;
}

/// Checks the values of a constant index input against [-size, size), so a
/// bad index in the model is an import error rather than a runtime one.
/// Non-constant indices are left to the op's own runtime check.
void checkConstantIndices(NodeContext &c, size_t i, int64_t size) {
  std::optional<Tensor> indices = c.constantValue(i);
  if (!indices)
    return;
  for (int64_t k = 0; k < indices->numElements(); ++k) {
    int64_t index = indices->getInt(k);
    if (index < -size || index >= size) {
      c.error() << "index " << index << " is out of range [" << -size << ", "
                << size << ")";
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Reshaping
//===----------------------------------------------------------------------===//

void reshapeRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> shape =
      c.version() < 5 ? std::optional(c.intsAttr("shape"))
                      : c.requireConstantInts(1, "shape");
  if (!x || !shape)
    return;
  RankedTensorType type = typeOf(x);
  bool allowZero = c.intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> out;
  int64_t inferred = -1, known = 1;
  for (auto [i, d] : llvm::enumerate(*shape)) {
    int64_t size = d;
    if (d == 0 && !allowZero) {
      // 0 copies the input's dimension at the same position.
      if (static_cast<int64_t>(i) >= type.getRank()) {
        c.error() << "shape [" << ArrayRef<int64_t>(*shape) << "] copies "
                  << "dimension " << i << " (0) of a rank-" << type.getRank()
                  << " input";
        return;
      }
      size = type.getDimSize(i);
    } else if (d == -1) {
      if (inferred >= 0) {
        c.error() << "shape [" << ArrayRef<int64_t>(*shape)
                  << "] has more than one -1";
        return;
      }
      inferred = i;
      out.push_back(1);
      continue;
    } else if (d < 0) {
      c.error() << "shape [" << ArrayRef<int64_t>(*shape)
                << "] has invalid dimension " << d;
      return;
    }
    if (size > 0 && known > std::numeric_limits<int64_t>::max() / size) {
      c.error() << "shape [" << ArrayRef<int64_t>(*shape)
                << "] has too many elements";
      return;
    }
    known *= size;
    out.push_back(size);
  }
  if (inferred >= 0) {
    int64_t count = type.getNumElements();
    if (allowZero && llvm::is_contained(*shape, 0)) {
      c.error() << "shape [" << ArrayRef<int64_t>(*shape)
                << "] has both 0 and -1 with allowzero = 1";
      return;
    }
    if (known == 0 || count % known != 0) {
      c.error() << "cannot infer the -1 of shape ["
                << ArrayRef<int64_t>(*shape) << "] for input " << type;
      return;
    }
    out[inferred] = count / known;
  }
  c.setOutput(0, c.reshape(x, out));
}

void transposeRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  SmallVector<int64_t> perm;
  if (c.hasAttr("perm"))
    perm = llvm::to_vector(c.intsAttr("perm"));
  else
    perm = llvm::to_vector(llvm::reverse(iota(typeOf(x).getRank())));
  c.setOutput(0, c.transpose(x, perm));
}

void flattenRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  int64_t axis = c.intAttr("axis", 1);
  // The axis may also be the rank (everything goes to the outer dimension).
  if (axis < -rank || axis > rank) {
    c.error() << "axis " << axis << " is out of range [" << -rank << ", "
              << rank << "]";
    return;
  }
  if (axis < 0)
    axis += rank;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d)
    inner *= type.getDimSize(d);
  c.setOutput(0, c.reshape(x, {outer, inner}));
}

void squeezeRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> axes = c.intsAttrOrInput("axes", 1);
  if (!x || !axes)
    return;
  RankedTensorType type = typeOf(x);
  std::optional<SmallVector<int64_t>> normalized =
      c.normalizeAxes(*axes, type.getRank());
  if (!normalized)
    return;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t size = type.getDimSize(d);
    bool listed = llvm::is_contained(*normalized, d);
    if (listed && size != 1) {
      c.error() << "cannot squeeze axis " << d << " of size " << size;
      return;
    }
    // Without axes every size-1 dimension goes.
    if (!listed && !(normalized->empty() && size == 1))
      shape.push_back(size);
  }
  c.setOutput(0, c.reshape(x, shape));
}

void unsqueezeRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> axes = c.intsAttrOrInput("axes", 1);
  if (!x || !axes)
    return;
  if (axes->empty()) {
    c.error() << "axes are required";
    return;
  }
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank() + static_cast<int64_t>(axes->size());
  std::optional<SmallVector<int64_t>> normalized =
      c.normalizeAxes(*axes, rank);
  if (!normalized)
    return;
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> dims = type.getShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(*normalized, d)) {
      shape.push_back(1);
    } else {
      shape.push_back(dims.front());
      dims = dims.drop_front();
    }
  }
  c.setOutput(0, c.reshape(x, shape));
}

//===----------------------------------------------------------------------===//
// Joining, splitting, slicing
//===----------------------------------------------------------------------===//

void concatRule(NodeContext &c) {
  if (c.version() >= 4 && !c.hasAttr("axis")) {
    c.error() << "attribute 'axis' is required";
    return;
  }
  SmallVector<Value> inputs;
  for (size_t i = 0; i < c.numInputs(); ++i)
    inputs.push_back(c.input(i));
  if (c.failed())
    return;
  if (inputs.empty()) {
    c.error() << "needs at least one input";
    return;
  }
  RankedTensorType first = typeOf(inputs.front());
  for (Value v : inputs)
    if (typeOf(v).getElementType() != first.getElementType()) {
      c.error() << "inputs have different element types ("
                << first.getElementType() << " and "
                << typeOf(v).getElementType() << ")";
      return;
    }
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", 1), first.getRank());
  if (!axis)
    return;
  c.setOutput(0, c.build<ConcatOp>(inputs, {c.namedI64("axis", *axis)}));
}

void splitRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", 0), type.getRank());
  if (!axis)
    return;
  // Split-2 and -11 take `split` as an attribute, Split-13 as input 1 (and
  // Split-1 either way).
  std::optional<std::vector<int64_t>> split = c.intsAttrOrInput("split", 1);
  if (!split)
    return;
  int64_t dim = type.getDimSize(*axis);
  int64_t n = static_cast<int64_t>(c.numOutputs());
  if (n < 1) {
    c.error() << "needs at least one output";
    return;
  }
  SmallVector<int64_t> sizes;
  if (!split->empty()) {
    if (static_cast<int64_t>(split->size()) != n) {
      c.error() << "split [" << ArrayRef<int64_t>(*split) << "] has "
                << split->size() << " entries for " << n << " outputs";
      return;
    }
    int64_t total = 0;
    for (int64_t s : *split) {
      if (s < 0) {
        c.error() << "split [" << ArrayRef<int64_t>(*split)
                  << "] has a negative size";
        return;
      }
      // Saturates past dim, so huge entries cannot wrap around to it.
      total = s > dim - total ? dim + 1 : total + s;
    }
    if (total != dim) {
      c.error() << "split [" << ArrayRef<int64_t>(*split)
                << "] does not sum to the size " << dim << " of axis "
                << *axis;
      return;
    }
    sizes.assign(split->begin(), split->end());
  } else if (c.hasAttr("num_outputs")) {
    // Split-18: equal chunks of ceil(dim / n), the last one smaller.
    int64_t count = c.intAttr("num_outputs", 0);
    if (count != n) {
      c.error() << "num_outputs " << count << " differs from the node's " << n
                << " outputs";
      return;
    }
    int64_t chunk = (dim + n - 1) / n;
    int64_t last = dim - chunk * (n - 1);
    if (last < 0) {
      c.error() << "cannot split axis " << *axis << " of size " << dim
                << " into " << n << " chunks of " << chunk;
      return;
    }
    sizes.assign(n - 1, chunk);
    sizes.push_back(last);
  } else {
    if (dim % n != 0) {
      c.error() << "axis " << *axis << " of size " << dim
                << " does not split evenly into " << n << " outputs";
      return;
    }
    sizes.assign(n, dim / n);
  }
  SmallVector<int64_t> offsets(type.getRank(), 0);
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (int64_t i = 0; i < n; ++i) {
    shape[*axis] = sizes[i];
    c.setOutput(i, c.slice(x, offsets, shape, strides));
    offsets[*axis] += sizes[i];
  }
}

void sliceRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (c.version() < 10) {
    // Slice-1 takes attributes and has no steps.
    starts = c.intsAttr("starts");
    ends = c.intsAttr("ends");
    axes = c.intsAttr("axes");
    steps = std::vector<int64_t>{};
  } else {
    // One message for the first non-constant input is enough.
    starts = c.requireConstantInts(1, "starts");
    if (starts)
      ends = c.requireConstantInts(2, "ends");
    if (ends)
      axes = c.hasInput(3) ? c.requireConstantInts(3, "axes")
                           : std::vector<int64_t>{};
    if (axes)
      steps = c.hasInput(4) ? c.requireConstantInts(4, "steps")
                            : std::vector<int64_t>{};
  }
  if (!x || !starts || !ends || !axes || !steps)
    return;
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  size_t n = starts->size();
  if (ends->size() != n) {
    c.error() << "starts has " << n << " entries but ends has "
              << ends->size();
    return;
  }
  if (axes->empty()) {
    if (static_cast<int64_t>(n) > rank) {
      c.error() << "starts has " << n << " entries for rank " << rank;
      return;
    }
    SmallVector<int64_t> all = iota(n);
    axes->assign(all.begin(), all.end());
  }
  if (axes->size() != n) {
    c.error() << "axes has " << axes->size() << " entries but starts has "
              << n;
    return;
  }
  if (steps->empty())
    steps->assign(n, 1);
  if (steps->size() != n) {
    c.error() << "steps has " << steps->size() << " entries but starts has "
              << n;
    return;
  }
  std::optional<SmallVector<int64_t>> normalized =
      c.normalizeAxes(*axes, rank);
  if (!normalized)
    return;

  SmallVector<int64_t> offsets(rank, 0);
  SmallVector<int64_t> sizes(type.getShape());
  SmallVector<int64_t> strides(rank, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = (*normalized)[i];
    int64_t dim = type.getDimSize(axis);
    int64_t step = (*steps)[i];
    if (step == 0) {
      c.error() << "steps[" << i << "] is 0";
      return;
    }
    // ONNX: negative starts and ends count from the end; then clamp to
    // [0, dim] going forward and [-1, dim - 1] going backward. INT_MAX and
    // INT_MIN ends mean "to the end" in either direction.
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t size = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start)
        size = (end - start - 1) / step + 1;
    } else if (dim > 0) {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      int64_t magnitude = step == std::numeric_limits<int64_t>::min()
                              ? std::numeric_limits<int64_t>::max()
                              : -step;
      if (start > end)
        size = (start - end - 1) / magnitude + 1;
    }
    offsets[axis] = size > 0 ? start : 0;
    sizes[axis] = size;
    // With one element or none only the offset matters.
    strides[axis] = size > 1 ? step : 1;
  }
  c.setOutput(0, c.slice(x, offsets, sizes, strides));
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

void gatherRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1);
  if (!data || !indices)
    return;
  RankedTensorType type = typeOf(data);
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", 0), type.getRank());
  if (!axis)
    return;
  checkConstantIndices(c, 1, type.getDimSize(*axis));
  c.setOutput(0, c.build<GatherOp>({data, indices},
                                   {c.namedI64("axis", *axis)}));
}

/// The checks GatherElements and ScatterElements share: equal ranks, and
/// indices no larger than the data outside the axis. Returns the axis.
std::optional<int64_t> elementsAxis(NodeContext &c, RankedTensorType data,
                                    RankedTensorType indices) {
  if (data.getRank() != indices.getRank()) {
    c.error() << "data " << data << " and indices " << indices
              << " have different ranks";
    return std::nullopt;
  }
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", 0), data.getRank());
  if (!axis)
    return std::nullopt;
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != *axis && indices.getDimSize(d) > data.getDimSize(d)) {
      c.error() << "indices " << indices << " are larger than data " << data
                << " in dimension " << d;
      return std::nullopt;
    }
  return axis;
}

void gatherElementsRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1);
  if (!data || !indices)
    return;
  std::optional<int64_t> axis = elementsAxis(c, typeOf(data), typeOf(indices));
  if (!axis)
    return;
  checkConstantIndices(c, 1, typeOf(data).getDimSize(*axis));
  c.setOutput(0, c.build<GatherElementsOp>({data, indices},
                                           {c.namedI64("axis", *axis)}));
}

/// ScatterElements, and Scatter (its deprecated name, without reduction).
void scatterElementsRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1), updates = c.input(2);
  if (!data || !indices || !updates)
    return;
  RankedTensorType dataType = typeOf(data);
  std::optional<int64_t> axis = elementsAxis(c, dataType, typeOf(indices));
  if (!axis)
    return;
  if (typeOf(updates).getShape() != typeOf(indices).getShape()) {
    c.error() << "updates " << typeOf(updates) << " and indices "
              << typeOf(indices) << " have different shapes";
    return;
  }
  if (typeOf(updates).getElementType() != dataType.getElementType()) {
    c.error() << "updates " << typeOf(updates) << " and data " << dataType
              << " have different element types";
    return;
  }
  std::string name = c.stringAttr("reduction", "none");
  std::optional<ScatterReduction> reduction = symbolizeScatterReduction(name);
  if (!reduction) {
    c.error() << "reduction '" << name << "' is not supported";
    return;
  }
  checkConstantIndices(c, 1, dataType.getDimSize(*axis));
  c.setOutput(0, c.buildTyped<ScatterElementsOp>(
                     dataType, {data, indices, updates},
                     {c.namedI64("axis", *axis),
                      c.named("reduction", ScatterReductionAttr::get(
                                               c.context(), *reduction))}));
}

//===----------------------------------------------------------------------===//
// Broadcasting, tiling, padding
//===----------------------------------------------------------------------===//

void expandRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> shape = c.requireConstantInts(1, "shape");
  if (!x || !shape)
    return;
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; })) {
    c.error() << "shape [" << ArrayRef<int64_t>(*shape)
              << "] has a negative dimension";
    return;
  }
  // Both directions: a 1 in `shape` keeps the input's dimension.
  ArrayRef<int64_t> from = typeOf(x).getShape();
  std::optional<SmallVector<int64_t>> out = broadcastShapes(from, *shape);
  if (!out) {
    c.error() << "cannot expand [" << from << "] to shape ["
              << ArrayRef<int64_t>(*shape) << "]";
    return;
  }
  if (!checkResultShape(c, *out))
    return;
  c.setOutput(0, c.broadcastTo(x, *out));
}

void tileRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> repeats =
      c.requireConstantInts(1, "repeats");
  if (!x || !repeats)
    return;
  RankedTensorType type = typeOf(x);
  if (static_cast<int64_t>(repeats->size()) != type.getRank()) {
    c.error() << "repeats has " << repeats->size() << " entries for rank "
              << type.getRank();
    return;
  }
  // [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0 * d0, r1 * d1].
  SmallVector<int64_t> spread, broadcast, tiled;
  for (auto [r, d] : llvm::zip(*repeats, type.getShape())) {
    if (r < 0) {
      c.error() << "repeats [" << ArrayRef<int64_t>(*repeats)
                << "] has a negative entry";
      return;
    }
    spread.append({1, d});
    broadcast.append({r, d});
  }
  if (!checkResultShape(c, broadcast))
    return;
  for (auto [r, d] : llvm::zip(*repeats, type.getShape()))
    tiled.push_back(r * d);
  x = c.reshape(x, spread);
  x = c.broadcastTo(x, broadcast);
  c.setOutput(0, c.reshape(x, tiled));
}

void padRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  std::string modeName = c.stringAttr("mode", "constant");
  std::optional<PadMode> mode = symbolizePadMode(modeName);
  if (!mode) {
    c.error() << "mode '" << modeName << "' is not supported";
    return;
  }
  std::vector<int64_t> pads;
  SmallVector<int64_t> axes = iota(rank);
  Value value;
  if (c.version() < 11) {
    // Pad-2: pads and the constant are attributes.
    pads = c.intsAttr("pads");
    float v = c.floatAttr("value", 0.0f);
    if (v != 0.0f)
      value = c.scalar(type.getElementType(), v);
  } else {
    std::optional<std::vector<int64_t>> p = c.requireConstantInts(1, "pads");
    if (!p)
      return;
    pads = std::move(*p);
    if (c.hasInput(2)) {
      value = c.input(2);
      RankedTensorType valueType = typeOf(value);
      if (valueType.getNumElements() != 1 ||
          valueType.getElementType() != type.getElementType()) {
        c.error() << "constant_value " << valueType << " must be one "
                  << type.getElementType() << " element";
        return;
      }
      value = c.reshape(value, {});
    }
    // Pad-18 adds the axes the pads apply to.
    if (c.hasInput(3)) {
      std::optional<std::vector<int64_t>> a = c.requireConstantInts(3, "axes");
      if (!a)
        return;
      std::optional<SmallVector<int64_t>> normalized =
          c.normalizeAxes(*a, rank);
      if (!normalized)
        return;
      axes = std::move(*normalized);
    }
  }
  if (pads.size() != 2 * axes.size()) {
    c.error() << "pads has " << pads.size() << " entries, expected "
              << 2 * axes.size();
    return;
  }
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    low[axis] = pads[i];
    high[axis] = pads[i + axes.size()];
  }

  // Negative pads crop: slice them off first, then pad with the rest.
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  SmallVector<int64_t> result;
  bool anyCrop = false, anyPad = false;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = type.getDimSize(d);
    // Compared before negating, so INT64_MIN pads cannot overflow.
    if (low[d] < -dim || high[d] < -dim ||
        std::max<int64_t>(-low[d], 0) + std::max<int64_t>(-high[d], 0) > dim) {
      c.error() << "pads [" << ArrayRef<int64_t>(pads) << "] crop more than "
                << "dimension " << d << " of size " << dim;
      return;
    }
    int64_t cropLow = std::max<int64_t>(-low[d], 0);
    int64_t cropHigh = std::max<int64_t>(-high[d], 0);
    anyCrop |= cropLow + cropHigh > 0;
    offsets[d] = cropLow;
    sizes[d] -= cropLow + cropHigh;
    low[d] = std::max<int64_t>(low[d], 0);
    high[d] = std::max<int64_t>(high[d], 0);
    anyPad |= low[d] > 0 || high[d] > 0;
    int64_t max = std::numeric_limits<int64_t>::max();
    if (low[d] > max - sizes[d] || high[d] > max - sizes[d] - low[d]) {
      c.error() << "pads [" << ArrayRef<int64_t>(pads)
                << "] make dimension " << d << " too large";
      return;
    }
    result.push_back(sizes[d] + low[d] + high[d]);
  }
  if (!checkResultShape(c, result))
    return;
  if (anyCrop)
    x = c.slice(x, offsets, sizes, strides);
  if (anyPad) {
    SmallVector<Value> operands = {x};
    if (value && *mode == PadMode::constant)
      operands.push_back(value);
    x = c.build<PadOp>(operands,
                       {c.namedI64s("low", low), c.namedI64s("high", high),
                        c.named("mode", PadModeAttr::get(c.context(), *mode))});
  }
  c.setOutput(0, x);
}

//===----------------------------------------------------------------------===//
// Masks: Trilu, OneHot
//===----------------------------------------------------------------------===//

void triluRule(NodeContext &c) {
  Value x = c.input(0);
  int64_t k = 0;
  if (c.hasInput(1)) {
    std::optional<std::vector<int64_t>> kv = c.requireConstantInts(1, "k");
    if (!kv)
      return;
    if (kv->size() != 1) {
      c.error() << "k must be a scalar, got " << kv->size() << " values";
      return;
    }
    k = kv->front();
  }
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  if (type.getRank() < 2) {
    c.error() << "input " << type << " must have rank 2 or more";
    return;
  }
  // Element (i, j) stays when j - i >= k (upper) or j - i <= k (lower); the
  // [N, M] mask broadcasts over the batch dimensions.
  int64_t rows = type.getDimSize(type.getRank() - 2);
  int64_t cols = type.getDimSize(type.getRank() - 1);
  bool upper = c.intAttr("upper", 1) != 0;
  Tensor mask(DType::Bool, {rows, cols});
  bool *m = mask.data<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      m[i * cols + j] = upper ? j - i >= k : j - i <= k;
  Value zero = c.scalar(type.getElementType(), 0.0);
  c.setOutput(0, c.select(c.constant(mask), x, zero));
}

void oneHotRule(NodeContext &c) {
  Value indices = c.input(0), values = c.input(2);
  std::optional<Tensor> depthValue = c.requireConstant(1, "depth");
  if (!indices || !values || !depthValue)
    return;
  if (depthValue->numElements() != 1) {
    c.error() << "depth must be a scalar, got " << depthValue->describe();
    return;
  }
  double d = depthValue->getDouble(0);
  if (!(d >= 1 && d < static_cast<double>(kMaxRangeElements))) {
    c.error() << "depth " << number(d) << " is out of range [1, "
              << kMaxRangeElements << ")";
    return;
  }
  int64_t depth = static_cast<int64_t>(d);
  RankedTensorType valuesType = typeOf(values);
  if (valuesType.getNumElements() != 2) {
    c.error() << "values " << valuesType << " must hold [off, on]";
    return;
  }
  RankedTensorType type = typeOf(indices);
  int64_t rank = type.getRank() + 1;
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", -1), rank);
  if (!axis)
    return;

  // Negative indices count from the end; anything still outside
  // [0, depth) matches no position and gives an all-off row.
  Type i64 = IntegerType::get(c.context(), 64);
  Value index = c.cast(indices, i64);
  Value negative = c.compare(ComparePredicate::lt, index, c.scalar(i64, 0));
  index = c.select(negative, c.build<AddOp>({index, c.scalar(i64, depth)}),
                   index);
  SmallVector<int64_t> unsqueezed(type.getShape());
  unsqueezed.insert(unsqueezed.begin() + *axis, 1);
  index = c.reshape(index, unsqueezed);
  // positions: [depth, 1, ..., 1] with a 1 for each dimension after axis.
  std::vector<int64_t> positionsShape(rank - *axis, 1);
  positionsShape[0] = depth;
  Tensor positions(DType::I64, positionsShape);
  for (int64_t i = 0; i < depth; ++i)
    positions.data<int64_t>()[i] = i;
  Value hot =
      c.compare(ComparePredicate::eq, index, c.constant(positions));

  values = c.reshape(values, {2});
  Value off = c.reshape(c.slice(values, {0}, {1}, {1}), {});
  Value on = c.reshape(c.slice(values, {1}, {1}, {1}), {});
  c.setOutput(0, c.select(hot, on, off));
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

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

void shapeRule(NodeContext &c) {
  RankedTensorType type = c.inputType(0);
  if (!type)
    return;
  // Shape-15's start and end clamp like a Python slice.
  int64_t rank = type.getRank();
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank);
  };
  int64_t start = clampIndex(c.intAttr("start", 0));
  int64_t end = clampIndex(c.intAttr("end", rank));
  ArrayRef<int64_t> dims = type.getShape();
  c.setOutput(0, c.i64Constant(end > start ? dims.slice(start, end - start)
                                           : ArrayRef<int64_t>()));
}

void sizeRule(NodeContext &c) {
  RankedTensorType type = c.inputType(0);
  if (!type)
    return;
  Tensor t(DType::I64, {});
  t.data<int64_t>()[0] = type.getNumElements();
  c.setOutput(0, c.constant(t));
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
  bool isFloat = ::dlc::isFloat(start->dtype());
  Tensor result;
  if (isFloat) {
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

//===----------------------------------------------------------------------===//
// N-dimensional gather and scatter, constant selections
//===----------------------------------------------------------------------===//

/// Checks constant index tuples (the last axis of input `i`) against `dims`,
/// each entry in [-d, d) of its dimension. Non-constant tuples are not
/// checked per entry: only their linearized offset is, by the op at run
/// time.
void checkConstantTuples(NodeContext &c, size_t i, ArrayRef<int64_t> dims) {
  std::optional<Tensor> indices = c.constantValue(i);
  if (!indices || dims.empty())
    return;
  int64_t m = static_cast<int64_t>(dims.size());
  for (int64_t k = 0; k < indices->numElements(); ++k) {
    int64_t index = indices->getInt(k), size = dims[k % m];
    if (index < -size || index >= size) {
      c.error() << "index " << index << " at tuple position " << k % m
                << " is out of range [" << -size << ", " << size << ")";
      return;
    }
  }
}

/// Index tuples (the last axis of `indices`, one entry per dimension of
/// `dims`) as row-major offsets into a block of shape `dims`: negative
/// entries count from the end of their dimension, then each tuple is dotted
/// with the strides. The result is i64 of indices' shape without the last
/// axis.
Value linearizeTuples(NodeContext &c, Value indices, ArrayRef<int64_t> dims) {
  if (!indices)
    return {};
  Type i64 = IntegerType::get(c.context(), 64);
  int64_t m = static_cast<int64_t>(dims.size());
  SmallVector<int64_t> strides(m, 1);
  for (int64_t j = m - 1; j > 0; --j)
    strides[j - 1] = strides[j] * dims[j];
  Value index = c.cast(indices, i64);
  Value negative = c.compare(ComparePredicate::lt, index, c.scalar(i64, 0));
  index = c.select(negative, c.build<AddOp>({index, c.i64Constant(dims)}),
                   index);
  ArrayRef<int64_t> shape = typeOf(indices).getShape();
  if (m == 1)
    return c.reshape(index, shape.drop_back());
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  Value offsets = c.build<MulOp>({index, c.i64Constant(strides)});
  return c.reduce<ReduceSumOp>(offsets, {last}, /*keepDims=*/false);
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// GatherND: the tuples become offsets into data viewed as
/// [batch * block, rest...] (block: the indexed dimensions; with
/// batch_dims, batch k's tuples are shifted to block k), and one gather on
/// axis 0 gives indices.shape[:-1] + data.shape[batch_dims + m:].
void gatherNDRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1);
  if (!data || !indices)
    return;
  RankedTensorType dataType = typeOf(data), indicesType = typeOf(indices);
  int64_t r = dataType.getRank(), q = indicesType.getRank();
  if (r < 1 || q < 1) {
    c.error() << "data " << dataType << " and indices " << indicesType
              << " must have rank 1 or more";
    return;
  }
  int64_t b = c.intAttr("batch_dims", 0);
  if (b < 0 || b >= std::min(q, r)) {
    c.error() << "batch_dims " << b << " is out of range [0, "
              << std::min(q, r) << ")";
    return;
  }
  int64_t m = indicesType.getDimSize(q - 1);
  if (m < 1 || m > r - b) {
    c.error() << "indices " << indicesType << " hold tuples of " << m
              << " entries, expected 1 to " << r - b << " for data "
              << dataType;
    return;
  }
  ArrayRef<int64_t> batch = dataType.getShape().take_front(b);
  if (indicesType.getShape().take_front(b) != batch) {
    c.error() << "data " << dataType << " and indices " << indicesType
              << " differ in their first " << b
              << " dimensions (batch_dims)";
    return;
  }
  ArrayRef<int64_t> dims = dataType.getShape().slice(b, m);
  checkConstantTuples(c, 1, dims);
  if (c.failed())
    return;
  Value linear = linearizeTuples(c, indices, dims);
  int64_t batches = product(batch), block = product(dims);
  if (b > 0) {
    std::vector<int64_t> shape(q - 1, 1);
    std::copy(batch.begin(), batch.end(), shape.begin());
    Tensor offsets(DType::I64, shape);
    for (int64_t k = 0; k < batches; ++k)
      offsets.data<int64_t>()[k] = k * block;
    linear = c.build<AddOp>({linear, c.constant(offsets)});
  }
  SmallVector<int64_t> flat = {batches * block};
  llvm::append_range(flat, dataType.getShape().drop_front(b + m));
  c.setOutput(0, c.build<GatherOp>({c.reshape(data, flat), linear},
                                   {c.namedI64("axis", 0)}));
}

/// ScatterND: data viewed as [block, row] (block: the indexed dimensions),
/// the tuples as offsets broadcast along the row, updates as
/// [tuples, row], and one scatter_elements on axis 0.
void scatterNDRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1), updates = c.input(2);
  if (!data || !indices || !updates)
    return;
  RankedTensorType dataType = typeOf(data), indicesType = typeOf(indices),
                   updatesType = typeOf(updates);
  int64_t r = dataType.getRank(), q = indicesType.getRank();
  if (r < 1 || q < 1) {
    c.error() << "data " << dataType << " and indices " << indicesType
              << " must have rank 1 or more";
    return;
  }
  int64_t m = indicesType.getDimSize(q - 1);
  if (m < 1 || m > r) {
    c.error() << "indices " << indicesType << " hold tuples of " << m
              << " entries, expected 1 to " << r << " for data " << dataType;
    return;
  }
  SmallVector<int64_t> expected(indicesType.getShape().drop_back());
  llvm::append_range(expected, dataType.getShape().drop_front(m));
  if (updatesType.getShape() != ArrayRef<int64_t>(expected)) {
    c.error() << "updates " << updatesType << " must have shape ["
              << expected << "] for data " << dataType << " and indices "
              << indicesType;
    return;
  }
  if (updatesType.getElementType() != dataType.getElementType()) {
    c.error() << "updates " << updatesType << " and data " << dataType
              << " have different element types";
    return;
  }
  std::string name = c.stringAttr("reduction", "none");
  std::optional<ScatterReduction> reduction = symbolizeScatterReduction(name);
  if (!reduction) {
    c.error() << "reduction '" << name << "' is not supported";
    return;
  }
  ArrayRef<int64_t> dims = dataType.getShape().take_front(m);
  checkConstantTuples(c, 1, dims);
  if (c.failed())
    return;
  int64_t tuples = product(indicesType.getShape().drop_back());
  int64_t block = product(dims);
  int64_t row = product(dataType.getShape().drop_front(m));
  Value linear = c.reshape(linearizeTuples(c, indices, dims), {tuples, 1});
  linear = c.broadcastTo(linear, {tuples, row});
  Value result = c.buildTyped<ScatterElementsOp>(
      RankedTensorType::get({block, row}, dataType.getElementType()),
      {c.reshape(data, {block, row}), linear,
       c.reshape(updates, {tuples, row})},
      {c.namedI64("axis", 0),
       c.named("reduction",
               ScatterReductionAttr::get(c.context(), *reduction))});
  c.setOutput(0, c.reshape(result, dataType.getShape()));
}

/// Compress with a constant condition: a gather of the positions where it
/// is true (along `axis`, or of the flattened input without one).
void compressRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<Tensor> condition = c.requireConstant(1, "condition");
  if (!x || !condition)
    return;
  if (condition->rank() != 1) {
    c.error() << "condition " << condition->describe() << " must be 1-D";
    return;
  }
  RankedTensorType type = typeOf(x);
  int64_t axis = 0;
  if (c.hasAttr("axis")) {
    std::optional<int64_t> a =
        c.normalizeAxis(c.intAttr("axis", 0), type.getRank());
    if (!a)
      return;
    axis = *a;
  } else {
    x = c.reshape(x, {type.getNumElements()});
  }
  int64_t size = typeOf(x).getDimSize(axis);
  SmallVector<int64_t> kept;
  for (int64_t k = 0; k < condition->numElements(); ++k) {
    if (condition->getDouble(k) == 0)
      continue;
    if (k >= size) {
      c.error() << "condition " << condition->describe()
                << " selects position " << k << ", past the size " << size
                << " of axis " << axis;
      return;
    }
    kept.push_back(k);
  }
  c.setOutput(0, c.build<GatherOp>({x, c.i64Constant(kept)},
                                   {c.namedI64("axis", axis)}));
}

/// ReverseSequence with constant sequence_lens: with time and batch the
/// first two axes (in either order), x is viewed as [d0 * d1, rest...] and
/// one gather with a constant [d0, d1] table of source rows reverses the
/// first len[b] steps of each batch entry.
void reverseSequenceRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> lens =
      c.requireConstantInts(1, "sequence_lens");
  if (!x || !lens)
    return;
  RankedTensorType type = typeOf(x);
  if (type.getRank() < 2) {
    c.error() << "input " << type << " must have rank 2 or more";
    return;
  }
  int64_t timeAxis = c.intAttr("time_axis", 0);
  int64_t batchAxis = c.intAttr("batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) ||
        (timeAxis == 1 && batchAxis == 0))) {
    c.error() << "time_axis " << timeAxis << " and batch_axis " << batchAxis
              << " must be 0 and 1 in some order";
    return;
  }
  int64_t steps = type.getDimSize(timeAxis);
  int64_t batch = type.getDimSize(batchAxis);
  if (static_cast<int64_t>(lens->size()) != batch) {
    c.error() << "sequence_lens has " << lens->size()
              << " entries for batch size " << batch;
    return;
  }
  for (int64_t len : *lens)
    if (len < 0 || len > steps) {
      c.error() << "sequence_lens [" << ArrayRef<int64_t>(*lens) << "] has "
                << len << ", outside [0, " << steps << "]";
      return;
    }
  int64_t d0 = type.getDimSize(0), d1 = type.getDimSize(1);
  Tensor rows(DType::I64, {d0, d1});
  for (int64_t i = 0; i < d0; ++i)
    for (int64_t j = 0; j < d1; ++j) {
      int64_t t = timeAxis == 0 ? i : j, b = timeAxis == 0 ? j : i;
      int64_t len = (*lens)[b];
      int64_t from = t < len ? len - 1 - t : t;
      rows.data<int64_t>()[i * d1 + j] =
          timeAxis == 0 ? from * d1 + j : i * d1 + from;
    }
  SmallVector<int64_t> flat = {d0 * d1};
  llvm::append_range(flat, type.getShape().drop_front(2));
  c.setOutput(0, c.build<GatherOp>({c.reshape(x, flat), c.constant(rows)},
                                   {c.namedI64("axis", 0)}));
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

/// MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over
/// `axes` (default [0, 2, 3]), as ONNX's function body defines it, with the
/// variance computed from centered values (never negative).
void meanVarianceNormalizationRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  if (!isa<FloatType>(type.getElementType())) {
    c.error() << "input " << type << " must have a float element type";
    return;
  }
  std::vector<int64_t> axes =
      c.hasAttr("axes") ? c.intsAttr("axes") : std::vector<int64_t>{0, 2, 3};
  std::optional<SmallVector<int64_t>> normalized =
      c.normalizeAxes(axes, type.getRank());
  if (!normalized)
    return;
  Value centered =
      c.build<SubOp>({x, c.mean(x, *normalized, /*keepDims=*/true)});
  Value variance = c.mean(c.build<MulOp>({centered, centered}), *normalized,
                          /*keepDims=*/true);
  Value epsilon = c.scalar(type.getElementType(), 1e-9);
  Value stddev = c.build<AddOp>({c.unary<SqrtOp>(variance), epsilon});
  c.setOutput(0, c.build<DivOp>({centered, stddev}));
}

} // namespace

void mlir::dlc::addTensorRules(OpRuleTable &t) {
  // Reshaping (Reshape-1 and Squeeze/Unsqueeze before 13 take attributes).
  t["Reshape"] = {reshapeRule, 1};
  t["Transpose"] = {transposeRule, 1};
  t["Flatten"] = {flattenRule, 1};
  t["Squeeze"] = {squeezeRule, 1};
  t["Unsqueeze"] = {unsqueezeRule, 1};

  // Joining, splitting and slicing.
  t["Concat"] = {concatRule, 1};
  t["Split"] = {splitRule, 1};
  t["Slice"] = {sliceRule, 1};

  // Gather and scatter.
  t["Gather"] = {gatherRule, 1};
  t["GatherElements"] = {gatherElementsRule, 11};
  t["ScatterElements"] = {scatterElementsRule, 11};
  t["Scatter"] = {scatterElementsRule, 9};

  // Broadcasting, tiling and padding (Tile-1 had tiles/axis inputs; Pad-1
  // named its attribute paddings).
  t["Expand"] = {expandRule, 8};
  t["Tile"] = {tileRule, 6};
  t["Pad"] = {padRule, 2};

  // Masks.
  t["Trilu"] = {triluRule, 14};
  t["OneHot"] = {oneHotRule, 9};

  // Constants and shape queries.
  t["Constant"] = {constantRule, 1};
  t["ConstantOfShape"] = {constantOfShapeRule, 9};
  t["Shape"] = {shapeRule, 1};
  t["Size"] = {sizeRule, 1};
  t["Range"] = {rangeRule, 11};

  // N-dimensional gather and scatter (GatherND-12 adds batch_dims), and
  // selections with constant conditions, lengths or diagonals.
  t["GatherND"] = {gatherNDRule, 11};
  t["ScatterND"] = {scatterNDRule, 11};
  t["Compress"] = {compressRule, 9};
  t["ReverseSequence"] = {reverseSequenceRule, 10};
  t["EyeLike"] = {eyeLikeRule, 9};
  t["MeanVarianceNormalization"] = {meanVarianceNormalizationRule, 9};
}
