//===- TestUtil.h - Helpers shared by the runtime tests ---------*- C++ -*-===//
#ifndef DLC_RUNTIME_TEST_TESTUTIL_H
#define DLC_RUNTIME_TEST_TESTUTIL_H

#include "dlc/runtime.h"
#include "runtime/support/test/Outcome.h"
#include "runtime/test/ModuleBuilder.h"

#include <memory>
#include <string>
#include <vector>

namespace dlc::test {

using dlc::testing::Outcome;
using dlc::testing::outcome;

using ModulePtr = std::unique_ptr<dlc_module_t, void (*)(dlc_module_t *)>;
using DevicePtr = std::unique_ptr<dlc_device_t, void (*)(dlc_device_t *)>;
using SessionPtr = std::unique_ptr<dlc_session_t, void (*)(dlc_session_t *)>;

/// Loads `bytes` as a module named "test.dlcm".
inline Outcome loadModule(const std::vector<uint8_t> &bytes, ModulePtr &out) {
  dlc_module_t *m = nullptr;
  Outcome o = outcome(
      dlc_module_load_memory(bytes.data(), bytes.size(), "test.dlcm", &m));
  out = ModulePtr(m, &dlc_module_release);
  return o;
}

inline DevicePtr cpuDevice(int32_t threads) {
  dlc_device_t *d = nullptr;
  dlc_status_free(dlc_device_create("cpu", threads, &d));
  return DevicePtr(d, &dlc_device_release);
}

/// Device `spec` ("cpu" with `threads`, "cuda:0"), or null with `why`
/// set when it cannot be opened here (no GPU): the test then skips.
inline DevicePtr openDevice(const std::string &spec, int32_t threads,
                            std::string &why) {
  dlc_device_t *d = nullptr;
  Outcome o = outcome(dlc_device_create(spec.c_str(), threads, &d));
  why = o.message;
  return DevicePtr(d, &dlc_device_release);
}

/// The module target a device spec needs.
inline const char *targetOf(const std::string &spec) {
  return spec.rfind("cuda", 0) == 0 ? "cuda" : "cpu";
}

inline Outcome openSession(dlc_module_t *module, dlc_device_t *device,
                           SessionPtr &out) {
  dlc_session_t *s = nullptr;
  Outcome o = outcome(dlc_session_create(module, device, &s));
  out = SessionPtr(s, &dlc_session_release);
  return o;
}

/// A caller's tensor: shape and data owned together, so a view of it
/// never outlives either.
template <typename T> struct HostTensor {
  HostTensor(dlc_dtype_t dtype, std::vector<int64_t> shape, T fill = T())
      : dtype(dtype), shape(std::move(shape)) {
    int64_t n = 1;
    for (int64_t d : this->shape)
      n *= d;
    data.assign(static_cast<size_t>(n), fill);
  }
  dlc_tensor_t view() {
    return dlc_tensor_t{dtype, static_cast<int32_t>(shape.size()), shape.data(),
                        data.data()};
  }

  dlc_dtype_t dtype;
  std::vector<int64_t> shape;
  std::vector<T> data;
};

} // namespace dlc::test

#endif // DLC_RUNTIME_TEST_TESTUTIL_H
