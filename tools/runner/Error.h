//===- Error.h - The runner's own errors ------------------------*- C++ -*-===//
//
// The runner reports every failure as one line and exit code 1. Its code
// throws: runtime calls throw dlc::rt::Error (runtime.hpp), the runner's
// own checks throw this, and runner::main catches both at its boundary.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_ERROR_H
#define DLC_TOOLS_RUNNER_ERROR_H

#include <stdexcept>
#include <string>

namespace dlc::runner {

/// A bad command line, data file, checkpoint or module for the runner;
/// the message is one line naming the cause.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_ERROR_H
