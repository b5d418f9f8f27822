//===- MetricsLog.cpp - The --log file: JSON lines, only appended ---------===//
#include "tools/runner/MetricsLog.h"

#include "tools/runner/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace dlc::runner {

MetricsLog::MetricsLog(const std::string &path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error(path + ": cannot open the log: " + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (fd_ >= 0)
    ::close(fd_);
}

int writeFully(int fd, const char *data, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : ENOSPC;
    done += static_cast<size_t>(n);
  }
  return 0;
}

void MetricsLog::append(const std::string &record) {
  if (fd_ < 0)
    return;
  std::string line = record + "\n";
  // O_APPEND writes of a regular file go in one piece unless the disk is
  // full or a signal interrupts them; a short write is finished, not lost.
  if (int error = writeFully(fd_, line.data(), line.size()))
    throw Error(path_ + ": cannot append to the log: " + std::strerror(error));
}

} // namespace dlc::runner
