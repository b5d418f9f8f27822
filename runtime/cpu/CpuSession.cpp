//===- CpuSession.cpp - A module opened on the CPU ------------------------===//
//
// Globals in aligned host memory, initialized from the module; the kernels
// from its shared object, looked up once; calls bind the caller's tensors
// in place (staged inputs from the session's copies) and run the function's
// executor on the device's threads.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuSession.h"

#include "runtime/core/Devices.h"
#include "runtime/core/Status.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace dlc::cpu {

dlc_status_t CpuDevice::createSession(std::shared_ptr<const ModuleFile> module,
                                      const std::string &deviceSpec,
                                      std::unique_ptr<Session> &out) {
  auto device = std::static_pointer_cast<CpuDevice>(shared_from_this());
  const std::string &name = module->name();
  std::unique_ptr<CpuSession> s(new CpuSession(module));
  s->device_ = device;
  s->staged_.resize(module->functions().size());

  s->globals_.resize(module->globals().size());
  for (size_t i = 0; i < s->globals_.size(); ++i) {
    const ValueInfo &info = module->globals()[i];
    auto &buffers = s->globals_[i];
    const auto *init = module->root().globals()->Get(i)->initial_value();
    size_t bytes = info.type.byteSize;
    if (!buffers[0].allocate(bytes, !init) ||
        (s->hasTwoBuffers(i) && !buffers[1].allocate(bytes, false)))
      return makeStatus(DLC_RESOURCE_EXHAUSTED,
                        name + ": out of memory for global '" + info.name +
                            "' (" + info.type.describe() + ")");
    if (init && bytes)
      std::memcpy(buffers[0].data(), init->data(), bytes);
  }

  // Kernels: the shared object once, each symbol once.
  std::vector<KernelFunction> kernels;
  const auto *kernelList = module->root().kernels();
  if (kernelList && kernelList->size()) {
    const auto *so = module->root().cpu_shared_object();
    if (!so || !so->size())
      return makeStatus(DLC_DATA_LOSS, name + ": has " +
                                           std::to_string(kernelList->size()) +
                                           " kernels but no CPU shared object");
    DLC_RETURN_IF_ERROR(KernelLibrary::load(
        so->data(), so->size(), name + ": cpu_shared_object", s->kernels_));
    for (const fb::Kernel *k : *kernelList) {
      KernelFunction fn = nullptr;
      DLC_RETURN_IF_ERROR(s->kernels_->lookup(k->name()->str(), fn));
      kernels.push_back(fn);
    }
  }

  // Library calls made while preparing steps use the device's thread count:
  // oneDNN picks its blocking for the threads it will run on.
  LibraryThreads threads(device->numThreads());
  size_t scratch = 0;
  for (const FunctionInfo &f : module->functions()) {
    std::unique_ptr<FunctionExecutor> executor;
    DLC_RETURN_IF_ERROR(
        FunctionExecutor::create(*module, f, *device, kernels, executor));
    scratch = std::max(scratch, executor->scratchBytes());
    s->executors_.push_back(std::move(executor));
  }
  if (!s->scratch_.allocate(scratch, false))
    return makeStatus(DLC_RESOURCE_EXHAUSTED, name + ": out of memory for " +
                                                  std::to_string(scratch) +
                                                  " bytes of scratch memory");
  s->stream_ = dnnl::stream(device->engine());
  out = std::move(s);
  return nullptr;
}

dlc_status_t CpuSession::readGlobal(size_t index, void *data) const {
  const ValueInfo &info = module_->globals()[index];
  std::memcpy(data, globals_[index][current(index)].data(), info.type.byteSize);
  return nullptr;
}

dlc_status_t CpuSession::writeGlobal(size_t index, const void *data) {
  const ValueInfo &info = module_->globals()[index];
  std::memcpy(globals_[index][current(index)].data(), data, info.type.byteSize);
  return nullptr;
}

dlc_status_t CpuSession::stageInputs(size_t index, int slot,
                                     const dlc_tensor_t *inputs) {
  const FunctionInfo &f = module_->functions()[index];
  std::vector<AlignedBuffer> &buffers = staged_[index][slot];
  buffers.resize(f.inputs.size());
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    size_t bytes = f.arguments[f.inputs[i]].type.byteSize;
    if (buffers[i].size() != bytes && !buffers[i].allocate(bytes, false))
      return makeStatus(DLC_RESOURCE_EXHAUSTED,
                        f.name + ": out of memory for staging input " +
                            std::to_string(i));
    if (bytes)
      std::memcpy(buffers[i].data(), inputs[i].data, bytes);
  }
  return nullptr;
}

dlc_status_t CpuSession::execute(size_t index, const dlc_tensor_t *inputs,
                                 int slot, const dlc_tensor_t *outputs) {
  const FunctionInfo &f = module_->functions()[index];
  argumentBases_.assign(f.arguments.size(), nullptr);
  resultBases_.assign(f.results.size(), nullptr);
  // The CPU reads the caller's inputs in place; staged ones from their
  // copies.
  for (size_t i = 0; i < f.inputs.size(); ++i)
    argumentBases_[f.inputs[i]] = inputs
                                      ? static_cast<std::byte *>(inputs[i].data)
                                      : staged_[index][slot][i].data();
  for (size_t i = 0; i < f.outputs.size(); ++i)
    resultBases_[f.outputs[i]] = static_cast<std::byte *>(outputs[i].data);
  for (size_t a = 0; a < f.arguments.size(); ++a)
    if (int32_t g = f.arguments[a].global; g >= 0)
      argumentBases_[a] = globals_[g][current(g)].data();
  for (size_t r = 0; r < f.results.size(); ++r)
    if (int32_t g = f.results[r].global; g >= 0)
      resultBases_[r] = globals_[g][1 - current(g)].data();

  LibraryThreads threads(device_->numThreads());
  dlc_status_t status =
      executors_[index]->run(argumentBases_.data(), resultBases_.data(),
                             scratch_.data(), stream_, profiling(),
                             {communicator(), tensorCommunicator(),
                              stageCommunicator(), pipelineStage()});
  lastWaitSeconds_ = executors_[index]->lastWaitSeconds();
  return status;
}

std::vector<Session::ProfileLine> CpuSession::profile() const {
  std::vector<ProfileLine> lines;
  for (size_t f = 0; f < executors_.size(); ++f)
    for (auto &step : executors_[f]->profile()) {
      lines.push_back({module_->functions()[f].name, step.kind, step.label,
                       step.calls, step.seconds});
      if (step.kind == std::string("AllReduceStep") ||
          step.kind == std::string("ShardStep") ||
          step.kind == std::string("TransferStep")) {
        char detail[128];
        std::snprintf(detail, sizeof(detail),
                      "\"collective_ms\": %.4f, \"exposed_ms\": %.4f",
                      step.collectiveSeconds * 1e3, step.exposedSeconds * 1e3);
        lines.back().detail = detail;
      }
    }
  return lines;
}

} // namespace dlc::cpu
