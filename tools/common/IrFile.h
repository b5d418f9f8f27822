//===- IrFile.h - dlc IR files as tool inputs -----------------------------===//
//
// dlc-run and dlc-compile take dlc IR (.mlir: what `dlc-compile --emit=mlir`,
// `dlc-translate` or `dlc-opt` wrote, or hand-written) where they take an
// ONNX model. Such a file is parsed, not imported: the options that steer
// the import (shape bindings, --precision) do not apply to it and are
// refused by name rather than ignored.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_COMMON_IRFILE_H
#define DLC_TOOLS_COMMON_IRFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::dlc::tools {

/// Whether `path` names dlc IR (.mlir) rather than an ONNX model.
bool isDlcIrFile(llvm::StringRef path);

/// Parses the dlc IR in `path`; its errors go to the context's diagnostic
/// handler.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
parseDlcIrFile(mlir::MLIRContext *context, llvm::StringRef path);

/// False, with one "tool: error:" line naming the first of them, when an
/// option that applies only to importing an ONNX model (--batch-size,
/// --dim, --bind-input, --precision) was given for the dlc IR in `path`.
bool checkNoImportOptions(llvm::StringRef tool, llvm::StringRef path);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_COMMON_IRFILE_H
