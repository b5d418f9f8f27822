//===- MetricsLog.h - The --log file: JSON lines, only appended -*- C++ -*-===//
//
// The log is only ever appended to, one whole line per write, so nothing a
// previous run wrote is lost, a resumed run continues the log of the run it
// resumes, and a reader (tail -f, a plotting script) never sees half a
// record.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_METRICSLOG_H
#define DLC_TOOLS_RUNNER_METRICSLOG_H

#include <cstddef>
#include <string>

namespace dlc::runner {

/// Writes all `size` bytes of `data` to `fd`, finishing short writes and
/// retrying interrupted ones. Returns 0, or the errno of the failure
/// (ENOSPC for a write that made no progress).
int writeFully(int fd, const char *data, size_t size);

class MetricsLog {
public:
  /// No log: append() does nothing.
  MetricsLog() = default;
  /// Opens (creating if needed) `path` for appending. Throws on failure.
  explicit MetricsLog(const std::string &path);
  ~MetricsLog();
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;

  /// Appends `record` and a newline in one write. Throws on failure.
  void append(const std::string &record);

private:
  std::string path_;
  int fd_ = -1;
};

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_METRICSLOG_H
