//===- Blas.cpp - MatmulStep on cuBLASLt ----------------------------------===//
#include "runtime/cuda/Blas.h"

#include "runtime/core/Status.h"
#include "runtime/cuda/LibraryLayout.h"
#include "runtime/support/Tensor.h"

#include <cstdint>
#include <type_traits>

namespace dlc::cuda {
namespace {

// cuBLASLt takes the runtime API's stream type, the driver's under another
// name.
static_assert(std::is_same_v<CUstream, cudaStream_t>,
              "CUstream and cudaStream_t are both CUstream_st *");

dlc_status_code_t codeOf(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return DLC_UNAVAILABLE;
  case CUBLAS_STATUS_ALLOC_FAILED:
    return DLC_RESOURCE_EXHAUSTED;
  case CUBLAS_STATUS_NOT_SUPPORTED:
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return DLC_UNIMPLEMENTED;
  default:
    return DLC_INTERNAL;
  }
}

/// The cuBLASLt types of a matmul of `dtype`.
struct BlasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

bool blasTypes(DType dtype, bool allowTf32, BlasTypes &out) {
  switch (dtype) {
  case DType::F32:
    out = {CUDA_R_32F,
           allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
           CUDA_R_32F};
    return true;
  case DType::F16:
    out = {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    return true;
  case DType::BF16:
    out = {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    return true;
  case DType::F64:
    out = {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    return true;
  default:
    return false;
  }
}

bool aligned(const void *p, uint64_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

} // namespace

dlc_status_t Blas::open(std::unique_ptr<Blas> &out) {
  std::unique_ptr<Blas> blas(new Blas());
  DynamicLibrary &lib = blas->library_;
  DLC_RETURN_IF_ERROR(
      lib.open("cuBLASLt", {"libcublasLt.so.13", "libcublasLt.so.12"}));
#define DLC_BIND_CUBLASLT_FUNCTION(name)                                       \
  DLC_RETURN_IF_ERROR(lib.bind(blas->name, DLC_SYMBOL_NAME(name)));
  DLC_CUBLASLT_FUNCTIONS(DLC_BIND_CUBLASLT_FUNCTION)
#undef DLC_BIND_CUBLASLT_FUNCTION
  cublasStatus_t status = blas->cublasLtCreate(&blas->handle_);
  if (status != CUBLAS_STATUS_SUCCESS) {
    blas->handle_ = nullptr;
    // Whatever cuBLASLt says, a handle it cannot create means no usable
    // GPU here, which callers treat as "no CUDA device".
    return makeStatus(DLC_UNAVAILABLE,
                      "cublasLtCreate failed: " + blas->describe(status));
  }
  out = std::move(blas);
  return nullptr;
}

Blas::~Blas() {
  if (handle_)
    this->cublasLtDestroy(handle_);
}

std::string Blas::describe(cublasStatus_t status) const {
  return std::string(this->cublasLtGetStatusName(status)) + " (" +
         std::to_string(status) + ")";
}

dlc_status_t Blas::check(cublasStatus_t status, const char *call) const {
  if (status == CUBLAS_STATUS_SUCCESS)
    return nullptr;
  return makeStatus(codeOf(status),
                    std::string(call) + " failed: " + describe(status));
}

BlasMatmul::~BlasMatmul() {
  if (desc_)
    blas_.cublasLtMatmulDescDestroy(desc_);
  for (cublasLtMatrixLayout_t layout : {a_, b_, d_})
    if (layout)
      blas_.cublasLtMatrixLayoutDestroy(layout);
}

dlc_status_t BlasMatmul::create(Blas &blas, const fb::MatmulStep &step,
                                bool allowTf32, size_t maxWorkspaceBytes,
                                std::unique_ptr<BlasMatmul> &out) {
  std::unique_ptr<BlasMatmul> mm(new BlasMatmul(blas));
  MatmulShape shape = MatmulShape::fromStep(step);
  DType dtype = static_cast<DType>(step.dtype());
  size_t elementBytes = dtypeSize(dtype);
  fb::MatmulEpilogue epilogue = step.epilogue();
  if (shape.batch == 0 || shape.m == 0 || shape.n == 0) {
    out = std::move(mm);
    return nullptr;
  }
  if (shape.k == 0) {
    if (epilogue != fb::MatmulEpilogue::None)
      return makeStatus(DLC_UNIMPLEMENTED,
                        "a matmul over k = 0 with a bias epilogue");
    mm->zeroFillBytes_ = shape.batch * shape.m * shape.n * elementBytes;
    out = std::move(mm);
    return nullptr;
  }
  BlasTypes types;
  if (!blasTypes(dtype, allowTf32, types))
    return makeStatus(DLC_UNIMPLEMENTED, std::string("matmul of ") +
                                             dtypeName(dtype) +
                                             " is not supported on CUDA");
  BlasMatmulLayout layout = blasMatmulLayout(shape);
  if (layout.batch > INT32_MAX)
    return makeStatus(DLC_UNIMPLEMENTED,
                      "a batch of " + std::to_string(layout.batch) +
                          " matmuls (cuBLASLt counts them in 32 bits)");

  // Descriptor attributes, each of the exact type cublasLt.h names.
  mm->doubleScale_ = types.scale == CUDA_R_64F;
  DLC_RETURN_IF_ERROR(blas.check(
      blas.cublasLtMatmulDescCreate(&mm->desc_, types.compute, types.scale),
      "cublasLtMatmulDescCreate"));
  auto setDesc = [&](cublasLtMatmulDescAttributes_t attribute,
                     const auto &value, const char *call) {
    return blas.check(blas.cublasLtMatmulDescSetAttribute(
                          mm->desc_, attribute, &value, sizeof(value)),
                      call);
  };
  int32_t transA = layout.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  int32_t transB = layout.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  DLC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_TRANSA, transA,
                              "cublasLtMatmulDescSetAttribute(TRANSA)"));
  DLC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_TRANSB, transB,
                              "cublasLtMatmulDescSetAttribute(TRANSB)"));
  // Every batch entry's address counts, so a stride can lower the alignment.
  auto strideBytes = [&](const BlasMatrix &matrix) -> uint64_t {
    return layout.batch > 1 ? matrix.batchStride * elementBytes : 0;
  };
  mm->lhsAlignment_ =
      bufferAlignment({step.lhs()->offset(), strideBytes(layout.b)});
  mm->rhsAlignment_ =
      bufferAlignment({step.rhs()->offset(), strideBytes(layout.a)});
  mm->resultAlignment_ =
      bufferAlignment({step.result()->offset(), strideBytes(layout.d)});
  if (epilogue != fb::MatmulEpilogue::None) {
    mm->hasBias_ = true;
    uint32_t kind = epilogue == fb::MatmulEpilogue::Bias
                        ? CUBLASLT_EPILOGUE_BIAS
                        : CUBLASLT_EPILOGUE_RELU_BIAS;
    int32_t biasType = types.data;
    mm->biasAlignment_ = bufferAlignment({step.bias()->offset()});
    // The heuristic reads the bias pointer's value, not its memory, to learn
    // its alignment (cublasLt.h): an address with exactly the alignment run()
    // will honor. run() sets the real one.
    const void *biasPointer =
        reinterpret_cast<const void *>(uintptr_t{mm->biasAlignment_});
    DLC_RETURN_IF_ERROR(setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, kind,
                                "cublasLtMatmulDescSetAttribute(EPILOGUE)"));
    DLC_RETURN_IF_ERROR(
        setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, biasType,
                "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)"));
    DLC_RETURN_IF_ERROR(
        setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, biasPointer,
                "cublasLtMatmulDescSetAttribute(BIAS_POINTER)"));
  }

  // The three layouts (C, unread with beta = 0, shares D's).
  auto makeLayout = [&](const BlasMatrix &matrix,
                        cublasLtMatrixLayout_t &layoutOut) -> dlc_status_t {
    DLC_RETURN_IF_ERROR(blas.check(
        blas.cublasLtMatrixLayoutCreate(&layoutOut, types.data, matrix.rows,
                                        matrix.cols, matrix.ld),
        "cublasLtMatrixLayoutCreate"));
    int32_t count = static_cast<int32_t>(layout.batch);
    int64_t stride = matrix.batchStride;
    DLC_RETURN_IF_ERROR(
        blas.check(blas.cublasLtMatrixLayoutSetAttribute(
                       layoutOut, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                       sizeof(count)),
                   "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)"));
    return blas.check(blas.cublasLtMatrixLayoutSetAttribute(
                          layoutOut,
                          CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                          sizeof(stride)),
                      "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  };
  DLC_RETURN_IF_ERROR(makeLayout(layout.a, mm->a_));
  DLC_RETURN_IF_ERROR(makeLayout(layout.b, mm->b_));
  DLC_RETURN_IF_ERROR(makeLayout(layout.d, mm->d_));

  // The algorithm: cuBLASLt's first choice within the workspace limit and
  // the operands' alignment (A is the rhs, B the lhs).
  struct Preference {
    Blas &blas;
    cublasLtMatmulPreference_t handle = nullptr;
    ~Preference() {
      if (handle)
        blas.cublasLtMatmulPreferenceDestroy(handle);
    }
  } preference{blas};
  DLC_RETURN_IF_ERROR(
      blas.check(blas.cublasLtMatmulPreferenceCreate(&preference.handle),
                 "cublasLtMatmulPreferenceCreate"));
  auto setPreference = [&](cublasLtMatmulPreferenceAttributes_t attribute,
                           const auto &value, const char *call) {
    return blas.check(blas.cublasLtMatmulPreferenceSetAttribute(
                          preference.handle, attribute, &value, sizeof(value)),
                      call);
  };
  uint64_t workspaceLimit = maxWorkspaceBytes;
  uint32_t alignA = static_cast<uint32_t>(mm->rhsAlignment_);
  uint32_t alignB = static_cast<uint32_t>(mm->lhsAlignment_);
  uint32_t alignD = static_cast<uint32_t>(mm->resultAlignment_);
  DLC_RETURN_IF_ERROR(setPreference(
      CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspaceLimit,
      "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)"));
  DLC_RETURN_IF_ERROR(setPreference(
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignA,
      "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)"));
  DLC_RETURN_IF_ERROR(setPreference(
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignB,
      "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)"));
  DLC_RETURN_IF_ERROR(setPreference(
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignD,
      "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)"));
  DLC_RETURN_IF_ERROR(setPreference(
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignD,
      "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)"));
  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  // NOT_SUPPORTED means that no algorithm fits: the message below says
  // for what, which is more use than the status's name.
  cublasStatus_t heuristic = blas.cublasLtMatmulAlgoGetHeuristic(
      blas.handle_, mm->desc_, mm->a_, mm->b_, mm->d_, mm->d_,
      preference.handle, 1, &result, &found);
  if (heuristic != CUBLAS_STATUS_NOT_SUPPORTED)
    DLC_RETURN_IF_ERROR(
        blas.check(heuristic, "cublasLtMatmulAlgoGetHeuristic"));
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
    return makeStatus(
        DLC_UNIMPLEMENTED,
        std::string("cuBLASLt has no algorithm for a ") + dtypeName(dtype) +
            " matmul of batch " + std::to_string(shape.batch) + ", m " +
            std::to_string(shape.m) + ", n " + std::to_string(shape.n) +
            ", k " + std::to_string(shape.k) + " within " +
            std::to_string(maxWorkspaceBytes) + " bytes of workspace");
  mm->algo_ = result.algo;
  mm->workspaceBytes_ = result.workspaceSize;
  out = std::move(mm);
  return nullptr;
}

dlc_status_t BlasMatmul::run(const void *lhs, const void *rhs, const void *bias,
                             void *result, void *workspace,
                             CUstream stream) const {
  if (!desc_)
    return nullptr;
  struct Operand {
    const char *name;
    const void *pointer;
    uint64_t alignment;
  } operands[] = {{"lhs", lhs, lhsAlignment_},
                  {"rhs", rhs, rhsAlignment_},
                  {"result", result, resultAlignment_},
                  {"bias", bias, hasBias_ ? biasAlignment_ : 1}};
  for (const Operand &operand : operands)
    if (!aligned(operand.pointer, operand.alignment))
      return makeStatus(DLC_INTERNAL,
                        std::string("matmul ") + operand.name + " is not " +
                            std::to_string(operand.alignment) +
                            "-byte aligned as its cuBLASLt plan assumes");
  if (hasBias_)
    // The descriptor is host memory that cublasLtMatmul reads while it
    // enqueues (it passes the pointer to the kernel by value), so setting
    // it before each call is safe under stream capture: each captured
    // launch keeps the pointer it was enqueued with.
    DLC_RETURN_IF_ERROR(blas_.check(
        blas_.cublasLtMatmulDescSetAttribute(
            desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
        "cublasLtMatmulDescSetAttribute(BIAS_POINTER)"));
  const void *alpha = doubleScale_ ? static_cast<const void *>(&oneD_)
                                   : static_cast<const void *>(&oneF_);
  const void *beta = doubleScale_ ? static_cast<const void *>(&zeroD_)
                                  : static_cast<const void *>(&zeroF_);
  return blas_.check(blas_.cublasLtMatmul(blas_.handle_, desc_, alpha, rhs, a_,
                                          lhs, b_, beta, result, d_, result, d_,
                                          &algo_, workspace, workspaceBytes_,
                                          stream),
                     "cublasLtMatmul");
}

} // namespace dlc::cuda
