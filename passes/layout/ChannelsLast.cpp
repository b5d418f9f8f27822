//===- ChannelsLast.cpp - Convolutions in channels-last layout ------------===//
//
// Tensor-core convolutions read and write NHWC; given NCHW, cuDNN wraps
// them in transposes of its own. This pass gives every eligible
// convolution (dlc.conv and its gradients, float32/float16/bfloat16,
// 1-D to 3-D) the `channels_last` layout, and carries the layout through
// the work between convolutions so that the transposes are few and small.
//
// A value is either in its logical (channels-first) layout or rewritten to
// channels-last: stored as transpose(logical, [0, 2, ..., r-1, 1]). Walking
// the function in order:
//  - convolutions take channels-last operands and give a channels-last
//    result;
//  - elementwise ops with more channels-last operands than full-size
//    channels-first ones compute channels-last (per-channel vectors, size-1
//    and broadcast operands are moved for free: a transpose that keeps the
//    order of the dimensions larger than 1 is a reshape);
//  - broadcast_to of a channels-last operand stays channels-last;
//  - reductions of a channels-last operand reduce the moved axes (BatchNorm
//    statistics become reductions over all but the innermost axis);
//  - pools run channels-last as pools of rank r + 1 over [N, 1, s..., C]
//    with a window of 1 over C: the same windows, the same order of ties;
//  - everything else (matmuls, dropout, whose masks follow element order,
//    function results) reads the logical value, transposed back once where
//    it is first needed.
// Every rewritten op computes the same elements in the same order, so the
// result is the same bits.
//
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "ir/ShapeUtils.h"
#include "passes/Passes.h"
#include "passes/fusion/Fusion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCCHANNELSLAST
#include "passes/Passes.h.inc"

namespace {

RankedTensorType permuted(RankedTensorType type, ArrayRef<int64_t> permutation) {
  return RankedTensorType::get(permuteShape(type.getShape(), permutation),
                               type.getElementType());
}

RankedTensorType channelsLastType(RankedTensorType type) {
  return permuted(type, channelsLastPermutation(type.getRank()));
}

bool isConvolution(Operation *op) {
  return isa<ConvOp, ConvGradInputOp, ConvGradFilterOp>(op);
}

/// A convolution the pass rewrites: channels-first, with spatial
/// dimensions, of a type tensor cores take.
bool isEligibleConvolution(Operation *op) {
  if (!isConvolution(op) || op->hasAttr("channels_last"))
    return false;
  auto type = grad::typeOf(op->getResult(0));
  Type element = type.getElementType();
  return type.getRank() >= 3 &&
         (element.isF32() || element.isF16() || element.isBF16());
}

/// Elementwise ops compute each element from the same element of their
/// operands, wherever it is stored. Dropout is not one of them here: its
/// mask follows the row-major element index.
bool isLayoutFreeElementwise(Operation *op) {
  return !isa<DropoutOp, RandomUniformOp>(op) &&
         kernelRoleOf(op) == KernelRole::Elementwise;
}

class ChannelsLastRewriter {
public:
  explicit ChannelsLastRewriter(Block &block) : block_(block) {}

  void run() {
    SmallVector<Operation *> ops;
    for (Operation &op : block_)
      ops.push_back(&op);
    for (Operation *op : ops)
      visit(op);
    restoreLogicalUses();
    // What fed only rewritten ops (broadcasts, reshapes) dies with them.
    SmallVector<Operation *> feeders;
    for (Operation *op : replaced_)
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          feeders.push_back(def);
    llvm::SmallPtrSet<Operation *, 32> gone(replaced_.begin(), replaced_.end());
    for (Operation *op : llvm::reverse(replaced_))
      op->erase();
    while (!feeders.empty()) {
      Operation *op = feeders.pop_back_val();
      if (gone.contains(op) || !isOpTriviallyDead(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          feeders.push_back(def);
      gone.insert(op);
      op->erase();
    }
  }

private:
  void visit(Operation *op) {
    OpBuilder b(op);
    if (isEligibleConvolution(op))
      return rewriteConvolution(b, op);
    if (isLayoutFreeElementwise(op))
      return rewriteElementwise(b, op);
    llvm::TypeSwitch<Operation *>(op)
        .Case<BroadcastToOp>([&](BroadcastToOp broadcast) {
          if (Value input = stored(broadcast.getInput(),
                                   grad::typeOf(broadcast).getRank()))
            rewriteAs(op, BroadcastToOp::create(
                              b, op->getLoc(),
                              channelsLastType(grad::typeOf(broadcast)), input)
                              .getResult());
        })
        .Case<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp>(
            [&](auto reduce) { rewriteReduction(b, reduce); })
        .Case<MaxPoolOp, SumPoolOp>([&](auto pool) { rewritePool(b, pool); })
        .Case<MaxPoolGradOp>([&](MaxPoolGradOp pool) { rewritePoolGrad(b, pool); })
        .Case<ReshapeOp>([&](ReshapeOp reshape) {
          // Reads the stored value directly where its element order is the
          // logical one.
          Value input = stored(reshape.getInput());
          if (input && isTransposeAReshape(grad::typeOf(reshape.getInput()).getShape(),
                                           channelsLastPermutation(
                                               grad::typeOf(input).getRank())))
            reshape.getInputMutable().assign(input);
        });
  }

  /// The channels-last form of `logical` if the pass rewrote it, else null.
  Value stored(Value logical) const { return storedAs_.lookup(logical); }
  /// The same, where it has rank `rank`.
  Value stored(Value logical, int64_t rank) const {
    Value s = stored(logical);
    return s && grad::typeOf(s).getRank() == rank ? s : Value();
  }

  /// Records that `op`'s only result is now stored channels-last as
  /// `replacement`.
  void rewriteAs(Operation *op, Value replacement) {
    storedAs_[op->getResult(0)] = replacement;
    replaced_.push_back(op);
  }

  //===--------------------------------------------------------------------===//
  // Moving values between the layouts
  //===--------------------------------------------------------------------===//

  /// `value` (logical, of rank `rank` or less, broadcasting with NumPy's
  /// rules) as a rank-`rank` channels-last tensor.
  Value toChannelsLast(OpBuilder &b, Value value, int64_t rank) {
    if (Value s = stored(value, rank))
      return s;
    auto key = std::make_pair(value, rank);
    if (Value cached = channelsLastCache_.lookup(key))
      return cached;
    Location loc = value.getLoc();
    RankedTensorType type = grad::typeOf(value);
    SmallVector<int64_t> shape(rank - type.getRank(), 1);
    llvm::append_range(shape, type.getShape());
    SmallVector<int64_t> permutation = channelsLastPermutation(rank);
    SmallVector<int64_t> target = permuteShape(shape, permutation);
    Value result;
    auto broadcast = value.getDefiningOp<BroadcastToOp>();
    auto constant = value.getDefiningOp<ConstantOp>();
    auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                          : SplatElementsAttr();
    if (isTransposeAReshape(shape, permutation)) {
      result = grad::reshape(b, loc, value, target);
    } else if (splat) {
      auto targetType = RankedTensorType::get(target, type.getElementType());
      result = ConstantOp::create(b, loc, targetType, splat.resizeSplat(targetType));
    } else if (broadcast && isCheap(broadcast.getInput(), rank)) {
      result = BroadcastToOp::create(
          b, loc, RankedTensorType::get(target, type.getElementType()),
          toChannelsLast(b, broadcast.getInput(), rank));
    } else {
      Value padded = shape.size() == static_cast<size_t>(type.getRank())
                         ? value
                         : grad::reshape(b, loc, value, shape);
      result = TransposeOp::create(b, loc, padded, permutation);
    }
    channelsLastCache_[key] = result;
    return result;
  }

  /// Whether toChannelsLast(value, rank) moves no data: a reshape, a new
  /// splat or a new broadcast of such a value, or a value moved already.
  bool isCheap(Value value, int64_t rank) const {
    if (stored(value, rank) || channelsLastCache_.count({value, rank}))
      return true;
    RankedTensorType type = grad::typeOf(value);
    SmallVector<int64_t> shape(rank - type.getRank(), 1);
    llvm::append_range(shape, type.getShape());
    if (isTransposeAReshape(shape, channelsLastPermutation(rank)))
      return true;
    if (auto constant = value.getDefiningOp<ConstantOp>())
      return isa<SplatElementsAttr>(constant.getValue());
    auto broadcast = value.getDefiningOp<BroadcastToOp>();
    return broadcast && isCheap(broadcast.getInput(), rank);
  }

  /// `stored`, a tensor whose dimension i is dimension permutation[i] of
  /// `logical`'s type, as that type: a reshape where the element order
  /// agrees, else a transpose.
  static Value toLogical(OpBuilder &b, Location loc, Value stored,
                         ArrayRef<int64_t> permutation,
                         RankedTensorType logical) {
    if (isTransposeAReshape(logical.getShape(), permutation))
      return grad::reshape(b, loc, stored, logical.getShape());
    return TransposeOp::create(b, loc, logical, stored,
                               invertPermutation(permutation));
  }

  /// Gives every op the pass did not rewrite the logical form of the values
  /// it reads, converted once, before the first such op.
  void restoreLogicalUses() {
    llvm::SmallPtrSet<Operation *, 32> gone(replaced_.begin(), replaced_.end());
    for (Operation *op : replaced_) {
      Value logical = op->getResult(0);
      Value s = stored(logical);
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : logical.getUses())
        if (!gone.contains(use.getOwner()))
          uses.push_back(&use);
      if (!s || uses.empty())
        continue;
      Operation *first = nullptr;
      for (OpOperand *use : uses) {
        Operation *user = block_.findAncestorOpInBlock(*use->getOwner());
        if (!first || user->isBeforeInBlock(first))
          first = user;
      }
      OpBuilder b(first);
      Value restored =
          toLogical(b, logical.getLoc(), s,
                    channelsLastPermutation(grad::typeOf(s).getRank()),
                    grad::typeOf(logical));
      for (OpOperand *use : uses)
        use->set(restored);
    }
  }

  //===--------------------------------------------------------------------===//
  // Rewrites
  //===--------------------------------------------------------------------===//

  void rewriteConvolution(OpBuilder &b, Operation *op) {
    Location loc = op->getLoc();
    int64_t rank = grad::typeOf(op->getResult(0)).getRank();
    auto operand = [&](unsigned i) {
      return toChannelsLast(b, op->getOperand(i), rank);
    };
    RankedTensorType type = channelsLastType(grad::typeOf(op->getResult(0)));
    Value result =
        llvm::TypeSwitch<Operation *, Value>(op)
            .Case<ConvOp>([&](ConvOp conv) {
              return ConvOp::create(b, loc, operand(0), operand(1),
                                    conv.getStride(), conv.getPadLow(),
                                    conv.getPadHigh(), conv.getDilation(),
                                    conv.getGroups(), /*channels_last=*/true);
            })
            .Case<ConvGradInputOp>([&](ConvGradInputOp grad) {
              return ConvGradInputOp::create(
                  b, loc, type, operand(0), operand(1), grad.getStride(),
                  grad.getPadLow(), grad.getPadHigh(), grad.getDilation(),
                  grad.getGroups(), /*channels_last=*/true);
            })
            .Case<ConvGradFilterOp>([&](ConvGradFilterOp grad) {
              return ConvGradFilterOp::create(
                  b, loc, type, operand(0), operand(1), grad.getStride(),
                  grad.getPadLow(), grad.getPadHigh(), grad.getDilation(),
                  grad.getGroups(), /*channels_last=*/true);
            });
    rewriteAs(op, result);
  }

  void rewriteElementwise(OpBuilder &b, Operation *op) {
    if (op->getNumResults() != 1)
      return;
    RankedTensorType type = grad::typeOf(op->getResult(0));
    int64_t rank = type.getRank();
    // Channels-last operands against full-size channels-first ones that
    // would each need a transpose: the majority wins, and a tie keeps the
    // logical layout (an optimizer update of a channels-first parameter by
    // a channels-last gradient transposes the gradient once).
    int64_t channelsLast = 0, transposed = 0;
    for (Value v : op->getOperands()) {
      if (stored(v, rank))
        ++channelsLast;
      else if (grad::typeOf(v).getRank() > 0 && !isCheap(v, rank))
        ++transposed;
    }
    if (rank < 3 || channelsLast <= transposed)
      return;
    OperationState state(op->getLoc(), op->getName());
    for (Value v : op->getOperands())
      state.addOperands(grad::typeOf(v).getRank() == 0
                            ? v
                            : toChannelsLast(b, v, rank));
    state.addAttributes(op->getAttrs());
    state.addTypes(channelsLastType(type));
    rewriteAs(op, b.create(state)->getResult(0));
  }

  template <typename OpT> void rewriteReduction(OpBuilder &b, OpT reduce) {
    Value input = stored(reduce.getInput());
    if (!input)
      return;
    int64_t rank = grad::typeOf(input).getRank();
    SmallVector<int64_t> permutation = channelsLastPermutation(rank);
    SmallVector<int64_t> where = invertPermutation(permutation);
    SmallVector<int64_t> axes;
    for (int64_t axis : reduce.getAxes())
      axes.push_back(where[axis]);
    llvm::sort(axes);
    Value result =
        OpT::create(b, reduce.getLoc(), input, axes, reduce.getKeepDims());
    if (reduce.getKeepDims())
      return rewriteAs(reduce, result);
    // The dimensions left, in stored order, name logical dimensions that
    // may now be out of order.
    SmallVector<int64_t> kept;
    for (int64_t d : permutation)
      if (!llvm::is_contained(reduce.getAxes(), d))
        kept.push_back(d);
    SmallVector<int64_t> order(kept);
    llvm::sort(order);
    SmallVector<int64_t> keptPermutation;
    for (int64_t d : kept)
      keptPermutation.push_back(llvm::find(order, d) - order.begin());
    reduce.getResult().replaceAllUsesWith(
        toLogical(b, reduce.getLoc(), result, keptPermutation,
                  grad::typeOf(reduce.getResult())));
    replaced_.push_back(reduce);
  }

  /// [N, s..., C] -> [N, 1, s..., C]: a channels-last tensor as the input
  /// of a pool of one more spatial dimension.
  static Value withUnitChannel(OpBuilder &b, Location loc, Value v) {
    ArrayRef<int64_t> shape = grad::typeOf(v).getShape();
    SmallVector<int64_t> expanded = {shape[0], 1};
    expanded.append(shape.begin() + 1, shape.end());
    return grad::reshape(b, loc, v, expanded);
  }

  /// A pool attribute extended by `value` for the channel dimension.
  static SmallVector<int64_t> extended(ArrayRef<int64_t> values, int64_t value) {
    SmallVector<int64_t> result(values);
    result.push_back(value);
    return result;
  }

  template <typename OpT> void rewritePool(OpBuilder &b, OpT pool) {
    Value input = stored(pool.getInput());
    if (!input)
      return;
    Location loc = pool.getLoc();
    Value result = OpT::create(
        b, loc, withUnitChannel(b, loc, input), extended(pool.getWindow(), 1),
        extended(pool.getStride(), 1), extended(pool.getPadLow(), 0),
        extended(pool.getPadHigh(), 0), extended(pool.getDilation(), 1));
    rewriteAs(pool, grad::reshape(b, loc, result,
                                  channelsLastType(grad::typeOf(pool)).getShape()));
  }

  void rewritePoolGrad(OpBuilder &b, MaxPoolGradOp pool) {
    if (!stored(pool.getInput()) && !stored(pool.getGradOutput()))
      return;
    Location loc = pool.getLoc();
    int64_t rank = grad::typeOf(pool).getRank();
    Value input = withUnitChannel(b, loc, toChannelsLast(b, pool.getInput(), rank));
    Value dy =
        withUnitChannel(b, loc, toChannelsLast(b, pool.getGradOutput(), rank));
    Value result = MaxPoolGradOp::create(
        b, loc, input.getType(), input, dy, extended(pool.getWindow(), 1),
        extended(pool.getStride(), 1), extended(pool.getPadLow(), 0),
        extended(pool.getPadHigh(), 0), extended(pool.getDilation(), 1));
    rewriteAs(pool, grad::reshape(b, loc, result,
                                  channelsLastType(grad::typeOf(pool)).getShape()));
  }

  Block &block_;
  /// Logical value -> its channels-last form, for the values the pass
  /// rewrote.
  DenseMap<Value, Value> storedAs_;
  /// (logical value, rank) -> its channels-last form, for values moved.
  DenseMap<std::pair<Value, int64_t>, Value> channelsLastCache_;
  /// The ops whose results the pass replaced, in order.
  SmallVector<Operation *> replaced_;
};

struct DLCChannelsLastPass : impl::DLCChannelsLastBase<DLCChannelsLastPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (Block &block : func.getBody())
        ChannelsLastRewriter(block).run();
  }
};

} // namespace

} // namespace mlir::dlc
