//===- Locations.cpp - Naming what a location points at, for users -------===//

#include "ir/Locations.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

std::string mlir::dlc::escapeForOneLine(llvm::StringRef text) {
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

std::string mlir::dlc::describeLocation(Location loc) {
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
