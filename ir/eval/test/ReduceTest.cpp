//===- ReduceTest.cpp - Evaluator tests of reductions and scans -----------===//
//
// reduce_sum/prod/max/min (axes, keep_dims, NaN, empty sets, integer wrap,
// float64 accumulation), argmax/argmin (ties, select_last_index, NaN) and
// cumsum (exclusive, reverse), top_k (largest and smallest, ties, NaN, k = 0,
// inner axes, integer and half types).
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"

#include <limits>

using namespace dlc::evaltest;

namespace {

using Reduce = EvalTest;


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

TEST_F(Reduce, TopKLargestAndSmallestBreakTiesByLowerIndex) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xi64>) {
      %0, %1 = dlc.top_k %x {axis = 1 : i64, k = 3 : i64, largest, sorted} : tensor<2x5xf32> -> tensor<2x3xf32>, tensor<2x3xi64>
      %2, %3 = dlc.top_k %x {axis = 1 : i64, k = 3 : i64, sorted} : tensor<2x5xf32> -> tensor<2x3xf32>, tensor<2x3xi64>
      return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>, tensor<2x3xi64>
    })mlir",
                                       {f32({2, 5}, {1, 3, 2, 3, 1,
                                                     -0.0f, 5, 0, 5, 5})});
  ASSERT_EQ(r.size(), 4u);
  // Equal values keep their positions' order, in both directions.
  expectValues(r[0], {3, 3, 2, 5, 5, 5});
  expectValues(r[1], {1, 3, 2, 1, 3, 4});
  expectValues(r[2], {1, 1, 2, 0, 0, 5});
  // -0 and 0 are equal: the lower index comes first.
  expectValues(r[3], {0, 4, 2, 0, 2, 1});
}

TEST_F(Reduce, TopKOrdersNaNAboveEveryNumber) {
  // NaN is larger than +inf: first for the largest, last for the smallest;
  // two NaNs are ordered by position.
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<5xf32>) -> (tensor<3xf32>, tensor<3xi64>, tensor<5xf32>, tensor<5xi64>) {
      %0, %1 = dlc.top_k %x {axis = 0 : i64, k = 3 : i64, largest, sorted} : tensor<5xf32> -> tensor<3xf32>, tensor<3xi64>
      %2, %3 = dlc.top_k %x {axis = 0 : i64, k = 5 : i64} : tensor<5xf32> -> tensor<5xf32>, tensor<5xi64>
      return %0, %1, %2, %3 : tensor<3xf32>, tensor<3xi64>, tensor<5xf32>, tensor<5xi64>
    })mlir",
                                       {f32({5}, {2, NAN, INFINITY, NAN, -1})});
  ASSERT_EQ(r.size(), 4u);
  expectValues(r[0], {kNaN, kNaN, kInf});
  expectValues(r[1], {1, 3, 2});
  // Without `sorted` the order is still the sorted one.
  expectValues(r[2], {-1, 2, kInf, kNaN, kNaN});
  expectValues(r[3], {4, 0, 2, 1, 3});
}

TEST_F(Reduce, TopKAlongAnInnerAxis) {
  // x[i][j][l] = 10 * ((j * 7 + i * 3) % 4) + l: the order of j depends on
  // i and is the same for every l.
  std::vector<float> x(2 * 4 * 2);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 2; ++l)
        x[(i * 4 + j) * 2 + l] = 10.0f * ((j * 7 + i * 3) % 4) + l;
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<2x4x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2x2xi64>) {
      %0, %1 = dlc.top_k %x {axis = 1 : i64, k = 2 : i64, largest, sorted} : tensor<2x4x2xf32> -> tensor<2x2x2xf32>, tensor<2x2x2xi64>
      return %0, %1 : tensor<2x2x2xf32>, tensor<2x2x2xi64>
    })mlir",
                                       {f32({2, 4, 2}, x)});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].shape(), (std::vector<int64_t>{2, 2, 2}));
  // i = 0: j -> 0, 30, 20, 10; i = 1: j -> 30, 20, 10, 0.
  expectValues(r[0], {30, 31, 20, 21, 30, 31, 20, 21});
  expectValues(r[1], {1, 1, 2, 2, 0, 0, 1, 1});
}

TEST_F(Reduce, TopKOfZeroElementsAndOfEmptyAxes) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<2x3xf32>, %e: tensor<2x0xf32>) -> (tensor<2x0xf32>, tensor<2x0xi64>, tensor<2x0xf32>, tensor<2x0xi64>) {
      %0, %1 = dlc.top_k %x {axis = 1 : i64, k = 0 : i64, largest, sorted} : tensor<2x3xf32> -> tensor<2x0xf32>, tensor<2x0xi64>
      %2, %3 = dlc.top_k %e {axis = 1 : i64, k = 0 : i64} : tensor<2x0xf32> -> tensor<2x0xf32>, tensor<2x0xi64>
      return %0, %1, %2, %3 : tensor<2x0xf32>, tensor<2x0xi64>, tensor<2x0xf32>, tensor<2x0xi64>
    })mlir",
                                       {f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                                        f32({2, 0}, {})});
  ASSERT_EQ(r.size(), 4u);
  for (const Tensor &t : r)
    EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(r[1].dtype(), DType::I64);
}

TEST_F(Reduce, TopKOfIntegerAndHalfTypes) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<3xi64>, tensor<3xi64>, tensor<2xui8>, tensor<2xi64>, tensor<2xi32>, tensor<2xi64>, tensor<2xf16>, tensor<2xi64>) {
      %a = dlc.constant dense<[-9223372036854775808, 9223372036854775807, 9223372036854775806, 0]> : tensor<4xi64>
      %0, %1 = dlc.top_k %a {axis = 0 : i64, k = 3 : i64, largest, sorted} : tensor<4xi64> -> tensor<3xi64>, tensor<3xi64>
      %b = dlc.constant dense<[200, 7, 255, 255]> : tensor<4xui8>
      %2, %3 = dlc.top_k %b {axis = 0 : i64, k = 2 : i64, largest, sorted} : tensor<4xui8> -> tensor<2xui8>, tensor<2xi64>
      %c = dlc.constant dense<[[5, -3], [-7, 5]]> : tensor<2x2xi32>
      %4, %5 = dlc.top_k %c {axis = 0 : i64, k = 1 : i64, sorted} : tensor<2x2xi32> -> tensor<1x2xi32>, tensor<1x2xi64>
      %6 = dlc.reshape %4 : tensor<1x2xi32> to tensor<2xi32>
      %7 = dlc.reshape %5 : tensor<1x2xi64> to tensor<2xi64>
      %d = dlc.constant dense<[0.5, 2.0, -1.0, 2.0]> : tensor<4xf16>
      %8, %9 = dlc.top_k %d {axis = 0 : i64, k = 2 : i64, largest, sorted} : tensor<4xf16> -> tensor<2xf16>, tensor<2xi64>
      return %0, %1, %2, %3, %6, %7, %8, %9 : tensor<3xi64>, tensor<3xi64>, tensor<2xui8>, tensor<2xi64>, tensor<2xi32>, tensor<2xi64>, tensor<2xf16>, tensor<2xi64>
    })mlir");
  ASSERT_EQ(r.size(), 8u);
  // 64-bit values compare exactly (a double would tie the two largest).
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(valuesOf<int64_t>(r[0]), (std::vector<int64_t>{max, max - 1, 0}));
  expectValues(r[1], {1, 2, 3});
  // Unsigned: 255 is the largest, not -1.
  expectValues(r[2], {255, 255});
  expectValues(r[3], {2, 3});
  expectValues(r[4], {-7, -3});
  expectValues(r[5], {1, 0});
  expectValues(r[6], {2, 2});
  expectValues(r[7], {1, 3});
}

} // namespace
