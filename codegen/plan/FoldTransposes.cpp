//===- FoldTransposes.cpp - Transposed matmul operands as library flags ---===//

#include "codegen/plan/Passes.h"
#include "passes/memory/BufferPlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dlc::codegen {
#define GEN_PASS_DEF_DLCFOLDTRANSPOSES
#include "codegen/plan/Passes.h.inc"

namespace {

struct FoldTransposes : impl::DLCFoldTransposesBase<FoldTransposes> {
  void runOnOperation() override {
    llvm::SetVector<FusionOp> folded;
    getOperation().walk([&](PlanMatmulOp op) {
      auto fold = [&](OpOperand &operand, auto getFlag, auto setFlag) {
        auto fusion = operand.get().getDefiningOp<FusionOp>();
        Value source = fusion ? transposedMatmulOperand(fusion) : Value();
        if (!source)
          return;
        operand.set(source);
        // Transposing a transposed read reads the stored layout.
        setFlag(!getFlag());
        folded.insert(fusion);
      };
      fold(
          op.getLhsMutable(), [&] { return op.getLhsTransposed(); },
          [&](bool on) { op.setLhsTransposed(on); });
      fold(
          op.getRhsMutable(), [&] { return op.getRhsTransposed(); },
          [&](bool on) { op.setRhsTransposed(on); });
    });
    // Every user of such a fusion is a library matmul, now reading its
    // input instead.
    for (FusionOp fusion : folded)
      if (fusion->use_empty())
        fusion.erase();
  }
};

} // namespace

} // namespace mlir::dlc::codegen
