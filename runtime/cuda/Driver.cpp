//===- Driver.cpp - The CUDA driver API, opened at run time ---------------===//
#include "runtime/cuda/Driver.h"

#include "runtime/core/Status.h"

#include <mutex>

namespace dlc::cuda {

dlc_status_t Driver::load() {
  DLC_RETURN_IF_ERROR(library_.open("the CUDA driver", {"libcuda.so.1"}));
  // The symbols bound below are those of the headers dlc was built with
  // (and the generated PTX is of that toolkit), so an older driver is
  // named as such rather than by the first symbol it lacks.
  DLC_RETURN_IF_ERROR(library_.bind(this->cuDriverGetVersion,
                                    DLC_SYMBOL_NAME(cuDriverGetVersion)));
  int version = 0;
  this->cuDriverGetVersion(&version);
  if (version < CUDA_VERSION) {
    auto text = [](int v) {
      return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
    };
    return makeStatus(DLC_UNAVAILABLE,
                      "the CUDA driver supports CUDA " + text(version) +
                          "; dlc was built for CUDA " + text(CUDA_VERSION) +
                          " and needs a driver for it or later");
  }
#define DLC_BIND_DRIVER_FUNCTION(name)                                         \
  DLC_RETURN_IF_ERROR(library_.bind(this->name, DLC_SYMBOL_NAME(name)));
  DLC_CUDA_DRIVER_FUNCTIONS(DLC_BIND_DRIVER_FUNCTION)
#undef DLC_BIND_DRIVER_FUNCTION
  // No device, or none this process may use, is a machine without a GPU
  // as far as dlc is concerned.
  if (CUresult result = this->cuInit(0)) {
    StatusOwner failure(check(result, "cuInit"));
    return makeStatus(DLC_UNAVAILABLE, dlc_status_message(failure.get()));
  }
  return nullptr;
}

dlc_status_t Driver::get(const Driver *&out) {
  // Opened once: a second dlopen would be cheap, but cuInit's failure (no
  // device, a driver older than the toolkit) is the same every time.
  static std::once_flag once;
  static Driver *driver = nullptr;
  static dlc_status_t failure = nullptr;
  std::call_once(once, [] {
    auto *d = new Driver();
    failure = d->load();
    if (failure)
      delete d;
    else
      driver = d;
  });
  out = driver;
  if (!failure)
    return nullptr;
  return makeStatus(dlc_status_code(failure), dlc_status_message(failure));
}

dlc_status_t Driver::check(CUresult result, const std::string &call) const {
  if (result == CUDA_SUCCESS)
    return nullptr;
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  std::string message = call + ": " + (name ? name : "CUDA error") + " (" +
                        std::to_string(static_cast<int>(result)) + ")";
  if (text)
    message += std::string(": ") + text;
  return makeStatus(result == CUDA_ERROR_OUT_OF_MEMORY ? DLC_RESOURCE_EXHAUSTED
                                                       : DLC_INTERNAL,
                    message);
}

} // namespace dlc::cuda
