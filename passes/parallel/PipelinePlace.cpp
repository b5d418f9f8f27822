//===- PipelinePlace.cpp - Every op of a pipelined function on its stage --===//
//
// dlc-pipeline-place (passes/Passes.td): StagePlacement's decisions written
// into the IR, and the transfers that keep a global several stages read the
// same on each of them.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "passes/Passes.h"
#include "passes/parallel/StagePlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCPIPELINEPLACE
#include "passes/Passes.h.inc"

namespace {

using Stages = StagePlacement::Stages;

/// Whether any op of `func` has a stage or is a transfer.
bool isStaged(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return isa<PpTransferOp>(op) || op->hasAttr(roles::kPipelineStageAttr)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The stages that read argument `argument` of `func`.
Stages readersOf(BlockArgument argument, const StagePlacement &placement) {
  Stages readers = 0;
  Block *body = argument.getOwner();
  for (Operation *user : argument.getUsers())
    if (Operation *op = body->findAncestorOpInBlock(*user);
        op && !op->hasTrait<OpTrait::ReturnLike>())
      readers |= placement.runs(op);
  return readers;
}

/// Sends each updated global that some stage reads but does not hold after
/// the step to that stage, from the first that holds it. Returns whether
/// it added a transfer.
bool refreshSharedGlobals(func::FuncOp func, const StagePlacement &placement) {
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  bool changed = false;
  for (unsigned index = 0; index < ret->getNumOperands(); ++index) {
    DictionaryAttr attrs = func.getResultAttrDict(index);
    if (!roles::isGlobalRole(roles::roleOf(attrs)))
      continue;
    StringRef name = roles::nameOf(attrs);
    for (BlockArgument argument : body.getArguments()) {
      if (roles::nameOf(func.getArgAttrDict(argument.getArgNumber())) != name)
        continue;
      Value value = ret->getOperand(index);
      Stages held = placement.holds(value);
      Stages missing = readersOf(argument, placement) & ~held;
      if (!missing || !held)
        break;
      OpBuilder builder(ret);
      const int64_t owner = StagePlacement::first(held);
      for (int64_t stage = 0; stage < StagePlacement::kMaxStages; ++stage)
        if (missing & (Stages(1) << stage))
          value =
              PpTransferOp::create(builder, ret->getLoc(), value, owner, stage);
      ret->setOperand(index, value);
      changed = true;
      break;
    }
  }
  return changed;
}

/// Writes `placement` into `func`: each op one stage runs gets it, each
/// op every stage runs none, and each result one stage holds gets it.
void writeStages(func::FuncOp func, const StagePlacement &placement) {
  Block &body = func.getBody().front();
  Builder builder(func.getContext());
  for (Operation &op : body) {
    if (isa<PpTransferOp>(op) || op.hasTrait<OpTrait::ReturnLike>())
      continue;
    int64_t stage = StagePlacement::single(placement.runs(&op));
    if (stage >= 0 && !op.hasTrait<OpTrait::ConstantLike>())
      op.setAttr(roles::kPipelineStageAttr, builder.getI64IntegerAttr(stage));
    else
      op.removeAttr(roles::kPipelineStageAttr);
  }
  Operation *ret = body.getTerminator();
  for (auto [index, value] : llvm::enumerate(ret->getOperands())) {
    int64_t stage = StagePlacement::single(placement.holds(value));
    if (stage >= 0)
      func.setResultAttr(index, roles::kPipelineStageAttr,
                         builder.getI64IntegerAttr(stage));
    else
      func.removeResultAttr(
          index, StringAttr::get(func.getContext(), roles::kPipelineStageAttr));
  }
}

class PipelinePlacePass : public impl::DLCPipelinePlaceBase<PipelinePlacePass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    const int64_t stages = StagePlacement::stagesOf(module);
    if (stages < 2)
      return;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !isStaged(func))
        continue;
      FailureOr<StagePlacement> placement =
          StagePlacement::compute(func, stages);
      if (succeeded(placement) && refreshSharedGlobals(func, *placement))
        placement = StagePlacement::compute(func, stages);
      if (failed(placement))
        return signalPassFailure();
      writeStages(func, *placement);
    }
  }
};

} // namespace

} // namespace mlir::dlc
