//===- PlanKernels.cpp - The kernel of a dlc.plan.launch ------------------===//

#include "codegen/plan/PlanKernels.h"
#include "codegen/AttentionKernels.h"
#include "ir/Locations.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::codegen;

FailureOr<Target> mlir::dlc::codegen::planTarget(ModuleOp module,
                                                 StringRef pass) {
  auto target = module->getAttrOfType<StringAttr>(kPlanTargetAttr);
  if (target && target.getValue() == "cpu")
    return Target::Cpu;
  if (target && target.getValue() == "cuda")
    return Target::Cuda;
  return module.emitError() << pass << " needs an execution plan; run "
                            << "dlc-lower-to-plan first";
}

FailureOr<EmittedKernel> mlir::dlc::codegen::emitLaunchKernel(LaunchOp launch,
                                                              StringRef name,
                                                              Target target) {
  if (Operation *attention = launch.getAttention())
    return emitAttentionKernel(attention, name);
  SmallVector<FusionOp> members = launch.getMembers();
  if (members.size() == 1)
    return emitKernel(members.front(), name, target);
  // A member's buffers are the launch's arguments it reads (its operands
  // are block arguments or views of them: the verifier says so) then its
  // results, which the launch yields in member order after all of its
  // arguments.
  SmallVector<SmallVector<unsigned>> slots;
  unsigned output = launch.getInputs().size();
  for (FusionOp member : members) {
    SmallVector<unsigned> &memberSlots = slots.emplace_back();
    for (Value input : member.getInputs()) {
      while (auto view = input.getDefiningOp<ReshapeOp>())
        input = view.getInput();
      memberSlots.push_back(cast<BlockArgument>(input).getArgNumber());
    }
    for (unsigned i = 0; i < member.getNumResults(); ++i)
      memberSlots.push_back(output++);
  }
  SmallVector<GroupMember> group;
  for (auto [member, memberSlots] : llvm::zip(members, slots))
    group.push_back({member, memberSlots});
  return emitKernelGroup(group, output, name);
}

std::string mlir::dlc::codegen::launchHeader(LaunchOp launch) {
  SmallVector<FusionOp> members = launch.getMembers();
  if (members.size() <= 1)
    return "// " + launchLocation(launch) + "\n";
  std::string header = "// " + std::to_string(members.size()) +
                       " kernels in one launch (HorizontalFusion.h):\n";
  for (auto [k, member] : llvm::enumerate(members))
    header += "//   member " + std::to_string(k) + ": " +
              describeLocation(member.getLoc()) + "\n";
  return header;
}

std::string mlir::dlc::codegen::launchLocation(LaunchOp launch) {
  if (Operation *attention = launch.getAttention())
    return describeLocation(attention->getLoc());
  SmallVector<FusionOp> members = launch.getMembers();
  std::string location = describeLocation(members.front().getLoc());
  size_t others = members.size() - 1;
  if (others == 0)
    return location;
  return location + " and " + std::to_string(others) +
         (others == 1 ? " more kernel" : " more kernels");
}
