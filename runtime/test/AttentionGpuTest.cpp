//===- AttentionGpuTest.cpp - cuDNN fused attention against float64 -------===//
//
// DnnAttention's forward and backward on "cuda:0" against a float64
// reference computed here from the same 16-bit-rounded inputs: out and the
// log-sum-exp stats from q, k, v; then dq, dk, dv for a random dout, the
// reference backward taking the GPU's own out and stats, as the cuDNN
// backward does (so each direction is checked against exact arithmetic on
// exactly its inputs). Inputs are N(0, 1) with a fixed seed; the scale is
// 1/sqrt(D), so the scores are about N(0, 1) as in a trained model.
//
// Tolerances, per element, from how the fused engines compute (u is the
// 16-bit type's unit roundoff: 2^-8 for bfloat16, 2^-11 for float16):
// - q @ k^T and the products with v, dout, q and k run on tensor cores
//   with float32 accumulation; the softmax is float32. Against u those
//   errors are negligible (a sum of D terms in float32 is off by at most
//   D * 2^-24 of the sum of its terms' magnitudes).
// - out = sum_j P_ij v_j: each P_ij is rounded to 16 bits before the
//   product (relative error u) and out is rounded to 16 bits once more, so
//   |error| <= 2u * sum_j P_ij |v_j|.
// - dv = sum_i P_ij dout_i: the same two roundings, 2u * sum_i P_ij
//   |dout_i|.
// - ds = P * (dout @ v^T - rowsum(dout * out)) * scale is formed in float32
//   (the two sums are off by at most D * 2^-24 of their magnitudes each),
//   rounded to 16 bits for dk = ds^T @ q and dq = ds @ k, whose results are
//   rounded once more: |error| <= sum of (2u |ds| + its float32 error) times
//   |q| (or |k|).
// - stats are float32 throughout: the log-sum-exp moves by at most the
//   largest error of a score, D * 2^-24 * scale * sum |q_d k_d|, plus the
//   float32 exp and log (about 2^-22 relative).
// - Every rounding to 16 bits is also off by up to half the smallest
//   subnormal where the value is subnormal (2^-25 in float16: on an H200 a
//   causal dk of 5.2e-6, seen by one query, was 2.8e-8 off).
// Each bound is doubled: they are first-order, and the engines may round
// intermediate sums we do not model (flash attention's running rescaling).
// A wrong mask, scale, transpose or softmax term is off by O(1) of the
// values, hundreds of times these bounds.
//
// Without a GPU the suite reports skipped; with a GPU but no usable cuDNN,
// or a shape cuDNN refuses, it fails with cuDNN's whole account.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Status.h"
#include "runtime/cuda/DnnAttention.h"
#include "runtime/cuda/Driver.h"
#include "runtime/support/Float16.h"
#include "runtime/test/GpuTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>

using namespace dlc;
using namespace dlc::cuda;
using dlc::test::Buffer;
using dlc::test::Gpu;
using dlc::test::messageOf;

namespace {

/// Values stored in the attention's 16-bit type.
struct Half16 {
  DType dtype;

  uint16_t round(double v) const {
    return dtype == DType::BF16 ? BFloat16(static_cast<float>(v)).bits
                                : Half(static_cast<float>(v)).bits;
  }
  double value(uint16_t bits) const {
    return dtype == DType::BF16 ? static_cast<float>(BFloat16::fromBits(bits))
                                : static_cast<float>(Half::fromBits(bits));
  }
  /// The unit roundoff: half the distance from 1 to the next value.
  double unitRoundoff() const {
    return dtype == DType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  }
  /// The absolute error of rounding a subnormal: half the smallest
  /// subnormal (float16's 2^-24; bfloat16's is float32's, 2^-133).
  double subnormalRoundoff() const {
    return dtype == DType::BF16 ? std::ldexp(1.0, -134) : std::ldexp(1.0, -25);
  }
};

/// A tensor in the 16-bit type: its bits and their exact values.
struct Operand {
  std::vector<uint16_t> bits;
  std::vector<double> values;

  Operand(const Half16 &type, size_t n, std::mt19937_64 &random) {
    std::normal_distribution<double> normal(0, 1);
    for (size_t i = 0; i < n; ++i) {
      bits.push_back(type.round(normal(random)));
      values.push_back(type.value(bits.back()));
    }
  }
  Operand(const Half16 &type, const std::vector<uint16_t> &from) : bits(from) {
    for (uint16_t b : bits)
      values.push_back(type.value(b));
  }
};

/// Results and the bounds their errors must stay within.
struct Checked {
  std::vector<double> want, bound;
};

/// The reference forward: out [B,H,Tq,D] and lse [B,H,Tq].
void referenceForward(const DnnAttentionShape &s, const Half16 &type,
                      const Operand &q, const Operand &k, const Operand &v,
                      Checked &out, Checked &lse) {
  const int64_t D = s.headDim, Tq = s.queries, Tk = s.keys;
  const double u = type.unitRoundoff(), tiny = type.subnormalRoundoff();
  out.want.assign(s.batch * s.heads * Tq * D, 0);
  out.bound.assign(out.want.size(), 0);
  lse.want.assign(s.batch * s.heads * Tq, 0);
  lse.bound.assign(lse.want.size(), 0);
  std::vector<double> scores(Tk), magnitude(D), vMagnitude(D);
  for (int64_t bh = 0; bh < s.batch * s.heads; ++bh)
    for (int64_t i = 0; i < Tq; ++i) {
      const double *qi = &q.values[(bh * Tq + i) * D];
      int64_t visible = s.causal ? std::min(i + 1, Tk) : Tk;
      double max = -INFINITY, largestTerms = 0;
      for (int64_t j = 0; j < visible; ++j) {
        const double *kj = &k.values[(bh * Tk + j) * D];
        double dot = 0, terms = 0;
        for (int64_t d = 0; d < D; ++d) {
          dot += qi[d] * kj[d];
          terms += std::abs(qi[d] * kj[d]);
        }
        scores[j] = dot * s.scale;
        max = std::max(max, scores[j]);
        largestTerms = std::max(largestTerms, terms * s.scale);
      }
      double sum = 0;
      for (int64_t j = 0; j < visible; ++j)
        sum += std::exp(scores[j] - max);
      double rowLse = max + std::log(sum);
      lse.want[bh * Tq + i] = rowLse;
      lse.bound[bh * Tq + i] =
          2 * (D * std::ldexp(1.0, -24) * largestTerms +
               std::ldexp(1.0, -22) * (1 + std::abs(rowLse)));
      double *o = &out.want[(bh * Tq + i) * D];
      std::fill(magnitude.begin(), magnitude.end(), 0);
      std::fill(vMagnitude.begin(), vMagnitude.end(), 0);
      for (int64_t j = 0; j < visible; ++j) {
        double p = std::exp(scores[j] - rowLse);
        const double *vj = &v.values[(bh * Tk + j) * D];
        for (int64_t d = 0; d < D; ++d) {
          o[d] += p * vj[d];
          magnitude[d] += p * std::abs(vj[d]);
          vMagnitude[d] += std::abs(vj[d]);
        }
      }
      for (int64_t d = 0; d < D; ++d)
        out.bound[(bh * Tq + i) * D + d] =
            2 * (2 * u * magnitude[d] + tiny * (vMagnitude[d] + 1));
    }
}

/// The reference backward over the GPU forward's `out` and `stats`.
void referenceBackward(const DnnAttentionShape &s, const Half16 &type,
                       const Operand &q, const Operand &k, const Operand &v,
                       const Operand &out, const std::vector<float> &stats,
                       const Operand &dout, Checked &dq, Checked &dk,
                       Checked &dv) {
  const int64_t D = s.headDim, Tq = s.queries, Tk = s.keys;
  const double u = type.unitRoundoff(), tiny = type.subnormalRoundoff();
  const double sumError = D * std::ldexp(1.0, -24);
  for (Checked *c : {&dq, &dk, &dv}) {
    int64_t rows = c == &dq ? Tq : Tk;
    c->want.assign(s.batch * s.heads * rows * D, 0);
    c->bound.assign(c->want.size(), 0);
  }
  for (int64_t bh = 0; bh < s.batch * s.heads; ++bh)
    for (int64_t i = 0; i < Tq; ++i) {
      const double *qi = &q.values[(bh * Tq + i) * D];
      const double *oi = &out.values[(bh * Tq + i) * D];
      const double *gi = &dout.values[(bh * Tq + i) * D];
      double rowDot = 0, rowDotTerms = 0;
      for (int64_t d = 0; d < D; ++d) {
        rowDot += gi[d] * oi[d];
        rowDotTerms += std::abs(gi[d] * oi[d]);
      }
      int64_t visible = s.causal ? std::min(i + 1, Tk) : Tk;
      for (int64_t j = 0; j < visible; ++j) {
        const double *kj = &k.values[(bh * Tk + j) * D];
        const double *vj = &v.values[(bh * Tk + j) * D];
        double score = 0, dp = 0, dpTerms = 0;
        for (int64_t d = 0; d < D; ++d) {
          score += qi[d] * kj[d];
          dp += gi[d] * vj[d];
          dpTerms += std::abs(gi[d] * vj[d]);
        }
        double p = std::exp(score * s.scale - stats[bh * Tq + i]);
        double ds = p * (dp - rowDot) * s.scale;
        double dsError = 2 * u * std::abs(ds) + tiny +
                         p * s.scale * sumError * (dpTerms + rowDotTerms);
        for (int64_t d = 0; d < D; ++d) {
          size_t qIndex = (bh * Tq + i) * D + d, kIndex = (bh * Tk + j) * D + d;
          dv.want[kIndex] += p * gi[d];
          dv.bound[kIndex] += 2 * (2 * u * p + tiny) * std::abs(gi[d]);
          dk.want[kIndex] += ds * qi[d];
          dk.bound[kIndex] += 2 * dsError * std::abs(qi[d]);
          dq.want[qIndex] += ds * kj[d];
          dq.bound[qIndex] += 2 * dsError * std::abs(kj[d]);
        }
      }
    }
  // Each result is rounded to 16 bits once more.
  for (Checked *c : {&dq, &dk, &dv})
    for (double &b : c->bound)
      b += 2 * tiny;
}

/// "[b,h,i,d]" of a flat index into `dims`.
std::string indexString(size_t flat, const std::vector<int64_t> &dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t a = dims.size(); a-- > 0;) {
    index[a] = static_cast<int64_t>(flat) % dims[a];
    flat /= static_cast<size_t>(dims[a]);
  }
  return dnnShapeString(index);
}

/// Expects |got - want| <= bound elementwise; on failure names the worst
/// element (by error / bound) and how many are out; prints the worst
/// ratio either way, the margin the one GPU run shows.
void expectWithin(const std::string &name, const std::vector<double> &got,
                  const Checked &c, const std::vector<int64_t> &dims) {
  ASSERT_EQ(got.size(), c.want.size()) << name;
  size_t worst = 0, outside = 0;
  double worstRatio = -1, maxError = 0, maxWant = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double error = std::abs(got[i] - c.want[i]);
    // 1e-30 keeps an exact zero bound meaningful (a NaN is never within).
    double ratio = std::isnan(error) ? INFINITY : error / (c.bound[i] + 1e-30);
    if (!(error <= c.bound[i]))
      ++outside;
    if (ratio > worstRatio || std::isnan(got[i])) {
      worstRatio = ratio;
      worst = i;
    }
    maxError = std::max(maxError, error);
    maxWant = std::max(maxWant, std::abs(c.want[i]));
  }
  std::ostringstream account;
  account << name << ": worst error/bound " << worstRatio << " at "
          << indexString(worst, dims) << " (got " << got[worst] << ", want "
          << c.want[worst] << ", bound " << c.bound[worst] << "); max |error| "
          << maxError << ", max |want| " << maxWant;
  std::cout << "  " << account.str() << "\n";
  EXPECT_EQ(outside, 0u) << outside << " of " << got.size()
                         << " elements outside their bound; " << account.str();
}

/// Runs `shape` forward and backward on the GPU and checks both.
void check(DnnAttentionShape shape) {
  Gpu gpu;
  std::string why;
  if (!gpu.open(why))
    GTEST_SKIP() << why;
  std::unique_ptr<Dnn> dnn;
  std::string opened = messageOf(Dnn::open(dnn));
  ASSERT_TRUE(opened.empty())
      << "a GPU but no usable cuDNN (is libcudnn.so.9 on LD_LIBRARY_PATH?): "
      << opened;
  std::unique_ptr<DnnAttention> attention;
  std::string created = messageOf(DnnAttention::create(*dnn, shape, attention));
  ASSERT_TRUE(created.empty())
      << "cuDNN " << dnn->version() << " refused " << shape.describe() << ":\n"
      << created;
  std::cout << "  cuDNN " << dnn->version() << ", " << shape.describe() << ": "
            << attention->describePlans() << "\n";

  const Half16 type{shape.dtype};
  const int64_t B = shape.batch, H = shape.heads, Tq = shape.queries,
                Tk = shape.keys, D = shape.headDim;
  const size_t queryElements = B * H * Tq * D, keyElements = B * H * Tk * D,
               rows = B * H * Tq;
  std::mt19937_64 random(20261127);
  Operand q(type, queryElements, random), k(type, keyElements, random),
      v(type, keyElements, random), dout(type, queryElements, random);

  Buffer qBuffer(gpu, queryElements * 2), kBuffer(gpu, keyElements * 2),
      vBuffer(gpu, keyElements * 2), outBuffer(gpu, queryElements * 2),
      statsBuffer(gpu, rows * sizeof(float)),
      doutBuffer(gpu, queryElements * 2), dqBuffer(gpu, queryElements * 2),
      dkBuffer(gpu, keyElements * 2), dvBuffer(gpu, keyElements * 2),
      workspace(gpu, attention->workspaceBytes());
  qBuffer.upload(q.bits.data());
  kBuffer.upload(k.bits.data());
  vBuffer.upload(v.bits.data());
  doutBuffer.upload(dout.bits.data());
  // NaN bytes in every output: an element cuDNN does not write fails.
  for (const Buffer *b :
       {&outBuffer, &statsBuffer, &dqBuffer, &dkBuffer, &dvBuffer})
    b->clear(0xff);

  auto forward = [&] {
    return messageOf(attention->runForward(
        qBuffer.get(), kBuffer.get(), vBuffer.get(), outBuffer.get(),
        static_cast<float *>(statsBuffer.get()), workspace.get(),
        gpu.stream()));
  };
  auto backward = [&] {
    return messageOf(attention->runBackward(
        qBuffer.get(), kBuffer.get(), vBuffer.get(), outBuffer.get(),
        doutBuffer.get(), static_cast<const float *>(statsBuffer.get()),
        dqBuffer.get(), dkBuffer.get(), dvBuffer.get(), workspace.get(),
        gpu.stream()));
  };
  auto synchronize = [&] {
    return messageOf(gpu.driver().check(
        gpu.driver().cuStreamSynchronize(gpu.stream()), "cuStreamSynchronize"));
  };
  std::string ran = forward();
  ASSERT_TRUE(ran.empty()) << ran;
  std::vector<uint16_t> outBits(queryElements);
  std::vector<float> stats(rows);
  outBuffer.download(outBits.data());
  statsBuffer.download(stats.data());
  std::string synced = synchronize();
  ASSERT_TRUE(synced.empty()) << "the forward failed on the GPU: " << synced;

  Checked outWant, lseWant;
  referenceForward(shape, type, q, k, v, outWant, lseWant);
  Operand out(type, outBits);
  expectWithin("out", out.values, outWant, {B, H, Tq, D});
  expectWithin("stats", std::vector<double>(stats.begin(), stats.end()),
               lseWant, {B, H, Tq});

  ran = backward();
  ASSERT_TRUE(ran.empty()) << ran;
  std::vector<uint16_t> dqBits(queryElements), dkBits(keyElements),
      dvBits(keyElements);
  dqBuffer.download(dqBits.data());
  dkBuffer.download(dkBits.data());
  dvBuffer.download(dvBits.data());
  synced = synchronize();
  ASSERT_TRUE(synced.empty()) << "the backward failed on the GPU: " << synced;

  Checked dqWant, dkWant, dvWant;
  referenceBackward(shape, type, q, k, v, out, stats, dout, dqWant, dkWant,
                    dvWant);
  expectWithin("dq", Operand(type, dqBits).values, dqWant, {B, H, Tq, D});
  expectWithin("dk", Operand(type, dkBits).values, dkWant, {B, H, Tk, D});
  expectWithin("dv", Operand(type, dvBits).values, dvWant, {B, H, Tk, D});

  if (!shape.deterministic)
    return;
  // A deterministic plan repeats its bits, also when both directions are
  // replayed from a captured CUDA graph.
  for (const Buffer *b :
       {&outBuffer, &statsBuffer, &dqBuffer, &dkBuffer, &dvBuffer})
    b->clear(0xff);
  const Driver &driver = gpu.driver();
  ASSERT_EQ(driver.cuStreamBeginCapture(gpu.stream(),
                                        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
            CUDA_SUCCESS);
  std::string capturedForward = forward(), capturedBackward = backward();
  CUgraph graph = nullptr;
  CUresult ended = driver.cuStreamEndCapture(gpu.stream(), &graph);
  ASSERT_TRUE(capturedForward.empty()) << capturedForward;
  ASSERT_TRUE(capturedBackward.empty()) << capturedBackward;
  ASSERT_EQ(ended, CUDA_SUCCESS) << "cuStreamEndCapture";
  CUgraphExec exec = nullptr;
  ASSERT_EQ(driver.cuGraphInstantiate(&exec, graph, 0), CUDA_SUCCESS);
  EXPECT_EQ(driver.cuGraphLaunch(exec, gpu.stream()), CUDA_SUCCESS);
  std::vector<uint16_t> outAgain(queryElements), dqAgain(queryElements),
      dkAgain(keyElements), dvAgain(keyElements);
  std::vector<float> statsAgain(rows);
  outBuffer.download(outAgain.data());
  statsBuffer.download(statsAgain.data());
  dqBuffer.download(dqAgain.data());
  dkBuffer.download(dkAgain.data());
  dvBuffer.download(dvAgain.data());
  synced = synchronize();
  driver.cuGraphExecDestroy(exec);
  driver.cuGraphDestroy(graph);
  ASSERT_TRUE(synced.empty()) << "the captured graph failed: " << synced;
  EXPECT_EQ(outAgain, outBits) << "out differs when replayed";
  EXPECT_EQ(0,
            std::memcmp(statsAgain.data(), stats.data(), rows * sizeof(float)))
      << "stats differ when replayed";
  EXPECT_EQ(dqAgain, dqBits) << "dq differs when replayed";
  EXPECT_EQ(dkAgain, dkBits) << "dk differs when replayed";
  EXPECT_EQ(dvAgain, dvBits) << "dv differs when replayed";
}

DnnAttentionShape shapeOf(DType dtype, int64_t queries, int64_t keys,
                          int64_t headDim, bool causal) {
  DnnAttentionShape s;
  s.batch = 2;
  s.heads = 3;
  s.queries = queries;
  s.keys = keys;
  s.headDim = headDim;
  s.dtype = dtype;
  s.scale = static_cast<float>(1 / std::sqrt(static_cast<double>(headDim)));
  s.causal = causal;
  return s;
}

} // namespace

TEST(GpuDnnAttention, BFloat16) {
  check(shapeOf(DType::BF16, 128, 128, 64, false));
}

TEST(GpuDnnAttention, BFloat16Causal) {
  check(shapeOf(DType::BF16, 128, 128, 64, true));
}

TEST(GpuDnnAttention, Float16) {
  check(shapeOf(DType::F16, 128, 128, 64, false));
}

TEST(GpuDnnAttention, Float16Causal) {
  check(shapeOf(DType::F16, 128, 128, 64, true));
}

TEST(GpuDnnAttention, BFloat16CausalLongHead128) {
  check(shapeOf(DType::BF16, 256, 256, 128, true));
}

// Queries that see more keys than there are queries (cross attention).
TEST(GpuDnnAttention, BFloat16FewerQueriesThanKeys) {
  check(shapeOf(DType::BF16, 64, 192, 64, false));
}

TEST(GpuDnnAttention, BFloat16CausalDeterministicCaptured) {
  DnnAttentionShape s = shapeOf(DType::BF16, 128, 128, 64, true);
  s.deterministic = true;
  check(s);
}

// A dtype the engines do not take is refused before cuDNN is asked.
TEST(GpuDnnAttention, Float32IsUnimplemented) {
  Gpu gpu;
  std::string why;
  if (!gpu.open(why))
    GTEST_SKIP() << why;
  std::unique_ptr<Dnn> dnn;
  std::string opened = messageOf(Dnn::open(dnn));
  ASSERT_TRUE(opened.empty()) << opened;
  std::unique_ptr<DnnAttention> attention;
  dlc_status_t status = DnnAttention::create(
      *dnn, shapeOf(DType::F32, 16, 16, 64, false), attention);
  EXPECT_EQ(dlc_status_code(status), DLC_UNIMPLEMENTED);
  EXPECT_NE(std::string(dlc_status_message(status)).find("float32"),
            std::string::npos)
      << dlc_status_message(status);
  dlc_status_free(status);
}
