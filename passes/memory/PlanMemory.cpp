//===- PlanMemory.cpp - Static arena planning by liveness -----------------===//
//
// Each arena value (BufferPlacement) is live from the op that defines it to
// the last op that reads it or any view of it. Offsets are assigned greedily
// by decreasing size, each at the lowest aligned offset that overlaps no
// already placed value whose lifetime intersects its own (the "greedy by
// size" heuristic of TFLite's arena planner, near-optimal on the chains
// that training graphs are). An op's operands and results never share
// memory, so every kernel may read its inputs while writing its outputs.
//
// With keep-epilogue-operands (the CUDA target), a matmul marked with a
// library epilogue (passes/fusion) keeps its operands live until that
// epilogue's fusion: a backend that folds the epilogue into the
// library call writes the fusion's result from within the matmul, which
// must then not be placed over the matmul's own operands.
//
// A collective (all_reduce, reduce_scatter, all_gather) writes its results
// from the communication thread until the first step that reads one of
// them, directly or through views, waits for it; with no such reader the
// wait is at the function's end. A result no step reads stays live until
// then, even where a sibling's reader waits earlier: simpler, and only a
// bucket with an unread value pays for it. A transfer between pipeline
// stages receives the same way.
//
// In a module of pipeline stages, a rank holds only its stage's values and
// those every stage computes (passes/parallel/StagePlacement.h): two
// values that no rank holds together share memory whatever their
// lifetimes, so each rank's arena is about its own stage's, not the whole
// step's.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "passes/Passes.h"
#include "passes/fusion/Fusion.h"
#include "passes/memory/BufferPlacement.h"
#include "passes/parallel/StagePlacement.h"
#include "runtime/module/Format.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <optional>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPLANMEMORY
#include "passes/Passes.h.inc"

namespace {

struct Interval {
  Value value;
  int64_t size;
  int64_t first, last;
  int64_t offset = -1;
  /// The pipeline stages whose ranks hold the value (every stage's bit
  /// without stages).
  StagePlacement::Stages holders = ~StagePlacement::Stages(0);
};

int64_t alignUp(int64_t n) {
  int64_t a = static_cast<int64_t>(kBufferAlignment);
  return (n + a - 1) / a * a;
}

/// Whether an op other than a view reads `value` or a view of it.
bool hasStepReader(Value value) {
  for (Operation *user : value.getUsers()) {
    auto view = dyn_cast<ReshapeOp>(user);
    if (!view || hasStepReader(view.getResult()))
      return true;
  }
  return false;
}

/// Plans `func`'s arena and records it in attributes.
LogicalResult planFunction(func::FuncOp func, bool keepEpilogueOperands) {
  BufferPlacement placement(func);
  Block &block = func.getBody().front();
  std::optional<StagePlacement> stages;
  if (int64_t count =
          StagePlacement::stagesOf(func->getParentOfType<ModuleOp>());
      count > 1) {
    FailureOr<StagePlacement> placed = StagePlacement::compute(func, count);
    if (failed(placed))
      return failure();
    stages = std::move(*placed);
  }
  llvm::DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = static_cast<int64_t>(i);

  const int64_t end = static_cast<int64_t>(block.getOperations().size());
  llvm::MapVector<Value, Interval> intervals;
  for (Operation &op : block) {
    bool async = isa<AllReduceOp, ReduceScatterOp, AllGatherOp, TpReduceOp>(op);
    for (Value result : op.getResults())
      if (placement.of(result).kind == Placement::Kind::Arena) {
        intervals[result] = {
            result, alignUp(BufferPlacement::byteSize(result)), position[&op],
            async && !hasStepReader(result) ? end : position[&op]};
        if (stages)
          intervals[result].holders = stages->holds(result);
      } else if (placement.of(result).kind == Placement::Kind::View) {
        auto it = intervals.find(placement.base(result));
        if (it == intervals.end())
          continue;
        // A transfer's receiving rank holds the value too, and receives it
        // until its first reader waits (at the end without one).
        if (stages)
          it->second.holders |= stages->holds(result);
        if (isa<PpTransferOp>(op) && !hasStepReader(result))
          it->second.last = end;
      }
    // The fusion pass marks only ops whose one result has one user.
    int64_t last = position[&op];
    if (keepEpilogueOperands && isa<MatmulOp>(op) && op.hasAttr(kEpilogueAttr))
      last = position[*op.getResult(0).getUsers().begin()];
    for (Value operand : op.getOperands()) {
      auto it = intervals.find(placement.base(operand));
      if (it != intervals.end())
        it->second.last = std::max(it->second.last, last);
    }
  }

  SmallVector<Interval *> order;
  int64_t total = 0;
  for (auto &entry : intervals) {
    order.push_back(&entry.second);
    total += entry.second.size;
  }
  llvm::stable_sort(order, [](const Interval *a, const Interval *b) {
    return a->size > b->size;
  });
  SmallVector<Interval *> placed;
  int64_t arenaSize = 0;
  for (Interval *interval : order) {
    // Memory ranges of placed values alive at the same time, by offset.
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (Interval *other : placed)
      if (other->first <= interval->last && interval->first <= other->last &&
          (other->holders & interval->holders))
        busy.push_back({other->offset, other->offset + other->size});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + interval->size <= begin)
        break;
      offset = std::max(offset, end);
    }
    interval->offset = offset;
    arenaSize = std::max(arenaSize, offset + interval->size);
    placed.push_back(interval);
  }

  Builder builder(func.getContext());
  for (Operation &op : block) {
    if (op.getNumResults() == 0 || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    SmallVector<int64_t> offsets;
    bool any = false;
    for (Value result : op.getResults()) {
      auto it = intervals.find(result);
      offsets.push_back(it == intervals.end() ? -1 : it->second.offset);
      any |= it != intervals.end();
    }
    if (any)
      op.setAttr(kArenaOffsetsAttr, builder.getDenseI64ArrayAttr(offsets));
    else
      op.removeAttr(kArenaOffsetsAttr);
  }
  func->setAttr(kArenaSizeAttr, builder.getI64IntegerAttr(arenaSize));
  func->setAttr(kIntermediateBytesAttr, builder.getI64IntegerAttr(total));
  return success();
}

struct PlanMemoryPass : public impl::DLCPlanMemoryBase<PlanMemoryPass> {
  using DLCPlanMemoryBase::DLCPlanMemoryBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError() << "has more than one block; dlc-plan-memory plans "
                              "single-block functions";
        return signalPassFailure();
      }
      if (failed(planFunction(func, keepEpilogueOperands)))
        return signalPassFailure();
    }
  }
};

} // namespace

} // namespace mlir::dlc
