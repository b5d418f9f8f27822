//===- TensorTest.cpp - Tests of Half, BFloat16 and Tensor ----------------===//
//
// The 16-bit conversions are checked three ways: exact bit patterns at every
// boundary (ties, subnormals, overflow, NaN), exhaustive round trips of all
// 65536 patterns, and a sweep of float bit patterns against an independent
// oracle (the compiler's _Float16 for Half, a nearest-candidate search for
// BFloat16). Tensor tests cover construction, element access and equality.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

using namespace dlc;

namespace {

float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint32_t bitsOf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

uint16_t halfBits(float f) { return Half::fromFloat(f).bits; }
uint16_t bf16Bits(float f) { return BFloat16::fromFloat(f).bits; }

/// BFloat16 oracle: of the two bfloat16 values around x (truncated and the
/// next one up in magnitude), the nearer one, the even one on a tie. The
/// distances are exact in double.
uint16_t bf16Reference(float x) {
  uint32_t bits = bitsOf(x);
  uint32_t low = bits & 0xffff0000u;
  uint32_t high = low + 0x10000u;
  double lowDistance = std::fabs(double(x) - double(floatFromBits(low)));
  // The candidate above the largest finite value is infinity; IEEE rounding
  // treats it as 2^128 for the comparison.
  double highValue = (high & 0x7fffffffu) == 0x7f800000u
                         ? std::copysign(std::ldexp(1.0, 128), double(x))
                         : double(floatFromBits(high));
  double highDistance = std::fabs(double(x) - highValue);
  if (lowDistance < highDistance)
    return uint16_t(low >> 16);
  if (highDistance < lowDistance)
    return uint16_t(high >> 16);
  return (low >> 16) & 1 ? uint16_t(high >> 16) : uint16_t(low >> 16);
}

} // namespace

TEST(Float16, StorageIsTwoTrivialBytes) {
  static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "");
  static_assert(std::is_trivially_copyable<Half>::value, "");
  static_assert(std::is_trivially_copyable<BFloat16>::value, "");
  EXPECT_EQ(float(Half(1.5f)), 1.5f);
  EXPECT_EQ(float(BFloat16(-3.0f)), -3.0f);
}

TEST(Half, ExactValues) {
  EXPECT_EQ(halfBits(0.0f), 0x0000);
  EXPECT_EQ(halfBits(-0.0f), 0x8000);
  EXPECT_EQ(halfBits(1.0f), 0x3c00);
  EXPECT_EQ(halfBits(-2.0f), 0xc000);
  EXPECT_EQ(halfBits(0.5f), 0x3800);
  EXPECT_EQ(halfBits(65504.0f), 0x7bff);              // largest finite
  EXPECT_EQ(halfBits(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  EXPECT_EQ(halfBits(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(halfBits(1023 * std::ldexp(1.0f, -24)), 0x03ff);
  EXPECT_EQ(Half::fromBits(0x3555).toFloat(), 0.333251953125f);
}

TEST(Half, RoundsTiesToEven) {
  float ulp = std::ldexp(1.0f, -10); // spacing of halves in [1, 2)
  // Exactly halfway: to the even neighbour.
  EXPECT_EQ(halfBits(1.0f + ulp / 2), 0x3c00);
  EXPECT_EQ(halfBits(1.0f + 3 * ulp / 2), 0x3c02);
  EXPECT_EQ(halfBits(-(1.0f + ulp / 2)), 0xbc00);
  // Off the midpoint by one float ulp: to the nearer neighbour.
  EXPECT_EQ(halfBits(std::nextafter(1.0f + ulp / 2, 2.0f)), 0x3c01);
  EXPECT_EQ(halfBits(std::nextafter(1.0f + 3 * ulp / 2, 0.0f)), 0x3c01);
  // A carry out of the mantissa moves to the next binade.
  EXPECT_EQ(halfBits(2.0f - ulp / 4), 0x4000);
}

TEST(Half, Subnormals) {
  float unit = std::ldexp(1.0f, -24);
  EXPECT_EQ(halfBits(unit / 2), 0x0000); // tie with zero: even is zero
  EXPECT_EQ(halfBits(std::nextafter(unit / 2, 1.0f)), 0x0001);
  EXPECT_EQ(halfBits(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_EQ(halfBits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(halfBits(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(halfBits(3 * unit / 2), 0x0002); // tie between 1 and 2 units
  EXPECT_EQ(halfBits(5 * unit / 2), 0x0002); // tie between 2 and 3 units
  // Halfway between the largest subnormal and the smallest normal.
  EXPECT_EQ(halfBits(1023.5f * unit), 0x0400);
  EXPECT_EQ(Half::fromBits(0x0001).toFloat(), unit);
  EXPECT_EQ(Half::fromBits(0x8200).toFloat(), -512 * unit);
}

TEST(Half, OverflowInfinityAndNaN) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(halfBits(65519.0f), 0x7bff);
  EXPECT_EQ(halfBits(65520.0f), 0x7c00); // midpoint to 2^16 ties up to Inf
  EXPECT_EQ(halfBits(-65520.0f), 0xfc00);
  EXPECT_EQ(halfBits(1e10f), 0x7c00);
  EXPECT_EQ(halfBits(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(halfBits(inf), 0x7c00);
  EXPECT_EQ(halfBits(-inf), 0xfc00);
  EXPECT_EQ(Half::fromBits(0x7c00).toFloat(), inf);
  EXPECT_EQ(Half::fromBits(0xfc00).toFloat(), -inf);

  // A NaN whose payload is only in the bits half precision drops stays NaN.
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
    uint16_t h = halfBits(floatFromBits(bits));
    EXPECT_EQ(h & 0x7c00, 0x7c00) << std::hex << bits;
    EXPECT_NE(h & 0x03ff, 0) << std::hex << bits;
    EXPECT_EQ(h & 0x8000, (bits >> 16) & 0x8000) << std::hex << bits;
  }
  EXPECT_TRUE(std::isnan(Half::fromBits(0x7e00).toFloat()));
  EXPECT_TRUE(std::isnan(Half::fromBits(0xfc01).toFloat()));
}

TEST(Half, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    Half h = Half::fromBits(uint16_t(bits));
    float f = h.toFloat();
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Half::fromFloat(f).toFloat()));
      continue;
    }
    ASSERT_EQ(Half::fromFloat(f).bits, bits)
        << "pattern 0x" << std::hex << bits;
  }
}

#ifdef __FLT16_MAX__
// GCC and Clang's _Float16 converts with the IEEE default rounding, an
// independent implementation to check ours against.
TEST(Half, MatchesCompilerFloat16) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    _Float16 reference;
    uint16_t pattern = uint16_t(bits);
    std::memcpy(&reference, &pattern, 2);
    float expected = float(reference);
    float actual = Half::fromBits(pattern).toFloat();
    if (std::isnan(expected))
      ASSERT_TRUE(std::isnan(actual));
    else
      ASSERT_EQ(bitsOf(actual), bitsOf(expected)) << std::hex << bits;
  }
  auto expectMatch = [](uint32_t bits) {
    float f = floatFromBits(bits);
    if (std::isnan(f))
      return;
    _Float16 reference = _Float16(f);
    uint16_t expected;
    std::memcpy(&expected, &reference, 2);
    ASSERT_EQ(halfBits(f), expected) << std::hex << bits;
  };
  // Every 251st float pattern: all exponents, many mantissas.
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 251)
    expectMatch(uint32_t(bits));
  // Exact ties and their neighbours for every normal half, where a sparse
  // sweep rarely lands.
  for (uint32_t high = 0; high < (1u << 19); ++high)
    for (uint32_t low : {0x0fffu, 0x1000u, 0x1001u})
      expectMatch(high << 13 | low);
}
#endif

TEST(BFloat16, ExactValuesAndTies) {
  EXPECT_EQ(bf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16Bits(-0.0f), 0x8000);
  EXPECT_EQ(bf16Bits(floatFromBits(0x3f808000u)), 0x3f80); // tie, even down
  EXPECT_EQ(bf16Bits(floatFromBits(0x3f818000u)), 0x3f82); // tie, even up
  EXPECT_EQ(bf16Bits(floatFromBits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(bf16Bits(floatFromBits(0x3f807fffu)), 0x3f80);
  EXPECT_EQ(BFloat16::fromBits(0x4049).toFloat(), 3.140625f);
}

TEST(BFloat16, SubnormalsOverflowInfinityAndNaN) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(bf16Bits(floatFromBits(0x00008000u)), 0x0000); // subnormal tie
  EXPECT_EQ(bf16Bits(floatFromBits(0x00018000u)), 0x0002);
  EXPECT_EQ(bf16Bits(floatFromBits(0x00010000u)), 0x0001);
  EXPECT_EQ(bf16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bf16Bits(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(bf16Bits(floatFromBits(0x7f7f7fffu)), 0x7f7f); // stays finite
  EXPECT_EQ(bf16Bits(inf), 0x7f80);
  EXPECT_EQ(bf16Bits(-inf), 0xff80);
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xffffffffu, 0x7fff8000u}) {
    uint16_t b = bf16Bits(floatFromBits(bits));
    EXPECT_TRUE(std::isnan(BFloat16::fromBits(b).toFloat()))
        << std::hex << bits;
  }
}

TEST(BFloat16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float f = BFloat16::fromBits(uint16_t(bits)).toFloat();
    ASSERT_EQ(bitsOf(f), bits << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(bf16Bits(f), bits) << std::hex << bits;
    }
  }
}

TEST(BFloat16, MatchesNearestCandidate) {
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 251) {
    float f = floatFromBits(uint32_t(bits));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(bf16Bits(f), bf16Reference(f)) << std::hex << bits;
  }
  // Exact ties, where a sparse sweep rarely lands.
  for (uint32_t high = 0; high <= 0xffff; ++high) {
    float f = floatFromBits(high << 16 | 0x8000u);
    if (!std::isnan(f)) {
      ASSERT_EQ(bf16Bits(f), bf16Reference(f)) << std::hex << high;
    }
  }
}

namespace {

/// Checks the dtypes stored as `T...`, which must be every dtype in the
/// enum's order, against `names`, NumPy's for them: each dtype's name both
/// ways, its size against its storage type's (DTypeOf), and that it is
/// exactly one of float, signed and unsigned (bool none).
template <typename... T>
void expectDTypes(const std::vector<std::string> &names) {
  const DType types[] = {DTypeOf<T>::value...};
  const size_t sizes[] = {sizeof(T)...};
  ASSERT_EQ(names.size(), sizeof...(T));
  for (size_t i = 0; i < names.size(); ++i) {
    DType type = types[i];
    EXPECT_EQ(static_cast<size_t>(type), i) << names[i];
    EXPECT_EQ(dtypeName(type), names[i]);
    EXPECT_EQ(dtypeSize(type), sizes[i]) << names[i];
    EXPECT_EQ(dtypeFromName(names[i]), type);
    int kinds = isFloat(type) + isSignedInt(type) + isUnsignedInt(type);
    EXPECT_EQ(kinds, type == DType::Bool ? 0 : 1) << names[i];
  }
}

} // namespace

TEST(DType, NamesSizesAndKinds) {
  expectDTypes<bool, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
               uint32_t, uint64_t, Half, BFloat16, float, double>(
      {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
       "uint64", "float16", "bfloat16", "float32", "float64"});
  EXPECT_FALSE(dtypeFromName("float128").has_value());
  EXPECT_TRUE(isFloat(DType::BF16));
  EXPECT_TRUE(isSignedInt(DType::I8));
  EXPECT_TRUE(isUnsignedInt(DType::U64));
}

TEST(Tensor, ShapesAndSizes) {
  EXPECT_EQ(numElements({}), 1);
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_EQ(numElements({2, 0, 4}), 0);

  Tensor scalar(DType::F64, {});
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.byteSize(), 8u);
  EXPECT_EQ(scalar.describe(), "float64[]");

  Tensor empty(DType::I16, {3, 0});
  EXPECT_EQ(empty.numElements(), 0);
  EXPECT_EQ(empty.byteSize(), 0u);
  EXPECT_EQ(empty.describe(), "int16[3,0]");

  Tensor defaulted;
  EXPECT_EQ(defaulted.dtype(), DType::F32);
  EXPECT_EQ(defaulted.rank(), 0);
}

TEST(Tensor, ZeroFilledAndTypedAccess) {
  Tensor t(DType::F32, {2, 3});
  EXPECT_EQ(t.describe(), "float32[2,3]");
  EXPECT_EQ(t.byteSize(), 24u);
  for (int64_t i = 0; i < t.numElements(); ++i)
    EXPECT_EQ(t.getDouble(i), 0.0);
  t.data<float>()[4] = -2.75f;
  EXPECT_EQ(t.getDouble(4), -2.75);
  EXPECT_EQ(t.getInt(4), -2);

  Tensor h(DType::F16, {2});
  h.data<Half>()[1] = Half(0.1f);
  EXPECT_EQ(h.getDouble(1), double(Half(0.1f).toFloat()));

  Tensor u(DType::U8, {1});
  u.data<uint8_t>()[0] = 200;
  EXPECT_EQ(u.getInt(0), 200);
  Tensor b(DType::Bool, {1});
  b.data<bool>()[0] = true;
  EXPECT_EQ(b.getInt(0), 1);
  Tensor big(DType::F64, {3});
  big.data<double>()[0] = 1e300;
  big.data<double>()[1] = -1e300;
  big.data<double>()[2] = std::nan("");
  EXPECT_EQ(big.getInt(0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(big.getInt(1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(big.getInt(2), 0);
}

TEST(Tensor, CopiesAreDeepAndEqualityComparesEverything) {
  Tensor a(DType::I32, {2, 2});
  a.data<int32_t>()[3] = 7;
  Tensor b = a;
  EXPECT_EQ(a, b);
  b.data<int32_t>()[3] = 8;
  EXPECT_EQ(a.getInt(3), 7);
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(Tensor(DType::I32, {4}) == Tensor(DType::I32, {2, 2}));
  EXPECT_FALSE(Tensor(DType::I32, {4}) == Tensor(DType::F32, {4}));
}
