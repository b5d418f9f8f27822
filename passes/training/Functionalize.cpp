//===- Functionalize.cpp - Globals become arguments and results -----------===//
//
// The compiled program is a pure function of its state: the runtime owns
// parameters, running statistics and optimizer state, binds them to
// arguments by name and takes their new values from results. This pass is
// where dlc.global_load and dlc.global_store stop being side effects.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCFUNCTIONALIZE
#include "passes/Passes.h.inc"

namespace {

/// Gives every argument without a role the role `input` and every result
/// without one the role `output`.
void setDefaultRoles(func::FuncOp func) {
  Builder b(func.getContext());
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (!func.getArgAttr(i, roles::kRoleAttr))
      func.setArgAttr(i, roles::kRoleAttr, b.getStringAttr(roles::kInput));
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (!func.getResultAttr(i, roles::kRoleAttr))
      func.setResultAttr(i, roles::kRoleAttr, b.getStringAttr(roles::kOutput));
}

LogicalResult functionalize(func::FuncOp func,
                            const llvm::StringSet<> &written) {
  Block &block = func.getBody().front();
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "dlc-functionalize: @" << func.getSymName()
                            << " has more than one block";
  setDefaultRoles(func);
  Builder b(func.getContext());

  // The globals the function touches, in order of first use.
  llvm::MapVector<StringAttr, Type> used;
  func.walk([&](Operation *op) {
    if (auto load = dyn_cast<GlobalLoadOp>(op))
      used.insert({load.getGlobalAttr().getAttr(), load.getType()});
    else if (auto store = dyn_cast<GlobalStoreOp>(op))
      used.insert(
          {store.getGlobalAttr().getAttr(), store.getValue().getType()});
  });

  // One leading argument per global; loads read the latest stored value.
  llvm::DenseMap<StringAttr, Value> current;
  unsigned index = 0;
  auto module = func->getParentOfType<ModuleOp>();
  for (auto [name, type] : used) {
    StringRef role = written.contains(name) ? roles::kState : roles::kParam;
    NamedAttrList attrs(roles::attrs(func.getContext(), name.getValue(), role));
    // A tensor-parallel rank's slice says so wherever it goes.
    auto global = module ? module.lookupSymbol<GlobalOp>(name) : GlobalOp();
    if (Attribute split =
            global ? global->getAttr(roles::kTpSplitAttr) : Attribute())
      attrs.set(roles::kTpSplitAttr, split);
    if (failed(func.insertArgument(index, type,
                                   attrs.getDictionary(func.getContext()),
                                   func.getLoc())))
      return func.emitError() << "dlc-functionalize: cannot add an argument "
                                 "to @"
                              << func.getSymName();
    current[name] = func.getArgument(index++);
  }
  llvm::MapVector<StringAttr, Value> stored;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto load = dyn_cast<GlobalLoadOp>(op)) {
      load.replaceAllUsesWith(current[load.getGlobalAttr().getAttr()]);
      load.erase();
    } else if (auto store = dyn_cast<GlobalStoreOp>(op)) {
      StringAttr name = store.getGlobalAttr().getAttr();
      current[name] = store.getValue();
      stored[name] = store.getValue();
      store.erase();
    }
  }

  // One trailing result per written global, holding its last value.
  Operation *terminator = block.getTerminator();
  for (auto [name, value] : stored)
    terminator->insertOperands(terminator->getNumOperands(), value);
  SmallVector<DictionaryAttr> resultAttrs;
  func.getAllResultAttrs(resultAttrs);
  for (auto [name, value] : stored)
    resultAttrs.push_back(
        roles::attrs(func.getContext(), name.getValue(), roles::kState));
  func.setFunctionType(b.getFunctionType(block.getArgumentTypes(),
                                         terminator->getOperandTypes()));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

struct FunctionalizePass
    : public impl::DLCFunctionalizeBase<FunctionalizePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> written;
    module.walk(
        [&](GlobalStoreOp store) { written.insert(store.getGlobal()); });
    // A function that touches globals gains arguments and results, which
    // its call sites would not pass or expect.
    llvm::StringSet<> stateful;
    module.walk([&](Operation *op) {
      if (isa<GlobalLoadOp, GlobalStoreOp>(op))
        if (auto func = op->getParentOfType<func::FuncOp>())
          stateful.insert(func.getSymName());
    });
    WalkResult calls = module.walk([&](func::CallOp call) {
      if (!stateful.contains(call.getCallee()))
        return WalkResult::advance();
      call.emitError() << "dlc-functionalize: @" << call.getCallee()
                       << " reads or writes globals and is called; inline "
                          "it first";
      return WalkResult::interrupt();
    });
    if (calls.wasInterrupted())
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(functionalize(func, written)))
        return signalPassFailure();
  }
};

} // namespace

} // namespace mlir::dlc
