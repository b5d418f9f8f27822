//===- PlanBuffers.h - The buffers each plan step touches -------*- C++ -*-===//
//
// The memory plan (passes/memory/BufferPlacement.h, arena offsets) as the
// module's buffer references (dlcm.fbs BufferRef), for the passes that must
// prove two steps independent (dlc-fold-epilogues, dlc-horizontal-fusion)
// and for the module writer, which writes these references.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_PLAN_PLANBUFFERS_H
#define DLC_CODEGEN_PLAN_PLANBUFFERS_H

#include "codegen/HorizontalFusion.h"
#include "passes/memory/BufferPlacement.h"

#include <functional>
#include <optional>

namespace mlir::dlc::codegen {

class PlanBuffers {
public:
  /// The number of the module constant holding a dlc.constant's value.
  using ConstantNumbering = std::function<FailureOr<uint32_t>(ConstantOp)>;

  /// Buffers of `func`'s plan. Constants are numbered by `numbering`, or,
  /// without one, in the order they are first referenced (enough to tell
  /// them apart).
  explicit PlanBuffers(func::FuncOp func, ConstantNumbering numbering = {});

  /// The buffer holding `value`.
  FailureOr<fb::BufferRef> refOf(Value value);
  /// The bytes `value` occupies.
  static uint64_t bytesOf(Value value);

  /// The buffers step `op` reads then writes, or std::nullopt when `op` is
  /// no step (a view, a constant, a library call with an empty result).
  /// Fails where a buffer has no placement (its diagnostic says why).
  FailureOr<std::optional<StepBuffers>> stepBuffers(Operation *op);

  const BufferPlacement &placement() const { return placements; }

private:
  BufferPlacement placements;
  ConstantNumbering numbering;
  llvm::DenseMap<Value, uint32_t> localConstants;
};

/// Checks that `func` is a compiled function a plan pass can read: it has
/// one block (its diagnostic says why not).
LogicalResult checkPlanFunction(func::FuncOp func);

/// Moves the views and constants that `value` is computed from (dlc.reshape
/// chains, dlc.constant) above `point` when they are below it in its block,
/// so that an op moved up to `point` may read `value`. Steps are never
/// moved: the passes that move ops have proven them independent.
void hoistViewsAbove(Value value, Operation *point);

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_PLAN_PLANBUFFERS_H
