//===- SplitReductions.cpp - Two-pass reductions for few long rows --------===//
//
// reduce(x, axes) with too few rows for the GPU (Schedule.h's
// chooseReductionSplit) becomes
//   partial = reduce(reshape(x, [..., c, n / c, ...]), axes')
//   result  = reduce(partial, [the chunk axis])
// where n is the size of a run of adjacent reduced axes (merged into one)
// and c the smallest of its divisors that gives at least the chunks asked
// for (at most twice as many). The outermost run is tried first: its
// chunks are the largest contiguous stretches of each row.
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
  // The first run of adjacent reduced axes whose product has a divisor
  // near `wanted`: [first, last] become [chunks, product / chunks].
  int64_t first = -1, last = -1, chunks = 0, product = 1;
  for (size_t i = 0; i < axes.size() && !chunks;) {
    size_t j = i;
    product = shape[axes[i]];
    while (j + 1 < axes.size() && axes[j + 1] == axes[j] + 1)
      product *= shape[axes[++j]];
    if ((chunks = chunkCount(product, wanted)))
      first = axes[i], last = axes[j];
    i = j + 1;
  }
  if (!chunks)
    return false;

  SmallVector<int64_t> chunked(shape.begin(), shape.begin() + first);
  chunked.push_back(chunks);
  chunked.push_back(product / chunks);
  chunked.append(shape.begin() + last + 1, shape.end());
  // The run's axes are one axis after the chunk axis, which the partial
  // keeps; axes past the run move by the run's change in rank.
  SmallVector<int64_t> partialAxes;
  for (int64_t a : axes)
    if (a < first)
      partialAxes.push_back(a);
    else if (a == first)
      partialAxes.push_back(first + 1);
    else if (a > last)
      partialAxes.push_back(a - (last - first) + 1);
  // Where the chunk axis is in the partial: reduced axes before it are
  // gone unless kept.
  int64_t chunkAxis = first;
  if (!op.getKeepDims())
    chunkAxis -= llvm::count_if(axes, [&](int64_t a) { return a < first; });

  OpBuilder b(op);
  Location loc = op.getLoc();
  Value reshaped = grad::reshape(b, loc, op.getInput(), chunked);
  Value partial =
      OpT::create(b, loc, reshaped, partialAxes, op.getKeepDims());
  Value result = OpT::create(b, loc, partial, {chunkAxis}, false);
  // Kept dimensions of a run of several axes are one fewer.
  if (result.getType() != op.getType())
    result = grad::reshape(b, loc, result,
                           cast<RankedTensorType>(op.getType()).getShape());
  op.replaceAllUsesWith(result);
  op.erase();
  return true;
}

struct DLCSplitReductionsPass
    : impl::DLCSplitReductionsBase<DLCSplitReductionsPass> {
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

} // namespace mlir::dlc
