//===- EvalSupport.h - Shared machinery of the reference evaluator --------===//
//
// Private to ir/eval. The evaluator is written once per op, not once per
// element type: every rule is a template over the storage type T, reached
// through one dispatcher (visitDType). Arithmetic happens in two wider
// domains, so each rule states its precision once:
//  - ComputeT<T>, elementwise math: float for f16/bf16, double for f32/f64,
//    int64_t/uint64_t for integers, bool for i1;
//  - AccumT<T>, sums and products over many elements (reductions, cumsum,
//    matmul, conv, pools): double for every float type, else ComputeT<T>.
// A value goes back to storage rounded once (round to nearest even) or, for
// integers, wrapped modulo 2^bits. Elementwise and data-movement index
// walks use forEachOffset, an odometer that keeps one linear offset per
// operand, so they do no per-element division or allocation.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_EVAL_EVALSUPPORT_H
#define DLC_IR_EVAL_EVALSUPPORT_H

#include "ir/Dialect.h"
#include "ir/eval/Evaluator.h"

#include "llvm/Support/ErrorHandling.h"

#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace mlir::dlc::eval {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Carries a type into a generic lambda: `[](auto tag) { using T =
/// typename decltype(tag)::type; ... }`.
template <typename T> struct TypeTag {
  using type = T;
};

/// Calls `fn(TypeTag<T>{})` with T the storage type of `dtype`.
template <typename Fn> decltype(auto) visitDType(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::Bool: return fn(TypeTag<bool>{});
  case DType::I8: return fn(TypeTag<int8_t>{});
  case DType::I16: return fn(TypeTag<int16_t>{});
  case DType::I32: return fn(TypeTag<int32_t>{});
  case DType::I64: return fn(TypeTag<int64_t>{});
  case DType::U8: return fn(TypeTag<uint8_t>{});
  case DType::U16: return fn(TypeTag<uint16_t>{});
  case DType::U32: return fn(TypeTag<uint32_t>{});
  case DType::U64: return fn(TypeTag<uint64_t>{});
  case DType::F16: return fn(TypeTag<Half>{});
  case DType::BF16: return fn(TypeTag<BFloat16>{});
  case DType::F32: return fn(TypeTag<float>{});
  case DType::F64: return fn(TypeTag<double>{});
  }
  llvm_unreachable("DType is a closed enum");
}

/// Calls `fn(TypeTag<U>{})` with U the unsigned integer as wide as one
/// element: data movement only copies bits, so it needs four instances, not
/// thirteen.
template <typename Fn> decltype(auto) visitElementSize(size_t size, Fn &&fn) {
  switch (size) {
  case 1: return fn(TypeTag<uint8_t>{});
  case 2: return fn(TypeTag<uint16_t>{});
  case 4: return fn(TypeTag<uint32_t>{});
  default: return fn(TypeTag<uint64_t>{});
  }
}

template <typename T>
inline constexpr bool kIsHalfLike =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// The type elementwise math on storage type T happens in.
template <typename T>
using ComputeT = std::conditional_t<
    kIsHalfLike<T>, float,
    std::conditional_t<
        std::is_floating_point_v<T>, double,
        std::conditional_t<std::is_same_v<T, bool>, bool,
                           std::conditional_t<std::is_signed_v<T>, int64_t,
                                              uint64_t>>>>;

/// The type sums and products over storage type T accumulate in.
template <typename T>
using AccumT = std::conditional_t<std::is_floating_point_v<ComputeT<T>>,
                                  double, ComputeT<T>>;

/// Compute-domain predicates, used by functors to say which types they
/// accept (an op applied to another type is reported, not compiled away).
template <typename C>
inline constexpr bool kFloatDomain = std::is_floating_point_v<C>;
template <typename C>
inline constexpr bool kNumericDomain = std::is_floating_point_v<C> ||
                                       std::is_same_v<C, int64_t> ||
                                       std::is_same_v<C, uint64_t>;
template <typename C>
inline constexpr bool kBoolDomain = std::is_same_v<C, bool>;

template <typename T> ComputeT<T> toCompute(T x) {
  if constexpr (kIsHalfLike<T>)
    return x.toFloat();
  else
    return static_cast<ComputeT<T>>(x);
}

/// Rounds to float with round-to-odd: the result is `d` if exact, else the
/// neighbour of `d` whose last mantissa bit is 1. Rounding that float once
/// more to 16 bits gives the correctly rounded 16-bit value of `d` (float
/// has more than two bits to spare), which plain double -> float -> half
/// would not on a double rounding tie.
inline float narrowToOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(f) || static_cast<double>(f) == d)
    return f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if (bits & 1)
    return f;
  float toward = d > static_cast<double>(f)
                     ? std::numeric_limits<float>::infinity()
                     : -std::numeric_limits<float>::infinity();
  return std::nextafter(f, toward);
}

/// Stores a compute-domain value: rounds floats to nearest even, wraps
/// integers modulo 2^bits.
template <typename T> T fromCompute(ComputeT<T> c) {
  if constexpr (kIsHalfLike<T>)
    return T::fromFloat(c);
  else
    return static_cast<T>(c);
}

template <typename T> AccumT<T> toAccum(T x) {
  return static_cast<AccumT<T>>(toCompute(x));
}

/// Stores an accumulator, rounding once (also for f16/bf16 from double).
template <typename T> T fromAccum(AccumT<T> a) {
  if constexpr (kIsHalfLike<T>)
    return T::fromFloat(narrowToOdd(a));
  else
    return static_cast<T>(a);
}

/// The identity of a max (-inf, or the type's minimum) and of a min.
template <typename T> T lowestOf() {
  if constexpr (kIsHalfLike<T>)
    return T::fromFloat(-std::numeric_limits<float>::infinity());
  else if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}
template <typename T> T highestOf() {
  if constexpr (kIsHalfLike<T>)
    return T::fromFloat(std::numeric_limits<float>::infinity());
  else if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}

template <typename C> bool isNaN(C x) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(x);
  else
    return false;
}

//===----------------------------------------------------------------------===//
// Wrapping arithmetic and the combining functors shared by several ops
//===----------------------------------------------------------------------===//

// Signed 64-bit overflow is undefined behaviour in C++, so signed integers
// add, subtract and multiply as uint64_t: two's complement wrap-around.
template <typename C> C wrapAdd(C a, C b) {
  if constexpr (std::is_same_v<C, int64_t>)
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  else
    return a + b;
}
template <typename C> C wrapSub(C a, C b) {
  if constexpr (std::is_same_v<C, int64_t>)
    return static_cast<int64_t>(static_cast<uint64_t>(a) -
                                static_cast<uint64_t>(b));
  else
    return a - b;
}
template <typename C> C wrapMul(C a, C b) {
  if constexpr (std::is_same_v<C, int64_t>)
    return static_cast<int64_t>(static_cast<uint64_t>(a) *
                                static_cast<uint64_t>(b));
  else
    return a * b;
}

/// Functors combine two compute- or accumulator-domain values. `accepts<C>`
/// names the domains an op is defined on.
struct AddFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C a, C b) const { return wrapAdd(a, b); }
};
struct MulFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C a, C b) const { return wrapMul(a, b); }
};
/// NaN if either operand is NaN (ONNX Max/Min, torch.maximum).
struct MaxFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C a, C b) const {
    if (isNaN(a))
      return a;
    if (isNaN(b))
      return b;
    return a < b ? b : a;
  }
};
struct MinFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C a, C b) const {
    if (isNaN(a))
      return a;
    if (isNaN(b))
      return b;
    return b < a ? b : a;
  }
};

//===----------------------------------------------------------------------===//
// Shapes and index walks
//===----------------------------------------------------------------------===//

/// Row-major strides, in elements.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// Strides that read a tensor of shape `from` at every index of the NumPy
/// broadcast shape `to`: 0 for missing leading and size-1 dimensions.
SmallVector<int64_t> broadcastStrides(ArrayRef<int64_t> from,
                                      ArrayRef<int64_t> to);

/// Product of `shape[begin:end]`.
int64_t productOf(ArrayRef<int64_t> shape, size_t begin, size_t end);

/// Visits every index of `shape` in row-major order and calls
/// `body(offsets)` with offsets[k] = start[k] + sum_d index[d] * strides[k][d].
/// Strides may be zero (broadcast) or negative (reversal). A rank-0 shape has
/// one index; a shape with a zero dimension has none.
template <size_t N, typename Body>
void forEachOffset(ArrayRef<int64_t> shape,
                   const std::array<ArrayRef<int64_t>, N> &strides,
                   std::array<int64_t, N> start, Body &&body) {
  size_t rank = shape.size();
  for (int64_t dim : shape)
    if (dim == 0)
      return;
  if (rank == 0) {
    body(static_cast<const std::array<int64_t, N> &>(start));
    return;
  }
  SmallVector<int64_t, 8> index(rank, 0);
  int64_t inner = shape[rank - 1];
  std::array<int64_t, N> innerStride;
  for (size_t k = 0; k < N; ++k)
    innerStride[k] = strides[k][rank - 1];
  while (true) {
    std::array<int64_t, N> offsets = start;
    for (int64_t i = 0; i < inner; ++i) {
      body(static_cast<const std::array<int64_t, N> &>(offsets));
      for (size_t k = 0; k < N; ++k)
        offsets[k] += innerStride[k];
    }
    // Carry into the outer dimensions.
    size_t d = rank - 1;
    while (d-- > 0) {
      for (size_t k = 0; k < N; ++k)
        start[k] += strides[k][d];
      if (++index[d] < shape[d])
        break;
      for (size_t k = 0; k < N; ++k)
        start[k] -= strides[k][d] * shape[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1))
      return;
  }
}

namespace detail {
template <typename... In, typename Fn, size_t... I>
auto callAt(Fn &fn, const std::array<const std::byte *, sizeof...(In)> &data,
            const std::array<int64_t, sizeof...(In)> &offsets,
            std::index_sequence<I...>) {
  return fn(reinterpret_cast<const In *>(data[I])[offsets[I]]...);
}
} // namespace detail

/// The broadcasting elementwise driver behind every unary, binary, compare,
/// select and cast rule: `out[i] = fn(ins[0][j0], ins[1][j1], ...)` for every
/// index i of `out`, each input read at its NumPy-broadcast position. `Out`
/// and `In...` are the storage types of `out` and of each input, or for
/// rules that only move bits (select) unsigned integers of the same size.
template <typename Out, typename... In, typename Fn>
void mapElements(Tensor &out, std::array<const Tensor *, sizeof...(In)> ins,
                 Fn &&fn) {
  constexpr size_t N = sizeof...(In);
  std::array<SmallVector<int64_t>, N> strides;
  std::array<ArrayRef<int64_t>, N> strideRefs;
  std::array<const std::byte *, N> data;
  for (size_t k = 0; k < N; ++k) {
    strides[k] = broadcastStrides(ins[k]->shape(), out.shape());
    strideRefs[k] = strides[k];
    data[k] = ins[k]->bytes();
  }
  static_assert(std::is_trivially_copyable_v<Out>, "storage types are POD");
  assert(sizeof(Out) == dtypeSize(out.dtype()) && "wrong Out type");
  Out *result = reinterpret_cast<Out *>(out.bytes());
  forEachOffset<N>(out.shape(), strideRefs, {},
                   [&](const std::array<int64_t, N> &offsets) {
                     *result++ = detail::callAt<In...>(
                         fn, data, offsets, std::index_sequence_for<In...>{});
                   });
}

/// Widens a tensor to its accumulation domain.
template <typename T> std::vector<AccumT<T>> widen(const Tensor &tensor) {
  const T *src = tensor.data<T>();
  std::vector<AccumT<T>> values(tensor.numElements());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = toAccum(src[i]);
  return values;
}

/// Rounds an accumulation buffer into `out`, once per element.
template <typename T>
void storeAccumulated(Tensor &out, const std::vector<AccumT<T>> &values) {
  T *dst = out.data<T>();
  for (size_t i = 0; i < values.size(); ++i)
    dst[i] = fromAccum<T>(values[i]);
}

/// Reports an element type a rule has no definition for (the verifier
/// normally rules it out).
LogicalResult unsupportedType(Operation *op, DType dtype);

/// The element types a rule accepts: every number, or floats only (the
/// gradient and composite ops' verifiers admit no other).
enum class Domain { Numeric, Float };

/// Runs `body(TypeTag<T>)`, T the storage type of `dtype`, when `dtype` is
/// in `D`; else reports it as unsupported by `op`.
template <Domain D, typename Body>
LogicalResult visitDomain(Operation *op, DType dtype, Body &&body) {
  return visitDType(dtype, [&](auto tag) -> LogicalResult {
    using A = AccumT<typename decltype(tag)::type>;
    if constexpr (D == Domain::Float ? !kFloatDomain<A>
                                     : !kNumericDomain<A>) {
      return unsupportedType(op, dtype);
    } else {
      body(tag);
      return success();
    }
  });
}

/// The indices of a gather or scatter (i32 or i64) as int64_t.
std::vector<int64_t> readIndices(const Tensor &indices);

/// A zero-filled tensor of result `i`'s type (checked by evaluateOp).
Tensor resultTensor(Operation *op, unsigned i = 0);


//===----------------------------------------------------------------------===//
// Rules, by family. Each appends one tensor per result to `results`;
// operands and result types have been checked against the op by evaluateOp.
//===----------------------------------------------------------------------===//

using Operands = ArrayRef<Tensor>;
using Results = SmallVectorImpl<Tensor>;

// EvalElementwise.cpp
LogicalResult evalUnary(Operation *op, Operands operands, Results &results);
LogicalResult evalBinary(Operation *op, Operands operands, Results &results);
LogicalResult evalCompare(CompareOp op, Operands operands, Results &results);
LogicalResult evalSelect(SelectOp op, Operands operands, Results &results);
LogicalResult evalCast(CastOp op, Operands operands, Results &results);
LogicalResult evalDropout(DropoutOp op, Operands operands, Results &results);
LogicalResult evalRandomUniform(RandomUniformOp op, Operands operands,
                                Results &results);

// EvalTensor.cpp
LogicalResult evalReshape(ReshapeOp op, Operands operands, Results &results);
LogicalResult evalTranspose(TransposeOp op, Operands operands,
                            Results &results);
LogicalResult evalBroadcastTo(BroadcastToOp op, Operands operands,
                              Results &results);
LogicalResult evalConcat(ConcatOp op, Operands operands, Results &results);
LogicalResult evalSlice(SliceOp op, Operands operands, Results &results);
LogicalResult evalPad(PadOp op, Operands operands, Results &results);
LogicalResult evalGather(GatherOp op, Operands operands, Results &results);
LogicalResult evalGatherElements(GatherElementsOp op, Operands operands,
                                 Results &results);
LogicalResult evalScatterElements(ScatterElementsOp op, Operands operands,
                                  Results &results);
LogicalResult evalSegmentSum(SegmentSumOp op, Operands operands,
                             Results &results);

// EvalReduce.cpp
LogicalResult evalReduce(Operation *op, ArrayRef<int64_t> axes,
                         Operands operands, Results &results);
LogicalResult evalArgReduce(Operation *op, int64_t axis, bool selectLast,
                            Operands operands, Results &results);
LogicalResult evalCumSum(CumSumOp op, Operands operands, Results &results);
LogicalResult evalTopK(TopKOp op, Operands operands, Results &results);

// EvalNN.cpp
/// dlc.matmul, or dlc.plan.matmul's product: an operand marked transposed
/// is read with its last two dimensions swapped.
LogicalResult evalMatmul(Operation *op, Operands operands, bool lhsTransposed,
                         bool rhsTransposed, Results &results);
LogicalResult evalPlanMatmul(PlanMatmulOp op, Operands operands,
                             Results &results);
LogicalResult evalConv(ConvOp op, Operands operands, Results &results);
LogicalResult evalConvGradInput(ConvGradInputOp op, Operands operands,
                                Results &results);
LogicalResult evalConvGradFilter(ConvGradFilterOp op, Operands operands,
                                 Results &results);
LogicalResult evalPlanConv(PlanConvOp op, Operands operands, Results &results);
LogicalResult evalMaxPoolGrad(MaxPoolGradOp op, Operands operands,
                              Results &results);
LogicalResult evalPool(Operation *op, ArrayRef<int64_t> window,
                       ArrayRef<int64_t> stride, ArrayRef<int64_t> padLow,
                       ArrayRef<int64_t> dilation, Operands operands,
                       Results &results);

// EvalAttention.cpp
LogicalResult evalAttention(AttentionOp op, Operands operands,
                            Results &results);
LogicalResult evalAttentionGrad(AttentionGradOp op, Operands operands,
                                Results &results);

// EvalCrossEntropy.cpp
LogicalResult evalCrossEntropy(CrossEntropyOp op, Operands operands,
                               Results &results);
LogicalResult evalCrossEntropyGrad(CrossEntropyGradOp op, Operands operands,
                                   Results &results);

} // namespace mlir::dlc::eval

#endif // DLC_IR_EVAL_EVALSUPPORT_H
