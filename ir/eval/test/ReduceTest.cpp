//===- ReduceTest.cpp - Evaluator tests of reductions and scans -----------===//
//
// reduce_sum/prod/max/min (axes, keep_dims, NaN, empty sets, integer wrap,
// float64 accumulation), argmax/argmin (ties, select_last_index, NaN) and
// cumsum (exclusive, reverse).
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"

#include <limits>

using namespace dlc::evaltest;

namespace {

using Reduce = EvalTest;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST_F(Reduce, SumOverAxesWithAndWithoutKeepDims) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<2x1xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3xf32>) {
      %x = dlc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %0 = dlc.reduce_sum %x axes [1] keep_dims : tensor<2x3xf32> -> tensor<2x1xf32>
      %1 = dlc.reduce_sum %x axes [0] : tensor<2x3xf32> -> tensor<3xf32>
      %2 = dlc.reduce_sum %x axes [0, 1] : tensor<2x3xf32> -> tensor<f32>
      %3 = dlc.reduce_sum %x axes [] : tensor<2x3xf32> -> tensor<2x3xf32>
      return %0, %1, %2, %3 : tensor<2x1xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3xf32>
    })mlir");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{2, 1}));
  expectValues(r[0], {6, 15});
  expectValues(r[1], {5, 7, 9});
  expectValues(r[2], {21});
  expectValues(r[3], {1, 2, 3, 4, 5, 6});
}

TEST_F(Reduce, SumOverOuterAndInnerAxes) {
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i)
    x[i] = static_cast<float>(i);
  Tensor out = runOne(R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>) -> tensor<1x3x1xf32> {
      %0 = dlc.reduce_sum %x axes [0, 2] keep_dims : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
      return %0 : tensor<1x3x1xf32>
    })mlir",
                      {f32({2, 3, 4}, x)});
  // sum over i, k of 12 i + 4 j + k = 4 * 12 + 8 * 4 j + 2 * 6.
  expectValues(out, {60, 92, 124});
}

TEST_F(Reduce, ProdMaxMinAndNaN) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) {
      %0 = dlc.reduce_prod %x axes [1] : tensor<2x3xf32> -> tensor<2xf32>
      %1 = dlc.reduce_max %x axes [1] : tensor<2x3xf32> -> tensor<2xf32>
      %2 = dlc.reduce_min %x axes [1] : tensor<2x3xf32> -> tensor<2xf32>
      %3 = dlc.reduce_max %x axes [0] : tensor<2x3xf32> -> tensor<3xf32>
      return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>
    })mlir",
                                       {f32({2, 3}, {1, NAN, 3, 4, -5, 6})});
  ASSERT_EQ(r.size(), 4u);
  expectValues(r[0], {kNaN, -120});
  expectValues(r[1], {kNaN, 6});
  expectValues(r[2], {kNaN, -5});
  expectValues(r[3], {4, kNaN, 6});
}

TEST_F(Reduce, EmptySetsGiveTheIdentity) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<0x2xf32>, %i: tensor<0x2xi8>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi8>) {
      %0 = dlc.reduce_sum %x axes [0] : tensor<0x2xf32> -> tensor<2xf32>
      %1 = dlc.reduce_prod %x axes [0] : tensor<0x2xf32> -> tensor<2xf32>
      %2 = dlc.reduce_max %x axes [0] : tensor<0x2xf32> -> tensor<2xf32>
      %3 = dlc.reduce_min %x axes [0] : tensor<0x2xf32> -> tensor<2xf32>
      %4 = dlc.reduce_max %i axes [0] : tensor<0x2xi8> -> tensor<2xi8>
      return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xi8>
    })mlir",
                                       {f32({0, 2}, {}), tensorOf<int8_t>({0, 2}, {})});
  ASSERT_EQ(r.size(), 5u);
  expectValues(r[0], {0, 0});
  expectValues(r[1], {1, 1});
  expectValues(r[2], {-kInf, -kInf});
  expectValues(r[3], {kInf, kInf});
  expectValues(r[4], {-128, -128});
}

TEST_F(Reduce, IntegerSumWrapsOnStore) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<i8> {
      %x = dlc.constant dense<[100, 100, 27]> : tensor<3xi8>
      %0 = dlc.reduce_sum %x axes [0] : tensor<3xi8> -> tensor<i8>
      return %0 : tensor<i8>
    })mlir");
  // 227 wraps to -29; partial sums do not wrap (they are 64-bit).
  expectValues(out, {-29});
}

TEST_F(Reduce, Float32SumsAccumulateInFloat64) {
  // 1e8 has a float32 spacing of 8, so adding 104 ones one at a time in
  // float32 would stay at 1e8; in float64 the sum is 100000104, which is a
  // float32 value.
  std::vector<float> x(105, 1.0f);
  x[0] = 1e8f;
  Tensor out = runOne(R"mlir(
    func.func @main(%x: tensor<105xf32>) -> tensor<f32> {
      %0 = dlc.reduce_sum %x axes [0] : tensor<105xf32> -> tensor<f32>
      return %0 : tensor<f32>
    })mlir",
                      {f32({105}, x)});
  expectValues(out, {100000104.0});
}

TEST_F(Reduce, HalfSumsRoundOnceAtTheEnd) {
  // f16 has a spacing of 2 at 2048: adding the ones one at a time in f16
  // would tie back to 2048 each time; the float64 sum 2050 is an f16 value.
  Tensor out = runOne(R"mlir(
    func.func @main() -> (tensor<f16>) {
      %x = dlc.constant dense<[2048.0, 1.0, 1.0]> : tensor<3xf16>
      %0 = dlc.reduce_sum %x axes [0] : tensor<3xf16> -> tensor<f16>
      return %0 : tensor<f16>
    })mlir");
  expectValues(out, {2050});
}

TEST_F(Reduce, ArgMaxAndArgMinTies) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<2xi64>, tensor<2xi64>, tensor<2x1xi64>, tensor<2xi64>, tensor<2xi64>) {
      %x = dlc.constant dense<[[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 1.0, 1.0]]> : tensor<2x4xf32>
      %0 = dlc.argmax %x {axis = 1 : i64} : tensor<2x4xf32> -> tensor<2xi64>
      %1 = dlc.argmax %x {axis = 1 : i64, select_last_index} : tensor<2x4xf32> -> tensor<2xi64>
      %2 = dlc.argmin %x {axis = 1 : i64, keep_dims} : tensor<2x4xf32> -> tensor<2x1xi64>
      %3 = dlc.argmin %x {axis = 1 : i64, keep_dims, select_last_index} : tensor<2x4xf32> -> tensor<2x1xi64>
      %4 = dlc.reshape %3 : tensor<2x1xi64> to tensor<2xi64>
      %y = dlc.constant dense<[[1, 5], [3, 2]]> : tensor<2x2xi32>
      %5 = dlc.argmax %y {axis = 0 : i64} : tensor<2x2xi32> -> tensor<2xi64>
      return %0, %1, %2, %4, %5 : tensor<2xi64>, tensor<2xi64>, tensor<2x1xi64>, tensor<2xi64>, tensor<2xi64>
    })mlir");
  ASSERT_EQ(r.size(), 5u);
  expectValues(r[0], {1, 0});
  expectValues(r[1], {2, 1});
  EXPECT_EQ(r[2].shape(), (std::vector<int64_t>{2, 1}));
  expectValues(r[2], {0, 2});
  expectValues(r[3], {0, 3});
  expectValues(r[4], {1, 0});
}

TEST_F(Reduce, ArgMaxPicksTheFirstNaN) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<1x4xf32>) -> (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) {
      %0 = dlc.argmax %x {axis = 1 : i64} : tensor<1x4xf32> -> tensor<1xi64>
      %1 = dlc.argmax %x {axis = 1 : i64, select_last_index} : tensor<1x4xf32> -> tensor<1xi64>
      %2 = dlc.argmin %x {axis = 1 : i64} : tensor<1x4xf32> -> tensor<1xi64>
      return %0, %1, %2 : tensor<1xi64>, tensor<1xi64>, tensor<1xi64>
    })mlir",
                                       {f32({1, 4}, {1, NAN, 5, NAN})});
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {1});
  expectValues(r[1], {1});
  expectValues(r[2], {1});
}

const char *kCumSum = R"mlir(
    func.func @main() -> tensor<4xf32> {
      %x = dlc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %0 = dlc.cumsum %x {axis = 0 : i64FLAGS} : tensor<4xf32>
      return %0 : tensor<4xf32>
    })mlir";

std::string cumsumWith(const std::string &flags) {
  std::string source = kCumSum;
  source.replace(source.find("FLAGS"), 5, flags);
  return source;
}

TEST_F(Reduce, CumSumExclusiveAndReverse) {
  expectValues(runOne(cumsumWith("")), {1, 3, 6, 10});
  expectValues(runOne(cumsumWith(", exclusive")), {0, 1, 3, 6});
  expectValues(runOne(cumsumWith(", reverse")), {10, 9, 7, 4});
  expectValues(runOne(cumsumWith(", exclusive, reverse")), {9, 7, 4, 0});
}

TEST_F(Reduce, CumSumAlongAxesAndIntegerWrap) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<3xi8>) {
      %x = dlc.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %0 = dlc.cumsum %x {axis = 1 : i64} : tensor<2x2xf32>
      %1 = dlc.cumsum %x {axis = 0 : i64} : tensor<2x2xf32>
      %i = dlc.constant dense<[100, 100, 100]> : tensor<3xi8>
      %2 = dlc.cumsum %i {axis = 0 : i64} : tensor<3xi8>
      return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<3xi8>
    })mlir");
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {1, 3, 3, 7});
  expectValues(r[1], {1, 2, 4, 6});
  // Prefix sums 100, 200, 300 stored modulo 256.
  expectValues(r[2], {100, -56, 44});
}

} // namespace
