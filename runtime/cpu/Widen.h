//===- Widen.h - 16-bit library calls computed in float32 -------*- C++ -*-===//
//
// oneDNN has float16 matmuls and convolutions only on CPUs with AVX512-FP16
// or AMX-FP16 (and bfloat16 ones only from AVX512-core). Where it has none,
// a step widens its 16-bit operands to float32 in scratch memory, runs the
// float32 kernel and rounds the result to 16 bits once: the arithmetic of a
// GPU's 16-bit library call (16-bit storage, float32 accumulation), so both
// agree up to the order of the float32 sums.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_WIDEN_H
#define DLC_RUNTIME_CPU_WIDEN_H

#include "runtime/support/Tensor.h"

#include <cstddef>

namespace dlc::cpu {

/// `bytes` rounded up to kBufferAlignment: the size of one scratch region.
/// (The conversions are Tensor.h's widenToFloat and narrowFromFloat.)
size_t alignScratch(size_t bytes);

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_WIDEN_H
