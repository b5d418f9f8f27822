//===- Image.cpp - ONNX depth/space rearrangement and LRN -----------------===//
//
// DepthToSpace and SpaceToDepth are reshape + transpose + reshape. LRN sums
// the squared input over a window of channels with dlc.sum_pool on an
// [N, 1, C, rest] view, where the channels are a spatial dimension.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

/// The blocksize of DepthToSpace and SpaceToDepth, whose input is
/// [N, C, H, W].
std::optional<int64_t> blockSize(NodeContext &c, Value x) {
  if (!x)
    return std::nullopt;
  if (typeOf(x).getRank() != 4) {
    c.error() << "input " << typeOf(x) << " must have rank 4 (N, C, H, W)";
    return std::nullopt;
  }
  if (!c.hasAttr("blocksize")) {
    c.error() << "attribute 'blocksize' is required";
    return std::nullopt;
  }
  int64_t block = c.intAttr("blocksize", 0);
  if (block <= 0) {
    c.error() << "blocksize " << block << " must be positive";
    return std::nullopt;
  }
  return block;
}

/// DCR: channel index (b1 * block + b2) * C' + c; CRD: (c * block + b1) *
/// block + b2; both move (b1, b2) next to H and W.
void depthToSpaceRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<int64_t> block = blockSize(c, x);
  if (!block)
    return;
  int64_t b = *block;
  ArrayRef<int64_t> s = typeOf(x).getShape();
  int64_t n = s[0], channels = s[1], h = s[2], w = s[3];
  if (channels % b != 0 || (channels / b) % b != 0) {
    c.error() << "channels " << channels
              << " are not a multiple of blocksize * blocksize (" << b
              << " * " << b << ")";
    return;
  }
  int64_t depth = channels / b / b;
  std::string mode = c.stringAttr("mode", "DCR");
  SmallVector<int64_t> split, perm;
  if (mode == "DCR") {
    split = {n, b, b, depth, h, w};
    perm = {0, 3, 4, 1, 5, 2};
  } else if (mode == "CRD") {
    split = {n, depth, b, b, h, w};
    perm = {0, 1, 4, 2, 5, 3};
  } else {
    c.error() << "mode '" << mode << "' is not one of DCR, CRD";
    return;
  }
  Value y = c.transpose(c.reshape(x, split), perm);
  c.setOutput(0, c.reshape(y, {n, depth, h * b, w * b}));
}

void spaceToDepthRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<int64_t> block = blockSize(c, x);
  if (!block)
    return;
  int64_t b = *block;
  ArrayRef<int64_t> s = typeOf(x).getShape();
  int64_t n = s[0], channels = s[1], h = s[2], w = s[3];
  if (h % b != 0 || w % b != 0) {
    c.error() << "height " << h << " and width " << w
              << " must be multiples of blocksize " << b;
    return;
  }
  Value y = c.transpose(c.reshape(x, {n, channels, h / b, b, w / b, b}),
                        {0, 3, 5, 1, 2, 4});
  c.setOutput(0, c.reshape(y, {n, channels * b * b, h / b, w / b}));
}

//===----------------------------------------------------------------------===//
// LRN
//===----------------------------------------------------------------------===//

/// y = x / (bias + alpha / size * sum of x^2 over channels
/// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)])^beta.
void lrnRule(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  if (type.getRank() < 2) {
    c.error() << "input " << type << " must have rank 2 or more (N, C, ...)";
    return;
  }
  if (!c.hasAttr("size")) {
    c.error() << "attribute 'size' is required";
    return;
  }
  int64_t size = c.intAttr("size", 0);
  if (size <= 0) {
    c.error() << "size " << size << " must be positive";
    return;
  }
  double alpha = c.floatAttr("alpha", 1e-4f);
  double beta = c.floatAttr("beta", 0.75f);
  double bias = c.floatAttr("bias", 1.0f);
  Type t = type.getElementType();

  // [N, C, d...] -> [N, 1, C, prod(d)]: the channel window is a sum_pool
  // window over the first spatial dimension, zero-padded at both ends.
  int64_t n = type.getDimSize(0), channels = type.getDimSize(1), rest = 1;
  for (int64_t d : type.getShape().drop_front(2))
    rest *= d;
  Value squares = c.reshape(c.build<MulOp>({x, x}), {n, 1, channels, rest});
  Value sums = c.build<SumPoolOp>(
      {squares},
      {c.namedI64s("window", {size, 1}), c.namedI64s("stride", {1, 1}),
       c.namedI64s("pad_low", {(size - 1) / 2, 0}),
       c.namedI64s("pad_high", {size / 2, 0}),
       c.namedI64s("dilation", {1, 1})});
  sums = c.reshape(sums, type.getShape());
  Value base = c.build<AddOp>(
      {c.scalar(t, bias),
       c.build<MulOp>({sums, c.scalar(t, alpha / static_cast<double>(size))})});
  c.setOutput(0,
              c.build<DivOp>({x, c.build<PowOp>({base, c.scalar(t, beta)})}));
}

} // namespace

void mlir::dlc::addImageRules(OpRuleTable &t) {
  t["DepthToSpace"] = {depthToSpaceRule, 1};
  t["SpaceToDepth"] = {spaceToDepthRule, 1};
  t["LRN"] = {lrnRule, 1};
}
