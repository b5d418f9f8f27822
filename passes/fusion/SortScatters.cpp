//===- SortScatters.cpp - Embedding gradients as sorted segment sums ------===//
//
// scatter_elements(data [V, ...], broadcast(ids [N, 1, ...]), rows [N, ...],
// axis 0, add) becomes
//   id      = boundedIndex(ids, V)                 (the scatter's reading)
//   key     = id * N + t                           (unique, in id order)
//   rank[t] = sum_s [key[s] < key[t]]
//   order   = sum_t t * [rank[t] == p]             (the inverse permutation)
//   starts  = scatter-min of p onto id[order[p]]    (a segment's first p)
//   result  = segment_sum(rows, id, order, starts)
// for data of zeros. Both sums are reductions of a compare over an
// N x N space that fusion computes in the reduction's kernel, with no
// N x N buffer; the scatter walks N positions in a few hundred chunks.
//
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "passes/Passes.h"
#include "passes/fusion/Schedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCSORTSCATTERS
#include "passes/Passes.h.inc"

using namespace grad;

namespace {

/// The ids [N] of `indices` when it broadcasts one id per row of its
/// first axis (the gradient rule of dlc.gather builds it so), else null.
Value rowIds(OpBuilder &b, Location loc, Value indices) {
  ArrayRef<int64_t> shape = typeOf(indices).getShape();
  Value source = indices;
  if (auto broadcast = indices.getDefiningOp<BroadcastToOp>())
    source = broadcast.getInput();
  ArrayRef<int64_t> sourceShape = typeOf(source).getShape();
  if (sourceShape.size() > shape.size())
    return nullptr;
  // Right-aligned against [N, ...]: every dimension but the first is 1 (or
  // absent), the first is N.
  size_t missing = shape.size() - sourceShape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t size = d < missing ? 1 : sourceShape[d - missing];
    if (d == 0 ? size != shape[0] : size != 1)
      return nullptr;
  }
  return reshape(b, loc, source, {shape[0]});
}

/// An i64 constant [0, 1, ..., n - 1] shaped `shape` (n elements).
Value iota(OpBuilder &b, Location loc, int64_t n, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = i;
  auto type = RankedTensorType::get(shape, b.getI64Type());
  return ConstantOp::create(b, loc,
                            DenseElementsAttr::get(type, ArrayRef(values)));
}

/// sum over axis 1 of `terms` [N, N], as i64.
Value sumRows(OpBuilder &b, Location loc, Value terms) {
  return ReduceSumOp::create(b, loc, castTo(b, loc, terms, b.getI64Type()),
                             {1}, false);
}

/// Rewrites `op` when it is an embedding gradient's scatter; returns
/// whether it did.
bool sortScatter(ScatterElementsOp op, int64_t maxRows) {
  RankedTensorType dataType = typeOf(op.getData());
  ArrayRef<int64_t> updates = typeOf(op.getUpdates()).getShape();
  int64_t rows = updates.empty() ? 0 : updates[0];
  // Into +0 only: into other data (-0 included), the scatter adds the rows
  // to it one by one, which sums from +0 added afterwards would round (or
  // sign) differently.
  if (op.getReduction() != ScatterReduction::add || op.getAxis() != 0 ||
      !matchPattern(op.getData(), m_PosZeroFloat()) ||
      !isa<FloatType>(dataType.getElementType()) || rows <= kMaxGatheredUpdates ||
      rows > maxRows ||
      updates.drop_front() != dataType.getShape().drop_front())
    return false;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value ids = rowIds(b, loc, op.getIndices());
  if (!ids)
    return false;
  Value id = castTo(b, loc, boundedIndex(b, loc, ids, dataType.getShape()[0]),
                    b.getI64Type());
  Value key = add(b, loc,
                  mul(b, loc, id,
                      scalar(b, loc, b.getI64Type(),
                             static_cast<double>(rows))),
                  iota(b, loc, rows, {rows}));
  Value smaller = CompareOp::create(b, loc, ComparePredicate::lt,
                                    reshape(b, loc, key, {1, rows}),
                                    reshape(b, loc, key, {rows, 1}));
  Value rank = sumRows(b, loc, smaller);
  Value atPosition = CompareOp::create(b, loc, ComparePredicate::eq,
                                       reshape(b, loc, rank, {1, rows}),
                                       iota(b, loc, rows, {rows, 1}));
  Value order = sumRows(b, loc,
                        selectOrZero(b, loc, atPosition,
                                     iota(b, loc, rows, {1, rows})));
  // Each segment's first sorted position: a min-scatter of the positions
  // onto the sorted ids (rows past the last position for empty segments).
  int64_t segments = dataType.getShape()[0];
  Value sorted = GatherOp::create(b, loc, id, order, 0);
  Value starts = ScatterElementsOp::create(
      b, loc, splat(b, loc, RankedTensorType::get({segments}, b.getI64Type()),
                    static_cast<double>(rows)),
      sorted, iota(b, loc, rows, {rows}), 0, ScatterReduction::min);
  Value sums = SegmentSumOp::create(b, loc, dataType, op.getUpdates(), id,
                                    order, starts);
  op.replaceAllUsesWith(sums);
  op.erase();
  return true;
}

struct DLCSortScattersPass : impl::DLCSortScattersBase<DLCSortScattersPass> {
  using DLCSortScattersBase::DLCSortScattersBase;

  void runOnOperation() override {
    if (maxRows < 0) {
      getOperation().emitError()
          << "dlc-sort-scatters: max-rows must not be negative (got "
          << maxRows.getValue() << ")";
      return signalPassFailure();
    }
    SmallVector<ScatterElementsOp> scatters;
    getOperation().walk([&](ScatterElementsOp op) { scatters.push_back(op); });
    for (ScatterElementsOp op : scatters)
      sortScatter(op, maxRows);
  }
};

} // namespace

} // namespace mlir::dlc
