//===- Decompose.cpp - Lowering composite ops to basic ones ---------------===//
//
// Attention: the forward as the importer's softmax would have computed it
// (maximum, shifted exponentials, their sum, the quotient), plus the
// log-sum-exp m + log(z) when something reads it. The gradient recomputes
// the scores and the probabilities P = exp(scores - lse), then
//   dS = P * (dout @ v^T - rowsum(dout * out)) * scale
//   dq = dS @ k, dk = dS^T @ q, dv = P^T @ dout.
// Cross-entropy: the row's log-sum-exp (two reductions over the row), the
// picked logit (one gathered element a row) and, with label smoothing, the
// row's mean; the gradient is one elementwise expression of the logits,
// the log-sum-exp and the label: g * (exp(x - lse) - (1 - e) * [c ==
// label] - e / C), which fusion makes a single kernel.
// With keep-attention, the attention ops that the CUDA backend's fused
// kernels take stay whole (the scores never reach memory there).
//
//===----------------------------------------------------------------------===//
#include "passes/decompose/Decompose.h"
#include "passes/Passes.h"

#include "ir/GradientUtils.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCDECOMPOSE
#include "passes/Passes.h.inc"

using namespace grad;

namespace {

/// The shape of `rows` (one value a row) with a trailing 1, for reading
/// against the rows' elements.
SmallVector<int64_t> rowShape(Value rows) {
  SmallVector<int64_t> shape(typeOf(rows).getShape());
  shape.push_back(1);
  return shape;
}

/// Whether each label of a cross-entropy op `op` is counted (not its
/// ignore index, an I64Attr whose getter returns it as unsigned).
template <typename OpT>
Value countedLabels(OpBuilder &b, Location loc, OpT op) {
  int64_t ignore = static_cast<int64_t>(op.getIgnoreIndex());
  return differsFrom(b, loc, op.getLabels(), static_cast<double>(ignore));
}

/// q @ k^T * scale + bias.
Value scores(OpBuilder &b, Location loc, Value q, Value k, Value bias,
             double scale) {
  Value s = MatmulOp::create(b, loc, q, transposeLastTwo(b, loc, k));
  if (scale != 1.0)
    s = mul(b, loc, s, scalarLike(b, loc, s, scale));
  return bias ? add(b, loc, s, bias) : s;
}

/// A pattern for an attention op, which leaves the ops a fused kernel takes
/// alone when asked to keep them.
template <typename OpT> struct LowerAttentionBase : OpRewritePattern<OpT> {
  LowerAttentionBase(MLIRContext *context, bool keepFused)
      : OpRewritePattern<OpT>(context), keepFused(keepFused) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const final {
    if (keepFused && hasFusedAttentionKernel(op))
      return rewriter.notifyMatchFailure(op, "a fused kernel runs it");
    return lower(op, rewriter);
  }
  virtual LogicalResult lower(OpT op, PatternRewriter &rewriter) const = 0;

  bool keepFused;
};

struct LowerAttention : LowerAttentionBase<AttentionOp> {
  using LowerAttentionBase::LowerAttentionBase;

  LogicalResult lower(AttentionOp op,
                      PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value s = scores(rewriter, loc, op.getQ(), op.getK(), op.getBias(),
                     op.getScale().convertToDouble());
    int64_t last = typeOf(s).getRank() - 1;
    Value m = ReduceMaxOp::create(rewriter, loc, s, {last}, true);
    Value e = ExpOp::create(rewriter, loc, sub(rewriter, loc, s, m));
    Value z = ReduceSumOp::create(rewriter, loc, e, {last}, true);
    Value out = MatmulOp::create(rewriter, loc, div(rewriter, loc, e, z),
                                 op.getV());
    Value lse;
    if (!op.getLse().use_empty())
      lse = reshape(rewriter, loc,
                    add(rewriter, loc, m, LogOp::create(rewriter, loc, z)),
                    typeOf(op.getLse()).getShape());
    rewriter.replaceOp(op, {out, lse});
    return success();
  }
};

struct LowerAttentionGrad : LowerAttentionBase<AttentionGradOp> {
  using LowerAttentionBase::LowerAttentionBase;

  LogicalResult lower(AttentionGradOp op,
                      PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    double scale = op.getScale().convertToDouble();
    Value q = op.getQ(), k = op.getK(), v = op.getV(), dout = op.getGradOut();
    Value s = scores(rewriter, loc, q, k, op.getBias(), scale);
    Value p = ExpOp::create(
        rewriter, loc,
        sub(rewriter, loc, s,
            reshape(rewriter, loc, op.getLse(), rowShape(op.getLse()))));
    int64_t last = typeOf(s).getRank() - 1;
    Value dp = MatmulOp::create(rewriter, loc, dout,
                                transposeLastTwo(rewriter, loc, v));
    Value rows = ReduceSumOp::create(
        rewriter, loc, mul(rewriter, loc, dout, op.getOut()), {last}, true);
    Value ds = mul(rewriter, loc, p, sub(rewriter, loc, dp, rows));
    if (scale != 1.0)
      ds = mul(rewriter, loc, ds, scalarLike(rewriter, loc, ds, scale));
    Value dq = MatmulOp::create(rewriter, loc, ds, k);
    Value dk =
        MatmulOp::create(rewriter, loc, transposeLastTwo(rewriter, loc, ds), q);
    Value dv = MatmulOp::create(rewriter, loc,
                                transposeLastTwo(rewriter, loc, p), dout);
    rewriter.replaceOp(op, {dq, dk, dv});
    return success();
  }
};

/// The class each label picks among `classes`, as `[..., 1]`: an ignored
/// label picks class 0, a negative one counts from the end, and one out of
/// range is clamped, as dlc.gather_elements reads indices.
Value pickedClasses(OpBuilder &b, Location loc, Value labels, Value valid,
                    int64_t classes) {
  Value safe = SelectOp::create(
      b, loc, valid, labels, scalar(b, loc, typeOf(labels).getElementType(), 0));
  return reshape(b, loc, boundedIndex(b, loc, safe, classes), rowShape(labels));
}

struct LowerCrossEntropy : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getLogits(), labels = op.getLabels();
    RankedTensorType type = typeOf(x);
    int64_t last = type.getRank() - 1;
    double smoothing = op.getLabelSmoothing().convertToDouble();
    Value m = ReduceMaxOp::create(rewriter, loc, x, {last}, true);
    Value z = ReduceSumOp::create(
        rewriter, loc, ExpOp::create(rewriter, loc, sub(rewriter, loc, x, m)),
        {last}, true);
    Value lse = add(rewriter, loc, m, LogOp::create(rewriter, loc, z));
    Value valid = countedLabels(rewriter, loc, op);
    Value picked = GatherElementsOp::create(
        rewriter, loc, x,
        pickedClasses(rewriter, loc, labels, valid, type.getShape().back()),
        last);
    Value loss = sub(rewriter, loc, lse,
                     smoothing == 0
                         ? picked
                         : mul(rewriter, loc, picked,
                               scalarLike(rewriter, loc, x, 1 - smoothing)));
    if (smoothing > 0) {
      Value mean = div(
          rewriter, loc, ReduceSumOp::create(rewriter, loc, x, {last}, true),
          scalarLike(rewriter, loc, x,
                     static_cast<double>(type.getShape().back())));
      loss = sub(rewriter, loc, loss,
                 mul(rewriter, loc, mean,
                     scalarLike(rewriter, loc, x, smoothing)));
    }
    ArrayRef<int64_t> rows = typeOf(labels).getShape();
    loss = selectOrZero(rewriter, loc, valid, reshape(rewriter, loc, loss, rows));
    rewriter.replaceOp(op, {loss, reshape(rewriter, loc, lse, rows)});
    return success();
  }
};

struct LowerCrossEntropyGrad : OpRewritePattern<CrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CrossEntropyGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getLogits(), labels = op.getLabels();
    RankedTensorType type = typeOf(x);
    int64_t classes = type.getShape().back();
    double smoothing = op.getLabelSmoothing().convertToDouble();
    SmallVector<int64_t> rows = rowShape(labels);
    Value p = ExpOp::create(
        rewriter, loc,
        sub(rewriter, loc, x, reshape(rewriter, loc, op.getLse(), rows)));
    Value valid = countedLabels(rewriter, loc, op);
    // [c == label] against the classes 0..C-1 along the last axis.
    Type labelType = typeOf(labels).getElementType();
    auto classType = RankedTensorType::get({classes}, labelType);
    SmallVector<APInt> ids;
    for (int64_t c = 0; c < classes; ++c)
      ids.push_back(APInt(labelType.getIntOrFloatBitWidth(), c));
    Value classIds = ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(classType, ids));
    Value hit =
        CompareOp::create(rewriter, loc, ComparePredicate::eq, classIds,
                          pickedClasses(rewriter, loc, labels, valid, classes));
    Value target = SelectOp::create(
        rewriter, loc, hit, scalarLike(rewriter, loc, x, 1 - smoothing),
        scalarLike(rewriter, loc, x, 0.0));
    Value d = sub(rewriter, loc, p, target);
    if (smoothing > 0)
      d = sub(rewriter, loc, d,
              scalarLike(rewriter, loc, x,
                         smoothing / static_cast<double>(classes)));
    // Ignored rows are 0 even where their logits make d NaN.
    Value product =
        mul(rewriter, loc, d, reshape(rewriter, loc, op.getGradLoss(), rows));
    rewriter.replaceOp(op, selectOrZero(rewriter, loc,
                                        reshape(rewriter, loc, valid, rows),
                                        product));
    return success();
  }
};

/// dlc.tp_copy marks, for autodiff, where the backward all-reduce of a
/// tensor-parallel pair goes, and dlc.stop_gradient where no gradient
/// flows; after it, each is the identity, which a plan need not copy.
template <typename Marker> struct RemoveMarker : OpRewritePattern<Marker> {
  using OpRewritePattern<Marker>::OpRewritePattern;
  LogicalResult matchAndRewrite(Marker op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

struct DLCDecomposePass : impl::DLCDecomposeBase<DLCDecomposePass> {
  using DLCDecomposeBase::DLCDecomposeBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposePatterns(patterns, keepAttention);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

bool hasFusedAttentionKernel(Operation *op) {
  assert((isa<AttentionOp, AttentionGradOp>(op)) && "an attention op");
  if (!llvm::all_of(op->getOperandTypes(), [](Type type) {
        return cast<RankedTensorType>(type).getElementType().isF32();
      }))
    return false;
  // q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv].
  auto headSize = [&](unsigned operand) {
    return cast<RankedTensorType>(op->getOperand(operand).getType())
        .getShape()
        .back();
  };
  return headSize(0) <= kFusedAttentionMaxHeadSize &&
         headSize(2) <= kFusedAttentionMaxHeadSize;
}

void populateDecomposePatterns(RewritePatternSet &patterns,
                               bool keepAttention) {
  patterns.add<LowerAttention, LowerAttentionGrad>(patterns.getContext(),
                                                   keepAttention);
  patterns.add<LowerCrossEntropy, LowerCrossEntropyGrad, RemoveMarker<TpCopyOp>,
               RemoveMarker<StopGradientOp>>(patterns.getContext());
}

} // namespace mlir::dlc
