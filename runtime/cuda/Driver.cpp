//===- Driver.cpp - The CUDA driver API, opened at run time ---------------===//
#include "runtime/cuda/Driver.h"

#include "runtime/core/Status.h"

#include <mutex>

namespace dlc::cuda {

/// The symbol a cuda.h name stands for after its versioning macros.
#define DLC_SYMBOL_NAME(name) DLC_SYMBOL_NAME_EXPANDED(name)
#define DLC_SYMBOL_NAME_EXPANDED(name) #name

dlc_status_t Driver::load() {
  DLC_RETURN_IF_ERROR(library_.open("the CUDA driver", {"libcuda.so.1"}));
#define DLC_BIND_DRIVER_FUNCTION(name)                                         \
  DLC_RETURN_IF_ERROR(library_.bind(this->name, DLC_SYMBOL_NAME(name)));
  DLC_CUDA_DRIVER_FUNCTIONS(DLC_BIND_DRIVER_FUNCTION)
#undef DLC_BIND_DRIVER_FUNCTION
  return check(this->cuInit(0), "cuInit");
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
