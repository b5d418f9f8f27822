//===- Devices.h - The devices a runtime build has --------------*- C++ -*-===//
//
// The C API's device and session calls dispatch here. The CPU device is
// always built; the CUDA device is built when the CUDA toolkit's headers
// were found (DLC_HAVE_CUDA), and otherwise these functions say that the
// build has none. Either way no CUDA library is linked: cuda/ opens them
// at run time.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_DEVICES_H
#define DLC_RUNTIME_CORE_DEVICES_H

#include "dlc/runtime.h"
#include "runtime/core/Session.h"

#include <memory>
#include <string>

namespace dlc {
class ModuleFile;
namespace cpu {
class CpuDevice;
/// Opens `module` on a CPU device (cpu/CpuSession.cpp).
dlc_status_t createCpuSession(std::shared_ptr<const ModuleFile> module,
                              std::shared_ptr<CpuDevice> device,
                              const std::string &deviceSpec,
                              std::unique_ptr<Session> &out);
} // namespace cpu
namespace cuda {
class CudaDevice;
/// Opens CUDA device `ordinal` ("cuda:N"); DLC_UNAVAILABLE where there is
/// no driver, no such device, or no CUDA support in this build.
dlc_status_t createCudaDevice(const std::string &spec, int ordinal,
                              std::shared_ptr<CudaDevice> &out);
/// Opens `module` on a CUDA device (cuda/CudaSession.cpp).
dlc_status_t createCudaSession(std::shared_ptr<const ModuleFile> module,
                               std::shared_ptr<CudaDevice> device,
                               const std::string &deviceSpec,
                               std::unique_ptr<Session> &out);
} // namespace cuda
} // namespace dlc

#endif // DLC_RUNTIME_CORE_DEVICES_H
