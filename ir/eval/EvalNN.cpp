//===- EvalNN.cpp - Matmul, convolution and pooling in the evaluator ------===//
//
// The window-and-contraction rules and their gradients. All accumulate in
// AccumT (double for float types, so a float32 product is exact and only the
// sum rounds) and round to the storage type once per output element.
// Operands are widened to AccumT once up front; the inner loops then run on
// plain arrays.
//
// Convolution and pooling share WindowTaps: for every output position, the
// list of (window element, input element) pairs that land inside the input.
// Positions that fall in the padding are simply absent: padding adds zero to
// a sum and never wins a maximum. A max pool whose window sees no input element
// yields the lowest value (-inf for floats). Summation order: for conv, input
// channel outer and window position (row-major) inner; for matmul, k
// ascending; for pools, window position in row-major order.
//
// The gradient ops (conv_grad_input, conv_grad_filter, max_pool_grad) walk
// the taps of the forward op they differentiate and scatter each product
// back to where the forward read it, into a float64 buffer that is rounded
// once at the end; conv and its two gradients take one walk,
// forEachConvProduct. They are direct loops, written for clarity: the
// evaluator is the oracle the fast kernels are checked against.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeUtils.h"
#include "ir/eval/EvalSupport.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

namespace {

/// The taps of a sliding window over the spatial dimensions: output
/// position y (flat, row-major over `outSize`) reads the pairs
/// [begin[y], begin[y + 1]) of (window[t], input[t]), flat indices into
/// the window and into one input channel's spatial block.
struct WindowTaps {
  std::vector<int64_t> begin;
  std::vector<int64_t> window;
  std::vector<int64_t> input;
};

struct WindowGeometry {
  ArrayRef<int64_t> inSize, windowSize, outSize;
  ArrayRef<int64_t> stride, padLow, dilation;
};

/// Floor and ceiling division for b > 0.
int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceilDivSigned(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// The (window index, input index) pairs of one dimension that output
/// coordinate y reads, in ascending window order. Computed from the ranges
/// rather than by visiting every window position, so the cost is the number
/// of taps that land in the input, whatever the window and padding sizes.
SmallVector<std::pair<int64_t, int64_t>>
dimensionTaps(const WindowGeometry &g, size_t d, int64_t y) {
  // Window element k reads padded position p = y*s + k*dil - pad, which is
  // input element p when 0 <= p < in.
  int64_t s = g.stride[d], dil = g.dilation[d], pad = g.padLow[d];
  int64_t in = g.inSize[d], w = g.windowSize[d];
  int64_t origin = y * s - pad;
  SmallVector<std::pair<int64_t, int64_t>> taps;
  int64_t kLo = std::max<int64_t>(0, ceilDivSigned(-origin, dil));
  int64_t kHi = std::min<int64_t>(w - 1, floorDiv(in - 1 - origin, dil));
  for (int64_t k = kLo; k <= kHi; ++k)
    taps.push_back({k, origin + k * dil});
  return taps;
}

WindowTaps buildWindowTaps(const WindowGeometry &g) {
  size_t rank = g.inSize.size();
  SmallVector<int64_t> inStrides = stridesOf(g.inSize);
  SmallVector<int64_t> windowStrides = stridesOf(g.windowSize);
  // Per dimension and output coordinate: that dimension's taps.
  SmallVector<SmallVector<SmallVector<std::pair<int64_t, int64_t>>>> perDim(
      rank);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t y = 0; y < g.outSize[d]; ++y)
      perDim[d].push_back(dimensionTaps(g, d, y));

  int64_t outCount = productOf(g.outSize, 0, rank);
  WindowTaps taps;
  taps.begin.reserve(outCount + 1);
  SmallVector<int64_t> y(rank), pick(rank);
  for (int64_t yFlat = 0; yFlat < outCount; ++yFlat) {
    taps.begin.push_back(taps.window.size());
    int64_t rest = yFlat;
    bool empty = false;
    for (size_t d = rank; d-- > 0;) {
      y[d] = rest % g.outSize[d];
      rest /= g.outSize[d];
      empty |= perDim[d][y[d]].empty();
    }
    if (empty)
      continue;
    // The product of the per-dimension taps, in row-major window order.
    std::fill(pick.begin(), pick.end(), 0);
    while (true) {
      int64_t window = 0, input = 0;
      for (size_t d = 0; d < rank; ++d) {
        auto [k, x] = perDim[d][y[d]][pick[d]];
        window += k * windowStrides[d];
        input += x * inStrides[d];
      }
      taps.window.push_back(window);
      taps.input.push_back(input);
      size_t d = rank;
      while (d-- > 0 && ++pick[d] == static_cast<int64_t>(perDim[d][y[d]].size()))
        pick[d] = 0;
      if (d == static_cast<size_t>(-1))
        break;
    }
  }
  taps.begin.push_back(taps.window.size());
  return taps;
}

/// The sizes and element counts of a convolution `y = conv(x, w)` and the
/// taps of its windows, shared by conv and its two gradient ops. With
/// `channelsLast` the tensors are [N, s..., C] and [O, k..., C / groups].
struct ConvGeometry {
  int64_t batch, channels, outChannels, groupChannels, groupOutChannels;
  int64_t inSpatial, windowSize, outSpatial;
  bool channelsLast;
  WindowTaps taps;

  /// Flat indices of x[b, c, position], w[o, c, position], y[b, o, position]
  /// (c within o's group for w).
  int64_t xIndex(int64_t b, int64_t c, int64_t position) const {
    return channelsLast ? (b * inSpatial + position) * channels + c
                        : (b * channels + c) * inSpatial + position;
  }
  int64_t wIndex(int64_t o, int64_t c, int64_t position) const {
    return channelsLast ? (o * windowSize + position) * groupChannels + c
                        : (o * groupChannels + c) * windowSize + position;
  }
  int64_t yIndex(int64_t b, int64_t o, int64_t position) const {
    return channelsLast ? (b * outSpatial + position) * outChannels + o
                        : (b * outChannels + o) * outSpatial + position;
  }
};

/// `op`'s geometry from the shapes of its x, w and y, in its layout.
template <typename OpT>
ConvGeometry convGeometry(OpT op, ArrayRef<int64_t> xStored,
                          ArrayRef<int64_t> wStored, ArrayRef<int64_t> yStored) {
  bool channelsLast = op.getChannelsLast();
  auto channelsFirst = [&](ArrayRef<int64_t> shape) {
    return channelsLast ? channelsFirstShape(shape)
                        : SmallVector<int64_t>(shape);
  };
  SmallVector<int64_t> xShape = channelsFirst(xStored),
                       wShape = channelsFirst(wStored),
                       yShape = channelsFirst(yStored);
  ConvGeometry g;
  g.taps = buildWindowTaps({ArrayRef<int64_t>(xShape).drop_front(2),
                            ArrayRef<int64_t>(wShape).drop_front(2),
                            ArrayRef<int64_t>(yShape).drop_front(2),
                            op.getStride(), op.getPadLow(), op.getDilation()});
  int64_t groups = static_cast<int64_t>(op.getGroups());
  g.batch = xShape[0];
  g.channels = xShape[1];
  g.outChannels = yShape[1];
  g.groupChannels = g.channels / groups;
  g.groupOutChannels = g.outChannels / groups;
  g.inSpatial = productOf(xShape, 2, xShape.size());
  g.windowSize = productOf(wShape, 2, wShape.size());
  g.outSpatial = productOf(yShape, 2, yShape.size());
  g.channelsLast = channelsLast;
  return g;
}

/// Calls `product(xi, wi, yi)` for every product x[xi] * w[wi] that output
/// element y[yi] of the convolution sums (flat indices), in the summation
/// order: batch, output channel, output position, then input channel of the
/// group and window position. The gradient ops take the same walk, so each
/// element of dx and dw also sums its terms in one fixed order, and the
/// channels-last layout sums the same terms in the same order.
template <typename Fn>
void forEachConvProduct(const ConvGeometry &g, Fn &&product) {
  const WindowTaps &taps = g.taps;
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t o = 0; o < g.outChannels; ++o) {
      int64_t firstChannel = (o / g.groupOutChannels) * g.groupChannels;
      for (int64_t y = 0; y < g.outSpatial; ++y) {
        int64_t yi = g.yIndex(b, o, y);
        for (int64_t c = 0; c < g.groupChannels; ++c) {
          for (int64_t t = taps.begin[y]; t < taps.begin[y + 1]; ++t)
            product(g.xIndex(b, firstChannel + c, taps.input[t]),
                    g.wIndex(o, c, taps.window[t]), yi);
        }
      }
    }
  }
}

/// The planes (batch x channel) of a pool from `xShape` to `yShape`, their
/// sizes and the taps of its windows, shared by the pools and max_pool_grad.
struct PoolGeometry {
  int64_t planes, inSpatial, outSpatial;
  WindowTaps taps;
};

PoolGeometry poolGeometry(ArrayRef<int64_t> xShape, ArrayRef<int64_t> yShape,
                          ArrayRef<int64_t> window, ArrayRef<int64_t> stride,
                          ArrayRef<int64_t> padLow,
                          ArrayRef<int64_t> dilation) {
  return {xShape[0] * xShape[1], productOf(xShape, 2, xShape.size()),
          productOf(yShape, 2, yShape.size()),
          buildWindowTaps({xShape.drop_front(2), window, yShape.drop_front(2),
                           stride, padLow, dilation})};
}

/// Fills `out` by `body(TypeTag<T>{})`, T its storage type, and appends it
/// to `results`; reports a type outside `D` instead.
template <Domain D, typename Body>
LogicalResult fillResult(Operation *op, Tensor &out, Results &results,
                         Body &&body) {
  if (failed(visitDomain<D>(op, out.dtype(), std::forward<Body>(body))))
    return failure();
  results.push_back(std::move(out));
  return success();
}

} // namespace

LogicalResult eval::evalMatmul(Operation *op, Operands operands,
                               bool lhsTransposed, bool rhsTransposed,
                               Results &results) {
  const Tensor &lhs = operands[0], &rhs = operands[1];
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> outShape = out.shape();
  size_t batchRank = outShape.size() - 2;
  int64_t m = outShape[batchRank], n = outShape[batchRank + 1];
  int64_t k =
      lhsTransposed ? lhs.shape()[lhs.shape().size() - 2] : lhs.shape().back();
  ArrayRef<int64_t> batch = outShape.take_front(batchRank);
  // Batch strides in units of whole matrices, then in elements.
  SmallVector<int64_t> lhsBatch = broadcastStrides(
      ArrayRef<int64_t>(lhs.shape()).drop_back(2), batch);
  SmallVector<int64_t> rhsBatch = broadcastStrides(
      ArrayRef<int64_t>(rhs.shape()).drop_back(2), batch);
  for (int64_t &s : lhsBatch)
    s *= m * k;
  for (int64_t &s : rhsBatch)
    s *= k * n;
  // Element strides of a row and a column of each matrix as multiplied: a
  // transposed operand is stored [k, m] (lhs) or [n, k] (rhs).
  int64_t lhsRow = lhsTransposed ? 1 : k, lhsColumn = lhsTransposed ? m : 1;
  int64_t rhsRow = rhsTransposed ? 1 : n, rhsColumn = rhsTransposed ? k : 1;
  return fillResult<Domain::Numeric>(op, out, results, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> a = widen<T>(lhs), b = widen<T>(rhs);
    std::vector<A> row(n);
    T *dst = out.data<T>();
    forEachOffset<2>(
        batch, {ArrayRef<int64_t>(lhsBatch), ArrayRef<int64_t>(rhsBatch)},
        {0, 0}, [&](const std::array<int64_t, 2> &base) {
          for (int64_t i = 0; i < m; ++i) {
            std::fill(row.begin(), row.end(), A(0));
            for (int64_t p = 0; p < k; ++p) {
              A left = a[base[0] + i * lhsRow + p * lhsColumn];
              const A *right = &b[base[1] + p * rhsRow];
              for (int64_t j = 0; j < n; ++j)
                row[j] = wrapAdd(row[j], wrapMul(left, right[j * rhsColumn]));
            }
            for (int64_t j = 0; j < n; ++j)
              *dst++ = fromAccum<T>(row[j]);
          }
        });
  });
}

LogicalResult eval::evalPlanMatmul(PlanMatmulOp op, Operands operands,
                                   Results &results) {
  if (failed(evalMatmul(op, operands.take_front(2), op.getLhsTransposed(),
                        op.getRhsTransposed(), results)))
    return failure();
  if (op.getEpilogue() == MatmulEpilogue::none)
    return success();
  // The epilogue as the ops it replaced computed it: the rounded product
  // plus the bias, rounded, then max(sum, 0).
  Tensor &out = results.back();
  const Tensor &bias = operands[2];
  int64_t n = out.shape().back();
  bool relu = op.getEpilogue() == MatmulEpilogue::bias_relu;
  return visitDomain<Domain::Numeric>(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeT<T>;
    T *y = out.data<T>();
    const T *b = bias.data<T>();
    for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
      T sum = fromCompute<T>(toCompute(y[i]) + toCompute(b[i % n]));
      y[i] = relu && toCompute(sum) < C(0) ? fromCompute<T>(C(0)) : sum;
    }
  });
}

namespace {

/// y = conv(x, w) for `op`, dlc.conv or a forward dlc.plan.conv.
template <typename OpT>
LogicalResult evalConvForward(OpT op, const Tensor &input, const Tensor &filter,
                              Results &results) {
  Tensor out = resultTensor(op);
  ConvGeometry g = convGeometry(op, input.shape(), filter.shape(), out.shape());
  return fillResult<Domain::Numeric>(op, out, results, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> x = widen<T>(input), w = widen<T>(filter);
    std::vector<A> y(out.numElements(), A(0));
    forEachConvProduct(g, [&](int64_t xi, int64_t wi, int64_t yi) {
      y[yi] = wrapAdd(y[yi], wrapMul(x[xi], w[wi]));
    });
    storeAccumulated<T>(out, y);
  });
}

} // namespace

LogicalResult eval::evalConv(ConvOp op, Operands operands, Results &results) {
  return evalConvForward(op, operands[0], operands[1], results);
}

LogicalResult eval::evalPool(Operation *op, ArrayRef<int64_t> window,
                             ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padLow,
                             ArrayRef<int64_t> dilation, Operands operands,
                             Results &results) {
  const Tensor &input = operands[0];
  Tensor out = resultTensor(op);
  PoolGeometry g = poolGeometry(input.shape(), out.shape(), window, stride,
                                padLow, dilation);
  const WindowTaps &taps = g.taps;
  bool isMax = isa<MaxPoolOp>(op);
  return fillResult<Domain::Numeric>(op, out, results, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    const T *src = input.data<T>();
    T *dst = out.data<T>();
    A identity = isMax ? toAccum(lowestOf<T>()) : A(0);
    for (int64_t plane = 0; plane < g.planes; ++plane) {
      const T *xs = src + plane * g.inSpatial;
      for (int64_t y = 0; y < g.outSpatial; ++y) {
        A acc = identity;
        for (int64_t t = taps.begin[y]; t < taps.begin[y + 1]; ++t) {
          A value = toAccum(xs[taps.input[t]]);
          acc = isMax ? MaxFn{}(acc, value) : wrapAdd(acc, value);
        }
        *dst++ = fromAccum<T>(acc);
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// Gradients of conv and max_pool
//===----------------------------------------------------------------------===//

namespace {

/// The rule of conv_grad_input and conv_grad_filter: the forward
/// convolution's walk, adding each product's share dy[yi] * (the other
/// factor) to the gradient of the factor the op differentiates:
///   conv_grad_input(dy, w):  dx[xi] += w[wi] * dy[yi],
///   conv_grad_filter(x, dy): dw[wi] += x[xi] * dy[yi].
/// `factor` is w (`toInput`) or x, `gradOutput` dy; `op` is the gradient
/// op or a dlc.plan.conv of its kind.
template <bool toInput, typename OpT>
LogicalResult evalConvGrad(OpT op, const Tensor &factor,
                           const Tensor &gradOutput, Results &results) {
  Tensor out = resultTensor(op);
  ConvGeometry g =
      toInput
          ? convGeometry(op, out.shape(), factor.shape(), gradOutput.shape())
          : convGeometry(op, factor.shape(), out.shape(), gradOutput.shape());
  return fillResult<Domain::Float>(op, out, results, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> other = widen<T>(factor), dy = widen<T>(gradOutput);
    std::vector<A> grad(out.numElements(), A(0));
    forEachConvProduct(g, [&](int64_t xi, int64_t wi, int64_t yi) {
      if constexpr (toInput)
        grad[xi] += other[wi] * dy[yi];
      else
        grad[wi] += other[xi] * dy[yi];
    });
    storeAccumulated<T>(out, grad);
  });
}

} // namespace

LogicalResult eval::evalConvGradInput(ConvGradInputOp op, Operands operands,
                                      Results &results) {
  // dx[b, c, i] = sum over (o in c's group, y, k) with the forward's tap
  // (k, i) at output y of w[o, c - first channel, k] * dy[b, o, y].
  return evalConvGrad</*toInput=*/true>(op, /*factor=*/operands[1],
                                        /*gradOutput=*/operands[0], results);
}

LogicalResult eval::evalConvGradFilter(ConvGradFilterOp op, Operands operands,
                                       Results &results) {
  // dw[o, c, k] = sum over (b, y) with the forward's tap (k, i) at output y
  // of x[b, first channel + c, i] * dy[b, o, y].
  return evalConvGrad</*toInput=*/false>(op, /*factor=*/operands[0],
                                         /*gradOutput=*/operands[1], results);
}

LogicalResult eval::evalPlanConv(PlanConvOp op, Operands operands,
                                 Results &results) {
  // Every engine computes the convolution; the evaluator by definition.
  switch (op.getKind()) {
  case ConvKind::forward:
    return evalConvForward(op, operands[0], operands[1], results);
  case ConvKind::backward_data:
    return evalConvGrad</*toInput=*/true>(op, operands[1], operands[0],
                                          results);
  case ConvKind::backward_filter:
    return evalConvGrad</*toInput=*/false>(op, operands[0], operands[1],
                                           results);
  }
  llvm_unreachable("a ConvKind");
}

LogicalResult eval::evalMaxPoolGrad(MaxPoolGradOp op, Operands operands,
                                    Results &results) {
  // Each window's gradient goes to the element the forward max picked as
  // PyTorch's kernels pick it: scanning the taps in row-major window order,
  // a value replaces the current choice when it is greater or NaN. Ties
  // therefore go to the first maximum, a NaN to the last NaN, and a window
  // of -inf values to its first tap. A window that sees only padding
  // routes nowhere.
  const Tensor &input = operands[0], &gradOutput = operands[1];
  Tensor out = resultTensor(op);
  PoolGeometry g =
      poolGeometry(input.shape(), gradOutput.shape(), op.getWindow(),
                   op.getStride(), op.getPadLow(), op.getDilation());
  const WindowTaps &taps = g.taps;
  return fillResult<Domain::Float>(op, out, results, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> x = widen<T>(input), dy = widen<T>(gradOutput);
    std::vector<A> dx(out.numElements(), A(0));
    for (int64_t plane = 0; plane < g.planes; ++plane) {
      const A *xs = &x[plane * g.inSpatial];
      const A *dys = &dy[plane * g.outSpatial];
      A *dxs = &dx[plane * g.inSpatial];
      for (int64_t y = 0; y < g.outSpatial; ++y) {
        int64_t first = taps.begin[y], last = taps.begin[y + 1];
        if (first == last)
          continue;
        int64_t chosen = taps.input[first];
        A best = xs[chosen];
        for (int64_t t = first + 1; t < last; ++t) {
          A value = xs[taps.input[t]];
          if (value > best || std::isnan(value)) {
            best = value;
            chosen = taps.input[t];
          }
        }
        dxs[chosen] += dys[y];
      }
    }
    storeAccumulated<T>(out, dx);
  });
}
