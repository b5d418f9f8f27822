//===- Executable.cpp - Training binaries from a compiled module ----------===//

#include "tools/dlc-compile/Executable.h"
#include "ir/RuntimeNames.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

std::optional<std::string>
mlir::dlc::tools::buildExecutable(const char *argv0, const std::string &module,
                                  std::string &error) {
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  llvm::SmallString<256> runner(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(runner, "dlc-runner");
  auto bytes = llvm::MemoryBuffer::getFile(runner, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes) {
    error =
        "cannot read the runner " + runner.str().str() +
        " that training binaries are built from: " + bytes.getError().message();
    return std::nullopt;
  }
  return appendEmbeddedModule((*bytes)->getBuffer().str(), module);
}
