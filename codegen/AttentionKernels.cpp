//===- AttentionKernels.cpp - Fused attention kernels for CUDA ------------===//
//
// The kernels are two device templates (attentionDeviceCode, in every CUDA
// module's prelude) over the head sizes, the tiles and a mask; an emitted
// kernel is the call that instantiates them with an op's shapes and the
// mask its bias is. Thread layout (both templates): thread t is column
// t % 8 of thread row t / 8, which owns 4 of the block's rows, kRows apart;
// it accumulates those rows at the columns t % 8 + 8 * c of a streamed tile
// (scores) and at the groups of 4 columns 4 * (t % 8 + 8 * c) of the head
// (outputs and gradients), reading shared memory 16 bytes at a time: each
// read feeds 16 multiply-adds, so the tiles' products are bound by the
// multiprocessors' float32 rate, not by shared memory. A thread row's 8
// threads are consecutive lanes of one warp, so a row's maximum and sum
// are three shuffles.
//
//===----------------------------------------------------------------------===//
#include "codegen/AttentionKernels.h"

#include "passes/decompose/Decompose.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::codegen;

// kDeviceCode: codegen/prelude/attention.h.
#include "codegen/AttentionPrelude.inc"

namespace {

/// Static shared memory a block may have without opting in to more.
constexpr int64_t kSharedBytes = 48 * 1024;

/// The floats of a tile row of `k` columns (dlc_attention_stride).
int64_t tileStride(int64_t k) { return (k + 7) / 8 * 8 + 4; }

/// The bytes of static shared memory of the kernel's tiles (the templates'
/// __shared__ arrays).
int64_t sharedBytes(int64_t d, int64_t dv, AttentionTiles tiles,
                    bool gradient) {
  int64_t owned = tiles.ownedRows, streamed = tiles.streamRows;
  int64_t probabilities = owned * tileStride(streamed);
  int64_t floats =
      gradient ? (owned + streamed) * (tileStride(d) + tileStride(dv)) +
                     probabilities + 2 * streamed
               : (owned + streamed) * tileStride(d) +
                     streamed * tileStride(dv) + probabilities;
  return floats * static_cast<int64_t>(sizeof(float));
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// What an attention op's bias does to the scores.
enum class MaskKind { None, Causal, Bias };

/// The mask of `bias` (null: none) for `tq` x `tk` scores: a constant of
/// zeros is none, a constant of 0 on and below the diagonal and -inf above
/// it (the same for every head) is causal, anything else a bias to read.
/// In a dlc.plan.launch the op reads the launch's arguments: the constant
/// is the launch's operand.
MaskKind maskKindOf(Value bias, int64_t tq, int64_t tk) {
  if (!bias)
    return MaskKind::None;
  if (auto argument = dyn_cast<BlockArgument>(bias))
    if (auto launch = dyn_cast<LaunchOp>(argument.getOwner()->getParentOp()))
      bias = launch.getInputs()[argument.getArgNumber()];
  auto constant = bias.getDefiningOp<ConstantOp>();
  auto values =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  ArrayRef<int64_t> shape = shapeOf(bias);
  if (!values || shape.size() < 2 ||
      !llvm::all_of(shape.drop_back(2), [](int64_t s) { return s == 1; }) ||
      shape[shape.size() - 2] != tq || shape.back() != tk)
    return MaskKind::Bias;
  bool zeros = true, causal = tq == tk;
  int64_t index = 0;
  for (float x : values.getValues<float>()) {
    int64_t i = index / tk, j = index % tk;
    ++index;
    zeros = zeros && x == 0.0f;
    causal = causal && (j <= i ? x == 0.0f : std::isinf(x) && x < 0.0f);
    if (!zeros && !causal)
      return MaskKind::Bias;
  }
  return zeros ? MaskKind::None : MaskKind::Causal;
}

/// `x` as a float literal that reads back as the float nearest it.
std::string floatLiteral(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9ef", static_cast<double>(
                                                  static_cast<float>(x)));
  return text;
}

/// The lambda from a head's index (over q's leading dimensions) to its
/// mask, reading the bias from buffer `slot`.
std::string maskOf(Value q, Value bias, int64_t tq, int64_t tk,
                   unsigned slot) {
  switch (maskKindOf(bias, tq, tk)) {
  case MaskKind::None:
    return "[](int64_t) { return dlc_attention_no_mask(); }";
  case MaskKind::Causal:
    return "[](int64_t) { return dlc_attention_causal(); }";
  case MaskKind::Bias:
    break;
  }
  // The bias broadcasts against the scores [..., tq, tk] from the right.
  ArrayRef<int64_t> scores = shapeOf(q).drop_back(2);
  ArrayRef<int64_t> shape = shapeOf(bias);
  size_t rank = scores.size() + 2, missing = rank - shape.size();
  auto biasDim = [&](size_t axis) {
    return axis < missing ? int64_t(1) : shape[axis - missing];
  };
  SmallVector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t axis = rank; axis-- > missing;) {
    strides[axis] = biasDim(axis) == 1 ? 0 : stride;
    stride *= biasDim(axis);
  }
  SmallVector<std::string> terms;
  int64_t inner = 1;
  for (size_t axis = scores.size(); axis-- > 0;) {
    if (strides[axis] != 0)
      terms.push_back(
          llvm::formatv("{0} % {1}LL * {2}LL",
                        inner == 1 ? std::string("head")
                                   : llvm::formatv("head / {0}LL", inner).str(),
                        scores[axis], strides[axis])
              .str());
    inner *= scores[axis];
  }
  std::string base = terms.empty() ? "0" : llvm::join(terms, " + ");
  return llvm::formatv("[=](int64_t head) {{ return dlc_attention_bias{{(const "
                       "float *)b[{0}] + {1}, {2}LL, {3}LL}; }",
                       slot, base, strides[rank - 2], strides[rank - 1])
      .str();
}

} // namespace

AttentionTiles mlir::dlc::codegen::chooseAttentionTiles(int64_t d, int64_t dv,
                                                        bool gradient) {
  // Larger tiles read each streamed row for more owned rows; the gradient
  // holds two owned and two streamed tiles, so it owns fewer rows.
  static const AttentionTiles kCandidates[] = {
      {64, 32}, {32, 32}, {32, 16}, {32, 8}};
  for (AttentionTiles tiles : kCandidates)
    if ((!gradient || tiles.ownedRows <= 32) &&
        sharedBytes(d, dv, tiles, gradient) <= kSharedBytes)
      return tiles;
  return {};
}

FailureOr<EmittedKernel>
mlir::dlc::codegen::emitAttentionKernel(Operation *op, StringRef name) {
  if (!isa<AttentionOp, AttentionGradOp>(op) || !hasFusedAttentionKernel(op))
    return op->emitOpError() << "has no fused attention kernel (float32 "
                                "operands, head sizes up to "
                             << kFusedAttentionMaxHeadSize << ")";
  bool gradient = isa<AttentionGradOp>(op);
  Value q = op->getOperand(0), k = op->getOperand(1), v = op->getOperand(2);
  Value bias = gradient ? cast<AttentionGradOp>(op).getBias()
                        : cast<AttentionOp>(op).getBias();
  double scale = gradient
                     ? cast<AttentionGradOp>(op).getScale().convertToDouble()
                     : cast<AttentionOp>(op).getScale().convertToDouble();
  ArrayRef<int64_t> qShape = shapeOf(q);
  int64_t tq = qShape[qShape.size() - 2], d = qShape.back();
  int64_t tk = shapeOf(k)[shapeOf(k).size() - 2], dv = shapeOf(v).back();
  int64_t heads = 1;
  for (int64_t size : qShape.drop_back(2))
    heads *= size;
  AttentionTiles tiles = chooseAttentionTiles(d, dv, gradient);
  if (tiles.ownedRows == 0)
    return op->emitOpError() << "has head sizes " << d << " and " << dv
                             << " that no attention tiles fit";
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  EmittedKernel kernel;
  kernel.threadsPerIteration = tiles.threads();
  kernel.iterations =
      gradient ? heads * (ceilDiv(tk, tiles.ownedRows) +
                          ceilDiv(tq, tiles.ownedRows))
               : heads * ceilDiv(tq, tiles.ownedRows);
  if (tq == 0 || tk == 0 || heads == 0)
    kernel.iterations = 0;
  unsigned operands = op->getNumOperands();
  std::string args, shapes;
  for (unsigned slot = 0; slot < operands + op->getNumResults(); ++slot) {
    Value buffer =
        slot < operands ? op->getOperand(slot) : op->getResult(slot - operands);
    shapes += "  // b[" + std::to_string(slot) + "]: [";
    llvm::raw_string_ostream os(shapes);
    llvm::interleaveComma(shapeOf(buffer), os);
    shapes += "]\n";
    // The bias is read through the mask; an absent bias has no slot.
    if (bias && slot == operands - 1)
      continue;
    args += llvm::formatv(slot < operands ? "(const float *)b[{0}], "
                                          : "(float *)b[{0}], ",
                          slot)
                .str();
  }
  std::string call = llvm::formatv(
      "{0}<{1}, {2}, {3}, {4}>({5}{6}LL, {7}LL, {8}, {9}n, {10});\n",
      gradient ? "dlc_attention_backward" : "dlc_attention_forward", d, dv,
      tiles.ownedRows, tiles.streamRows, args, tq, tk, floatLiteral(scale),
      gradient ? std::to_string(heads) + "LL, " : "",
      maskOf(q, bias, tq, tk, operands - 1));
  kernel.source =
      cudaSignature(name, operands + op->getNumResults(), tiles.threads()) +
      shapes + indent(clampIterations("n", kernel.iterations) + call, 2) +
      "}\n";
  return kernel;
}

StringRef mlir::dlc::codegen::attentionDeviceCode() { return kDeviceCode; }
