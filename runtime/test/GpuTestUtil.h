//===- GpuTestUtil.h - Device 0, a stream and buffers for Gpu* tests -*- C++
//-*-===//
//
// The Gpu* suites drive runtime/cuda directly through the driver: device
// 0's primary context made current, one stream, and device buffers freed
// when they go. Gpu::open says why it cannot open, so a test skips where
// there is no GPU.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_TEST_GPUTESTUTIL_H
#define DLC_RUNTIME_TEST_GPUTESTUTIL_H

#include "runtime/core/Status.h"
#include "runtime/cuda/Driver.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace dlc::test {

/// The message of `status` (freed), or "" for success.
inline std::string messageOf(dlc_status_t status) {
  StatusOwner owner(status);
  return status ? dlc_status_message(status) : "";
}

/// The current context on device 0 and a stream, or why there is none.
class Gpu {
public:
  /// False with `why` set where this machine has no usable GPU.
  bool open(std::string &why) {
    why = messageOf(cuda::Driver::get(driver_));
    if (!why.empty())
      return false;
    int count = 0;
    if (driver_->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
      why = "no CUDA device";
      return false;
    }
    why = messageOf(
        driver_->check(driver_->cuDeviceGet(&device_, 0), "cuDeviceGet"));
    if (why.empty())
      why = messageOf(
          driver_->check(driver_->cuDevicePrimaryCtxRetain(&context_, device_),
                         "cuDevicePrimaryCtxRetain"));
    if (why.empty())
      why = messageOf(driver_->check(driver_->cuCtxSetCurrent(context_),
                                     "cuCtxSetCurrent"));
    if (why.empty())
      why = messageOf(driver_->check(
          driver_->cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING),
          "cuStreamCreate"));
    return why.empty();
  }
  ~Gpu() {
    if (stream_)
      driver_->cuStreamDestroy(stream_);
    if (context_)
      driver_->cuDevicePrimaryCtxRelease(device_);
  }

  const cuda::Driver &driver() const { return *driver_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_; }

private:
  const cuda::Driver *driver_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
};

/// Device memory of `bytes`, freed when it goes.
class Buffer {
public:
  Buffer(const Gpu &gpu, size_t bytes) : gpu_(gpu), bytes_(bytes) {
    if (bytes > 0)
      EXPECT_EQ(gpu.driver().cuMemAlloc(&address_, bytes), CUDA_SUCCESS)
          << "cuMemAlloc of " << bytes << " bytes";
  }
  ~Buffer() {
    if (address_)
      gpu_.driver().cuMemFree(address_);
  }
  void *get() const { return reinterpret_cast<void *>(address_); }
  void upload(const void *host) const {
    EXPECT_EQ(
        gpu_.driver().cuMemcpyHtoDAsync(address_, host, bytes_, gpu_.stream()),
        CUDA_SUCCESS);
  }
  void download(void *host) const {
    EXPECT_EQ(
        gpu_.driver().cuMemcpyDtoHAsync(host, address_, bytes_, gpu_.stream()),
        CUDA_SUCCESS);
  }
  void clear(uint8_t byte) const {
    EXPECT_EQ(
        gpu_.driver().cuMemsetD8Async(address_, byte, bytes_, gpu_.stream()),
        CUDA_SUCCESS);
  }

private:
  const Gpu &gpu_;
  size_t bytes_;
  CUdeviceptr address_ = 0;
};

} // namespace dlc::test

#endif // DLC_RUNTIME_TEST_GPUTESTUTIL_H
