//===- EvalNN.cpp - Matmul, convolution and pooling in the evaluator ------===//
//
// The three window-and-contraction rules. All accumulate in AccumT (double
// for float types, so a float32 product is exact and only the sum rounds)
// and round to the storage type once per output element. Operands are
// widened to AccumT once up front; the inner loops then run on plain arrays.
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
