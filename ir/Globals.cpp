//===- Globals.cpp - What a program's globals are outside the IR ----------===//
#include "ir/Globals.h"

#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/xxhash.h"

namespace mlir::dlc {

llvm::StringMap<std::string> globalRoles(ModuleOp module) {
  llvm::StringMap<std::string> roleOf;
  for (auto func : module.getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      DictionaryAttr attrs = func.getArgAttrDict(i);
      StringRef role = roles::roleOf(attrs);
      if (roles::isGlobalRole(role))
        roleOf.try_emplace(roles::nameOf(attrs), role.str());
    }
  for (GlobalOp global : module.getOps<GlobalOp>())
    roleOf.try_emplace(global.getSymName(), roles::kState.str());
  return roleOf;
}

llvm::StringSet<> globalNames(ModuleOp module) {
  llvm::StringSet<> names;
  for (GlobalOp global : module.getOps<GlobalOp>())
    names.insert(global.getSymName());
  return names;
}

std::string globalsFingerprint(ModuleOp module) {
  llvm::StringMap<std::string> roleOf = globalRoles(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  // A tensor-parallel slice stands for its whole, which checkpoints hold;
  // in a tensor-parallel module, so does a ZeRO shard (of a slice or of a
  // replicated value). A data-parallel module's checkpoints hold the shards.
  auto ranks = module->getAttrOfType<IntegerAttr>(roles::kTensorParallelAttr);
  for (GlobalOp global : module.getOps<GlobalOp>()) {
    auto type = cast<RankedTensorType>(global.getType());
    if (RankedTensorType whole =
            roles::shardedTypeOf(global->getAttrDictionary());
        whole && ranks)
      type = whole;
    if (std::optional<int64_t> dim =
            roles::tpSplitOf(global->getAttrDictionary());
        dim && ranks) {
      SmallVector<int64_t> shape(type.getShape());
      shape[*dim] *= ranks.getInt();
      type = type.clone(shape);
    }
    os << global.getSymName() << '|' << roleOf.lookup(global.getSymName())
       << '|';
    if (FailureOr<DType> dtype = dtypeOf(type.getElementType());
        succeeded(dtype))
      os << dtypeName(*dtype);
    else
      os << type.getElementType();
    os << '|';
    llvm::interleave(type.getShape(), os, ",");
    os << ';';
  }
  std::string digits;
  llvm::raw_string_ostream(digits)
      << llvm::format_hex_no_prefix(llvm::xxh3_64bits(StringRef(text)), 16);
  return digits;
}

} // namespace mlir::dlc
