//===- TestKernels.cpp - Hand-written kernels for runtime tests -----------===//
//
// Built as a shared library whose bytes tests embed in modules as their
// cpu_shared_object, exactly as dlc-compile embeds generated kernels. Each
// kernel follows the CPU ABI of runtime/module/dlcm.fbs:
// `void NAME(void *const *buffers, int64_t begin, int64_t end)`.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdint>

extern "C" {

/// buffers: a, b, out (float32[n]); iteration i: out[i] = a[i] + b[i].
void test_add_f32(void *const *buffers, int64_t begin, int64_t end) {
  const float *a = static_cast<const float *>(buffers[0]);
  const float *b = static_cast<const float *>(buffers[1]);
  float *out = static_cast<float *>(buffers[2]);
  for (int64_t i = begin; i < end; ++i)
    out[i] = a[i] + b[i];
}

/// buffers: counts (int32[n]); iteration i adds 1 to counts[i], so a test
/// sees whether every iteration ran exactly once.
void test_mark_i32(void *const *buffers, int64_t begin, int64_t end) {
  int32_t *counts = static_cast<int32_t *>(buffers[0]);
  for (int64_t i = begin; i < end; ++i)
    counts[i] += 1;
}

/// buffers: in, out (int64[]); one iteration: out = in + 1.
void test_increment_i64(void *const *buffers, int64_t begin, int64_t end) {
  if (begin < end)
    *static_cast<int64_t *>(buffers[1]) =
        *static_cast<const int64_t *>(buffers[0]) + 1;
}

/// buffers: w, grad, lr (float32[]), out; iteration i:
/// out[i] = w[i] - lr * grad[i] (an SGD step).
void test_sgd_f32(void *const *buffers, int64_t begin, int64_t end) {
  const float *w = static_cast<const float *>(buffers[0]);
  const float *g = static_cast<const float *>(buffers[1]);
  float lr = *static_cast<const float *>(buffers[2]);
  float *out = static_cast<float *>(buffers[3]);
  for (int64_t i = begin; i < end; ++i)
    out[i] = w[i] - lr * g[i];
}

/// buffers: logits (float32[B, C]), labels (int64[B]), dims (int64[2] =
/// {B, C}), loss (float32[]), dlogits (float32[B, C]). One iteration
/// computes the mean softmax cross-entropy over the batch and its gradient
/// with respect to the logits. A label outside [0, C) contributes nothing.
void test_softmax_xent_f32(void *const *buffers, int64_t begin, int64_t end) {
  if (begin >= end)
    return;
  const float *logits = static_cast<const float *>(buffers[0]);
  const int64_t *labels = static_cast<const int64_t *>(buffers[1]);
  const int64_t *dims = static_cast<const int64_t *>(buffers[2]);
  float *loss = static_cast<float *>(buffers[3]);
  float *dlogits = static_cast<float *>(buffers[4]);
  int64_t batch = dims[0], classes = dims[1];
  double total = 0;
  for (int64_t b = 0; b < batch; ++b) {
    const float *row = logits + b * classes;
    float *drow = dlogits + b * classes;
    double max = row[0];
    for (int64_t c = 1; c < classes; ++c)
      max = row[c] > max ? row[c] : max;
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(row[c] - max);
    int64_t label = labels[b];
    bool valid = label >= 0 && label < classes;
    for (int64_t c = 0; c < classes; ++c) {
      double p = std::exp(row[c] - max) / sum;
      drow[c] = valid ? static_cast<float>((p - (c == label)) / batch) : 0.0f;
    }
    if (valid)
      total += std::log(sum) + max - row[label];
  }
  *loss = static_cast<float>(total / batch);
}

} // extern "C"
