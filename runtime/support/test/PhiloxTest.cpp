//===- PhiloxTest.cpp - Philox4x32-10 against the published answers -------===//
//
// The known-answer vectors of Random123 (kat_vectors, philox4x32_10), which
// cuRAND's and PyTorch's Philox also reproduce: if these hold, a CUDA or CPU
// kernel built on the same counter and key layout draws dlc's dropout masks
// bit for bit. Then the dropout decision built on it: its counter and key
// layout, and the comparison at the ratio.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/Philox.h"

#include <gtest/gtest.h>

namespace {

using Words = std::array<uint32_t, 4>;

TEST(Philox, ZeroCounterAndKey) {
  EXPECT_EQ(dlc::philox4x32({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox, AllOnesCounterAndKey) {
  EXPECT_EQ(dlc::philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                            {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox, DigitsOfPi) {
  EXPECT_EQ(dlc::philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                            {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

/// dropoutKeeps(seed, stream, index, ratio) is the first Philox word of
/// counter (index low, index high, stream, 0) under key (seed low, seed
/// high), compared with ratio * 2^32.
TEST(Philox, DropoutUsesTheDocumentedCounterAndKey) {
  uint64_t seed = 0xa4093822'299f31d0ull, index = 0x85a308d3'243f6a88ull;
  Words bits = dlc::philox4x32({uint32_t(index), uint32_t(index >> 32), 5u, 0u},
                               {uint32_t(seed), uint32_t(seed >> 32)});
  double u = double(bits[0]) / 4294967296.0;
  // Just below and at the drawn value: kept; just above: dropped.
  EXPECT_TRUE(dlc::dropoutKeeps(seed, 5, index, u));
  EXPECT_TRUE(dlc::dropoutKeeps(seed, 5, index, u - 1e-12));
  EXPECT_FALSE(dlc::dropoutKeeps(seed, 5, index, u + 1e-9));
  // Ratio 0 keeps everything; the first known answer's word 0x6627e8d5
  // (0.399...) is dropped at 0.4 and kept at 0.39.
  EXPECT_TRUE(dlc::dropoutKeeps(0, 0, 0, 0.0));
  EXPECT_FALSE(dlc::dropoutKeeps(0, 0, 0, 0.4));
  EXPECT_TRUE(dlc::dropoutKeeps(0, 0, 0, 0.39));
}

} // namespace
