//===- Driver.h - The CUDA driver API, opened at run time -------*- C++ -*-===//
//
// dlc talks to the GPU through the driver API (cuModuleLoadData, cuLaunch-
// Kernel, CUDA graphs) rather than the runtime API: modules carry cubin and
// PTX, not fat binaries registered at start-up, and the driver is the one
// library every CUDA machine has. It is opened with dlopen (libcuda.so.1)
// so that binaries start on machines without it; cuda.h provides the types
// and, through its versioning macros, the exact symbol each name binds to
// (cuMemAlloc is cuMemAlloc_v2).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DRIVER_H
#define DLC_RUNTIME_CUDA_DRIVER_H

#include "runtime/cuda/DynamicLibrary.h"

#include <cuda.h>

#include <memory>
#include <string>

namespace dlc::cuda {

/// The driver entry points dlc calls, as members named like the API.
#define DLC_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuMemGetInfo)                                                              \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuOccupancyMaxPotentialBlockSize)                                          \
  X(cuLaunchKernel)                                                            \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemHostAlloc)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemsetD8Async)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)

class Driver {
public:
  /// The process's driver, opened and cuInit-ed on first use; a machine
  /// without one gives DLC_UNAVAILABLE (every later call the same status).
  static dlc_status_t get(const Driver *&out);

  /// NULL for CUDA_SUCCESS, else a status naming `call`, the error's name
  /// and text: "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
  /// Out-of-memory errors are DLC_RESOURCE_EXHAUSTED, the rest DLC_INTERNAL.
  dlc_status_t check(CUresult result, const std::string &call) const;

  DLC_CUDA_DRIVER_FUNCTIONS(DLC_DECLARE_LIBRARY_FUNCTION)

private:
  Driver() = default;
  dlc_status_t load();

  DynamicLibrary library_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DRIVER_H
