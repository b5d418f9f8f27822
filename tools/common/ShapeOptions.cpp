//===- ShapeOptions.cpp - --batch-size and --dim for tools that import ----===//

#include "tools/common/ShapeOptions.h"
#include "runtime/support/Npz.h"
#include "tools/common/Diagnostics.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace {
struct ShapeOptions {
  cl::OptionCategory category{"Shape options"};
  // A string, so that a bad value gets the tools' one-line error rather
  // than cl's own message.
  cl::opt<std::string> batchSize{
      "batch-size", cl::desc("Binds the symbolic leading dimension of inputs"),
      cl::value_desc("N"), cl::cat(category)};
  cl::list<std::string> dims{
      "dim", cl::desc("Binds a symbolic dimension: --dim NAME=N"),
      cl::value_desc("NAME=N"), cl::cat(category)};
  cl::list<std::string> bindInputs{
      "bind-input",
      cl::desc("Fixes a graph input to the array of a .npy file, as a "
               "constant (a Reshape's shape, Resize's scales)"),
      cl::value_desc("NAME=FILE.npy"), cl::cat(category)};
};
llvm::ManagedStatic<ShapeOptions> shapeOptions;
} // namespace

void mlir::dlc::tools::registerShapeOptions() { *shapeOptions; }

const cl::OptionCategory &mlir::dlc::tools::shapeOptionCategory() {
  return shapeOptions->category;
}

std::string mlir::dlc::tools::shapeOptionGiven() {
  const ShapeOptions &o = *shapeOptions;
  if (o.batchSize.getNumOccurrences())
    return "--batch-size";
  if (o.dims.getNumOccurrences())
    return "--dim";
  if (o.bindInputs.getNumOccurrences())
    return "--bind-input";
  return "";
}

bool mlir::dlc::tools::applyShapeOptions(llvm::StringRef tool,
                                         mlir::dlc::ImportOptions &options) {
  const ShapeOptions &o = *shapeOptions;
  if (o.batchSize.getNumOccurrences()) {
    int64_t n = 0;
    if (llvm::StringRef(o.batchSize).getAsInteger(10, n) || n <= 0) {
      llvm::errs() << tool << ": error: --batch-size must be a positive "
                   << "integer, got '" << escapeForOneLine(o.batchSize)
                   << "'\n";
      return false;
    }
    options.batchSize = n;
  }
  for (const std::string &d : o.dims) {
    auto [name, value] = llvm::StringRef(d).split('=');
    int64_t n = 0;
    if (name.empty() || value.getAsInteger(10, n) || n <= 0) {
      llvm::errs() << tool << ": error: --dim expects NAME=N with N > 0, got '"
                   << escapeForOneLine(d) << "'\n";
      return false;
    }
    options.dims[name] = n;
  }
  for (const std::string &b : o.bindInputs) {
    auto [name, file] = llvm::StringRef(b).split('=');
    if (name.empty() || file.empty()) {
      llvm::errs() << tool << ": error: --bind-input expects NAME=FILE.npy, "
                   << "got '" << escapeForOneLine(b) << "'\n";
      return false;
    }
    Tensor value;
    StatusOwner read(readNpy(file.str(), value));
    if (read.get()) {
      llvm::errs() << tool << ": error: --bind-input " << name << ": "
                   << escapeForOneLine(dlc_status_message(read.get())) << "\n";
      return false;
    }
    if (!options.constantInputs.try_emplace(name, std::move(value)).second) {
      llvm::errs() << tool << ": error: --bind-input " << name
                   << " is given twice\n";
      return false;
    }
  }
  return true;
}
