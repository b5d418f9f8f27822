//===- Devices.h - The devices a runtime build has --------------*- C++ -*-===//
//
// The C API's device and session calls see devices through one interface:
// a Device opens sessions, and each kind of device (the CPU; CUDA when the
// toolkit's headers were found, DLC_HAVE_CUDA; communicator-backed devices
// next) is one row of deviceKinds(), which says which specs it answers to
// and opens one. No CUDA library is linked either way: cuda/ opens them at
// run time, and a build without CUDA says why "cuda:N" cannot be opened.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_DEVICES_H
#define DLC_RUNTIME_CORE_DEVICES_H

#include "dlc/runtime.h"
#include "runtime/core/Session.h"

#include <memory>
#include <string>
#include <vector>

namespace dlc {
class ModuleFile;

/// A device sessions run on (dlc_device_t).
class Device : public std::enable_shared_from_this<Device> {
public:
  virtual ~Device() = default;
  /// The target of the modules this device runs ("cpu", "cuda": what
  /// dlc-compile --target names).
  virtual const char *target() const = 0;
  /// Opens `module`, compiled for target(), on this device, which `spec`
  /// names in messages.
  virtual dlc_status_t createSession(std::shared_ptr<const ModuleFile> module,
                                     const std::string &spec,
                                     std::unique_ptr<Session> &out) = 0;
};

/// A kind of device: the specs it answers to and how one is opened.
struct DeviceKind {
  /// Its specs as dlc_device_create's error lists them ("\"cpu\"").
  const char *syntax;
  /// Whether `spec` is one of this kind's (its number may be out of range).
  bool (*claims)(const std::string &spec);
  /// Opens the device `spec` names, with `numThreads` host threads where
  /// the kind has them (0: the default, CpuDevice::defaultThreads).
  dlc_status_t (*open)(const std::string &spec, int32_t numThreads,
                       std::shared_ptr<Device> &out);
};

/// The device kinds of this build, in the order specs are matched.
const std::vector<DeviceKind> &deviceKinds();

namespace cuda {
/// Opens CUDA device `ordinal` ("cuda:N"); DLC_UNAVAILABLE where there is
/// no driver, no such device, or no CUDA support in this build.
dlc_status_t createCudaDevice(const std::string &spec, int ordinal,
                              std::shared_ptr<Device> &out);
} // namespace cuda
} // namespace dlc

#endif // DLC_RUNTIME_CORE_DEVICES_H
