//===- NNTest.cpp - Evaluator tests of matmul, conv and pooling -----------===//
//
// Hand examples for each op, and for conv a naive reference written straight
// from the op's description (dilate the input, pad it, correlate with the
// dilated filter at steps of the stride). The test data are small multiples
// of 1/4, so every product and partial sum is exact in float64 and in
// float32, and the comparisons are exact whatever the summation order.
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"

#include <limits>

using namespace dlc::evaltest;

namespace {

/// Deterministic data in [-2, 2] in steps of 1/4.
std::vector<float> quarters(int64_t n, int64_t salt) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = static_cast<float>(((i * 37 + salt * 11) % 17) - 8) / 4.0f;
  return values;
}

struct Conv2dParams {
  int64_t n, c, h, w;       // input
  int64_t o, kh, kw;        // filter (input channels per group: c / groups)
  int64_t groups;
  int64_t stride[2], padLow[2], padHigh[2], dilation[2], inputDilation[2];
};

/// Output size of one dimension, from the description.
int64_t outSize(int64_t in, int64_t k, int64_t stride, int64_t lo, int64_t hi,
                int64_t dil, int64_t idil) {
  int64_t dilated = (in - 1) * idil + 1 + lo + hi;
  return (dilated - ((k - 1) * dil + 1)) / stride + 1;
}

/// The padded, dilated input at (row, col) of the virtual image: zero in the
/// padding and in the holes input dilation inserts.
double virtualPixel(const std::vector<float> &x, const Conv2dParams &p,
                    int64_t n, int64_t c, int64_t row, int64_t col) {
  int64_t r = row - p.padLow[0], s = col - p.padLow[1];
  if (r < 0 || s < 0 || r % p.inputDilation[0] || s % p.inputDilation[1])
    return 0.0;
  r /= p.inputDilation[0];
  s /= p.inputDilation[1];
  if (r >= p.h || s >= p.w)
    return 0.0;
  return x[((n * p.c + c) * p.h + r) * p.w + s];
}

std::vector<double> naiveConv2d(const std::vector<float> &x,
                                const std::vector<float> &w,
                                const Conv2dParams &p, int64_t &oh,
                                int64_t &ow) {
  oh = outSize(p.h, p.kh, p.stride[0], p.padLow[0], p.padHigh[0],
               p.dilation[0], p.inputDilation[0]);
  ow = outSize(p.w, p.kw, p.stride[1], p.padLow[1], p.padHigh[1],
               p.dilation[1], p.inputDilation[1]);
  int64_t cg = p.c / p.groups, og = p.o / p.groups;
  std::vector<double> out;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double sum = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j)
                sum += virtualPixel(x, p, n, (o / og) * cg + c,
                                    y * p.stride[0] + i * p.dilation[0],
                                    z * p.stride[1] + j * p.dilation[1]) *
                       w[((o * cg + c) * p.kh + i) * p.kw + j];
          out.push_back(sum);
        }
  return out;
}

std::string list(const int64_t (&v)[2]) {
  return "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + "]";
}

std::string tensorType(std::initializer_list<int64_t> shape) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + "f32>";
}

class NN : public EvalTest {
protected:
  void checkConvAgainstNaive(const Conv2dParams &p);
};

/// Runs dlc.conv with `p` on quarter-step data and checks it against the
/// naive formula, exactly.
void NN::checkConvAgainstNaive(const Conv2dParams &p) {
  std::vector<float> x = quarters(p.n * p.c * p.h * p.w, 1);
  std::vector<float> w = quarters(p.o * (p.c / p.groups) * p.kh * p.kw, 2);
  int64_t oh, ow;
  std::vector<double> expected = naiveConv2d(x, w, p, oh, ow);
  std::string in = tensorType({p.n, p.c, p.h, p.w});
  std::string filter = tensorType({p.o, p.c / p.groups, p.kh, p.kw});
  std::string out = tensorType({p.n, p.o, oh, ow});
  std::string source =
      "func.func @main(%x: " + in + ", %w: " + filter + ") -> " + out +
      " {\n  %0 = dlc.conv %x, %w stride " + list(p.stride) + " pad_low " +
      list(p.padLow) + " pad_high " + list(p.padHigh) + " dilation " +
      list(p.dilation) + " input_dilation " + list(p.inputDilation) +
      " groups " + std::to_string(p.groups) + " : " + in + ", " + filter +
      " -> " + out + "\n  return %0 : " + out + "\n}\n";
  Tensor result = runOne(source, {f32({p.n, p.c, p.h, p.w}, x),
                                       f32({p.o, p.c / p.groups, p.kh, p.kw}, w)});
  EXPECT_EQ(result.shape(), (std::vector<int64_t>{p.n, p.o, oh, ow}));
  expectValues(result, expected);
}

TEST_F(NN, MatmulHandExample) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<2x2xf32> {
      %a = dlc.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %b = dlc.constant dense<[[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]> : tensor<3x2xf32>
      %0 = dlc.matmul %a, %b : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir");
  expectValues(out, {58, 64, 139, 154});
}

TEST_F(NN, MatmulBroadcastsBatchDimensions) {
  std::vector<float> a = quarters(2 * 1 * 2 * 3, 3), b = quarters(3 * 3 * 2, 4);
  Tensor out = runOne(R"mlir(
    func.func @main(%a: tensor<2x1x2x3xf32>, %b: tensor<3x3x2xf32>) -> tensor<2x3x2x2xf32> {
      %0 = dlc.matmul %a, %b : tensor<2x1x2x3xf32>, tensor<3x3x2xf32> -> tensor<2x3x2x2xf32>
      return %0 : tensor<2x3x2x2xf32>
    })mlir",
                      {f32({2, 1, 2, 3}, a), f32({3, 3, 2}, b)});
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 2; ++n) {
          double sum = 0;
          for (int k = 0; k < 3; ++k)
            sum += double(a[(i * 2 + m) * 3 + k]) * b[(j * 3 + k) * 2 + n];
          expected.push_back(sum);
        }
  expectValues(out, expected);
}

TEST_F(NN, MatmulIntegersAndFloat64Accumulation) {
  std::vector<float> row(105, 1.0f);
  row[0] = 1e8f;
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%row: tensor<1x105xf32>, %ones: tensor<105x1xf32>) -> (tensor<1x1xf32>, tensor<1x2xi32>) {
      %0 = dlc.matmul %row, %ones : tensor<1x105xf32>, tensor<105x1xf32> -> tensor<1x1xf32>
      %a = dlc.constant dense<[[1, -2]]> : tensor<1x2xi32>
      %b = dlc.constant dense<[[3, 4], [5, 6]]> : tensor<2x2xi32>
      %1 = dlc.matmul %a, %b : tensor<1x2xi32>, tensor<2x2xi32> -> tensor<1x2xi32>
      return %0, %1 : tensor<1x1xf32>, tensor<1x2xi32>
    })mlir",
                                       {f32({1, 105}, row),
                                        f32({105, 1}, std::vector<float>(105, 1.0f))});
  ASSERT_EQ(r.size(), 2u);
  // As for reduce_sum: float32 accumulation would stay at 1e8.
  expectValues(r[0], {100000104.0});
  expectValues(r[1], {-7, -8});
}

TEST_F(NN, Conv1dHandExampleWithPadding) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x5xf32> {
      %x = dlc.constant dense<[[[1.0, 2.0, 3.0, 4.0, 5.0]]]> : tensor<1x1x5xf32>
      %w = dlc.constant dense<[[[1.0, 0.0, -1.0]]]> : tensor<1x1x3xf32>
      %0 = dlc.conv %x, %w stride [1] pad_low [1] pad_high [1] dilation [1] input_dilation [1] groups 1 : tensor<1x1x5xf32>, tensor<1x1x3xf32> -> tensor<1x1x5xf32>
      return %0 : tensor<1x1x5xf32>
    })mlir");
  // Padded input [0 1 2 3 4 5 0]; out[i] = p[i] - p[i + 2].
  expectValues(out, {-2, -2, -2, -2, 4});
}

TEST_F(NN, TransposedConvThroughInputDilation) {
  // ConvTranspose of x = [1, 2, 3] with w = [10, 1] at stride 2 puts x[i] w[k]
  // at 2i + k: [10, 1, 20, 2, 30, 3]. As a dlc.conv: dilate the input by 2
  // ([1 0 2 0 3]), pad by kernel - 1 = 1 on both sides and correlate with
  // the flipped filter [1, 10].
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x6xf32> {
      %x = dlc.constant dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
      %w = dlc.constant dense<[[[1.0, 10.0]]]> : tensor<1x1x2xf32>
      %0 = dlc.conv %x, %w stride [1] pad_low [1] pad_high [1] dilation [1] input_dilation [2] groups 1 : tensor<1x1x3xf32>, tensor<1x1x2xf32> -> tensor<1x1x6xf32>
      return %0 : tensor<1x1x6xf32>
    })mlir");
  expectValues(out, {10, 1, 20, 2, 30, 3});
}

TEST_F(NN, ConvGroupedStridedDilatedPaddedMatchesNaive) {
  Conv2dParams p{2, 4, 7, 6, 6, 3, 2, /*groups=*/2,
                 /*stride=*/{2, 1}, /*padLow=*/{1, 0}, /*padHigh=*/{2, 1},
                 /*dilation=*/{1, 2}, /*inputDilation=*/{1, 1}};
  checkConvAgainstNaive(p);
}

TEST_F(NN, ConvDepthwiseMatchesNaive) {
  Conv2dParams p{1, 3, 5, 5, 3, 3, 3, /*groups=*/3,
                 /*stride=*/{1, 1}, /*padLow=*/{1, 1}, /*padHigh=*/{1, 1},
                 /*dilation=*/{1, 1}, /*inputDilation=*/{1, 1}};
  checkConvAgainstNaive(p);
}

TEST_F(NN, ConvInputDilationMatchesNaive) {
  Conv2dParams p{1, 2, 3, 4, 3, 3, 2, /*groups=*/1,
                 /*stride=*/{1, 2}, /*padLow=*/{2, 1}, /*padHigh=*/{2, 0},
                 /*dilation=*/{1, 1}, /*inputDilation=*/{2, 3}};
  checkConvAgainstNaive(p);
}

TEST_F(NN, MaxPoolPaddingNeverWins) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x3x3xf32> {
      %x = dlc.constant dense<[[[[-1.0, -2.0], [-3.0, -4.0]]]]> : tensor<1x1x2x2xf32>
      %0 = dlc.max_pool %x window [2, 2] stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] : tensor<1x1x2x2xf32> -> tensor<1x1x3x3xf32>
      return %0 : tensor<1x1x3x3xf32>
    })mlir");
  expectValues(out, {-1, -1, -2, -1, -1, -2, -3, -3, -4});
}

TEST_F(NN, SumPoolPaddingAddsZero) {
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x3x3xf32> {
      %x = dlc.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
      %0 = dlc.sum_pool %x window [2, 2] stride [1, 1] pad_low [1, 1] pad_high [1, 1] dilation [1, 1] : tensor<1x1x2x2xf32> -> tensor<1x1x3x3xf32>
      return %0 : tensor<1x1x3x3xf32>
    })mlir");
  expectValues(out, {1, 3, 2, 4, 10, 6, 3, 7, 4});
}

TEST_F(NN, PoolsWithStrideDilationAndIntegers) {
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<1x1x3xf32>, tensor<1x1x3xi32>, tensor<2x1x2xf32>) {
      %x = dlc.constant dense<[[[1.0, 5.0, 2.0, 8.0, 3.0, 9.0, 4.0]]]> : tensor<1x1x7xf32>
      %0 = dlc.max_pool %x window [2] stride [2] pad_low [0] pad_high [0] dilation [2] : tensor<1x1x7xf32> -> tensor<1x1x3xf32>
      %i = dlc.constant dense<[[[-5, -7]]]> : tensor<1x1x2xi32>
      %1 = dlc.max_pool %i window [2] stride [1] pad_low [1] pad_high [1] dilation [1] : tensor<1x1x2xi32> -> tensor<1x1x3xi32>
      %y = dlc.constant dense<[[[1.0, 2.0, 3.0, 4.0]], [[5.0, 6.0, 7.0, 8.0]]]> : tensor<2x1x4xf32>
      %2 = dlc.sum_pool %y window [2] stride [2] pad_low [0] pad_high [0] dilation [1] : tensor<2x1x4xf32> -> tensor<2x1x2xf32>
      return %0, %1, %2 : tensor<1x1x3xf32>, tensor<1x1x3xi32>, tensor<2x1x2xf32>
    })mlir");
  ASSERT_EQ(r.size(), 3u);
  // Windows {0, 2}, {2, 4}, {4, 6}.
  expectValues(r[0], {2, 3, 4});
  expectValues(r[1], {-5, -5, -7});
  expectValues(r[2], {3, 7, 11, 15});
}

} // namespace
