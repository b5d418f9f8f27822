//===- SimulatedRanks.cpp - A data-parallel module's ranks in one process -===//
#include "tools/dlc-run/SimulatedRanks.h"

#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"

#include <cstring>

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

} // namespace

LogicalResult checkShards(func::FuncOp func, int64_t ranks) {
  auto check = [&](DictionaryAttr attrs, Type type, StringRef what,
                   unsigned i) -> LogicalResult {
    if (!attrs || !attrs.get(roles::kShardedAttr))
      return success();
    RankedTensorType whole = roles::shardedTypeOf(attrs);
    auto shard = dyn_cast<RankedTensorType>(type);
    if (ranks > 1 && whole && whole.hasStaticShape() && shard &&
        shardTypeOf(whole, ranks) == shard)
      return success();
    return func.emitOpError()
           << what << " #" << i << " of " << type << " is marked "
           << roles::kShardedAttr << " = " << attrs.get(roles::kShardedAttr)
           << ", but is not its shard over the module's " << ranks
           << " rank(s)";
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
                                                  int64_t ranks) {
  SmallVector<RankedTensorType> types;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto ranked = cast<RankedTensorType>(type);
    // A ZeRO shard's global value is the whole.
    if (RankedTensorType whole = roles::shardedTypeOf(func.getArgAttrDict(i))) {
      types.push_back(whole);
      continue;
    }
    if (isPerSample(roles::roleOf(func.getArgAttrDict(i))) &&
        ranked.getRank() > 0) {
      SmallVector<int64_t> shape(ranked.getShape());
      shape[0] *= ranks;
      ranked = ranked.clone(shape);
    }
    types.push_back(ranked);
  }
  return types;
}

SmallVector<SmallVector<Tensor>>
splitInputs(func::FuncOp func, ArrayRef<Tensor> global, int64_t ranks) {
  SmallVector<SmallVector<Tensor>> inputs(ranks);
  for (auto [i, tensor] : llvm::enumerate(global)) {
    bool split = isPerSample(roles::roleOf(func.getArgAttrDict(i))) &&
                 !tensor.shape().empty();
    bool sharded = bool(roles::shardedTypeOf(func.getArgAttrDict(i)));
    for (int64_t r = 0; r < ranks; ++r) {
      if (sharded) {
        inputs[r].push_back(shardOf(tensor, r, ranks));
        continue;
      }
      if (!split) {
        inputs[r].push_back(tensor);
        continue;
      }
      std::vector<int64_t> shape = tensor.shape();
      shape[0] /= ranks;
      Tensor share(tensor.dtype(), shape);
      std::memcpy(share.bytes(), tensor.bytes() + r * share.byteSize(),
                  share.byteSize());
      inputs[r].push_back(std::move(share));
    }
  }
  return inputs;
}

SmallVector<Tensor> combineResults(func::FuncOp func,
                                   ArrayRef<SmallVector<Tensor>> ranks) {
  SmallVector<Tensor> combined;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    StringRef role = roles::roleOf(func.getResultAttrDict(i));
    const Tensor &first = ranks.front()[i];
    if (RankedTensorType whole =
            roles::shardedTypeOf(func.getResultAttrDict(i))) {
      SmallVector<Tensor> shards;
      for (const SmallVector<Tensor> &results : ranks)
        shards.push_back(results[i]);
      combined.push_back(gatherShards(shards, first.dtype(), whole.getShape()));
    } else if (role == roles::kOutput && !first.shape().empty()) {
      std::vector<int64_t> shape = first.shape();
      shape[0] *= static_cast<int64_t>(ranks.size());
      Tensor all(first.dtype(), shape);
      for (auto [r, results] : llvm::enumerate(ranks))
        std::memcpy(all.bytes() + r * first.byteSize(), results[i].bytes(),
                    first.byteSize());
      combined.push_back(std::move(all));
    } else if ((role == roles::kLoss || role == roles::kMetric) &&
               ::dlc::isFloat(first.dtype())) {
      Tensor mean = first;
      for (int64_t e = 0; e < first.numElements(); ++e) {
        double sum = 0;
        for (const SmallVector<Tensor> &results : ranks)
          sum += results[i].getDouble(e);
        store(mean, e, sum / static_cast<double>(ranks.size()));
      }
      combined.push_back(std::move(mean));
    } else {
      combined.push_back(first);
    }
  }
  return combined;
}

} // namespace mlir::dlc::tools
