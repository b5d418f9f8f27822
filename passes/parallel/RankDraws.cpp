//===- RankDraws.cpp - Each data-parallel rank's own random draws ---------===//
//
// dlc.dropout and dlc.random_uniform draw element i's number from Philox's
// counter offset + i, so one process's draw over a [B, ...] batch is a run
// of counters, and rank r of N, holding rows r B/N .. (r+1) B/N - 1, holds
// the counters from r * (its element count) on. Giving each rank that
// offset makes N ranks draw exactly one process's masks and augmentation
// wherever the batch is the outermost dimension of the drawn value, as it
// is for activations in [batch, ...] layouts and for dlc-augment's
// per-sample draws. Where it is not (a [sequence, batch, ...] layout), the
// ranks still draw disjoint counters, so independent masks, as they
// should, but not one process's.
//
// The rank's offset comes from a constant table of every rank's offset
// through dlc.rank_shard (each rank keeps its own entry), which the plan
// already runs on every backend: no new plan step, and the evaluator
// simulates it as the other ZeRO ops.
//
//===----------------------------------------------------------------------===//
#include "passes/parallel/RankDraws.h"

#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "ir/Roles.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace mlir::dlc {

namespace {

/// The values in `func` that may differ between the ranks: its arguments
/// other than globals (the batch's inputs and labels), what they reach,
/// and what dlc.random_uniform draws (its shape follows the batch). The
/// rest, computed from globals and constants alone, every rank holds alike.
llvm::DenseSet<Value> rankDependentValues(func::FuncOp func) {
  llvm::DenseSet<Value> dependent;
  for (BlockArgument argument : func.getArguments()) {
    StringRef role =
        roles::roleOf(func.getArgAttrDict(argument.getArgNumber()));
    if (!roles::isGlobalRole(role) && role != roles::kLossScale)
      dependent.insert(argument);
  }
  // In order, so that each operand is classified before its users.
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation())
      return;
    bool fromRank = isa<RandomUniformOp>(op) ||
                    llvm::any_of(op->getOperands(), [&](Value operand) {
                      return dependent.contains(operand);
                    });
    // What a region computes is not followed: an op with one counts as
    // the ranks' own (it only costs a dropout inside one the offset).
    if (!fromRank && op->getNumRegions() == 0)
      return;
    dependent.insert(op->result_begin(), op->result_end());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        dependent.insert(block.args_begin(), block.args_end());
  });
  return dependent;
}

/// The rank's counter offsets in one function, one per element count.
class RankOffsets {
public:
  RankOffsets(func::FuncOp func, int64_t ranks) : func(func), ranks(ranks) {}

  /// This rank's offset for draws of `elements` elements (a tensor<i64>):
  /// rank * elements, built at the function's start (with the location of
  /// the first draw that needs it, which errors on it then name).
  FailureOr<Value> of(Operation *draw, int64_t elements) {
    auto it = offsets.find(elements);
    if (it != offsets.end())
      return it->second;
    // Through float64, dlc.rank_shard's types: exact below 2^53.
    if (elements > 0 && ranks > (int64_t{1} << 53) / elements)
      return draw->emitOpError()
             << "draws " << elements << " elements on each of " << ranks
             << " ranks, past the 2^53 counters a rank's offset can address";
    OpBuilder b(func.getContext());
    b.setInsertionPointToStart(&func.getBody().front());
    Location loc = draw->getLoc();
    SmallVector<double> table;
    for (int64_t r = 0; r < ranks; ++r)
      table.push_back(static_cast<double>(r * elements));
    auto tableType = RankedTensorType::get({ranks}, b.getF64Type());
    Value all = ConstantOp::create(
        b, loc, DenseElementsAttr::get(tableType, ArrayRef<double>(table)));
    Value own = RankShardOp::create(b, loc, all, ranks);
    Value offset =
        grad::reshape(b, loc, grad::castTo(b, loc, own, b.getI64Type()),
                      /*shape=*/{});
    offsets[elements] = offset;
    return offset;
  }

private:
  func::FuncOp func;
  int64_t ranks;
  llvm::DenseMap<int64_t, Value> offsets;
};

int64_t elementsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// The rank's batch: the outermost dimension of `func`'s first input or
/// label of rank 1 or more, or nullopt without one.
std::optional<int64_t> batchOf(func::FuncOp func) {
  for (BlockArgument argument : func.getArguments()) {
    StringRef role =
        roles::roleOf(func.getArgAttrDict(argument.getArgNumber()));
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if ((role == roles::kInput || role == roles::kLabel) && type &&
        type.getRank() > 0)
      return type.getDimSize(0);
  }
  return std::nullopt;
}

/// Whether a dropout of `drawn`, which every rank holds alike, still draws
/// over the batch: one broadcast to the batch's outermost dimension (a
/// parameter expanded over the samples) has a mask row per sample.
bool overBatch(Value drawn, std::optional<int64_t> batch) {
  auto type = cast<RankedTensorType>(drawn.getType());
  return batch && type.getRank() > 0 && type.getDimSize(0) == *batch;
}

} // namespace

LogicalResult offsetRankDraws(func::FuncOp func, int64_t ranks) {
  SmallVector<std::pair<Operation *, Value>> draws;
  func.walk([&](Operation *op) {
    if (auto dropout = dyn_cast<DropoutOp>(op))
      draws.push_back({op, dropout.getInput()});
    else if (auto uniform = dyn_cast<RandomUniformOp>(op))
      draws.push_back({op, uniform.getResult()});
  });
  if (draws.empty())
    return success();
  // rankDependentValues follows the body in block order.
  if (!func.getBody().hasOneBlock())
    return func.emitOpError() << "has more than one block; dlc-data-parallel "
                                 "gives the draws of single-block functions "
                                 "each rank's offsets";
  llvm::DenseSet<Value> dependent = rankDependentValues(func);
  std::optional<int64_t> batch = batchOf(func);
  RankOffsets offsets(func, ranks);
  for (auto [op, drawn] : draws) {
    Value existing = isa<DropoutOp>(op) ? cast<DropoutOp>(op).getOffset()
                                        : cast<RandomUniformOp>(op).getOffset();
    if (existing)
      return op->emitOpError()
             << "already has a counter offset; dlc-data-parallel gives each "
                "rank's draws theirs";
    // Every rank drops the same elements of a value they all hold, as one
    // process does, unless it is laid out over the batch.
    if (isa<DropoutOp>(op) && !dependent.contains(drawn) &&
        !overBatch(drawn, batch))
      continue;
    // The offset is built at the function's start, which an isolated body
    // cannot see.
    if (op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>() !=
        func.getOperation())
      return op->emitOpError()
             << "draws random numbers inside an isolated body; "
                "dlc-data-parallel gives each rank its own draws before "
                "fusion";
    FailureOr<Value> offset = offsets.of(op, elementsOf(drawn));
    if (failed(offset))
      return failure();
    // The optional operand comes last.
    op->insertOperands(op->getNumOperands(), *offset);
  }
  return success();
}

} // namespace mlir::dlc
