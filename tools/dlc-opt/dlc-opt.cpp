//===- dlc-opt.cpp - Runs dlc passes on dlc IR, as mlir-opt does ----------===//
//
// Registers the dlc dialect, the func dialect and every dlc pass, plus the
// generic MLIR transforms a dlc pipeline uses (canonicalize, cse,
// symbol-dce). All of mlir-opt's standard options (-split-input-file,
// -verify-diagnostics, pass pipelines, IR printing) come from MlirOptMain;
// LLVM's own options, remarks and MLIR's debugging hooks are under
// --help-hidden.
//
//===----------------------------------------------------------------------===//

#include "codegen/plan/Passes.h"
#include "ir/Dialect.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "tools/common/Help.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

namespace tools = mlir::dlc::tools;

int main(int argc, char **argv) {
  // What is registered before main is LLVM's.
  tools::OptionsSoFar llvmOptions;
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::dlc::registerDLCPasses();
  mlir::dlc::registerTrainingPipeline();
  mlir::dlc::codegen::registerDLCPlanPasses();
  mlir::dlc::codegen::registerPlanPipeline();
  mlir::DialectRegistry registry;
  registry.insert<mlir::dlc::DLCDialect, mlir::func::FuncDialect>();
  std::string help = mlir::registerCLIOptions("dlc optimizer driver", registry);
  llvmOptions.hideFromHelp();
  tools::hideFromHelp(
      {"irdl-file", "load-dialect-plugin", "load-pass-plugin", "log-actions-to",
       "log-mlir-actions-filter", "profile-actions-to",
       "mlir-enable-debugger-hook", "mlir-debug-counter",
       "mlir-print-debug-counter", "run-reproducer",
       "mlir-very-unsafe-disable-verifier-on-parsing",
       "mlir-use-nameloc-as-prefix", "mlir-print-value-users",
       // Rarely wanted printing and reproducer knobs, so that the help
       // stays a screen or two with every dlc pass listed.
       "mlir-print-ir-tree-dir", "mlir-print-stacktrace-on-diagnostic",
       "mlir-print-skip-regions", "mlir-pass-pipeline-local-reproducer",
       "output-split-marker", "elide-resource-data-from-bytecode",
       "emit-bytecode-version", "mlir-print-elementsattrs-with-hex-if-larger",
       "mlir-elide-resource-strings-if-larger", "mlir-output-format",
       "mlir-pass-statistics-display", "mlir-pretty-debuginfo",
       "mlir-print-unique-ssa-ids", "mlir-disable-diagnostic-notes",
       "mlir-print-ir-module-scope", "mlir-generate-reproducer",
       "mlir-timing-display", "mlir-print-local-scope",
       "mlir-print-op-on-diagnostic", "mlir-print-ir-after-change",
       "no-implicit-module", "verify-roundtrip", "emit-bytecode",
       "show-dialects", "allow-unregistered-dialect"},
      {"Remark Options"});
  auto [input, output] = mlir::parseCLIOptions(argc, argv, help);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
