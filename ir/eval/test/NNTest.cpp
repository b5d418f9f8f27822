//===- NNTest.cpp - Evaluator tests of matmul, conv and pooling -----------===//
//
// Hand examples for each op, and for conv a naive reference written straight
// from the op's description (dilate the input, pad it, correlate with the
// dilated filter at steps of the stride). The test data are small multiples
// of 1/4, so every product and partial sum is exact in float64 and in
// float32, and the comparisons are exact whatever the summation order.
//
// The gradient ops get hand examples too, and are checked against the
// forward ops they differentiate on random float64 data: conv_grad_input
// and conv_grad_filter through the adjoint identity
// <conv(x, w), dy> == <x, conv_grad_input(dy, w)> == <w, conv_grad_filter(x, dy)>,
// max_pool_grad through the forward's directional derivative (max_pool is
// linear near a point whose window maxima are unique).
//
//===----------------------------------------------------------------------===//
#include "EvalTestUtil.h"

#include <limits>
#include <random>

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
  int64_t stride[2], padLow[2], padHigh[2], dilation[2];
};

/// Output size of one dimension, from the description.
int64_t outSize(int64_t in, int64_t k, int64_t stride, int64_t lo, int64_t hi,
                int64_t dil) {
  return (in + lo + hi - ((k - 1) * dil + 1)) / stride + 1;
}

/// The padded input at (row, col) of the virtual image: zero in the
/// padding.
double virtualPixel(const std::vector<float> &x, const Conv2dParams &p,
                    int64_t n, int64_t c, int64_t row, int64_t col) {
  int64_t r = row - p.padLow[0], s = col - p.padLow[1];
  if (r < 0 || s < 0 || r >= p.h || s >= p.w)
    return 0.0;
  return x[((n * p.c + c) * p.h + r) * p.w + s];
}

std::vector<double> naiveConv2d(const std::vector<float> &x,
                                const std::vector<float> &w,
                                const Conv2dParams &p, int64_t &oh,
                                int64_t &ow) {
  oh =
      outSize(p.h, p.kh, p.stride[0], p.padLow[0], p.padHigh[0], p.dilation[0]);
  ow =
      outSize(p.w, p.kw, p.stride[1], p.padLow[1], p.padHigh[1], p.dilation[1]);
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
      list(p.dilation) + " groups " + std::to_string(p.groups) + " : " + in +
      ", " + filter + " -> " + out + "\n  return %0 : " + out + "\n}\n";
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
      %0 = dlc.conv %x, %w stride [1] pad_low [1] pad_high [1] dilation [1] groups 1 : tensor<1x1x5xf32>, tensor<1x1x3xf32> -> tensor<1x1x5xf32>
      return %0 : tensor<1x1x5xf32>
    })mlir");
  // Padded input [0 1 2 3 4 5 0]; out[i] = p[i] - p[i + 2].
  expectValues(out, {-2, -2, -2, -2, 4});
}

TEST_F(NN, TransposedConvIsConvGradInput) {
  // ConvTranspose of x = [1, 2, 3] with w = [10, 1] at stride 2 puts x[i] w[k]
  // at 2i + k: [10, 1, 20, 2, 30, 3], the data gradient of the stride-2
  // convolution from 6 elements to 3 with the filter as it is.
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x6xf32> {
      %x = dlc.constant dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
      %w = dlc.constant dense<[[[10.0, 1.0]]]> : tensor<1x1x2xf32>
      %0 = dlc.conv_grad_input %x, %w stride [2] pad_low [0] pad_high [0] dilation [1] groups 1 : tensor<1x1x3xf32>, tensor<1x1x2xf32> -> tensor<1x1x6xf32>
      return %0 : tensor<1x1x6xf32>
    })mlir");
  expectValues(out, {10, 1, 20, 2, 30, 3});
}

TEST_F(NN, ConvGroupedStridedDilatedPaddedMatchesNaive) {
  Conv2dParams p{2,
                 4,
                 7,
                 6,
                 6,
                 3,
                 2,
                 /*groups=*/2,
                 /*stride=*/{2, 1},
                 /*padLow=*/{1, 0},
                 /*padHigh=*/{2, 1},
                 /*dilation=*/{1, 2}};
  checkConvAgainstNaive(p);
}

TEST_F(NN, ConvDepthwiseMatchesNaive) {
  Conv2dParams p{1,
                 3,
                 5,
                 5,
                 3,
                 3,
                 3,
                 /*groups=*/3,
                 /*stride=*/{1, 1},
                 /*padLow=*/{1, 1},
                 /*padHigh=*/{1, 1},
                 /*dilation=*/{1, 1}};
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

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

/// "[a, b, c]".
std::string listOf(const std::vector<int64_t> &v) {
  std::string text = "[";
  for (size_t i = 0; i < v.size(); ++i)
    text += (i ? ", " : "") + std::to_string(v[i]);
  return text + "]";
}

std::string typeOf(const std::vector<int64_t> &shape, const char *element) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + element + ">";
}

/// Uniform random float64 values in [-1, 1], reproducibly.
Tensor randomF64(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t(DType::F64, std::move(shape));
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  double *data = t.data<double>();
  for (int64_t i = 0; i < t.numElements(); ++i)
    data[i] = dist(gen);
  return t;
}

/// <a, b> and sum |a_i b_i| (the scale of its rounding error).
std::pair<double, double> dot(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.shape(), b.shape());
  double sum = 0, scale = 0;
  for (int64_t i = 0; i < a.numElements() && i < b.numElements(); ++i) {
    sum += a.getDouble(i) * b.getDouble(i);
    scale += std::fabs(a.getDouble(i) * b.getDouble(i));
  }
  return {sum, scale};
}

/// An N-d convolution: its shapes and attributes.
struct ConvCase {
  std::vector<int64_t> x, w;
  int64_t groups;
  std::vector<int64_t> stride, padLow, padHigh, dilation;

  std::vector<int64_t> y() const {
    std::vector<int64_t> shape = {x[0], w[0]};
    for (size_t d = 0; d + 2 < x.size(); ++d)
      shape.push_back(outSize(x[d + 2], w[d + 2], stride[d], padLow[d],
                              padHigh[d], dilation[d]));
    return shape;
  }
  std::string attrs() const {
    return "stride " + listOf(stride) + " pad_low " + listOf(padLow) +
           " pad_high " + listOf(padHigh) + " dilation " + listOf(dilation);
  }
};

class NNGrad : public EvalTest {
protected:
  void checkConvAdjoint(const ConvCase &c, uint64_t seed);
};

/// <conv(x, w), dy>, <x, conv_grad_input(dy, w)> and
/// <w, conv_grad_filter(x, dy)> are one sum in three orders: they agree to
/// float64 rounding, relative to the sum of the absolute terms.
void NNGrad::checkConvAdjoint(const ConvCase &c, uint64_t seed) {
  std::vector<int64_t> yShape = c.y();
  std::string x = typeOf(c.x, "f64"), w = typeOf(c.w, "f64"),
              y = typeOf(yShape, "f64");
  std::string groups = " groups " + std::to_string(c.groups);
  std::string source =
      "func.func @main(%x: " + x + ", %w: " + w + ", %dy: " + y + ") -> (" + y +
      ", " + x + ", " + w + ") {\n" + "  %y = dlc.conv %x, %w " + c.attrs() +
      groups + " : " + x + ", " + w + " -> " + y + "\n" +
      "  %dx = dlc.conv_grad_input %dy, %w " + c.attrs() + groups + " : " + y +
      ", " + w + " -> " + x + "\n" + "  %dw = dlc.conv_grad_filter %x, %dy " +
      c.attrs() + groups + " : " + x + ", " + y + " -> " + w + "\n" +
      "  return %y, %dx, %dw : " + y + ", " + x + ", " + w + "\n}\n";
  Tensor xs = randomF64(c.x, seed), ws = randomF64(c.w, seed + 1),
         dys = randomF64(yShape, seed + 2);
  llvm::SmallVector<Tensor> r = runAll(source, {xs, ws, dys});
  ASSERT_EQ(r.size(), 3u) << source;
  auto [viaY, scaleY] = dot(r[0], dys);
  auto [viaX, scaleX] = dot(xs, r[1]);
  auto [viaW, scaleW] = dot(ws, r[2]);
  // Three summation orders of the same products: float64 rounding, a few
  // ulps per term at most.
  double tol = 1e-13 * std::max({scaleY, scaleX, scaleW, 1.0});
  EXPECT_NEAR(viaX, viaY, tol) << source;
  EXPECT_NEAR(viaW, viaY, tol) << source;
  EXPECT_GT(scaleY, 0.0) << "a degenerate case checks nothing";
}

TEST_F(NNGrad, ConvGradInputHandExample) {
  // x = [x0..x4], w = [1, 10], stride 2, pad_low 1: y0 = 10 x0,
  // y1 = x1 + 10 x2, y2 = x3 + 10 x4, so dx = [10 dy0, dy1, 10 dy1, dy2, 10 dy2].
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x5xf32> {
      %dy = dlc.constant dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
      %w = dlc.constant dense<[[[1.0, 10.0]]]> : tensor<1x1x2xf32>
      %0 = dlc.conv_grad_input %dy, %w stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : tensor<1x1x3xf32>, tensor<1x1x2xf32> -> tensor<1x1x5xf32>
      return %0 : tensor<1x1x5xf32>
    })mlir");
  expectValues(out, {10, 2, 20, 3, 30});
}

TEST_F(NNGrad, ConvGradFilterHandExample) {
  // The same convolution: dw0 = dy1 x1 + dy2 x3, dw1 = dy0 x0 + dy1 x2 + dy2 x4.
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x2xf32> {
      %x = dlc.constant dense<[[[1.0, 2.0, 3.0, 4.0, 5.0]]]> : tensor<1x1x5xf32>
      %dy = dlc.constant dense<[[[1.0, 2.0, 3.0]]]> : tensor<1x1x3xf32>
      %0 = dlc.conv_grad_filter %x, %dy stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : tensor<1x1x5xf32>, tensor<1x1x3xf32> -> tensor<1x1x2xf32>
      return %0 : tensor<1x1x2xf32>
    })mlir");
  expectValues(out, {2 * 2 + 3 * 4, 1 * 1 + 2 * 3 + 3 * 5});
}

TEST_F(NNGrad, ConvGradGroupsKeepChannelsApart) {
  // Two groups of one channel each, 1x1 filters [2] and [3]: channel c's
  // gradient only sees output channel c.
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main() -> (tensor<1x2x2xf32>, tensor<2x1x1xf32>) {
      %x = dlc.constant dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>
      %w = dlc.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
      %dy = dlc.constant dense<[[[1.0, -1.0], [0.5, 0.25]]]> : tensor<1x2x2xf32>
      %dx = dlc.conv_grad_input %dy, %w stride [1] pad_low [0] pad_high [0] dilation [1] groups 2 : tensor<1x2x2xf32>, tensor<2x1x1xf32> -> tensor<1x2x2xf32>
      %dw = dlc.conv_grad_filter %x, %dy stride [1] pad_low [0] pad_high [0] dilation [1] groups 2 : tensor<1x2x2xf32>, tensor<1x2x2xf32> -> tensor<2x1x1xf32>
      return %dx, %dw : tensor<1x2x2xf32>, tensor<2x1x1xf32>
    })mlir");
  ASSERT_EQ(r.size(), 2u);
  expectValues(r[0], {2, -2, 1.5, 0.75});
  expectValues(r[1], {1 - 2, 3 * 0.5 + 4 * 0.25});
}

TEST_F(NNGrad, ConvGradAdjointIdentity1d) {
  checkConvAdjoint({{2, 3, 11}, {4, 3, 3}, 1, {2}, {1}, {0}, {1}}, 10);
  // Stride that leaves the last input elements unread, dilation, and
  // asymmetric padding.
  checkConvAdjoint({{1, 2, 12}, {3, 2, 2}, 1, {3}, {0}, {2}, {3}}, 20);
}

TEST_F(NNGrad, ConvGradAdjointIdentity2d) {
  checkConvAdjoint({{2, 4, 7, 6}, {6, 2, 3, 2}, 2, {2, 1}, {1, 0}, {2, 1},
                    {1, 2}},
                   30);
  // Depthwise (groups = channels), padding wider than the window.
  checkConvAdjoint({{1, 3, 5, 5}, {3, 1, 2, 2}, 3, {1, 2}, {2, 0}, {0, 3},
                    {1, 1}},
                   40);
  // Channel multiplier: 2 groups, 3 output channels each.
  checkConvAdjoint({{2, 2, 6, 5}, {6, 1, 3, 3}, 2, {2, 2}, {1, 2}, {1, 0},
                    {2, 1}},
                   50);
}

TEST_F(NNGrad, ConvGradAdjointIdentity3d) {
  checkConvAdjoint({{1, 2, 4, 5, 3}, {2, 2, 2, 3, 1}, 1, {1, 2, 1},
                    {0, 1, 1}, {1, 1, 0}, {2, 1, 1}},
                   60);
}

TEST_F(NNGrad, ConvGradOpsInEveryFloatType) {
  // Quarter-step data: exact in every float type, so f16 and bf16 give the
  // f32 values (accumulated in float64 and rounded once).
  for (const char *element : {"f16", "bf16", "f32", "f64"}) {
    std::string t3 = typeOf({1, 1, 3}, element), t2 = typeOf({1, 1, 2}, element),
                t5 = typeOf({1, 1, 5}, element);
    std::string source =
        "func.func @main() -> (" + t5 + ", " + t2 + ") {\n"
        "  %x = dlc.constant dense<[[[1.0, 2.0, 3.0, 4.0, 5.0]]]> : " + t5 + "\n"
        "  %dy = dlc.constant dense<[[[1.0, 2.0, 3.0]]]> : " + t3 + "\n"
        "  %w = dlc.constant dense<[[[1.0, 10.0]]]> : " + t2 + "\n"
        "  %dx = dlc.conv_grad_input %dy, %w stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : " + t3 + ", " + t2 + " -> " + t5 + "\n"
        "  %dw = dlc.conv_grad_filter %x, %dy stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : " + t5 + ", " + t3 + " -> " + t2 + "\n"
        "  return %dx, %dw : " + t5 + ", " + t2 + "\n}\n";
    llvm::SmallVector<Tensor> r = runAll(source);
    ASSERT_EQ(r.size(), 2u) << element;
    expectValues(r[0], {10, 2, 20, 3, 30});
    expectValues(r[1], {16, 22});
  }
}

TEST_F(NNGrad, MaxPoolGradRoutesToFirstMaximum) {
  // Windows of 2 over [pad, -3, -3, -5, -4, pad]: {pad, -3} -> 0,
  // {-3, -3} -> 0 (the first of a tie), {-3, -5} -> 1, {-5, -4} -> 3,
  // {-4, pad} -> 3. Padding never wins, even over negative values.
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x4xf32> {
      %x = dlc.constant dense<[[[-3.0, -3.0, -5.0, -4.0]]]> : tensor<1x1x4xf32>
      %dy = dlc.constant dense<[[[1.0, 2.0, 4.0, 8.0, 16.0]]]> : tensor<1x1x5xf32>
      %0 = dlc.max_pool_grad %x, %dy window [2] stride [1] pad_low [1] pad_high [1] dilation [1] : tensor<1x1x4xf32>, tensor<1x1x5xf32> -> tensor<1x1x4xf32>
      return %0 : tensor<1x1x4xf32>
    })mlir");
  expectValues(out, {3, 4, 0, 24});
}

TEST_F(NNGrad, MaxPoolGrad2dTiesStrideAndDilation) {
  // 4x4 input, window 2x2 dilated by 2 (taps at offsets 0 and 2), stride 1:
  // output 2x2. Window (0, 0) taps (0,0) (0,2) (2,0) (2,2) = 1, 5, 5, 0:
  // the first 5 in row-major order, (0, 2).
  Tensor out = runOne(R"mlir(
    func.func @main() -> tensor<1x1x4x4xf32> {
      %x = dlc.constant dense<[[[[1.0, 7.0, 5.0, 2.0], [0.0, 3.0, 6.0, 6.0], [5.0, 1.0, 0.0, 4.0], [2.0, 9.0, 1.0, 9.0]]]]> : tensor<1x1x4x4xf32>
      %dy = dlc.constant dense<[[[[1.0, 2.0], [4.0, 8.0]]]]> : tensor<1x1x2x2xf32>
      %0 = dlc.max_pool_grad %x, %dy window [2, 2] stride [1, 1] pad_low [0, 0] pad_high [0, 0] dilation [2, 2] : tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
      return %0 : tensor<1x1x4x4xf32>
    })mlir");
  // Window (0,1): taps (0,1)=7 (0,3)=2 (2,1)=1 (2,3)=4 -> (0,1).
  // Window (1,0): taps (1,0)=0 (1,2)=6 (3,0)=2 (3,2)=1 -> (1,2).
  // Window (1,1): taps (1,1)=3 (1,3)=6 (3,1)=9 (3,3)=9 -> (3,1), first 9.
  expectValues(out, {0, 2, 1, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 8, 0, 0});
}

TEST_F(NNGrad, MaxPoolGradNaNAndInfinities) {
  // As PyTorch's kernels: a NaN replaces the current choice, so the last
  // NaN of a window wins; a window of -inf routes to its first element.
  llvm::SmallVector<Tensor> r = runAll(R"mlir(
    func.func @main(%x: tensor<1x1x5xf64>, %y: tensor<1x1x2xf64>) -> (tensor<1x1x5xf64>, tensor<1x1x2xf64>) {
      %dy = dlc.constant dense<1.0> : tensor<1x1x1xf64>
      %0 = dlc.max_pool_grad %x, %dy window [5] stride [1] pad_low [0] pad_high [0] dilation [1] : tensor<1x1x5xf64>, tensor<1x1x1xf64> -> tensor<1x1x5xf64>
      %1 = dlc.max_pool_grad %y, %dy window [2] stride [1] pad_low [0] pad_high [0] dilation [1] : tensor<1x1x2xf64>, tensor<1x1x1xf64> -> tensor<1x1x2xf64>
      return %0, %1 : tensor<1x1x5xf64>, tensor<1x1x2xf64>
    })mlir",
                                       {tensorOf<double>({1, 1, 5}, {1, kNaN, 2, kNaN, 0}),
                                        tensorOf<double>({1, 1, 2}, {-kInf, -kInf})});
  ASSERT_EQ(r.size(), 2u);
  expectValues(r[0], {0, 0, 0, 1, 0});
  expectValues(r[1], {1, 0});
}

TEST_F(NNGrad, MaxPoolGradMatchesDirectionalDerivative) {
  // Near a point whose window maxima are unique max_pool is linear, so
  // max_pool(x + h v) - max_pool(x) = h J v, and <dy, J v> must equal
  // <max_pool_grad(x, dy), v>. Overlapping windows, dilation and
  // asymmetric padding; random data has no ties.
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3x7x6xf64>, %xh: tensor<2x3x7x6xf64>, %dy: tensor<2x3x4x5xf64>) -> (tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64>, tensor<2x3x7x6xf64>) {
      %y = dlc.max_pool %x window [3, 2] stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] : tensor<2x3x7x6xf64> -> tensor<2x3x4x5xf64>
      %yh = dlc.max_pool %xh window [3, 2] stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] : tensor<2x3x7x6xf64> -> tensor<2x3x4x5xf64>
      %dx = dlc.max_pool_grad %x, %dy window [3, 2] stride [2, 1] pad_low [1, 0] pad_high [2, 1] dilation [1, 2] : tensor<2x3x7x6xf64>, tensor<2x3x4x5xf64> -> tensor<2x3x7x6xf64>
      return %y, %yh, %dx : tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64>, tensor<2x3x7x6xf64>
    })mlir";
  Tensor x = randomF64({2, 3, 7, 6}, 70), v = randomF64({2, 3, 7, 6}, 71),
         dy = randomF64({2, 3, 4, 5}, 72);
  // h far below the gap between distinct random values, so no maximum moves.
  const double h = 1e-9;
  Tensor xh = x;
  for (int64_t i = 0; i < x.numElements(); ++i)
    xh.data<double>()[i] += h * v.getDouble(i);
  llvm::SmallVector<Tensor> r = runAll(source, {x, xh, dy});
  ASSERT_EQ(r.size(), 3u);
  double directional = 0;
  for (int64_t i = 0; i < dy.numElements(); ++i)
    directional += dy.getDouble(i) * (r[1].getDouble(i) - r[0].getDouble(i)) / h;
  auto [viaGrad, scale] = dot(r[2], v);
  // The differences of max_pool are exact differences of x + h v and x,
  // which carry a relative rounding error of about 1e-16 / h.
  EXPECT_NEAR(directional, viaGrad, 1e-6 * std::max(scale, 1.0));
  EXPECT_GT(scale, 0.0);
}

TEST_F(NNGrad, SumPoolAdjointIsDepthwiseConvGradInput) {
  // The sum_pool gradient rule's claim: with a ones filter [C, 1, window]
  // and C groups, conv_grad_input is sum_pool's adjoint, padding included.
  const char *source = R"mlir(
    func.func @main(%x: tensor<2x3x5x6xf64>, %dy: tensor<2x3x3x3xf64>) -> (tensor<2x3x3x3xf64>, tensor<2x3x5x6xf64>) {
      %y = dlc.sum_pool %x window [3, 2] stride [2, 2] pad_low [1, 0] pad_high [1, 1] dilation [1, 2] : tensor<2x3x5x6xf64> -> tensor<2x3x3x3xf64>
      %ones = dlc.constant dense<1.0> : tensor<3x1x3x2xf64>
      %dx = dlc.conv_grad_input %dy, %ones stride [2, 2] pad_low [1, 0] pad_high [1, 1] dilation [1, 2] groups 3 : tensor<2x3x3x3xf64>, tensor<3x1x3x2xf64> -> tensor<2x3x5x6xf64>
      return %y, %dx : tensor<2x3x3x3xf64>, tensor<2x3x5x6xf64>
    })mlir";
  Tensor x = randomF64({2, 3, 5, 6}, 80), dy = randomF64({2, 3, 3, 3}, 81);
  llvm::SmallVector<Tensor> r = runAll(source, {x, dy});
  ASSERT_EQ(r.size(), 2u);
  auto [viaY, scaleY] = dot(r[0], dy);
  auto [viaX, scaleX] = dot(x, r[1]);
  EXPECT_NEAR(viaX, viaY, 1e-13 * std::max({scaleX, scaleY, 1.0}));
}

} // namespace
