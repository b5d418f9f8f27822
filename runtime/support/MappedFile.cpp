//===- MappedFile.cpp - A whole file mapped read-only into memory ---------===//
//
// open + fstat + mmap. The descriptor stays open for checkSize, which asks
// the file itself (not its path, which may since name another file).
//
// Under AddressSanitizer the rest of the mapping's last page is poisoned: a
// reader that runs past the end of the file is then reported, where it
// would otherwise read zeros unnoticed (fuzz/ relies on this). Without the
// sanitizer the poisoning macros do nothing.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/MappedFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sanitizer/asan_interface.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dlc {

namespace {

dlc_status_t fail(dlc_status_code_t code, const std::string &path,
                  const std::string &reason) {
  return makeStatus(code, path + ": " + reason);
}

/// A failed system call, named by `what` ("cannot open"), and its errno.
dlc_status_t failErrno(const std::string &path, const char *what) {
  int e = errno;
  return fail(errnoStatusCode(e), path,
              std::string(what) + ": " + std::strerror(e));
}

/// The bytes from the end of a `size`-byte file's mapping to the end of its
/// last page.
size_t pageTail(size_t size) {
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (page - size % page) % page;
}

} // namespace

dlc_status_t MappedFile::open(const std::string &path,
                              std::unique_ptr<MappedFile> &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return failErrno(path, "cannot open");
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    dlc_status_t status = failErrno(path, "cannot stat");
    ::close(fd);
    return status;
  }
  // A directory or a device is not a file to map: an I/O error, as the
  // module loader reports it.
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return fail(DLC_IO_ERROR, path,
                S_ISDIR(info.st_mode) ? "is a directory"
                                      : "is not a regular file");
  }
  size_t size = static_cast<size_t>(info.st_size);
  // mmap refuses a zero length; an empty file is simply no bytes.
  const std::byte *data = nullptr;
  if (size > 0) {
    void *mapping = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (mapping == MAP_FAILED) {
      dlc_status_t status = failErrno(path, "cannot map");
      ::close(fd);
      return status;
    }
    data = static_cast<const std::byte *>(mapping);
    ASAN_POISON_MEMORY_REGION(data + size, pageTail(size));
  }
  out.reset(new MappedFile(path, fd, data, size));
  return nullptr;
}

MappedFile::~MappedFile() {
  if (data_) {
    ASAN_UNPOISON_MEMORY_REGION(data_ + size_, pageTail(size_));
    ::munmap(const_cast<std::byte *>(data_), size_);
  }
  ::close(fd_);
}

dlc_status_t MappedFile::checkSize() const {
  struct stat info;
  if (::fstat(fd_, &info) != 0)
    return failErrno(path_, "cannot stat");
  if (static_cast<size_t>(info.st_size) != size_)
    return fail(DLC_DATA_LOSS, path_,
                "changed size while in use (" + std::to_string(size_) +
                    " bytes when opened, " + std::to_string(info.st_size) +
                    " now)");
  return nullptr;
}

} // namespace dlc
