//===- HostCompiler.cpp - CPU kernels through the host C++ compiler -------===//
//
// Flags: -O3 to vectorize the innermost loops, -fno-math-errno so sqrt and
// friends vectorize too, -fwrapv because dlc's integers wrap, and never
// -ffast-math, which would break NaN propagation and the evaluator's
// numerics.
//
//===----------------------------------------------------------------------===//

#include "codegen/HostCompiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

/// Removes a directory tree when it goes out of scope.
struct TemporaryDirectory {
  SmallString<128> path;
  ~TemporaryDirectory() {
    if (!path.empty())
      sys::fs::remove_directories(path);
  }
};

/// The first line of `file` that mentions an error, or its first line.
std::string firstError(StringRef file) {
  auto buffer = MemoryBuffer::getFile(file);
  if (!buffer)
    return "";
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (StringRef l : lines)
    if (l.contains("error"))
      return l.trim().str();
  return lines.empty() ? "" : lines.front().trim().str();
}

} // namespace

std::optional<std::string> mlir::dlc::codegen::compileSharedObject(
    const std::string &source, const std::string &compiler,
    const std::string &cpu, std::string &error) {
  ErrorOr<std::string> program = sys::findProgramByName(compiler);
  // A name with a slash is returned as given: check it is there.
  if (!program || !sys::fs::can_execute(*program)) {
    error = "cannot find the host C++ compiler '" + compiler +
            "' to build CPU kernels (install g++, or name one with "
            "--host-compiler)";
    return std::nullopt;
  }
  TemporaryDirectory dir;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("dlc-kernels", dir.path)) {
    error = "cannot create a temporary directory: " + ec.message();
    return std::nullopt;
  }
  SmallString<128> sourcePath(dir.path), objectPath(dir.path),
      logPath(dir.path);
  sys::path::append(sourcePath, "kernels.cpp");
  sys::path::append(objectPath, "kernels.so");
  sys::path::append(logPath, "compiler.log");
  {
    std::error_code ec;
    raw_fd_ostream os(sourcePath, ec);
    if (ec) {
      error = "cannot write " + sourcePath.str().str() + ": " + ec.message();
      return std::nullopt;
    }
    os << source;
  }
  std::string march = "-march=" + cpu;
  SmallVector<StringRef> args = {
      *program,  "-std=c++17",      "-O3", march,      "-fPIC",   "-shared",
      "-fwrapv", "-fno-math-errno", "-o",  objectPath, sourcePath};
  std::optional<StringRef> redirects[] = {std::nullopt, logPath.str(),
                                          logPath.str()};
  std::string message;
  int rc = sys::ExecuteAndWait(*program, args, std::nullopt, redirects, 0, 0,
                               &message);
  if (rc != 0) {
    std::string cause = message.empty() ? firstError(logPath) : message;
    if (cause.empty())
      cause = "it exited with code " + std::to_string(rc) + " and no message";
    error = "the host C++ compiler (" + *program +
            ") failed on the generated CPU kernels: " + cause;
    return std::nullopt;
  }
  auto object = MemoryBuffer::getFile(objectPath);
  if (!object) {
    error = "cannot read the compiled kernels " + objectPath.str().str();
    return std::nullopt;
  }
  return (*object)->getBuffer().str();
}
