//===- CudaTestUtil.h - Sessions on cuda:0 and the fake driver --*- C++ -*-===//
//
// What the CUDA session tests share: opening a module on "cuda:0" (or
// skipping where no GPU can be opened), and, against the fake driver
// (fake_driver/), what it reports of the work the session asked for.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_TEST_CUDATESTUTIL_H
#define DLC_RUNTIME_CUDA_TEST_CUDATESTUTIL_H

#include "runtime/cuda/test/fake_driver/FakeDriver.h"
#include "runtime/test/ModuleBuilder.h"
#include "runtime/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cuda.h>
#include <dlfcn.h>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace dlc::test {

/// libcuda.so.1 if it is the fake driver, else null (a real driver, or
/// none).
inline void *fakeDriver() {
  static void *fake = [] {
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return library && dlsym(library, "dlc_fake_counters") ? library : nullptr;
  }();
  return fake;
}

/// The fake's function `name` (FakeDriver.h), of type `Fn`.
template <typename Fn> Fn fakeFunction(const char *name) {
  return reinterpret_cast<Fn>(dlsym(fakeDriver(), name));
}

/// What the fake driver counts, or nullopt against a real one.
inline std::optional<dlc_fake_counters_t> fakeCounters() {
  if (!fakeDriver())
    return std::nullopt;
  dlc_fake_counters_t counters;
  fakeFunction<decltype(&dlc_fake_counters)>("dlc_fake_counters")(&counters);
  return counters;
}

/// How the device ran what was asked since the last call (the fake
/// driver's counts), or nullopt against a real driver.
class Work {
public:
  Work() : last_(fakeCounters()) {}

  /// "K launches, C captures, G graph launches, R kernel runs".
  std::optional<std::string> next() {
    std::optional<dlc_fake_counters_t> now = fakeCounters();
    if (!now)
      return std::nullopt;
    auto since = [&](unsigned long long dlc_fake_counters_t::*count) {
      return std::to_string((*now).*count - (*last_).*count);
    };
    std::string work =
        since(&dlc_fake_counters_t::kernelLaunches) + " launches, " +
        since(&dlc_fake_counters_t::captures) + " captures, " +
        since(&dlc_fake_counters_t::graphLaunches) + " graph launches, " +
        since(&dlc_fake_counters_t::kernelRuns) + " kernel runs";
    last_ = now;
    return work;
  }

private:
  std::optional<dlc_fake_counters_t> last_;
};

/// The fake driver's trace since the last call, a line per piece of work
/// with its streams named A, B, ... in order of appearance (their numbers
/// depend on what ran before); nullopt against a real driver.
inline std::optional<std::vector<std::string>> takeTrace() {
  if (!fakeDriver())
    return std::nullopt;
  std::istringstream text(
      fakeFunction<decltype(&dlc_fake_trace)>("dlc_fake_trace")());
  std::map<std::string, std::string> names;
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) {
    std::istringstream words(line);
    std::string renamed;
    for (std::string word; words >> word;) {
      if (word.size() > 1 && word[0] == 's' && std::isdigit(word[1]))
        word = names.emplace(word, std::string(1, char('A' + names.size())))
                   .first->second;
      renamed += (renamed.empty() ? "" : " ") + word;
    }
    lines.push_back(renamed);
  }
  fakeFunction<decltype(&dlc_fake_clear_trace)>("dlc_fake_clear_trace")();
  return lines;
}

/// Makes the fake driver's next call of `symbol` fail with `error`.
inline void failNext(const char *symbol, CUresult error) {
  fakeFunction<decltype(&dlc_fake_fail)>("dlc_fake_fail")(symbol, error);
}

/// cuda:0, or null with `why` (the test skips) where it cannot be opened;
/// the fake driver always opens it.
inline DevicePtr openCuda(std::string &why) {
  DevicePtr device = openDevice("cuda:0", 0, why);
  EXPECT_TRUE(device || !fakeDriver())
      << "libcuda.so.1 is the fake driver, yet: " << why;
  return device;
}

struct Opened {
  ModulePtr module{nullptr, &dlc_module_release};
  DevicePtr device{nullptr, &dlc_device_release};
  SessionPtr session{nullptr, &dlc_session_release};
};

/// Opens `m` on cuda:0; false (the test skips) without a GPU.
inline bool open(const ModuleBuilder &m, Opened &o, std::string &why) {
  o.device = openCuda(why);
  if (!o.device)
    return false;
  Outcome r = loadModule(m.finish(), o.module);
  EXPECT_TRUE(r.ok()) << r.message;
  r = openSession(o.module.get(), o.device.get(), o.session);
  EXPECT_TRUE(r.ok()) << r.message;
  return r.ok();
}

} // namespace dlc::test

#endif // DLC_RUNTIME_CUDA_TEST_CUDATESTUTIL_H
