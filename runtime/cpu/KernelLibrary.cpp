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
  std::string path;
  int fd = ::memfd_create("dlc-kernels", MFD_CLOEXEC);
  if (fd >= 0) {
    path = "/proc/self/fd/" + std::to_string(fd);
  } else {
    const char *dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") +
                          "/dlc-kernels-XXXXXX";
    fd = ::mkostemp(pattern.data(), O_CLOEXEC);
    if (fd < 0)
      return makeStatus(DLC_IO_ERROR, what +
                                          ": cannot create a file for the "
                                          "kernels: " +
                                          std::strerror(errno));
    path = pattern;
    library->tempPath_ = pattern;
  }
  library->fd_ = fd;
  library->path_ = path;
  if (!writeAll(fd, data, size))
    return makeStatus(DLC_IO_ERROR, what + ": cannot write the kernels to " +
                                        path + ": " + std::strerror(errno));
  ::dlerror();
  library->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library->handle_) {
    const char *error = ::dlerror();
    return makeStatus(DLC_DATA_LOSS, what + ": cannot load the kernels: " +
                                         (error ? error : "dlopen failed"));
  }
  out = std::move(library);
  return nullptr;
}

KernelLibrary::~KernelLibrary() {
  if (handle_)
    ::dlclose(handle_);
  if (fd_ >= 0)
    ::close(fd_);
  if (!tempPath_.empty())
    ::unlink(tempPath_.c_str());
}

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
