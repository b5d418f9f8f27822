//===- BufferPlacement.h - Where each value of a function lives -*- C++ -*-===//
//
// The one definition of a compiled function's storage, shared by the memory
// planner (which assigns arena offsets) and the execution plan
// (codegen/plan/PlanBuffers.h, which turns placements into buffer
// references):
//  - arguments and constants keep their own storage;
//  - reshapes are views of their operand, and so is a fusion that only
//    swaps the last two dimensions for matmuls (BLAS reads either layout,
//    so dlc-fold-transposes turns it into the matmul's transposed flag);
//  - a dlc.pp_transfer of a computed value is a view of it: the sending
//    stage's rank sends from the buffer the receiving stage's rank receives
//    into, which the memory plan keeps free on every rank from the value's
//    computation to its last use (a transfer of an argument or a constant
//    gets a buffer of its own);
//  - a returned value is written straight into its result's buffer (the
//    first time it is returned; a second return, or returning an argument
//    or a constant, is a copy);
//  - everything else lives in the function's arena.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_MEMORY_BUFFERPLACEMENT_H
#define DLC_PASSES_MEMORY_BUFFERPLACEMENT_H

#include "ir/Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::dlc {

/// The attribute on an op listing each result's arena offset in bytes (-1
/// for a result not in the arena), and the function attributes with the
/// arena's size and the bytes its values would take without reuse.
inline constexpr char kArenaOffsetsAttr[] = "dlc.arena_offsets";
inline constexpr char kArenaSizeAttr[] = "dlc.arena_size";
inline constexpr char kIntermediateBytesAttr[] = "dlc.intermediate_bytes";

struct Placement {
  enum class Kind { Argument, Result, Constant, View, Arena };
  Kind kind;
  /// The argument or result number.
  unsigned index = 0;
  /// For a view, the value whose storage it shares (itself not a view).
  Value base;
};

/// The input of `fusion` when the fusion only swaps the last two dimensions
/// of it and every user is a matmul (dlc.matmul, or dlc.plan.matmul on the
/// plan level): the matmuls read the input transposed instead (a view, see
/// above; codegen/plan's dlc-fold-transposes).
Value transposedMatmulOperand(FusionOp fusion);

class BufferPlacement {
public:
  /// Classifies every value of `func`'s single block.
  explicit BufferPlacement(func::FuncOp func);

  const Placement &of(Value value) const { return placements.at(value); }
  /// The value owning `value`'s storage (itself unless a view).
  Value base(Value value) const;
  /// Whether return operand `index` must be copied into its result.
  bool needsCopy(unsigned resultIndex) const {
    return copiedResults.count(resultIndex) != 0;
  }
  /// Storage size of a value in bytes.
  static int64_t byteSize(Value value);

private:
  llvm::DenseMap<Value, Placement> placements;
  llvm::DenseSet<unsigned> copiedResults;
};

} // namespace mlir::dlc

#endif // DLC_PASSES_MEMORY_BUFFERPLACEMENT_H
