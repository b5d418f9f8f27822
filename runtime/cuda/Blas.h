//===- Blas.h - MatmulStep on cuBLASLt --------------------------*- C++ -*-===//
//
// Matmuls run on cuBLASLt rather than cuBLAS because its matmul takes the
// epilogues dlc fuses (bias, bias + ReLU) and a strided batch in one call,
// and because each step's algorithm is chosen once, when a session opens,
// with cublasLtMatmulAlgoGetHeuristic: running a step is then one
// cublasLtMatmul, with no host synchronization or allocation, so it can be
// captured into a CUDA graph. The library is opened with dlopen
// (DynamicLibrary.h): a machine without it still runs dlc on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_BLAS_H
#define DLC_RUNTIME_CUDA_BLAS_H

#include "dlc/runtime.h"
#include "runtime/cuda/DynamicLibrary.h"
#include "runtime/module/dlcm_generated.h"

#include <cublasLt.h>
#include <cuda.h>

#include <memory>
#include <string>

namespace dlc::cuda {

/// The cuBLASLt entry points dlc calls, as members of Blas named like the
/// API.
#define DLC_CUBLASLT_FUNCTIONS(X)                                              \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

/// cuBLASLt, loaded, with one handle. One thread at a time may use it (and
/// the matmuls planned on it), which the device's executor guarantees.
class Blas {
public:
  /// Loads libcublasLt and creates a handle. A missing library or symbol is
  /// DLC_UNAVAILABLE, as is a failing cublasLtCreate (no usable GPU).
  static dlc_status_t open(std::unique_ptr<Blas> &out);
  ~Blas();
  Blas(const Blas &) = delete;
  Blas &operator=(const Blas &) = delete;

private:
  friend class BlasMatmul;
  Blas() = default;

  /// "CUBLAS_STATUS_NOT_SUPPORTED (15)".
  std::string describe(cublasStatus_t status) const;
  /// A status for `status` returned by `call`, or null on success: "CALL
  /// failed: CUBLAS_STATUS_NOT_SUPPORTED (15)".
  dlc_status_t check(cublasStatus_t status, const char *call) const;

  DynamicLibrary library_;
  cublasLtHandle_t handle_ = nullptr;

  DLC_CUBLASLT_FUNCTIONS(DLC_DECLARE_LIBRARY_FUNCTION)
};

/// One MatmulStep (checked by ModuleFile), planned once: its descriptors,
/// layouts and algorithm. `blas` must outlive it.
class BlasMatmul {
public:
  /// Plans `step`. float32 multiplies in float32, or on TF32 tensor cores
  /// when `allowTf32` (CUBLAS_COMPUTE_32F_FAST_TF32); float16 and bfloat16
  /// accumulate and scale in float32; float64 in float64. Another dtype is
  /// DLC_UNIMPLEMENTED naming it, as is a step no algorithm takes within
  /// `maxWorkspaceBytes` of workspace. The Bias and BiasRelu epilogues add
  /// a bias of n elements of the step's dtype to every result row.
  static dlc_status_t create(Blas &blas, const fb::MatmulStep &step,
                             bool allowTf32, size_t maxWorkspaceBytes,
                             std::unique_ptr<BlasMatmul> &out);
  ~BlasMatmul();
  BlasMatmul(const BlasMatmul &) = delete;
  BlasMatmul &operator=(const BlasMatmul &) = delete;

  /// Bytes of workspace run() needs (at most the limit create() was given):
  /// a 256-byte aligned device buffer, as device allocations are.
  size_t workspaceBytes() const { return workspaceBytes_; }

  /// A product over k = 0 is all zeros, which cuBLASLt does not compute:
  /// the step's result bytes, for the caller to clear (cuMemsetD8Async)
  /// instead of calling run(). 0 for every other step.
  size_t zeroFillBytes() const { return zeroFillBytes_; }

  /// Enqueues result = lhs x rhs (+ bias) on `stream`: device pointers to
  /// the step's buffers, `bias` null unless the step has an epilogue. No
  /// host synchronization and no allocation, so it may be captured into a
  /// CUDA graph. Enqueues nothing for a step with an empty result or a
  /// zero fill. A pointer less aligned than the plan assumed (every dlc
  /// buffer is kBufferAlignment-aligned) is DLC_INTERNAL.
  dlc_status_t run(const void *lhs, const void *rhs, const void *bias,
                   void *result, void *workspace, CUstream stream) const;

private:
  explicit BlasMatmul(Blas &blas) : blas_(blas) {}

  Blas &blas_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_ = {};
  size_t workspaceBytes_ = 0;
  size_t zeroFillBytes_ = 0;
  bool hasBias_ = false;
  /// alpha = 1, beta = 0 in the scale type (float, or double for float64),
  /// read from host memory when run() enqueues.
  bool doubleScale_ = false;
  float oneF_ = 1, zeroF_ = 0;
  double oneD_ = 1, zeroD_ = 0;
  /// The alignment the algorithm was chosen for, per operand.
  uint64_t lhsAlignment_ = 0, rhsAlignment_ = 0, resultAlignment_ = 0,
           biasAlignment_ = 0;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_BLAS_H
