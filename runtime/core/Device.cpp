//===- Device.cpp - dlc_device_* of the C API -----------------------------===//
//
// The device kinds (Devices.h): "cpu", or "cuda" / "cuda:N" (device 0 / N),
// which cuda/ opens; any other spec is a caller's mistake.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Handles.h"
#include "runtime/core/Status.h"
#include "runtime/cpu/CpuDevice.h"

#include <algorithm>
#include <cctype>
#include <cstring>

using namespace dlc;

namespace {

/// More threads than any machine we run on has cores; a larger count is a
/// caller's mistake, not a request to oversubscribe a thousandfold.
constexpr int32_t kMaxThreads = 4096;

/// More GPUs than any machine has; a larger number is a caller's mistake.
constexpr int kMaxCudaOrdinal = 9999;

/// The device number of a "cuda" or "cuda:N" spec (N may be out of range),
/// or -1 for any other spec.
int64_t cudaOrdinal(const std::string &spec) {
  if (spec == "cuda")
    return 0;
  if (spec.rfind("cuda:", 0) != 0 || spec.size() == 5)
    return -1;
  int64_t n = 0;
  for (size_t i = 5; i < spec.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(spec[i])))
      return -1;
    n = std::min<int64_t>(n * 10 + (spec[i] - '0'), kMaxCudaOrdinal + 1);
  }
  return n;
}

dlc_status_t openCpu(const std::string &spec, int32_t numThreads,
                     std::shared_ptr<Device> &out) {
  if (numThreads < 0 || numThreads > kMaxThreads)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "device 'cpu': " + std::to_string(numThreads) +
                          " threads (expected 0 for the default, or 1 to " +
                          std::to_string(kMaxThreads) + ")");
  int threads = numThreads ? numThreads : cpu::CpuDevice::defaultThreads();
  out = std::make_shared<cpu::CpuDevice>(threads);
  return nullptr;
}

dlc_status_t openCuda(const std::string &spec, int32_t,
                      std::shared_ptr<Device> &out) {
  int64_t ordinal = cudaOrdinal(spec);
  if (ordinal > kMaxCudaOrdinal)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "device '" + spec + "': device number out of range");
  return cuda::createCudaDevice(spec, static_cast<int>(ordinal), out);
}

} // namespace

const std::vector<DeviceKind> &dlc::deviceKinds() {
  static const std::vector<DeviceKind> kinds = {
      {"\"cpu\"", [](const std::string &spec) { return spec == "cpu"; },
       openCpu},
      {"\"cuda:N\"",
       [](const std::string &spec) { return cudaOrdinal(spec) >= 0; },
       openCuda},
  };
  return kinds;
}

extern "C" {

dlc_status_t dlc_device_create(const char *spec, int32_t num_threads,
                               dlc_device_t **out) {
  return guardStatus("dlc_device_create", [&]() -> dlc_status_t {
    if (!spec || !out)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_device_create: no device spec or output");
    *out = nullptr;
    std::string s = spec;
    std::string expected;
    for (const DeviceKind &kind : deviceKinds()) {
      if (kind.claims(s)) {
        std::shared_ptr<Device> device;
        DLC_RETURN_IF_ERROR(kind.open(s, num_threads, device));
        *out = new dlc_device_s{s, std::move(device)};
        return nullptr;
      }
      expected += (expected.empty() ? "" : " or ") + std::string(kind.syntax);
    }
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "unknown device '" + s + "' (expected " + expected + ")");
  });
}

void dlc_device_release(dlc_device_t *device) { delete device; }

} // extern "C"
