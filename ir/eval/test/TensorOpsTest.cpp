//===- TensorOpsTest.cpp - Evaluator tests of data movement ops -----------===//
//
// reshape, transpose, broadcast_to, concat, slice (negative strides), pad
// (every mode), gather (negative and out-of-range indices), gather_elements
// and scatter_elements (every reduction). Expected values are written out
// by hand or, for permutations of a 0..n-1 iota, by the index formula.
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"

using namespace dlc::evaltest;

namespace {

using TensorOps = EvalTest;

std::vector<float> iota(int n) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i)
    values[i] = static_cast<float>(i);
  return values;
}

TEST_F(TensorOps, ReshapeKeepsRowMajorOrder) {
  Tensor out = runOne(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
      %0 = dlc.reshape %x : tensor<2x3xf32> to tensor<3x2xf32>
      return %0 : tensor<3x2xf32>
    })mlir",
                      {f32({2, 3}, iota(6))});
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{3, 2}));
  expectValues(out, {0, 1, 2, 3, 4, 5});
}

TEST_F(TensorOps, TransposeThreeDimensions) {
  // Result dimension i is input dimension perm[i]: out[i][j][k] = x[j][k][i].
  Tensor out = runOne(R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
      %0 = dlc.transpose %x [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
      return %0 : tensor<4x2x3xf32>
    })mlir",
                      {f32({2, 3, 4}, iota(24))});
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k)
        expected.push_back(j * 12 + k * 4 + i);
  expectValues(out, expected);
}

TEST_F(TensorOps, BroadcastToAddsAndStretchesDimensions) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<3x2x4xi32> {
      %x = dlc.constant dense<[[5], [7]]> : tensor<2x1xi32>
      %0 = dlc.broadcast_to %x : tensor<2x1xi32> to tensor<3x2x4xi32>
      return %0 : tensor<3x2x4xi32>
    })mlir");
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 4; ++k)
        expected.push_back(j == 0 ? 5 : 7);
  expectValues(out, expected);
}

TEST_F(TensorOps, ConcatAlongInnerAxis) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<2x4xf32> {
      %a = dlc.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
      %b = dlc.constant dense<[[3.0, 4.0], [5.0, 6.0]]> : tensor<2x2xf32>
      %c = dlc.constant dense<[[7.0], [8.0]]> : tensor<2x1xf32>
      %0 = dlc.concat %a, %b, %c {axis = 1 : i64} : tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x4xf32>
      return %0 : tensor<2x4xf32>
    })mlir");
  expectValues(out, {1, 3, 4, 7, 2, 5, 6, 8});
}

TEST_F(TensorOps, SliceWithNegativeAndLargeStrides) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<3x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>) {
      %0 = dlc.slice %x offsets [2, 3] sizes [2, 2] strides [-1, -2] : tensor<3x4xf32> -> tensor<2x2xf32>
      %1 = dlc.slice %x offsets [0, 0] sizes [2, 2] strides [2, 3] : tensor<3x4xf32> -> tensor<2x2xf32>
      %r = dlc.reshape %x : tensor<3x4xf32> to tensor<12xf32>
      %2 = dlc.slice %r offsets [11] sizes [4] strides [-3] : tensor<12xf32> -> tensor<4xf32>
      return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<4xf32>
    })mlir",
                                       {f32({3, 4}, iota(12))});
  ASSERT_EQ(r.size(), 3u);
  // Rows 2, 1 and columns 3, 1.
  expectValues(r[0], {11, 9, 7, 5});
  // Rows 0, 2 and columns 0, 3.
  expectValues(r[1], {0, 3, 8, 11});
  expectValues(r[2], {11, 8, 5, 2});
}

TEST_F(TensorOps, PadConstantDefaultsToZeroOrTakesTheValue) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<6xf32>, tensor<6xf32>, tensor<3x3xi32>) {
      %x = dlc.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
      %v = dlc.constant dense<9.0> : tensor<f32>
      %0 = dlc.pad %x low [2] high [1] mode constant : tensor<3xf32> -> tensor<6xf32>
      %1 = dlc.pad %x value %v : tensor<f32> low [2] high [1] mode constant : tensor<3xf32> -> tensor<6xf32>
      %m = dlc.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
      %w = dlc.constant dense<-1> : tensor<i32>
      %2 = dlc.pad %m value %w : tensor<i32> low [1, 0] high [0, 1] mode constant : tensor<2x2xi32> -> tensor<3x3xi32>
      return %0, %1, %2 : tensor<6xf32>, tensor<6xf32>, tensor<3x3xi32>
    })mlir");
  ASSERT_EQ(r.size(), 3u);
  expectValues(r[0], {0, 0, 1, 2, 3, 0});
  expectValues(r[1], {9, 9, 1, 2, 3, 9});
  expectValues(r[2], {-1, -1, -1, 1, 2, -1, 3, 4, -1});
}

TEST_F(TensorOps, PadReflectMirrorsWithoutTheEdge) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<9xf32>, tensor<5x5xf32>) {
      %x = dlc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
      %0 = dlc.pad %x low [2] high [3] mode reflect : tensor<4xf32> -> tensor<9xf32>
      %m = dlc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]> : tensor<3x3xf32>
      %1 = dlc.pad %m low [1, 1] high [1, 1] mode reflect : tensor<3x3xf32> -> tensor<5x5xf32>
      return %0, %1 : tensor<9xf32>, tensor<5x5xf32>
    })mlir");
  ASSERT_EQ(r.size(), 2u);
  expectValues(r[0], {3, 2, 1, 2, 3, 4, 3, 2, 1});
  expectValues(r[1], {5, 4, 5, 6, 5, //
                      2, 1, 2, 3, 2, //
                      5, 4, 5, 6, 5, //
                      8, 7, 8, 9, 8, //
                      5, 4, 5, 6, 5});
}

TEST_F(TensorOps, PadEdgeRepeatsTheEdge) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<2x7xf32> {
      %x = dlc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %0 = dlc.pad %x low [0, 2] high [0, 2] mode edge : tensor<2x3xf32> -> tensor<2x7xf32>
      return %0 : tensor<2x7xf32>
    })mlir");
  expectValues(out, {1, 1, 1, 2, 3, 3, 3, 4, 4, 4, 5, 6, 6, 6});
}

TEST_F(TensorOps, GatherWrapsNegativeIndices) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<2x2x2xf32>, tensor<2x2xf32>) {
      %d = dlc.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
      %i = dlc.constant dense<[[0, -1], [2, -3]]> : tensor<2x2xi64>
      %0 = dlc.gather %d[%i] {axis = 0 : i64} : tensor<3x2xf32>, tensor<2x2xi64> -> tensor<2x2x2xf32>
      %e = dlc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %j = dlc.constant dense<[2, -2]> : tensor<2xi32>
      %1 = dlc.gather %e[%j] {axis = 1 : i64} : tensor<2x3xf32>, tensor<2xi32> -> tensor<2x2xf32>
      return %0, %1 : tensor<2x2x2xf32>, tensor<2x2xf32>
    })mlir");
  ASSERT_EQ(r.size(), 2u);
  expectValues(r[0], {1, 2, 5, 6, 5, 6, 1, 2});
  expectValues(r[1], {3, 2, 6, 5});
}

TEST_F(TensorOps, GatherOutOfRangeNamesTheIndexAndRange) {
  std::string error = runError(R"mlir(
    func.func @main() -> tensor<3x2xf32> {
      %d = dlc.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
      %i = dlc.constant dense<[0, 1, -4]> : tensor<3xi64>
      %0 = dlc.gather %d[%i] {axis = 0 : i64} : tensor<3x2xf32>, tensor<3xi64> -> tensor<3x2xf32>
      return %0 : tensor<3x2xf32>
    })mlir");
  EXPECT_NE(error.find("index -4 at position 2"), std::string::npos) << error;
  EXPECT_NE(error.find("[-3, 3)"), std::string::npos) << error;
}

TEST_F(TensorOps, GatherElementsAlongEachAxis) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<2x2xf32>, tensor<1x3xf32>) {
      %d = dlc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %i = dlc.constant dense<[[0, -1], [1, 0]]> : tensor<2x2xi64>
      %0 = dlc.gather_elements %d[%i] {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
      %j = dlc.constant dense<[[1, 0, 1]]> : tensor<1x3xi32>
      %1 = dlc.gather_elements %d[%j] {axis = 0 : i64} : tensor<2x3xf32>, tensor<1x3xi32> -> tensor<1x3xf32>
      return %0, %1 : tensor<2x2xf32>, tensor<1x3xf32>
    })mlir");
  ASSERT_EQ(r.size(), 2u);
  expectValues(r[0], {1, 3, 5, 4});
  expectValues(r[1], {4, 2, 6});
}

TEST_F(TensorOps, GatherElementsOutOfRangeIsAnError) {
  std::string error = runError(R"mlir(
    func.func @main() -> tensor<1x1xf32> {
      %d = dlc.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
      %i = dlc.constant dense<[[3]]> : tensor<1x1xi64>
      %0 = dlc.gather_elements %d[%i] {axis = 1 : i64} : tensor<1x3xf32>, tensor<1x1xi64> -> tensor<1x1xf32>
      return %0 : tensor<1x1xf32>
    })mlir");
  EXPECT_NE(error.find("index 3 at position 0"), std::string::npos) << error;
}

const char *kScatter = R"mlir(
    func.func @main() -> tensor<1x5xf32> {
      %d = dlc.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0]]> : tensor<1x5xf32>
      %i = dlc.constant dense<[[1, 3, 1, -1]]> : tensor<1x4xi64>
      %u = dlc.constant dense<[[10.0, 20.0, 30.0, 40.0]]> : tensor<1x4xf32>
      %0 = dlc.scatter_elements %d[%i], %u {axis = 1 : i64} reduction MODE : tensor<1x5xf32>, tensor<1x4xi64>, tensor<1x4xf32>
      return %0 : tensor<1x5xf32>
    })mlir";

std::string scatterWith(const std::string &mode) {
  std::string source = kScatter;
  source.replace(source.find("MODE"), 4, mode);
  return source;
}

TEST_F(TensorOps, ScatterElementsReductions) {
  // Index 1 is hit twice (10 then 30); -1 is the last column.
  expectValues(runOne(scatterWith("none")), {1, 30, 3, 20, 40});
  expectValues(runOne(scatterWith("add")), {1, 42, 3, 24, 45});
  expectValues(runOne(scatterWith("mul")), {1, 600, 3, 80, 200});
  expectValues(runOne(scatterWith("max")), {1, 30, 3, 20, 40});
  expectValues(runOne(scatterWith("min")), {1, 2, 3, 4, 5});
}

TEST_F(TensorOps, ScatterElementsOutOfRangeIsAnError) {
  std::string error = runError(R"mlir(
    func.func @main() -> tensor<1x3xf32> {
      %d = dlc.constant dense<0.0> : tensor<1x3xf32>
      %i = dlc.constant dense<[[3]]> : tensor<1x1xi64>
      %u = dlc.constant dense<[[1.0]]> : tensor<1x1xf32>
      %0 = dlc.scatter_elements %d[%i], %u {axis = 1 : i64} reduction none : tensor<1x3xf32>, tensor<1x1xi64>, tensor<1x1xf32>
      return %0 : tensor<1x3xf32>
    })mlir");
  EXPECT_NE(error.find("index 3 at position 0"), std::string::npos) << error;
}

TEST_F(TensorOps, ScatterElementsAlongTheOuterAxis) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<3x2xi32> {
      %d = dlc.constant dense<0> : tensor<3x2xi32>
      %i = dlc.constant dense<[[1, 0], [2, 2]]> : tensor<2x2xi32>
      %u = dlc.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
      %0 = dlc.scatter_elements %d[%i], %u {axis = 0 : i64} reduction add : tensor<3x2xi32>, tensor<2x2xi32>, tensor<2x2xi32>
      return %0 : tensor<3x2xi32>
    })mlir");
  expectValues(out, {0, 2, 1, 0, 3, 4});
}

} // namespace
