//===- Widen.cpp - 16-bit library calls computed in float32 ---------------===//
#include "runtime/cpu/Widen.h"

#include "runtime/module/Format.h"
#include "runtime/support/Float16.h"

namespace dlc::cpu {
namespace {

template <typename Narrow>
void widenAll(const void *in, float *out, size_t n) {
  const auto *from = static_cast<const Narrow *>(in);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(from[i]);
}

template <typename Narrow>
void narrowAll(const float *in, void *out, size_t n) {
  auto *to = static_cast<Narrow *>(out);
  for (size_t i = 0; i < n; ++i)
    to[i] = Narrow(in[i]);
}

} // namespace

size_t alignScratch(size_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

void widenToFloat(DType dtype, const void *in, float *out, size_t n) {
  if (dtype == DType::F16)
    widenAll<Half>(in, out, n);
  else
    widenAll<BFloat16>(in, out, n);
}

void narrowFromFloat(DType dtype, const float *in, void *out, size_t n) {
  if (dtype == DType::F16)
    narrowAll<Half>(in, out, n);
  else
    narrowAll<BFloat16>(in, out, n);
}

} // namespace dlc::cpu
