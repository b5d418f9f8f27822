//===- Conv.h - ConvStep on the CPU -----------------------------*- C++ -*-===//
//
// float32 convolutions of 1 to 3 spatial dimensions run on oneDNN's
// convolution primitives (forward, backward data, backward weights),
// created once per step when the session opens. The primitives compute in
// the memory layouts oneDNN prefers (format_tag::any, blocked), and the
// step reorders its plain NCHW (or, for a channels_last step, NHWC)
// operands into scratch memory and the result back: measured 1.4x to 1.8x
// faster than plain NCHW primitives even with the reorders counted
// (docs/performance.md). float64, and shapes oneDNN does not take, run on
// DirectConv (channels-last steps through channels-first scratch copies).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_CONV_H
#define DLC_RUNTIME_CPU_CONV_H

#include "dlc/runtime.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/module/dlcm_generated.h"

#include <memory>

namespace dlc::cpu {

/// One prepared ConvStep (checked by ModuleFile).
class ConvKernel {
public:
  /// Prepares `step` for `device`; a dtype the CPU cannot convolve is
  /// DLC_UNIMPLEMENTED.
  static dlc_status_t create(const fb::ConvStep &step, CpuDevice &device,
                             std::unique_ptr<ConvKernel> &out);
  virtual ~ConvKernel() = default;

  /// Bytes of scratch memory run() needs.
  virtual size_t scratchBytes() const { return 0; }
  /// Computes the step's output from its two operands (x, w, y as the step
  /// names them; the output is the one its kind writes). May throw
  /// dnnl::error.
  virtual void run(void *x, void *w, void *y, void *scratch,
                   dnnl::stream &stream, ThreadPool &pool) = 0;
};

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_CONV_H
