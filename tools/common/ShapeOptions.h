//===- ShapeOptions.h - Shape bindings for the tools that import ----------===//
//
// Every tool that imports ONNX models binds symbolic dimensions and
// shape-deciding inputs the same way (--batch-size, --dim, --bind-input);
// the options and their checks live here once.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_COMMON_SHAPEOPTIONS_H
#define DLC_TOOLS_COMMON_SHAPEOPTIONS_H

#include "frontend/Importer.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::dlc::tools {

/// Registers --batch-size N, --dim NAME=N and --bind-input NAME=FILE.npy
/// (call before parsing).
void registerShapeOptions();
/// Their category in --help.
const llvm::cl::OptionCategory &shapeOptionCategory();

/// The first shape option given on the command line ("--batch-size",
/// "--dim" or "--bind-input"), or "" when none was.
std::string shapeOptionGiven();

/// Copies the parsed options into `options`. On a bad value prints one
/// "tool: error: ..." line and returns false.
bool applyShapeOptions(llvm::StringRef tool, mlir::dlc::ImportOptions &options);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_COMMON_SHAPEOPTIONS_H
