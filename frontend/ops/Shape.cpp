//===- Shape.cpp - ONNX reshaping, joining, slicing and padding ops -------===//
//
// dlc shapes are static, so every ONNX input that decides a shape (Reshape's
// shape, Slice's starts, Pad's pads, Expand's shape...) must be a constant
// once the importer has folded the shape subgraph that computes it; rules
// resolve those values here, with ONNX's clamping and defaults, and emit
// dlc ops with plain integer attributes. Ops without a dlc counterpart are
// compositions: Tile is reshape + broadcast_to + reshape, negative pads a
// slice. Shape and Size read the static input type and become dlc.constant.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"
#include "ir/ShapeUtils.h"

#include <limits>

using namespace mlir;
using namespace mlir::dlc;
using mlir::dlc::DType;
using mlir::dlc::Tensor;

namespace {

/// 0..n-1.
SmallVector<int64_t> iota(int64_t n) {
  return llvm::to_vector(llvm::seq<int64_t>(0, n));
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
// Shape queries
//===----------------------------------------------------------------------===//

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

} // namespace

void mlir::dlc::addShapeRules(OpRuleTable &t) {
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

  // Broadcasting, tiling and padding (Tile-1 had tiles/axis inputs; Pad-1
  // named its attribute paddings).
  t["Expand"] = {expandRule, 8};
  t["Tile"] = {tileRule, 6};
  t["Pad"] = {padRule, 2};

  // Shape queries.
  t["Shape"] = {shapeRule, 1};
  t["Size"] = {sizeRule, 1};
}
