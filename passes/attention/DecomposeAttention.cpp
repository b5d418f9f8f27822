//===- DecomposeAttention.cpp - Lowering dlc.attention --------------------===//
//
// The forward as the importer's softmax would have computed it (maximum,
// shifted exponentials, their sum, the quotient), plus the log-sum-exp
// m + log(z) when something reads it. The gradient recomputes the scores
// and the probabilities P = exp(scores - lse), then
//   dS = P * (dout @ v^T - rowsum(dout * out)) * scale
//   dq = dS @ k, dk = dS^T @ q, dv = P^T @ dout.
//
//===----------------------------------------------------------------------===//
#include "passes/attention/Attention.h"
#include "passes/Passes.h"

#include "ir/GradientUtils.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCDECOMPOSEATTENTION
#include "passes/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::grad;

namespace {

/// q @ k^T * scale + bias.
Value scores(OpBuilder &b, Location loc, Value q, Value k, Value bias,
             double scale) {
  Value s = MatmulOp::create(b, loc, q, transposeLastTwo(b, loc, k));
  if (scale != 1.0)
    s = mul(b, loc, s, scalarLike(b, loc, s, scale));
  return bias ? add(b, loc, s, bias) : s;
}

struct LowerAttention : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
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

struct LowerAttentionGrad : OpRewritePattern<AttentionGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    double scale = op.getScale().convertToDouble();
    Value q = op.getQ(), k = op.getK(), v = op.getV(), dout = op.getGradOut();
    Value s = scores(rewriter, loc, q, k, op.getBias(), scale);
    SmallVector<int64_t> rowShape(typeOf(op.getLse()).getShape());
    rowShape.push_back(1);
    Value p = ExpOp::create(
        rewriter, loc,
        sub(rewriter, loc, s, reshape(rewriter, loc, op.getLse(), rowShape)));
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

struct DLCDecomposeAttentionPass
    : mlir::dlc::impl::DLCDecomposeAttentionBase<DLCDecomposeAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateDecomposeAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::dlc::populateDecomposeAttentionPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerAttention, LowerAttentionGrad>(patterns.getContext());
}
