//===- HostCompiler.h - CPU kernels through the host C++ compiler -*- C++
//-*-===//
//
// CPU kernels are C++ compiled by the machine's C++ compiler (g++ or clang++)
// into a shared object, which the module embeds and the runtime dlopens.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_HOSTCOMPILER_H
#define DLC_CODEGEN_HOSTCOMPILER_H

#include <optional>
#include <string>

namespace mlir::dlc::codegen {

/// Compiles `source` with `compiler` (a name on PATH or a path) for the CPU
/// `cpu` (a -march value: "native", "x86-64-v3"...) and returns the shared
/// object's bytes, or sets `error` to one line with the compiler's first
/// complaint.
std::optional<std::string> compileSharedObject(const std::string &source,
                                               const std::string &compiler,
                                               const std::string &cpu,
                                               std::string &error);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_HOSTCOMPILER_H
