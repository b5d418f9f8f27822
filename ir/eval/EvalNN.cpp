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
// Positions that fall in the padding, or between the elements of a dilated
// input (input_dilation), are simply absent: padding adds zero to a sum and
// never wins a maximum. A max pool whose window sees no input element yields
// the lowest value (-inf for floats). Summation order: for conv, input
// channel outer and window position (row-major) inner; for matmul, k
// ascending; for pools, window position in row-major order.
//
// The gradient ops (conv_grad_input, conv_grad_filter, max_pool_grad) walk
// the taps of the forward op they differentiate and scatter each product
// back to where the forward read it, into a float64 buffer that is rounded
// once at the end. They are direct loops, written for clarity: the
// evaluator is the oracle the fast kernels are checked against.
//
//===----------------------------------------------------------------------===//

#include "ir/eval/EvalSupport.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

namespace {

/// Widens a tensor to its accumulation domain.
template <typename T> std::vector<AccumT<T>> widen(const Tensor &tensor) {
  const T *src = tensor.data<T>();
  std::vector<AccumT<T>> values(tensor.numElements());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = toAccum(src[i]);
  return values;
}

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
  ArrayRef<int64_t> stride, padLow, dilation, inputDilation;
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
  // Window element k reads padded, dilated position p = y*s + k*dil - pad,
  // which is input element p / idil when 0 <= p <= (in-1)*idil and p is a
  // multiple of idil.
  int64_t s = g.stride[d], dil = g.dilation[d], pad = g.padLow[d];
  int64_t idil = g.inputDilation[d], in = g.inSize[d], w = g.windowSize[d];
  int64_t origin = y * s - pad;
  SmallVector<std::pair<int64_t, int64_t>> taps;
  if (in == 0)
    return taps;
  if (idil == 1) {
    int64_t kLo = std::max<int64_t>(0, ceilDivSigned(-origin, dil));
    int64_t kHi = std::min<int64_t>(w - 1, floorDiv(in - 1 - origin, dil));
    for (int64_t k = kLo; k <= kHi; ++k)
      taps.push_back({k, origin + k * dil});
    return taps;
  }
  // Dilated input: visit the input elements the window can reach.
  int64_t last = origin + (w - 1) * dil;
  int64_t xLo = std::max<int64_t>(0, ceilDivSigned(origin, idil));
  int64_t xHi = std::min<int64_t>(in - 1, floorDiv(last, idil));
  for (int64_t x = xLo; x <= xHi; ++x) {
    int64_t offset = x * idil - origin;
    if (offset % dil == 0)
      taps.push_back({offset / dil, x});
  }
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

} // namespace

LogicalResult eval::evalMatmul(MatmulOp op, Operands operands,
                               Results &results) {
  const Tensor &lhs = operands[0], &rhs = operands[1];
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> outShape = out.shape();
  size_t batchRank = outShape.size() - 2;
  int64_t m = outShape[batchRank], n = outShape[batchRank + 1];
  int64_t k = lhs.shape().back();
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
  LogicalResult status =
      visitDType(out.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        using A = AccumT<T>;
        if constexpr (!kNumericDomain<A>) {
          return unsupportedType(op, out.dtype());
        } else {
          std::vector<A> a = widen<T>(lhs), b = widen<T>(rhs);
          std::vector<A> row(n);
          T *dst = out.data<T>();
          forEachOffset<2>(
              batch, {ArrayRef<int64_t>(lhsBatch), ArrayRef<int64_t>(rhsBatch)},
              {0, 0}, [&](const std::array<int64_t, 2> &base) {
                for (int64_t i = 0; i < m; ++i) {
                  std::fill(row.begin(), row.end(), A(0));
                  for (int64_t p = 0; p < k; ++p) {
                    A left = a[base[0] + i * k + p];
                    const A *right = &b[base[1] + p * n];
                    for (int64_t j = 0; j < n; ++j)
                      row[j] = wrapAdd(row[j], wrapMul(left, right[j]));
                  }
                  for (int64_t j = 0; j < n; ++j)
                    *dst++ = fromAccum<T>(row[j]);
                }
              });
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalConv(ConvOp op, Operands operands, Results &results) {
  const Tensor &input = operands[0], &filter = operands[1];
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> inShape = input.shape(), filterShape = filter.shape(),
                    outShape = out.shape();
  WindowTaps taps = buildWindowTaps(
      {inShape.drop_front(2), filterShape.drop_front(2), outShape.drop_front(2),
       op.getStride(), op.getPadLow(), op.getDilation(),
       op.getInputDilation()});
  int64_t batch = inShape[0], channels = inShape[1];
  int64_t outChannels = outShape[1];
  int64_t groups = static_cast<int64_t>(op.getGroups());
  int64_t groupChannels = channels / groups;
  int64_t groupOutChannels = outChannels / groups;
  int64_t inSpatial = productOf(inShape, 2, inShape.size());
  int64_t windowSize = productOf(filterShape, 2, filterShape.size());
  int64_t outSpatial = productOf(outShape, 2, outShape.size());
  LogicalResult status =
      visitDType(out.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        using A = AccumT<T>;
        if constexpr (!kNumericDomain<A>) {
          return unsupportedType(op, out.dtype());
        } else {
          std::vector<A> x = widen<T>(input), w = widen<T>(filter);
          T *dst = out.data<T>();
          for (int64_t b = 0; b < batch; ++b) {
            for (int64_t o = 0; o < outChannels; ++o) {
              int64_t firstChannel = (o / groupOutChannels) * groupChannels;
              for (int64_t y = 0; y < outSpatial; ++y) {
                A sum = 0;
                for (int64_t c = 0; c < groupChannels; ++c) {
                  const A *xs =
                      &x[(b * channels + firstChannel + c) * inSpatial];
                  const A *ws = &w[(o * groupChannels + c) * windowSize];
                  for (int64_t t = taps.begin[y]; t < taps.begin[y + 1]; ++t)
                    sum = wrapAdd(sum, wrapMul(xs[taps.input[t]],
                                               ws[taps.window[t]]));
                }
                *dst++ = fromAccum<T>(sum);
              }
            }
          }
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalPool(Operation *op, ArrayRef<int64_t> window,
                             ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padLow,
                             ArrayRef<int64_t> dilation, Operands operands,
                             Results &results) {
  const Tensor &input = operands[0];
  Tensor out = resultTensor(op);
  ArrayRef<int64_t> inShape = input.shape(), outShape = out.shape();
  SmallVector<int64_t> noInputDilation(window.size(), 1);
  WindowTaps taps =
      buildWindowTaps({inShape.drop_front(2), window, outShape.drop_front(2),
                       stride, padLow, dilation, noInputDilation});
  int64_t planes = inShape[0] * inShape[1];
  int64_t inSpatial = productOf(inShape, 2, inShape.size());
  int64_t outSpatial = productOf(outShape, 2, outShape.size());
  bool isMax = isa<MaxPoolOp>(op);
  LogicalResult status =
      visitDType(out.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        using A = AccumT<T>;
        if constexpr (!kNumericDomain<A>) {
          return unsupportedType(op, out.dtype());
        } else {
          const T *src = input.data<T>();
          T *dst = out.data<T>();
          A identity = isMax ? toAccum(lowestOf<T>()) : A(0);
          for (int64_t plane = 0; plane < planes; ++plane) {
            const T *xs = src + plane * inSpatial;
            for (int64_t y = 0; y < outSpatial; ++y) {
              A acc = identity;
              for (int64_t t = taps.begin[y]; t < taps.begin[y + 1]; ++t) {
                A value = toAccum(xs[taps.input[t]]);
                acc = isMax ? MaxFn{}(acc, value) : wrapAdd(acc, value);
              }
              *dst++ = fromAccum<T>(acc);
            }
          }
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

//===----------------------------------------------------------------------===//
// Gradients of conv and max_pool
//===----------------------------------------------------------------------===//

namespace {

/// The spatial sizes and element counts of a convolution `y = conv(x, w)`
/// (input_dilation all ones) and the taps of its windows, shared by both
/// of its gradient ops.
struct ConvGeometry {
  int64_t batch, channels, outChannels, groupChannels, groupOutChannels;
  int64_t inSpatial, windowSize, outSpatial;
  WindowTaps taps;
};

template <typename GradOp>
ConvGeometry convGeometry(GradOp op, ArrayRef<int64_t> xShape,
                          ArrayRef<int64_t> wShape, ArrayRef<int64_t> yShape) {
  SmallVector<int64_t> noInputDilation(xShape.size() - 2, 1);
  ConvGeometry g;
  g.taps = buildWindowTaps({xShape.drop_front(2), wShape.drop_front(2),
                            yShape.drop_front(2), op.getStride(),
                            op.getPadLow(), op.getDilation(), noInputDilation});
  int64_t groups = static_cast<int64_t>(op.getGroups());
  g.batch = xShape[0];
  g.channels = xShape[1];
  g.outChannels = yShape[1];
  g.groupChannels = g.channels / groups;
  g.groupOutChannels = g.outChannels / groups;
  g.inSpatial = productOf(xShape, 2, xShape.size());
  g.windowSize = productOf(wShape, 2, wShape.size());
  g.outSpatial = productOf(yShape, 2, yShape.size());
  return g;
}

/// Rounds a float64 accumulation buffer into `out`, once per element.
template <typename T>
void storeAccumulated(Tensor &out, const std::vector<AccumT<T>> &values) {
  T *dst = out.data<T>();
  for (size_t i = 0; i < values.size(); ++i)
    dst[i] = fromAccum<T>(values[i]);
}

/// Calls `body(TypeTag<T>{})` for a float storage type T, or reports the
/// type (the gradient ops' verifiers admit floats only).
template <typename Body>
LogicalResult visitFloatType(Operation *op, DType dtype, Body &&body) {
  return visitDType(dtype, [&](auto tag) -> LogicalResult {
    using T = typename decltype(tag)::type;
    if constexpr (!kFloatDomain<AccumT<T>>) {
      return unsupportedType(op, dtype);
    } else {
      body(tag);
      return success();
    }
  });
}

} // namespace

LogicalResult eval::evalConvGradInput(ConvGradInputOp op, Operands operands,
                                      Results &results) {
  // dx[b, c, i] = sum over (o in c's group, y, k) with the forward's tap
  // (k, i) at output y of w[o, c - first channel, k] * dy[b, o, y].
  const Tensor &gradOutput = operands[0], &filter = operands[1];
  Tensor out = resultTensor(op);
  ConvGeometry g =
      convGeometry(op, out.shape(), filter.shape(), gradOutput.shape());
  LogicalResult status = visitFloatType(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> dy = widen<T>(gradOutput), w = widen<T>(filter);
    std::vector<A> dx(out.numElements(), A(0));
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t o = 0; o < g.outChannels; ++o) {
        int64_t firstChannel = (o / g.groupOutChannels) * g.groupChannels;
        const A *dys = &dy[(b * g.outChannels + o) * g.outSpatial];
        for (int64_t c = 0; c < g.groupChannels; ++c) {
          A *dxs = &dx[(b * g.channels + firstChannel + c) * g.inSpatial];
          const A *ws = &w[(o * g.groupChannels + c) * g.windowSize];
          for (int64_t y = 0; y < g.outSpatial; ++y)
            for (int64_t t = g.taps.begin[y]; t < g.taps.begin[y + 1]; ++t)
              dxs[g.taps.input[t]] += ws[g.taps.window[t]] * dys[y];
        }
      }
    }
    storeAccumulated<T>(out, dx);
  });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalConvGradFilter(ConvGradFilterOp op, Operands operands,
                                       Results &results) {
  // dw[o, c, k] = sum over (b, y) with the forward's tap (k, i) at output y
  // of x[b, first channel + c, i] * dy[b, o, y].
  const Tensor &input = operands[0], &gradOutput = operands[1];
  Tensor out = resultTensor(op);
  ConvGeometry g =
      convGeometry(op, input.shape(), out.shape(), gradOutput.shape());
  LogicalResult status = visitFloatType(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> x = widen<T>(input), dy = widen<T>(gradOutput);
    std::vector<A> dw(out.numElements(), A(0));
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t o = 0; o < g.outChannels; ++o) {
        int64_t firstChannel = (o / g.groupOutChannels) * g.groupChannels;
        const A *dys = &dy[(b * g.outChannels + o) * g.outSpatial];
        for (int64_t c = 0; c < g.groupChannels; ++c) {
          const A *xs = &x[(b * g.channels + firstChannel + c) * g.inSpatial];
          A *dws = &dw[(o * g.groupChannels + c) * g.windowSize];
          for (int64_t y = 0; y < g.outSpatial; ++y)
            for (int64_t t = g.taps.begin[y]; t < g.taps.begin[y + 1]; ++t)
              dws[g.taps.window[t]] += xs[g.taps.input[t]] * dys[y];
        }
      }
    }
    storeAccumulated<T>(out, dw);
  });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
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
  ArrayRef<int64_t> inShape = input.shape(), outShape = gradOutput.shape();
  SmallVector<int64_t> noInputDilation(inShape.size() - 2, 1);
  WindowTaps taps = buildWindowTaps(
      {inShape.drop_front(2), op.getWindow(), outShape.drop_front(2),
       op.getStride(), op.getPadLow(), op.getDilation(), noInputDilation});
  int64_t planes = inShape[0] * inShape[1];
  int64_t inSpatial = productOf(inShape, 2, inShape.size());
  int64_t outSpatial = productOf(outShape, 2, outShape.size());
  LogicalResult status = visitFloatType(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> x = widen<T>(input), dy = widen<T>(gradOutput);
    std::vector<A> dx(out.numElements(), A(0));
    for (int64_t plane = 0; plane < planes; ++plane) {
      const A *xs = &x[plane * inSpatial];
      const A *dys = &dy[plane * outSpatial];
      A *dxs = &dx[plane * inSpatial];
      for (int64_t y = 0; y < outSpatial; ++y) {
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
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}
