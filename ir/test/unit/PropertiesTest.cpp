//===- PropertiesTest.cpp - Every op says what kind of work it is ---------===//
//
// Fusion, its cost model and codegen classify ops by their properties
// (DLCOps.td's DLC_Property), not by lists of ops: an op added without one
// would silently become opaque to fusion. Each op has at most one kind, and
// the ops with none are exactly the listed structural ones.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/Roles.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::dlc;

namespace {

int kindsOf(RegisteredOperationName name) {
  return name.hasTrait<OpProperty::Pointwise>() +
         name.hasTrait<OpProperty::Movement>() +
         name.hasTrait<OpProperty::Reducing>() +
         name.hasTrait<OpProperty::Scatter>() +
         name.hasTrait<OpProperty::LibraryCall>();
}

TEST(OpProperties, EachOpHasAtMostOneKind) {
  MLIRContext context;
  context.loadDialect<DLCDialect>();
  std::vector<std::string> none;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "dlc")
      continue;
    EXPECT_LE(kindsOf(name), 1) << name.getStringRef().str();
    if (kindsOf(name) == 0)
      none.push_back(name.getStringRef().str());
    // Only pointwise ops are cheaper to read back than to recompute.
    if (name.hasTrait<OpProperty::Expensive>()) {
      EXPECT_TRUE(name.hasTrait<OpProperty::Pointwise>())
          << name.getStringRef().str();
    }
  }
  // Structure, views, constants, the composite ops the decomposition lowers
  // before fusion, collectives between ranks, and the execution plan's ops.
  std::vector<std::string> structural = {"dlc.all_gather",
                                         "dlc.all_reduce",
                                         "dlc.constant",
                                         "dlc.cross_entropy",
                                         "dlc.cross_entropy_grad",
                                         "dlc.fusion",
                                         "dlc.global",
                                         "dlc.global_load",
                                         "dlc.global_store",
                                         "dlc.plan.all_reduce",
                                         "dlc.plan.conv",
                                         "dlc.plan.copy",
                                         "dlc.plan.launch",
                                         "dlc.plan.matmul",
                                         "dlc.plan.yield",
                                         "dlc.pp_transfer",
                                         "dlc.rank_shard",
                                         "dlc.reduce_scatter",
                                         "dlc.reshape",
                                         "dlc.stop_gradient",
                                         "dlc.tp_copy",
                                         "dlc.tp_reduce",
                                         "dlc.yield"};
  std::sort(none.begin(), none.end());
  EXPECT_EQ(none, structural);
}

TEST(OpProperties, Examples) {
  MLIRContext context;
  context.loadDialect<DLCDialect>();
  auto name = [&](StringRef op) {
    return *RegisteredOperationName::lookup(op, &context);
  };
  EXPECT_TRUE(name("dlc.add").hasTrait<OpProperty::Pointwise>());
  EXPECT_FALSE(name("dlc.add").hasTrait<OpProperty::Expensive>());
  EXPECT_TRUE(name("dlc.exp").hasTrait<OpProperty::Expensive>());
  EXPECT_TRUE(name("dlc.transpose").hasTrait<OpProperty::Movement>());
  EXPECT_TRUE(name("dlc.max_pool").hasTrait<OpProperty::Reducing>());
  EXPECT_TRUE(name("dlc.scatter_elements").hasTrait<OpProperty::Scatter>());
  EXPECT_TRUE(name("dlc.attention").hasTrait<OpProperty::LibraryCall>());
}

// The role names passes write (ir/Roles.h) are the cases of the Role enum
// the dialect verifies dlc.role against, and every case has a name there.
TEST(Roles, NamesAreTheEnumCases) {
  namespace roles = mlir::dlc::roles;
  std::vector<StringRef> names = {
      roles::kParam,     roles::kState,          roles::kOptimizerState,
      roles::kStep,      roles::kHyperparameter, roles::kWeightCopy,
      roles::kLossScale, roles::kInput,          roles::kLabel,
      roles::kOutput,    roles::kLoss,           roles::kGradient,
      roles::kMetric};
  for (StringRef name : names)
    EXPECT_TRUE(symbolizeRole(name).has_value()) << name.str();
  EXPECT_EQ(names.size(), static_cast<size_t>(getMaxEnumValForRole()) + 1);
}

} // namespace
