//===- Roles.h - What the arguments and results of a program are ----------===//
//
// A compiled program's functions say what each argument and result is with
// two attributes: `dlc.name` (an ONNX input, output or initializer name, or
// a name dlc chose: "loss", "dlc.step", "optimizer.<param>.exp_avg") and
// `dlc.role`. Passes set them; the runtime and dlc-run bind values by them.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_IR_ROLES_H
#define DLC_IR_ROLES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace mlir::dlc::roles {

inline constexpr StringLiteral kNameAttr = "dlc.name";
inline constexpr StringLiteral kRoleAttr = "dlc.role";
/// On a cross-entropy label: the number of classes and the ignored index,
/// for data loaders to check class indices up front.
inline constexpr StringLiteral kNumClassesAttr = "dlc.num_classes";
inline constexpr StringLiteral kIgnoreIndexAttr = "dlc.ignore_index";

// Bound to a dlc.global of the same name, updated by a result of that name.
/// A parameter: a global no function writes (trainable if float and the loss
/// depends on it).
inline constexpr StringLiteral kParam = "param";
/// Model state a function writes (BatchNorm statistics, the dropout seed).
inline constexpr StringLiteral kState = "state";
/// The global a training step's random draws (dropout, augmentation) take
/// their seed from (a tensor<i64>), advanced by one per step.
inline constexpr StringLiteral kRngSeedGlobal = "dlc.rng_seed";
inline constexpr StringLiteral kOptimizerState = "optimizer_state";
/// The number of steps taken.
inline constexpr StringLiteral kStep = "step";
/// A run-time setting of the optimizer (learning rate, weight decay).
inline constexpr StringLiteral kHyperparameter = "hyperparameter";
/// The factor the loss gradient starts from (dlc-autodiff's loss-scale),
/// an argument named kLossScaleName; dlc-optimizer makes it optimizer state.
inline constexpr StringLiteral kLossScale = "loss_scale";
inline constexpr StringLiteral kLossScaleName = "dlc.loss_scale";

/// A parameter kept in a 16-bit type for mixed precision, on a global that
/// names its float32 source with kCopyOfAttr; dlc-optimizer writes it with
/// the update, the runtime whenever the host writes the source.
inline constexpr StringLiteral kWeightCopy = "weight_copy";
inline constexpr StringLiteral kCopyOfAttr = "dlc.copy_of";

// Data.
inline constexpr StringLiteral kInput = "input";
inline constexpr StringLiteral kLabel = "label";

// Results only.
inline constexpr StringLiteral kOutput = "output";
inline constexpr StringLiteral kLoss = "loss";
inline constexpr StringLiteral kGradient = "gradient";
inline constexpr StringLiteral kMetric = "metric";

/// On a module partitioned for data parallelism (dlc-data-parallel): the
/// number of ranks, each running its functions on its share of the batch.
inline constexpr StringLiteral kDataParallelAttr = "dlc.data_parallel";
/// On a data-parallel module whose gradients are reduce-scattered (ZeRO
/// stage 1, dlc-data-parallel's zero=1): 1. The optimizer then updates each
/// rank's shard of the parameters and keeps state for that shard alone.
inline constexpr StringLiteral kZeroAttr = "dlc.zero";
/// On a value each rank holds its own ZeRO-1 shard of (1-D, dlc.rank_shard's)
/// of a whole of this attribute's type (a TypeAttr): a dlc.global of
/// optimizer state and the arguments and results that carry it (the
/// parameter's type), and a gradient function's reduce-scattered gradient
/// results (dlc-data-parallel zero=1).
inline constexpr StringLiteral kShardedAttr = "dlc.sharded";

/// The whole value's type of a sharded global's argument or result
/// (kShardedAttr), or null.
inline RankedTensorType shardedTypeOf(DictionaryAttr attrs) {
  auto type = attrs ? attrs.getAs<TypeAttr>(kShardedAttr) : TypeAttr();
  return type ? dyn_cast<RankedTensorType>(type.getValue())
              : RankedTensorType();
}

/// On a module partitioned for tensor parallelism (dlc-tensor-parallel):
/// the number of ranks in each tensor group, which split the work of the
/// layers it partitions and hold the rest alike. With dlc.data_parallel = D
/// as well, the module runs on D * T ranks: rank r is tensor rank r % T of
/// data-parallel replica r / T (tensor ranks innermost, so that a group
/// shares a machine's links, as Megatron-LM lays them out).
inline constexpr StringLiteral kTensorParallelAttr = "dlc.tensor_parallel";
/// On a value each tensor-parallel rank holds its own slice of (an i64
/// dimension d): a dlc.global and the arguments and results that carry it,
/// and the gradients and optimizer state of such a parameter. Tensor rank t
/// of T holds slice t of T equal ones along d; the whole has T times the
/// type's size in d. A global's initial value is the whole. On a ZeRO shard
/// (kShardedAttr), d is a dimension of the sharded type, the slice the
/// shard is of, and the initial value is the shard's own. As
/// `array<i64: d, g>`, the whole is g equal blocks along d, each split so
/// (a fused QKV projection: each rank holds its heads' rows of Q, of K and
/// of V, one after another).
inline constexpr StringLiteral kTpSplitAttr = "dlc.tp_split";

/// A kTpSplitAttr's dimension and blocks.
struct TpSplit {
  int64_t dim;
  int64_t groups = 1;
};

/// The split `attr` (kTpSplitAttr's value) describes, or none when it is
/// not one.
inline std::optional<TpSplit> tpSplitFromAttr(Attribute attr) {
  if (auto dim = dyn_cast_if_present<IntegerAttr>(attr))
    return TpSplit{dim.getInt()};
  if (auto pair = dyn_cast_if_present<DenseI64ArrayAttr>(attr);
      pair && pair.size() == 2)
    return TpSplit{pair[0], pair[1]};
  return std::nullopt;
}

/// kTpSplitAttr's value for `split`: the bare dimension for one block.
inline Attribute tpSplitAttr(MLIRContext *context, TpSplit split) {
  Builder b(context);
  if (split.groups == 1)
    return b.getI64IntegerAttr(split.dim);
  return b.getDenseI64ArrayAttr({split.dim, split.groups});
}

/// The split of a tensor-parallel value (kTpSplitAttr), if it is one.
inline std::optional<TpSplit> tpSplitIn(DictionaryAttr attrs) {
  return attrs ? tpSplitFromAttr(attrs.get(kTpSplitAttr)) : std::nullopt;
}

/// The dimension a tensor-parallel value is split along (kTpSplitAttr), if
/// it is.
inline std::optional<int64_t> tpSplitOf(DictionaryAttr attrs) {
  std::optional<TpSplit> split = tpSplitIn(attrs);
  return split ? std::optional<int64_t>(split->dim) : std::nullopt;
}

/// On a module partitioned into pipeline stages (dlc-pipeline-partition):
/// the number of stages, and the micro-batches each step's batch is cut
/// into (1F1B: every stage takes one micro-batch forward and one backward
/// in turn).
inline constexpr StringLiteral kPipelineStagesAttr = "dlc.pipeline_stages";
inline constexpr StringLiteral kMicrobatchesAttr = "dlc.microbatches";
/// On an op of a pipelined loss function that reads the batch: the stage
/// (an i64, 0 first) that computes it. Ops that do not read the batch (a
/// weight's transpose or cast) have none: each stage that reads one
/// computes it.
inline constexpr StringLiteral kPipelineStageAttr = "dlc.pp_stage";

/// On an add of dlc-pipeline-schedule's sums over the micro-batches (a
/// gradient's): dlc-fuse keeps it a kernel of its own, computed as soon as
/// its micro-batch's value is, so that one running sum is live instead of
/// every micro-batch's value until the optimizer's update reads them.
inline constexpr StringLiteral kAccumulateAttr = "dlc.pp_accumulate";

/// On the op computing a mean loss's denominator from the labels alone
/// (cross-entropy's count of labels not ignored): dlc-pipeline-schedule
/// divides every micro-batch's sum by the whole batch's count, so that the
/// micro-batches' losses add up to one device's.
inline constexpr StringLiteral kLossCountAttr = "dlc.loss_count";

/// Whether values of `role` live in a dlc.global between calls.
inline bool isGlobalRole(StringRef role) {
  return role == kParam || role == kState || role == kOptimizerState ||
         role == kStep || role == kHyperparameter || role == kWeightCopy;
}

/// The `dlc.name` / `dlc.role` of an argument's or result's attributes
/// ("" when absent).
inline StringRef nameOf(DictionaryAttr attrs) {
  auto name = attrs ? attrs.getAs<StringAttr>(kNameAttr) : StringAttr();
  return name ? name.getValue() : "";
}
inline StringRef roleOf(DictionaryAttr attrs) {
  auto role = attrs ? attrs.getAs<StringAttr>(kRoleAttr) : StringAttr();
  return role ? role.getValue() : "";
}

/// {dlc.name = name, dlc.role = role}.
inline DictionaryAttr attrs(MLIRContext *context, StringRef name,
                            StringRef role) {
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr(kNameAttr, b.getStringAttr(name)),
       b.getNamedAttr(kRoleAttr, b.getStringAttr(role))});
}

} // namespace mlir::dlc::roles

#endif // DLC_IR_ROLES_H
