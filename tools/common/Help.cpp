//===- Help.cpp - What a tool's --help shows ------------------------------===//

#include "tools/common/Help.h"

#include "llvm/ADT/STLExtras.h"

namespace cl = llvm::cl;

namespace {

/// --help, --version, --help-hidden...: cl's "Generic Options".
bool isGeneric(const cl::Option &option) {
  return llvm::any_of(option.Categories, [](const cl::OptionCategory *c) {
    return c->getName() == "Generic Options";
  });
}

void hide(cl::Option &option) {
  if (!isGeneric(option) && option.getOptionHiddenFlag() == cl::NotHidden)
    option.setHiddenFlag(cl::Hidden);
}

} // namespace

void mlir::dlc::tools::showOnlyInHelp(
    llvm::ArrayRef<const cl::OptionCategory *> shown) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option &option = *entry.second;
    if (llvm::none_of(option.Categories, [&](const cl::OptionCategory *c) {
          return llvm::is_contained(shown, c);
        }))
      hide(option);
  }
}

void mlir::dlc::tools::hideFromHelp(
    llvm::ArrayRef<llvm::StringRef> names,
    llvm::ArrayRef<llvm::StringRef> categories) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option &option = *entry.second;
    if (llvm::is_contained(names, entry.first) ||
        llvm::any_of(option.Categories, [&](const cl::OptionCategory *c) {
          return llvm::is_contained(categories, c->getName());
        }))
      hide(option);
  }
}

mlir::dlc::tools::OptionsSoFar::OptionsSoFar() {
  for (auto &entry : cl::getRegisteredOptions())
    options_.insert(entry.second);
}

void mlir::dlc::tools::OptionsSoFar::hideFromHelp() const {
  for (cl::Option *option : options_)
    hide(*option);
}
