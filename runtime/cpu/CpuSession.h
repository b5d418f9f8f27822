//===- CpuSession.h - A module opened on the CPU ----------------*- C++ -*-===//
//
// The globals live in host memory (two aligned buffers for those a function
// updates), the kernels in the module's shared object, and each function
// runs through its FunctionExecutor on the device's threads.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_CPUSESSION_H
#define DLC_RUNTIME_CPU_CPUSESSION_H

#include "runtime/core/AlignedBuffer.h"
#include "runtime/core/Session.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/Executor.h"
#include "runtime/cpu/KernelLibrary.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace dlc::cpu {

class CpuSession final : public Session {
public:
  dlc_status_t readGlobal(size_t index, void *data) const override;
  dlc_status_t writeGlobal(size_t index, const void *data) override;
  dlc_status_t lastCollectiveWait(double &seconds) const override {
    seconds = lastWaitSeconds_;
    return nullptr;
  }

private:
  /// CpuDevice::createSession opens sessions (CpuSession.cpp): allocates
  /// and initializes the globals, loads the kernels and prepares every
  /// function.
  friend class CpuDevice;
  explicit CpuSession(std::shared_ptr<const ModuleFile> module)
      : Session(std::move(module)) {}
  dlc_status_t stageInputs(size_t index, int slot,
                           const dlc_tensor_t *inputs) override;
  dlc_status_t execute(size_t index, const dlc_tensor_t *inputs, int slot,
                       const dlc_tensor_t *outputs) override;
  std::vector<ProfileLine> profile() const override;

  std::shared_ptr<CpuDevice> device_;
  /// Two buffers per global (the second only for updated ones).
  std::vector<std::array<AlignedBuffer, 2>> globals_;
  std::unique_ptr<KernelLibrary> kernels_;
  /// Parallel to module_->functions().
  std::vector<std::unique_ptr<FunctionExecutor>> executors_;
  /// Per function and staging slot, copies of staged inputs.
  std::vector<std::array<std::vector<AlignedBuffer>, kStagingSlots>> staged_;
  AlignedBuffer scratch_;
  dnnl::stream stream_;
  /// What the last call's executor waited for its collectives.
  double lastWaitSeconds_ = 0;
  /// Per-call base addresses, kept to avoid allocating on each call.
  std::vector<std::byte *> argumentBases_, resultBases_;
};

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_CPUSESSION_H
