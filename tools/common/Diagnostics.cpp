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

std::string dlc::tools::escapeForOneLine(llvm::StringRef text) {
  std::string result;
  result.reserve(text.size());
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\\')
      result += "\\\\";
    else if (c == '\n')
      result += "\\n";
    else if (c == '\r')
      result += "\\r";
    else if (c == '\t')
      result += "\\t";
    else if (byte < 0x20 || byte == 0x7f)
      result += "\\x" + llvm::utohexstr(byte, /*LowerCase=*/true,
                                       /*Width=*/2);
    else
      result += c; // UTF-8 bytes of a non-ASCII name print as they are
  }
  return result;
}

std::string dlc::tools::describeLocation(Location loc) {
  // Names and paths come from the model file and may hold any byte; escaped,
  // they cannot break the one-line format (or fake a second diagnostic).
  auto escaped = [](StringAttr text) {
    return escapeForOneLine(text.getValue());
  };
  if (auto name = dyn_cast<NameLoc>(loc)) {
    // The importer's node locations are NameLoc(node name, NameLoc(op
    // type)); its parameters' are NameLoc(initializer name, file).
    if (auto type = dyn_cast<NameLoc>(name.getChildLoc()))
      return "node '" + escaped(name.getName()) + "' (" +
             escaped(type.getName()) + ")";
    std::string where = describeLocation(name.getChildLoc());
    return (where.empty() ? "" : where + ": ") + "initializer '" +
           escaped(name.getName()) + "'";
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    std::string result = escaped(file.getFilename());
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
        // A message may quote names from the model (the nodes of a cycle) or
        // another library's multi-line text (ONNX's checker): escaped like
        // the location, it stays on one line.
        llvm::errs() << escapeForOneLine(diag.str()) << "\n";
        return success();
      });
}

dlc::tools::DiagnosticPrinter::~DiagnosticPrinter() {
  context_.getDiagEngine().eraseHandler(id_);
}
