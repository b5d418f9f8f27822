//===- Locations.h - Naming what a location points at, for users ---------===//
//
// Errors name what the user wrote: the ONNX node or initializer an op came
// from (the importer's NameLoc locations), or a file position. Shared by the
// tools' one-line diagnostics and by passes that list nodes in one message.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_LOCATIONS_H
#define DLC_IR_LOCATIONS_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::dlc {

/// `text` with line breaks and other ASCII control characters written as C
/// escapes (\n, \r, \t, \xHH) and a backslash as \\, so that it prints on
/// one line and can be read back unambiguously.
std::string escapeForOneLine(llvm::StringRef text);

/// Describes a location for a user: "node 'conv1' (Conv)" for an imported
/// node, "model.onnx: initializer 'fc.weight'" for a parameter,
/// "file.mlir:3:5" for a file position, "" if unknown. Names and paths
/// are escaped with escapeForOneLine.
std::string describeLocation(mlir::Location loc);

} // namespace mlir::dlc

#endif // DLC_IR_LOCATIONS_H
