//===- AttentionTilesTest.cpp - The fused attention kernels' tiles --------===//
//
// The tiles' static shared memory (AttentionKernels.cpp's sharedBytes, the
// same arrays the device templates declare; ptxas reports 44032 bytes for
// GPT-2's forward and 39680 for its gradient) must fit a block's 48 KiB for
// every head size the kernels take, with the largest tiles that do.
//
//===----------------------------------------------------------------------===//
#include "codegen/AttentionKernels.h"

#include <gtest/gtest.h>

using mlir::dlc::codegen::AttentionTiles;
using mlir::dlc::codegen::chooseAttentionTiles;

namespace {

void expectTiles(AttentionTiles tiles, int64_t owned, int64_t streamed) {
  EXPECT_EQ(tiles.ownedRows, owned);
  EXPECT_EQ(tiles.streamRows, streamed);
}

TEST(AttentionTiles, Gpt2HeadsTakeTheLargestTiles) {
  // Heads of 64: 64 queries against 32 keys at a time (128 threads);
  // the gradient holds two more tiles and owns 32 rows.
  expectTiles(chooseAttentionTiles(64, 64, /*gradient=*/false), 64, 32);
  expectTiles(chooseAttentionTiles(64, 64, /*gradient=*/true), 32, 32);
  EXPECT_EQ(chooseAttentionTiles(64, 64, false).threads(), 128);
}

TEST(AttentionTiles, WideHeadsStreamFewerRows) {
  expectTiles(chooseAttentionTiles(128, 96, false), 32, 16);
  expectTiles(chooseAttentionTiles(128, 96, true), 32, 16);
  expectTiles(chooseAttentionTiles(128, 128, true), 32, 8);
}

TEST(AttentionTiles, EveryHeadSizeFits) {
  for (int64_t d = 1; d <= 128; ++d)
    for (int64_t dv : {int64_t(1), d, int64_t(128)})
      for (bool gradient : {false, true}) {
        AttentionTiles tiles = chooseAttentionTiles(d, dv, gradient);
        EXPECT_GE(tiles.ownedRows, 32) << d << " x " << dv;
        EXPECT_EQ(tiles.streamRows % 8, 0) << d << " x " << dv;
      }
}

} // namespace
