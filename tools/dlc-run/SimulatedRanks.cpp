//===- SimulatedRanks.cpp - A partitioned module's ranks in one process --===//
#include "tools/dlc-run/SimulatedRanks.h"

#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"

namespace mlir::dlc::tools {

namespace {

bool isPerSample(StringRef role) {
  return role == roles::kInput || role == roles::kLabel;
}

/// Element `e` of float tensor `t` = `value`, rounded once to its type.
void store(Tensor &t, int64_t e, double value) {
  switch (t.dtype()) {
  case DType::F64:
    t.data<double>()[e] = value;
    break;
  case DType::F32:
    t.data<float>()[e] = static_cast<float>(value);
    break;
  case DType::BF16:
    t.data<BFloat16>()[e] = BFloat16::fromFloat(static_cast<float>(value));
    break;
  default:
    t.data<Half>()[e] = Half::fromFloat(static_cast<float>(value));
  }
}

/// The whole value of type `whole` whose ZeRO shards the ranks hold (`of(r)`,
/// rank r's): each tensor rank's value from its replicas' shards (of stage
/// 0), and, for shards of slices, those slices joined along `split`.
Tensor wholeOfShards(const RankGrid &grid, RankedTensorType whole,
                     std::optional<roles::TpSplit> split,
                     function_ref<Tensor(int64_t)> of) {
  SmallVector<SmallVector<int64_t>> groups = grid.dataGroups();
  std::vector<Tensor> slices;
  for (int64_t t = 0; t < (split ? grid.tensorParallel : 1); ++t) {
    std::vector<Tensor> shards;
    for (int64_t r : groups[t])
      shards.push_back(of(r));
    slices.push_back(
        gatherShards(shards, shards.front().dtype(), whole.getShape().vec()));
  }
  return split ? joinSlices(slices, split->dim, split->groups)
               : std::move(slices.front());
}

} // namespace

LogicalResult checkShards(func::FuncOp func, const RankGrid &grid) {
  const int64_t ranks = grid.dataParallel;
  auto check = [&](DictionaryAttr attrs, Type type, StringRef what,
                   unsigned i) -> LogicalResult {
    auto ranked = dyn_cast<RankedTensorType>(type);
    // A ZeRO shard of a slice is split along the slice's dimensions.
    RankedTensorType splitType =
        roles::shardedTypeOf(attrs) ? roles::shardedTypeOf(attrs) : ranked;
    Attribute split = attrs ? attrs.get(roles::kTpSplitAttr) : Attribute();
    std::optional<roles::TpSplit> parsed = roles::tpSplitFromAttr(split);
    if (split &&
        (!parsed || grid.tensorParallel < 2 || !splitType || parsed->dim < 0 ||
         parsed->dim >= splitType.getRank() || parsed->groups < 1 ||
         splitType.getDimSize(parsed->dim) % parsed->groups))
      return func.emitOpError()
             << what << " #" << i << " of " << type << " is marked "
             << roles::kTpSplitAttr << " = " << split
             << ", which is not a dimension of it (in equal blocks) split "
                "over the module's "
             << grid.tensorParallel << " tensor-parallel rank(s)";
    if (!attrs || !attrs.get(roles::kShardedAttr))
      return success();
    RankedTensorType whole = roles::shardedTypeOf(attrs);
    if (ranks > 1 && whole && whole.hasStaticShape() && ranked &&
        shardTypeOf(whole, ranks) == ranked)
      return success();
    return func.emitOpError()
           << what << " #" << i << " of " << type << " is marked "
           << roles::kShardedAttr << " = " << attrs.get(roles::kShardedAttr)
           << ", but is not its shard over the module's " << ranks
           << " data-parallel rank(s)";
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (failed(check(func.getArgAttrDict(i), func.getArgumentTypes()[i],
                     "argument", i)))
      return failure();
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (failed(check(func.getResultAttrDict(i), func.getResultTypes()[i],
                     "result", i)))
      return failure();
  return success();
}

SmallVector<RankedTensorType> globalArgumentTypes(func::FuncOp func,
                                                  const RankGrid &grid) {
  SmallVector<RankedTensorType> types;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    DictionaryAttr attrs = func.getArgAttrDict(i);
    // A ZeRO shard's global value is the whole (of all the slices, for a
    // shard of a slice).
    RankedTensorType ranked = roles::shardedTypeOf(attrs);
    const bool sharded = bool(ranked);
    if (!sharded)
      ranked = cast<RankedTensorType>(type);
    SmallVector<int64_t> shape(ranked.getShape());
    if (std::optional<int64_t> dim = roles::tpSplitOf(attrs))
      shape[*dim] *= grid.tensorParallel;
    else if (!sharded && isPerSample(roles::roleOf(attrs)) &&
             ranked.getRank() > 0)
      shape[0] *= grid.dataParallel;
    types.push_back(ranked.clone(shape));
  }
  return types;
}

SmallVector<SmallVector<Tensor>>
splitInputs(func::FuncOp func, ArrayRef<Tensor> global, const RankGrid &grid) {
  SmallVector<SmallVector<Tensor>> inputs(grid.ranks());
  for (auto [i, tensor] : llvm::enumerate(global)) {
    DictionaryAttr attrs = func.getArgAttrDict(i);
    bool perSample =
        isPerSample(roles::roleOf(attrs)) && !tensor.shape().empty();
    bool sharded = bool(roles::shardedTypeOf(attrs));
    std::optional<roles::TpSplit> split = roles::tpSplitIn(attrs);
    for (int64_t r = 0; r < grid.ranks(); ++r) {
      const int64_t replica = grid.dataRank(r);
      Tensor slice = split ? sliceOf(tensor, split->dim, grid.tensorRank(r),
                                     grid.tensorParallel, split->groups)
                           : tensor;
      if (sharded)
        inputs[r].push_back(shardOf(slice, replica, grid.dataParallel));
      else if (split)
        inputs[r].push_back(std::move(slice));
      else if (perSample)
        inputs[r].push_back(sliceOf(tensor, 0, replica, grid.dataParallel));
      else
        inputs[r].push_back(tensor);
    }
  }
  return inputs;
}

SmallVector<Tensor> combineResults(func::FuncOp func,
                                   ArrayRef<SmallVector<Tensor>> ranks,
                                   const RankGrid &grid) {
  // The ranks of tensor rank 0, one per replica, and replica 0's.
  SmallVector<int64_t> replicas = grid.dataGroups().front();
  SmallVector<int64_t> tensorRanks = grid.tensorGroups().front();
  auto gather = [&](ArrayRef<int64_t> group, unsigned i) {
    std::vector<Tensor> values;
    for (int64_t r : group)
      values.push_back(ranks[r][i]);
    return values;
  };
  SmallVector<Tensor> combined;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    DictionaryAttr attrs = func.getResultAttrDict(i);
    StringRef role = roles::roleOf(attrs);
    const Tensor &first = ranks.front()[i];
    std::optional<roles::TpSplit> split = roles::tpSplitIn(attrs);
    if (RankedTensorType whole = roles::shardedTypeOf(attrs)) {
      combined.push_back(wholeOfShards(grid, whole, split,
                                       [&](int64_t r) { return ranks[r][i]; }));
    } else if (split) {
      combined.push_back(
          joinSlices(gather(tensorRanks, i), split->dim, split->groups));
    } else if (role == roles::kOutput && !first.shape().empty()) {
      combined.push_back(joinSlices(gather(replicas, i), 0));
    } else if ((role == roles::kLoss || role == roles::kMetric) &&
               ::dlc::isFloat(first.dtype())) {
      Tensor mean = first;
      for (int64_t e = 0; e < first.numElements(); ++e) {
        double sum = 0;
        for (int64_t r : replicas)
          sum += ranks[r][i].getDouble(e);
        store(mean, e, sum / static_cast<double>(replicas.size()));
      }
      combined.push_back(std::move(mean));
    } else {
      combined.push_back(first);
    }
  }
  return combined;
}

GlobalValues wholeGlobals(ModuleOp module, Evaluator &evaluator) {
  const RankGrid &grid = evaluator.grid();
  GlobalValues wholes;
  for (GlobalOp global : module.getOps<GlobalOp>()) {
    StringRef name = global.getSymName();
    DictionaryAttr attrs = global->getAttrDictionary();
    auto gather = [&](ArrayRef<int64_t> group) {
      std::vector<Tensor> values;
      for (int64_t r : group)
        values.push_back(evaluator.globals(r)[name]);
      return values;
    };
    std::optional<roles::TpSplit> split = roles::tpSplitIn(attrs);
    if (RankedTensorType whole = roles::shardedTypeOf(attrs)) {
      wholes[name] = wholeOfShards(grid, whole, split, [&](int64_t r) {
        return evaluator.globals(r)[name];
      });
    } else if (split) {
      wholes[name] = joinSlices(gather(grid.tensorGroups().front()), split->dim,
                                split->groups);
    } else {
      wholes[name] = evaluator.globals()[name];
    }
  }
  return wholes;
}

} // namespace mlir::dlc::tools
