//===- ShapeOptions.h - --batch-size and --dim for tools that import ------===//
//
// Every tool that imports ONNX models binds symbolic dimensions the same
// way; the options and their checks live here once.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_COMMON_SHAPEOPTIONS_H
#define DLC_TOOLS_COMMON_SHAPEOPTIONS_H

#include "frontend/Importer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

namespace dlc::tools {

/// Registers --batch-size N and --dim NAME=N (call before parsing).
void registerShapeOptions();
/// Their category in --help.
const llvm::cl::OptionCategory &shapeOptionCategory();

/// Copies the parsed options into `options`. On a bad value prints one
/// "tool: error: ..." line and returns false.
bool applyShapeOptions(llvm::StringRef tool, mlir::dlc::ImportOptions &options);

} // namespace dlc::tools

#endif // DLC_TOOLS_COMMON_SHAPEOPTIONS_H
