//===- Diagnostics.cpp - How dlc's command-line tools report errors -------===//

#include "tools/common/Diagnostics.h"
#include "ir/Locations.h"
#include "tools/common/Help.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Support/FileUtilities.h"

using namespace mlir;
namespace tools = mlir::dlc::tools;

bool tools::writeModule(ModuleOp module, llvm::StringRef path,
                        llvm::StringRef tool) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(path, &error);
  if (!out) {
    llvm::errs() << tool << ": error: " << escapeForOneLine(error) << "\n";
    return false;
  }
  module->print(out->os());
  out->os() << "\n";
  out->keep();
  return true;
}

bool tools::parseCommandLine(
    int argc, char **argv, llvm::StringRef overview, llvm::StringRef tool,
    llvm::ArrayRef<const llvm::cl::OptionCategory *> shown) {
  showOnlyInHelp(shown);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::cl::ParseCommandLineOptions(argc, argv, overview, &os))
    return true;
  // cl writes "program: message" lines (plus hints such as "Did you mean");
  // join them into one line in the tools' own format.
  std::string prefix = llvm::sys::path::filename(argv[0]).str() + ": ";
  std::string message;
  for (llvm::StringRef line : llvm::split(llvm::StringRef(errors), '\n')) {
    line = line.trim();
    line.consume_front(prefix);
    if (line.empty())
      continue;
    message += (message.empty() ? "" : " ") + line.str();
  }
  // An option's bad value is reported by cl itself, on its own line.
  if (!message.empty())
    llvm::errs() << tool << ": error: " << message << "\n";
  return false;
}

tools::DiagnosticPrinter::DiagnosticPrinter(MLIRContext &context,
                                            llvm::StringRef tool)
    : context_(context) {
  std::string toolName = tool.str();
  id_ = context.getDiagEngine().registerHandler(
      [toolName](Diagnostic &diag) {
        const char *severity = diag.getSeverity() == DiagnosticSeverity::Error
                                   ? "error"
                               : diag.getSeverity() ==
                                       DiagnosticSeverity::Warning
                                   ? "warning"
                                   : "note";
        std::string where = mlir::dlc::describeLocation(diag.getLocation());
        llvm::errs() << toolName << ": " << severity << ": ";
        if (!where.empty())
          llvm::errs() << where << ": ";
        // A message may quote names from the model (the nodes of a cycle) or
        // another library's multi-line text (ONNX's checker): escaped like
        // the location, it stays on one line.
        llvm::errs() << escapeForOneLine(diag.str()) << "\n";
        return success();
      });
}

tools::DiagnosticPrinter::~DiagnosticPrinter() {
  context_.getDiagEngine().eraseHandler(id_);
}
