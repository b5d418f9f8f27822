//===- PlanStep.h - What every device reads from a plan's step --*- C++ -*-===//
//
// The devices' executors (cpu/Executor, cuda/CudaSession) prepare a plan's
// steps the same way before doing their own thing with them: which buffers
// a step uses, in the order their calls take them, the label messages and
// profiles name the step by, and the loop that prepares each in turn.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_PLANSTEP_H
#define DLC_RUNTIME_CORE_PLANSTEP_H

#include "dlc/runtime.h"
#include "runtime/core/Status.h"
#include "runtime/module/ModuleFile.h"

#include <string>
#include <utility>
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
/// convolution's x, w, y; a copy's or a transfer's source and destination;
/// an all-reduce's inputs, then its outputs.
std::vector<StepRef> stepRefs(const fb::Step &step);

/// "step 3 (node 'conv1' (Conv))", and for a kernel step its kernel's name
/// after that, which finds its source (dlc-compile --emit=kernels).
std::string stepLabel(const ModuleFile &module, const fb::Step &step,
                      uint32_t index);

/// Which of a ConvStep's refs (x, w, y) its kind writes: y forward, x (dx)
/// backward data, w (dw) backward filter.
inline size_t convOutputRef(fb::ConvKind kind) {
  switch (kind) {
  case fb::ConvKind::Forward:
    return 2;
  case fb::ConvKind::BackwardData:
    return 0;
  case fb::ConvKind::BackwardFilter:
    break;
  }
  return 1;
}

/// What every device keeps of a step, beside what it prepares for it.
struct PlanStep {
  fb::StepKind kind = fb::StepKind::NONE;
  /// The pipeline stage whose ranks run it, or -1 for every rank.
  int32_t stage = -1;
  /// stepLabel's, for messages and profiles.
  std::string label;
  std::vector<StepRef> refs;
};

/// Appends the steps of `function`'s plan to `out` in order, each a `Step`
/// (a PlanStep with the device's own fields) whose kind, label and refs are
/// filled in before `prepare(const fb::Step &, Step &)` prepares the rest.
/// The first status prepare fails with is returned, prefixed "MODULE:
/// FUNCTION: step 3 (...)".
template <typename Step, typename Prepare>
dlc_status_t prepareSteps(const ModuleFile &module,
                          const FunctionInfo &function, std::vector<Step> &out,
                          Prepare &&prepare) {
  const auto *steps = function.plan->steps();
  for (uint32_t i = 0; steps && i < steps->size(); ++i) {
    const fb::Step &fbStep = *steps->Get(i);
    Step step;
    step.kind = fbStep.step_type();
    step.stage = fbStep.stage();
    step.label = stepLabel(module, fbStep, i);
    step.refs = stepRefs(fbStep);
    if (dlc_status_t status = prepare(fbStep, step))
      return prefixStatus(status, module.name() + ": " + function.name + ": " +
                                      step.label);
    out.push_back(std::move(step));
  }
  return nullptr;
}

} // namespace dlc

#endif // DLC_RUNTIME_CORE_PLANSTEP_H
