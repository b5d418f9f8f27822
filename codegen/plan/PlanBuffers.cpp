//===- PlanBuffers.cpp - The buffers each plan step touches ---------------===//

#include "codegen/plan/PlanBuffers.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::codegen;

PlanBuffers::PlanBuffers(func::FuncOp func, ConstantNumbering numbering)
    : placements(func), numbering(std::move(numbering)) {}

uint64_t PlanBuffers::bytesOf(Value value) {
  return static_cast<uint64_t>(BufferPlacement::byteSize(value));
}

FailureOr<fb::BufferRef> PlanBuffers::refOf(Value value) {
  Value base = placements.base(value);
  const Placement &p = placements.of(base);
  switch (p.kind) {
  case Placement::Kind::Argument:
    return fb::BufferRef(fb::BufferKind::Argument, p.index, 0);
  case Placement::Kind::Result:
    return fb::BufferRef(fb::BufferKind::Result, p.index, 0);
  case Placement::Kind::Constant: {
    if (numbering) {
      FailureOr<uint32_t> index = numbering(base.getDefiningOp<ConstantOp>());
      if (failed(index))
        return failure();
      return fb::BufferRef(fb::BufferKind::Constant, *index, 0);
    }
    auto [it, inserted] = localConstants.try_emplace(
        base, static_cast<uint32_t>(localConstants.size()));
    return fb::BufferRef(fb::BufferKind::Constant, it->second, 0);
  }
  case Placement::Kind::Arena: {
    Operation *def = base.getDefiningOp();
    auto offsets = def->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttr);
    unsigned resultNumber = cast<OpResult>(base).getResultNumber();
    if (!offsets || offsets.size() <= static_cast<int64_t>(resultNumber) ||
        offsets[resultNumber] < 0)
      return def->emitOpError()
             << "has no arena offset; run dlc-plan-memory before lowering to "
                "the plan";
    return fb::BufferRef(fb::BufferKind::Arena, 0,
                         static_cast<uint64_t>(offsets[resultNumber]));
  }
  case Placement::Kind::View:
    break;
  }
  llvm_unreachable("views resolve to their base");
}

FailureOr<std::optional<StepBuffers>> PlanBuffers::stepBuffers(Operation *op) {
  // Reads, then writes.
  SmallVector<Value> reads, writes;
  if (auto launch = dyn_cast<LaunchOp>(op)) {
    llvm::append_range(reads, launch.getInputs());
    llvm::append_range(writes, launch.getResults());
  } else if (auto matmul = dyn_cast<PlanMatmulOp>(op)) {
    reads = {matmul.getLhs(), matmul.getRhs()};
    if (matmul.getBias())
      reads.push_back(matmul.getBias());
    writes = {matmul.getResult()};
  } else if (auto conv = dyn_cast<PlanConvOp>(op)) {
    reads = {conv.getLhs(), conv.getRhs()};
    writes = {conv.getResult()};
  } else if (auto copy = dyn_cast<PlanCopyOp>(op)) {
    reads = {copy.getInput()};
    writes = {copy.getResult()};
  } else if (isa<PlanAllReduceOp, ReduceScatterOp, AllGatherOp, RankShardOp,
                 PpTransferOp>(op)) {
    llvm::append_range(reads, op->getOperands());
    llvm::append_range(writes, op->getResults());
  } else {
    return std::optional<StepBuffers>();
  }
  // An empty library result has nothing to compute.
  if (isa<PlanMatmulOp, PlanConvOp>(op) && bytesOf(writes.front()) == 0)
    return std::optional<StepBuffers>();
  StepBuffers buffers{{}, {}, static_cast<unsigned>(writes.size())};
  for (Value v : llvm::concat<Value>(reads, writes)) {
    FailureOr<fb::BufferRef> ref = refOf(v);
    if (failed(ref))
      return failure();
    buffers.refs.push_back(*ref);
    buffers.bytes.push_back(bytesOf(v));
  }
  return std::optional<StepBuffers>(std::move(buffers));
}

LogicalResult mlir::dlc::codegen::checkPlanFunction(func::FuncOp func) {
  if (func.isExternal())
    return func.emitOpError()
           << "is a declaration; compiled functions have a body";
  if (!func.getBody().hasOneBlock())
    return func.emitOpError() << "has more than one block; compiled "
                                 "functions are single-block";
  return success();
}

void mlir::dlc::codegen::hoistViewsAbove(Value value, Operation *point) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() ||
      def->isBeforeInBlock(point) || !isa<ReshapeOp, ConstantOp>(def))
    return;
  for (Value operand : def->getOperands())
    hoistViewsAbove(operand, point);
  def->moveBefore(point);
}
