//===- SplitReductions.cpp - Two-pass reductions for few long rows --------===//
//
// reduce(x, axes) with too few rows for the GPU (Schedule.h's
// chooseReductionSplit) becomes
//   partial = reduce(reshape(x, [..., c, n / c, ...]), axes')
//   result  = reduce(partial, [the chunk axis])
// where n is one reduced axis's size and c the smallest of its divisors
// that gives at least the chunks asked for (at most twice as many). The
// outermost reduced axis is tried first: its chunks are the largest
// contiguous stretches of each row.
//
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "passes/Passes.h"
#include "passes/fusion/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCSPLITREDUCTIONS
#include "passes/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// The smallest divisor of `size` in [wanted, 2 * wanted], or 0.
int64_t chunkCount(int64_t size, int64_t wanted) {
  for (int64_t d = wanted; d <= 2 * wanted && d <= size; ++d)
    if (size % d == 0)
      return d;
  return 0;
}

/// Splits `op` (a dlc.reduce_*) into two reductions when `device` asks
/// for it. Returns whether it did.
template <typename OpT>
bool split(OpT op, const DeviceModel &device) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> axes(op.getAxes());
  llvm::sort(axes);
  if (axes.empty() || !type.hasStaticShape())
    return false;
  ReductionShape reduction;
  reduction.rows = cast<RankedTensorType>(op.getType()).getNumElements();
  reduction.rowLength = 1;
  for (int64_t axis : axes)
    reduction.rowLength *= shape[axis];
  reduction.elementBytes =
      std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  reduction.contiguous = axes.back() == type.getRank() - 1;
  int64_t wanted = chooseReductionSplit(reduction, device);
  if (wanted <= 1)
    return false;
  int64_t axis = -1, chunks = 0;
  for (int64_t a : axes)
    if ((chunks = chunkCount(shape[a], wanted))) {
      axis = a;
      break;
    }
  if (axis < 0)
    return false;

  // [..., chunks, n / chunks, ...]; the reduced axes move past the chunk
  // axis, which the partial keeps.
  SmallVector<int64_t> chunked(shape.begin(), shape.begin() + axis);
  chunked.push_back(chunks);
  chunked.push_back(shape[axis] / chunks);
  chunked.append(shape.begin() + axis + 1, shape.end());
  SmallVector<int64_t> partialAxes;
  for (int64_t a : axes)
    partialAxes.push_back(a < axis ? a : a + 1);
  // Where the chunk axis is in the partial: reduced axes before it are
  // gone unless kept.
  int64_t chunkAxis = axis;
  if (!op.getKeepDims())
    chunkAxis -= llvm::count_if(axes, [&](int64_t a) { return a < axis; });

  OpBuilder b(op);
  Location loc = op.getLoc();
  Value reshaped = grad::reshape(b, loc, op.getInput(), chunked);
  Value partial =
      OpT::create(b, loc, reshaped, partialAxes, op.getKeepDims());
  Value result = OpT::create(b, loc, partial, {chunkAxis}, false);
  op.replaceAllUsesWith(result);
  op.erase();
  return true;
}

struct DLCSplitReductionsPass
    : mlir::dlc::impl::DLCSplitReductionsBase<DLCSplitReductionsPass> {
  using DLCSplitReductionsBase::DLCSplitReductionsBase;

  void runOnOperation() override {
    if (multiprocessors <= 0 || threadsPerMultiprocessor <= 0) {
      getOperation().emitError()
          << "dlc-split-reductions: multiprocessors and "
             "threads-per-multiprocessor must be positive (got "
          << multiprocessors.getValue() << " and "
          << threadsPerMultiprocessor.getValue() << ")";
      return signalPassFailure();
    }
    DeviceModel device{multiprocessors, threadsPerMultiprocessor};
    SmallVector<Operation *> reductions;
    getOperation().walk([&](Operation *op) {
      if (isa<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp>(op) &&
          isa<func::FuncOp>(op->getParentOp()))
        reductions.push_back(op);
    });
    for (Operation *op : reductions)
      llvm::TypeSwitch<Operation *>(op)
          .Case<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp>(
              [&](auto reduce) { split(reduce, device); });
  }
};

} // namespace
