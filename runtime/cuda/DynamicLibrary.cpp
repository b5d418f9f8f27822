//===- DynamicLibrary.cpp - A shared library opened at run time -----------===//
#include "runtime/cuda/DynamicLibrary.h"

#include "runtime/core/Status.h"

#include <dlfcn.h>

namespace dlc::cuda {

DynamicLibrary::~DynamicLibrary() {
  if (handle_)
    dlclose(handle_);
}

dlc_status_t DynamicLibrary::open(const char *what,
                                  std::initializer_list<const char *> names) {
  what_ = what;
  std::string tried;
  for (const char *name : names) {
    // RTLD_LOCAL: two versions of a library in one process stay apart.
    // RTLD_NODELETE: cuBLASLt and cuDNN carry a static CUDA runtime whose
    // thread-local and exit hooks must not outlive its code, so a library
    // once opened stays mapped (a later session reopens it for free).
    handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle_) {
      soname_ = name;
      return nullptr;
    }
    const char *error = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (error ? error : name);
  }
  return makeStatus(DLC_UNAVAILABLE,
                    what_ + " cannot be loaded (" + tried + ")");
}

dlc_status_t DynamicLibrary::lookup(const char *name, void *&address) const {
  dlerror();
  address = handle_ ? dlsym(handle_, name) : nullptr;
  if (!address)
    return makeStatus(DLC_UNAVAILABLE, what_ + " (" + soname_ +
                                           ") has no symbol '" + name +
                                           "': it is older than dlc needs");
  return nullptr;
}

} // namespace dlc::cuda
