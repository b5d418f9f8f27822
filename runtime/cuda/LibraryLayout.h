//===- LibraryLayout.h - Steps as cuBLASLt and cuDNN see them ---*- C++ -*-===//
//
// A MatmulStep is row-major and a ConvStep is N-d NCHW with per-side
// padding; cuBLASLt is column-major and cuDNN wants at least 4-d tensors
// with explicit strides. These pure functions do the translation, apart
// from the libraries, so that it is tested on machines without a GPU
// (runtime/cuda/test/LibraryLayoutTest.cpp) and Blas.cpp / Dnn.cpp only
// hand the numbers over.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_LIBRARYLAYOUT_H
#define DLC_RUNTIME_CUDA_LIBRARYLAYOUT_H

#include "runtime/cpu/ConvGeometry.h"
#include "runtime/module/dlcm_generated.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace dlc::cuda {

/// The alignment in bytes a library may assume for every address `base +
/// offset` where `base` is a dlc buffer (arena, argument, result or
/// constant: each starts on a kBufferAlignment boundary) and `offset` is one
/// of `byteOffsets`: the largest power of two, at most kBufferAlignment,
/// dividing all of them.
uint64_t bufferAlignment(std::initializer_list<uint64_t> byteOffsets);

/// A MatmulStep's shape: result[b] = lhs[b] x rhs[b], row-major [m, k] x
/// [k, n] -> [m, n]; batch strides in elements, 0 broadcasting an operand;
/// a transposed lhs is stored [k, m], a transposed rhs [n, k].
struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t lhsBatchStride = 0, rhsBatchStride = 0;
  bool lhsTransposed = false, rhsTransposed = false;

  static MatmulShape fromStep(const fb::MatmulStep &step);
};

/// One cuBLASLt matrix (CUBLASLT_ORDER_COL): `rows` x `cols` as stored,
/// leading dimension `ld`, consecutive batch entries `batchStride` elements
/// apart. `transposed` is the operation applied to it (CUBLAS_OP_T).
struct BlasMatrix {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int64_t batchStride = 0;
  bool transposed = false;
};

/// A matmul as cuBLASLt computes it, D = op(A) x op(B) per batch entry.
/// A row-major [r, c] matrix is a column-major [c, r] one, so the row-major
/// C = L x R is the column-major C^T = R^T x L^T: A is the rhs, B the lhs,
/// D the result as an [n, m] column-major matrix (ld n), and a bias of n
/// elements is one per row of D, as CUBLASLT_EPILOGUE_BIAS adds it.
struct BlasMatmulLayout {
  BlasMatrix a, b, d;
  /// After folding: a batch whose rhs is broadcast and whose lhs entries
  /// are contiguous [m, k] matrices is one product of batch * m rows.
  int64_t batch = 1;
};

/// `shape` (non-empty: batch, m, n, k > 0) for cuBLASLt.
BlasMatmulLayout blasMatmulLayout(const MatmulShape &shape);

/// A ConvStep for cuDNN's backend: every tensor has at least 4 dimensions
/// (a 1-d convolution gets a unit height, and unit stride, dilation and no
/// padding along it), listed channels-first, and strides that say how the
/// dense buffer holds them: row-major, or channels-last (NHWC, OHWI: the
/// layout of cuDNN's tensor-core kernels) for a `channels_last` step.
/// Grouping needs nothing more: cuDNN reads the group count from x's
/// channels over w's.
struct DnnConvLayout {
  /// x [N, C, spatial...], w [O, C / groups, kernel...], y [N, O, out...].
  std::vector<int64_t> xDims, wDims, yDims;
  std::vector<int64_t> xStrides, wStrides, yStrides;
  /// Per spatial dimension (at least 2).
  std::vector<int64_t> stride, padLow, padHigh, dilation;
};

DnnConvLayout dnnConvLayout(const cpu::ConvGeometry &g);

/// Row-major strides of a dense tensor of `dims`.
std::vector<int64_t> packedStrides(const std::vector<int64_t> &dims);

/// Strides of a dense tensor of channels-first `dims` ([N, C, s...], rank
/// 3 or more) stored channels-last ([N, s..., C]).
std::vector<int64_t> channelsLastStrides(const std::vector<int64_t> &dims);

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_LIBRARYLAYOUT_H
