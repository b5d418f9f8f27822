//===- DataParallel.cpp - Gradient all-reduce in buckets ------------------===//
//
// Data parallelism as the compiler sees it (DESIGN.md decision 9): the
// program every rank runs is the one-device program at the per-rank batch,
// plus a mean over the ranks of each gradient before the optimizer uses
// it. The buckets follow PyTorch DDP's: gradients in the order backward
// produces them, up to a byte cap each, so the first buckets can be on the
// wire while later layers' gradients are still being computed. Each bucket
// sits right after its last gradient's producer; where the plan then issues
// and waits for it is the execution plan's business.
//
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "passes/Passes.h"
#include "passes/parallel/CostModel.h"
#include "passes/parallel/RankDraws.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCDATAPARALLEL
#include "passes/Passes.h.inc"

namespace {

/// One distinct gradient value a function returns.
struct Gradient {
  Value value;
  /// Where backward produces it: its defining op's place in the body, -1 for
  /// a block argument.
  int64_t position;
  double bytes;
  /// The pipeline stage that computes it (dlc.pp_stage), -1 for none.
  int64_t stage;
};

class DataParallelPass : public impl::DLCDataParallelBase<DataParallelPass> {
public:
  using DLCDataParallelBase::DLCDataParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError() << "dlc-data-parallel: ranks must be at least 1, got "
                         << static_cast<int64_t>(ranks);
      return signalPassFailure();
    }
    if (zero != 0 && zero != 1) {
      module.emitError() << "dlc-data-parallel: zero must be 0 or 1 (ZeRO "
                            "stage 1 shards the optimizer state), got "
                         << static_cast<int64_t>(zero);
      return signalPassFailure();
    }
    if (!(bucketMb > 0) || !std::isfinite(bucketMb)) {
      module.emitError() << "dlc-data-parallel: bucket-mb must be a positive "
                            "number of MiB, got "
                         << static_cast<double>(bucketMb);
      return signalPassFailure();
    }
    if (auto done =
            module->getAttrOfType<IntegerAttr>(roles::kDataParallelAttr)) {
      module.emitError() << "dlc-data-parallel: the module is already "
                            "partitioned for "
                         << done.getInt() << " data-parallel ranks";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        StringRef role = roles::roleOf(func.getArgAttrDict(i));
        if (role == roles::kStep || role == roles::kOptimizerState) {
          func.emitOpError()
              << "already updates the parameters (argument '"
              << roles::nameOf(func.getArgAttrDict(i))
              << "' is optimizer state): dlc-data-parallel runs before "
                 "dlc-optimizer, so that the update reads reduced gradients";
          return signalPassFailure();
        }
      }
      if (llvm::any_of(func.getAllResultAttrs()
                           ? func.getAllResultAttrs().getValue()
                           : ArrayRef<Attribute>(),
                       [](Attribute a) {
                         return roles::roleOf(cast<DictionaryAttr>(a)) ==
                                roles::kGradient;
                       }))
        functions.push_back(func);
    }
    if (functions.empty()) {
      module.emitError() << "dlc-data-parallel: no function returns gradients "
                            "(dlc.role = \"gradient\"); run dlc-autodiff first";
      return signalPassFailure();
    }
    // One rank has nothing to reduce or shard.
    if (ranks == 1)
      return;
    // Every rank's program draws from the same seed and streams: each rank
    // takes its own part of every draw over its rows.
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && failed(offsetRankDraws(func, ranks)))
        return signalPassFailure();
    for (func::FuncOp func : functions)
      if (failed(partition(func)))
        return signalPassFailure();
    Builder builder(module.getContext());
    module->setAttr(roles::kDataParallelAttr, builder.getI64IntegerAttr(ranks));
    if (zero == 1)
      module->setAttr(roles::kZeroAttr, builder.getI64IntegerAttr(1));
  }

private:
  /// Reduces every gradient `func` returns, in buckets.
  LogicalResult partition(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return func.emitOpError() << "has more than one block; "
                                   "dlc-data-parallel partitions "
                                   "single-block functions";
    Block &body = func.getBody().front();
    Operation *ret = body.getTerminator();
    llvm::DenseMap<Operation *, int64_t> positions;
    for (auto [i, op] : llvm::enumerate(body))
      positions[&op] = static_cast<int64_t>(i);

    SmallVector<Gradient> gradients;
    llvm::DenseMap<Value, SmallVector<unsigned>> resultsOf;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      if (roles::roleOf(func.getResultAttrDict(i)) != roles::kGradient)
        continue;
      Value value = ret->getOperand(i);
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || !type.hasStaticShape() ||
          !isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
              type.getElementType()))
        return func.emitOpError()
               << "returns gradient '"
               << roles::nameOf(func.getResultAttrDict(i)) << "' (result #" << i
               << ") of " << value.getType()
               << "; only statically shaped float16, bfloat16, float32 or "
                  "float64 tensors can be all-reduced";
      SmallVector<unsigned> &results = resultsOf[value];
      if (results.empty()) {
        Operation *producer = value.getDefiningOp();
        auto stage = producer ? producer->getAttrOfType<IntegerAttr>(
                                    roles::kPipelineStageAttr)
                              : IntegerAttr();
        gradients.push_back({value, producer ? positions.lookup(producer) : -1,
                             bytesOf(value.getType()),
                             stage ? stage.getInt() : -1});
      }
      results.push_back(i);
    }
    // A pipeline stage's gradients are reduced among its own replicas, in
    // buckets of their own.
    llvm::stable_sort(gradients, [](const Gradient &a, const Gradient &b) {
      return std::pair(a.stage, a.position) < std::pair(b.stage, b.position);
    });

    const double cap = bucketMb * 1024 * 1024;
    SmallVector<SmallVector<Gradient>> buckets;
    double filled = 0;
    // A bucket holds one element type, which its collective reduces (a
    // mixed-precision module's 16-bit gradients start a bucket of their
    // own).
    auto elementType = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getElementType();
    };
    for (const Gradient &g : gradients) {
      if (buckets.empty() || filled + g.bytes > cap ||
          elementType(buckets.back().back().value) != elementType(g.value) ||
          buckets.back().back().stage != g.stage) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(g);
      filled += g.bytes;
    }

    OpBuilder builder(func.getContext());
    // Each bucket goes after its last gradient's producer and after the
    // bucket of its stage before it (buckets of arguments, or of one op's
    // results, share a producer), so each stage issues them in bucket order.
    llvm::DenseMap<int64_t, Operation *> previousOfStage;
    for (auto [index, bucket] : llvm::enumerate(buckets)) {
      Value last = bucket.back().value;
      Operation *&previous = previousOfStage[bucket.back().stage];
      Operation *after = last.getDefiningOp();
      if (previous && (!after || after->isBeforeInBlock(previous)))
        after = previous;
      if (after)
        builder.setInsertionPointAfter(after);
      else
        builder.setInsertionPointToStart(&body);
      SmallVector<Value> inputs;
      for (const Gradient &g : bucket)
        inputs.push_back(g.value);
      Operation *reduce =
          zero == 1 ? ReduceScatterOp::create(builder, last.getLoc(), inputs,
                                              RankReduction::mean, ranks,
                                              static_cast<int64_t>(index))
                          .getOperation()
                    : AllReduceOp::create(builder, last.getLoc(), inputs,
                                          RankReduction::mean,
                                          static_cast<int64_t>(index))
                          .getOperation();
      previous = reduce;
      if (int64_t stage = bucket.back().stage; stage >= 0)
        reduce->setAttr(roles::kPipelineStageAttr,
                        builder.getI64IntegerAttr(stage));
      for (auto [g, reduced] : llvm::zip(bucket, reduce->getResults()))
        for (unsigned result : resultsOf[g.value]) {
          ret->setOperand(result, reduced);
          // A shard says what it is a shard of.
          if (zero == 1)
            func.setResultAttr(result, roles::kShardedAttr,
                               TypeAttr::get(g.value.getType()));
        }
    }
    // Shards change the gradient results' types.
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), ret->getOperandTypes()));
    return success();
  }
};

} // namespace
} // namespace mlir::dlc
