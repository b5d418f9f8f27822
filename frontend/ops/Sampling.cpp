//===- Sampling.cpp - ONNX GridSample -------------------------------------===//
//
// GridSample reads the input at positions the grid gives, which are data,
// not constants, so the rule is a composition of elementwise ops and one
// gather, following ONNX's reference implementation step by step:
//
//  1. Each grid coordinate (x from grid[..., 0] along W, y from grid[..., 1]
//     along H) is mapped from [-1, 1] to pixels: (g + 1) / 2 * (L - 1) with
//     align_corners, ((g + 1) * L - 1) / 2 without; nearest rounds it half
//     to even (dlc.round, NumPy's rint).
//  2. A coordinate outside [lo, hi] (the pixel centres [0, L - 1] with
//     align_corners, the outer edges [-0.5, L - 0.5] without) is clamped to
//     [0, L - 1] (border) or reflected at lo and hi until inside
//     (reflection); zeros leaves it.
//  3. The taps along each axis: the coordinate itself for nearest,
//     floor(x) + {0, 1} with weights {1 - t, t} for bilinear, floor(x) +
//     {-1, 0, 1, 2} with Keys' cubic weights (A = -0.75) for bicubic, where
//     t = x - floor(x). A tap outside [0, L - 1] reads zero (zeros), the
//     nearest edge pixel (border) or its reflection (reflection).
//  4. The input is viewed as [N, C, H * W]; the taps' linear indices
//     y * W + x, [N, Ky, Kx, H_out * W_out], are broadcast across C and read
//     with one dlc.gather_elements; zero-padded taps are masked with select.
//  5. The taps are weighted and summed along x, then along y (the
//     reference's order), in float32, or float64 when the input or the grid
//     is float64, and the result is cast back to the input's type.
//
// Only 4-D inputs are supported (GridSample-16; GridSample-20's N-d form
// and its mode names `linear` and `cubic` are accepted for 4-D inputs).
// Nearest only copies elements, so it takes any element type; the
// interpolating modes need a float input.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

using namespace mlir;
using namespace mlir::dlc;
using mlir::dlc::DType;
using mlir::dlc::Tensor;

namespace {

enum class SampleMode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

/// Keys' cubic convolution coefficient A, as in PyTorch and ONNX.
constexpr double kCubicA = -0.75;

/// One spatial axis: its size and the pixel range [lo, hi] that step 2
/// keeps coordinates in.
struct Axis {
  int64_t size;
  double lo, hi;
};

Axis axisOf(int64_t size, bool alignCorners) {
  if (alignCorners)
    return {size, 0.0, static_cast<double>(size - 1)};
  return {size, -0.5, static_cast<double>(size) - 0.5};
}

/// Elementwise helpers on float values with scalar constants.
struct Math {
  NodeContext &c;
  Type type;

  Value k(double value) { return c.scalar(type, value); }
  Value add(Value a, Value b) { return c.build<AddOp>({a, b}); }
  Value sub(Value a, Value b) { return c.build<SubOp>({a, b}); }
  Value mul(Value a, Value b) { return c.build<MulOp>({a, b}); }
  Value div(Value a, Value b) { return c.build<DivOp>({a, b}); }
  Value clamp(Value x, double lo, double hi) {
    return c.build<MinOp>({c.build<MaxOp>({x, k(lo)}), k(hi)});
  }
  Value lt(Value a, double b) {
    return c.compare(ComparePredicate::lt, a, k(b));
  }
  Value gt(Value a, double b) {
    return c.compare(ComparePredicate::gt, a, k(b));
  }
  Value outside(Value x, const Axis &axis) {
    return c.build<OrOp>({lt(x, axis.lo), gt(x, axis.hi)});
  }

  /// Reflects x at lo and hi until it is inside [lo, hi], as the
  /// reference's _gs_reflect: d = the distance past the border, n =
  /// floor(d / (hi - lo)), r = d - n * (hi - lo); an even n leaves r from
  /// the border crossed, an odd n r from the other one.
  Value reflect(Value x, const Axis &axis) {
    if (!x)
      return {};
    double range = axis.hi - axis.lo;
    if (range == 0)
      // A single pixel with align_corners: everything reflects onto it.
      return c.broadcastTo(k(axis.lo), typeOf(x).getShape());
    Value below = lt(x, axis.lo);
    Value past = c.select(below, sub(k(axis.lo), x), sub(x, k(axis.hi)));
    Value n = c.unary<FloorOp>(div(past, k(range)));
    Value r = sub(past, mul(n, k(range)));
    Value odd =
        c.compare(ComparePredicate::ne, c.build<RemOp>({n, k(2)}), k(0));
    // From lo when below the range with an even n, or above it with an odd
    // one.
    Value fromLo = c.build<XorOp>({below, odd});
    Value reflected = c.select(fromLo, add(k(axis.lo), r), sub(k(axis.hi), r));
    return c.select(outside(x, axis), reflected, x);
  }

  /// Keys' weight for a tap at distance u in [0, 1] and in [1, 2].
  Value cubicNear(Value u) {
    Value p = sub(mul(k(kCubicA + 2), u), k(kCubicA + 3));
    return add(mul(mul(p, u), u), k(1));
  }
  Value cubicFar(Value u) {
    Value p = sub(mul(k(kCubicA), u), k(5 * kCubicA));
    p = add(mul(p, u), k(8 * kCubicA));
    return sub(mul(p, u), k(4 * kCubicA));
  }
};

/// The taps of one axis, each [N, K, P] (P = H_out * W_out): in-range
/// pixel indices (i64), whether each tap lies inside the input (zeros
/// padding only, else null), and the weights (null for nearest).
struct Taps {
  Value index, valid, weight;
};

/// Steps 1 to 3 for one axis: `g` is that axis's grid coordinate [N, P].
Taps axisTaps(NodeContext &c, Math &m, Value g, const Axis &axis,
              bool alignCorners, SampleMode mode, Padding padding) {
  Taps taps;
  if (!g)
    return taps;
  int64_t n = typeOf(g).getDimSize(0), p = typeOf(g).getDimSize(1);
  double size = static_cast<double>(axis.size);
  // 1. Pixel coordinates.
  Value x =
      alignCorners
          ? m.mul(m.div(m.add(g, m.k(1)), m.k(2)), m.k(size - 1))
          : m.div(m.sub(m.mul(m.add(g, m.k(1)), m.k(size)), m.k(1)), m.k(2));
  if (mode == SampleMode::Nearest)
    x = c.unary<RoundOp>(x);
  // 2. Coordinates outside [lo, hi].
  if (padding == Padding::Border)
    x = c.select(m.outside(x, axis), m.clamp(x, 0, size - 1), x);
  else if (padding == Padding::Reflection)
    x = m.reflect(x, axis);
  // 3. The taps, [N, K, P] (floor(x) + offsets[K, 1], or x itself for
  // nearest), and their weights.
  Value tap = c.reshape(x, {n, 1, p});
  if (mode != SampleMode::Nearest) {
    Value base = c.unary<FloorOp>(x);
    Value t = c.reshape(m.sub(x, base), {n, 1, p});
    SmallVector<double> offsets;
    SmallVector<Value> weights;
    if (mode == SampleMode::Linear) {
      offsets = {0, 1};
      weights = {m.sub(m.k(1), t), t};
    } else {
      offsets = {-1, 0, 1, 2};
      Value one = m.k(1), two = m.k(2);
      weights = {m.cubicFar(m.add(t, one)), m.cubicNear(t),
                 m.cubicNear(m.sub(one, t)), m.cubicFar(m.sub(two, t))};
    }
    taps.weight = c.build<ConcatOp>(weights, {c.namedI64("axis", 1)});
    int64_t count = static_cast<int64_t>(offsets.size());
    Tensor offsetValues(m.type.isF64() ? DType::F64 : DType::F32, {count, 1});
    for (int64_t i = 0; i < count; ++i) {
      if (m.type.isF64())
        offsetValues.data<double>()[i] = offsets[i];
      else
        offsetValues.data<float>()[i] = static_cast<float>(offsets[i]);
    }
    tap = m.add(c.reshape(base, {n, 1, p}), c.constant(offsetValues));
  }
  // Taps outside the input, by padding mode.
  switch (padding) {
  case Padding::Zeros:
    taps.valid =
        c.build<AndOp>({c.compare(ComparePredicate::ge, tap, m.k(0)),
                        c.compare(ComparePredicate::le, tap, m.k(size - 1))});
    tap = c.select(taps.valid, tap, m.k(0));
    break;
  case Padding::Border:
    tap = m.clamp(tap, 0, size - 1);
    break;
  case Padding::Reflection:
    tap = m.reflect(tap, axis);
    break;
  }
  taps.index = c.cast(tap, IntegerType::get(c.context(), 64));
  return taps;
}

std::optional<SampleMode> readMode(NodeContext &c) {
  std::string name = c.stringAttr("mode", "bilinear");
  if (name == "bilinear" || name == "linear")
    return SampleMode::Linear;
  if (name == "nearest")
    return SampleMode::Nearest;
  if (name == "bicubic" || name == "cubic")
    return SampleMode::Cubic;
  c.error() << "mode '" << name
            << "' is not one of bilinear, nearest, bicubic (linear, cubic)";
  return std::nullopt;
}

std::optional<Padding> readPadding(NodeContext &c) {
  std::string name = c.stringAttr("padding_mode", "zeros");
  if (name == "zeros")
    return Padding::Zeros;
  if (name == "border")
    return Padding::Border;
  if (name == "reflection")
    return Padding::Reflection;
  c.error() << "padding_mode '" << name
            << "' is not one of zeros, border, reflection";
  return std::nullopt;
}

void gridSampleRule(NodeContext &c) {
  Value input = c.input(0), grid = c.input(1);
  if (!input || !grid)
    return;
  std::optional<SampleMode> mode = readMode(c);
  std::optional<Padding> padding = readPadding(c);
  if (!mode || !padding)
    return;
  bool alignCorners = c.intAttr("align_corners", 0) != 0;

  RankedTensorType inputType = typeOf(input), gridType = typeOf(grid);
  if (inputType.getRank() != 4) {
    c.error() << "input " << inputType
              << " must be 4-D [N, C, H, W] (only 2-D sampling is supported)";
    return;
  }
  ArrayRef<int64_t> in = inputType.getShape();
  int64_t n = in[0], channels = in[1], h = in[2], w = in[3];
  if (gridType.getRank() != 4 || gridType.getDimSize(0) != n ||
      gridType.getDimSize(3) != 2) {
    c.error() << "grid " << gridType << " must have shape [" << n
              << ", H_out, W_out, 2] for input " << inputType;
    return;
  }
  if (!isa<FloatType>(gridType.getElementType())) {
    c.error() << "grid " << gridType << " must be a float tensor";
    return;
  }
  Type elementType = inputType.getElementType();
  if (*mode != SampleMode::Nearest && !isa<FloatType>(elementType)) {
    c.error() << "mode '" << c.stringAttr("mode", "bilinear")
              << "' interpolates and needs a float input, got " << inputType;
    return;
  }
  if (h == 0 || w == 0) {
    c.error() << "input " << inputType << " has no pixels to sample";
    return;
  }

  // Coordinates (and the interpolation) in float32, or float64 when the
  // input or the grid is float64; float16 grids widen as in the reference.
  Type f64 = Float64Type::get(c.context());
  bool wide = gridType.getElementType().isF64() || elementType.isF64();
  Math m{c, wide ? f64 : Float32Type::get(c.context())};
  int64_t hOut = gridType.getDimSize(1), wOut = gridType.getDimSize(2);
  int64_t p = hOut * wOut;
  Value g = c.cast(grid, m.type);
  auto coordinate = [&](int64_t i) {
    return c.reshape(c.slice(g, {0, 0, 0, i}, {n, hOut, wOut, 1}, {1, 1, 1, 1}),
                     {n, p});
  };
  Taps xs = axisTaps(c, m, coordinate(0), axisOf(w, alignCorners), alignCorners,
                     *mode, *padding);
  Taps ys = axisTaps(c, m, coordinate(1), axisOf(h, alignCorners), alignCorners,
                     *mode, *padding);
  if (c.failed())
    return;
  int64_t kx = typeOf(xs.index).getDimSize(1);
  int64_t ky = typeOf(ys.index).getDimSize(1);

  // 4. One gather of every tap: linear indices y * W + x, [N, Ky, Kx, P].
  Type i64 = IntegerType::get(c.context(), 64);
  Value linear = c.build<AddOp>(
      {c.build<MulOp>({c.reshape(ys.index, {n, ky, 1, p}), c.scalar(i64, w)}),
       c.reshape(xs.index, {n, 1, kx, p})});
  int64_t taps = ky * kx * p;
  Value indices =
      c.broadcastTo(c.reshape(linear, {n, 1, taps}), {n, channels, taps});
  Value data = *mode == SampleMode::Nearest ? input : c.cast(input, m.type);
  data = c.reshape(data, {n, channels, h * w});
  Value values =
      c.build<GatherElementsOp>({data, indices}, {c.namedI64("axis", 2)});
  values = c.reshape(values, {n, channels, ky, kx, p});
  if (*padding == Padding::Zeros) {
    Value valid = c.build<AndOp>({c.reshape(ys.valid, {n, ky, 1, p}),
                                  c.reshape(xs.valid, {n, 1, kx, p})});
    values = c.select(c.reshape(valid, {n, 1, ky, kx, p}), values,
                      scalarLike(c, values, 0));
  }

  // 5. Weighted sums along x, then y.
  if (*mode != SampleMode::Nearest) {
    values = c.build<MulOp>({values, c.reshape(xs.weight, {n, 1, 1, kx, p})});
    values = c.reduce<ReduceSumOp>(values, {3}, /*keepDims=*/false);
    values = c.build<MulOp>({values, c.reshape(ys.weight, {n, 1, ky, p})});
    values = c.reduce<ReduceSumOp>(values, {2}, /*keepDims=*/false);
    values = c.cast(values, elementType);
  }
  c.setOutput(0, c.reshape(values, {n, channels, hOut, wOut}));
}

} // namespace

void mlir::dlc::addSamplingRules(OpRuleTable &t) {
  t["GridSample"] = {gridSampleRule, 16};
}
