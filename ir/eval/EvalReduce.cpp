//===- EvalReduce.cpp - Reduction and scan rules of the reference evaluator ===//
//
// reduce_sum/prod/max/min, argmax/argmin, cumsum and top_k. Values
// accumulate in AccumT (double for every float type, 64-bit for integers,
// wrapping) in row-major order of the input, and are rounded to the storage
// type once at the end; a cumsum rounds each prefix once. Choices the spec
// leaves open:
//  - reducing an empty set gives the identity: 0, 1, the lowest value
//    (-inf for floats) for max and the highest (+inf) for min, as ONNX;
//  - argmax/argmin treat NaN as NumPy does: the first NaN along the axis is
//    the answer, also with select_last_index; an empty axis is an error;
//  - top_k orders NaN above every number (NumPy's sort puts it last, so
//    ONNX's reference returns it first for the largest and last for the
//    smallest), equal values by position, and always returns that order,
//    also where ONNX leaves it unspecified (sorted = 0).
//
//===----------------------------------------------------------------------===//

#include "ir/eval/EvalSupport.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

namespace {

enum class ReduceKind { Sum, Prod, Max, Min };

template <typename T, typename Fn>
void reduceInto(const Tensor &in, ArrayRef<int64_t> axes, Tensor &out,
                AccumT<T> identity, Fn fn) {
  // Walk the input with the output's keep-dims strides, zero on the
  // reduced axes, so every input element lands in its output slot.
  SmallVector<int64_t> keptShape(in.shape().begin(), in.shape().end());
  for (int64_t axis : axes)
    keptShape[axis] = 1;
  SmallVector<int64_t> walk = stridesOf(keptShape);
  for (int64_t axis : axes)
    walk[axis] = 0;
  std::vector<AccumT<T>> acc(out.numElements(), identity);
  const T *src = in.data<T>();
  forEachOffset<1>(in.shape(), {ArrayRef<int64_t>(walk)}, {0},
                   [&](const std::array<int64_t, 1> &slot) {
                     acc[slot[0]] = fn(acc[slot[0]], toAccum(*src++));
                   });
  T *dst = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i)
    dst[i] = fromAccum<T>(acc[i]);
}

/// Sizes of the dimensions before, at and after `axis`: the layout every
/// single-axis rule (argmax, cumsum) walks as [outer, size, inner].
struct AxisSplit {
  int64_t outer, size, inner;
};
AxisSplit splitAt(ArrayRef<int64_t> shape, size_t axis) {
  return {productOf(shape, 0, axis), shape[axis],
          productOf(shape, axis + 1, shape.size())};
}

} // namespace

LogicalResult eval::evalReduce(Operation *op, ArrayRef<int64_t> axes,
                               Operands operands, Results &results) {
  const Tensor &in = operands[0];
  Tensor out = resultTensor(op);
  ReduceKind kind = isa<ReduceSumOp>(op)    ? ReduceKind::Sum
                    : isa<ReduceProdOp>(op) ? ReduceKind::Prod
                    : isa<ReduceMaxOp>(op)  ? ReduceKind::Max
                                            : ReduceKind::Min;
  LogicalResult status =
      visitDType(in.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        using A = AccumT<T>;
        if constexpr (!kNumericDomain<A>) {
          return unsupportedType(op, in.dtype());
        } else {
          switch (kind) {
          case ReduceKind::Sum:
            reduceInto<T>(in, axes, out, A(0), AddFn{});
            break;
          case ReduceKind::Prod:
            reduceInto<T>(in, axes, out, A(1), MulFn{});
            break;
          case ReduceKind::Max:
            reduceInto<T>(in, axes, out, toAccum(lowestOf<T>()), MaxFn{});
            break;
          case ReduceKind::Min:
            reduceInto<T>(in, axes, out, toAccum(highestOf<T>()), MinFn{});
            break;
          }
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalArgReduce(Operation *op, int64_t axis,
                                  bool selectLast, Operands operands,
                                  Results &results) {
  const Tensor &in = operands[0];
  bool isMax = isa<ArgMaxOp>(op);
  AxisSplit split = splitAt(in.shape(), axis);
  if (split.size == 0 && split.outer * split.inner > 0)
    return op->emitOpError() << "has no element to choose along axis "
                             << axis << " of size 0";
  Tensor out = resultTensor(op);
  int64_t *dst = out.data<int64_t>();
  LogicalResult status =
      visitDType(in.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        using C = ComputeT<T>;
        if constexpr (!kNumericDomain<C>) {
          return unsupportedType(op, in.dtype());
        } else {
          const T *src = in.data<T>();
          for (int64_t o = 0; o < split.outer; ++o) {
            for (int64_t i = 0; i < split.inner; ++i) {
              const T *line = src + o * split.size * split.inner + i;
              int64_t best = 0;
              C bestValue = toCompute(line[0]);
              for (int64_t k = 1; k < split.size && !isNaN(bestValue); ++k) {
                C value = toCompute(line[k * split.inner]);
                bool better = isNaN(value) ||
                              (isMax ? value > bestValue : value < bestValue);
                if (better || (selectLast && value == bestValue)) {
                  best = k;
                  bestValue = value;
                }
              }
              *dst++ = best;
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

LogicalResult eval::evalCumSum(CumSumOp op, Operands operands,
                               Results &results) {
  const Tensor &in = operands[0];
  Tensor out = resultTensor(op);
  AxisSplit split = splitAt(in.shape(), static_cast<int64_t>(op.getAxis()));
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  LogicalResult status =
      visitDType(in.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        using A = AccumT<T>;
        if constexpr (!kNumericDomain<A>) {
          return unsupportedType(op, in.dtype());
        } else {
          const T *src = in.data<T>();
          T *dst = out.data<T>();
          for (int64_t o = 0; o < split.outer; ++o) {
            for (int64_t i = 0; i < split.inner; ++i) {
              int64_t base = o * split.size * split.inner + i;
              A sum = 0;
              for (int64_t step = 0; step < split.size; ++step) {
                int64_t k = reverse ? split.size - 1 - step : step;
                int64_t at = base + k * split.inner;
                A value = toAccum(src[at]);
                if (!exclusive)
                  sum = wrapAdd(sum, value);
                dst[at] = fromAccum<T>(sum);
                if (exclusive)
                  sum = wrapAdd(sum, value);
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

LogicalResult eval::evalTopK(TopKOp op, Operands operands, Results &results) {
  const Tensor &in = operands[0];
  AxisSplit split = splitAt(in.shape(), static_cast<int64_t>(op.getAxis()));
  int64_t k = static_cast<int64_t>(op.getK());
  bool largest = op.getLargest();
  Tensor values = resultTensor(op, 0), indices = resultTensor(op, 1);
  LogicalResult status =
      visitDType(in.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        using C = ComputeT<T>;
        if constexpr (!kNumericDomain<C>) {
          return unsupportedType(op, in.dtype());
        } else {
          const T *src = in.data<T>();
          T *valueOut = values.data<T>();
          int64_t *indexOut = indices.data<int64_t>();
          // One line along the axis at a time: its values in the compute
          // domain and the positions, of which the first k are sorted.
          std::vector<C> line(split.size);
          std::vector<int64_t> order(split.size);
          // A strict total order, so the result does not depend on the
          // sorting algorithm: NaN above every number, ties by position.
          auto before = [&](int64_t a, int64_t b) {
            C va = line[a], vb = line[b];
            bool nanA = isNaN(va), nanB = isNaN(vb);
            if (nanA != nanB)
              return largest ? nanA : nanB;
            if (!nanA && va != vb)
              return largest ? va > vb : va < vb;
            return a < b;
          };
          for (int64_t o = 0; o < split.outer; ++o) {
            for (int64_t i = 0; i < split.inner; ++i) {
              const T *from = src + o * split.size * split.inner + i;
              for (int64_t j = 0; j < split.size; ++j)
                line[j] = toCompute(from[j * split.inner]);
              std::iota(order.begin(), order.end(), int64_t(0));
              std::partial_sort(order.begin(), order.begin() + k, order.end(),
                                before);
              int64_t to = o * k * split.inner + i;
              for (int64_t r = 0; r < k; ++r) {
                valueOut[to + r * split.inner] =
                    from[order[r] * split.inner];
                indexOut[to + r * split.inner] = order[r];
              }
            }
          }
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return success();
}
