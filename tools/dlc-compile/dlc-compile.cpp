//===- dlc-compile.cpp - ONNX models to training programs -----------------===//
//
//   dlc-compile MODEL.onnx --train [training options] [--batch-size N]
//               [--dim NAME=N]... --emit=mlir [-o OUT.mlir]
//
// With --train the model becomes a module with @train_step and @forward (and
// the intermediate @forward_train, @loss and @loss_grad, kept for
// inspection); without it, the model is imported with inference semantics.
// --emit=mlir prints the module after the passes. Errors are one line each,
// naming the node, the option or the file, with exit code 1; the output
// file is written only after success.
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
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.onnx|model.onnxtxt>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"));
static cl::opt<bool> train("train",
                           cl::desc("Build a training program (train_step)"));
enum class Emit { Mlir };
static cl::opt<Emit>
    emit("emit", cl::desc("What to produce"),
         cl::values(clEnumValN(Emit::Mlir, "mlir",
                               "The dlc IR after the passes (MLIR text)")),
         cl::init(Emit::Mlir));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  ::dlc::tools::registerShapeOptions();
  ::dlc::tools::registerTrainingOptions();
  const char *tool = "dlc-compile";
  if (!::dlc::tools::parseCommandLine(argc, argv, "dlc compiler\n", tool))
    return 1;

  if (!train) {
    llvm::SmallVector<std::string> given =
        ::dlc::tools::compileOnlyTrainingOptionsGiven();
    for (auto &[name, value] : ::dlc::tools::hyperparametersGiven())
      given.push_back(name == "dlc.lr" ? "--lr" : "--weight-decay");
    if (!given.empty()) {
      llvm::errs() << tool << ": error: " << given.front()
                   << " is a training option: add --train\n";
      return 1;
    }
  }
  if (!::dlc::tools::checkTrainingOptions(tool))
    return 1;
  mlir::dlc::ImportOptions options;
  if (!::dlc::tools::applyShapeOptions(tool, options))
    return 1;
  MLIRContext context;
  ::dlc::tools::DiagnosticPrinter printer(context, tool);
  FailureOr<OwningOpRef<ModuleOp>> module;
  if (train) {
    module = ::dlc::tools::compileForTraining(&context, inputFile, options);
  } else {
    options.mode = mlir::dlc::ImportMode::Inference;
    module = mlir::dlc::importOnnxFile(&context, inputFile, options);
  }
  if (failed(module))
    return 1;

  return ::dlc::tools::writeModule(**module, outputFile, tool) ? 0 : 1;
}
