//===- CpuDevice.h - The "cpu" device ---------------------------*- C++ -*-===//
//
// A CPU device is a thread count: its pool (ThreadPool) for generated
// kernels and loops, the same count for the CPU libraries (oneDNN, OpenBLAS)
// during its sessions' calls, and the oneDNN engine primitives are created
// on.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_CPUDEVICE_H
#define DLC_RUNTIME_CPU_CPUDEVICE_H

#include "runtime/core/Devices.h"
#include "runtime/cpu/ThreadPool.h"

#include <dnnl.hpp>

namespace dlc::cpu {

class CpuDevice : public Device {
public:
  /// A device of `numThreads` threads (>= 1). Throws dnnl::error if oneDNN
  /// cannot make a CPU engine.
  explicit CpuDevice(int numThreads)
      : pool_(numThreads), engine_(dnnl::engine::kind::cpu, 0) {}

  const char *target() const override { return "cpu"; }
  dlc_status_t createSession(std::shared_ptr<const ModuleFile> module,
                             const std::string &spec,
                             std::unique_ptr<Session> &out) override;

  int numThreads() const { return pool_.numThreads(); }
  ThreadPool &pool() { return pool_; }
  const dnnl::engine &engine() const { return engine_; }

  /// The threads this process may run on (its CPU affinity mask, which
  /// containers and taskset narrow), at least 1.
  static int availableCores();
  /// A device's threads when none are asked for: this process's share of
  /// the cores (sharedCores of availableCores(), the machine's cores and
  /// the launcher's ranks on this machine).
  static int defaultThreads();

private:
  ThreadPool pool_;
  dnnl::engine engine_;
};

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_CPUDEVICE_H
