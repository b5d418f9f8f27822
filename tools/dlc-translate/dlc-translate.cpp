//===- dlc-translate.cpp - ONNX models to dlc IR --------------------------===//
//
//   dlc-translate --import-onnx MODEL.onnx [-o OUT.mlir] [--batch-size N]
//                 [--dim NAME=N]... [--mode=as-exported|training|inference]
//                 [--for-training]
//
// --mode picks the semantics of BatchNormalization and Dropout (see
// mlir::dlc::ImportMode): as the graph was exported (the default), a
// training step (batch statistics with running-statistics updates, active
// dropout), or inference (running statistics, no dropout).
//
// Prints the imported module as MLIR text. A malformed model, an unsupported
// op or a bad option gives one error line naming the node or the file, and
// exit code 1; the output file is only written after a successful import.
//
//===----------------------------------------------------------------------===//

#include "frontend/Importer.h"
#include "tools/common/Diagnostics.h"
#include "tools/common/ShapeOptions.h"
#include "tools/common/TrainingOptions.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

using namespace mlir;
namespace tools = mlir::dlc::tools;
namespace cl = llvm::cl;

static cl::OptionCategory translateOptions("dlc-translate options");
static cl::opt<bool> importOnnx("import-onnx",
                                cl::desc("Import an ONNX model (.onnx, or "
                                         "ONNX text syntax in .onnxtxt)"),
                                cl::cat(translateOptions));
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model>"),
                                      cl::Required, cl::cat(translateOptions));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(translateOptions));
static cl::opt<std::string> importMode(
    "mode",
    cl::desc("Semantics of BatchNormalization and Dropout: as-exported "
             "(default; as the graph says), training (batch statistics, "
             "running statistics written back, dropout active) or inference "
             "(running statistics, no dropout)"),
    cl::value_desc("mode"), cl::init("as-exported"), cl::cat(translateOptions));
static cl::opt<bool> forTraining(
    "for-training",
    cl::desc("Import what dlc-compile --train starts from: @forward "
             "(inference semantics) and @forward_train (training semantics) "
             "sharing their globals, the input of dlc-opt "
             "--dlc-training-pipeline"),
    cl::cat(translateOptions));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  tools::registerShapeOptions();
  const char *tool = "dlc-translate";
  if (!tools::parseCommandLine(
          argc, argv, "dlc ONNX importer\n", tool,
          {&translateOptions, &tools::shapeOptionCategory()}))
    return 1;

  if (!importOnnx) {
    llvm::errs() << tool << ": error: nothing to do: pass --import-onnx\n";
    return 1;
  }
  mlir::dlc::ImportOptions options;
  std::optional<mlir::dlc::ImportMode> mode =
      mlir::dlc::parseImportMode(importMode);
  if (!mode) {
    llvm::errs() << tool
                 << ": error: --mode must be as-exported, training or "
                    "inference, got '"
                 << tools::escapeForOneLine(importMode) << "'\n";
    return 1;
  }
  if (forTraining && importMode.getNumOccurrences()) {
    llvm::errs() << tool
                 << ": error: --for-training imports both semantics; "
                    "it takes no --mode\n";
    return 1;
  }
  options.mode = *mode;
  if (!tools::applyShapeOptions(tool, options))
    return 1;

  MLIRContext context;
  tools::DiagnosticPrinter printer(context, tool);
  FailureOr<OwningOpRef<ModuleOp>> module =
      forTraining ? tools::importForTraining(&context, inputFile, options)
                  : mlir::dlc::importOnnxFile(&context, inputFile, options);
  if (failed(module))
    return 1;

  return tools::writeModule(**module, outputFile, tool) ? 0 : 1;
}
