//===- Diagnostics.h - How dlc's command-line tools report errors ---------===//
//
// Tools print each error as one line, "tool: error: <where>: <message>",
// where <where> names the ONNX node ("node 'conv1' (Conv)") for imported ops
// or the file for everything else, and exit with code 1. Line breaks in
// names and messages are printed as escapes.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_COMMON_DIAGNOSTICS_H
#define DLC_TOOLS_COMMON_DIAGNOSTICS_H

#include "ir/Locations.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <memory>
#include <string>

namespace mlir::dlc::tools {

using mlir::dlc::describeLocation;
using mlir::dlc::escapeForOneLine;

/// Parses the command line like llvm::cl::ParseCommandLineOptions, but a bad
/// option is reported as one "tool: error: ..." line and makes this return
/// false instead of exiting, so the caller exits with code 1. --help lists
/// the options of the categories `shown` (showOnlyInHelp).
bool parseCommandLine(int argc, char **argv, llvm::StringRef overview,
                      llvm::StringRef tool,
                      llvm::ArrayRef<const llvm::cl::OptionCategory *> shown);

/// Prints `module` as MLIR text to `path` ("-" for stdout). On failure
/// prints one "tool: error: ..." line and returns false; the file is only
/// written (whole) on success.
bool writeModule(mlir::ModuleOp module, llvm::StringRef path,
                 llvm::StringRef tool);

/// While alive, prints diagnostics on `context` as one line each to stderr.
class DiagnosticPrinter {
public:
  DiagnosticPrinter(mlir::MLIRContext &context, llvm::StringRef tool);
  ~DiagnosticPrinter();

private:
  mlir::MLIRContext &context_;
  mlir::DiagnosticEngine::HandlerID id_;
};

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_COMMON_DIAGNOSTICS_H
