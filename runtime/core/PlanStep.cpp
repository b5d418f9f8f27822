//===- PlanStep.cpp - What every device reads from a plan's step ----------===//
#include "runtime/core/PlanStep.h"

namespace dlc {
namespace {

StepRef refOf(const fb::BufferRef *r) {
  return StepRef{r->kind(), r->index(), r->offset()};
}

} // namespace

std::vector<StepRef> stepRefs(const fb::Step &step) {
  std::vector<StepRef> refs;
  switch (step.step_type()) {
  case fb::StepKind::KernelStep:
    if (const auto *buffers = step.step_as_KernelStep()->buffers())
      for (const fb::BufferRef *r : *buffers)
        refs.push_back(refOf(r));
    break;
  case fb::StepKind::MatmulStep: {
    const fb::MatmulStep &m = *step.step_as_MatmulStep();
    refs = {refOf(m.lhs()), refOf(m.rhs()), refOf(m.result())};
    if (m.epilogue() != fb::MatmulEpilogue::None)
      refs.push_back(refOf(m.bias()));
    break;
  }
  case fb::StepKind::ConvStep: {
    const fb::ConvStep &c = *step.step_as_ConvStep();
    refs = {refOf(c.x()), refOf(c.w()), refOf(c.y())};
    break;
  }
  case fb::StepKind::CopyStep: {
    const fb::CopyStep &c = *step.step_as_CopyStep();
    refs = {refOf(c.source()), refOf(c.destination())};
    break;
  }
  case fb::StepKind::AllReduceStep:
    for (const fb::BufferRef *r : *step.step_as_AllReduceStep()->buffers())
      refs.push_back(refOf(r));
    break;
  case fb::StepKind::ShardStep:
    for (const fb::BufferRef *r : *step.step_as_ShardStep()->buffers())
      refs.push_back(refOf(r));
    break;
  case fb::StepKind::TransferStep: {
    const fb::TransferStep &t = *step.step_as_TransferStep();
    refs = {refOf(t.source()), refOf(t.destination())};
    break;
  }
  default:
    break;
  }
  return refs;
}

std::string stepLabel(const ModuleFile &module, const fb::Step &step,
                      uint32_t index) {
  std::string label = "step " + std::to_string(index);
  if (step.location() && step.location()->size())
    label += " (" + step.location()->str() + ")";
  if (const fb::KernelStep *k = step.step_as_KernelStep())
    if (const auto *kernels = module.root().kernels())
      if (const auto *name = kernels->Get(k->kernel())->name())
        label += " " + name->str();
  return label;
}

} // namespace dlc
