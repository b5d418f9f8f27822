//===- LibraryLayout.cpp - Steps as cuBLASLt and cuDNN see them -----------===//
#include "runtime/cuda/LibraryLayout.h"

#include "runtime/module/Format.h"

namespace dlc::cuda {

uint64_t bufferAlignment(std::initializer_list<uint64_t> byteOffsets) {
  uint64_t bits = kBufferAlignment;
  for (uint64_t offset : byteOffsets)
    bits |= offset;
  // The lowest set bit of the union is the largest common power of two.
  return bits & (~bits + 1);
}

MatmulShape MatmulShape::fromStep(const fb::MatmulStep &step) {
  MatmulShape s;
  s.batch = step.batch();
  s.m = step.m();
  s.n = step.n();
  s.k = step.k();
  s.lhsBatchStride = step.lhs_batch_stride();
  s.rhsBatchStride = step.rhs_batch_stride();
  s.lhsTransposed = step.lhs_transposed();
  s.rhsTransposed = step.rhs_transposed();
  return s;
}

BlasMatmulLayout blasMatmulLayout(const MatmulShape &shape) {
  MatmulShape s = shape;
  // Every lhs entry against the same rhs, lhs entries back to back: the
  // batch is one taller product, which cuBLASLt tiles better than many
  // short ones. (The result's entries are always back to back.)
  if (s.batch > 1 && s.rhsBatchStride == 0 && !s.lhsTransposed &&
      s.lhsBatchStride == s.m * s.k) {
    s.m *= s.batch;
    s.batch = 1;
  }
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  BlasMatmulLayout l;
  l.batch = s.batch;
  // A = rhs^T, [n, k]: stored row-major [k, n] it is column-major [n, k]
  // (ld n); stored transposed, row-major [n, k], it is column-major [k, n]
  // (ld k) and cuBLASLt transposes it.
  l.a = s.rhsTransposed
            ? BlasMatrix{u(s.k), u(s.n), s.k, s.rhsBatchStride, true}
            : BlasMatrix{u(s.n), u(s.k), s.n, s.rhsBatchStride, false};
  // B = lhs^T, [k, m], likewise.
  l.b = s.lhsTransposed
            ? BlasMatrix{u(s.m), u(s.k), s.m, s.lhsBatchStride, true}
            : BlasMatrix{u(s.k), u(s.m), s.k, s.lhsBatchStride, false};
  l.d = BlasMatrix{u(s.n), u(s.m), s.n, s.m * s.n, false};
  return l;
}

std::vector<int64_t> packedStrides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

std::vector<int64_t> channelsLastStrides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = dims[1];
  strides[1] = 1;
  for (size_t i = dims.size(); i-- > 2;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  strides[0] = stride;
  return strides;
}

DnnConvLayout dnnConvLayout(const cpu::ConvGeometry &g) {
  DnnConvLayout l;
  l.xDims = {g.batch, g.inChannels};
  l.wDims = {g.outChannels, g.inPerGroup()};
  l.yDims = {g.batch, g.outChannels};
  if (g.spatialRank() == 1) {
    // [N, C, W] is [N, C, 1, W]: a unit height the kernel spans exactly.
    l.xDims.push_back(1);
    l.wDims.push_back(1);
    l.yDims.push_back(1);
    l.stride.push_back(1);
    l.padLow.push_back(0);
    l.padHigh.push_back(0);
    l.dilation.push_back(1);
  }
  for (size_t i = 0; i < g.spatialRank(); ++i) {
    l.xDims.push_back(g.input[i]);
    l.wDims.push_back(g.kernel[i]);
    l.yDims.push_back(g.output[i]);
    l.stride.push_back(g.stride[i]);
    l.padLow.push_back(g.padLow[i]);
    l.padHigh.push_back(g.padHigh[i]);
    l.dilation.push_back(g.dilation[i]);
  }
  auto strides = g.channelsLast ? channelsLastStrides : packedStrides;
  l.xStrides = strides(l.xDims);
  l.wStrides = strides(l.wDims);
  l.yStrides = strides(l.yDims);
  return l;
}

} // namespace dlc::cuda
