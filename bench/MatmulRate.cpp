//===- MatmulRate.cpp - The CPU's measured float32 matrix rate ------------===//
//
//   dlc-matmul-rate [--threads N]
//
// Prints the GFLOP/s of a 1024^3 float32 matmul through oneDNN, the library
// the runtime's CPU matmuls use (docs/performance.md), best of 10 after a
// warm-up: the "measured matrix rate" a step's floor is counted against.
//
//===----------------------------------------------------------------------===//

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: dlc-matmul-rate [--threads N]\n");
      return 1;
    }
  }
  if (threads > 0)
    omp_set_num_threads(threads);
  const int64_t n = 1024;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc desc({n, n}, dnnl::memory::data_type::f32,
                          dnnl::memory::format_tag::ab);
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n);
  dnnl::memory am(desc, engine, a.data()), bm(desc, engine, b.data()),
      cm(desc, engine, c.data());
  dnnl::matmul matmul(dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(desc, desc, desc), engine));
  auto run = [&]() {
    matmul.execute(
        stream,
        {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream.wait();
  };
  run();
  double best = 1e30;
  for (int i = 0; i < 10; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    std::chrono::duration<double> elapsed =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  std::printf("%.1f\n", 2.0 * n * n * n / best / 1e9);
  return 0;
}
