//===- PlanKernels.h - The kernel of a dlc.plan.launch ----------*- C++ -*-===//
//
// One place that turns a launch into its kernel, for every pass that needs
// the kernel's schedule or source (dlc-lower-to-plan, dlc-horizontal-
// fusion, dlc-name-kernels) and for the module writer: a launch of one
// fusion is that fusion's kernel, a launch of several a horizontal group's
// kernel (KernelEmitter's emitKernelGroup), a launch of an attention op its
// hand-tiled kernel (AttentionKernels.h).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_PLAN_PLANKERNELS_H
#define DLC_CODEGEN_PLAN_PLANKERNELS_H

#include "codegen/KernelEmitter.h"

#include <string>

namespace mlir::dlc::codegen {

/// The name kernels are emitted under before dlc-name-kernels names them,
/// so that identical kernels have identical sources.
inline constexpr char kKernelPlaceholder[] = "DLC_KERNEL_NAME";

/// The module attribute saying which target a plan was lowered for
/// ("cpu" or "cuda"), set by dlc-lower-to-plan.
inline constexpr char kPlanTargetAttr[] = "dlc.plan_target";

/// The target `module`'s plan was lowered for, or failure (with a
/// diagnostic naming `pass`) when it has none.
FailureOr<Target> planTarget(ModuleOp module, llvm::StringRef pass);

/// Emits the kernel `launch` runs as `name` for `target`.
FailureOr<EmittedKernel> emitLaunchKernel(LaunchOp launch, llvm::StringRef name,
                                          Target target);

/// The comment a kernel's source starts with: where its work comes from.
std::string launchHeader(LaunchOp launch);

/// The step's location in the module (and its profiles): the kernel's op,
/// and for a group how many more kernels run with it.
std::string launchLocation(LaunchOp launch);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_PLAN_PLANKERNELS_H
