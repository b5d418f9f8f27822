//===- DynamicLibrary.h - A shared library opened at run time ---*- C++ -*-===//
//
// The CUDA driver, cuBLASLt and cuDNN are opened with dlopen rather than
// linked, so that one binary starts, and trains on the CPU, on a machine
// without them (ENVIRONMENT.md: linking the driver stub makes a binary fail
// to start where no driver is installed). Their headers give the types;
// this class gives the symbols.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DYNAMICLIBRARY_H
#define DLC_RUNTIME_CUDA_DYNAMICLIBRARY_H

#include "dlc/runtime.h"

#include <initializer_list>
#include <string>

namespace dlc::cuda {

/// A class that calls a library lists its functions once, as an X-macro
/// (Driver.h's DLC_CUDA_DRIVER_FUNCTIONS), and expands the list into
/// members named like the functions, each of its function's pointer type
/// and null until bound ...
#define DLC_DECLARE_LIBRARY_FUNCTION(name) decltype(&::name) name = nullptr;
/// ... and into one bind() per function, of the symbol `name` stands for
/// after the header's versioning macros (cuda.h's cuMemAlloc is
/// cuMemAlloc_v2).
#define DLC_SYMBOL_NAME(name) DLC_SYMBOL_NAME_EXPANDED(name)
#define DLC_SYMBOL_NAME_EXPANDED(name) #name

class DynamicLibrary {
public:
  DynamicLibrary() = default;
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary &) = delete;
  DynamicLibrary &operator=(const DynamicLibrary &) = delete;

  /// Opens the first of `names` (sonames, tried in order) that loads;
  /// `what` names the library in messages ("the CUDA driver"). If none
  /// loads, DLC_UNAVAILABLE naming every soname tried and dlerror's text.
  dlc_status_t open(const char *what,
                    std::initializer_list<const char *> names);

  /// Sets `fn` to the symbol `name`; a missing symbol is DLC_UNAVAILABLE
  /// naming the library and the symbol (an older version than we need).
  template <typename Fn> dlc_status_t bind(Fn &fn, const char *name) const {
    void *address = nullptr;
    dlc_status_t status = lookup(name, address);
    fn = reinterpret_cast<Fn>(address);
    return status;
  }

private:
  dlc_status_t lookup(const char *name, void *&address) const;

  void *handle_ = nullptr;
  std::string what_;
  std::string soname_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DYNAMICLIBRARY_H
