//===- MappedFile.h - A whole file mapped read-only into memory -----------===//
//
// Datasets and checkpoints are read through a read-only mapping rather than
// copied: the page cache holds the bytes once, pages load on first touch,
// and a dataset larger than memory still works.
//
// A mapping has one hazard a read does not: if another process truncates
// the file, touching a page past the new end raises SIGBUS. checkSize lets a
// long-running reader notice a file that changed size before it touches it
// again.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_MAPPEDFILE_H
#define DLC_RUNTIME_SUPPORT_MAPPEDFILE_H

#include "runtime/support/Status.h"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

namespace dlc {

/// A read-only mapping of a whole regular file, unmapped on destruction.
class MappedFile {
public:
  /// Maps `path` into `out`. Fails with a message naming the file and the
  /// OS error when it cannot be opened or mapped: DLC_NOT_FOUND for a missing
  /// file, DLC_IO_ERROR for a directory or another failure.
  static dlc_status_t open(const std::string &path,
                           std::unique_ptr<MappedFile> &out);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const std::string &path() const { return path_; }
  /// The file's bytes; null when the file is empty.
  const std::byte *data() const { return data_; }
  size_t size() const { return size_; }

  /// Fails (DLC_DATA_LOSS) with a message naming the file when it no longer
  /// has the size it was mapped with (reading the mapping further could
  /// crash).
  dlc_status_t checkSize() const;

private:
  MappedFile(std::string path, int fd, const std::byte *data, size_t size)
      : path_(std::move(path)), fd_(fd), data_(data), size_(size) {}

  std::string path_;
  int fd_;
  const std::byte *data_;
  size_t size_;
};

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_MAPPEDFILE_H
