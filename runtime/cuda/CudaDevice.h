//===- CudaDevice.h - The "cuda:N" device -----------------------*- C++ -*-===//
//
// One GPU: the driver's primary context on it (shared with any other CUDA
// code in the process, as the CUDA runtime API inside cuBLASLt and cuDNN
// shares it), its properties, and the caching allocator all its sessions
// take memory from. The libraries' handles belong to sessions (cuDNN's
// carries a stream, so one handle per session keeps sessions on different
// threads apart).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_CUDADEVICE_H
#define DLC_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/core/Devices.h"
#include "runtime/cuda/CachingAllocator.h"
#include "runtime/cuda/Driver.h"
#include "runtime/cuda/LaunchPlan.h"

#include <memory>
#include <string>

namespace dlc::cuda {

class CudaDevice : public Device {
public:
  /// Opens device `ordinal`; `spec` ("cuda:1") names it in messages.
  static dlc_status_t open(const std::string &spec, int ordinal,
                           std::shared_ptr<CudaDevice> &out);
  ~CudaDevice() override;
  const char *target() const override { return "cuda"; }
  dlc_status_t createSession(std::shared_ptr<const ModuleFile> module,
                             const std::string &spec,
                             std::unique_ptr<Session> &out) override;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  const Driver &driver() const { return *driver_; }
  const std::string &spec() const { return spec_; }
  /// "NVIDIA H200".
  const std::string &name() const { return name_; }
  Architecture architecture() const { return architecture_; }
  /// The device's primary context, retained for the device's life.
  CUcontext context() const { return context_; }

  /// Makes the device's context current on the calling thread: every
  /// entry point that calls the driver does this first, since the thread
  /// that calls a session need not be the one that opened it.
  dlc_status_t makeCurrent() const;

  CachingAllocator &allocator() { return allocator_; }

private:
  /// Device memory by cuMemAlloc, for the caching allocator.
  class DeviceMemory final : public SegmentSource {
  public:
    explicit DeviceMemory(const CudaDevice &device) : device_(device) {}
    bool allocate(size_t bytes, uint64_t &address) override;
    void release(uint64_t address, size_t bytes) override;

  private:
    const CudaDevice &device_;
  };

  CudaDevice() : memory_(*this), allocator_(memory_) {}

  const Driver *driver_ = nullptr;
  std::string spec_;
  std::string name_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  Architecture architecture_;
  DeviceMemory memory_;
  CachingAllocator allocator_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_CUDADEVICE_H
