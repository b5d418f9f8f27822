//===- dlc-opt.cpp - Runs dlc passes on dlc IR, as mlir-opt does ----------===//
//
// Registers the dlc dialect, the func dialect and every dlc pass, plus MLIR's
// generic transforms (canonicalize, cse, inline...). All of mlir-opt's
// standard options (-split-input-file, -verify-diagnostics, pass pipelines)
// come from MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::dlc::registerDLCPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::dlc::DLCDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dlc optimizer driver\n", registry));
}
