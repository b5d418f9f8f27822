//===- PipelineSchedule.cpp - Micro-batches through the stages in 1F1B ----===//
//
// After dlc-pipeline-partition and dlc-autodiff, every op of the gradient
// function that reads the batch carries the pipeline stage that computes
// it. This pass makes the function one training step over M micro-batches
// (GPipe's gradient accumulation) and orders its ops as the stages run them
// under PipeDream-Flush's 1F1B schedule (Narayanan et al. 2021, Megatron-
// LM's default): one function for every rank, each rank running the ops of
// its stage in the order they appear. That order is one total order of all
// stages' work, so a transfer (a send on one rank, a receive on another)
// that both ranks reach in it cannot deadlock: the first op of the order
// not yet run is always one its ranks can run.
//
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "passes/Passes.h"
#include "passes/parallel/Timetable.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <tuple>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPIPELINESCHEDULE
#include "passes/Passes.h.inc"

namespace {

/// The stage that holds `op`'s results; none for a constant, which every
/// stage has.
std::optional<int64_t> stageOf(Operation *op) {
  if (!op || op->hasTrait<OpTrait::ConstantLike>())
    return std::nullopt;
  if (auto transfer = dyn_cast<PpTransferOp>(op))
    return transfer.getTo();
  if (auto stage = op->getAttrOfType<IntegerAttr>(roles::kPipelineStageAttr))
    return stage.getInt();
  return std::nullopt;
}

std::optional<int64_t> stageOf(Value v) { return stageOf(v.getDefiningOp()); }

class PipelineSchedulePass
    : public impl::DLCPipelineScheduleBase<PipelineSchedulePass> {
public:
  using DLCPipelineScheduleBase::DLCPipelineScheduleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (microbatches < 1) {
      module.emitError() << "dlc-pipeline-schedule: microbatches must be at "
                            "least 1, got "
                         << static_cast<int64_t>(microbatches);
      return signalPassFailure();
    }
    auto stages =
        module->getAttrOfType<IntegerAttr>(roles::kPipelineStagesAttr);
    if (!stages) {
      module.emitError() << "dlc-pipeline-schedule: the module has no "
                            "pipeline stages (dlc.pipeline_stages); run "
                            "dlc-pipeline-partition first";
      return signalPassFailure();
    }
    if (auto done =
            module->getAttrOfType<IntegerAttr>(roles::kMicrobatchesAttr)) {
      module.emitError() << "dlc-pipeline-schedule: the module is already "
                            "scheduled for "
                         << done.getInt() << " micro-batches";
      return signalPassFailure();
    }
    bool any = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      bool staged = !func.isExternal() && func.getBody().hasOneBlock() &&
                    llvm::any_of(func.getBody().front(), [](Operation &op) {
                      return op.hasAttr(roles::kPipelineStageAttr);
                    });
      bool gradients = false;
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        gradients |=
            roles::roleOf(func.getResultAttrDict(i)) == roles::kGradient;
      if (!staged)
        continue;
      // A function the schedule leaves (@loss) runs on one device: its
      // stages would have no transfers between them.
      if (!gradients) {
        func.walk(
            [](Operation *op) { op->removeAttr(roles::kPipelineStageAttr); });
        continue;
      }
      any = true;
      if (failed(schedule(func, stages.getInt())))
        return signalPassFailure();
    }
    if (!any) {
      module.emitError() << "dlc-pipeline-schedule: no function returns "
                            "gradients of staged ops; run dlc-autodiff on "
                            "the partitioned loss first";
      return signalPassFailure();
    }
    module->setAttr(
        roles::kMicrobatchesAttr,
        Builder(module.getContext()).getI64IntegerAttr(microbatches));
  }

private:
  LogicalResult schedule(func::FuncOp func, int64_t stages) {
    const int64_t micro = microbatches;
    Block &body = func.getBody().front();
    Operation *ret = body.getTerminator();
    // What the step returns: the loss and gradients, each the mean of the
    // micro-batches'.
    int64_t lossResult = -1;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      StringRef role = roles::roleOf(func.getResultAttrDict(i));
      if (role == roles::kLoss && lossResult < 0) {
        lossResult = i;
        continue;
      }
      if (role != roles::kGradient && micro > 1)
        return func.emitOpError()
               << "returns " << (role.empty() ? "a value" : role) << " '"
               << roles::nameOf(func.getResultAttrDict(i)) << "' (result #" << i
               << "), which micro-batches do not combine yet: only the loss "
                  "and the gradients are averaged over them";
    }
    if (lossResult < 0)
      return func.emitOpError() << "returns no loss: a pipelined step's "
                                   "backward starts from its loss";
    // The micro-batch's rows of every input and label.
    SmallVector<BlockArgument> data;
    for (BlockArgument arg : body.getArguments()) {
      DictionaryAttr attrs = func.getArgAttrDict(arg.getArgNumber());
      StringRef role = roles::roleOf(attrs);
      if (role != roles::kInput && role != roles::kLabel)
        continue;
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.getRank() == 0 || type.isDynamicDim(0))
        return func.emitOpError()
               << "has " << role << " '" << roles::nameOf(attrs) << "' of "
               << arg.getType()
               << ", with no static leading (batch) dimension to cut into "
                  "micro-batches";
      data.push_back(arg);
    }

    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    // The forward ops: those the loss reads.
    llvm::DenseSet<Operation *> forward;
    SmallVector<Value> work = {ret->getOperand(lossResult)};
    while (!work.empty()) {
      Operation *op = work.pop_back_val().getDefiningOp();
      if (op && forward.insert(op).second)
        work.append(op->operand_begin(), op->operand_end());
    }
    // An op without a stage that reads staged values (the backward of a
    // weight's transpose, the sum of a tied weight's gradients) runs on one
    // of their stages: in the backward, where they all exist, the earliest
    // (backwards run from the last stage to the first, and it receives the
    // others'); in the forward, the latest.
    Builder attrs(func.getContext());
    for (Operation *op : ops) {
      if (op->hasAttr(roles::kPipelineStageAttr))
        continue;
      std::optional<int64_t> stage;
      for (Value operand : op->getOperands())
        if (std::optional<int64_t> s = stageOf(operand))
          stage = !stage                 ? *s
                  : forward.contains(op) ? std::max(*stage, *s)
                                         : std::min(*stage, *s);
      if (stage)
        op->setAttr(roles::kPipelineStageAttr, attrs.getI64IntegerAttr(*stage));
    }
    // Ops that read a micro-batch.
    llvm::DenseSet<Value> perMicro(data.begin(), data.end());
    llvm::DenseSet<Operation *> perMicroOps;
    for (Operation *op : ops)
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return perMicro.contains(v); })) {
        perMicroOps.insert(op);
        perMicro.insert(op->result_begin(), op->result_end());
      }
    // A loss divided by a count of its labels (cross-entropy's labels not
    // ignored, dlc.loss_count) divides each micro-batch's sum by the whole
    // batch's count, which every stage computes from the labels ahead of
    // the micro-batches: the micro-batches' losses and gradients then add
    // up to one device's, however many labels each ignores.
    SmallVector<Value> counts;
    llvm::DenseSet<Operation *> countOps;
    for (Operation *op : ops) {
      if (!op->hasAttr(roles::kLossCountAttr) || op->getNumResults() != 1 ||
          !perMicroOps.contains(op))
        continue;
      // The ops it reads that read a micro-batch, which must read nothing
      // but the labels and constants.
      llvm::DenseSet<Operation *> chain;
      SmallVector<Operation *> pending = {op};
      bool labelsAlone = true;
      while (!pending.empty() && labelsAlone) {
        Operation *next = pending.pop_back_val();
        if (!chain.insert(next).second)
          continue;
        for (Value operand : next->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (producer && perMicroOps.contains(producer))
            pending.push_back(producer);
          else if (!producer && perMicro.contains(operand))
            labelsAlone &= roles::roleOf(func.getArgAttrDict(
                               cast<BlockArgument>(operand).getArgNumber())) ==
                           roles::kLabel;
        }
      }
      if (!labelsAlone)
        continue;
      counts.push_back(op->getResult(0));
      countOps.insert(chain.begin(), chain.end());
    }
    // Each task's ops, in their order.
    std::map<std::tuple<int64_t, bool>, SmallVector<Operation *>> taskOps;
    SmallVector<Operation *> once;
    for (Operation *op : ops) {
      std::optional<int64_t> stage = stageOf(op);
      if (countOps.contains(op))
        continue;
      if (!perMicroOps.contains(op))
        once.push_back(op);
      else if (!stage)
        return op->emitOpError()
               << "reads the batch but has no pipeline stage "
                  "(dlc.pp_stage): dlc-pipeline-partition stages every "
                  "such op";
      else
        taskOps[{*stage, !forward.contains(op)}].push_back(op);
    }

    // The batch grows to the micro-batches' rows.
    for (BlockArgument arg : data) {
      auto type = cast<RankedTensorType>(arg.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[0] *= micro;
      arg.setType(type.clone(shape));
    }
    OpBuilder b(ret);
    llvm::DenseMap<std::pair<Value, int64_t>, Value> transfers;
    // `value` where stage `to` reads it: itself, or its transfer from the
    // stage that computes it, sent right after it is computed.
    auto at = [&](Value value, std::optional<int64_t> to) -> Value {
      std::optional<int64_t> from = stageOf(value);
      if (!to || !from || *from == *to)
        return value;
      Value &sent = transfers[{value, *to}];
      if (!sent) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointAfterValue(value);
        sent = PpTransferOp::create(b, value.getLoc(), value, *from, *to);
      }
      return sent;
    };
    auto cloneOp = [&](Operation *op, IRMapping &mapping) {
      Operation *copy = b.clone(*op, mapping);
      std::optional<int64_t> stage = stageOf(op);
      for (OpOperand &operand : copy->getOpOperands())
        operand.set(at(operand.get(), stage));
    };
    IRMapping shared;
    for (Operation *op : once)
      cloneOp(op, shared);
    // Each micro-batch's rows of the inputs and labels, which every stage
    // that reads them slices itself.
    SmallVector<IRMapping> perMicroMapping(micro, shared);
    for (auto [m, mapping] : llvm::enumerate(perMicroMapping))
      for (BlockArgument arg : data) {
        auto type = cast<RankedTensorType>(arg.getType());
        SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
            strides(type.getRank(), 1);
        sizes[0] /= micro;
        offsets[0] = static_cast<int64_t>(m) * sizes[0];
        mapping.map(arg, SliceOp::create(b, arg.getLoc(), arg, offsets, sizes,
                                         strides));
      }
    // The whole batch's counts: each micro-batch's, summed, on every stage.
    for (Value count : counts) {
      Value total;
      for (IRMapping &mapping : perMicroMapping) {
        for (Operation *op : ops)
          if (countOps.contains(op) && !mapping.contains(op->getResult(0)))
            b.clone(*op, mapping)->removeAttr(roles::kPipelineStageAttr);
        Value own = mapping.lookup(count);
        total = total ? AddOp::create(b, count.getLoc(), total, own) : own;
      }
      for (IRMapping &mapping : perMicroMapping)
        mapping.map(count, total);
    }
    // The order of a timetable of equal stages, a backward costing two
    // forwards (two matmuls for each of the forward's).
    SmallVector<double> forwardCost(stages, 1), backwardCost(stages, 2);
    for (const PipelineTask &task :
         oneForwardOneBackward(stages, micro, forwardCost, backwardCost))
      for (Operation *op : taskOps[{task.stage, task.backward}])
        cloneOp(op, perMicroMapping[task.micro]);

    // The loss and each gradient: the micro-batches' sum (of losses over
    // the whole batch's count) or mean (of means over equal micro-batches),
    // summed as each micro-batch's is computed.
    SmallVector<Value> results;
    for (auto [i, old] : llvm::enumerate(ret->getOperands())) {
      Value sum = perMicroMapping[0].lookupOrDefault(old);
      for (int64_t m = 1; m < micro; ++m) {
        Value next = perMicroMapping[m].lookupOrDefault(old);
        OpBuilder::InsertionGuard guard(b);
        Operation *after = sum.getDefiningOp();
        if (Operation *nextOp = next.getDefiningOp();
            !after || (nextOp && after->isBeforeInBlock(nextOp)))
          after = nextOp;
        if (after)
          b.setInsertionPointAfter(after);
        else
          b.setInsertionPointToStart(&body);
        auto add = AddOp::create(b, old.getLoc(), sum, next);
        add->setAttr(roles::kAccumulateAttr, attrs.getUnitAttr());
        if (std::optional<int64_t> stage = stageOf(next))
          add->setAttr(roles::kPipelineStageAttr,
                       attrs.getI64IntegerAttr(*stage));
        sum = add;
      }
      if (micro > 1 && counts.empty()) {
        auto type = cast<RankedTensorType>(sum.getType());
        Value scale = ConstantOp::create(
            b, old.getLoc(),
            DenseElementsAttr::get(
                RankedTensorType::get({}, type.getElementType()),
                b.getFloatAttr(type.getElementType(),
                               1.0 / static_cast<double>(micro))));
        auto mean = MulOp::create(b, old.getLoc(), sum, scale);
        if (std::optional<int64_t> stage = stageOf(sum))
          mean->setAttr(roles::kPipelineStageAttr,
                        attrs.getI64IntegerAttr(*stage));
        sum = mean;
      }
      if (std::optional<int64_t> stage = stageOf(sum))
        func.setResultAttr(i, roles::kPipelineStageAttr,
                           attrs.getI64IntegerAttr(*stage));
      results.push_back(sum);
    }
    ret->setOperands(results);
    for (Operation *op : llvm::reverse(ops)) {
      op->dropAllUses();
      op->erase();
    }
    func.setFunctionType(FunctionType::get(
        func.getContext(), body.getArgumentTypes(), ret->getOperandTypes()));
    return success();
  }
};

} // namespace
} // namespace mlir::dlc
