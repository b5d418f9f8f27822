//===- LibraryLayoutTest.cpp - dlc steps as cuBLASLt and cuDNN see them ---===//
//
// The translations of LibraryLayout.h, checked on numbers without a GPU:
// each matmul layout is evaluated as cuBLASLt defines its column-major
// product (element (r, c) of a matrix at r + c * ld, batch entries
// batchStride apart, op() transposing) and compared with the row-major
// product the MatmulStep means; each convolution layout is evaluated as
// cuDNN defines a cross-correlation over strided NCHW tensors and compared
// with the convolution the ConvStep means. Small integer operands make
// both sums exact, so results must be equal.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/LibraryLayout.h"

#include <gtest/gtest.h>

#include <functional>

using namespace dlc;
using namespace dlc::cuda;

namespace {

std::vector<double> iota(int64_t n, int64_t modulus) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<double>(i % modulus) - modulus / 2;
  return v;
}

int64_t span(int64_t batch, int64_t stride, int64_t matrix) {
  return (batch - 1) * stride + matrix;
}

/// The row-major product a MatmulStep means.
std::vector<double> stepProduct(const MatmulShape &s,
                                const std::vector<double> &lhs,
                                const std::vector<double> &rhs) {
  std::vector<double> out(s.batch * s.m * s.n);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < s.k; ++l) {
          double x = lhs[b * s.lhsBatchStride +
                         (s.lhsTransposed ? l * s.m + i : i * s.k + l)];
          double y = rhs[b * s.rhsBatchStride +
                         (s.rhsTransposed ? j * s.k + l : l * s.n + j)];
          sum += x * y;
        }
        out[(b * s.m + i) * s.n + j] = sum;
      }
  return out;
}

/// Element (r, c) of op(matrix) in batch entry `b`, as cuBLASLt reads it.
double element(const BlasMatrix &matrix, const std::vector<double> &data,
               int64_t b, uint64_t r, uint64_t c) {
  uint64_t row = matrix.transposed ? c : r, col = matrix.transposed ? r : c;
  EXPECT_LT(row, matrix.rows);
  EXPECT_LT(col, matrix.cols);
  // at(): a wrong layout fails the test instead of reading past the data.
  return data.at(b * matrix.batchStride + row + col * matrix.ld);
}

/// D = op(A) x op(B) per batch entry, written where cuBLASLt writes D.
std::vector<double> blasProduct(const BlasMatmulLayout &l,
                                const std::vector<double> &a,
                                const std::vector<double> &b, size_t size) {
  uint64_t rows = l.d.rows, cols = l.d.cols;
  uint64_t inner = l.a.transposed ? l.a.rows : l.a.cols;
  EXPECT_EQ(l.b.transposed ? l.b.cols : l.b.rows, inner);
  EXPECT_EQ(l.a.transposed ? l.a.cols : l.a.rows, rows);
  EXPECT_EQ(l.b.transposed ? l.b.rows : l.b.cols, cols);
  for (const BlasMatrix *m : {&l.a, &l.b, &l.d})
    EXPECT_GE(static_cast<uint64_t>(m->ld), m->rows);
  std::vector<double> d(size, -1);
  for (int64_t batch = 0; batch < l.batch; ++batch)
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c) {
        double sum = 0;
        for (uint64_t i = 0; i < inner; ++i)
          sum += element(l.a, a, batch, r, i) * element(l.b, b, batch, i, c);
        d.at(batch * l.d.batchStride + r + c * l.d.ld) = sum;
      }
  return d;
}

struct MatmulCase {
  const char *name;
  MatmulShape shape;
  /// Whether the batch becomes one taller product.
  bool folds;
};

std::ostream &operator<<(std::ostream &os, const MatmulCase &c) {
  return os << c.name;
}

class BlasMatmulLayoutTest : public testing::TestWithParam<MatmulCase> {};

TEST_P(BlasMatmulLayoutTest, ComputesTheStepsProduct) {
  const MatmulShape &s = GetParam().shape;
  std::vector<double> lhs = iota(span(s.batch, s.lhsBatchStride, s.m * s.k), 7);
  std::vector<double> rhs = iota(span(s.batch, s.rhsBatchStride, s.k * s.n), 5);
  BlasMatmulLayout layout = blasMatmulLayout(s);
  EXPECT_EQ(layout.batch, GetParam().folds ? 1 : s.batch);
  // cuBLASLt's A is the rhs and its B the lhs.
  EXPECT_EQ(blasProduct(layout, rhs, lhs, s.batch * s.m * s.n),
            stepProduct(s, lhs, rhs));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, BlasMatmulLayoutTest,
    testing::Values(
        MatmulCase{"plain", {1, 3, 4, 5, 0, 0, false, false}, false},
        MatmulCase{"lhs_transposed", {1, 3, 4, 5, 0, 0, true, false}, false},
        MatmulCase{"rhs_transposed", {1, 3, 4, 5, 0, 0, false, true}, false},
        MatmulCase{"both_transposed", {1, 3, 4, 5, 0, 0, true, true}, false},
        MatmulCase{"batch", {3, 2, 4, 5, 10, 20, false, false}, false},
        MatmulCase{
            "batch_padded_strides", {3, 2, 4, 5, 13, 21, true, true}, false},
        MatmulCase{
            "batch_broadcast_lhs", {3, 2, 4, 5, 0, 20, false, true}, false},
        MatmulCase{"batch_broadcast_rhs_folds",
                   {3, 2, 4, 5, 10, 0, false, false},
                   true},
        MatmulCase{"batch_broadcast_rhs_transposed_folds",
                   {3, 2, 4, 5, 10, 0, false, true},
                   true},
        MatmulCase{"batch_broadcast_rhs_lhs_transposed",
                   {3, 2, 4, 5, 10, 0, true, false},
                   false},
        MatmulCase{"batch_broadcast_rhs_lhs_gapped",
                   {3, 2, 4, 5, 11, 0, false, false},
                   false},
        MatmulCase{"vector", {1, 1, 1, 6, 0, 0, false, false}, false}),
    [](const testing::TestParamInfo<MatmulCase> &info) {
      return std::string(info.param.name);
    });

TEST(BufferAlignmentTest, IsTheLargestCommonPowerOfTwoUpTo64) {
  EXPECT_EQ(bufferAlignment({0}), 64u);
  EXPECT_EQ(bufferAlignment({192}), 64u);
  EXPECT_EQ(bufferAlignment({64, 32}), 32u);
  EXPECT_EQ(bufferAlignment({128, 2 * 3 * 4}), 8u);
  EXPECT_EQ(bufferAlignment({0, 6}), 2u);
}

TEST(PackedStridesTest, AreRowMajor) {
  EXPECT_EQ(packedStrides({2, 3, 1, 5}), (std::vector<int64_t>{15, 5, 5, 1}));
  EXPECT_EQ(packedStrides({7}), (std::vector<int64_t>{1}));
}

TEST(ChannelsLastStridesTest, PutTheChannelsInnermost) {
  // [N, C, H, W] = [2, 3, 4, 5] stored as [2, 4, 5, 3].
  EXPECT_EQ(channelsLastStrides({2, 3, 4, 5}),
            (std::vector<int64_t>{60, 1, 15, 3}));
  // A unit height (1-d) and 3-d.
  EXPECT_EQ(channelsLastStrides({2, 3, 1, 5}),
            (std::vector<int64_t>{15, 1, 15, 3}));
  EXPECT_EQ(channelsLastStrides({1, 2, 3, 4, 5}),
            (std::vector<int64_t>{120, 1, 40, 10, 2}));
}

/// x [N, C, spatial...] in `dims` order, any rank.
using Index = std::vector<int64_t>;

/// Calls `body` with every index of `dims`, last dimension fastest.
void forEachIndex(const std::vector<int64_t> &dims,
                  const std::function<void(const Index &)> &body) {
  Index index(dims.size(), 0);
  int64_t total = 1;
  for (int64_t d : dims)
    total *= d;
  for (int64_t n = 0; n < total; ++n) {
    body(index);
    for (size_t i = dims.size(); i-- > 0;) {
      if (++index[i] < dims[i])
        break;
      index[i] = 0;
    }
  }
}

int64_t offset(const Index &index, const std::vector<int64_t> &strides) {
  int64_t o = 0;
  for (size_t i = 0; i < index.size(); ++i)
    o += index[i] * strides[i];
  return o;
}

/// y of a grouped cross-correlation as cuDNN defines it over `l`'s dims,
/// strides, paddings and dilations (the group count is x's channels over
/// w's).
std::vector<double> dnnForward(const DnnConvLayout &l,
                               const std::vector<double> &x,
                               const std::vector<double> &w) {
  std::vector<double> y(l.yDims[0] * l.yStrides[0]);
  int64_t groups = l.xDims[1] / l.wDims[1];
  int64_t outPerGroup = l.yDims[1] / groups;
  size_t spatial = l.xDims.size() - 2;
  forEachIndex(l.yDims, [&](const Index &yi) {
    double sum = 0;
    int64_t group = yi[1] / outPerGroup;
    std::vector<int64_t> filterDims(l.wDims.begin() + 1, l.wDims.end());
    forEachIndex(filterDims, [&](const Index &fi) {
      Index xi = {yi[0], group * l.wDims[1] + fi[0]};
      for (size_t d = 0; d < spatial; ++d) {
        int64_t at =
            yi[d + 2] * l.stride[d] - l.padLow[d] + fi[d + 1] * l.dilation[d];
        if (at < 0 || at >= l.xDims[d + 2])
          return;
        xi.push_back(at);
      }
      Index wi = {yi[1]};
      wi.insert(wi.end(), fi.begin(), fi.end());
      sum += x.at(offset(xi, l.xStrides)) * w.at(offset(wi, l.wStrides));
    });
    y.at(offset(yi, l.yStrides)) = sum;
  });
  return y;
}

/// y of the ConvStep `g` describes, directly on its own NC... shapes.
std::vector<double> stepForward(const cpu::ConvGeometry &g,
                                const std::vector<double> &x,
                                const std::vector<double> &w) {
  std::vector<int64_t> yDims = {g.batch, g.outChannels};
  yDims.insert(yDims.end(), g.output.begin(), g.output.end());
  std::vector<int64_t> xDims = {g.batch, g.inChannels};
  xDims.insert(xDims.end(), g.input.begin(), g.input.end());
  std::vector<int64_t> wDims = {g.outChannels, g.inPerGroup()};
  wDims.insert(wDims.end(), g.kernel.begin(), g.kernel.end());
  std::vector<int64_t> xs = packedStrides(xDims), ws = packedStrides(wDims),
                       ys = packedStrides(yDims);
  std::vector<double> y(yDims[0] * ys[0]);
  forEachIndex(yDims, [&](const Index &yi) {
    double sum = 0;
    int64_t group = yi[1] / g.outPerGroup();
    std::vector<int64_t> filterDims(wDims.begin() + 1, wDims.end());
    forEachIndex(filterDims, [&](const Index &fi) {
      Index xi = {yi[0], group * g.inPerGroup() + fi[0]};
      for (size_t d = 0; d < g.spatialRank(); ++d) {
        int64_t at =
            yi[d + 2] * g.stride[d] - g.padLow[d] + fi[d + 1] * g.dilation[d];
        if (at < 0 || at >= g.input[d])
          return;
        xi.push_back(at);
      }
      Index wi = {yi[1]};
      wi.insert(wi.end(), fi.begin(), fi.end());
      sum += x[offset(xi, xs)] * w[offset(wi, ws)];
    });
    y[offset(yi, ys)] = sum;
  });
  return y;
}

cpu::ConvGeometry
geometry(int64_t batch, int64_t in, int64_t out, int64_t groups,
         std::vector<int64_t> input, std::vector<int64_t> kernel,
         std::vector<int64_t> stride, std::vector<int64_t> padLow,
         std::vector<int64_t> padHigh, std::vector<int64_t> dilation) {
  cpu::ConvGeometry g;
  g.batch = batch;
  g.inChannels = in;
  g.outChannels = out;
  g.groups = groups;
  g.input = input;
  g.kernel = kernel;
  g.stride = stride;
  g.padLow = padLow;
  g.padHigh = padHigh;
  g.dilation = dilation;
  for (size_t d = 0; d < input.size(); ++d)
    g.output.push_back((input[d] + padLow[d] + padHigh[d] -
                        (dilation[d] * (kernel[d] - 1) + 1)) /
                           stride[d] +
                       1);
  return g;
}

TEST(DnnConvLayoutTest, OneDimensionGainsAUnitHeight) {
  cpu::ConvGeometry g = geometry(2, 4, 6, 2, {9}, {3}, {2}, {2}, {1}, {2});
  DnnConvLayout l = dnnConvLayout(g);
  EXPECT_EQ(l.xDims, (std::vector<int64_t>{2, 4, 1, 9}));
  EXPECT_EQ(l.wDims, (std::vector<int64_t>{6, 2, 1, 3}));
  EXPECT_EQ(l.yDims, (std::vector<int64_t>{2, 6, 1, 4}));
  EXPECT_EQ(l.xStrides, (std::vector<int64_t>{36, 9, 9, 1}));
  EXPECT_EQ(l.stride, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(l.padLow, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(l.padHigh, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(l.dilation, (std::vector<int64_t>{1, 2}));
}

struct ConvCase {
  const char *name;
  cpu::ConvGeometry g;
};

std::ostream &operator<<(std::ostream &os, const ConvCase &c) {
  return os << c.name;
}

class DnnConvLayoutNumbersTest : public testing::TestWithParam<ConvCase> {};

TEST_P(DnnConvLayoutNumbersTest, ComputesTheStepsConvolution) {
  const cpu::ConvGeometry &g = GetParam().g;
  DnnConvLayout l = dnnConvLayout(g);
  EXPECT_GE(l.xDims.size(), 4u);
  EXPECT_EQ(l.xDims.size(), l.wDims.size());
  EXPECT_EQ(l.xDims.size(), l.yDims.size());
  EXPECT_EQ(l.stride.size(), l.xDims.size() - 2);
  std::vector<double> x = iota(g.xElements(), 7), w = iota(g.wElements(), 5);
  EXPECT_EQ(dnnForward(l, x, w), stepForward(g, x, w));
}

/// `values` of a tensor of `dims` held with `from` strides, held with `to`.
std::vector<double> restride(const std::vector<double> &values,
                             const std::vector<int64_t> &dims,
                             const std::vector<int64_t> &from,
                             const std::vector<int64_t> &to) {
  std::vector<double> moved(values.size());
  forEachIndex(dims, [&](const Index &i) {
    moved.at(offset(i, to)) = values.at(offset(i, from));
  });
  return moved;
}

TEST_P(DnnConvLayoutNumbersTest, ComputesTheStepsConvolutionChannelsLast) {
  cpu::ConvGeometry g = GetParam().g;
  g.channelsLast = true;
  DnnConvLayout l = dnnConvLayout(g);
  std::vector<double> x = iota(g.xElements(), 7), w = iota(g.wElements(), 5);
  std::vector<double> y = dnnForward(
      l, restride(x, l.xDims, packedStrides(l.xDims), l.xStrides),
      restride(w, l.wDims, packedStrides(l.wDims), l.wStrides));
  EXPECT_EQ(restride(y, l.yDims, l.yStrides, packedStrides(l.yDims)),
            stepForward(g, x, w));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DnnConvLayoutNumbersTest,
    testing::Values(
        ConvCase{"conv1d_strided_dilated_asymmetric",
                 geometry(2, 4, 6, 2, {9}, {3}, {2}, {2}, {1}, {2})},
        ConvCase{"conv2d", geometry(2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1},
                                    {1, 1}, {1, 1})},
        ConvCase{"conv2d_depthwise_stride2",
                 geometry(1, 4, 4, 4, {7, 6}, {3, 2}, {2, 2}, {0, 1}, {1, 0},
                          {1, 1})},
        ConvCase{"conv3d_grouped",
                 geometry(1, 4, 2, 2, {4, 5, 3}, {2, 2, 2}, {1, 2, 1},
                          {1, 0, 0}, {0, 1, 1}, {1, 1, 2})}),
    [](const testing::TestParamInfo<ConvCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
