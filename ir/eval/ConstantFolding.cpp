//===- ConstantFolding.cpp - Fold dlc ops on constants by evaluating them -===//
//
// The dialect's fallback folder: when every operand of an op is a constant,
// the op is run by the reference evaluator and replaced by its result. The
// importer relies on it to turn exporters' shape subgraphs
// (Shape -> Gather -> Concat -> Reshape) into constants, and canonicalization
// uses it everywhere. Folding through the evaluator means a folded result is
// by construction what evaluation would have produced.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/eval/Evaluator.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FoldInterfaces.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// Ops with operands or results larger than this stay unfolded: folding
/// would copy big weights into the IR (a transposed 50257x768 embedding is
/// 150 MB of attribute).
constexpr int64_t kMaxFoldedElements = 1 << 16;

struct DLCFoldInterface : public DialectFoldInterface {
  using DialectFoldInterface::DialectFoldInterface;

  LogicalResult fold(Operation *op, ArrayRef<Attribute> operands,
                     SmallVectorImpl<OpFoldResult> &results) const final {
    // Ops with effects (dropout's randomness) and ops that read state are
    // not pure functions of their operands.
    if (!isPure(op) || op->getNumResults() == 0 || op->getNumRegions() != 0)
      return failure();
    // Operands count too: a splat constant is small in the IR but would be
    // materialized in full to evaluate (a sum of a 10^12-element splat).
    auto small = [](Type t) {
      auto type = dyn_cast<RankedTensorType>(t);
      return type && type.getNumElements() <= kMaxFoldedElements;
    };
    if (!llvm::all_of(op->getResultTypes(), small) ||
        !llvm::all_of(op->getOperandTypes(), small))
      return failure();
    SmallVector<Tensor> values;
    for (Attribute a : operands) {
      auto elements = dyn_cast_or_null<ElementsAttr>(a);
      if (!elements)
        return failure();
      FailureOr<Tensor> value = tensorFromAttr(elements);
      if (failed(value))
        return failure();
      values.push_back(std::move(*value));
    }
    // A constant operand that makes evaluation fail (an index out of range)
    // is left for the evaluator to report when the program runs, so a fold
    // attempt must not print the diagnostic.
    SmallVector<Tensor> outputs;
    {
      ScopedDiagnosticHandler silence(op->getContext(),
                                      [](Diagnostic &) { return success(); });
      if (failed(evaluateOp(op, values, outputs)))
        return failure();
    }
    for (auto [value, type] : llvm::zip(outputs, op->getResultTypes()))
      results.push_back(attrFromTensor(value, cast<RankedTensorType>(type)));
    return success();
  }
};

} // namespace

void DLCDialect::registerConstantFolding() {
  addInterfaces<DLCFoldInterface>();
}
