//===- LowerToPlan.cpp - Memory-planned functions to plan ops -------------===//

#include "codegen/AttentionKernels.h"
#include "codegen/plan/Passes.h"
#include "codegen/plan/PlanBuffers.h"
#include "codegen/plan/PlanKernels.h"
#include "ir/Locations.h"
#include "ir/Roles.h"
#include "passes/fusion/Fusion.h"
#include "passes/memory/BufferPlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dlc::codegen {
#define GEN_PASS_DEF_DLCLOWERTOPLAN
#include "codegen/plan/Passes.h.inc"

namespace {

/// Wraps `op` (a fusion or a fused attention op) in a launch of its kernel
/// with `kernel`'s schedule, in its place.
void wrapInLaunch(Operation *op, const EmittedKernel &kernel) {
  OpBuilder builder(op);
  auto launch = LaunchOp::create(builder, op->getLoc(), op->getResultTypes(),
                                 op->getOperands(),
                                 /*kernel=*/nullptr, kernel.iterations,
                                 kernel.grain, kernel.threadsPerIteration);
  if (Attribute offsets = op->getAttr(kArenaOffsetsAttr)) {
    launch->setAttr(kArenaOffsetsAttr, offsets);
    op->removeAttr(kArenaOffsetsAttr);
  }
  Block *body = builder.createBlock(&launch.getBody());
  for (Value operand : op->getOperands())
    body->addArgument(operand.getType(), operand.getLoc());
  op->replaceAllUsesWith(launch.getResults());
  op->moveBefore(body, body->end());
  op->setOperands(body->getArguments());
  builder.setInsertionPointToEnd(body);
  PlanYieldOp::create(builder, op->getLoc(), op->getResults());
}

/// Whether the libraries (cuBLASLt, cuDNN, oneDNN, BLAS) compute on
/// `op`'s element type; bfloat16 and float16 accumulate in float32.
bool hasLibraryType(Operation *op) {
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  return element.isF32() || element.isF64() || element.isBF16() ||
         element.isF16();
}

/// dlc.matmul -> dlc.plan.matmul, where a library call computes it.
LogicalResult lowerMatmul(MatmulOp op) {
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t m = lhsType.getDimSize(lhsType.getRank() - 2);
  int64_t k = lhsType.getDimSize(lhsType.getRank() - 1);
  int64_t n = rhsType.getDimSize(rhsType.getRank() - 1);
  // An empty result has nothing to compute: the plan keeps no step for it.
  if (BufferPlacement::byteSize(op.getResult()) != 0) {
    if (k == 0)
      return op.emitOpError() << "contracts over an empty dimension; compiled "
                                 "matmuls need k >= 1";
    int64_t batch = resultType.getNumElements() / std::max<int64_t>(1, m * n);
    for (auto [type, matrix] :
         {std::make_pair(lhsType, m * k), std::make_pair(rhsType, k * n)}) {
      int64_t count = type.getNumElements() / std::max<int64_t>(1, matrix);
      if (count != batch && count != 1)
        return op.emitOpError()
               << "broadcasts only some batch dimensions of an operand; "
                  "compiled matmuls take full or no batch dimensions";
    }
    if (!hasLibraryType(op))
      return op.emitOpError()
             << "on " << resultType.getElementType()
             << " has no compiled kernel (float32, float64, bfloat16, "
                "float16)";
  }
  OpBuilder builder(op);
  auto call = PlanMatmulOp::create(
      builder, op.getLoc(), op.getType(), op.getLhs(), op.getRhs(),
      /*lhs_transposed=*/false, /*rhs_transposed=*/false, /*bias=*/Value(),
      MatmulEpilogue::none);
  // The offsets, and dlc-fuse's epilogue mark for dlc-fold-epilogues.
  for (StringRef name :
       {StringRef(kArenaOffsetsAttr), StringRef(kEpilogueAttr)})
    if (Attribute value = op->getAttr(name))
      call->setAttr(name, value);
  op.replaceAllUsesWith(call.getResult());
  op.erase();
  return success();
}

/// dlc.conv and its gradient ops -> dlc.plan.conv on `engine`.
LogicalResult lowerConv(Operation *op, Target target, ConvEngine engine) {
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (BufferPlacement::byteSize(op->getResult(0)) != 0) {
    if (!hasLibraryType(op))
      return op->emitOpError()
             << "has no compiled kernel for its element type (float32, "
                "float64, bfloat16, float16)";
    // What the runtime's engines take (runtime/cpu/Conv.cpp,
    // runtime/cuda/Dnn.cpp), so that a demand it cannot honour fails here
    // rather than when a session opens.
    if (engine == ConvEngine::direct && target == Target::Cuda)
      return op->emitOpError() << "cannot run on the direct engine: CUDA "
                                  "convolutions run on cuDNN (conv-engine "
                                  "auto or library)";
    if (engine == ConvEngine::library && target == Target::Cpu &&
        (resultType.getElementType().isF64() || resultType.getRank() > 5))
      return op->emitOpError()
             << "cannot run on the library engine: oneDNN convolves float32, "
                "bfloat16 and float16 over 1 to 3 spatial dimensions "
                "(conv-engine auto or direct)";
  }
  OpBuilder builder(op);
  auto create = [&](auto conv, ConvKind kind, Value lhs, Value rhs) {
    return PlanConvOp::create(builder, op->getLoc(), resultType, kind, lhs, rhs,
                              conv.getStride(), conv.getPadLow(),
                              conv.getPadHigh(), conv.getDilation(),
                              conv.getGroups(), conv.getChannelsLast(), engine);
  };
  PlanConvOp call =
      TypeSwitch<Operation *, PlanConvOp>(op)
          .Case([&](ConvOp c) {
            return create(c, ConvKind::forward, c.getInput(), c.getFilter());
          })
          .Case([&](ConvGradInputOp g) {
            return create(g, ConvKind::backward_data, g.getGradOutput(),
                          g.getFilter());
          })
          .Case([&](ConvGradFilterOp g) {
            return create(g, ConvKind::backward_filter, g.getInput(),
                          g.getGradOutput());
          });
  // The offsets, and dlc-fuse's epilogue mark for a later fold.
  for (StringRef name :
       {StringRef(kArenaOffsetsAttr), StringRef(kEpilogueAttr)})
    if (Attribute value = op->getAttr(name))
      call->setAttr(name, value);
  op->replaceAllUsesWith(call);
  op->erase();
  return success();
}

/// Replaces `op` with the plan step `step`, on the same buffers.
void replaceWithStep(Operation *op, Operation *step) {
  if (Attribute offsets = op->getAttr(kArenaOffsetsAttr))
    step->setAttr(kArenaOffsetsAttr, offsets);
  op->replaceAllUsesWith(step->getResults());
  op->erase();
}

/// A bucket's all-reduce becomes its plan step, on the same buffers.
LogicalResult lowerAllReduce(AllReduceOp op) {
  Type element =
      cast<RankedTensorType>(op.getInputs().front().getType()).getElementType();
  for (Value input : op.getInputs())
    if (cast<RankedTensorType>(input.getType()).getElementType() != element)
      return op.emitOpError()
             << "mixes element types in one bucket; dlc-data-parallel "
                "starts a bucket where the type changes";
  OpBuilder builder(op);
  auto step = PlanAllReduceOp::create(builder, op.getLoc(), op.getInputs(),
                                      op.getReduction(), /*tensor=*/false,
                                      op.getBucket());
  replaceWithStep(op, step);
  return success();
}

/// The bucket number after every collective's in `op`'s block.
int64_t nextBucket(Operation *op) {
  int64_t next = 0;
  for (Operation &other : *op->getBlock())
    if (auto bucket = other.getAttrOfType<IntegerAttr>("bucket");
        bucket &&
        isa<AllReduceOp, PlanAllReduceOp, ReduceScatterOp, AllGatherOp>(other))
      next = std::max(next, bucket.getInt() + 1);
  return next;
}

/// Megatron-LM's pair on one rank: dlc.tp_reduce is an all-reduce step
/// among the rank's tensor group, dlc.tp_copy (the identity, which marked
/// where the backward all-reduce goes) a copy into its planned buffer.
LogicalResult lowerTensorParallel(Operation *op, Target target) {
  if (target == Target::Cuda)
    return op->emitOpError() << "has no CUDA path yet: tensor-parallel "
                                "modules run on CPU ranks (--target cpu)";
  OpBuilder builder(op);
  Operation *step;
  if (auto reduce = dyn_cast<TpReduceOp>(op))
    step = PlanAllReduceOp::create(
        builder, op->getLoc(), ValueRange{reduce.getInput()},
        RankReduction::sum, /*tensor=*/true, nextBucket(op));
  else
    step = PlanCopyOp::create(builder, op->getLoc(), op->getResultTypes(),
                              op->getOperands());
  replaceWithStep(op, step);
  return success();
}

/// One op's lowering; failure when it has no compiled path on `target`
/// (its own diagnostic says why).
LogicalResult lowerOp(Operation &op, Target target, ConvEngine convEngine) {
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    // Transposed matmul operands are views: dlc-fold-transposes.
    if (transposedMatmulOperand(fusion))
      return success();
    FailureOr<EmittedKernel> kernel =
        emitKernel(fusion, kKernelPlaceholder, target);
    if (failed(kernel))
      return failure();
    wrapInLaunch(fusion, *kernel);
    return success();
  }
  if (isa<AttentionOp, AttentionGradOp>(op)) {
    FailureOr<EmittedKernel> kernel =
        emitAttentionKernel(&op, kKernelPlaceholder);
    if (failed(kernel))
      return failure();
    wrapInLaunch(&op, *kernel);
    return success();
  }
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return lowerMatmul(matmul);
  if (isa<ConvOp, ConvGradInputOp, ConvGradFilterOp>(op))
    return lowerConv(&op, target, convEngine);
  if (auto reduce = dyn_cast<AllReduceOp>(op))
    return lowerAllReduce(reduce);
  if (isa<TpCopyOp, TpReduceOp>(op))
    return lowerTensorParallel(&op, target);
  // A transfer between pipeline stages is its own step.
  if (isa<PpTransferOp>(op)) {
    if (target == Target::Cuda)
      return op.emitOpError() << "has no CUDA path yet: pipelined modules "
                                 "run on CPU ranks (--target cpu)";
    return success();
  }
  // ZeRO-1's steps (and the rank's block of random draws' offsets,
  // dlc.rank_shard) are these ops themselves, on the same buffers.
  if (isa<ReduceScatterOp, AllGatherOp, RankShardOp>(op))
    return success();
  if (isa<ReshapeOp, ConstantOp, func::ReturnOp>(op))
    return success();
  if (isa<LaunchOp, PlanMatmulOp, PlanConvOp, PlanCopyOp, PlanAllReduceOp>(op))
    return op.emitOpError() << "is lowered to the execution plan already; "
                               "dlc-lower-to-plan takes memory-planned dlc "
                               "IR (dlc-compile --emit=fused)";
  return op.emitOpError() << "has no compiled kernel yet (it is not in a "
                             "dlc.fusion and is no library op)";
}

LogicalResult lowerFunction(func::FuncOp func, Target target,
                            ConvEngine convEngine) {
  if (failed(checkPlanFunction(func)))
    return failure();
  if (!func->hasAttr(kArenaSizeAttr))
    return func.emitOpError()
           << "has no memory plan; run dlc-plan-memory before codegen";
  Block &block = func.getBody().front();
  for (Operation &op : block)
    if (isa<GlobalLoadOp, GlobalStoreOp>(op))
      return op.emitOpError() << "reads or writes a global; compiled "
                                 "functions take globals as arguments (run "
                                 "dlc-functionalize)";
  // Which results need a copy, decided before the function changes.
  BufferPlacement placement(func);
  // Every op without a compiled path is reported in one error, as autodiff
  // reports every op without a gradient rule: each op's diagnostic is
  // caught and listed.
  SmallVector<std::string> refused;
  {
    ScopedDiagnosticHandler catcher(func.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      refused.push_back(describeLocation(d.getLocation()) + ": " + d.str());
      return success();
    });
    for (Operation &op : llvm::make_early_inc_range(block)) {
      // The ops that replace `op` run on its pipeline stage.
      Attribute stage = op.getAttr(roles::kPipelineStageAttr);
      Operation *before = op.getPrevNode(), *after = op.getNextNode();
      if (failed(lowerOp(op, target, convEngine)) && refused.empty())
        refused.push_back(describeLocation(op.getLoc()) + ": failed");
      if (!stage)
        continue;
      for (Operation *made = before ? before->getNextNode() : &block.front();
           made != after; made = made->getNextNode())
        made->setAttr(roles::kPipelineStageAttr, stage);
    }
  }
  if (!refused.empty()) {
    InFlightDiagnostic diag = func.emitOpError()
                              << "has " << refused.size()
                              << (refused.size() == 1 ? " op" : " ops")
                              << " without a compiled path on "
                              << (target == Target::Cpu ? "the CPU" : "CUDA")
                              << ": ";
    llvm::interleave(refused, diag, "; ");
    return failure();
  }
  Operation *terminator = block.getTerminator();
  OpBuilder builder(terminator);
  for (unsigned index = 0; index < terminator->getNumOperands(); ++index)
    if (placement.needsCopy(index))
      terminator->setOperand(
          index, PlanCopyOp::create(builder, terminator->getLoc(),
                                    terminator->getOperand(index).getType(),
                                    terminator->getOperand(index)));
  return success();
}

struct LowerToPlan : impl::DLCLowerToPlanBase<LowerToPlan> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(lowerFunction(func, target, convEngine)))
        return signalPassFailure();
    module->setAttr(kPlanTargetAttr,
                    StringAttr::get(module.getContext(),
                                    target == Target::Cpu ? "cpu" : "cuda"));
  }
};

} // namespace

} // namespace mlir::dlc::codegen
