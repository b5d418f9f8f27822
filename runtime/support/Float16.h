//===- Float16.h - IEEE half and bfloat16 storage types -------------------===//
//
// Two 16-bit floating-point storage types: Half (IEEE 754 binary16, NumPy's
// float16) and BFloat16 (the upper half of a binary32). They only store and
// convert; arithmetic happens in float, which is how mixed-precision training
// uses them (compute in fp32, store in 16 bits).
//
// Conversion from float rounds to nearest, ties to even, the IEEE default and
// what NumPy, PyTorch and CUDA's __float2half_rn do. Truncation would bias
// every rounded value toward zero, and that bias accumulates over the many
// small updates of training; ties-to-even is unbiased, and it makes our
// results bit-identical to the reference frameworks.
//
// The conversions work on the bit patterns with integer arithmetic only, so
// they do not depend on the FPU's rounding mode or on F16C instructions.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_FLOAT16_H
#define DLC_RUNTIME_SUPPORT_FLOAT16_H

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace dlc {

namespace float16_detail {
inline uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}
inline float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
/// `value >> shift` rounded to nearest, ties to even (1 <= shift <= 31).
inline uint32_t shiftRightRNE(uint32_t value, unsigned shift) {
  uint32_t quotient = value >> shift;
  uint32_t remainder = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1)))
    ++quotient;
  return quotient;
}

/// What Half and BFloat16 share: their 16 bits, left uninitialized by
/// default like a float's so that arrays of them are trivial, and the
/// conversions to and from float that `Format` (the derived type) defines
/// as fromFloat and toFloat.
template <typename Format> struct Storage16 {
  uint16_t bits;

  Storage16() = default;
  explicit Storage16(float f) : bits(Format::fromFloat(f).bits) {}
  explicit operator float() const {
    return static_cast<const Format &>(*this).toFloat();
  }

  static Format fromBits(uint16_t bits) {
    Format value;
    value.bits = bits;
    return value;
  }
};
} // namespace float16_detail

/// IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa
/// bits. Largest finite value 65504, smallest subnormal 2^-24.
struct Half : float16_detail::Storage16<Half> {
  using Storage16::Storage16;

  /// Rounds to nearest even. Values at or beyond 65520 (the midpoint between
  /// 65504 and the next power of two) become infinity; values at or below
  /// 2^-25 (half the smallest subnormal) become zero; NaN stays NaN.
  static Half fromFloat(float f) {
    using namespace float16_detail;
    uint32_t x = floatBits(f);
    uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    uint32_t magnitude = x & 0x7fffffff;

    if (magnitude >= 0x7f800000) {
      if (magnitude == 0x7f800000)
        return fromBits(sign | 0x7c00);
      // Keep the top payload bits and force the quiet bit: a NaN whose
      // payload lives only in the dropped low bits must not become Inf.
      return fromBits(sign | 0x7e00 | ((magnitude >> 13) & 0x3ff));
    }
    if (magnitude >= 0x477ff000) // 65520.0f: rounds up past 65504.
      return fromBits(sign | 0x7c00);

    if (magnitude >= 0x38800000) { // 2^-14: normal in half precision.
      // Rebias the exponent from 127 to 15, then drop 13 mantissa bits. A
      // mantissa that rounds up to 2^10 carries into the exponent, which is
      // exactly the next representable value.
      uint32_t rebiased = magnitude - (112u << 23);
      return fromBits(sign |
                      static_cast<uint16_t>(shiftRightRNE(rebiased, 13)));
    }

    // Subnormal in half precision: the result counts units of 2^-24. The
    // float is mantissa * 2^(exponent - 150) with the implicit bit made
    // explicit, so the count is mantissa >> (126 - exponent).
    uint32_t exponent = magnitude >> 23;
    if (exponent < 102) // below 2^-25: rounds to zero.
      return fromBits(sign);
    uint32_t mantissa = (magnitude & 0x7fffff) | 0x800000;
    // A count that rounds up to 2^10 is the smallest normal, 0x0400.
    return fromBits(
        sign | static_cast<uint16_t>(shiftRightRNE(mantissa, 126 - exponent)));
  }

  /// Exact: every half value is a float.
  float toFloat() const {
    using namespace float16_detail;
    uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
    uint32_t exponent = (bits >> 10) & 0x1f;
    uint32_t mantissa = bits & 0x3ff;
    if (exponent == 0x1f) // Inf and NaN; the payload moves up with the bits.
      return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
    if (exponent != 0)
      return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
    if (mantissa == 0)
      return bitsToFloat(sign);
    // Subnormal: normalize, since float has range to spare.
    int32_t floatExponent = 113; // 2^-14, the subnormals' scale, in float bias
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --floatExponent;
    }
    return bitsToFloat(sign | (static_cast<uint32_t>(floatExponent) << 23) |
                       ((mantissa & 0x3ff) << 13));
  }
};

/// bfloat16: the upper 16 bits of a binary32 (8 exponent bits, 7 mantissa
/// bits), so it has float's range with less precision.
struct BFloat16 : float16_detail::Storage16<BFloat16> {
  using Storage16::Storage16;

  /// Rounds to nearest even; values past the largest bfloat16 become
  /// infinity through the same carry; NaN stays NaN.
  static BFloat16 fromFloat(float f) {
    uint32_t x = float16_detail::floatBits(f);
    if ((x & 0x7fffffff) > 0x7f800000) // NaN: rounding could make it Inf.
      return fromBits(static_cast<uint16_t>((x >> 16) | 0x0040));
    return fromBits(
        static_cast<uint16_t>(float16_detail::shiftRightRNE(x, 16)));
  }

  /// Exact: bfloat16 is a truncated float.
  float toFloat() const {
    return float16_detail::bitsToFloat(static_cast<uint32_t>(bits) << 16);
  }
};

static_assert(sizeof(Half) == 2 && std::is_trivially_copyable<Half>::value,
              "Half must be a 2-byte POD so tensors can hold it as raw bytes");
static_assert(sizeof(BFloat16) == 2 &&
                  std::is_trivially_copyable<BFloat16>::value,
              "BFloat16 must be a 2-byte POD so tensors can hold it as raw "
              "bytes");

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_FLOAT16_H
