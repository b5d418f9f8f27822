//===- Diagnostics.cpp - How dlc's command-line tools report errors -------===//

#include "tools/common/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
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
