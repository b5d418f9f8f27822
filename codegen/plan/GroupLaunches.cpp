//===- GroupLaunches.cpp - Independent launches as one (CUDA) -------------===//
//
// The groups come from codegen/HorizontalFusion.h, which sees each step as
// the buffers it reads and writes; this pass builds each group's launch.
//
//===----------------------------------------------------------------------===//

#include "codegen/plan/Passes.h"
#include "codegen/plan/PlanBuffers.h"
#include "codegen/plan/PlanKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dlc::codegen {
#define GEN_PASS_DEF_DLCHORIZONTALFUSION
#include "codegen/plan/Passes.h.inc"

namespace {

/// Replaces the launches `members` (in plan order; `group` says where each
/// of their buffers goes) by one launch where the first was.
LogicalResult buildGroup(MutableArrayRef<LaunchOp> members,
                         const StepGroup &group) {
  LaunchOp first = members.front();
  // The group's arguments: the value each read slot was first read as.
  unsigned reads = group.buffers.refs.size() - group.buffers.outputs;
  SmallVector<Value> inputs(reads);
  SmallVector<Type> resultTypes;
  SmallVector<int64_t> offsets;
  for (auto [member, slots] : llvm::zip(members, group.slots)) {
    for (auto [input, slot] : llvm::zip(member.getInputs(), slots))
      if (!inputs[slot])
        inputs[slot] = input;
    llvm::append_range(resultTypes, member.getResultTypes());
    auto memberOffsets =
        member->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttr);
    for (unsigned i = 0; i < member.getNumResults(); ++i)
      offsets.push_back(memberOffsets ? memberOffsets[i] : -1);
  }
  for (Value input : inputs)
    hoistViewsAbove(input, first);
  OpBuilder builder(first);
  auto launch = LaunchOp::create(builder, first.getLoc(), resultTypes, inputs,
                                 /*kernel=*/nullptr, 0, 1, 1);
  launch->setAttr(kArenaOffsetsAttr, builder.getDenseI64ArrayAttr(offsets));
  Block *body = builder.createBlock(&launch.getBody());
  for (Value input : inputs)
    body->addArgument(input.getType(), input.getLoc());
  SmallVector<Value> yielded;
  for (auto [member, slots] : llvm::zip(members, group.slots)) {
    IRMapping mapping;
    for (auto [argument, slot] :
         llvm::zip(member.getBody().getArguments(), slots)) {
      // A slot several members read may be a view of another shape in
      // this member (a dlc.reshape of the same bytes).
      Value shared = body->getArgument(slot);
      if (shared.getType() != argument.getType())
        shared = ReshapeOp::create(builder, argument.getLoc(),
                                   argument.getType(), shared);
      mapping.map(argument, shared);
    }
    // The member's whole body (a group's own views too), less its yield.
    Block &memberBody = member.getBody().front();
    for (Operation &op : memberBody.without_terminator())
      builder.clone(op, mapping);
    for (Value value : memberBody.getTerminator()->getOperands())
      yielded.push_back(mapping.lookup(value));
  }
  PlanYieldOp::create(builder, first.getLoc(), yielded);
  FailureOr<EmittedKernel> kernel =
      emitLaunchKernel(launch, kKernelPlaceholder, Target::Cuda);
  if (failed(kernel))
    return failure();
  launch.setIterations(kernel->iterations);
  launch.setGrain(kernel->grain);
  launch.setThreads(kernel->threadsPerIteration);
  unsigned result = 0;
  for (LaunchOp member : members) {
    for (Value value : member.getResults())
      value.replaceAllUsesWith(launch.getResult(result++));
    member.erase();
  }
  return success();
}

LogicalResult groupFunction(func::FuncOp func) {
  if (failed(checkPlanFunction(func)))
    return failure();
  PlanBuffers buffers(func);
  // The plan's steps as horizontal fusion sees them: a launch of a
  // generated fusion kernel may join others of its threads per iteration;
  // every other step runs alone (class 0).
  SmallVector<Operation *> steps;
  std::vector<StepSummary> plan;
  for (Operation &op : func.getBody().front()) {
    FailureOr<std::optional<StepBuffers>> step = buffers.stepBuffers(&op);
    if (failed(step))
      return failure();
    if (!*step)
      continue;
    // An empty value still orders its writer before its readers (the
    // reader's operand is defined there): one byte, for the hazards.
    for (uint64_t &bytes : (*step)->bytes)
      bytes = std::max<uint64_t>(bytes, 1);
    auto launch = dyn_cast<LaunchOp>(op);
    unsigned groupClass =
        launch && !launch.getAttention() && launch.getIterations() > 0
            ? static_cast<unsigned>(launch.getThreads())
            : 0;
    steps.push_back(&op);
    plan.push_back({std::move(**step), groupClass});
  }
  for (const StepGroup &group : groupSteps(plan)) {
    if (group.members.size() == 1)
      continue;
    SmallVector<LaunchOp> members;
    for (size_t member : group.members)
      members.push_back(cast<LaunchOp>(steps[member]));
    if (failed(buildGroup(members, group)))
      return failure();
  }
  return success();
}

struct HorizontalFusion : impl::DLCHorizontalFusionBase<HorizontalFusion> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Target> target = planTarget(module, getArgument());
    if (failed(target))
      return signalPassFailure();
    if (*target != Target::Cuda) {
      module.emitError() << getArgument()
                         << " groups CUDA kernels; this plan is for the CPU, "
                            "whose kernels run alone";
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(groupFunction(func)))
        return signalPassFailure();
  }
};

} // namespace

} // namespace mlir::dlc::codegen
