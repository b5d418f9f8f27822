//===- Globals.h - What a program's globals are outside the IR -*- C++ -*-===//
//
// A program's dlc.global ops are its state: compiled modules carry them
// with their roles (ModuleWriter) and checkpoints store them by name. Both
// the writer and the evaluator derive roles and the model's fingerprint
// here, so a checkpoint written by a compiled run and one written by
// `dlc-run --interpret --train` identify the same model alike.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_GLOBALS_H
#define DLC_IR_GLOBALS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace mlir::dlc {

/// Each global's role, as the first function argument bound to it says
/// ("param", "optimizer_state", ...); "state" for a global no argument
/// names.
llvm::StringMap<std::string> globalRoles(ModuleOp module);

/// The names of the module's dlc.global ops: the ONNX initializers that a
/// model kept for export leaves out (frontend's readOnnxWithoutInitializers).
llvm::StringSet<> globalNames(ModuleOp module);

/// 16 hex digits of xxh3 over each global's name, role, dtype and shape,
/// in module order: two programs with the same fingerprint hold the same
/// state. A global of a type dlc does not store takes its printed type.
std::string globalsFingerprint(ModuleOp module);

} // namespace mlir::dlc

#endif // DLC_IR_GLOBALS_H
