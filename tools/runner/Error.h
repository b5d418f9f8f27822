//===- Error.h - The runner's own errors ------------------------*- C++ -*-===//
//
// The runner reports every failure as one line and exit code 1. Its code
// throws: runtime calls throw dlc::rt::Error (runtime.hpp), the runner's
// own checks and the support library's failures (data files, checkpoints)
// throw this, and runner::main catches both at its boundary.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_ERROR_H
#define DLC_TOOLS_RUNNER_ERROR_H

#include "runtime/support/Status.h"

#include <stdexcept>
#include <string>

namespace dlc::runner {

/// A bad command line, data file, checkpoint or module for the runner;
/// the message is one line naming the cause.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Throws an Error of `prefix` followed by the message of `status` (which it
/// frees) when `status` is an error.
inline void throwIfError(dlc_status_t status, const std::string &prefix = "") {
  StatusOwner owner(status);
  if (status)
    throw Error(prefix + dlc_status_message(status));
}

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_ERROR_H
