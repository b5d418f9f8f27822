//===- KernelLibrary.cpp - A module's generated CPU kernels ---------------===//
#include "runtime/cpu/KernelLibrary.h"

#include "runtime/core/Status.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace dlc::cpu {
namespace {

bool writeAll(int fd, const uint8_t *data, size_t size) {
  while (size) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

dlc_status_t KernelLibrary::load(const uint8_t *data, size_t size,
                                 const std::string &what,
                                 std::unique_ptr<KernelLibrary> &out) {
  static const uint8_t kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (!data || size < sizeof(kElfMagic) ||
      std::memcmp(data, kElfMagic, sizeof(kElfMagic)) != 0)
    return makeStatus(DLC_DATA_LOSS, what + ": not an ELF shared object");
  std::unique_ptr<KernelLibrary> library(new KernelLibrary());
  library->what_ = what;
  // An anonymous file first; a temporary file where memfd_create or /proc
  // is unavailable (old kernels, sandboxes).
  if (dlc_status_t status = library->open(data, size, true)) {
    dlc_status_free(status);
    library->close();
    DLC_RETURN_IF_ERROR(library->open(data, size, false));
  }
  out = std::move(library);
  return nullptr;
}

dlc_status_t KernelLibrary::open(const uint8_t *data, size_t size,
                                 bool anonymous) {
  if (anonymous) {
    fd_ = ::memfd_create("dlc-kernels", MFD_CLOEXEC);
    if (fd_ < 0)
      return makeStatus(DLC_IO_ERROR, what_ + ": memfd_create failed: " +
                                          std::strerror(errno));
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  } else {
    const char *dir = std::getenv("TMPDIR");
    std::string pattern =
        std::string(dir && *dir ? dir : "/tmp") + "/dlc-kernels-XXXXXX";
    fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd_ < 0)
      return makeStatus(DLC_IO_ERROR, what_ +
                                          ": cannot create a file for the "
                                          "kernels: " +
                                          std::strerror(errno));
    path_ = tempPath_ = pattern;
  }
  if (!writeAll(fd_, data, size))
    return makeStatus(DLC_IO_ERROR, what_ + ": cannot write the kernels to " +
                                        path_ + ": " + std::strerror(errno));
  ::dlerror();
  handle_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char *error = ::dlerror();
    return makeStatus(DLC_DATA_LOSS, what_ + ": cannot load the kernels: " +
                                         (error ? error : "dlopen failed"));
  }
  return nullptr;
}

void KernelLibrary::close() {
  if (handle_)
    ::dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
  if (!tempPath_.empty())
    ::unlink(tempPath_.c_str());
  handle_ = nullptr;
  fd_ = -1;
  path_.clear();
  tempPath_.clear();
}

KernelLibrary::~KernelLibrary() { close(); }

dlc_status_t KernelLibrary::lookup(const std::string &name,
                                   KernelFunction &out) const {
  ::dlerror();
  void *symbol = ::dlsym(handle_, name.c_str());
  if (!symbol)
    return makeStatus(DLC_DATA_LOSS,
                      what_ + ": the kernels have no symbol '" + name + "'");
  // dlsym also searches the object's dependencies (libc, libm): a kernel
  // name that only they define is still a missing kernel.
  Dl_info info;
  if (!::dladdr(symbol, &info) || !info.dli_fname || path_ != info.dli_fname)
    return makeStatus(DLC_DATA_LOSS, what_ + ": the kernels have no symbol '" +
                                         name + "' of their own");
  out = reinterpret_cast<KernelFunction>(symbol);
  return nullptr;
}

} // namespace dlc::cpu
