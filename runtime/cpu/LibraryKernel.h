//===- LibraryKernel.h - A CPU step that runs on a library ------*- C++ -*-===//
//
// MatmulStep and ConvStep run on library primitives (oneDNN, OpenBLAS)
// prepared once, when the session opens (Matmul.cpp, Conv.cpp). The executor
// sees both through this one interface: the scratch memory a step needs
// (one buffer, shared by all of a session's steps) and a run over the
// step's buffers, so it needs no case per kind of library step.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_LIBRARYKERNEL_H
#define DLC_RUNTIME_CPU_LIBRARYKERNEL_H

#include "dlc/runtime.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/module/dlcm_generated.h"

#include <cstddef>
#include <dnnl.hpp>
#include <memory>

namespace dlc::cpu {

/// One prepared library step.
class LibraryKernel {
public:
  virtual ~LibraryKernel() = default;

  /// Bytes of scratch memory run() needs (64-byte aligned).
  virtual size_t scratchBytes() const { return 0; }
  /// Runs the step on `buffers`, the addresses of its buffer references in
  /// PlanStep's order (MatmulStep: lhs, rhs, result; ConvStep: x, w, y).
  /// May throw dnnl::error.
  virtual void run(void *const *buffers, void *scratch, dnnl::stream &stream,
                   ThreadPool &pool) = 0;
};

/// Prepares MatmulStep `s` (checked by ModuleFile) for `device`: its
/// kernel computes result = lhs x rhs. A dtype the CPU cannot multiply is
/// DLC_UNIMPLEMENTED.
dlc_status_t createMatmulKernel(const fb::MatmulStep &s, CpuDevice &device,
                                std::unique_ptr<LibraryKernel> &out);

/// Prepares ConvStep `step` (checked by ModuleFile) for `device`: its
/// kernel computes the output the step's kind writes from the other two of
/// (x, w, y), on the step's engine (auto: oneDNN where it takes the step,
/// the direct loops otherwise). A dtype the CPU cannot convolve, or a
/// library demand oneDNN cannot meet, is DLC_UNIMPLEMENTED.
dlc_status_t createConvKernel(const fb::ConvStep &step, CpuDevice &device,
                              std::unique_ptr<LibraryKernel> &out);

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_LIBRARYKERNEL_H
