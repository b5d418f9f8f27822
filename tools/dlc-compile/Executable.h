//===- Executable.h - Training binaries from a compiled module --*- C++ -*-===//
#ifndef DLC_TOOLS_DLC_COMPILE_EXECUTABLE_H
#define DLC_TOOLS_DLC_COMPILE_EXECUTABLE_H

#include <optional>
#include <string>

namespace mlir::dlc::tools {

/// The bytes of a training binary: the runner (dlc-runner, installed next
/// to dlc-compile, whose path is found from `argv0`) with `module`
/// embedded (runtime/module/Embedded.h).
std::optional<std::string> buildExecutable(const char *argv0,
                                           const std::string &module,
                                           std::string &error);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_DLC_COMPILE_EXECUTABLE_H
