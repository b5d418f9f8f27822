//===- IrFile.cpp - dlc IR files as tool inputs ---------------------------===//

#include "tools/common/IrFile.h"
#include "frontend/Importer.h"
#include "tools/common/ShapeOptions.h"
#include "tools/common/TrainingOptions.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mlir::dlc::tools {

bool isDlcIrFile(llvm::StringRef path) {
  return path.ends_with_insensitive(".mlir");
}

FailureOr<OwningOpRef<ModuleOp>> parseDlcIrFile(MLIRContext *context,
                                                llvm::StringRef path) {
  mlir::dlc::registerImporterDialects(context);
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(path, sourceMgr, context);
  if (!module)
    return failure();
  return module;
}

bool checkNoImportOptions(llvm::StringRef tool, llvm::StringRef path) {
  std::string given = shapeOptionGiven();
  if (given.empty() && precisionGiven())
    given = "--precision";
  if (given.empty())
    return true;
  llvm::errs() << tool << ": error: " << given
               << " applies when importing an ONNX model; " << path
               << " is dlc IR"
               << (given == "--precision"
                       ? " (run dlc-opt --dlc-mixed-precision)"
                       : "")
               << "\n";
  return false;
}

} // namespace mlir::dlc::tools
