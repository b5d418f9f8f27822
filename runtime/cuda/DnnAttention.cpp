//===- DnnAttention.cpp - Fused attention on cuDNN's graph API ------------===//
//
// The graphs are cudnn-frontend's composite SDPA forward and backward
// (node/scaled_dot_product_flash_attention.h, with its softmax and
// diagonal-band-mask nodes lowered as the frontend lowers them for cuDNN
// before 9.21) for one configuration: no bias, dropout, padding or paging,
// as many heads for k and v as for q, the scale passed by value, and
// optionally the causal mask. Intermediates are virtual float32 tensors,
// as the frontend makes them with float32 as the intermediate type, except
// the operands it rounds to the io type for the second matmuls (p forward,
// p^T and ds^T backward); the data types, dims and strides below are the
// frontend's, since the fused engines match the graph by them. PyTorch's
// own graphs, logged by cuDNN (CUDNN_LOGLEVEL_DBG=3), are the check.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DnnAttention.h"

#include "runtime/core/Status.h"

#include <cstdint>
#include <limits>
#include <sstream>

namespace dlc::cuda {

namespace {

using Tensor = DnnGraphBuilder::Tensor;

/// The unique ids of the tensors the variant packs bind: buffers, the
/// backward's float32 scratch in the workspace, and by-value scalars.
constexpr int64_t kQUid = 1, kKUid = 2, kVUid = 3, kOutUid = 4, kStatsUid = 5,
                  kDOutUid = 6, kDQUid = 7, kDKUid = 8, kDVUid = 9,
                  kRowDotUid = 10, kDQAccumUid = 11, kScaleUid = 12,
                  kOneUid = 13, kMaskValueUid = 14;

/// Workspace pieces start 256-byte aligned, as cudaMalloc's blocks do.
constexpr size_t kScratchAlignment = 256;

size_t alignUp(size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment *
         kScratchAlignment;
}

std::vector<int64_t> contiguous(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

/// The dims of the graphs' tensors, [B,H,rows,columns] throughout.
struct Dims {
  int64_t b, h, tq, tk, d;

  explicit Dims(const DnnAttentionShape &s)
      : b(s.batch), h(s.heads), tq(s.queries), tk(s.keys), d(s.headDim) {}
  std::vector<int64_t> query() const { return {b, h, tq, d}; }
  std::vector<int64_t> key() const { return {b, h, tk, d}; }
  std::vector<int64_t> scores() const { return {b, h, tq, tk}; }
  std::vector<int64_t> rows() const { return {b, h, tq, 1}; }
  /// k (or v) as [B,H,D,Tk]: the same buffer, the last two dims' extents
  /// and strides swapped. cuDNN's matmul multiplies by its B operand as
  /// given, so q @ k^T takes k^T, and the frontend hands cuDNN k and v so.
  std::vector<int64_t> keyTransposedDims() const { return {b, h, d, tk}; }
  std::vector<int64_t> keyTransposedStrides() const {
    return {h * tk * d, tk * d, 1, d};
  }
  /// A [B,H,Tq,Tk] score tensor read as [B,H,Tk,Tq].
  std::vector<int64_t> scoresTransposedDims() const { return {b, h, tk, tq}; }
  std::vector<int64_t> scoresTransposedStrides() const {
    return {h * tq * tk, tq * tk, 1, tk};
  }
};

/// A virtual tensor of `dims`, contiguous, float32 unless `type` says.
dlc_status_t intermediate(DnnGraphBuilder &g, const char *name,
                          const std::vector<int64_t> &dims, Tensor &out,
                          cudnnDataType_t type = CUDNN_DATA_FLOAT) {
  return g.tensor(name, -1, type, dims, contiguous(dims),
                  DnnTensorKind::Virtual, out);
}

/// A by-value float32 scalar bound to `uid`.
dlc_status_t scalar(DnnGraphBuilder &g, const char *name, int64_t uid,
                    Tensor &out) {
  return g.tensor(name, uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1},
                  DnnTensorKind::ByValue, out);
}

/// `masked` = `scores` where row >= column, else the mask value: the
/// frontend's causal (top-left diagonal) mask, index generators on the
/// row and column axes, a comparison, and a select.
dlc_status_t causalMask(DnnGraphBuilder &g, const Dims &dims, Tensor scores,
                        Tensor &masked) {
  Tensor row, column, keep, maskValue;
  DLC_RETURN_IF_ERROR(scalar(g, "mask value", kMaskValueUid, maskValue));
  DLC_RETURN_IF_ERROR(
      intermediate(g, "row index", dims.scores(), row, CUDNN_DATA_INT32));
  DLC_RETURN_IF_ERROR(g.pointwise("row index", CUDNN_POINTWISE_GEN_INDEX,
                                  CUDNN_DATA_FLOAT, {scores}, row, 2));
  DLC_RETURN_IF_ERROR(
      intermediate(g, "column index", dims.scores(), column, CUDNN_DATA_INT32));
  DLC_RETURN_IF_ERROR(g.pointwise("column index", CUDNN_POINTWISE_GEN_INDEX,
                                  CUDNN_DATA_FLOAT, {scores}, column, 3));
  DLC_RETURN_IF_ERROR(intermediate(g, "row >= column", dims.scores(), keep,
                                   CUDNN_DATA_BOOLEAN));
  DLC_RETURN_IF_ERROR(g.pointwise("row >= column", CUDNN_POINTWISE_CMP_GE,
                                  CUDNN_DATA_BOOLEAN, {row, column}, keep));
  DLC_RETURN_IF_ERROR(intermediate(g, "masked", dims.scores(), masked));
  // BINARY_SELECT: y = t ? x : b.
  return g.pointwise("causal mask", CUDNN_POINTWISE_BINARY_SELECT,
                     CUDNN_DATA_FLOAT, {scores, maskValue, keep}, masked);
}

/// The scaled (and masked) scores: scale * q @ k^T.
dlc_status_t scaledScores(DnnGraphBuilder &g, const Dims &dims, Tensor q,
                          Tensor kT, Tensor scale, Tensor &scaled) {
  Tensor scores;
  DLC_RETURN_IF_ERROR(intermediate(g, "q @ k^T", dims.scores(), scores));
  DLC_RETURN_IF_ERROR(g.matmul("q @ k^T", q, kT, scores));
  DLC_RETURN_IF_ERROR(intermediate(g, "scaled", dims.scores(), scaled));
  return g.pointwise("* scale", CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT,
                     {scores, scale}, scaled);
}

/// out, stats = attention(q, k, v): the scores, the softmax as the
/// frontend's composite softmax node (row max, exp of the difference, row
/// sum, stats = max + log sum, probabilities = exp / sum, rounded to the io
/// type), then p @ v.
dlc_status_t buildForward(DnnGraphBuilder &g, const DnnAttentionShape &shape,
                          cudnnDataType_t io) {
  Dims dims(shape);
  Tensor q, kT, v, out, stats, scale;
  DLC_RETURN_IF_ERROR(g.tensor("q", kQUid, io, dims.query(),
                               contiguous(dims.query()), DnnTensorKind::Buffer,
                               q));
  DLC_RETURN_IF_ERROR(g.tensor("k^T", kKUid, io, dims.keyTransposedDims(),
                               dims.keyTransposedStrides(),
                               DnnTensorKind::Buffer, kT));
  DLC_RETURN_IF_ERROR(g.tensor("v", kVUid, io, dims.key(),
                               contiguous(dims.key()), DnnTensorKind::Buffer,
                               v));
  DLC_RETURN_IF_ERROR(g.tensor("out", kOutUid, io, dims.query(),
                               contiguous(dims.query()), DnnTensorKind::Buffer,
                               out));
  DLC_RETURN_IF_ERROR(g.tensor("stats", kStatsUid, CUDNN_DATA_FLOAT,
                               dims.rows(), contiguous(dims.rows()),
                               DnnTensorKind::Buffer, stats));
  DLC_RETURN_IF_ERROR(scalar(g, "scale", kScaleUid, scale));

  Tensor logits;
  DLC_RETURN_IF_ERROR(scaledScores(g, dims, q, kT, scale, logits));
  if (shape.causal)
    DLC_RETURN_IF_ERROR(causalMask(g, dims, Tensor(logits), logits));

  Tensor rowMax, centered, exps, rowSum, logSum, p;
  DLC_RETURN_IF_ERROR(intermediate(g, "row max", dims.rows(), rowMax));
  DLC_RETURN_IF_ERROR(
      g.reduction("row max", CUDNN_REDUCE_TENSOR_MAX, logits, rowMax));
  DLC_RETURN_IF_ERROR(intermediate(g, "- row max", dims.scores(), centered));
  DLC_RETURN_IF_ERROR(g.pointwise("- row max", CUDNN_POINTWISE_SUB,
                                  CUDNN_DATA_FLOAT, {logits, rowMax},
                                  centered));
  DLC_RETURN_IF_ERROR(intermediate(g, "exp", dims.scores(), exps));
  DLC_RETURN_IF_ERROR(g.pointwise("exp", CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT,
                                  {centered}, exps));
  DLC_RETURN_IF_ERROR(intermediate(g, "row sum", dims.rows(), rowSum));
  DLC_RETURN_IF_ERROR(
      g.reduction("row sum", CUDNN_REDUCE_TENSOR_ADD, exps, rowSum));
  DLC_RETURN_IF_ERROR(intermediate(g, "log row sum", dims.rows(), logSum));
  DLC_RETURN_IF_ERROR(g.pointwise("log row sum", CUDNN_POINTWISE_LOG,
                                  CUDNN_DATA_FLOAT, {rowSum}, logSum));
  DLC_RETURN_IF_ERROR(g.pointwise("stats = row max + log row sum",
                                  CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT,
                                  {rowMax, logSum}, stats));
  // p @ v multiplies two io-typed operands: with a float32 p no engine of
  // cuDNN 9.19 took the graph (H200, 2026-11-27).
  DLC_RETURN_IF_ERROR(intermediate(g, "p", dims.scores(), p, io));
  DLC_RETURN_IF_ERROR(g.pointwise("p = exp / row sum", CUDNN_POINTWISE_DIV,
                                  CUDNN_DATA_FLOAT, {exps, rowSum}, p));
  return g.matmul("out = p @ v", p, v, out);
}

/// dq, dk, dv for dout, as the frontend's composite SDPA backward:
/// rowDot = rowsum(dout * out) (kept in the workspace), p recomputed as
/// exp(scaled scores - stats), dv = p^T @ dout, ds = p * (dout @ v^T -
/// rowDot) * scale, dk = ds^T @ q, dq = ds @ k (accumulated in float32 in
/// the workspace unless deterministic). The transposes of p and ds are
/// reshapes to the io type, as the frontend writes them.
dlc_status_t buildBackward(DnnGraphBuilder &g, const DnnAttentionShape &shape,
                           cudnnDataType_t io) {
  Dims dims(shape);
  Tensor q, kT, vT, out, dOut, stats, dq, dk, dv, scale, one, rowDot;
  auto buffer = [&](const char *name, int64_t uid, cudnnDataType_t type,
                    const std::vector<int64_t> &d, Tensor &t) {
    return g.tensor(name, uid, type, d, contiguous(d), DnnTensorKind::Buffer,
                    t);
  };
  DLC_RETURN_IF_ERROR(buffer("q", kQUid, io, dims.query(), q));
  DLC_RETURN_IF_ERROR(g.tensor("k^T", kKUid, io, dims.keyTransposedDims(),
                               dims.keyTransposedStrides(),
                               DnnTensorKind::Buffer, kT));
  DLC_RETURN_IF_ERROR(g.tensor("v^T", kVUid, io, dims.keyTransposedDims(),
                               dims.keyTransposedStrides(),
                               DnnTensorKind::Buffer, vT));
  DLC_RETURN_IF_ERROR(buffer("out", kOutUid, io, dims.query(), out));
  DLC_RETURN_IF_ERROR(buffer("dout", kDOutUid, io, dims.query(), dOut));
  DLC_RETURN_IF_ERROR(
      buffer("stats", kStatsUid, CUDNN_DATA_FLOAT, dims.rows(), stats));
  DLC_RETURN_IF_ERROR(buffer("dq", kDQUid, io, dims.query(), dq));
  DLC_RETURN_IF_ERROR(buffer("dk", kDKUid, io, dims.key(), dk));
  DLC_RETURN_IF_ERROR(buffer("dv", kDVUid, io, dims.key(), dv));
  DLC_RETURN_IF_ERROR(scalar(g, "scale", kScaleUid, scale));
  DLC_RETURN_IF_ERROR(scalar(g, "one", kOneUid, one));

  // rowsum(dout * out), the softmax gradient's subtrahend. The frontend
  // multiplies it by a scalar (1 without dropout) into a float32 tensor in
  // the workspace; the engines expect that node.
  Tensor product, rowDotSum;
  DLC_RETURN_IF_ERROR(intermediate(g, "dout * out", dims.query(), product));
  DLC_RETURN_IF_ERROR(g.pointwise("dout * out", CUDNN_POINTWISE_MUL,
                                  CUDNN_DATA_FLOAT, {dOut, out}, product));
  DLC_RETURN_IF_ERROR(
      intermediate(g, "rowsum(dout * out)", dims.rows(), rowDotSum));
  DLC_RETURN_IF_ERROR(g.reduction("rowsum(dout * out)", CUDNN_REDUCE_TENSOR_ADD,
                                  product, rowDotSum));
  DLC_RETURN_IF_ERROR(buffer("rowsum(dout * out) (workspace)", kRowDotUid,
                             CUDNN_DATA_FLOAT, dims.rows(), rowDot));
  DLC_RETURN_IF_ERROR(g.pointwise("rowsum(dout * out) * 1", CUDNN_POINTWISE_MUL,
                                  CUDNN_DATA_FLOAT, {rowDotSum, one}, rowDot));

  // p = exp(scale * q @ k^T - stats), masked after the subtraction as the
  // frontend does.
  Tensor scaled, logits, p, pT;
  DLC_RETURN_IF_ERROR(scaledScores(g, dims, q, kT, scale, scaled));
  DLC_RETURN_IF_ERROR(intermediate(g, "- stats", dims.scores(), logits));
  DLC_RETURN_IF_ERROR(g.pointwise("- stats", CUDNN_POINTWISE_SUB,
                                  CUDNN_DATA_FLOAT, {scaled, stats}, logits));
  if (shape.causal)
    DLC_RETURN_IF_ERROR(causalMask(g, dims, Tensor(logits), logits));
  DLC_RETURN_IF_ERROR(intermediate(g, "p", dims.scores(), p));
  DLC_RETURN_IF_ERROR(g.pointwise("p = exp", CUDNN_POINTWISE_EXP,
                                  CUDNN_DATA_FLOAT, {logits}, p));
  DLC_RETURN_IF_ERROR(g.tensor("p^T", -1, io, dims.scoresTransposedDims(),
                               dims.scoresTransposedStrides(),
                               DnnTensorKind::Virtual, pT));
  DLC_RETURN_IF_ERROR(g.reshape("p^T", p, pT));
  DLC_RETURN_IF_ERROR(g.matmul("dv = p^T @ dout", pT, dOut, dv));

  // ds = p * (dout @ v^T - rowDot) * scale.
  Tensor dp, dpCentered, dsUnscaled, ds, dsT;
  DLC_RETURN_IF_ERROR(intermediate(g, "dout @ v^T", dims.scores(), dp));
  DLC_RETURN_IF_ERROR(g.matmul("dout @ v^T", dOut, vT, dp));
  DLC_RETURN_IF_ERROR(
      intermediate(g, "- rowsum(dout * out)", dims.scores(), dpCentered));
  DLC_RETURN_IF_ERROR(g.pointwise("- rowsum(dout * out)", CUDNN_POINTWISE_SUB,
                                  CUDNN_DATA_FLOAT, {dp, rowDot}, dpCentered));
  DLC_RETURN_IF_ERROR(intermediate(g, "* p", dims.scores(), dsUnscaled));
  DLC_RETURN_IF_ERROR(g.pointwise("* p", CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT,
                                  {dpCentered, p}, dsUnscaled));
  DLC_RETURN_IF_ERROR(intermediate(g, "ds", dims.scores(), ds));
  DLC_RETURN_IF_ERROR(g.pointwise("ds = * scale", CUDNN_POINTWISE_MUL,
                                  CUDNN_DATA_FLOAT, {dsUnscaled, scale}, ds));
  DLC_RETURN_IF_ERROR(g.tensor("ds^T", -1, io, dims.scoresTransposedDims(),
                               dims.scoresTransposedStrides(),
                               DnnTensorKind::Virtual, dsT));
  DLC_RETURN_IF_ERROR(g.reshape("ds^T", ds, dsT));
  DLC_RETURN_IF_ERROR(g.matmul("dk = ds^T @ q", dsT, q, dk));

  // dq = ds @ k, k read back from k^T by a reshape. The frontend leaves
  // that view's type to the intermediate type, float32.
  Tensor k;
  DLC_RETURN_IF_ERROR(g.tensor("k", -1, CUDNN_DATA_FLOAT, dims.key(),
                               contiguous(dims.key()), DnnTensorKind::Virtual,
                               k));
  DLC_RETURN_IF_ERROR(g.reshape("k", kT, k));
  if (shape.deterministic)
    return g.matmul("dq = ds @ k", ds, k, dq);
  Tensor dqAccum;
  DLC_RETURN_IF_ERROR(buffer("dq accumulator (workspace)", kDQAccumUid,
                             CUDNN_DATA_FLOAT, dims.query(), dqAccum));
  DLC_RETURN_IF_ERROR(g.matmul("dq accumulator = ds @ k", ds, k, dqAccum));
  return g.pointwise("dq = dq accumulator", CUDNN_POINTWISE_IDENTITY,
                     CUDNN_DATA_FLOAT, {dqAccum}, dq);
}

bool aligned(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

/// DLC_INTERNAL naming the first of `pointers` (named by `names`) that is
/// not 16-byte aligned, as the plans assume.
template <size_t N>
dlc_status_t checkAlignment(const char *const (&names)[N],
                            const void *const (&pointers)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (!aligned(pointers[i]))
      return makeStatus(DLC_INTERNAL, std::string(names[i]) +
                                          " is not 16-byte aligned as the "
                                          "cuDNN attention plans assume");
  return nullptr;
}

} // namespace

std::string DnnAttentionShape::describe() const {
  std::ostringstream s;
  s << dtypeName(dtype) << " B=" << batch << " H=" << heads << " Tq=" << queries
    << " Tk=" << keys << " D=" << headDim << " scale=" << scale
    << (causal ? " causal" : "") << (deterministic ? " deterministic" : "");
  return s.str();
}

dlc_status_t DnnAttention::create(Dnn &dnn, const DnnAttentionShape &shape,
                                  std::unique_ptr<DnnAttention> &out) {
  std::string what = "cuDNN attention (" + shape.describe() + ")";
  cudnnDataType_t io;
  switch (shape.dtype) {
  case DType::BF16:
    io = CUDNN_DATA_BFLOAT16;
    break;
  case DType::F16:
    io = CUDNN_DATA_HALF;
    break;
  default:
    return makeStatus(DLC_UNIMPLEMENTED,
                      what + ": cuDNN's fused attention takes float16 and "
                             "bfloat16 only");
  }
  for (int64_t extent :
       {shape.batch, shape.heads, shape.queries, shape.keys, shape.headDim})
    if (extent < 1)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        what + ": every dimension must be at least 1");
  // Before 9.6 the caller had to zero the dq accumulator before each
  // backward (the frontend memsets it); the plans here enqueue nothing
  // but cuDNN's own work.
  if (!shape.deterministic && dnn.version() < 90600)
    return makeStatus(DLC_UNIMPLEMENTED,
                      what +
                          ": the backward needs cuDNN 9.6 or later "
                          "(this is " +
                          std::to_string(dnn.version()) + ")");

  std::unique_ptr<DnnAttention> attention(new DnnAttention(dnn));
  attention->shape_ = shape;
  attention->scale_ = shape.scale;
  // cuDNN before 9.10 wants the lowest float rather than -inf as a masked
  // score (the frontend's choice by version).
  attention->maskValue_ = dnn.version() < 91000
                              ? std::numeric_limits<float>::lowest()
                              : -std::numeric_limits<float>::infinity();

  {
    DnnGraphBuilder g(dnn);
    DLC_RETURN_IF_ERROR(prefixStatus(buildForward(g, shape, io),
                                     what + " forward: building the graph"));
    DLC_RETURN_IF_ERROR(
        prefixStatus(g.plan(attention->forward_.graph), what + " forward"));
    attention->forward_.workspaceBytes =
        attention->forward_.graph.workspaceBytes();
  }
  {
    DnnGraphBuilder g(dnn);
    DLC_RETURN_IF_ERROR(prefixStatus(buildBackward(g, shape, io),
                                     what + " backward: building the graph"));
    DLC_RETURN_IF_ERROR(
        prefixStatus(g.plan(attention->backward_.graph), what + " backward"));
    Dims dims(shape);
    size_t rows = static_cast<size_t>(dims.b * dims.h * dims.tq);
    size_t scratch = alignUp(rows * sizeof(float));
    if (!shape.deterministic)
      scratch += alignUp(rows * static_cast<size_t>(dims.d) * sizeof(float));
    attention->backward_.scratchBytes = scratch;
    attention->backward_.workspaceBytes =
        scratch + attention->backward_.graph.workspaceBytes();
  }
  out = std::move(attention);
  return nullptr;
}

size_t DnnAttention::workspaceBytes() const {
  return std::max(forward_.workspaceBytes, backward_.workspaceBytes);
}

std::string DnnAttention::describePlans() const {
  auto one = [](const char *direction, const Plan &plan) {
    return std::string(direction) + ": engine " +
           std::to_string(plan.graph.engine()) + " (workspace " +
           std::to_string(plan.workspaceBytes) + " bytes)";
  };
  return one("forward", forward_) + "; " + one("backward", backward_);
}

dlc_status_t DnnAttention::failure(dlc_status_t status,
                                   const char *direction) const {
  if (!status)
    return nullptr;
  return prefixStatus(status, std::string("cuDNN attention ") + direction +
                                  " (" + shape_.describe() + ")");
}

dlc_status_t DnnAttention::runForward(const void *q, const void *k,
                                      const void *v, void *out, float *stats,
                                      void *workspace, CUstream stream) const {
  DLC_RETURN_IF_ERROR(
      failure(checkAlignment({"q", "k", "v", "out", "stats", "workspace"},
                             {q, k, v, out, stats, workspace}),
              "forward"));
  if (!workspace && forward_.workspaceBytes > 0)
    return failure(makeStatus(DLC_INVALID_ARGUMENT, "no workspace"), "forward");
  const int64_t uids[] = {kQUid,     kKUid,     kVUid,        kOutUid,
                          kStatsUid, kScaleUid, kMaskValueUid};
  // cuDNN's variant pack takes every pointer as void *; the inputs and the
  // scalars are only read.
  void *const pointers[] = {const_cast<void *>(q),
                            const_cast<void *>(k),
                            const_cast<void *>(v),
                            out,
                            stats,
                            const_cast<float *>(&scale_),
                            const_cast<float *>(&maskValue_)};
  // The mask value is bound only where the graph has the mask.
  int64_t count = shape_.causal ? 7 : 6;
  return failure(dnn_.execute(forward_.graph.plan(), count, uids, pointers,
                              workspace, stream),
                 "forward");
}

dlc_status_t DnnAttention::runBackward(const void *q, const void *k,
                                       const void *v, const void *out,
                                       const void *dout, const float *stats,
                                       void *dq, void *dk, void *dv,
                                       void *workspace, CUstream stream) const {
  DLC_RETURN_IF_ERROR(failure(
      checkAlignment({"q", "k", "v", "out", "dout", "stats", "dq", "dk", "dv",
                      "workspace"},
                     {q, k, v, out, dout, stats, dq, dk, dv, workspace}),
      "backward"));
  if (!workspace)
    return failure(makeStatus(DLC_INVALID_ARGUMENT, "no workspace"),
                   "backward");
  // The workspace: the row sums, the dq accumulator (unless
  // deterministic), then the engine's own.
  auto *base = static_cast<char *>(workspace);
  Dims dims(shape_);
  size_t rowBytes =
      alignUp(static_cast<size_t>(dims.b * dims.h * dims.tq) * sizeof(float));
  int64_t uids[14] = {kQUid,  kKUid,  kVUid,  kOutUid,    kDOutUid,  kStatsUid,
                      kDQUid, kDKUid, kDVUid, kRowDotUid, kScaleUid, kOneUid};
  void *pointers[14] = {const_cast<void *>(q),
                        const_cast<void *>(k),
                        const_cast<void *>(v),
                        const_cast<void *>(out),
                        const_cast<void *>(dout),
                        const_cast<float *>(stats),
                        dq,
                        dk,
                        dv,
                        base,
                        const_cast<float *>(&scale_),
                        const_cast<float *>(&one_)};
  int64_t count = 12;
  if (!shape_.deterministic) {
    uids[count] = kDQAccumUid;
    pointers[count++] = base + rowBytes;
  }
  if (shape_.causal) {
    uids[count] = kMaskValueUid;
    pointers[count++] = const_cast<float *>(&maskValue_);
  }
  return failure(dnn_.execute(backward_.graph.plan(), count, uids, pointers,
                              base + backward_.scratchBytes, stream),
                 "backward");
}

} // namespace dlc::cuda
