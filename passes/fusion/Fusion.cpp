//===- Fusion.cpp - Grouping ops into dlc.fusion kernels ------------------===//
//
// Groups are grown from consumers to producers (XLA's producer-consumer
// fusion): ops are visited last to first; an op nobody has claimed starts a
// group (its root), and a producer joins a group when every user it has is
// either in the group or comes after the root (then it becomes an extra
// result: multi-output fusion, as the optimizer update needs), and the
// control function accepts it. Codegen evaluates a group by demand: each
// value is computed at the index its users read it, so a producer read at
// many indices is recomputed; the control function weighs that
// recomputation ("reuse") against the memory round trip fusion saves.
//
// A group is outlined into a dlc.fusion at its root's position: operands
// from outside dominate the root (they dominate their users, which precede
// it), and outside users of extra results come after it by construction,
// so no use is reordered.
//
//===----------------------------------------------------------------------===//

#include "passes/fusion/Fusion.h"
#include "ir/Roles.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <deque>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCFUSE
#include "passes/Passes.h.inc"

KernelRole kernelRoleOf(Operation *op) {
  if (op->hasTrait<OpProperty::LibraryCall>())
    return KernelRole::Library;
  if (isa<ReshapeOp>(op))
    return KernelRole::View;
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    return dense && dense.isSplat() ? KernelRole::Inlined : KernelRole::Opaque;
  }
  if (op->hasTrait<OpProperty::Pointwise>())
    return KernelRole::Elementwise;
  if (op->hasTrait<OpProperty::Movement>())
    return KernelRole::Movement;
  if (op->hasTrait<OpProperty::Reducing>())
    return KernelRole::Reducing;
  if (op->hasTrait<OpProperty::Scatter>())
    return KernelRole::Scatter;
  return KernelRole::Opaque;
}

namespace {

int64_t numElementsOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// Ops whose recomputation costs more than reading their result back.
bool isExpensive(Operation *op) {
  return kernelRoleOf(op) == KernelRole::Reducing ||
         op->hasTrait<OpProperty::Expensive>();
}

/// How many producer elements one element of `user` reads (per use).
double readsPerElement(Operation *user) {
  if (isa<MaxPoolOp, SumPoolOp>(user))
    return static_cast<double>(ShapedType::getNumElements(
        user->getAttrOfType<DenseI64ArrayAttr>("window").asArrayRef()));
  // A cumulative sum reads half its line per element on average, and a
  // top_k scans its line once per rank up to its own.
  if (auto cumsum = dyn_cast<CumSumOp>(user))
    return cast<ShapedType>(cumsum.getType()).getDimSize(cumsum.getAxis()) /
           2.0;
  if (auto topK = dyn_cast<TopKOp>(user))
    return topK.getInput().getType().getDimSize(topK.getAxis()) *
           (topK.getK() + 1) / 2.0;
  if (kernelRoleOf(user) == KernelRole::Reducing)
    return static_cast<double>(numElementsOf(user->getOperand(0))) /
           std::max<int64_t>(1, numElementsOf(user->getResult(0)));
  return 1.0;
}

struct Group {
  Operation *root;
  llvm::SetVector<Operation *> members;
  /// How many times each member's result elements are computed per kernel
  /// run, and whether they are read at the root's index.
  llvm::DenseMap<Operation *, double> volume;
  llvm::DenseMap<Operation *, bool> atRoot;
};

class Grouper {
public:
  Grouper(Block &block, FusionControlFn control)
      : block(block), control(control) {}

  void run() {
    for (Operation &op : llvm::reverse(block.without_terminator())) {
      KernelRole role = kernelRoleOf(&op);
      if (groupOf.count(&op) || role == KernelRole::Library ||
          role == KernelRole::View || role == KernelRole::Inlined ||
          role == KernelRole::Opaque)
        continue;
      grow(startGroup(&op));
    }
    for (Group &group : groups)
      outline(group);
  }

private:
  Group &startGroup(Operation *root) {
    groups.emplace_back();
    Group &group = groups.back();
    group.root = root;
    add(group, root, static_cast<double>(numElementsOf(root->getResult(0))),
        /*atRoot=*/true);
    return group;
  }

  void add(Group &group, Operation *op, double volume, bool atRoot) {
    group.members.insert(op);
    group.volume[op] = volume;
    group.atRoot[op] = atRoot;
    groupOf[op] = groups.size() - 1;
  }

  /// Adds producers until none qualifies. A producer is considered once all
  /// its users are settled, so each pass may enable more.
  void grow(Group &group) {
    if (kernelRoleOf(group.root) == KernelRole::Scatter)
      return;
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = 0; i < group.members.size(); ++i) {
        Operation *member = group.members[i];
        for (Value operand : member->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (producer && producer->getBlock() == &block &&
              !groupOf.count(producer) && tryAdd(group, producer))
            changed = true;
        }
      }
    }
  }

  bool tryAdd(Group &group, Operation *producer) {
    KernelRole role = kernelRoleOf(producer);
    if (role != KernelRole::Elementwise && role != KernelRole::Movement &&
        role != KernelRole::Reducing && role != KernelRole::View)
      return false;
    // A kernel runs on one pipeline stage's ranks (dlc-pipeline-place); a
    // running sum over micro-batches is added where it is (roles.h).
    if (producer->getAttr(roles::kPipelineStageAttr) !=
            group.root->getAttr(roles::kPipelineStageAttr) ||
        producer->hasAttr(roles::kAccumulateAttr))
      return false;
    double volume = 0;
    bool atRoot = true, extraResult = false;
    Operation *consumer = nullptr;
    for (Operation *user : producer->getUsers()) {
      if (!group.members.contains(user)) {
        // Outside users must run after the fusion, which sits at the root.
        if (user->getBlock() != &block || !group.root->isBeforeInBlock(user))
          return false;
        extraResult = true;
        continue;
      }
      consumer = user;
      volume = std::max(volume, group.volume[user] * readsPerElement(user));
      atRoot &= group.atRoot[user] &&
                kernelRoleOf(user) == KernelRole::Elementwise &&
                cast<ShapedType>(producer->getResult(0).getType()).getShape() ==
                    cast<ShapedType>(user->getResult(0).getType()).getShape();
    }
    if (!consumer)
      return false;
    FusionCandidate candidate{
        producer,
        consumer,
        volume / std::max<int64_t>(1, numElementsOf(producer->getResult(0))),
        atRoot,
        extraResult,
        static_cast<unsigned>(group.members.size())};
    if (!control(candidate))
      return false;
    add(group, producer, volume, atRoot);
    return true;
  }

  /// Replaces the group's ops by one dlc.fusion at the root.
  void outline(Group &group) {
    SmallVector<Operation *> members(group.members.begin(),
                                     group.members.end());
    llvm::sort(members, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    llvm::SetVector<Value> inputs;
    llvm::SetVector<Operation *> inlined;
    SmallVector<Value> outputs;
    for (Operation *op : members) {
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && group.members.contains(def))
          continue;
        if (def && kernelRoleOf(def) == KernelRole::Inlined)
          inlined.insert(def);
        else
          inputs.insert(operand);
      }
      for (Value result : op->getResults())
        if (op == group.root ||
            llvm::any_of(result.getUsers(), [&](Operation *user) {
              return !group.members.contains(user);
            }))
          outputs.push_back(result);
    }

    OpBuilder builder(group.root);
    auto fusion = FusionOp::create(builder, group.root->getLoc(),
                                           ValueRange(outputs).getTypes(),
                                           inputs.getArrayRef());
    if (Attribute stage = group.root->getAttr(roles::kPipelineStageAttr))
      fusion->setAttr(roles::kPipelineStageAttr, stage);
    Block &body = fusion.getBody().front();
    IRMapping mapping;
    mapping.map(inputs.getArrayRef(), body.getArguments());
    builder.setInsertionPointToStart(&body);
    for (Operation *constant : inlined)
      builder.clone(*constant, mapping);
    for (Operation *op : members)
      builder.clone(*op, mapping);
    SmallVector<Value> yielded;
    for (Value output : outputs)
      yielded.push_back(mapping.lookup(output));
    YieldOp::create(builder, group.root->getLoc(), yielded);

    for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
      output.replaceUsesWithIf(result, [&](OpOperand &use) {
        return !group.members.contains(use.getOwner());
      });
    for (Operation *op : llvm::reverse(members))
      op->erase();
    for (Operation *constant : inlined)
      if (constant->use_empty())
        constant->erase();
  }

  Block &block;
  FusionControlFn control;
  std::deque<Group> groups;
  llvm::DenseMap<Operation *, size_t> groupOf;
};

} // namespace

bool defaultFusionControl(const FusionCandidate &candidate,
                          unsigned maxGroupSize) {
  if (candidate.groupSize >= maxGroupSize)
    return false;
  // An extra result is stored at the root's index; elsewhere it would need
  // a second iteration space.
  if (candidate.extraResult && !candidate.atRootIndex)
    return false;
  // A reduction or pooling read at other indices would be redone per read.
  if (kernelRoleOf(candidate.producer) == KernelRole::Reducing)
    return candidate.atRootIndex;
  // Recomputing a transcendental per broadcast element costs more than
  // the memory round trip; cheap ops are recomputed up to a bound.
  if (candidate.reuse > 1.0 && isExpensive(candidate.producer))
    return false;
  return candidate.reuse <= 64.0;
}

void fuseBlock(Block &block, FusionControlFn control) {
  Grouper(block, control).run();
}

namespace {

/// Whether `bias` varies only along dimension `channel` of `result` (the
/// last one for a matmul, the second for a convolution).
bool isChannelBias(Value bias, RankedTensorType result, int64_t channel) {
  auto type = cast<RankedTensorType>(bias.getType());
  int64_t lead = result.getRank() - type.getRank();
  if (lead < 0)
    return false;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != 1 && d + lead != channel)
      return false;
  return true;
}

/// Whether `op` is ReLU as the importer writes it: select(x <= 0, 0, x) or
/// max(x, 0), with a zero splat constant.
bool isRelu(Operation *op, Value x) {
  auto isZero = [](Value v) {
    auto constant = v.getDefiningOp<ConstantOp>();
    auto dense =
        constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    return dense && dense.isSplat() && isa<FloatType>(dense.getElementType()) &&
           dense.getSplatValue<APFloat>().isZero();
  };
  if (auto max = dyn_cast<MaxOp>(op))
    return (max.getLhs() == x && isZero(max.getRhs())) ||
           (max.getRhs() == x && isZero(max.getLhs()));
  auto select = dyn_cast<SelectOp>(op);
  if (!select || select.getOnFalse() != x || !isZero(select.getOnTrue()))
    return false;
  auto compare = select.getCondition().getDefiningOp<CompareOp>();
  return compare && compare.getPredicate() == ComparePredicate::le &&
         compare.getLhs() == x && isZero(compare.getRhs());
}

} // namespace

void markLibraryEpilogues(Block &block) {
  for (Operation &op : block) {
    int64_t channel;
    if (isa<MatmulOp>(op))
      channel = cast<RankedTensorType>(op.getResult(0).getType()).getRank() - 1;
    else if (auto conv = dyn_cast<ConvOp>(op))
      channel = conv.getChannelsLast() ? conv.getType().getRank() - 1 : 1;
    else
      continue;
    Value result = op.getResult(0);
    auto fusion = result.hasOneUse()
                      ? dyn_cast<FusionOp>(*result.getUsers().begin())
                      : FusionOp();
    if (!fusion)
      continue;
    unsigned position = result.getUses().begin()->getOperandNumber();
    Value x = fusion.getBody().getArgument(position);
    if (!x.hasOneUse())
      continue;
    auto add = dyn_cast<AddOp>(*x.getUsers().begin());
    if (!add)
      continue;
    Value bias = add.getLhs() == x ? add.getRhs() : add.getLhs();
    auto resultType = cast<RankedTensorType>(result.getType());
    if (!isa<BlockArgument>(bias) || add.getType() != resultType ||
        !isChannelBias(bias, resultType, channel))
      continue;
    Value sum = add.getResult();
    bool relu = llvm::any_of(
        sum.getUsers(), [&](Operation *user) { return isRelu(user, sum); });
    setEpilogueMark(&op,
                    relu ? MatmulEpilogue::bias_relu : MatmulEpilogue::bias);
  }
}

namespace {

struct FusePass : public impl::DLCFuseBase<FusePass> {
  using DLCFuseBase::DLCFuseBase;

  void runOnOperation() override {
    unsigned limit = maxGroupSize;
    auto control = [limit](const FusionCandidate &candidate) {
      return defaultFusionControl(candidate, limit);
    };
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (Block &block : func.getBody()) {
        fuseBlock(block, control);
        markLibraryEpilogues(block);
      }
  }
};

} // namespace

} // namespace mlir::dlc
