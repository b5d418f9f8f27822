//===- CudaDevice.cpp - The "cuda:N" device -------------------------------===//
#include "runtime/cuda/CudaDevice.h"

#include "runtime/core/Devices.h"
#include "runtime/core/Status.h"

namespace dlc::cuda {

dlc_status_t createCudaDevice(const std::string &spec, int ordinal,
                              std::shared_ptr<Device> &out) {
  std::shared_ptr<CudaDevice> device;
  DLC_RETURN_IF_ERROR(CudaDevice::open(spec, ordinal, device));
  out = std::move(device);
  return nullptr;
}

dlc_status_t CudaDevice::open(const std::string &spec, int ordinal,
                              std::shared_ptr<CudaDevice> &out) {
  const Driver *driver = nullptr;
  DLC_RETURN_IF_ERROR(
      prefixStatus(Driver::get(driver), "device '" + spec + "'"));
  int count = 0;
  DLC_RETURN_IF_ERROR(driver->check(driver->cuDeviceGetCount(&count),
                                    "device '" + spec + "': cuDeviceGetCount"));
  if (ordinal >= count)
    return makeStatus(DLC_UNAVAILABLE,
                      "device '" + spec + "': this machine has " +
                          std::to_string(count) + " CUDA device" +
                          (count == 1 ? "" : "s"));
  std::shared_ptr<CudaDevice> d(new CudaDevice());
  d->driver_ = driver;
  d->spec_ = spec;
  auto check = [&](CUresult result, const char *call) {
    return driver->check(result, "device '" + spec + "': " + call);
  };
  DLC_RETURN_IF_ERROR(
      check(driver->cuDeviceGet(&d->device_, ordinal), "cuDeviceGet"));
  char name[256] = {};
  DLC_RETURN_IF_ERROR(
      check(driver->cuDeviceGetName(name, sizeof(name) - 1, d->device_),
            "cuDeviceGetName"));
  d->name_ = name;
  auto attribute = [&](CUdevice_attribute which, int &value) {
    return check(driver->cuDeviceGetAttribute(&value, which, d->device_),
                 "cuDeviceGetAttribute");
  };
  DLC_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                d->architecture_.major));
  DLC_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                d->architecture_.minor));
  DLC_RETURN_IF_ERROR(
      check(driver->cuDevicePrimaryCtxRetain(&d->context_, d->device_),
            "cuDevicePrimaryCtxRetain"));
  DLC_RETURN_IF_ERROR(d->makeCurrent());
  out = std::move(d);
  return nullptr;
}

CudaDevice::~CudaDevice() {
  if (!context_)
    return;
  // Every session holds its device, so none is left: return the cached
  // memory before the context goes.
  StatusOwner current(makeCurrent());
  if (!current.get())
    allocator_.releaseCached();
  driver_->cuDevicePrimaryCtxRelease(device_);
}

dlc_status_t CudaDevice::makeCurrent() const {
  return driver_->check(driver_->cuCtxSetCurrent(context_),
                        "device '" + spec_ + "': cuCtxSetCurrent");
}

bool CudaDevice::DeviceMemory::allocate(size_t bytes, uint64_t &address) {
  CUdeviceptr pointer = 0;
  if (device_.driver().cuMemAlloc(&pointer, bytes) != CUDA_SUCCESS)
    return false;
  address = pointer;
  return true;
}

void CudaDevice::DeviceMemory::release(uint64_t address, size_t) {
  device_.driver().cuMemFree(static_cast<CUdeviceptr>(address));
}

} // namespace dlc::cuda
