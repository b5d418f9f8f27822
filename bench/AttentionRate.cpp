//===- AttentionRate.cpp - cuDNN fused attention's measured rate ----------===//
//
//   dlc-attention-rate [--batch B] [--heads H] [--tokens T] [--head-dim D]
//                      [--dtype bfloat16|float16] [--no-causal]
//                      [--deterministic]
//
// Times DnnAttention (runtime/cuda/DnnAttention.h) forward, and forward
// then backward, on GPU 0 at GPT-2 small's shape by default (B=8, H=12,
// T=1024, D=64, causal, bfloat16) on N(0, 1) data: the median of 20 runs
// after 3 warm-ups, each timed with CUDA events around it alone, printed in
// ms and TFLOP/s. The FLOPs are the matmuls' (2 per multiply-add): 4 B H T^2
// D forward, 2.5 times that backward (five matmuls of the same size to the
// forward's two), halved when causal, since the fused engines skip the
// masked half of the scores.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Status.h"
#include "runtime/cuda/DnnAttention.h"
#include "runtime/cuda/Driver.h"
#include "runtime/support/Float16.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace dlc;
using namespace dlc::cuda;

namespace {

/// Prints `status` (freed) and returns true when it is an error.
bool failed(dlc_status_t status, const char *what) {
  if (!status)
    return false;
  std::fprintf(stderr, "dlc-attention-rate: %s: %s\n", what,
               dlc_status_message(status));
  dlc_status_free(status);
  return true;
}

/// The median of `runs` timings of `body` on `stream`, after 3 untimed
/// ones; negative when a run fails.
double medianMs(const Driver &driver, CUstream stream,
                const std::function<dlc_status_t()> &body) {
  constexpr int kWarmups = 3, kRuns = 20;
  CUevent start = nullptr, stop = nullptr;
  if (failed(driver.check(driver.cuEventCreate(&start, 0), "cuEventCreate"),
             "timing") ||
      failed(driver.check(driver.cuEventCreate(&stop, 0), "cuEventCreate"),
             "timing"))
    return -1;
  std::vector<float> ms;
  for (int i = 0; i < kWarmups + kRuns; ++i) {
    float elapsed = 0;
    if (driver.cuEventRecord(start, stream) != CUDA_SUCCESS ||
        failed(body(), "run") ||
        driver.cuEventRecord(stop, stream) != CUDA_SUCCESS ||
        failed(
            driver.check(driver.cuEventSynchronize(stop), "cuEventSynchronize"),
            "run") ||
        driver.cuEventElapsedTime(&elapsed, start, stop) != CUDA_SUCCESS)
      return -1;
    if (i >= kWarmups)
      ms.push_back(elapsed);
  }
  driver.cuEventDestroy(start);
  driver.cuEventDestroy(stop);
  std::nth_element(ms.begin(), ms.begin() + kRuns / 2, ms.end());
  return ms[kRuns / 2];
}

} // namespace

int main(int argc, char **argv) {
  DnnAttentionShape shape;
  shape.batch = 8;
  shape.heads = 12;
  shape.queries = shape.keys = 1024;
  shape.headDim = 64;
  shape.dtype = DType::BF16;
  shape.causal = true;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? std::atoll(argv[++i]) : 0; };
    if (!std::strcmp(argv[i], "--batch")) {
      shape.batch = next();
    } else if (!std::strcmp(argv[i], "--heads")) {
      shape.heads = next();
    } else if (!std::strcmp(argv[i], "--tokens")) {
      shape.queries = shape.keys = next();
    } else if (!std::strcmp(argv[i], "--head-dim")) {
      shape.headDim = next();
    } else if (!std::strcmp(argv[i], "--dtype") && i + 1 < argc) {
      std::string name = argv[++i];
      shape.dtype = name == "float16" ? DType::F16 : DType::BF16;
      if (name != "float16" && name != "bfloat16") {
        std::fprintf(stderr, "dlc-attention-rate: --dtype bfloat16|float16\n");
        return 1;
      }
    } else if (!std::strcmp(argv[i], "--no-causal")) {
      shape.causal = false;
    } else if (!std::strcmp(argv[i], "--deterministic")) {
      shape.deterministic = true;
    } else {
      std::fprintf(stderr,
                   "usage: dlc-attention-rate [--batch B] [--heads H] "
                   "[--tokens T] [--head-dim D] [--dtype bfloat16|float16] "
                   "[--no-causal] [--deterministic]\n");
      return 1;
    }
  }
  shape.scale = static_cast<float>(1 / std::sqrt(double(shape.headDim)));

  const Driver *driver = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  if (failed(Driver::get(driver), "the CUDA driver") ||
      failed(driver->check(driver->cuDeviceGet(&device, 0), "cuDeviceGet"),
             "GPU 0") ||
      failed(driver->check(driver->cuDevicePrimaryCtxRetain(&context, device),
                           "cuDevicePrimaryCtxRetain"),
             "GPU 0") ||
      failed(driver->check(driver->cuCtxSetCurrent(context), "cuCtxSetCurrent"),
             "GPU 0") ||
      failed(
          driver->check(driver->cuStreamCreate(&stream, 0), "cuStreamCreate"),
          "GPU 0"))
    return 1;
  std::unique_ptr<Dnn> dnn;
  std::unique_ptr<DnnAttention> attention;
  if (failed(Dnn::open(dnn), "cuDNN") ||
      failed(DnnAttention::create(*dnn, shape, attention), "planning"))
    return 1;
  std::printf("cuDNN %zu, %s: %s\n", dnn->version(), shape.describe().c_str(),
              attention->describePlans().c_str());

  // q, k, v, out, dout, dq, dk, dv of one size (Tq == Tk), stats, and the
  // workspace; the inputs N(0, 1), the rest written by the runs.
  size_t elements = static_cast<size_t>(shape.batch * shape.heads *
                                        shape.queries * shape.headDim);
  size_t rows = static_cast<size_t>(shape.batch * shape.heads * shape.queries);
  std::vector<uint16_t> host(elements);
  std::mt19937_64 random(1);
  std::normal_distribution<float> normal(0, 1);
  std::vector<CUdeviceptr> buffers(8);
  CUdeviceptr stats = 0, workspace = 0;
  for (CUdeviceptr &b : buffers) {
    for (uint16_t &h : host)
      h = shape.dtype == DType::BF16 ? BFloat16(normal(random)).bits
                                     : Half(normal(random)).bits;
    if (failed(
            driver->check(driver->cuMemAlloc(&b, elements * 2), "cuMemAlloc"),
            "memory") ||
        failed(driver->check(driver->cuMemcpyHtoDAsync(b, host.data(),
                                                       elements * 2, stream),
                             "cuMemcpyHtoDAsync"),
               "memory"))
      return 1;
  }
  if (failed(driver->check(driver->cuMemAlloc(&stats, rows * sizeof(float)),
                           "cuMemAlloc"),
             "memory") ||
      failed(driver->check(driver->cuMemAlloc(
                               &workspace, std::max<size_t>(
                                               attention->workspaceBytes(), 1)),
                           "cuMemAlloc"),
             "memory"))
    return 1;
  auto pointer = [](CUdeviceptr p) { return reinterpret_cast<void *>(p); };
  void *q = pointer(buffers[0]), *k = pointer(buffers[1]),
       *v = pointer(buffers[2]), *out = pointer(buffers[3]),
       *dout = pointer(buffers[4]), *dq = pointer(buffers[5]),
       *dk = pointer(buffers[6]), *dv = pointer(buffers[7]);
  auto *statsPointer = static_cast<float *>(pointer(stats));
  auto forward = [&] {
    return attention->runForward(q, k, v, out, statsPointer, pointer(workspace),
                                 stream);
  };
  auto both = [&]() -> dlc_status_t {
    DLC_RETURN_IF_ERROR(forward());
    return attention->runBackward(q, k, v, out, dout, statsPointer, dq, dk, dv,
                                  pointer(workspace), stream);
  };

  double flops = 4.0 * shape.batch * shape.heads * shape.queries * shape.keys *
                 shape.headDim * (shape.causal ? 0.5 : 1.0);
  double forwardMs = medianMs(*driver, stream, forward);
  double bothMs = medianMs(*driver, stream, both);
  if (forwardMs < 0 || bothMs < 0)
    return 1;
  std::printf("forward: %.3f ms, %.1f TFLOP/s\n", forwardMs,
              flops / forwardMs / 1e9);
  std::printf("forward+backward: %.3f ms, %.1f TFLOP/s\n", bothMs,
              3.5 * flops / bothMs / 1e9);
  return 0;
}
