//===- NameKernels.cpp - One name per distinct kernel ---------------------===//

#include "codegen/plan/Passes.h"
#include "codegen/plan/PlanKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

namespace mlir::dlc::codegen {
#define GEN_PASS_DEF_DLCNAMEKERNELS
#include "codegen/plan/Passes.h.inc"

namespace {

struct NameKernels : impl::DLCNameKernelsBase<NameKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Target> target = planTarget(module, getArgument());
    if (failed(target))
      return signalPassFailure();
    // Kernels emitted under the placeholder name are equal exactly when
    // their sources are.
    std::map<std::string, StringAttr> nameOf;
    WalkResult walk = module.walk([&](LaunchOp launch) {
      FailureOr<EmittedKernel> kernel =
          emitLaunchKernel(launch, kKernelPlaceholder, *target);
      if (failed(kernel))
        return WalkResult::interrupt();
      auto [it, inserted] = nameOf.try_emplace(std::move(kernel->source));
      if (inserted)
        it->second =
            StringAttr::get(module.getContext(),
                            "dlc_kernel_" + std::to_string(nameOf.size() - 1));
      launch.setKernelAttr(it->second);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

} // namespace mlir::dlc::codegen
