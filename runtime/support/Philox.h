//===- Philox.h - The counter-based generator dropout draws from ----------===//
//
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011), the generator cuRAND and PyTorch's CUDA kernels use. Being
// counter-based, element i's bits depend only on (key, counter), so the
// evaluator, the CPU kernels and the CUDA kernels draw the same dropout mask
// in any order. Header-only: the runtime and generated kernels share it.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_PHILOX_H
#define DLC_RUNTIME_SUPPORT_PHILOX_H

#include <array>
#include <cstdint>

namespace dlc {

/// The four 32-bit output words for `counter` under `key`.
inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                          std::array<uint32_t, 2> key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(kMul0) * counter[0];
    uint64_t p1 = uint64_t(kMul1) * counter[2];
    counter = {uint32_t(p1 >> 32) ^ counter[1] ^ key[0], uint32_t(p1),
               uint32_t(p0 >> 32) ^ counter[3] ^ key[1], uint32_t(p0)};
    key = {key[0] + kWeyl0, key[1] + kWeyl1};
  }
  return counter;
}

/// The draw of element `index` of the stream numbered `stream` under
/// `seed`: Philox's first word as a fraction of 2^32, in [0, 1).
inline double philoxUniform(uint64_t seed, uint64_t stream, uint64_t index) {
  std::array<uint32_t, 4> bits =
      philox4x32({uint32_t(index), uint32_t(index >> 32), uint32_t(stream), 0u},
                 {uint32_t(seed), uint32_t(seed >> 32)});
  return double(bits[0]) * 0x1.0p-32;
}

/// Whether dlc.dropout keeps element `index` of the dropout numbered
/// `stream` under `seed`: its draw is at least `ratio`.
inline bool dropoutKeeps(uint64_t seed, uint64_t stream, uint64_t index,
                         double ratio) {
  return philoxUniform(seed, stream, index) >= ratio;
}

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_PHILOX_H
