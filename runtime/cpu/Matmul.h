//===- Matmul.h - MatmulStep on the CPU -------------------------*- C++ -*-===//
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
#ifndef DLC_RUNTIME_CPU_MATMUL_H
#define DLC_RUNTIME_CPU_MATMUL_H

#include "dlc/runtime.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/module/dlcm_generated.h"

#include <memory>

namespace dlc::cpu {

/// One prepared MatmulStep (checked by ModuleFile).
class MatmulKernel {
public:
  /// Prepares `step` for `device`; a dtype the CPU cannot multiply is
  /// DLC_UNIMPLEMENTED.
  static dlc_status_t create(const fb::MatmulStep &step, CpuDevice &device,
                             std::unique_ptr<MatmulKernel> &out);
  virtual ~MatmulKernel() = default;

  /// Bytes of scratch memory run() needs (64-byte aligned).
  virtual size_t scratchBytes() const { return 0; }
  /// result = lhs x rhs. May throw dnnl::error.
  virtual void run(const void *lhs, const void *rhs, void *result,
                   void *scratch, dnnl::stream &stream) = 0;
};

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_MATMUL_H
