//===- FoldEpilogues.cpp - Bias (and ReLU) epilogues in library matmuls ---===//

#include "codegen/plan/Passes.h"
#include "codegen/plan/PlanBuffers.h"
#include "codegen/plan/PlanKernels.h"
#include "passes/fusion/Fusion.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::dlc::codegen {
#define GEN_PASS_DEF_DLCFOLDEPILOGUES
#include "codegen/plan/Passes.h.inc"

namespace {

/// A launch whose whole work a matmul takes over.
struct Fold {
  PlanMatmulOp matmul;
  LaunchOp launch;
  MatmulEpilogue kind;
  /// The launch's operand the epilogue adds, by number: an earlier fold
  /// may replace the value (a bias computed by another folded matmul).
  unsigned bias;
};

/// The epilogue of the launch consuming `op`, when the launch computes
/// nothing else and `op` may write its result (see the pass description).
FailureOr<std::optional<Fold>> foldOf(PlanMatmulOp op, PlanBuffers &buffers) {
  std::optional<Fold> none;
  std::optional<MatmulEpilogue> mark = epilogueMark(op);
  Value product = op.getResult();
  Type element = getElementTypeOrSelf(product.getType());
  if (!mark || op.getEpilogue() != MatmulEpilogue::none ||
      !product.hasOneUse() || PlanBuffers::bytesOf(product) == 0 ||
      !(element.isF32() || element.isBF16() || element.isF16()))
    return none;
  auto launch = dyn_cast<LaunchOp>(*product.getUsers().begin());
  if (!launch || launch->getBlock() != op->getBlock() ||
      launch.getNumResults() != 1 ||
      launch.getResult(0).getType() != product.getType())
    return none;
  SmallVector<FusionOp> members = launch.getMembers();
  if (members.size() != 1 || launch.getAttention())
    return none;
  Block &body = members.front().getBody().front();
  Value x = body.getArgument(product.getUses().begin()->getOperandNumber());
  auto add = x.hasOneUse() ? dyn_cast<AddOp>(*x.getUsers().begin()) : AddOp();
  if (!add)
    return none;
  auto biasArgument =
      dyn_cast<BlockArgument>(add.getLhs() == x ? add.getRhs() : add.getLhs());
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t n = resultType.getDimSize(resultType.getRank() - 1);
  if (!biasArgument || biasArgument == x)
    return none;
  auto biasType = cast<RankedTensorType>(biasArgument.getType());
  if (biasType.getElementType() != resultType.getElementType() ||
      biasType.getNumElements() != n ||
      (n != 1 && (biasType.getRank() == 0 ||
                  biasType.getDimSize(biasType.getRank() - 1) != n)))
    return none;
  // Nothing but the epilogue: the add alone, or the add and its ReLU
  // yielding the launch's result. The mark says the sum has a ReLU user,
  // max(sum, 0) or select(sum <= 0, 0, sum); with no other op but the
  // select's compare (and splat constants), that user is the result.
  SmallVector<Operation *> computing;
  for (Operation &o : body.without_terminator())
    if (!isa<ConstantOp>(o))
      computing.push_back(&o);
  Operation *last = body.getTerminator()->getOperand(0).getDefiningOp();
  auto compares =
      llvm::count_if(computing, [](Operation *o) { return isa<CompareOp>(o); });
  MatmulEpilogue kind;
  if (*mark == MatmulEpilogue::bias && last == add && computing.size() == 1)
    kind = MatmulEpilogue::bias;
  else if (*mark == MatmulEpilogue::bias_relu && last &&
           llvm::is_contained(add->getUsers(), last) &&
           ((isa<MaxOp>(last) && computing.size() == 2) ||
            (isa<SelectOp>(last) && computing.size() == 3 && compares == 1)))
    kind = MatmulEpilogue::bias_relu;
  else
    return none;
  // The matmul runs where it is, writing the launch's result early: only
  // ops that are no steps may come between (views, constants), and the
  // result must not share memory with what the matmul reads (the planner
  // lets it reuse the matmul's operands, which die before the launch).
  for (Operation *between = op->getNextNode(); between != launch.getOperation();
       between = between->getNextNode())
    if (!isa<ReshapeOp, ConstantOp>(between))
      return none;
  unsigned biasOperand = biasArgument.getArgNumber();
  Value bias = launch.getInputs()[biasOperand];
  Value result = launch.getResult(0);
  FailureOr<fb::BufferRef> resultRef = buffers.refOf(result);
  if (failed(resultRef))
    return failure();
  for (Value read : {Value(op.getLhs()), Value(op.getRhs()), bias}) {
    FailureOr<fb::BufferRef> ref = buffers.refOf(read);
    if (failed(ref))
      return failure();
    if (overlaps(*ref, PlanBuffers::bytesOf(read), *resultRef,
                 PlanBuffers::bytesOf(result)))
      return none;
  }
  return std::optional<Fold>(Fold{op, launch, kind, biasOperand});
}

/// The matmul of `fold` with its epilogue, writing the launch's result.
void apply(Fold fold) {
  PlanMatmulOp op = fold.matmul;
  Value bias = fold.launch.getInputs()[fold.bias];
  hoistViewsAbove(bias, op);
  OpBuilder builder(op);
  auto call = PlanMatmulOp::create(
      builder, op.getLoc(), op.getType(), op.getLhs(), op.getRhs(),
      op.getLhsTransposedAttr(), op.getRhsTransposedAttr(), bias,
      MatmulEpilogueAttr::get(op.getContext(), fold.kind));
  if (Attribute offsets = fold.launch->getAttr(kArenaOffsetsAttr))
    call->setAttr(kArenaOffsetsAttr, offsets);
  fold.launch.getResult(0).replaceAllUsesWith(call.getResult());
  fold.launch.erase();
  op.erase();
}

struct FoldEpilogues : impl::DLCFoldEpiloguesBase<FoldEpilogues> {
  void runOnOperation() override {
    if (failed(planTarget(getOperation(), getArgument())))
      return signalPassFailure();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (failed(checkPlanFunction(func)))
        return signalPassFailure();
      // Decided on the plan as it is, then applied: a fold changes no
      // other fold's buffers (each matmul's launch is its only user; a
      // later fold's bias may become an earlier fold's matmul, which
      // writes the same buffer).
      PlanBuffers buffers(func);
      SmallVector<Fold> folds;
      WalkResult walk = func.walk([&](PlanMatmulOp op) {
        FailureOr<std::optional<Fold>> fold = foldOf(op, buffers);
        if (failed(fold))
          return WalkResult::interrupt();
        if (*fold)
          folds.push_back(**fold);
        return WalkResult::advance();
      });
      if (walk.wasInterrupted())
        return signalPassFailure();
      for (Fold &fold : folds)
        apply(fold);
    }
  }
};

} // namespace

} // namespace mlir::dlc::codegen
