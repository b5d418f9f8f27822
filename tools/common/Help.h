//===- Help.h - What a tool's --help shows --------------------------------===//
//
// libLLVM registers hundreds of command-line options as it loads (code
// generation flags of every target), and MLIR adds its own. They all still
// parse, but a tool's --help lists only the tool's options, grouped by
// category; the rest are under --help-hidden.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_COMMON_HELP_H
#define DLC_TOOLS_COMMON_HELP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::dlc::tools {

/// Moves every option outside `shown` to --help-hidden, but --help,
/// --version and their kin.
void showOnlyInHelp(llvm::ArrayRef<const llvm::cl::OptionCategory *> shown);

/// Moves the options named `names`, and those of the categories named
/// `categories`, to --help-hidden.
void hideFromHelp(llvm::ArrayRef<llvm::StringRef> names,
                  llvm::ArrayRef<llvm::StringRef> categories = {});

/// The options registered when it is made. A tool whose own options are
/// registered later (dlc-opt's, by MLIR) makes one first, then hides it.
class OptionsSoFar {
public:
  OptionsSoFar();
  /// Moves these options to --help-hidden, but --help, --version and their
  /// kin.
  void hideFromHelp() const;

private:
  llvm::DenseSet<llvm::cl::Option *> options_;
};

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_COMMON_HELP_H
