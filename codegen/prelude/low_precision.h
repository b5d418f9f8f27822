//! codegen/prelude/low_precision.h: bfloat16 and float16 loads and stores,
//! rounding to nearest even as the evaluator does. Embedded verbatim in kernel
//! sources without these //! lines (codegen/prelude/embed.cmake).
DLC_FN float dlc_load_bf16(uint16_t h) {
  return dlc_bits_float((uint32_t)h << 16);
}
DLC_FN uint16_t dlc_store_bf16(float f) {
  uint32_t x = dlc_float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
DLC_FN float dlc_round_bf16(float f) { return dlc_load_bf16(dlc_store_bf16(f)); }
// A double as float rounded to odd: inexact results keep their lowest bit
// set, so rounding them again to fewer bits (bfloat16, float16) rounds as
// the double would have.
DLC_FN float dlc_narrow_to_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d)
    return f;
  uint32_t bits = dlc_float_bits(f);
  // Round toward zero first when the float rounded away from it.
  if (((double)f > d) == (d > 0))
    bits -= 1;
  return dlc_bits_float(bits | 1u);
}
DLC_FN float dlc_load_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // 0 or subnormal: mantissa x 2^-24, exact in float.
    float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return dlc_bits_float(dlc_float_bits(magnitude) | sign);
  }
  if (exponent == 31)
    return dlc_bits_float(sign | 0x7f800000u | (mantissa << 13));
  return dlc_bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}
DLC_FN uint16_t dlc_store_f16(float f) {
  uint32_t x = dlc_float_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u, magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return (uint16_t)(sign | 0x7e00u);
  // 2^16 and above (and infinity): past float16's largest finite value
  // even before rounding.
  if (magnitude >= 0x47800000u)
    return (uint16_t)(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a subnormal. Adding 0.5 puts the value's multiple of
    // 2^-24 in the low mantissa bits, rounded to nearest even by the add.
    float shifted = dlc_bits_float(magnitude) + 0.5f;
    return (uint16_t)(sign | (dlc_float_bits(shifted) - 0x3f000000u));
  }
  // Rebias the exponent (127 -> 15) and round the 13 dropped bits to
  // nearest even; a carry moves into the exponent (up to infinity).
  uint32_t odd = (magnitude >> 13) & 1u;
  magnitude += 0xc8000fffu + odd;
  return (uint16_t)(sign | (magnitude >> 13));
}
DLC_FN float dlc_round_f16(float f) { return dlc_load_f16(dlc_store_f16(f)); }
