//===- Session.h - A module opened on a device ------------------*- C++ -*-===//
//
// A session owns the module's globals and runs its functions. Globals that
// some function updates have two buffers (ping-pong): a call binds the
// arguments that read global g to its current buffer and the results that
// update g to the other one, and only once every step has succeeded are
// the two swapped. A failed call therefore leaves every global as it was,
// and no plan ever reads and writes one buffer in the same call.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_SESSION_H
#define DLC_RUNTIME_CORE_SESSION_H

#include "dlc/runtime.h"
#include "runtime/core/AlignedBuffer.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/Executor.h"
#include "runtime/cpu/KernelLibrary.h"
#include "runtime/module/ModuleFile.h"

#include <memory>
#include <string>
#include <vector>

namespace dlc {

class Session {
public:
  /// Opens `module` on a CPU device: allocates and initializes the globals,
  /// loads the kernels and prepares every function.
  static dlc_status_t create(std::shared_ptr<const ModuleFile> module,
                             std::shared_ptr<cpu::CpuDevice> device,
                             const std::string &deviceSpec,
                             std::unique_ptr<Session> &out);

  const ModuleFile &module() const { return *module_; }

  /// dlc_session_call.
  dlc_status_t call(const std::string &function, const dlc_tensor_t *inputs,
                    size_t numInputs, const dlc_tensor_t *outputs,
                    size_t numOutputs);

  /// The current value of global `index` (its bytes, type in module()).
  const std::byte *globalData(size_t index) const;
  std::byte *globalData(size_t index);

  /// The global named `name`, or a DLC_NOT_FOUND status naming it.
  dlc_status_t findGlobal(const std::string &name, size_t &index) const;

  /// The training step a checkpoint records: the value of the global
  /// "dlc.step" (or else of the global whose role is "step") if the module
  /// has one, else the number of calls so far that updated a global.
  int64_t step() const;
  /// After a checkpoint is restored without a "dlc.step" global, counting
  /// calls resumes from its step.
  void setCallCount(int64_t count) { callCount_ = count; }

  /// dlc_session_set_profiling and dlc_session_write_profile.
  void setProfiling(bool on);
  dlc_status_t writeProfile(const std::string &path) const;

private:
  Session() = default;
  dlc_status_t checkTensor(const FunctionInfo &f, const ValueInfo &value,
                           const char *what, size_t index,
                           const dlc_tensor_t &tensor) const;

  struct Global {
    AlignedBuffer buffers[2];
    int current = 0;
  };

  std::shared_ptr<const ModuleFile> module_;
  std::shared_ptr<cpu::CpuDevice> device_;
  std::vector<Global> globals_;
  std::unique_ptr<cpu::KernelLibrary> kernels_;
  /// Parallel to module_->functions().
  std::vector<std::unique_ptr<cpu::FunctionExecutor>> executors_;
  AlignedBuffer scratch_;
  dnnl::stream stream_;
  int64_t callCount_ = 0;
  /// Per-call base addresses, kept to avoid allocating on each call.
  std::vector<std::byte *> argumentBases_, resultBases_;
};

} // namespace dlc

/// The object behind dlc_session_t.
struct dlc_session_s {
  std::unique_ptr<dlc::Session> session;
};

#endif // DLC_RUNTIME_CORE_SESSION_H
