//===- Diagnostics.cpp - How dlc's command-line tools report errors -------===//

#include "tools/common/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string dlc::tools::describeLocation(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    // The importer's node locations: NameLoc(node name, NameLoc(op type)).
    std::string result = "node '" + name.getName().str() + "'";
    if (auto type = dyn_cast<NameLoc>(name.getChildLoc()))
      result += " (" + type.getName().str() + ")";
    return result;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string result = file.getFilename().str();
    if (file.getLine() > 0)
      result += ":" + std::to_string(file.getLine()) + ":" +
                std::to_string(file.getColumn());
    return result;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string d = describeLocation(inner); !d.empty())
        return d;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return describeLocation(callSite.getCallee());
  return "";
}

bool dlc::tools::parseCommandLine(int argc, char **argv,
                                  llvm::StringRef overview,
                                  llvm::StringRef tool) {
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

dlc::tools::DiagnosticPrinter::DiagnosticPrinter(MLIRContext &context,
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
        std::string where = describeLocation(diag.getLocation());
        llvm::errs() << toolName << ": " << severity << ": ";
        if (!where.empty())
          llvm::errs() << where << ": ";
        llvm::errs() << diag.str() << "\n";
        return success();
      });
}

dlc::tools::DiagnosticPrinter::~DiagnosticPrinter() {
  context_.getDiagEngine().eraseHandler(id_);
}
