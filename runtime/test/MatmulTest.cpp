//===- MatmulTest.cpp - MatmulStep against a float64 reference ------------===//
//
// Each case runs one MatmulStep through a session (module, executor,
// library) and compares it with a naive float64 product computed here.
// Tolerances follow |got - want| <= atol + rtol * sum_k |lhs * rhs|: the
// libraries sum in a different order than the reference, and the rounding
// error of a k-term sum is bounded by about k * eps * sum |terms|.
//
//===----------------------------------------------------------------------===//
#include "runtime/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace dlc;
using namespace dlc::test;

namespace {

struct Case {
  const char *name;
  int64_t batch, m, n, k;
  int64_t lhsStride, rhsStride; // elements; 0 broadcasts
  bool lhsTransposed = false, rhsTransposed = false;
};

std::ostream &operator<<(std::ostream &os, const Case &c) {
  return os << c.name;
}

int64_t span(int64_t batch, int64_t stride, int64_t matrix) {
  return batch == 0 || matrix == 0 ? 0 : (batch - 1) * stride + matrix;
}

/// The reference product and, per result element, sum_k |lhs * rhs|.
void reference(const Case &c, const std::vector<double> &lhs,
               const std::vector<double> &rhs, std::vector<double> &out,
               std::vector<double> &magnitude) {
  out.assign(c.batch * c.m * c.n, 0);
  magnitude.assign(out.size(), 0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double a = lhs[b * c.lhsStride +
                         (c.lhsTransposed ? p * c.m + i : i * c.k + p)];
          double v = rhs[b * c.rhsStride +
                         (c.rhsTransposed ? j * c.k + p : p * c.n + j)];
          sum += a * v;
          mag += std::fabs(a * v);
        }
        out[(b * c.m + i) * c.n + j] = sum;
        magnitude[(b * c.m + i) * c.n + j] = mag;
      }
}

/// Runs case `c` in `dtype` (float32/float64/float16/bfloat16 storage type
/// T) on device `spec` and checks it with tolerance `rtol` relative to the
/// magnitude; skips when the device is absent, or is a GPU that cannot
/// multiply this dtype (the CPU multiplies every float type).
template <typename T, typename Convert>
void runCase(const Case &c, DType dtype, dlc_dtype_t cDtype, double rtol,
             Convert toDouble, int threads = 2,
             const std::string &spec = "cpu") {
  int64_t lhsSize = span(c.batch, c.lhsStride, c.m * c.k);
  int64_t rhsSize = span(c.batch, c.rhsStride, c.k * c.n);
  int64_t outSize = c.batch * c.m * c.n;
  std::string why;
  DevicePtr device = openDevice(spec, threads, why);
  if (!device)
    GTEST_SKIP() << why;
  ModuleBuilder mb;
  mb.target(targetOf(spec));
  FunctionBuilder &f = mb.function("mm");
  f.argument("lhs", "input", dtype, {lhsSize});
  f.argument("rhs", "input", dtype, {rhsSize});
  f.result("out", "output", dtype, {outSize});
  MatmulSpec s;
  s.dtype = dtype;
  s.lhs = argument(0);
  s.rhs = argument(1);
  s.result = result(0);
  s.batch = c.batch;
  s.m = c.m;
  s.n = c.n;
  s.k = c.k;
  s.lhsBatchStride = c.lhsStride;
  s.rhsBatchStride = c.rhsStride;
  s.lhsTransposed = c.lhsTransposed;
  s.rhsTransposed = c.rhsTransposed;
  f.matmul(s, "node 'mm' (MatMul)");
  ModulePtr module(nullptr, &dlc_module_release);
  Outcome o = loadModule(mb.finish(), module);
  ASSERT_TRUE(o.ok()) << o.message;
  SessionPtr session(nullptr, &dlc_session_release);
  o = openSession(module.get(), device.get(), session);
  if (o.code == DLC_UNIMPLEMENTED && spec != "cpu")
    GTEST_SKIP() << o.message;
  ASSERT_TRUE(o.ok()) << o.message;

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  HostTensor<T> lhs(cDtype, {lhsSize}), rhs(cDtype, {rhsSize}),
      out(cDtype, {outSize});
  std::vector<double> lhsD(lhsSize), rhsD(rhsSize);
  for (int64_t i = 0; i < lhsSize; ++i) {
    lhs.data[i] = static_cast<T>(dist(rng));
    lhsD[i] = toDouble(lhs.data[i]);
  }
  for (int64_t i = 0; i < rhsSize; ++i) {
    rhs.data[i] = static_cast<T>(dist(rng));
    rhsD[i] = toDouble(rhs.data[i]);
  }
  dlc_tensor_t inputs[] = {lhs.view(), rhs.view()};
  dlc_tensor_t outputs[] = {out.view()};
  o = outcome(dlc_session_call(session.get(), "mm", inputs, 2, outputs, 1));
  ASSERT_TRUE(o.ok()) << o.message;
  std::vector<double> want, magnitude;
  reference(c, lhsD, rhsD, want, magnitude);
  for (int64_t i = 0; i < outSize; ++i)
    ASSERT_LE(std::fabs(toDouble(out.data[i]) - want[i]),
              1e-30 + rtol * magnitude[i])
        << c << " element " << i << ": got " << toDouble(out.data[i])
        << ", want " << want[i];
}

const Case kCases[] = {
    {"square", 1, 17, 13, 11, 0, 0},
    {"mlp layer [32x512]x[512x64]", 1, 32, 64, 512, 0, 0},
    {"batched", 5, 7, 9, 6, 42, 54},
    {"attention [8 x 16x8]x[8x16]", 8, 16, 16, 8, 128, 128},
    {"lhs broadcast", 4, 5, 3, 6, 0, 18},
    {"rhs broadcast", 4, 5, 3, 6, 30, 0},
    {"strided batches", 3, 4, 5, 6, 30, 40},
    {"lhs transposed (weight gradient)", 1, 24, 16, 64, 0, 0, true, false},
    {"rhs transposed", 2, 6, 7, 5, 30, 35, false, true},
    {"both transposed, batched", 3, 4, 5, 6, 24, 30, true, true},
    {"k = 1", 2, 3, 4, 1, 3, 4},
    {"m = 1 (vector-matrix)", 1, 1, 33, 65, 0, 0},
};

TEST(Matmul, Float32MatchesReference) {
  // float32 (eps 6e-8) summing k <= 512 terms in another order: k * eps is
  // at most 3e-5 of the magnitude; 1e-5 would already fail only for the
  // pathological ordering, 4e-5 leaves margin for the library's blocking.
  for (const Case &c : kCases)
    runCase<float>(c, DType::F32, DLC_F32, 4e-5,
                   [](float v) { return double(v); });
}

TEST(Matmul, Float64MatchesReference) {
  // float64 (eps 1.1e-16) over at most 512 terms: 1e-13 of the magnitude.
  for (const Case &c : kCases)
    runCase<double>(c, DType::F64, DLC_F64, 1e-13, [](double v) { return v; });
}

TEST(Matmul, BFloat16MatchesReference) {
  // bfloat16 results are rounded to 8 significant bits (eps 2^-8 = 3.9e-3)
  // after a float32 accumulation: 1e-2 of the magnitude.
  for (const Case &c : kCases) {
    if (c.k > 64)
      continue;
    runCase<BFloat16>(c, DType::BF16, DLC_BF16, 1e-2,
                      [](BFloat16 v) { return double(float(v)); });
  }
}

TEST(Matmul, Float16MatchesReference) {
  // float16 results are rounded to 11 significant bits (eps 2^-11 = 4.9e-4)
  // after a float32 accumulation (oneDNN's, or float32 on widened copies
  // where this CPU has no float16 matmul): 2e-3 of the magnitude.
  for (const Case &c : kCases)
    runCase<Half>(c, DType::F16, DLC_F16, 2e-3,
                  [](Half v) { return double(float(v)); });
}

TEST(Matmul, SingleThreadAndManyThreadsAgree) {
  for (int threads : {1, 3})
    runCase<float>(
        kCases[1], DType::F32, DLC_F32, 4e-5, [](float v) { return double(v); },
        threads);
}

// The same cases through cuBLASLt (ctest label `gpu`; skipped without a
// GPU). float32 runs without TF32 (a module opts in with dlc-compile
// --tf32), so the CPU's tolerance holds.
TEST(GpuMatmul, Float32MatchesReference) {
  for (const Case &c : kCases)
    runCase<float>(
        c, DType::F32, DLC_F32, 4e-5, [](float v) { return double(v); }, 0,
        "cuda:0");
}

TEST(GpuMatmul, BFloat16MatchesReference) {
  // As on the CPU: float32 accumulation, results rounded to bfloat16.
  for (const Case &c : kCases)
    if (c.k <= 64)
      runCase<BFloat16>(
          c, DType::BF16, DLC_BF16, 1e-2,
          [](BFloat16 v) { return double(float(v)); }, 0, "cuda:0");
}

TEST(GpuMatmul, Float16MatchesReference) {
  for (const Case &c : kCases)
    runCase<Half>(
        c, DType::F16, DLC_F16, 2e-3, [](Half v) { return double(float(v)); },
        0, "cuda:0");
}

TEST(GpuMatmul, Float64MatchesReference) {
  for (const Case &c : kCases)
    runCase<double>(
        c, DType::F64, DLC_F64, 1e-13, [](double v) { return v; }, 0, "cuda:0");
}

TEST(Matmul, EmptyProductsAreZeros) {
  // k = 0: every element is an empty sum.
  Case c{"k = 0", 2, 3, 4, 0, 0, 0};
  runCase<float>(c, DType::F32, DLC_F32, 0, [](float v) { return double(v); });
  runCase<double>(c, DType::F64, DLC_F64, 0, [](double v) { return v; });
  Case empty{"m = 0", 2, 0, 4, 3, 0, 12};
  runCase<float>(empty, DType::F32, DLC_F32, 0,
                 [](float v) { return double(v); });
}

TEST(Matmul, IntegerMatmulIsUnimplemented) {
  ModuleBuilder mb;
  FunctionBuilder &f = mb.function("mm");
  f.argument("a", "input", DType::I32, {4});
  f.result("c", "output", DType::I32, {4});
  MatmulSpec s;
  s.dtype = DType::I32;
  s.lhs = s.rhs = argument(0);
  s.result = result(0);
  s.m = s.n = s.k = 2;
  f.matmul(s, "node 'mm' (MatMul)");
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(mb.finish(), module).ok());
  auto device = cpuDevice(1);
  SessionPtr session(nullptr, &dlc_session_release);
  Outcome o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_UNIMPLEMENTED);
  EXPECT_EQ(o.message, "test.dlcm: mm: step 0 (node 'mm' (MatMul)): matmul "
                       "of int32 is not supported on the CPU");
}

} // namespace
