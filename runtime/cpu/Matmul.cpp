//===- Matmul.cpp - MatmulStep on the CPU ---------------------------------===//
//
// float32 (and bfloat16/float16 where the CPU supports them) run on
// oneDNN's matmul primitive, created once per step when the session opens;
// float64, which oneDNN's CPU matmul lacks, on OpenBLAS's cblas_dgemm.
// oneDNN rather than OpenBLAS for float32 by measurement on training shapes
// with 2 threads: 3x to 12x faster (docs/performance.md, "CPU library
// choice"). A batch is one 3-d oneDNN matmul; a batch stride of 0 becomes a
// broadcast batch dimension of 1, other strides strided memory descriptors.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/LibraryKernel.h"

#include "runtime/core/Status.h"
#include "runtime/cpu/Widen.h"
#include "runtime/module/ModuleFile.h"

#include <cblas.h>
#include <climits>
#include <cstring>

namespace dlc::cpu {
namespace {

/// A prepared MatmulStep, whose run takes its operands by name: the kernel
/// below that wraps another hands it its scratch copies.
class MatmulKernel : public LibraryKernel {
public:
  void run(void *const *buffers, void *scratch, dnnl::stream &stream,
           ThreadPool &) final {
    run(buffers[0], buffers[1], buffers[2], scratch, stream);
  }
  /// result = lhs x rhs.
  virtual void run(const void *lhs, const void *rhs, void *result,
                   void *scratch, dnnl::stream &stream) = 0;
};

/// A product with no terms (k == 0): the result is zeros.
class ZeroMatmul final : public MatmulKernel {
public:
  explicit ZeroMatmul(size_t bytes) : bytes_(bytes) {}
  void run(const void *, const void *, void *result, void *,
           dnnl::stream &) override {
    std::memset(result, 0, bytes_);
  }

private:
  size_t bytes_;
};

/// Nothing to compute (an empty batch or result).
class EmptyMatmul final : public MatmulKernel {
public:
  void run(const void *, const void *, void *, void *,
           dnnl::stream &) override {}
};

class DnnlMatmul final : public MatmulKernel {
public:
  DnnlMatmul(const dnnl::matmul::primitive_desc &pd, const dnnl::engine &engine)
      : primitive_(pd), lhs_(pd.src_desc(), engine, DNNL_MEMORY_NONE),
        rhs_(pd.weights_desc(), engine, DNNL_MEMORY_NONE),
        result_(pd.dst_desc(), engine, DNNL_MEMORY_NONE),
        scratchpad_(pd.scratchpad_desc(), engine, DNNL_MEMORY_NONE),
        scratchBytes_(pd.scratchpad_desc().get_size()) {}

  size_t scratchBytes() const override { return scratchBytes_; }

  void run(const void *lhs, const void *rhs, void *result, void *scratch,
           dnnl::stream &stream) override {
    lhs_.set_data_handle(const_cast<void *>(lhs));
    rhs_.set_data_handle(const_cast<void *>(rhs));
    result_.set_data_handle(result);
    scratchpad_.set_data_handle(scratch);
    primitive_.execute(stream, {{DNNL_ARG_SRC, lhs_},
                                {DNNL_ARG_WEIGHTS, rhs_},
                                {DNNL_ARG_DST, result_},
                                {DNNL_ARG_SCRATCHPAD, scratchpad_}});
    stream.wait();
  }

private:
  dnnl::matmul primitive_;
  dnnl::memory lhs_, rhs_, result_, scratchpad_;
  size_t scratchBytes_;
};

/// float64 through OpenBLAS: one dgemm per batch entry, each using the
/// device's threads (LibraryThreads is set by the session call).
class BlasMatmul final : public MatmulKernel {
public:
  explicit BlasMatmul(const fb::MatmulStep &s)
      : batch_(s.batch()), m_(s.m()), n_(s.n()), k_(s.k()),
        lhsStride_(s.lhs_batch_stride()), rhsStride_(s.rhs_batch_stride()),
        lhsTransposed_(s.lhs_transposed()), rhsTransposed_(s.rhs_transposed()) {
  }

  void run(const void *lhs, const void *rhs, void *result, void *,
           dnnl::stream &) override {
    const auto *a = static_cast<const double *>(lhs);
    const auto *b = static_cast<const double *>(rhs);
    auto *c = static_cast<double *>(result);
    // Leading dimensions of the stored (possibly transposed) operands.
    int lda = static_cast<int>(lhsTransposed_ ? m_ : k_);
    int ldb = static_cast<int>(rhsTransposed_ ? k_ : n_);
    for (int64_t i = 0; i < batch_; ++i)
      cblas_dgemm(CblasRowMajor, lhsTransposed_ ? CblasTrans : CblasNoTrans,
                  rhsTransposed_ ? CblasTrans : CblasNoTrans,
                  static_cast<int>(m_), static_cast<int>(n_),
                  static_cast<int>(k_), 1.0, a + i * lhsStride_,
                  lda > 0 ? lda : 1, b + i * rhsStride_, ldb > 0 ? ldb : 1, 0.0,
                  c + i * m_ * n_, n_ > 0 ? static_cast<int>(n_) : 1);
  }

private:
  int64_t batch_, m_, n_, k_, lhsStride_, rhsStride_;
  bool lhsTransposed_, rhsTransposed_;
};

/// A 16-bit matmul through a float32 kernel (Widen.h). Scratch: the
/// widened lhs, rhs and result, then the kernel's own.
class WidenedMatmul final : public MatmulKernel {
public:
  WidenedMatmul(const fb::MatmulStep &s, std::unique_ptr<MatmulKernel> inner)
      : dtype_(static_cast<DType>(s.dtype())),
        lhsElements_(
            storedElements(s.batch(), s.lhs_batch_stride(), s.m() * s.k())),
        rhsElements_(
            storedElements(s.batch(), s.rhs_batch_stride(), s.k() * s.n())),
        resultElements_(s.batch() * s.m() * s.n()), inner_(std::move(inner)) {}

  size_t scratchBytes() const override {
    return alignScratch(lhsElements_ * sizeof(float)) +
           alignScratch(rhsElements_ * sizeof(float)) +
           alignScratch(resultElements_ * sizeof(float)) +
           inner_->scratchBytes();
  }

  void run(const void *lhs, const void *rhs, void *result, void *scratch,
           dnnl::stream &stream) override {
    auto *lhs32 = static_cast<float *>(scratch);
    auto *rhs32 =
        reinterpret_cast<float *>(reinterpret_cast<std::byte *>(lhs32) +
                                  alignScratch(lhsElements_ * sizeof(float)));
    auto *result32 =
        reinterpret_cast<float *>(reinterpret_cast<std::byte *>(rhs32) +
                                  alignScratch(rhsElements_ * sizeof(float)));
    void *rest = reinterpret_cast<std::byte *>(result32) +
                 alignScratch(resultElements_ * sizeof(float));
    widenToFloat(dtype_, lhs, lhs32, lhsElements_);
    widenToFloat(dtype_, rhs, rhs32, rhsElements_);
    inner_->run(lhs32, rhs32, result32, rest, stream);
    narrowFromFloat(dtype_, result32, result, resultElements_);
  }

private:
  /// The elements a batch of `batch` operands of `each` elements spans
  /// `stride` apart (one operand when broadcast: stride 0).
  static size_t storedElements(int64_t batch, int64_t stride, int64_t each) {
    return static_cast<size_t>(stride == 0 ? each
                                           : (batch - 1) * stride + each);
  }

  DType dtype_;
  size_t lhsElements_, rhsElements_, resultElements_;
  std::unique_ptr<MatmulKernel> inner_;
};

/// The oneDNN descriptor of a stored operand of logical shape [rows, cols]
/// per batch entry: row-major, or column-major when transposed.
dnnl::memory::desc operandDesc(int64_t batch, int64_t batchStride, int64_t rows,
                               int64_t cols, bool transposed,
                               dnnl::memory::data_type type) {
  dnnl::memory::dims strides =
      transposed ? dnnl::memory::dims{1, rows} : dnnl::memory::dims{cols, 1};
  if (batch == 1)
    return dnnl::memory::desc({rows, cols}, type, strides);
  // A broadcast operand is a batch dimension of 1 (its stride is unused).
  bool broadcast = batchStride == 0;
  return dnnl::memory::desc(
      {broadcast ? 1 : batch, rows, cols}, type,
      {broadcast ? rows * cols : batchStride, strides[0], strides[1]});
}

/// A oneDNN matmul of `s` in `type`; throws dnnl::error where oneDNN has
/// none.
std::unique_ptr<MatmulKernel> dnnlMatmul(const fb::MatmulStep &s,
                                         dnnl::memory::data_type type,
                                         const dnnl::engine &engine) {
  dnnl::memory::desc lhs = operandDesc(s.batch(), s.lhs_batch_stride(), s.m(),
                                       s.k(), s.lhs_transposed(), type);
  dnnl::memory::desc rhs = operandDesc(s.batch(), s.rhs_batch_stride(), s.k(),
                                       s.n(), s.rhs_transposed(), type);
  dnnl::memory::desc result =
      s.batch() == 1 ? dnnl::memory::desc({s.m(), s.n()}, type,
                                          dnnl::memory::format_tag::ab)
                     : dnnl::memory::desc({s.batch(), s.m(), s.n()}, type,
                                          dnnl::memory::format_tag::abc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(lhs, rhs, result), attr,
                                  engine);
  return std::make_unique<DnnlMatmul>(pd, engine);
}

} // namespace

dlc_status_t createMatmulKernel(const fb::MatmulStep &s, CpuDevice &device,
                                std::unique_ptr<LibraryKernel> &out) {
  if (s.batch() == 0 || s.m() == 0 || s.n() == 0) {
    out = std::make_unique<EmptyMatmul>();
    return nullptr;
  }
  size_t es = elementSize(s.dtype());
  if (s.k() == 0) {
    out = std::make_unique<ZeroMatmul>(s.batch() * s.m() * s.n() * es);
    return nullptr;
  }
  DType dtype = static_cast<DType>(s.dtype());
  if (dtype == DType::F64) {
    if (s.m() > INT_MAX || s.n() > INT_MAX || s.k() > INT_MAX)
      return makeStatus(DLC_UNIMPLEMENTED,
                        "float64 matmul dimensions beyond 2^31 (BLAS "
                        "takes int)");
    out = std::make_unique<BlasMatmul>(s);
    return nullptr;
  }
  dnnl::memory::data_type type;
  switch (dtype) {
  case DType::F32:
    type = dnnl::memory::data_type::f32;
    break;
  case DType::BF16:
    type = dnnl::memory::data_type::bf16;
    break;
  case DType::F16:
    type = dnnl::memory::data_type::f16;
    break;
  default:
    return makeStatus(DLC_UNIMPLEMENTED, std::string("matmul of ") +
                                             dtypeName(dtype) +
                                             " is not supported on the CPU");
  }
  try {
    out = dnnlMatmul(s, type, device.engine());
    return nullptr;
  } catch (const dnnl::error &e) {
    if (dtype == DType::F32)
      return makeStatus(DLC_UNIMPLEMENTED,
                        std::string("oneDNN has no float32 matmul for this "
                                    "layout (") +
                            e.what() + ")");
  }
  try {
    out = std::make_unique<WidenedMatmul>(
        s, dnnlMatmul(s, dnnl::memory::data_type::f32, device.engine()));
  } catch (const dnnl::error &e) {
    return makeStatus(DLC_UNIMPLEMENTED,
                      std::string("oneDNN has no ") + dtypeName(dtype) +
                          " or float32 matmul for this layout (" + e.what() +
                          ")");
  }
  return nullptr;
}

} // namespace dlc::cpu
