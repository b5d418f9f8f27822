//===- Pool.cpp - ONNX pooling: Max, Average, Lp and global pools ---------===//
//
// Pools are dlc.max_pool and dlc.sum_pool; an average divides the sum by a
// window-count tensor computed here, since the count depends only on
// shapes, padding and count_include_pad. LpPool is the p-th root of a
// sum_pool of |x|^p. The global pools are reductions over the spatial axes
// (mean, max, or the Lp sum and root) that keep them as size-1 dimensions.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

struct PoolWindow {
  SmallVector<int64_t> kernel, strides, dilations;
  /// The padding the ONNX node asks for.
  SmallVector<int64_t> padLow, padHigh;
  /// padHigh plus what ceil_mode adds so the last window fits.
  SmallVector<int64_t> poolHigh;
  SmallVector<int64_t> outSize;
};

/// Reads and resolves the window attributes of a pool over x. Output sizes
/// follow the ONNX formula; with ceil_mode a last window that would start
/// in the end padding is dropped (as PyTorch and later ONNX specs do), and
/// the end padding grows so the remaining last window fits.
std::optional<PoolWindow> poolWindow(NodeContext &c, Value x) {
  if (!x)
    return std::nullopt;
  int64_t rank = typeOf(x).getRank();
  if (rank < 3) {
    c.error() << "input must have rank 3 or more (N, C, spatial...), got "
              << typeOf(x);
    return std::nullopt;
  }
  int64_t spatial = rank - 2;
  ArrayRef<int64_t> input = typeOf(x).getShape().drop_front(2);
  if (!c.hasAttr("kernel_shape")) {
    c.error() << "kernel_shape is required";
    return std::nullopt;
  }
  PoolWindow w;
  auto kernel = spatialAttr(c, "kernel_shape", spatial, 1, 1);
  auto strides = spatialAttr(c, "strides", spatial, 1, 1);
  auto dilations = spatialAttr(c, "dilations", spatial, 1, 1);
  std::optional<AutoPad> autoPad = readAutoPad(c);
  if (!kernel || !strides || !dilations || !autoPad ||
      !readPads(c, spatial, w.padLow, w.padHigh))
    return std::nullopt;
  w.kernel = *kernel;
  w.strides = *strides;
  w.dilations = *dilations;
  if (!applyAutoPad(c, *autoPad, input, w.kernel, w.strides, w.dilations,
                    w.padLow, w.padHigh))
    return std::nullopt;
  bool ceilMode = c.intAttr("ceil_mode", 0) != 0 &&
                  (*autoPad == AutoPad::NotSet || *autoPad == AutoPad::Valid);
  w.poolHigh = w.padHigh;
  // Every size below is at most a few times kMaxTensorElements (2^40): the
  // input by its type, the window by windowExtent, pads and strides by
  // spatialAttr and readPads.
  for (int64_t d = 0; d < spatial; ++d) {
    std::optional<int64_t> extent =
        windowExtent(c, w.kernel[d], w.dilations[d], d);
    if (!extent)
      return std::nullopt;
    int64_t window = *extent;
    int64_t span = input[d] + w.padLow[d] + w.padHigh[d] - window;
    if (span < 0) {
      c.error() << "kernel extent " << window << " is larger than the padded "
                << "input size " << span + window << " in spatial dimension "
                << d;
      return std::nullopt;
    }
    int64_t out = (ceilMode ? ceilDiv(span, w.strides[d]) : span / w.strides[d]) + 1;
    if (ceilMode && (out - 1) * w.strides[d] >= input[d] + w.padLow[d])
      --out;
    w.outSize.push_back(out);
    w.poolHigh[d] += std::max<int64_t>(
        0, (out - 1) * w.strides[d] + window - (input[d] + w.padLow[d] +
                                                w.padHigh[d]));
  }
  return w;
}

template <typename PoolOpT>
Value buildPool(NodeContext &c, Value x, const PoolWindow &w) {
  return c.build<PoolOpT>(
      {x}, {c.namedI64s("window", w.kernel), c.namedI64s("stride", w.strides),
            c.namedI64s("pad_low", w.padLow),
            c.namedI64s("pad_high", w.poolHigh),
            c.namedI64s("dilation", w.dilations)});
}

void maxPoolRule(NodeContext &c) {
  if (c.wantsOutput(1)) {
    c.error() << "Indices output is not supported";
    return;
  }
  Value x = c.input(0);
  std::optional<PoolWindow> w = poolWindow(c, x);
  if (!w)
    return;
  // storage_order only changes the Indices output.
  c.setOutput(0, buildPool<MaxPoolOp>(c, x, *w));
}

/// The number of taps k in [0, kernel) of the window starting at `start`
/// (stride steps of `dilation`) whose position start + k * dilation lies
/// in [begin, end): the window's taps clamped to the range, in closed form.
int64_t tapsInside(int64_t start, int64_t kernel, int64_t dilation,
                   int64_t begin, int64_t end) {
  if (end <= begin)
    return 0;
  int64_t first = std::max<int64_t>(
      0, llvm::divideCeilSigned(begin - start, dilation));
  int64_t last = std::min<int64_t>(
      kernel - 1, llvm::divideFloorSigned(end - 1 - start, dilation));
  return std::max<int64_t>(0, last - first + 1);
}

/// The number of elements each window of `w` averages over, as a divisor
/// for the [N, C, out...] sum: a scalar when every window has the same
/// count, else the product of one constant per spatial dimension whose
/// counts vary, shaped [1, 1, 1.., out_d, 1..] (so nothing of the size of
/// the whole output is built here). Windows count input elements, and with
/// count_include_pad also the node's padding, but never the extra end
/// padding of ceil_mode.
Value windowCounts(NodeContext &c, Value x, const PoolWindow &w,
                   bool includePad) {
  ArrayRef<int64_t> input = typeOf(x).getShape().drop_front(2);
  size_t spatial = input.size();
  Type type = elemType(x);
  // The count of a window is the product of per-dimension counts.
  double uniform = 1;
  Value counts;
  for (size_t d = 0; d < spatial; ++d) {
    if (w.outSize[d] == 0)
      continue; // No window: any count will do.
    int64_t begin = includePad ? -w.padLow[d] : 0;
    int64_t end = includePad ? input[d] + w.padHigh[d] : input[d];
    std::vector<int64_t> shape(spatial + 2, 1);
    shape[d + 2] = w.outSize[d];
    Tensor perDim(DType::F64, shape);
    double *data = perDim.data<double>();
    bool same = true;
    for (int64_t y = 0; y < w.outSize[d]; ++y) {
      int64_t start = y * w.strides[d] - w.padLow[d];
      data[y] = static_cast<double>(
          tapsInside(start, w.kernel[d], w.dilations[d], begin, end));
      same = same && data[y] == data[0];
    }
    if (same) {
      uniform *= data[0];
      continue;
    }
    Value factor = c.cast(c.constant(perDim), type);
    counts = counts ? c.build<MulOp>({counts, factor}) : factor;
  }
  if (!counts)
    return c.scalar(type, uniform);
  if (uniform != 1)
    counts = c.build<MulOp>({counts, c.scalar(type, uniform)});
  return counts;
}

void averagePoolRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<PoolWindow> w = poolWindow(c, x);
  if (!w)
    return;
  bool includePad = c.intAttr("count_include_pad", 0) != 0;
  Value sum = buildPool<SumPoolOp>(c, x, *w);
  c.setOutput(0, c.build<DivOp>({sum, windowCounts(c, x, *w, includePad)}));
}

/// |x|^p, for LpPool's and GlobalLpPool's sums.
Value absPow(NodeContext &c, Value x, double p) {
  Value a = c.unary<AbsOp>(x);
  if (p == 1.0)
    return a;
  if (p == 2.0)
    return c.build<MulOp>({a, a});
  return c.build<PowOp>({a, c.scalar(elemType(x), p)});
}

/// s^(1/p).
Value root(NodeContext &c, Value s, double p) {
  if (!s || p == 1.0)
    return s;
  if (p == 2.0)
    return c.unary<SqrtOp>(s);
  return c.build<PowOp>({s, c.scalar(elemType(s), 1.0 / p)});
}

std::optional<double> lpNorm(NodeContext &c) {
  int64_t p = c.intAttr("p", 2);
  if (p <= 0) {
    c.error() << "p " << p << " must be positive";
    return std::nullopt;
  }
  return static_cast<double>(p);
}

void lpPoolRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<double> p = lpNorm(c);
  std::optional<PoolWindow> w = poolWindow(c, x);
  if (!p || !w)
    return;
  c.setOutput(0, root(c, buildPool<SumPoolOp>(c, absPow(c, x, *p), *w), *p));
}

/// The spatial axes [2, rank) of a global pool's input.
std::optional<SmallVector<int64_t>> spatialAxes(NodeContext &c, Value x) {
  if (!x)
    return std::nullopt;
  int64_t rank = typeOf(x).getRank();
  if (rank < 2) {
    c.error() << "input must have rank 2 or more (N, C, spatial...), got "
              << typeOf(x);
    return std::nullopt;
  }
  return llvm::to_vector(llvm::seq<int64_t>(2, rank));
}

void globalAveragePoolRule(NodeContext &c) {
  Value x = c.input(0);
  if (auto axes = spatialAxes(c, x))
    c.setOutput(0, c.mean(x, *axes, true));
}

void globalMaxPoolRule(NodeContext &c) {
  Value x = c.input(0);
  if (auto axes = spatialAxes(c, x))
    c.setOutput(0, c.reduce<ReduceMaxOp>(x, *axes, true));
}

void globalLpPoolRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<double> p = lpNorm(c);
  std::optional<SmallVector<int64_t>> axes = spatialAxes(c, x);
  if (!p || !axes)
    return;
  Value sum = c.reduce<ReduceSumOp>(absPow(c, x, *p), *axes, true);
  c.setOutput(0, root(c, sum, *p));
}

} // namespace

void mlir::dlc::addPoolRules(OpRuleTable &t) {
  t["MaxPool"] = {maxPoolRule, 1};
  t["AveragePool"] = {averagePoolRule, 1};
  t["LpPool"] = {lpPoolRule, 2};
  t["GlobalAveragePool"] = {globalAveragePoolRule, 1};
  t["GlobalMaxPool"] = {globalMaxPoolRule, 1};
  t["GlobalLpPool"] = {globalLpPoolRule, 2};
}
