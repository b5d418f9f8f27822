//===- KernelLibrary.h - A module's generated CPU kernels -------*- C++ -*-===//
//
// The module carries its kernels as the bytes of an ELF shared object. We
// load it without a file of our own: the bytes go to an anonymous memfd and
// dlopen opens "/proc/self/fd/N"; where memfd_create is unavailable they go
// to a mkstemp file instead. The descriptor (or file) lives as long as the
// library: glibc's dlopen first matches libraries by path, so a reused
// descriptor number (or file name) would otherwise hand a later module the
// earlier module's kernels.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_KERNELLIBRARY_H
#define DLC_RUNTIME_CPU_KERNELLIBRARY_H

#include "dlc/runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dlc::cpu {

/// The CPU kernel ABI (runtime/module/dlcm.fbs): iterations [begin, end).
using KernelFunction = void (*)(void *const *buffers, int64_t begin,
                                int64_t end);

class KernelLibrary {
public:
  /// Loads `size` bytes of a shared object; `what` names it in messages
  /// ("model.dlcm: cpu_shared_object"). Bytes that are no loadable ELF
  /// object are DLC_DATA_LOSS.
  static dlc_status_t load(const uint8_t *data, size_t size,
                           const std::string &what,
                           std::unique_ptr<KernelLibrary> &out);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary &) = delete;
  KernelLibrary &operator=(const KernelLibrary &) = delete;

  /// The kernel named `name`; a missing symbol is DLC_DATA_LOSS.
  dlc_status_t lookup(const std::string &name, KernelFunction &out) const;

private:
  KernelLibrary() = default;
  /// Writes the object to an anonymous or a temporary file and opens it.
  dlc_status_t open(const uint8_t *data, size_t size, bool anonymous);
  /// Closes the library and removes its file.
  void close();

  std::string what_;
  void *handle_ = nullptr;
  int fd_ = -1;
  /// What dlopen opened: symbols must come from this object.
  std::string path_;
  /// The mkstemp file of the fallback, removed with the library.
  std::string tempPath_;
};

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_KERNELLIBRARY_H
