//===- EvalElementwise.cpp - Elementwise rules of the reference evaluator -===//
//
// Unary, binary, compare, select, cast and dropout. Every rule is a functor
// on compute-domain values (EvalSupport.h) run by the one broadcasting
// driver, mapElements. Where the spec leaves a choice, this file decides:
//  - integer `div` truncates toward zero and `rem` takes the dividend's
//    sign; a zero divisor is an error, INT64_MIN / -1 wraps to INT64_MIN and
//    INT64_MIN % -1 is 0;
//  - integer `pow` multiplies exactly (wrapping); a negative exponent gives
//    1 for base 1, +-1 for base -1 and 0 otherwise (the integer part of the
//    real result; 0 ** -n is 0 rather than an error);
//  - `sign` of a float zero is +0, of NaN is NaN;
//  - `cast` of a float to an integer truncates toward zero and saturates:
//    NaN is 0, values beyond the target's range clamp to its min or max (as
//    CUDA's cvt.rzi does, so devices can match it bit for bit);
//  - `cast` of an integer to bf16 goes through double, exact up to 2^53;
//  - dropout draws u = (mt19937_64() >> 11) * 2^-53 per element in
//    row-major order (uniform in [0, 1) with 53 bits, independent of the
//    standard library), keeps the element when u >= ratio and scales kept
//    elements by 1 / (1 - ratio) in the compute domain.
//
//===----------------------------------------------------------------------===//

#include "ir/eval/EvalSupport.h"
#include "runtime/support/Philox.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

namespace {

//===----------------------------------------------------------------------===//
// Unary functors
//===----------------------------------------------------------------------===//

#define DLC_FLOAT_UNARY(NAME, EXPR)                                            \
  struct NAME {                                                                \
    template <typename C> static constexpr bool accepts = kFloatDomain<C>;     \
    template <typename C> C operator()(C x) const { return EXPR; }             \
  };
DLC_FLOAT_UNARY(ExpFn, std::exp(x))
DLC_FLOAT_UNARY(LogFn, std::log(x))
DLC_FLOAT_UNARY(SqrtFn, std::sqrt(x))
DLC_FLOAT_UNARY(RsqrtFn, C(1) / std::sqrt(x))
DLC_FLOAT_UNARY(ReciprocalFn, C(1) / x)
DLC_FLOAT_UNARY(CeilFn, std::ceil(x))
DLC_FLOAT_UNARY(FloorFn, std::floor(x))
// nearbyint rounds with the current mode, which is ties-to-even by default.
DLC_FLOAT_UNARY(RoundFn, std::nearbyint(x))
DLC_FLOAT_UNARY(ErfFn, std::erf(x))
DLC_FLOAT_UNARY(SinFn, std::sin(x))
DLC_FLOAT_UNARY(CosFn, std::cos(x))
DLC_FLOAT_UNARY(TanhFn, std::tanh(x))
DLC_FLOAT_UNARY(TanFn, std::tan(x))
DLC_FLOAT_UNARY(AsinFn, std::asin(x))
DLC_FLOAT_UNARY(AcosFn, std::acos(x))
DLC_FLOAT_UNARY(AtanFn, std::atan(x))
DLC_FLOAT_UNARY(SinhFn, std::sinh(x))
DLC_FLOAT_UNARY(CoshFn, std::cosh(x))
DLC_FLOAT_UNARY(AsinhFn, std::asinh(x))
DLC_FLOAT_UNARY(AcoshFn, std::acosh(x))
DLC_FLOAT_UNARY(AtanhFn, std::atanh(x))
DLC_FLOAT_UNARY(SigmoidFn, C(1) / (C(1) + std::exp(-x)))
#undef DLC_FLOAT_UNARY

struct NegFn {
  template <typename C>
  static constexpr bool accepts = kFloatDomain<C> || std::is_same_v<C, int64_t>;
  template <typename C> C operator()(C x) const { return wrapSub(C(0), x); }
};

struct AbsFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C x) const {
    if constexpr (kFloatDomain<C>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<C>)
      return x < 0 ? wrapSub(C(0), x) : x;
    else
      return x;
  }
};

struct SignFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C x) const {
    if (isNaN(x))
      return x;
    if (x > C(0))
      return C(1);
    if constexpr (std::is_signed_v<C> || kFloatDomain<C>)
      if (x < C(0))
        return C(-1);
    return C(0);
  }
};

struct NotFn {
  template <typename C> static constexpr bool accepts = kBoolDomain<C>;
  bool operator()(bool x) const { return !x; }
};

//===----------------------------------------------------------------------===//
// Binary functors (AddFn, MulFn, MaxFn and MinFn live in EvalSupport.h)
//===----------------------------------------------------------------------===//

struct SubFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C a, C b) const { return wrapSub(a, b); }
};

/// Integer division and remainder record a zero divisor instead of trapping;
/// the rule reports it after the loop.
struct DivFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  mutable bool zeroDivisor = false;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kFloatDomain<C>) {
      return a / b;
    } else {
      if (b == 0) {
        zeroDivisor = true;
        return 0;
      }
      if constexpr (std::is_signed_v<C>)
        if (b == -1)
          return wrapSub(C(0), a);
      return a / b;
    }
  }
};

struct RemFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  mutable bool zeroDivisor = false;
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kFloatDomain<C>) {
      return std::fmod(a, b);
    } else {
      if (b == 0) {
        zeroDivisor = true;
        return 0;
      }
      if constexpr (std::is_signed_v<C>)
        if (b == -1)
          return 0;
      return a % b;
    }
  }
};

struct PowFn {
  template <typename C> static constexpr bool accepts = kNumericDomain<C>;
  template <typename C> C operator()(C base, C exponent) const {
    if constexpr (kFloatDomain<C>) {
      return std::pow(base, exponent);
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (exponent < 0) {
          if (base == 1)
            return 1;
          if (base == -1)
            return (exponent & 1) ? -1 : 1;
          return 0;
        }
      }
      // Square and multiply: exact modulo 2^64, like repeated products.
      C result = 1;
      while (exponent != 0) {
        if (exponent & 1)
          result = wrapMul(result, base);
        base = wrapMul(base, base);
        exponent = static_cast<C>(static_cast<uint64_t>(exponent) >> 1);
      }
      return result;
    }
  }
};

struct AndFn {
  template <typename C> static constexpr bool accepts = kBoolDomain<C>;
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrFn {
  template <typename C> static constexpr bool accepts = kBoolDomain<C>;
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorFn {
  template <typename C> static constexpr bool accepts = kBoolDomain<C>;
  bool operator()(bool a, bool b) const { return a != b; }
};

//===----------------------------------------------------------------------===//
// Drivers
//===----------------------------------------------------------------------===//

template <typename Fn>
LogicalResult mapUnary(Operation *op, Operands operands, Results &results,
                       Fn fn) {
  Tensor out = resultTensor(op);
  LogicalResult status =
      visitDType(out.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        if constexpr (!Fn::template accepts<ComputeT<T>>) {
          return unsupportedType(op, out.dtype());
        } else {
          mapElements<T, T>(out, {&operands[0]}, [&](T x) {
            return fromCompute<T>(fn(toCompute(x)));
          });
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

template <typename Fn>
LogicalResult mapBinary(Operation *op, Operands operands, Results &results,
                        const Fn &fn) {
  Tensor out = resultTensor(op);
  LogicalResult status =
      visitDType(out.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        if constexpr (!Fn::template accepts<ComputeT<T>>) {
          return unsupportedType(op, out.dtype());
        } else {
          mapElements<T, T, T>(out, {&operands[0], &operands[1]},
                               [&](T a, T b) {
                                 return fromCompute<T>(
                                     fn(toCompute(a), toCompute(b)));
                               });
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

template <typename Fn>
LogicalResult mapDivision(Operation *op, Operands operands, Results &results) {
  Fn fn;
  if (failed(mapBinary(op, operands, results, fn)))
    return failure();
  if (fn.zeroDivisor) {
    results.pop_back();
    return op->emitOpError() << "divides an integer by zero";
  }
  return success();
}

/// Float to integer: truncate toward zero, saturate, NaN is 0.
template <typename To> To saturatingTruncate(double value) {
  if (std::isnan(value))
    return 0;
  double truncated = std::trunc(value);
  // Both bounds are exact powers of two (or zero) in double.
  const double low = static_cast<double>(std::numeric_limits<To>::min());
  const double highExclusive =
      std::ldexp(1.0, std::numeric_limits<To>::digits);
  if (truncated < low)
    return std::numeric_limits<To>::min();
  if (truncated >= highExclusive)
    return std::numeric_limits<To>::max();
  return static_cast<To>(truncated);
}

/// ONNX Cast of one element (see the file header for the choices).
template <typename To, typename From> To convertElement(From x) {
  constexpr bool fromFloat = kFloatDomain<ComputeT<From>>;
  constexpr bool toFloat = kFloatDomain<ComputeT<To>>;
  if constexpr (std::is_same_v<To, bool>) {
    return toCompute(x) != 0;
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (kIsHalfLike<To>)
      return To::fromFloat(x ? 1.0f : 0.0f);
    else
      return static_cast<To>(x ? 1 : 0);
  } else if constexpr (fromFloat && toFloat) {
    // Widening to double is exact, so this rounds once.
    return fromAccum<To>(static_cast<double>(toCompute(x)));
  } else if constexpr (fromFloat) {
    return saturatingTruncate<To>(static_cast<double>(toCompute(x)));
  } else if constexpr (toFloat) {
    if constexpr (kIsHalfLike<To>)
      return fromAccum<To>(static_cast<double>(x));
    else
      return static_cast<To>(x);
  } else {
    // Integer to integer wraps modulo 2^bits, like NumPy's astype.
    return static_cast<To>(x);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

LogicalResult eval::evalUnary(Operation *op, Operands operands,
                              Results &results) {
  auto run = [&](auto fn) { return mapUnary(op, operands, results, fn); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<NegOp>([&](auto) { return run(NegFn{}); })
      .Case<AbsOp>([&](auto) { return run(AbsFn{}); })
      .Case<SignOp>([&](auto) { return run(SignFn{}); })
      .Case<ExpOp>([&](auto) { return run(ExpFn{}); })
      .Case<LogOp>([&](auto) { return run(LogFn{}); })
      .Case<SqrtOp>([&](auto) { return run(SqrtFn{}); })
      .Case<RsqrtOp>([&](auto) { return run(RsqrtFn{}); })
      .Case<ReciprocalOp>([&](auto) { return run(ReciprocalFn{}); })
      .Case<CeilOp>([&](auto) { return run(CeilFn{}); })
      .Case<FloorOp>([&](auto) { return run(FloorFn{}); })
      .Case<RoundOp>([&](auto) { return run(RoundFn{}); })
      .Case<ErfOp>([&](auto) { return run(ErfFn{}); })
      .Case<SinOp>([&](auto) { return run(SinFn{}); })
      .Case<CosOp>([&](auto) { return run(CosFn{}); })
      .Case<TanhOp>([&](auto) { return run(TanhFn{}); })
      .Case<TanOp>([&](auto) { return run(TanFn{}); })
      .Case<AsinOp>([&](auto) { return run(AsinFn{}); })
      .Case<AcosOp>([&](auto) { return run(AcosFn{}); })
      .Case<AtanOp>([&](auto) { return run(AtanFn{}); })
      .Case<SinhOp>([&](auto) { return run(SinhFn{}); })
      .Case<CoshOp>([&](auto) { return run(CoshFn{}); })
      .Case<AsinhOp>([&](auto) { return run(AsinhFn{}); })
      .Case<AcoshOp>([&](auto) { return run(AcoshFn{}); })
      .Case<AtanhOp>([&](auto) { return run(AtanhFn{}); })
      .Case<SigmoidOp>([&](auto) { return run(SigmoidFn{}); })
      .Case<NotOp>([&](auto) { return run(NotFn{}); })
      .Default([&](Operation *) {
        return op->emitOpError() << "is not a unary elementwise op";
      });
}

LogicalResult eval::evalBinary(Operation *op, Operands operands,
                               Results &results) {
  auto run = [&](auto fn) { return mapBinary(op, operands, results, fn); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp>([&](auto) { return run(AddFn{}); })
      .Case<SubOp>([&](auto) { return run(SubFn{}); })
      .Case<MulOp>([&](auto) { return run(MulFn{}); })
      .Case<DivOp>(
          [&](auto) { return mapDivision<DivFn>(op, operands, results); })
      .Case<RemOp>(
          [&](auto) { return mapDivision<RemFn>(op, operands, results); })
      .Case<PowOp>([&](auto) { return run(PowFn{}); })
      .Case<MaxOp>([&](auto) { return run(MaxFn{}); })
      .Case<MinOp>([&](auto) { return run(MinFn{}); })
      .Case<AndOp>([&](auto) { return run(AndFn{}); })
      .Case<OrOp>([&](auto) { return run(OrFn{}); })
      .Case<XorOp>([&](auto) { return run(XorFn{}); })
      .Default([&](Operation *) {
        return op->emitOpError() << "is not a binary elementwise op";
      });
}

LogicalResult eval::evalCompare(CompareOp op, Operands operands,
                                Results &results) {
  Tensor out = resultTensor(op);
  ComparePredicate predicate = op.getPredicate();
  visitDType(operands[0].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // IEEE comparisons: every one involving NaN is false, except `ne`.
    mapElements<bool, T, T>(out, {&operands[0], &operands[1]}, [&](T a, T b) {
      ComputeT<T> x = toCompute(a), y = toCompute(b);
      switch (predicate) {
      case ComparePredicate::eq: return x == y;
      case ComparePredicate::ne: return x != y;
      case ComparePredicate::lt: return x < y;
      case ComparePredicate::le: return x <= y;
      case ComparePredicate::gt: return x > y;
      case ComparePredicate::ge: return x >= y;
      }
      return false;
    });
  });
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalSelect(SelectOp op, Operands operands,
                               Results &results) {
  Tensor out = resultTensor(op);
  // Selection copies storage values, so it needs no arithmetic domain.
  visitElementSize(dtypeSize(out.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    mapElements<U, bool, U, U>(
        out, {&operands[0], &operands[1], &operands[2]},
        [](bool condition, U onTrue, U onFalse) {
          return condition ? onTrue : onFalse;
        });
  });
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalCast(CastOp op, Operands operands, Results &results) {
  Tensor out = resultTensor(op);
  visitDType(operands[0].dtype(), [&](auto fromTag) {
    using From = typename decltype(fromTag)::type;
    visitDType(out.dtype(), [&](auto toTag) {
      using To = typename decltype(toTag)::type;
      mapElements<To, From>(out, {&operands[0]},
                            [](From x) { return convertElement<To>(x); });
    });
  });
  results.push_back(std::move(out));
  return success();
}

/// A random draw's counter offset: operand `index` when present, else 0.
/// Counters wrap modulo 2^64, as the kernels' uint64_t arithmetic does.
static uint64_t drawOffset(Operands operands, size_t index) {
  return operands.size() > index
             ? static_cast<uint64_t>(operands[index].data<int64_t>()[0])
             : 0;
}

LogicalResult eval::evalRandomUniform(RandomUniformOp op, Operands operands,
                                      Results &results) {
  Tensor out = resultTensor(op);
  uint64_t seed = static_cast<uint64_t>(operands[0].data<int64_t>()[0]);
  uint64_t stream = static_cast<uint64_t>(op.getStream());
  uint64_t offset = drawOffset(operands, 1);
  LogicalResult status =
      visitDType(out.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        if constexpr (!kFloatDomain<ComputeT<T>>) {
          return unsupportedType(op, out.dtype());
        } else {
          T *data = out.data<T>();
          for (int64_t i = 0; i < out.numElements(); ++i)
            data[i] = fromCompute<T>(static_cast<ComputeT<T>>(philoxUniform(
                seed, stream, offset + static_cast<uint64_t>(i))));
          return success();
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalDropout(DropoutOp op, Operands operands,
                                Results &results) {
  const Tensor &input = operands[0];
  Tensor output = resultTensor(op, 0);
  Tensor mask = resultTensor(op, 1);
  double ratio = op.getRatio().convertToDouble();
  bool *keep = mask.data<bool>();
  int64_t count = input.numElements();
  if (ratio == 0.0) {
    // The identity.
    if (input.byteSize() > 0)
      std::memcpy(output.bytes(), input.bytes(), input.byteSize());
    std::fill(keep, keep + count, true);
  } else {
    uint64_t seed = static_cast<uint64_t>(operands[1].data<int64_t>()[0]);
    uint64_t stream = static_cast<uint64_t>(op.getStream());
    uint64_t offset = drawOffset(operands, 2);
    for (int64_t i = 0; i < count; ++i)
      keep[i] =
          dropoutKeeps(seed, stream, offset + static_cast<uint64_t>(i), ratio);
    LogicalResult status =
        visitDType(input.dtype(), [&](auto tag) -> LogicalResult {
          using T = typename decltype(tag)::type;
          using C = ComputeT<T>;
          if constexpr (!kFloatDomain<C>) {
            return unsupportedType(op, input.dtype());
          } else {
            C scale = static_cast<C>(1.0 / (1.0 - ratio));
            const T *in = input.data<T>();
            T *out = output.data<T>();
            for (int64_t i = 0; i < count; ++i)
              out[i] = fromCompute<T>(keep[i] ? toCompute(in[i]) * scale
                                              : C(0));
            return success();
          }
        });
    if (failed(status))
      return failure();
  }
  results.push_back(std::move(output));
  results.push_back(std::move(mask));
  return success();
}
