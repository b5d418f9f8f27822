//===- ElementwiseTest.cpp - Evaluator tests of elementwise ops -----------===//
//
// Unary, binary (with broadcasting), compare, select, cast and dropout (its
// Philox mask, per seed and stream, keep fraction and scaling), plus
// the storage rules: integer wrap-around, 64-bit unsigned values, and
// rounding to f16/bf16 on store. Expected values are computed by hand or,
// for transcendental functions, by the same libm call in the documented
// precision (double for f32), so those comparisons are exact.
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"

#include "runtime/support/Philox.h"

#include <array>
#include <limits>

using namespace dlc::evaltest;

namespace {

using Elementwise = EvalTest;

/// Checks `t` against fn(x) computed in double and rounded to float, the
/// evaluator's documented precision for f32 math.
void expectMapped(const Tensor &t, const std::vector<float> &x,
                  double (*fn)(double)) {
  std::vector<double> expected;
  for (float v : x)
    expected.push_back(static_cast<float>(fn(v)));
  expectValues(t, expected);
}


TEST_F(Elementwise, RoundingUnaryOps) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>,
                          tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
      %x = dlc.constant dense<[-1.5, -0.5, 0.5, 1.5, 2.5, 4.0]> : tensor<6xf32>
      %0 = dlc.round %x : tensor<6xf32>
      %1 = dlc.ceil %x : tensor<6xf32>
      %2 = dlc.floor %x : tensor<6xf32>
      %3 = dlc.abs %x : tensor<6xf32>
      %4 = dlc.neg %x : tensor<6xf32>
      %5 = dlc.sign %x : tensor<6xf32>
      return %0, %1, %2, %3, %4, %5 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
    })mlir");
  ASSERT_EQ(r.size(), 6u);
  // Ties to even: -1.5 -> -2, -0.5 -> -0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
  expectValues(r[0], {-2, -0.0, 0, 2, 2, 4});
  EXPECT_TRUE(std::signbit(r[0].getDouble(1)));
  expectValues(r[1], {-1, -0.0, 1, 2, 3, 4});
  expectValues(r[2], {-2, -1, 0, 1, 2, 4});
  expectValues(r[3], {1.5, 0.5, 0.5, 1.5, 2.5, 4});
  expectValues(r[4], {1.5, 0.5, -0.5, -1.5, -2.5, -4});
  expectValues(r[5], {-1, -1, 1, 1, 1, 1});
}

TEST_F(Elementwise, TranscendentalsComputeInDoubleForF32) {
  std::vector<float> x = {-2.0f, -0.3f, 0.1f, 0.7f, 1.9f, 3.5f};
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>,
        tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>,
        tensor<6xf32>, tensor<6xf32>) {
      %a = dlc.abs %x : tensor<6xf32>
      %0 = dlc.exp %x : tensor<6xf32>
      %1 = dlc.log %a : tensor<6xf32>
      %2 = dlc.sqrt %a : tensor<6xf32>
      %3 = dlc.rsqrt %a : tensor<6xf32>
      %4 = dlc.erf %x : tensor<6xf32>
      %5 = dlc.tanh %x : tensor<6xf32>
      %6 = dlc.sigmoid %x : tensor<6xf32>
      %7 = dlc.sin %x : tensor<6xf32>
      return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
    })mlir",
                                       {f32({6}, x)});
  ASSERT_EQ(r.size(), 8u);
  auto expect = [&](const Tensor &t, double (*fn)(double)) {
    expectMapped(t, x, fn);
  };
  expect(r[0], [](double v) { return std::exp(v); });
  expect(r[1], [](double v) { return std::log(std::fabs(v)); });
  expect(r[2], [](double v) { return std::sqrt(std::fabs(v)); });
  expect(r[3], [](double v) { return 1.0 / std::sqrt(std::fabs(v)); });
  expect(r[4], [](double v) { return std::erf(v); });
  expect(r[5], [](double v) { return std::tanh(v); });
  expect(r[6], [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
  expect(r[7], [](double v) { return std::sin(v); });
}

TEST_F(Elementwise, TrigonometricAndHyperbolicOps) {
  // Inside (-1, 1) so every inverse is defined; acosh gets 1 + |x|.
  std::vector<float> x = {-0.9f, -0.3f, 0.0f, 0.2f, 0.5f, 0.8f};
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>,
        tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>,
        tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
      %one = dlc.constant dense<1.0> : tensor<f32>
      %a = dlc.abs %x : tensor<6xf32>
      %x1 = dlc.add %a, %one : tensor<6xf32>, tensor<f32> -> tensor<6xf32>
      %0 = dlc.tan %x : tensor<6xf32>
      %1 = dlc.asin %x : tensor<6xf32>
      %2 = dlc.acos %x : tensor<6xf32>
      %3 = dlc.atan %x : tensor<6xf32>
      %4 = dlc.sinh %x : tensor<6xf32>
      %5 = dlc.cosh %x : tensor<6xf32>
      %6 = dlc.asinh %x : tensor<6xf32>
      %7 = dlc.acosh %x1 : tensor<6xf32>
      %8 = dlc.atanh %x : tensor<6xf32>
      return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
    })mlir",
                                       {f32({6}, x)});
  ASSERT_EQ(r.size(), 9u);
  auto expect = [&](const Tensor &t, double (*fn)(double)) {
    expectMapped(t, x, fn);
  };
  expect(r[0], [](double v) { return std::tan(v); });
  expect(r[1], [](double v) { return std::asin(v); });
  expect(r[2], [](double v) { return std::acos(v); });
  expect(r[3], [](double v) { return std::atan(v); });
  expect(r[4], [](double v) { return std::sinh(v); });
  expect(r[5], [](double v) { return std::cosh(v); });
  expect(r[6], [](double v) { return std::asinh(v); });
  // 1 + |v| is computed in f32 first, as the program does.
  expect(r[7], [](double v) {
    return std::acosh(static_cast<double>(1.0f + std::fabs(static_cast<float>(v))));
  });
  expect(r[8], [](double v) { return std::atanh(v); });
}

TEST_F(Elementwise, HalfComputesInFloatAndRoundsOnStore) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<3xf16> {
      %x = dlc.constant dense<[0.5, 1.0, 3.0]> : tensor<3xf16>
      %0 = dlc.exp %x : tensor<3xf16>
      return %0 : tensor<3xf16>
    })mlir");
  std::vector<double> expected;
  for (float v : {0.5f, 1.0f, 3.0f})
    expected.push_back(Half::fromFloat(std::exp(v)).toFloat());
  expectValues(out, expected);
}

TEST_F(Elementwise, SignOfNaNZeroAndIntegers) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<3xi32>, tensor<2xi8>) {
      %0 = dlc.sign %x : tensor<5xf32>
      %i = dlc.constant dense<[-5, 0, 7]> : tensor<3xi32>
      %1 = dlc.sign %i : tensor<3xi32>
      %b = dlc.constant dense<[-128, -3]> : tensor<2xi8>
      %2 = dlc.abs %b : tensor<2xi8>
      return %0, %1, %2 : tensor<5xf32>, tensor<3xi32>, tensor<2xi8>
    })mlir",
                                       {f32({5}, {NAN, -0.0f, 0.0f, -3, INFINITY})});
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {kNaN, 0, 0, -1, 1});
  expectValues(r[1], {-1, 0, 1});
  // |-128| = 128 wraps to -128 in i8, as in NumPy.
  expectValues(r[2], {-128, 3});
}

TEST_F(Elementwise, BinaryBroadcasting) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
      %a = dlc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %b = dlc.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
      %c = dlc.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
      %d = dlc.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
      %s = dlc.constant dense<1.0> : tensor<f32>
      %0 = dlc.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
      %1 = dlc.mul %c, %d : tensor<2x1xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
      %2 = dlc.sub %s, %a : tensor<f32>, tensor<2x3xf32> -> tensor<2x3xf32>
      return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
    })mlir");
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {11, 22, 33, 14, 25, 36});
  expectValues(r[1], {1, 2, 3, 2, 4, 6});
  expectValues(r[2], {0, -1, -2, -3, -4, -5});
}

TEST_F(Elementwise, IntegerDivisionTruncatesAndRemainderTakesDividendSign) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<4xi32>, tensor<4xi32>, tensor<2xf32>, tensor<1xi64>) {
      %a = dlc.constant dense<[7, -7, 7, -7]> : tensor<4xi32>
      %b = dlc.constant dense<[2, 2, -2, -2]> : tensor<4xi32>
      %0 = dlc.div %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
      %1 = dlc.rem %a, %b : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
      %x = dlc.constant dense<[7.5, -7.5]> : tensor<2xf32>
      %y = dlc.constant dense<2.0> : tensor<f32>
      %2 = dlc.rem %x, %y : tensor<2xf32>, tensor<f32> -> tensor<2xf32>
      %m = dlc.constant dense<-9223372036854775808> : tensor<1xi64>
      %n = dlc.constant dense<-1> : tensor<1xi64>
      %3 = dlc.div %m, %n : tensor<1xi64>, tensor<1xi64> -> tensor<1xi64>
      return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<2xf32>, tensor<1xi64>
    })mlir");
  ASSERT_EQ(r.size(), 4u);
  expectValues(r[0], {3, -3, -3, 3});
  expectValues(r[1], {1, -1, 1, -1});
  expectValues(r[2], {1.5, -1.5});
  // INT64_MIN / -1 overflows; it wraps to INT64_MIN instead of trapping.
  EXPECT_EQ(r[3].getInt(0), std::numeric_limits<int64_t>::min());
}

TEST_F(Elementwise, IntegerDivisionByZeroIsAnError) {
  std::string error = runError(R"mlir(
    func.func @main() -> tensor<2xi32> {
      %a = dlc.constant dense<[1, 2]> : tensor<2xi32>
      %b = dlc.constant dense<[1, 0]> : tensor<2xi32>
      %0 = dlc.div %a, %b : tensor<2xi32>, tensor<2xi32> -> tensor<2xi32>
      return %0 : tensor<2xi32>
    })mlir");
  EXPECT_NE(error.find("divides an integer by zero"), std::string::npos)
      << error;
}

TEST_F(Elementwise, IntegerPowIsExactAndWraps) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<8xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xf32>) {
      %b = dlc.constant dense<[2, 3, -2, 1, -1, -1, 2, 0]> : tensor<8xi32>
      %e = dlc.constant dense<[10, 0, 3, -5, -3, -4, -1, 0]> : tensor<8xi32>
      %0 = dlc.pow %b, %e : tensor<8xi32>, tensor<8xi32> -> tensor<8xi32>
      %b8 = dlc.constant dense<[3, 2]> : tensor<2xi8>
      %e8 = dlc.constant dense<[5, 7]> : tensor<2xi8>
      %1 = dlc.pow %b8, %e8 : tensor<2xi8>, tensor<2xi8> -> tensor<2xi8>
      %b32 = dlc.constant dense<2> : tensor<1xi32>
      %e32 = dlc.constant dense<31> : tensor<1xi32>
      %2 = dlc.pow %b32, %e32 : tensor<1xi32>, tensor<1xi32> -> tensor<1xi32>
      %x = dlc.constant dense<2.0> : tensor<1xf32>
      %h = dlc.constant dense<0.5> : tensor<1xf32>
      %3 = dlc.pow %x, %h : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>
      return %0, %1, %2, %3 : tensor<8xi32>, tensor<2xi8>, tensor<1xi32>, tensor<1xf32>
    })mlir");
  ASSERT_EQ(r.size(), 4u);
  // Negative exponents: 1 for base 1, +-1 for base -1, else 0.
  expectValues(r[0], {1024, 1, -8, 1, -1, 1, 0, 1});
  // 3^5 = 243 and 2^7 = 128 wrap in i8.
  expectValues(r[1], {-13, -128});
  expectValues(r[2], {-2147483648.0});
  expectValues(r[3], {static_cast<float>(std::sqrt(2.0))});
}

TEST_F(Elementwise, MaxAndMinPropagateNaN) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = dlc.max %x, %y : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      %1 = dlc.min %x, %y : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      return %0, %1 : tensor<3xf32>, tensor<3xf32>
    })mlir",
                                       {f32({3}, {1, NAN, 3}), f32({3}, {2, 2, NAN})});
  ASSERT_EQ(r.size(), 2u);
  expectValues(r[0], {2, kNaN, kNaN});
  expectValues(r[1], {1, kNaN, kNaN});
}

TEST_F(Elementwise, Int8AddWrapsOnOverflow) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<3xi8> {
      %a = dlc.constant dense<[100, -100, 127]> : tensor<3xi8>
      %b = dlc.constant dense<[100, -100, 1]> : tensor<3xi8>
      %0 = dlc.add %a, %b : tensor<3xi8>, tensor<3xi8> -> tensor<3xi8>
      return %0 : tensor<3xi8>
    })mlir");
  expectValues(out, {-56, 56, -128});
}

TEST_F(Elementwise, UInt64KeepsAllBits) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<2xui64>, tensor<2xui64>, tensor<2xui64>, tensor<2xi1>, tensor<2xui64>) {
      %a = dlc.constant dense<[18446744073709551615, 9223372036854775808]> : tensor<2xui64>
      %b = dlc.constant dense<[1, 3]> : tensor<2xui64>
      %0 = dlc.add %a, %b : tensor<2xui64>, tensor<2xui64> -> tensor<2xui64>
      %1 = dlc.sub %a, %b : tensor<2xui64>, tensor<2xui64> -> tensor<2xui64>
      %2 = dlc.div %a, %b : tensor<2xui64>, tensor<2xui64> -> tensor<2xui64>
      %3 = dlc.compare gt, %a, %b : tensor<2xui64>, tensor<2xui64> -> tensor<2xi1>
      %4 = dlc.max %a, %b : tensor<2xui64>, tensor<2xui64> -> tensor<2xui64>
      return %0, %1, %2, %3, %4 : tensor<2xui64>, tensor<2xui64>, tensor<2xui64>, tensor<2xi1>, tensor<2xui64>
    })mlir");
  ASSERT_EQ(r.size(), 5u);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t half = uint64_t(1) << 63;
  EXPECT_EQ(valuesOf<uint64_t>(r[0]), (std::vector<uint64_t>{0, half + 3}));
  EXPECT_EQ(valuesOf<uint64_t>(r[1]),
            (std::vector<uint64_t>{max - 1, half - 3}));
  EXPECT_EQ(valuesOf<uint64_t>(r[2]),
            (std::vector<uint64_t>{max, half / 3}));
  expectValues(r[3], {1, 1});
  EXPECT_EQ(valuesOf<uint64_t>(r[4]), (std::vector<uint64_t>{max, half}));
}

TEST_F(Elementwise, ComparePredicatesAndNaN) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>,
        tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
      %0 = dlc.compare eq, %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
      %1 = dlc.compare ne, %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
      %2 = dlc.compare lt, %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
      %3 = dlc.compare le, %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
      %4 = dlc.compare gt, %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
      %5 = dlc.compare ge, %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
      return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
    })mlir",
                                       {f32({4}, {1, 2, NAN, 4}), f32({4}, {2, 2, NAN, 3})});
  ASSERT_EQ(r.size(), 6u);
  expectValues(r[0], {0, 1, 0, 0});
  expectValues(r[1], {1, 0, 1, 1});
  expectValues(r[2], {1, 0, 0, 0});
  expectValues(r[3], {1, 1, 0, 0});
  expectValues(r[4], {0, 0, 0, 1});
  expectValues(r[5], {0, 1, 0, 1});
}

TEST_F(Elementwise, CompareBroadcasts) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<2x3xi1> {
      %x = dlc.constant dense<[[1, 5, 3], [4, 2, 6]]> : tensor<2x3xi32>
      %y = dlc.constant dense<[[3], [4]]> : tensor<2x1xi32>
      %0 = dlc.compare ge, %x, %y : tensor<2x3xi32>, tensor<2x1xi32> -> tensor<2x3xi1>
      return %0 : tensor<2x3xi1>
    })mlir");
  expectValues(out, {0, 1, 1, 1, 0, 1});
}

TEST_F(Elementwise, SelectBroadcastsAllThreeOperands) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<2x3xf32> {
      %c = dlc.constant dense<[[true], [false]]> : tensor<2x1xi1>
      %t = dlc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %f = dlc.constant dense<9.0> : tensor<f32>
      %0 = dlc.select %c, %t, %f : tensor<2x1xi1>, tensor<3xf32>, tensor<f32> -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir");
  expectValues(out, {1, 2, 3, 9, 9, 9});
}

TEST_F(Elementwise, LogicalOps) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
      %a = dlc.constant dense<[true, true, false, false]> : tensor<4xi1>
      %b = dlc.constant dense<[true, false, true, false]> : tensor<4xi1>
      %0 = dlc.and %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
      %1 = dlc.or %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
      %2 = dlc.xor %a, %b : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
      %3 = dlc.not %a : tensor<4xi1>
      return %0, %1, %2, %3 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
    })mlir");
  ASSERT_EQ(r.size(), 4u);
  expectValues(r[0], {1, 0, 0, 0});
  expectValues(r[1], {1, 1, 1, 0});
  expectValues(r[2], {0, 1, 1, 0});
  expectValues(r[3], {0, 0, 1, 1});
}

TEST_F(Elementwise, CastFloatToIntegerTruncatesAndSaturates) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<6xf32>, %u: tensor<4xf32>) -> (tensor<6xi32>, tensor<4xui8>, tensor<6xi1>) {
      %0 = dlc.cast %x : tensor<6xf32> to tensor<6xi32>
      %1 = dlc.cast %u : tensor<4xf32> to tensor<4xui8>
      %2 = dlc.cast %x : tensor<6xf32> to tensor<6xi1>
      return %0, %1, %2 : tensor<6xi32>, tensor<4xui8>, tensor<6xi1>
    })mlir",
                                       {f32({6}, {-2.7f, 2.7f, NAN, 1e10f, -1e10f, 0.0f}),
                                        f32({4}, {-1.5f, 300.0f, 255.9f, -0.5f})});
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {-2, 2, 0, 2147483647.0, -2147483648.0, 0});
  expectValues(r[1], {0, 255, 255, 0});
  // Anything to i1 is x != 0; NaN != 0.
  expectValues(r[2], {1, 1, 1, 1, 1, 0});
}

TEST_F(Elementwise, CastBetweenIntegersBoolsAndFloats) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<3xi8>, tensor<2xf32>, tensor<1xf32>, tensor<2xi1>, tensor<1xi32>) {
      %i = dlc.constant dense<[300, -129, 127]> : tensor<3xi32>
      %0 = dlc.cast %i : tensor<3xi32> to tensor<3xi8>
      %b = dlc.constant dense<[true, false]> : tensor<2xi1>
      %1 = dlc.cast %b : tensor<2xi1> to tensor<2xf32>
      %l = dlc.constant dense<16777217> : tensor<1xi64>
      %2 = dlc.cast %l : tensor<1xi64> to tensor<1xf32>
      %z = dlc.constant dense<[0, -4]> : tensor<2xi64>
      %3 = dlc.cast %z : tensor<2xi64> to tensor<2xi1>
      %h = dlc.constant dense<65504.0> : tensor<1xf16>
      %4 = dlc.cast %h : tensor<1xf16> to tensor<1xi32>
      return %0, %1, %2, %3, %4 : tensor<3xi8>, tensor<2xf32>, tensor<1xf32>, tensor<2xi1>, tensor<1xi32>
    })mlir");
  ASSERT_EQ(r.size(), 5u);
  expectValues(r[0], {44, 127, 127});
  expectValues(r[1], {1, 0});
  expectValues(r[2], {16777216});
  expectValues(r[3], {0, 1});
  expectValues(r[4], {65504});
}

TEST_F(Elementwise, CastNarrowsFloatsToNearestEven) {
  // 1 + 2^-11 is halfway between the f16 neighbours 1 and 1 + 2^-10; the
  // double 1 + 2^-11 + 2^-40 is just above it, which a float detour (it
  // rounds to the tie first) would get wrong.
  double justAbove = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<4xf32>, %d: tensor<1xf64>, %b: tensor<3xf32>)
        -> (tensor<4xf16>, tensor<1xf16>, tensor<3xbf16>) {
      %0 = dlc.cast %x : tensor<4xf32> to tensor<4xf16>
      %1 = dlc.cast %d : tensor<1xf64> to tensor<1xf16>
      %2 = dlc.cast %b : tensor<3xf32> to tensor<3xbf16>
      return %0, %1, %2 : tensor<4xf16>, tensor<1xf16>, tensor<3xbf16>
    })mlir",
                                       {f32({4}, {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
                                                  65520.0f, 65519.0f}),
                                        tensorOf<double>({1}, {justAbove}),
                                        f32({3}, {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f,
                                                  3.0e38f})});
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {1.0, 1.0 + 0x1p-9, kInf, 65504});
  expectValues(r[1], {1.0 + 0x1p-10});
  expectValues(r[2], {1.0, 1.0 + 0x1p-6,
                      BFloat16::fromFloat(3.0e38f).toFloat()});
}

TEST_F(Elementwise, SixteenBitResultsRoundOnStore) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<3xf16>, tensor<2xbf16>) {
      %a = dlc.constant dense<[2048.0, 2048.0, 0.1]> : tensor<3xf16>
      %b = dlc.constant dense<[1.0, 3.0, 0.2]> : tensor<3xf16>
      %0 = dlc.add %a, %b : tensor<3xf16>, tensor<3xf16> -> tensor<3xf16>
      %c = dlc.constant dense<[256.0, 1.0]> : tensor<2xbf16>
      %d = dlc.constant dense<[1.0, 0.00390625]> : tensor<2xbf16>
      %1 = dlc.add %c, %d : tensor<2xbf16>, tensor<2xbf16> -> tensor<2xbf16>
      return %0, %1 : tensor<3xf16>, tensor<2xbf16>
    })mlir");
  ASSERT_EQ(r.size(), 2u);
  // f16 has a spacing of 2 at 2048: 2049 ties to 2048, 2051 to 2052.
  float tenth = Half::fromFloat(0.1f).toFloat();
  float fifth = Half::fromFloat(0.2f).toFloat();
  expectValues(r[0],
               {2048, 2052, Half::fromFloat(tenth + fifth).toFloat()});
  // bf16 has a spacing of 2 at 256 and 2^-7 at 1: both sums are ties.
  expectValues(r[1], {256, 1});
}

/// The documented dropout mask, from Philox4x32-10 itself rather than
/// dlc::dropoutKeeps: key (seed low, seed high), counter (index low, index
/// high, stream, 0), element kept when the first word * 2^-32 >= ratio.
std::vector<bool> referenceMask(uint64_t seed, uint64_t stream, double ratio,
                                int64_t n) {
  std::vector<bool> keep;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t index = static_cast<uint64_t>(i);
    std::array<uint32_t, 4> bits = ::dlc::philox4x32(
        {uint32_t(index), uint32_t(index >> 32), uint32_t(stream), 0u},
        {uint32_t(seed), uint32_t(seed >> 32)});
    keep.push_back(double(bits[0]) / 4294967296.0 >= ratio);
  }
  return keep;
}

/// Two dropouts of one 1000-element input under the seed argument: streams
/// 0 and 1, ratios 0.5 and 0.1.
const char *kDropout = R"mlir(
    func.func @main(%x: tensor<1000xf32>, %s: tensor<i64>)
        -> (tensor<1000xf32>, tensor<1000xi1>, tensor<1000xf32>, tensor<1000xi1>) {
      %y, %m = dlc.dropout %x, %s {ratio = 0.5 : f64, stream = 0 : i64} : tensor<1000xf32>, tensor<i64> -> tensor<1000xi1>
      %z, %k = dlc.dropout %x, %s {ratio = 0.1 : f64, stream = 1 : i64} : tensor<1000xf32>, tensor<i64> -> tensor<1000xi1>
      return %y, %m, %z, %k : tensor<1000xf32>, tensor<1000xi1>, tensor<1000xf32>, tensor<1000xi1>
    })mlir";

class Dropout : public EvalTest {
protected:
  /// kDropout on x = 1.5 everywhere under `seed`.
  llvm::SmallVector<Tensor> draw(int64_t seed) {
    return runAll(kDropout,
                  {f32({1000}, std::vector<float>(1000, 1.5f)),
                   i64({}, {seed})});
  }
};

TEST_F(Dropout, MaskIsPhiloxOfSeedStreamAndIndex) {
  for (int64_t seed : {int64_t(0), int64_t(42), int64_t(-7),
                       int64_t(0x123456789abcdefLL)}) {
    llvm::SmallVector<Tensor> r = draw(seed);
    ASSERT_EQ(r.size(), 4u);
    std::vector<bool> keep0 = referenceMask(uint64_t(seed), 0, 0.5, 1000);
    std::vector<bool> keep1 = referenceMask(uint64_t(seed), 1, 0.1, 1000);
    for (int64_t i = 0; i < 1000; ++i) {
      ASSERT_EQ(r[1].getInt(i) != 0, keep0[i]) << "seed " << seed << " #" << i;
      ASSERT_EQ(r[3].getInt(i) != 0, keep1[i]) << "seed " << seed << " #" << i;
    }
  }
}

TEST_F(Dropout, IsDeterministicPerSeedAndDiffersAcrossSeedsAndStreams) {
  llvm::SmallVector<Tensor> first = draw(42), again = draw(42), other = draw(43);
  // The high half of the seed is part of the key too.
  llvm::SmallVector<Tensor> high = draw(42 + (int64_t(1) << 32));
  ASSERT_EQ(first.size(), 4u);
  ASSERT_EQ(again.size(), 4u);
  ASSERT_EQ(other.size(), 4u);
  ASSERT_EQ(high.size(), 4u);
  for (int k = 0; k < 4; ++k)
    EXPECT_TRUE(first[k] == again[k]) << "result " << k;
  EXPECT_FALSE(first[1] == other[1]);
  EXPECT_FALSE(first[3] == other[3]);
  EXPECT_FALSE(first[1] == high[1]);
  // Streams 0 and 1 at one ratio: the mask of stream 1 at ratio 0.5 is not
  // stream 0's.
  std::vector<bool> stream0 = referenceMask(42, 0, 0.5, 1000);
  std::vector<bool> stream1 = referenceMask(42, 1, 0.5, 1000);
  EXPECT_NE(stream0, stream1);
  // Uncorrelated streams agree on about half the elements: 500 +- 80 is
  // 5 sigma of a binomial(1000, 0.5).
  int64_t same = 0;
  for (int64_t i = 0; i < 1000; ++i)
    same += stream0[i] == stream1[i];
  EXPECT_NEAR(same, 500, 80);
}

TEST_F(Dropout, KeepsOneMinusRatioAndScalesByItsInverse) {
  llvm::SmallVector<Tensor> r = draw(7);
  ASSERT_EQ(r.size(), 4u);
  int64_t kept0 = 0, kept1 = 0;
  // f32 scales in double and rounds once: float(x / (1 - ratio)), or
  // exactly 0.
  float scaled0 = static_cast<float>(1.5 * (1.0 / 0.5));
  float scaled1 = static_cast<float>(1.5 * (1.0 / 0.9));
  for (int64_t i = 0; i < 1000; ++i) {
    bool keep0 = r[1].getInt(i) != 0, keep1 = r[3].getInt(i) != 0;
    EXPECT_EQ(r[0].getDouble(i), keep0 ? scaled0 : 0.0) << i;
    EXPECT_EQ(r[2].getDouble(i), keep1 ? scaled1 : 0.0) << i;
    kept0 += keep0;
    kept1 += keep1;
  }
  // 5 sigma of binomial(1000, 0.5) and binomial(1000, 0.9): 80 and 48.
  EXPECT_NEAR(kept0, 500, 80);
  EXPECT_NEAR(kept1, 900, 48);
  // Over many draws the fraction is close: 10^6 elements at ratio 0.25
  // keep 750000 +- 2200 (5 sigma).
  int64_t kept = 0;
  for (int64_t i = 0; i < 1000000; ++i)
    kept += ::dlc::dropoutKeeps(7, 3, uint64_t(i), 0.25);
  EXPECT_NEAR(kept, 750000, 2200);
}

TEST_F(Elementwise, DropoutWithZeroRatioIsTheIdentity) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<3xf16>, tensor<3xi1>, tensor<2xf16>) {
      %s = dlc.constant dense<3> : tensor<i64>
      %x = dlc.constant dense<[1.0, -2.0, 0.1]> : tensor<3xf16>
      %y, %m = dlc.dropout %x, %s {ratio = 0.0 : f64, stream = 0 : i64} : tensor<3xf16>, tensor<i64> -> tensor<3xi1>
      %o = dlc.constant dense<[1.0, 1.0]> : tensor<2xf16>
      %z, %k = dlc.dropout %o, %s {ratio = 0.25 : f64, stream = 2 : i64} : tensor<2xf16>, tensor<i64> -> tensor<2xi1>
      return %y, %m, %z : tensor<3xf16>, tensor<3xi1>, tensor<2xf16>
    })mlir");
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {1.0, -2.0, Half::fromFloat(0.1f).toFloat()});
  expectValues(r[1], {1, 1, 1});
  // f16 scales in float: 1 * (1 / 0.75) rounded to f16, or 0.
  std::vector<bool> keep = referenceMask(3, 2, 0.25, 2);
  float scaled = Half::fromFloat(static_cast<float>(1.0 / 0.75)).toFloat();
  expectValues(r[2], {keep[0] ? scaled : 0.0, keep[1] ? scaled : 0.0});
}

} // namespace
