//===- CpuLibraryBench.cpp - OpenBLAS vs oneDNN on training shapes --------===//
//
// The measurement behind the CPU library choice in docs/performance.md: times
// f32/f64 GEMMs of the shapes training MLPs, GPTs and ResNets produce with
// OpenBLAS (cblas_?gemm, row-major; a batch is a loop of calls) and with
// oneDNN 2.6's matmul primitive (created once, batch as a 3-d tensor), and a
// ResNet-like 3x3 convolution through oneDNN in plain NCHW against
// format_tag::any with reorders around it, forward and both backward
// passes. Prints GFLOP/s; timings belong in
// a benchmark, never in a test, so this is not registered with ctest.
//
// Usage: dlc_cpu_library_bench [threads (default 2)]
//
//===----------------------------------------------------------------------===//
#include <cblas.h>
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// Median seconds of `fn` over enough repetitions to fill ~0.3 s.
double timeIt(const std::function<void()> &fn) {
  fn();
  fn();
  auto start = Clock::now();
  fn();
  double once = std::chrono::duration<double>(Clock::now() - start).count();
  int reps = std::clamp(static_cast<int>(0.3 / std::max(once, 1e-7)), 5, 2000);
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[reps / 2];
}

struct Gemm {
  const char *what;
  int64_t batch, m, k, n;
};

template <typename T> std::vector<T> randomVector(size_t n) {
  std::vector<T> v(n);
  for (auto &x : v)
    x = static_cast<T>(std::rand() % 1000) / T(1000) - T(0.5);
  return v;
}

template <typename T> double timeBlas(const Gemm &g) {
  auto a = randomVector<T>(g.batch * g.m * g.k);
  auto b = randomVector<T>(g.batch * g.k * g.n);
  std::vector<T> c(g.batch * g.m * g.n);
  return timeIt([&] {
    for (int64_t i = 0; i < g.batch; ++i) {
      const T *ai = a.data() + i * g.m * g.k, *bi = b.data() + i * g.k * g.n;
      T *ci = c.data() + i * g.m * g.n;
      if constexpr (sizeof(T) == 4)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k,
                    1.0f, ai, g.k, bi, g.n, 0.0f, ci, g.n);
      else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k,
                    1.0, ai, g.k, bi, g.n, 0.0, ci, g.n);
    }
  });
}

double timeDnnlMatmul(const Gemm &g, dnnl::engine &engine,
                      dnnl::stream &stream) {
  using namespace dnnl;
  using tag = memory::format_tag;
  memory::desc a({g.batch, g.m, g.k}, memory::data_type::f32, tag::abc);
  memory::desc b({g.batch, g.k, g.n}, memory::data_type::f32, tag::abc);
  memory::desc c({g.batch, g.m, g.n}, memory::data_type::f32, tag::abc);
  matmul::primitive_desc pd(matmul::desc(a, b, c), engine);
  matmul prim(pd);
  auto av = randomVector<float>(g.batch * g.m * g.k);
  auto bv = randomVector<float>(g.batch * g.k * g.n);
  std::vector<float> cv(g.batch * g.m * g.n);
  memory am(a, engine, av.data()), bm(b, engine, bv.data()),
      cm(c, engine, cv.data());
  return timeIt([&] {
    prim.execute(
        stream,
        {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
  });
}

enum class ConvKind { Forward, BackwardData, BackwardWeights };

/// A ResNet-like 3x3 convolution, stride 1, pad 1, of kind `kind`: plain
/// NCHW/OIHW end to end, or the primitive's preferred (blocked) layouts with
/// reorders from and to NCHW inside the timed region (the runtime's buffers
/// are NCHW).
double timeDnnlConv(ConvKind kind, bool any, int64_t n, int64_t c, int64_t hw,
                    dnnl::engine &engine, dnnl::stream &stream) {
  using namespace dnnl;
  using tag = memory::format_tag;
  auto f32 = memory::data_type::f32;
  memory::dims xd{n, c, hw, hw}, wd{c, c, 3, 3}, yd{n, c, hw, hw};
  memory::desc xPlain(xd, f32, tag::nchw), wPlain(wd, f32, tag::oihw),
      yPlain(yd, f32, tag::nchw);
  memory::desc xDesc = any ? memory::desc(xd, f32, tag::any) : xPlain;
  memory::desc wDesc = any ? memory::desc(wd, f32, tag::any) : wPlain;
  memory::desc yDesc = any ? memory::desc(yd, f32, tag::any) : yPlain;
  convolution_forward::primitive_desc fwd(
      convolution_forward::desc(prop_kind::forward_training,
                                algorithm::convolution_direct, xDesc, wDesc,
                                yDesc, {1, 1}, {1, 1}, {1, 1}),
      engine);
  primitive prim;
  memory::desc xWant, wWant, yWant;
  int xArg, wArg, yArg;
  bool xOut = false, wOut = false, yOut = false;
  switch (kind) {
  case ConvKind::Forward:
    prim = convolution_forward(fwd);
    xWant = fwd.src_desc(), wWant = fwd.weights_desc(), yWant = fwd.dst_desc();
    xArg = DNNL_ARG_SRC, wArg = DNNL_ARG_WEIGHTS, yArg = DNNL_ARG_DST;
    yOut = true;
    break;
  case ConvKind::BackwardData: {
    convolution_backward_data::primitive_desc pd(
        convolution_backward_data::desc(algorithm::convolution_direct, xDesc,
                                        wDesc, yDesc, {1, 1}, {1, 1}, {1, 1}),
        engine, fwd);
    prim = convolution_backward_data(pd);
    xWant = pd.diff_src_desc(), wWant = pd.weights_desc(),
    yWant = pd.diff_dst_desc();
    xArg = DNNL_ARG_DIFF_SRC, wArg = DNNL_ARG_WEIGHTS, yArg = DNNL_ARG_DIFF_DST;
    xOut = true;
    break;
  }
  case ConvKind::BackwardWeights: {
    convolution_backward_weights::primitive_desc pd(
        convolution_backward_weights::desc(algorithm::convolution_direct, xDesc,
                                           wDesc, yDesc, {1, 1}, {1, 1},
                                           {1, 1}),
        engine, fwd);
    prim = convolution_backward_weights(pd);
    xWant = pd.src_desc(), wWant = pd.diff_weights_desc(),
    yWant = pd.diff_dst_desc();
    xArg = DNNL_ARG_SRC, wArg = DNNL_ARG_DIFF_WEIGHTS, yArg = DNNL_ARG_DIFF_DST;
    wOut = true;
    break;
  }
  }
  auto xv = randomVector<float>(n * c * hw * hw);
  auto wv = randomVector<float>(c * c * 9);
  auto yv = randomVector<float>(n * c * hw * hw);
  memory xm(xPlain, engine, xv.data()), wm(wPlain, engine, wv.data()),
      ym(yPlain, engine, yv.data());
  memory xi = any ? memory(xWant, engine) : xm;
  memory wi = any ? memory(wWant, engine) : wm;
  memory yi = any ? memory(yWant, engine) : ym;
  auto in = [&](memory &plain, memory &internal, bool isOutput) {
    if (any && !isOutput)
      reorder(plain, internal).execute(stream, plain, internal);
  };
  auto out = [&](memory &plain, memory &internal, bool isOutput) {
    if (any && isOutput)
      reorder(internal, plain).execute(stream, internal, plain);
  };
  return timeIt([&] {
    in(xm, xi, xOut);
    in(wm, wi, wOut);
    in(ym, yi, yOut);
    prim.execute(stream, {{xArg, xi}, {wArg, wi}, {yArg, yi}});
    out(xm, xi, xOut);
    out(wm, wi, wOut);
    out(ym, yi, yOut);
    stream.wait();
  });
}

} // namespace

int main(int argc, char **argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  std::printf("threads: %d\n", threads);

  const Gemm gemms[] = {
      {"MLP layer [32x512]x[512x512]", 1, 32, 512, 512},
      {"GPT projection [2048x64]x[64x64]", 1, 2048, 64, 64},
      {"weight gradient [64x2048]x[2048x64]", 1, 64, 2048, 64},
      {"attention 128 x [64x16]x[16x64]", 128, 64, 16, 64},
      {"square [1024x1024]x[1024x1024]", 1, 1024, 1024, 1024},
  };
  std::printf("%-40s %12s %12s %12s\n", "GEMM (GFLOP/s)", "sgemm", "dnnl f32",
              "dgemm");
  for (const Gemm &g : gemms) {
    double flops = 2.0 * g.batch * g.m * g.n * g.k;
    std::printf("%-40s %12.1f %12.1f %12.1f\n", g.what,
                flops / timeBlas<float>(g) * 1e-9,
                flops / timeDnnlMatmul(g, engine, stream) * 1e-9,
                flops / timeBlas<double>(g) * 1e-9);
  }

  struct Conv {
    const char *what;
    int64_t n, c, hw;
  } convs[] = {{"ResNet stage 1: 32x64x56x56", 32, 64, 56},
               {"ResNet stage 3: 32x256x14x14", 32, 256, 14},
               {"CIFAR ResNet: 32x64x32x32", 32, 64, 32}};
  const char *kindNames[] = {"forward", "backward data", "backward weights"};
  for (ConvKind kind :
       {ConvKind::Forward, ConvKind::BackwardData, ConvKind::BackwardWeights}) {
    std::printf("%-40s %12s %12s\n",
                (std::string("conv 3x3 ") + kindNames[int(kind)] + " (GFLOP/s)")
                    .c_str(),
                "nchw", "any+reorder");
    for (const Conv &c : convs) {
      double flops = 2.0 * c.n * c.c * c.c * 9 * c.hw * c.hw;
      std::printf(
          "%-40s %12.1f %12.1f\n", c.what,
          flops / timeDnnlConv(kind, false, c.n, c.c, c.hw, engine, stream) *
              1e-9,
          flops / timeDnnlConv(kind, true, c.n, c.c, c.hw, engine, stream) *
              1e-9);
    }
  }
  return 0;
}
