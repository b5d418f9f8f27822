//===- Device.cpp - dlc_device_* of the C API -----------------------------===//
//
// Parses a device spec: "cpu" is built in; "cuda" and "cuda:N" name a
// device this build cannot open yet; anything else is a caller's mistake.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Handles.h"
#include "runtime/core/Status.h"

#include <cctype>
#include <cstring>

using namespace dlc;

namespace {

/// More threads than any machine we run on has cores; a larger count is a
/// caller's mistake, not a request to oversubscribe a thousandfold.
constexpr int32_t kMaxThreads = 4096;

bool isCudaSpec(const std::string &spec) {
  if (spec == "cuda")
    return true;
  if (spec.rfind("cuda:", 0) != 0 || spec.size() == 5)
    return false;
  for (size_t i = 5; i < spec.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(spec[i])))
      return false;
  return true;
}

} // namespace

extern "C" {

dlc_status_t dlc_device_create(const char *spec, int32_t num_threads,
                               dlc_device_t **out) {
  return guardStatus("dlc_device_create", [&]() -> dlc_status_t {
    if (!spec || !out)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_device_create: no device spec or output");
    *out = nullptr;
    std::string s = spec;
    if (isCudaSpec(s))
      return makeStatus(DLC_UNAVAILABLE,
                        "device '" + s +
                            "': this build has no CUDA device support");
    if (s != "cpu")
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "unknown device '" + s +
                            "' (expected \"cpu\" or \"cuda:N\")");
    if (num_threads < 0 || num_threads > kMaxThreads)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "device 'cpu': " + std::to_string(num_threads) +
                            " threads (expected 0 for one per core, or 1 "
                            "to " +
                            std::to_string(kMaxThreads) + ")");
    int threads = num_threads ? num_threads : cpu::CpuDevice::availableCores();
    auto device = std::make_shared<cpu::CpuDevice>(threads);
    *out = new dlc_device_s{s, std::move(device)};
    return nullptr;
  });
}

void dlc_device_release(dlc_device_t *device) { delete device; }

} // extern "C"
