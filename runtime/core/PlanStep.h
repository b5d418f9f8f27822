//===- PlanStep.h - What every device reads from a plan's step --*- C++ -*-===//
//
// The devices' executors (cpu/Executor, cuda/CudaSession) prepare a plan's
// steps the same way before doing their own thing with them: which buffers
// a step uses, in the order their calls take them, and the label messages
// and profiles name the step by.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_PLANSTEP_H
#define DLC_RUNTIME_CORE_PLANSTEP_H

#include "runtime/module/ModuleFile.h"

#include <string>
#include <vector>

namespace dlc {

/// A buffer reference of a plan, resolved per call against the bases the
/// call binds: the arena, a constant, an argument or a result.
struct StepRef {
  fb::BufferKind kind = fb::BufferKind::Arena;
  uint32_t index = 0;
  uint64_t offset = 0;
};

/// The buffers `step` uses: a kernel's in its parameter order; a matmul's
/// lhs, rhs, result, then its bias when it has an epilogue; a
/// convolution's x, w, y; a copy's source and destination.
std::vector<StepRef> stepRefs(const fb::Step &step);

/// "step 3 (node 'conv1' (Conv))", and for a kernel step its kernel's name
/// after that, which finds its source (dlc-compile --emit=kernels).
std::string stepLabel(const ModuleFile &module, const fb::Step &step,
                      uint32_t index);

} // namespace dlc

#endif // DLC_RUNTIME_CORE_PLANSTEP_H
