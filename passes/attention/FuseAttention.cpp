//===- FuseAttention.cpp - Forming dlc.attention --------------------------===//
//
// The pattern matches from the matmul with v upwards:
//   out = matmul(p, v)
//   p   = div(e, z), e = exp(sub(x, m)), m = reduce_max(x) and
//         z = reduce_sum(e) over the last axis with kept dimensions
//   x   = select(mask, -inf, b) | select(mask, b, -inf) | b,
//         for any boolean mask
//   b   = add(y, bias) | y, for a bias no gradient reaches
//   y   = mul(s, c) | mul(c, s) | div(s, c) | s, for a scalar constant c
//   s   = matmul(q, kT)
// A masked fill becomes the additive bias select(mask, -inf, bias or 0)
// (or its mirror): the same scores wherever they are finite.
//
//===----------------------------------------------------------------------===//
#include "passes/attention/Attention.h"
#include "passes/Passes.h"

#include "ir/GradientUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCFUSEATTENTION
#include "passes/Passes.h.inc"

using namespace grad;

namespace {

/// The value of a splat float constant `v`, if it is one.
std::optional<double> splatValue(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool isNegativeInfinity(Value v) {
  std::optional<double> value = splatValue(v);
  return value && std::isinf(*value) && *value < 0;
}

/// Whether no gradient can reach `v`: every float value it is computed
/// from leads back to dlc.constant values or to integer or boolean values
/// (a mask, a compare, indices), never to a float function argument or
/// global (a trainable parameter before dlc-functionalize).
bool carriesNoGradient(Value v) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!isa<FloatType>(getElementTypeOrSelf(value.getType())))
      continue;
    Operation *op = value.getDefiningOp();
    if (!op || op->getNumRegions() != 0 ||
        (op->getNumOperands() == 0 && !isa<ConstantOp>(op)))
      return false;
    if (!seen.insert(op).second)
      continue;
    llvm::append_range(work, op->getOperands());
  }
  return true;
}

/// Whether `op` reduces the last axis of its input keeping dimensions.
template <typename ReduceOp> bool reducesLastAxis(ReduceOp op) {
  int64_t rank = typeOf(op.getInput()).getRank();
  return op && op.getKeepDims() && op.getAxes().size() == 1 &&
         op.getAxes()[0] == rank - 1;
}

/// The scores `x` a softmax `p` is taken of, or null.
Value softmaxInput(Value p) {
  auto quotient = p.getDefiningOp<DivOp>();
  if (!quotient)
    return nullptr;
  auto exp = quotient.getLhs().getDefiningOp<ExpOp>();
  auto sum = quotient.getRhs().getDefiningOp<ReduceSumOp>();
  if (!exp || !sum || sum.getInput() != exp.getResult() ||
      !reducesLastAxis(sum))
    return nullptr;
  auto shifted = exp.getInput().getDefiningOp<SubOp>();
  auto max = shifted ? shifted.getRhs().getDefiningOp<ReduceMaxOp>() : nullptr;
  if (!max || max.getInput() != shifted.getLhs() || !reducesLastAxis(max))
    return nullptr;
  // Nothing else may read the softmax's pieces or its input: they
  // disappear.
  if (!p.hasOneUse() || !llvm::hasNItems(exp->getUses(), 2) ||
      !sum->hasOneUse() || !shifted->hasOneUse() || !max->hasOneUse() ||
      !llvm::hasNItems(max.getInput().getUses(), 2))
    return nullptr;
  return max.getInput();
}

struct FormAttention : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp root,
                                PatternRewriter &rewriter) const override {
    Value v = root.getRhs();
    Value x = softmaxInput(root.getLhs());
    if (!x || !isa<FloatType>(typeOf(v).getElementType()))
      return rewriter.notifyMatchFailure(root, "not a softmax times values");
    Location loc = root.getLoc();
    RankedTensorType scoresType = typeOf(x);
    // The mask or bias: a masked fill is turned into an additive bias once
    // the match is certain.
    Value y = x, bias, mask;
    bool fillOnTrue = false;
    if (auto select = x.getDefiningOp<SelectOp>()) {
      fillOnTrue = isNegativeInfinity(select.getOnTrue());
      if (fillOnTrue != isNegativeInfinity(select.getOnFalse())) {
        y = fillOnTrue ? select.getOnFalse() : select.getOnTrue();
        mask = select.getCondition();
      }
    }
    // An additive bias, alone or under the mask (ALiBi, relative positions).
    if (auto sum = y.getDefiningOp<AddOp>(); sum && (y == x || y.hasOneUse()))
      for (auto [term, other] : {std::pair(sum.getLhs(), sum.getRhs()),
                                 std::pair(sum.getRhs(), sum.getLhs())})
        if (!bias && carriesNoGradient(term) &&
            typeOf(other).getShape() == scoresType.getShape()) {
          bias = term;
          y = other;
        }
    // Each value between the scores matmul and the softmax is read by the
    // next op alone (the softmax's input by its maximum and subtraction).
    auto onlyInPattern = [&](Value value) {
      return llvm::hasNItems(value.getUses(), value == x ? 2 : 1);
    };
    // The scale.
    double scale = 1.0;
    Value s = y;
    if (!onlyInPattern(y))
      return rewriter.notifyMatchFailure(root, "the scores have other uses");
    if (auto product = y.getDefiningOp<MulOp>()) {
      if (std::optional<double> c = splatValue(product.getRhs());
          c && typeOf(product.getRhs()).getNumElements() == 1) {
        scale = *c;
        s = product.getLhs();
      } else if (std::optional<double> c = splatValue(product.getLhs());
                 c && typeOf(product.getLhs()).getNumElements() == 1) {
        scale = *c;
        s = product.getRhs();
      }
    } else if (auto quotient = y.getDefiningOp<DivOp>()) {
      if (std::optional<double> c = splatValue(quotient.getRhs());
          c && typeOf(quotient.getRhs()).getNumElements() == 1 && *c != 0) {
        scale = 1.0 / *c;
        s = quotient.getLhs();
      }
    }
    auto scores = s.getDefiningOp<MatmulOp>();
    if (!scores || !(scale > 0) || !std::isfinite(scale) || !onlyInPattern(s))
      return rewriter.notifyMatchFailure(root, "no scores matmul");
    Value q = scores.getLhs(), kT = scores.getRhs();
    RankedTensorType qt = typeOf(q), kt = typeOf(kT), vt = typeOf(v);
    int64_t rank = qt.getRank();
    if (kt.getRank() != rank || vt.getRank() != rank ||
        qt.getShape().drop_back(2) != kt.getShape().drop_back(2) ||
        qt.getShape().drop_back(2) != vt.getShape().drop_back(2) ||
        scoresType.getShape() != typeOf(scores.getResult()).getShape())
      return rewriter.notifyMatchFailure(root, "batch dimensions broadcast");

    rewriter.setInsertionPoint(root);
    if (mask) {
      Type element = scoresType.getElementType();
      Value inf = scalar(rewriter, loc, element,
                         -std::numeric_limits<double>::infinity());
      Value kept = bias ? bias : scalar(rewriter, loc, element, 0.0);
      bias = SelectOp::create(rewriter, loc, mask, fillOnTrue ? inf : kept,
                              fillOnTrue ? kept : inf);
    }
    Value k = transposeLastTwo(rewriter, loc, kT);
    SmallVector<int64_t> lseShape(qt.getShape().drop_back());
    auto attention = AttentionOp::create(
        rewriter, loc, typeOf(root.getResult()),
        RankedTensorType::get(lseShape, qt.getElementType()), q, k, v, bias,
        rewriter.getF64FloatAttr(scale));
    rewriter.replaceOp(root, attention.getOut());
    return success();
  }
};

struct DLCFuseAttentionPass : impl::DLCFuseAttentionBase<DLCFuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void populateFuseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FormAttention>(patterns.getContext());
}

} // namespace mlir::dlc
