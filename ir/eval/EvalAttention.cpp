//===- EvalAttention.cpp - Reference rules of dlc.attention and its grad --===//
//
// Attention row by row in the accumulation type (double for float32), the
// softmax as the decomposition it replaces computes it: the row's maximum,
// the sum of exp(score - maximum), probabilities as their quotient. The
// gradient recomputes the probabilities from the forward's log-sum-exp, as
// the op states, and rounds each result once.
//
//===----------------------------------------------------------------------===//
#include "ir/eval/EvalSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

namespace {

/// The sizes of an attention: `batch` independent matrices (the leading
/// dimensions), `tq` queries and `tk` keys of `d` elements, values of `dv`,
/// and for each score (batch, query, key), row-major, its bias element.
struct AttentionShape {
  int64_t batch = 1, tq = 0, tk = 0, d = 0, dv = 0;
  std::vector<int64_t> biasIndex;

  AttentionShape(const Tensor &q, const Tensor &k, const Tensor &v,
                 const Tensor *bias) {
    ArrayRef<int64_t> qs = q.shape();
    size_t rank = qs.size();
    batch = productOf(qs, 0, rank - 2);
    tq = qs[rank - 2];
    d = qs[rank - 1];
    tk = k.shape()[rank - 2];
    dv = v.shape()[rank - 1];
    if (!bias)
      return;
    SmallVector<int64_t> scores(qs.drop_back());
    scores.push_back(tk);
    SmallVector<int64_t> strides = broadcastStrides(bias->shape(), scores);
    biasIndex.reserve(batch * tq * tk);
    forEachOffset<1>(scores, {ArrayRef<int64_t>(strides)}, {0},
                     [&](const std::array<int64_t, 1> &offset) {
                       biasIndex.push_back(offset[0]);
                     });
  }
};

/// The scores of query row `i` of matrix `b`: q_i . k_j * scale + bias.
template <typename A>
void scoreRow(const AttentionShape &g, const std::vector<A> &q,
              const std::vector<A> &k, const std::vector<A> *bias,
              A scale, int64_t b, int64_t i, std::vector<A> &s) {
  const A *qi = &q[(b * g.tq + i) * g.d];
  for (int64_t j = 0; j < g.tk; ++j) {
    const A *kj = &k[(b * g.tk + j) * g.d];
    A dot = 0;
    for (int64_t e = 0; e < g.d; ++e)
      dot += qi[e] * kj[e];
    s[j] = dot * scale;
    if (bias)
      s[j] += (*bias)[g.biasIndex[(b * g.tq + i) * g.tk + j]];
  }
}

} // namespace

LogicalResult eval::evalAttention(AttentionOp op, Operands operands,
                                  Results &results) {
  const Tensor &q = operands[0], &k = operands[1], &v = operands[2];
  const Tensor *bias = operands.size() > 3 ? &operands[3] : nullptr;
  AttentionShape g(q, k, v, bias);
  Tensor out = resultTensor(op, 0), lse = resultTensor(op, 1);
  LogicalResult status = visitDomain<Domain::Float>(op, out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> qa = widen<T>(q), ka = widen<T>(k), va = widen<T>(v);
    std::vector<A> ba = bias ? widen<T>(*bias) : std::vector<A>();
    std::vector<A> o(out.numElements(), A(0)), l(lse.numElements());
    std::vector<A> s(g.tk);
    A scale = static_cast<A>(op.getScale().convertToDouble());
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t i = 0; i < g.tq; ++i) {
        scoreRow(g, qa, ka, bias ? &ba : nullptr, scale, b, i, s);
        A m = -std::numeric_limits<A>::infinity();
        for (A x : s)
          m = std::isnan(x) || x > m ? x : m;
        A sum = 0;
        for (A &x : s)
          sum += (x = std::exp(x - m));
        l[b * g.tq + i] = m + std::log(sum);
        A *oi = &o[(b * g.tq + i) * g.dv];
        for (int64_t j = 0; j < g.tk; ++j) {
          A p = s[j] / sum;
          const A *vj = &va[(b * g.tk + j) * g.dv];
          for (int64_t e = 0; e < g.dv; ++e)
            oi[e] += p * vj[e];
        }
      }
    storeAccumulated<T>(out, o);
    storeAccumulated<T>(lse, l);
  });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  results.push_back(std::move(lse));
  return success();
}

LogicalResult eval::evalAttentionGrad(AttentionGradOp op, Operands operands,
                                      Results &results) {
  const Tensor &q = operands[0], &k = operands[1], &v = operands[2],
               &out = operands[3], &lse = operands[4], &dout = operands[5];
  const Tensor *bias = operands.size() > 6 ? &operands[6] : nullptr;
  AttentionShape g(q, k, v, bias);
  Tensor dq = resultTensor(op, 0), dk = resultTensor(op, 1),
         dv = resultTensor(op, 2);
  LogicalResult status = visitDomain<Domain::Float>(op, dq.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = AccumT<T>;
    std::vector<A> qa = widen<T>(q), ka = widen<T>(k), va = widen<T>(v);
    std::vector<A> oa = widen<T>(out), la = widen<T>(lse),
                   da = widen<T>(dout);
    std::vector<A> ba = bias ? widen<T>(*bias) : std::vector<A>();
    std::vector<A> gq(dq.numElements(), A(0)), gk(dk.numElements(), A(0)),
        gv(dv.numElements(), A(0));
    std::vector<A> p(g.tk);
    A scale = static_cast<A>(op.getScale().convertToDouble());
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t i = 0; i < g.tq; ++i) {
        int64_t row = b * g.tq + i;
        scoreRow(g, qa, ka, bias ? &ba : nullptr, scale, b, i, p);
        const A *doi = &da[row * g.dv], *oi = &oa[row * g.dv];
        A rowDot = 0;
        for (int64_t e = 0; e < g.dv; ++e)
          rowDot += doi[e] * oi[e];
        for (int64_t j = 0; j < g.tk; ++j) {
          A pij = std::exp(p[j] - la[row]);
          const A *vj = &va[(b * g.tk + j) * g.dv];
          A *gvj = &gv[(b * g.tk + j) * g.dv];
          A dp = 0;
          for (int64_t e = 0; e < g.dv; ++e) {
            dp += doi[e] * vj[e];
            gvj[e] += pij * doi[e];
          }
          A ds = pij * (dp - rowDot) * scale;
          const A *kj = &ka[(b * g.tk + j) * g.d];
          const A *qi = &qa[row * g.d];
          A *gqi = &gq[row * g.d], *gkj = &gk[(b * g.tk + j) * g.d];
          for (int64_t e = 0; e < g.d; ++e) {
            gqi[e] += ds * kj[e];
            gkj[e] += ds * qi[e];
          }
        }
      }
    storeAccumulated<T>(dq, gq);
    storeAccumulated<T>(dk, gk);
    storeAccumulated<T>(dv, gv);
  });
  if (failed(status))
    return failure();
  results.push_back(std::move(dq));
  results.push_back(std::move(dk));
  results.push_back(std::move(dv));
  return success();
}
