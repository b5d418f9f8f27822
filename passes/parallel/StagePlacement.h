//===- StagePlacement.h - Which pipeline stages run each op ----*- C++ -*-===//
//
// In a module cut into pipeline stages, each rank runs only part of a
// function: the ops of its stage, and what that stage needs of the ops the
// passes after dlc-pipeline-schedule left or made without a stage
// (canonicalization, decomposition, the optimizer update, a weight's
// transpose). This analysis decides, for every op of a function's body,
// which stages run it, by two walks:
//   - backward, the stages that read each value: an op with a stage reads
//     its operands there, a dlc.pp_transfer on its sender's, a result
//     marked with a stage there;
//   - forward, the stages that hold each value: arguments and constants
//     every stage; a dlc.pp_transfer's result its operand's holders and its
//     receiver; any other op's result the stages that run it.
// An op without a stage runs on the one stage that reads its results, or
// on every stage when several do (then every stage must hold its operands),
// or, when no stage reads them (a result without a stage, such as an
// updated parameter), where its operands are held, narrowed to the stage
// of its users when they all run on one. An op read both by stages and by
// such ops (a clipping coefficient every stage's update reads) runs
// wherever its operands are, narrowed alike. A value used where it
// is not held (a value crossing stages without a transfer) is an error on
// the op that uses it. dlc-pipeline-place, dlc-lower-to-plan and the module
// writer share it, so that the IR's stages and the plan's agree.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_PARALLEL_STAGEPLACEMENT_H
#define DLC_PASSES_PARALLEL_STAGEPLACEMENT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>

namespace mlir::dlc {

class StagePlacement {
public:
  /// A set of stages, bit s for stage s.
  using Stages = uint64_t;
  static constexpr int64_t kMaxStages = 64;

  /// The stages of `module` (dlc.pipeline_stages), 1 when it has none.
  static int64_t stagesOf(ModuleOp module);

  /// Places the ops of `func`'s body among `stages` stages (2 to
  /// kMaxStages). Fails, with an error on the op, where a value is used on
  /// a stage that does not hold it.
  static FailureOr<StagePlacement> compute(func::FuncOp func, int64_t stages);

  /// The stages that run `op` (a transfer's: its sender and receiver).
  Stages runs(Operation *op) const { return runs_.lookup(op); }
  /// The stages that hold `value` once it is computed.
  Stages holds(Value value) const;
  /// Every stage.
  Stages all() const { return all_; }
  /// The stage of a single-stage set, or -1 for any other.
  static int64_t single(Stages stages);
  /// The first stage of a non-empty set.
  static int64_t first(Stages stages);

private:
  explicit StagePlacement(Stages all) : all_(all) {}

  Stages all_;
  llvm::DenseMap<Operation *, Stages> runs_;
  llvm::DenseMap<Value, Stages> holds_;
};

} // namespace mlir::dlc

#endif // DLC_PASSES_PARALLEL_STAGEPLACEMENT_H
