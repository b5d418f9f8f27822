//===- DeviceResources.h - Owners of driver objects -------------*- C++ -*-===//
//
// Move-only owners of what a session takes from the driver, each released
// in its destructor: device memory from the caching allocator, pinned host
// memory, streams, events, and the loaded kernel module.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DEVICERESOURCES_H
#define DLC_RUNTIME_CUDA_DEVICERESOURCES_H

#include "runtime/cuda/CudaDevice.h"
#include "runtime/module/ModuleFile.h"

#include <string>
#include <utility>
#include <vector>

namespace dlc::cuda {

/// A block of the device's caching allocator.
class DeviceBlock {
public:
  DeviceBlock() = default;
  ~DeviceBlock() { reset(); }
  DeviceBlock(DeviceBlock &&other) noexcept { *this = std::move(other); }
  DeviceBlock &operator=(DeviceBlock &&other) noexcept;

  /// Takes `bytes` from `device`'s allocator; `what` names it in the
  /// out-of-memory message.
  dlc_status_t allocate(CudaDevice &device, uint64_t bytes,
                        const std::string &what);
  CUdeviceptr address() const { return address_; }
  void reset();

private:
  CudaDevice *device_ = nullptr;
  uint64_t address_ = 0;
};

/// A driver object: its handle and the driver that made it, which
/// releases it with `Release` (a Driver member: &Driver::cuStreamDestroy).
/// The subclasses make the handle and name the accessor that hands it out.
template <typename Handle, auto Release> class DriverObject {
public:
  DriverObject() = default;
  ~DriverObject() { reset(); }
  DriverObject(DriverObject &&other) noexcept { *this = std::move(other); }
  DriverObject &operator=(DriverObject &&other) noexcept {
    if (this != &other) {
      reset();
      driver_ = std::exchange(other.driver_, nullptr);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  void reset() {
    if (handle_)
      (driver_->*Release)(handle_);
    handle_ = nullptr;
  }

protected:
  const Driver *driver_ = nullptr;
  Handle handle_ = nullptr;
};

/// Page-locked host memory (cuMemHostAlloc), which copies to and from the
/// device read directly and asynchronously.
class PinnedBuffer : public DriverObject<std::byte *, &Driver::cuMemFreeHost> {
public:
  dlc_status_t allocate(const Driver &driver, size_t bytes);
  std::byte *data() const { return handle_; }
};

class Stream : public DriverObject<CUstream, &Driver::cuStreamDestroy> {
public:
  /// A stream that does not synchronize with the legacy default stream.
  dlc_status_t create(const Driver &driver);
  CUstream get() const { return handle_; }
};

class Event : public DriverObject<CUevent, &Driver::cuEventDestroy> {
public:
  /// `timing` events measure elapsed time (profiling); the others only
  /// order work between streams, which is cheaper.
  dlc_status_t create(const Driver &driver, bool timing);
  CUevent get() const { return handle_; }
};

/// A module's generated kernels loaded on a device: the image chosen for
/// its compute capability (LaunchPlan.h), each kernel's function, and the
/// block size the occupancy calculator gives it. Privately a DriverObject:
/// the module is unloaded with it, never alone under its functions.
class KernelModule : private DriverObject<CUmodule, &Driver::cuModuleUnload> {
public:
  /// Loads the kernels of `module` (by the order of its kernel table).
  dlc_status_t load(const CudaDevice &device, const ModuleFile &module);

  struct Kernel {
    CUfunction function = nullptr;
    /// Threads per block (a multiple of 32) and how many such blocks the
    /// whole device keeps resident at full occupancy.
    int blockSize = 0;
    int residentBlocks = 0;
  };
  const std::vector<Kernel> &kernels() const { return kernels_; }

private:
  std::vector<Kernel> kernels_;
  std::string image_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DEVICERESOURCES_H
