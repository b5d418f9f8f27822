//===- dlc-translate.cpp - ONNX models to dlc IR --------------------------===//
//
//   dlc-translate --import-onnx MODEL.onnx [-o OUT.mlir] [--batch-size N]
//                 [--dim NAME=N]...
//
// Prints the imported module as MLIR text. A malformed model, an unsupported
// op or a bad option gives one error line naming the node or the file, and
// exit code 1; the output file is only written after a successful import.
//
//===----------------------------------------------------------------------===//

#include "frontend/Importer.h"
#include "tools/common/Diagnostics.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<bool> importOnnx("import-onnx",
                                cl::desc("Import an ONNX model (.onnx, or "
                                         "ONNX text syntax in .onnxtxt)"));
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"));
// A string, so that a bad value gets the tools' one-line error.
static cl::opt<std::string> batchSize(
    "batch-size", cl::desc("Binds the symbolic leading dimension of inputs"),
    cl::value_desc("N"));
static cl::list<std::string>
    dims("dim", cl::desc("Binds a symbolic dimension: --dim NAME=N"),
         cl::value_desc("NAME=N"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  const char *tool = "dlc-translate";
  if (!::dlc::tools::parseCommandLine(argc, argv, "dlc ONNX importer\n",
                                      tool))
    return 1;

  if (!importOnnx) {
    llvm::errs() << tool << ": error: nothing to do: pass --import-onnx\n";
    return 1;
  }
  mlir::dlc::ImportOptions options;
  if (batchSize.getNumOccurrences()) {
    int64_t n = 0;
    if (llvm::StringRef(batchSize).getAsInteger(10, n) || n <= 0) {
      llvm::errs() << tool << ": error: --batch-size must be a positive "
                   << "integer, got '" << batchSize << "'\n";
      return 1;
    }
    options.batchSize = n;
  }
  for (const std::string &d : dims) {
    auto [name, value] = llvm::StringRef(d).split('=');
    int64_t n = 0;
    if (name.empty() || value.getAsInteger(10, n) || n <= 0) {
      llvm::errs() << tool << ": error: --dim expects NAME=N with N > 0, got '"
                   << d << "'\n";
      return 1;
    }
    options.dims[name] = n;
  }

  MLIRContext context;
  ::dlc::tools::DiagnosticPrinter printer(context, tool);
  FailureOr<OwningOpRef<ModuleOp>> module =
      mlir::dlc::importOnnxFile(&context, inputFile, options);
  if (failed(module))
    return 1;

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(outputFile, &error);
  if (!out) {
    llvm::errs() << tool << ": error: " << error << "\n";
    return 1;
  }
  (*module)->print(out->os());
  out->os() << "\n";
  out->keep();
  return 0;
}
