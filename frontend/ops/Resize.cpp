//===- Resize.cpp - ONNX Resize and Upsample ------------------------------===//
//
// Resize and Upsample need their scales or sizes at import, since those
// decide the output shape; then the whole interpolation is known too. It
// is separable, so each resized axis is resolved here, in double, into a
// few taps: output position i along the axis is sum_k w_k[i] * x[idx_k[i]],
// each tap a dlc.gather with a constant index vector times a constant
// weight vector broadcast along the axis. Nearest is one tap of weight 1 (a
// plain gather), linear two taps, cubic four, fewer where edge clamping
// sends taps to the same element. The taps reproduce ONNX's reference
// implementation (onnx/backend/test/case/node/resize.py): its coordinate
// transforms, its edge padding (indices clamped into the input), its
// choice of neighbours when a source coordinate is an integer, and
// exclude_outside's renormalization. tf_crop_and_resize positions that
// fall outside the input become extrapolation_value through a select with
// a constant mask per axis. Scales and roi are often float initializers
// (parameters to the importer); NodeContext::requireConstant reads their
// initial values.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

#include <array>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::dlc;
using mlir::dlc::DType;
using mlir::dlc::Tensor;

namespace {

/// "[1, 0.5]".
std::string numbers(ArrayRef<double> values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + number(values[i]);
  return s + "]";
}

/// Resized axes this long are refused: the per-axis index and weight
/// tables would exhaust memory long before any real image gets there.
constexpr int64_t kMaxResizedSize = int64_t(1) << 32;

enum class Interpolation { Nearest, Linear, Cubic };

/// coordinate_transformation_mode.
enum class Coordinates {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize
};

/// nearest_mode. Simple is the rule of Resize-10 and Upsample, which have
/// no nearest_mode: truncate when upsampling, round up when downsampling
/// (onnxruntime's behaviour for those versions).
enum class Rounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

struct ResizeMode {
  Interpolation interpolation = Interpolation::Nearest;
  Coordinates coordinates = Coordinates::HalfPixel;
  Rounding rounding = Rounding::RoundPreferFloor;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

/// One resized axis.
struct AxisResize {
  int64_t axis;
  int64_t inSize, outSize;
  /// The scale the coordinate transform divides by: the given scale, or
  /// outSize / inSize when sizes are given.
  double scale;
  /// scale * inSize, the reference's `output_width`: fractional when a
  /// scale was given.
  double width;
  /// The tf_crop_and_resize region: its start and roiEnd - roiStart, the
  /// latter rounded to float32 for a float32 roi as the reference's NumPy
  /// arithmetic does (it decides which edge positions fall outside).
  double roiStart = 0.0, roiExtent = 1.0;
};

/// The longest resized axis: 2^24 positions, far beyond any image side.
constexpr int64_t kMaxResizedAxis = int64_t(1) << 24;

/// One source element of an output position and its weight.
using Tap = std::pair<int64_t, double>;

/// An axis's interpolation resolved at import: output position i is
/// sum_k weights[k][i] * x[indices[k][i]] along the axis.
struct AxisTaps {
  std::vector<std::vector<int64_t>> indices;
  std::vector<std::vector<double>> weights;
  /// tf_crop_and_resize positions outside the input: extrapolation_value.
  std::vector<bool> outside;
};

/// ONNX's x_original of output position `x`: where along the input axis it
/// samples.
double sourceCoordinate(Coordinates mode, const AxisResize &a, int64_t x) {
  double in = static_cast<double>(a.inSize), xd = static_cast<double>(x);
  switch (mode) {
  case Coordinates::HalfPixel:
    return (xd + 0.5) / a.scale - 0.5;
  case Coordinates::HalfPixelSymmetric: {
    // Centers the sampled region when the output width was rounded down.
    double adjustment = static_cast<double>(a.outSize) / a.width;
    double offset = in / 2 * (1 - adjustment);
    return offset + (xd + 0.5) / a.scale - 0.5;
  }
  case Coordinates::PytorchHalfPixel:
    return a.width == 1 ? -0.5 : (xd + 0.5) / a.scale - 0.5;
  case Coordinates::AlignCorners:
    return a.width == 1 ? 0.0 : xd * (in - 1) / (a.width - 1);
  case Coordinates::Asymmetric:
    return xd / a.scale;
  case Coordinates::TfHalfPixelForNN:
    return (xd + 0.5) / a.scale;
  case Coordinates::TfCropAndResize: {
    double offset = a.width == 1 ? a.roiExtent * (in - 1) / 2
                                 : xd * a.roiExtent * (in - 1) / (a.width - 1);
    return offset + a.roiStart * (in - 1);
  }
  }
  return 0.0;
}

/// The reference's cubic convolution weights of the four neighbours of a
/// coordinate `ratio` in (0, 1] past the second one.
std::array<double, 4> cubicWeights(double ratio, double a) {
  double r = ratio, s = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

/// The taps of output position `x` (indices clamped into the input).
SmallVector<Tap, 4> positionTaps(const ResizeMode &m, const AxisResize &a,
                                 int64_t x, bool &outside) {
  auto clampIndex = [&](int64_t i) {
    return std::clamp<int64_t>(i, 0, a.inSize - 1);
  };
  double source = sourceCoordinate(m.coordinates, a, x);
  // Only a tf_crop_and_resize region with infinities gives NaN: outside.
  if (std::isnan(source))
    source = -1.0;
  outside = m.coordinates == Coordinates::TfCropAndResize &&
            !(source >= 0 && source <= static_cast<double>(a.inSize - 1));
  // Any value will do: the mask replaces it.
  if (outside)
    return {{0, 1.0}};
  bool nearest = m.interpolation == Interpolation::Nearest;
  if (nearest && m.rounding == Rounding::Simple) {
    double r = a.scale < 1 ? std::ceil(source) : std::trunc(source);
    r = std::clamp(r, 0.0, static_cast<double>(a.inSize - 1));
    return {{static_cast<int64_t>(r), 1.0}};
  }
  // The reference edge-pads the input by n/2 elements per side and takes
  // the n padded elements nearest to the coordinate (the smaller on a tie):
  // a window starting at ceil(x + pad) - n/2, clamped into the padded axis.
  int64_t n = m.interpolation == Interpolation::Cubic ? 4 : 2;
  int64_t pad = n / 2, limit = a.inSize + 2 * pad;
  double floorSource = std::floor(source);
  // In (0, 1]: an integer coordinate counts as 1 past the left neighbour.
  double ratio = source == floorSource ? 1.0 : source - floorSource;
  double start = std::clamp(std::ceil(source + static_cast<double>(pad)) -
                                static_cast<double>(n / 2),
                            0.0, static_cast<double>(limit - n));
  int64_t first = static_cast<int64_t>(start) - pad;
  if (nearest) {
    bool second = true;
    if (ratio != 1.0) {
      switch (m.rounding) {
      case Rounding::RoundPreferFloor:
        second = ratio > 0.5;
        break;
      case Rounding::RoundPreferCeil:
        second = ratio >= 0.5;
        break;
      case Rounding::Floor:
        second = false;
        break;
      case Rounding::Ceil:
      case Rounding::Simple:
        second = true;
        break;
      }
    }
    return {{clampIndex(first + (second ? 1 : 0)), 1.0}};
  }
  std::array<double, 4> w = {1 - ratio, ratio, 0.0, 0.0};
  if (m.interpolation == Interpolation::Cubic)
    w = cubicWeights(ratio, m.cubicA);
  if (m.excludeOutside) {
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      if (first + k < 0 || first + k >= a.inSize)
        w[k] = 0.0;
      sum += w[k];
    }
    for (int64_t k = 0; k < n; ++k)
      w[k] /= sum;
  }
  SmallVector<Tap, 4> taps;
  for (int64_t k = 0; k < n; ++k)
    taps.push_back({clampIndex(first + k), w[k]});
  return taps;
}

/// The taps of every output position along an axis, packed into as few
/// index/weight vectors as the busiest position needs: taps of one position
/// that the edge clamping sends to the same element are merged, and
/// zero-weight taps dropped, so e.g. a linear resize whose positions all
/// fall on input elements is a single gather.
AxisTaps planAxis(const ResizeMode &m, const AxisResize &a) {
  std::vector<SmallVector<Tap, 4>> positions(a.outSize);
  AxisTaps t;
  t.outside.assign(a.outSize, false);
  size_t width = 1;
  for (int64_t x = 0; x < a.outSize; ++x) {
    bool outside = false;
    SmallVector<Tap, 4> merged;
    for (Tap tap : positionTaps(m, a, x, outside)) {
      auto same = llvm::find_if(
          merged, [&](const Tap &u) { return u.first == tap.first; });
      if (same != merged.end())
        same->second += tap.second;
      else
        merged.push_back(tap);
    }
    SmallVector<Tap, 4> kept;
    for (const Tap &tap : merged)
      if (tap.second != 0.0)
        kept.push_back(tap);
    if (kept.empty())
      kept.push_back({merged.front().first, 0.0});
    width = std::max(width, kept.size());
    positions[x] = std::move(kept);
    t.outside[x] = outside;
  }
  t.indices.assign(width, std::vector<int64_t>(a.outSize, 0));
  t.weights.assign(width, std::vector<double>(a.outSize, 0.0));
  for (int64_t x = 0; x < a.outSize; ++x)
    for (size_t k = 0; k < width; ++k) {
      // Short positions repeat their first element with weight 0.
      bool real = k < positions[x].size();
      t.indices[k][x] = positions[x][real ? k : 0].first;
      t.weights[k][x] = real ? positions[x][k].second : 0.0;
    }
  return t;
}

Value gatherConstant(NodeContext &c, Value x, ArrayRef<int64_t> indices,
                     int64_t axis) {
  return c.build<GatherOp>({x, c.i64Constant(indices)},
                           {c.namedI64("axis", axis)});
}

/// `x` resampled along `a.axis` by `t`: a gather for a single tap of
/// weight 1 (nothing at all for the identity), else the weighted sum of
/// one gather per tap.
Value applyTaps(NodeContext &c, Value x, const AxisResize &a,
                const AxisTaps &t) {
  if (!x)
    return {};
  auto allEqual = [](ArrayRef<double> w, double v) {
    return llvm::all_of(w, [&](double u) { return u == v; });
  };
  if (t.weights.size() == 1 && allEqual(t.weights[0], 1.0)) {
    const std::vector<int64_t> &indices = t.indices[0];
    if (a.outSize == a.inSize &&
        llvm::equal(indices, llvm::seq<int64_t>(0, a.outSize)))
      return x;
    return gatherConstant(c, x, indices, a.axis);
  }
  Type type = elemType(x);
  std::vector<int64_t> weightShape(typeOf(x).getRank(), 1);
  weightShape[a.axis] = a.outSize;
  Value sum;
  for (size_t k = 0; k < t.weights.size(); ++k) {
    ArrayRef<double> w = t.weights[k];
    Value weights;
    if (!w.empty() && allEqual(w, w.front())) {
      weights = c.scalar(type, w.front());
    } else {
      Tensor values(DType::F64, weightShape);
      llvm::copy(w, values.data<double>());
      weights = c.cast(c.constant(values), type);
    }
    Value term =
        c.build<MulOp>({gatherConstant(c, x, t.indices[k], a.axis), weights});
    sum = sum ? c.build<AddOp>({sum, term}) : term;
  }
  return sum;
}

/// Resizes `x` along `axes`, the most shrinking axis first so that later
/// axes work on less data. Linear and cubic interpolation of anything but
/// f32 and f64 runs in f32 and casts back (integers truncating, as the
/// reference's astype does).
Value resize(NodeContext &c, Value x, const ResizeMode &m,
             ArrayRef<AxisResize> axes, double extrapolation) {
  Type type = elemType(x);
  bool direct = type.isF32() || type.isF64() ||
                m.interpolation == Interpolation::Nearest;
  Value y = direct ? x : c.cast(x, Float32Type::get(c.context()));
  SmallVector<const AxisResize *> order;
  for (const AxisResize &a : axes)
    order.push_back(&a);
  llvm::stable_sort(order, [](const AxisResize *p, const AxisResize *q) {
    // outSize / inSize, compared without dividing by an empty axis.
    return static_cast<double>(p->outSize) * static_cast<double>(q->inSize) <
           static_cast<double>(q->outSize) * static_cast<double>(p->inSize);
  });
  SmallVector<std::pair<const AxisResize *, std::vector<bool>>> masks;
  for (const AxisResize *a : order) {
    AxisTaps t = planAxis(m, *a);
    y = applyTaps(c, y, *a, t);
    if (llvm::is_contained(t.outside, true))
      masks.push_back({a, std::move(t.outside)});
  }
  for (auto &[a, outside] : masks) {
    if (!y)
      return {};
    std::vector<int64_t> maskShape(typeOf(y).getRank(), 1);
    maskShape[a->axis] = a->outSize;
    Tensor mask(DType::Bool, maskShape);
    llvm::copy(outside, mask.data<bool>());
    y = c.select(c.constant(mask), c.scalar(elemType(y), extrapolation), y);
  }
  return direct ? y : c.cast(y, type);
}

/// Reads mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a
/// and exclude_outside. `legacy` (Resize-10, Upsample) has only mode, with
/// asymmetric coordinates and the Simple rounding.
std::optional<ResizeMode> readResizeMode(NodeContext &c, bool legacy) {
  ResizeMode m;
  std::string mode = c.stringAttr("mode", "nearest");
  if (mode == "nearest")
    m.interpolation = Interpolation::Nearest;
  else if (mode == "linear")
    m.interpolation = Interpolation::Linear;
  else if (mode == "cubic" && !legacy)
    m.interpolation = Interpolation::Cubic;
  else {
    c.error() << "mode '" << mode << "' is not one of "
              << (legacy ? "nearest, linear" : "nearest, linear, cubic");
    return std::nullopt;
  }
  if (legacy) {
    m.coordinates = Coordinates::Asymmetric;
    m.rounding = Rounding::Simple;
    return m;
  }

  std::string coordinates =
      c.stringAttr("coordinate_transformation_mode", "half_pixel");
  static const std::pair<StringRef, Coordinates> coordinateModes[] = {
      {"half_pixel", Coordinates::HalfPixel},
      {"half_pixel_symmetric", Coordinates::HalfPixelSymmetric},
      {"pytorch_half_pixel", Coordinates::PytorchHalfPixel},
      {"align_corners", Coordinates::AlignCorners},
      {"asymmetric", Coordinates::Asymmetric},
      {"tf_half_pixel_for_nn", Coordinates::TfHalfPixelForNN},
      {"tf_crop_and_resize", Coordinates::TfCropAndResize}};
  auto coordinateMode = llvm::find_if(
      coordinateModes, [&](auto &p) { return p.first == coordinates; });
  if (coordinateMode == std::end(coordinateModes)) {
    c.error() << "coordinate_transformation_mode '" << coordinates
              << "' is not supported";
    return std::nullopt;
  }
  m.coordinates = coordinateMode->second;

  std::string rounding = c.stringAttr("nearest_mode", "round_prefer_floor");
  if (rounding == "round_prefer_floor")
    m.rounding = Rounding::RoundPreferFloor;
  else if (rounding == "round_prefer_ceil")
    m.rounding = Rounding::RoundPreferCeil;
  else if (rounding == "floor")
    m.rounding = Rounding::Floor;
  else if (rounding == "ceil")
    m.rounding = Rounding::Ceil;
  else {
    c.error() << "nearest_mode '" << rounding << "' is not one of "
              << "round_prefer_floor, round_prefer_ceil, floor, ceil";
    return std::nullopt;
  }

  m.cubicA = c.floatAttr("cubic_coeff_a", -0.75f);
  m.excludeOutside = c.intAttr("exclude_outside", 0) != 0;
  // Resize-18's antialiasing widens the kernel when downsampling; only the
  // plain interpolation is implemented.
  if (int64_t antialias = c.intAttr("antialias", 0)) {
    c.error() << "antialias " << antialias << " is not supported";
    return std::nullopt;
  }
  std::string policy = c.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") {
    c.error() << "keep_aspect_ratio_policy '" << policy
              << "' is not supported (only stretch)";
    return std::nullopt;
  }
  return m;
}

/// The resized axes for `scales` (one per entry of `axes`): output size
/// floor(scale * input), as the reference computes it.
std::optional<SmallVector<AxisResize>>
axesFromScales(NodeContext &c, RankedTensorType type, ArrayRef<int64_t> axes,
               ArrayRef<float> scales) {
  std::vector<double> shown(scales.begin(), scales.end());
  if (scales.size() != axes.size()) {
    c.error() << "scales " << numbers(shown) << " has " << scales.size()
              << " entries for " << axes.size() << " axes";
    return std::nullopt;
  }
  SmallVector<AxisResize> out;
  for (auto [axis, scale] : llvm::zip(axes, scales)) {
    int64_t in = type.getDimSize(axis);
    double size = std::floor(static_cast<double>(scale) * in);
    if (!(scale > 0)) {
      c.error() << "scales " << numbers(shown) << " must be positive (axis "
                << axis << " has " << number(scale) << ")";
      return std::nullopt;
    }
    if (!(size < static_cast<double>(kMaxResizedSize))) {
      c.error() << "scales " << numbers(shown) << " make axis " << axis
                << " too large";
      return std::nullopt;
    }
    AxisResize a;
    a.axis = axis;
    a.inSize = in;
    a.outSize = static_cast<int64_t>(size);
    a.scale = scale;
    a.width = static_cast<double>(scale) * static_cast<double>(in);
    out.push_back(a);
  }
  return out;
}

/// The resized axes for `sizes` (one per entry of `axes`).
std::optional<SmallVector<AxisResize>>
axesFromSizes(NodeContext &c, RankedTensorType type, ArrayRef<int64_t> axes,
              ArrayRef<int64_t> sizes) {
  if (sizes.size() != axes.size()) {
    c.error() << "sizes [" << sizes << "] has " << sizes.size()
              << " entries for " << axes.size() << " axes";
    return std::nullopt;
  }
  SmallVector<AxisResize> out;
  for (auto [axis, size] : llvm::zip(axes, sizes)) {
    if (size < 0 || size >= kMaxResizedSize) {
      c.error() << "sizes [" << sizes << "] has the invalid size " << size;
      return std::nullopt;
    }
    AxisResize a;
    a.axis = axis;
    a.inSize = type.getDimSize(axis);
    a.outSize = size;
    a.scale = static_cast<double>(size) / static_cast<double>(a.inSize);
    a.width = a.scale * static_cast<double>(a.inSize);
    out.push_back(a);
  }
  return out;
}

/// Checks the output shape and that no input dimension to be resized is
/// empty, then resizes.
void finishResize(NodeContext &c, Value x, const ResizeMode &m,
                  ArrayRef<AxisResize> axes, double extrapolation) {
  RankedTensorType type = typeOf(x);
  SmallVector<int64_t> shape(type.getShape());
  double count = 1;
  for (const AxisResize &a : axes) {
    if (a.inSize == 0 && a.outSize > 0) {
      c.error() << "cannot resize the empty axis " << a.axis << " to size "
                << a.outSize;
      return;
    }
    // Each resized axis gets interpolation tables of its output length at
    // import (planAxis): bounded, so that a model cannot make the importer
    // allocate gigabytes (found by fuzz/, onnx-import).
    if (a.outSize > kMaxResizedAxis) {
      c.error() << "output size " << a.outSize << " of axis " << a.axis
                << " exceeds the " << kMaxResizedAxis
                << " positions a resized axis may have";
      return;
    }
    shape[a.axis] = a.outSize;
  }
  for (int64_t d : shape)
    count *= static_cast<double>(d);
  if (count >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    c.error() << "result shape [" << shape << "] is too large";
    return;
  }
  c.setOutput(0, resize(c, x, m, axes, extrapolation));
}

/// Reads a constant float input (scales) as floats.
std::optional<std::vector<float>> constantFloats(NodeContext &c, size_t i,
                                                 StringRef what) {
  std::optional<Tensor> t = c.requireConstant(i, what);
  if (!t)
    return std::nullopt;
  if (!isFloat(t->dtype())) {
    c.error() << "input " << i << " (" << what << ") must hold floats, got "
              << t->describe();
    return std::nullopt;
  }
  std::vector<float> values(t->numElements());
  for (int64_t k = 0; k < t->numElements(); ++k)
    values[k] = static_cast<float>(t->getDouble(k));
  return values;
}

bool isEmptyInput(NodeContext &c, size_t i) {
  return !c.hasInput(i) || c.inputType(i).getNumElements() == 0;
}

/// Resize-10: (X, scales). Resize-11 and later: (X, roi, scales, sizes)
/// with one of scales and sizes non-empty; Resize-18's `axes` names the
/// axes they apply to.
void resizeRule(NodeContext &c) {
  Value x = c.input(0);
  bool legacy = c.version() < 11;
  std::optional<ResizeMode> m = readResizeMode(c, legacy);
  if (!x || !m)
    return;
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (c.hasAttr("axes")) {
    std::optional<SmallVector<int64_t>> normalized =
        c.normalizeAxes(c.intsAttr("axes"), rank);
    if (!normalized)
      return;
    axes = std::move(*normalized);
  }

  size_t scalesIndex = legacy ? 1 : 2;
  bool hasScales = !isEmptyInput(c, scalesIndex);
  bool hasSizes = !legacy && !isEmptyInput(c, 3);
  if (hasScales == hasSizes) {
    c.error() << (hasScales ? "scales and sizes are both given"
                            : "one of scales and sizes is required");
    return;
  }
  std::optional<SmallVector<AxisResize>> resized;
  if (hasScales) {
    std::optional<std::vector<float>> scales =
        constantFloats(c, scalesIndex, "scales");
    if (!scales)
      return;
    resized = axesFromScales(c, type, axes, *scales);
  } else {
    std::optional<std::vector<int64_t>> sizes =
        c.requireConstantInts(3, "sizes");
    if (!sizes)
      return;
    resized = axesFromSizes(c, type, axes, *sizes);
  }
  if (!resized)
    return;

  // roi only matters to tf_crop_and_resize: [starts..., ends...] per axis,
  // as fractions of the input.
  if (m->coordinates == Coordinates::TfCropAndResize) {
    if (isEmptyInput(c, 1)) {
      c.error() << "tf_crop_and_resize needs the roi input";
      return;
    }
    std::optional<Tensor> roi = c.requireConstant(1, "roi");
    if (!roi)
      return;
    size_t n = resized->size();
    if (roi->numElements() != static_cast<int64_t>(2 * n)) {
      c.error() << "roi " << roi->describe() << " must have " << 2 * n
                << " entries (starts and ends)";
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      double start = roi->getDouble(i), end = roi->getDouble(n + i);
      (*resized)[i].roiStart = start;
      (*resized)[i].roiExtent =
          roi->dtype() == DType::F32
              ? static_cast<double>(static_cast<float>(end) -
                                    static_cast<float>(start))
              : end - start;
    }
  }
  finishResize(c, x, *m, *resized, c.floatAttr("extrapolation_value", 0.0f));
}

/// Upsample-7 takes scales as an attribute, Upsample-9 as a constant input.
void upsampleRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<ResizeMode> m = readResizeMode(c, /*legacy=*/true);
  if (!x || !m)
    return;
  std::optional<std::vector<float>> scales;
  if (c.version() < 9) {
    if (!c.hasAttr("scales")) {
      c.error() << "attribute 'scales' is required";
      return;
    }
    scales = c.floatsAttr("scales");
  } else {
    scales = constantFloats(c, 1, "scales");
  }
  if (!scales)
    return;
  RankedTensorType type = typeOf(x);
  std::optional<SmallVector<AxisResize>> resized = axesFromScales(
      c, type, llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())),
      *scales);
  if (resized)
    finishResize(c, x, *m, *resized, 0.0);
}

} // namespace

void mlir::dlc::addResizeRules(OpRuleTable &t) {
  // Resize-10 has only `mode`; -11 adds roi, sizes and the coordinate and
  // rounding modes; -18/-19 forms (axes, half_pixel_symmetric) are read
  // from the node. Upsample-1 had different attributes.
  t["Resize"] = {resizeRule, 10};
  t["Upsample"] = {upsampleRule, 7};
}
