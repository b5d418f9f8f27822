//===- StagePlacement.cpp - Which pipeline stages run each op -------------===//

#include "passes/parallel/StagePlacement.h"

#include "ir/Dialect.h"
#include "ir/Roles.h"

#include "llvm/ADT/bit.h"

namespace mlir::dlc {

namespace {

StagePlacement::Stages bit(int64_t stage) {
  return StagePlacement::Stages(1) << stage;
}

/// "stage 1" or "stages 0, 2".
std::string describeStages(StagePlacement::Stages stages) {
  std::string text;
  int count = 0;
  for (int64_t s = 0; s < StagePlacement::kMaxStages; ++s)
    if (stages & bit(s)) {
      text += (count++ ? ", " : "") + std::to_string(s);
    }
  return (count == 1 ? "stage " : "stages ") + text;
}

std::optional<int64_t> ownStage(Operation *op) {
  if (auto stage = op->getAttrOfType<IntegerAttr>(roles::kPipelineStageAttr))
    return stage.getInt();
  return std::nullopt;
}

} // namespace

int64_t StagePlacement::stagesOf(ModuleOp module) {
  auto stages = module->getAttrOfType<IntegerAttr>(roles::kPipelineStagesAttr);
  return stages ? stages.getInt() : 1;
}

int64_t StagePlacement::single(Stages stages) {
  return llvm::has_single_bit(stages) ? llvm::countr_zero(stages) : -1;
}

int64_t StagePlacement::first(Stages stages) {
  return llvm::countr_zero(stages);
}

StagePlacement::Stages StagePlacement::holds(Value value) const {
  auto it = holds_.find(value);
  return it == holds_.end() ? all_ : it->second;
}

FailureOr<StagePlacement> StagePlacement::compute(func::FuncOp func,
                                                  int64_t stages) {
  if (stages < 2 || stages > kMaxStages)
    return func.emitOpError()
           << "is in a module of " << stages
           << " pipeline stages; placement takes 2 to " << kMaxStages;
  StagePlacement placement(stages == kMaxStages ? ~Stages(0) : bit(stages) - 1);
  Block &body = func.getBody().front();

  // Backward: the stages that read each value, and whether an op no stage
  // demands reads it (one that will run where its operands are: an update
  // reading a clipping coefficient every stage holds).
  llvm::DenseMap<Value, Stages> readers;
  llvm::DenseMap<Value, bool> readAnywhere;
  llvm::DenseMap<Operation *, Stages> demanded;
  llvm::DenseMap<Operation *, bool> anywhere;
  for (Operation &op : llvm::reverse(body)) {
    if (op.hasTrait<OpTrait::ReturnLike>()) {
      for (auto [index, operand] : llvm::enumerate(op.getOperands()))
        if (auto stage = func.getResultAttrOfType<IntegerAttr>(
                index, roles::kPipelineStageAttr))
          readers[operand] |= bit(stage.getInt());
      continue;
    }
    Stages reads = 0;
    bool flexible = false;
    if (auto transfer = dyn_cast<PpTransferOp>(op)) {
      reads = bit(transfer.getFrom());
    } else if (std::optional<int64_t> stage = ownStage(&op)) {
      reads = bit(*stage);
    } else {
      for (Value result : op.getResults()) {
        reads |= readers.lookup(result);
        flexible |= readAnywhere.lookup(result);
      }
      flexible |= reads == 0;
    }
    demanded[&op] = reads;
    anywhere[&op] = flexible;
    for (Value operand : op.getOperands()) {
      readers[operand] |= reads;
      readAnywhere[operand] |= flexible;
    }
  }

  // Forward: the stages that hold each value, and those that run each op.
  auto missing = [&](Operation &op, unsigned index, Stages where) {
    return op.emitOpError()
           << "uses operand #" << index << " on "
           << describeStages(where & ~placement.holds(op.getOperand(index)))
           << ", which does not hold it (held on "
           << describeStages(placement.holds(op.getOperand(index)))
           << "): a value crosses stages only through dlc.pp_transfer";
  };
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::ReturnLike>()) {
      for (auto [index, operand] : llvm::enumerate(op.getOperands()))
        if (auto stage = func.getResultAttrOfType<IntegerAttr>(
                index, roles::kPipelineStageAttr);
            stage && !(placement.holds(operand) & bit(stage.getInt())))
          return missing(op, index, bit(stage.getInt()));
      continue;
    }
    Stages runs;
    if (op.hasTrait<OpTrait::ConstantLike>()) {
      runs = placement.all_;
    } else if (auto transfer = dyn_cast<PpTransferOp>(op)) {
      if (!(placement.holds(transfer.getInput()) & bit(transfer.getFrom())))
        return missing(op, 0, bit(transfer.getFrom()));
      runs = bit(transfer.getFrom()) | bit(transfer.getTo());
      placement.runs_[&op] = runs;
      placement.holds_[transfer.getResult()] =
          placement.holds(transfer.getInput()) | bit(transfer.getTo());
      continue;
    } else {
      Stages available = placement.all_;
      for (Value operand : op.getOperands())
        available &= placement.holds(operand);
      Stages reads = demanded.lookup(&op);
      if (std::optional<int64_t> stage = ownStage(&op))
        runs = bit(*stage);
      else if (reads == 0)
        // Read by no stage (a result without one): where it can be.
        runs = available == placement.all_ || available == 0
                   ? available
                   : bit(first(available));
      else if (anywhere.lookup(&op) && (reads & ~available) == 0 &&
               (available == placement.all_ || llvm::has_single_bit(available)))
        // Read by those stages and by ops that run where their operands
        // are: wherever it can be, narrowed below if its users turn out to
        // run on one stage.
        runs = available;
      else if (llvm::has_single_bit(reads))
        runs = reads;
      else
        // Several stages read it: each computes it.
        runs = placement.all_;
      for (auto [index, operand] : llvm::enumerate(op.getOperands()))
        if ((runs & placement.holds(operand)) != runs)
          return missing(op, index, runs);
      if (runs == 0)
        return op.emitOpError()
               << "reads values no single stage holds together";
    }
    placement.runs_[&op] = runs;
    for (Value result : op.getResults())
      placement.holds_[result] = runs;
  }

  // An op every stage runs that its users do not all need (it reads
  // arguments only: a weight decay's product feeding one stage's update)
  // goes where its users run, last to first, so that chains of them follow
  // their stage too.
  for (Operation &op : llvm::reverse(body)) {
    if (op.hasTrait<OpTrait::ReturnLike>() ||
        op.hasTrait<OpTrait::ConstantLike>() || isa<PpTransferOp>(op) ||
        ownStage(&op) || placement.runs_[&op] != placement.all_)
      continue;
    Stages users = 0;
    bool returned = false;
    for (Value result : op.getResults())
      for (Operation *user : result.getUsers()) {
        if (user->hasTrait<OpTrait::ReturnLike>())
          returned = true;
        else if (auto transfer = dyn_cast<PpTransferOp>(user))
          users |= bit(transfer.getFrom());
        else
          users |= placement.runs(user);
      }
    if (returned || !llvm::has_single_bit(users))
      continue;
    placement.runs_[&op] = users;
    for (Value result : op.getResults())
      placement.holds_[result] = users;
  }
  return placement;
}

} // namespace mlir::dlc
