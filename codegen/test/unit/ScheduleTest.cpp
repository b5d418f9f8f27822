//===- ScheduleTest.cpp - The CUDA kernels' schedule policies -------------===//
//
// The shapes are the ones the H200 profiles of 2026-11-26 found slow
// (../shared/measurements): BatchNorm statistics of ResNet-50 (few channels,
// rows of batch x spatial), GPT-2's loss over 50304 classes, its attention
// softmax (many rows of 1024), its embedding gradients (8192 tokens into
// 50304 or 1024 rows of 768), and the small ones that stay as they were.
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/Schedule.h"

#include <gtest/gtest.h>

using mlir::dlc::chooseReductionSplit;
using mlir::dlc::chooseReductionThreads;
using mlir::dlc::chooseScatterChunks;
using mlir::dlc::DeviceModel;
using mlir::dlc::ReductionShape;

namespace {

ReductionShape rows(int64_t count, int64_t length, int64_t bytes = 4,
                    bool contiguous = true) {
  return ReductionShape{count, length, bytes, contiguous};
}

TEST(ReductionSchedule, ShortRowsStayOnOneThread) {
  EXPECT_EQ(chooseReductionThreads(rows(1000, 63)), 1);
  EXPECT_EQ(chooseReductionThreads(rows(1, 8)), 1);
  EXPECT_EQ(chooseReductionThreads(rows(0, 1 << 20)), 1);
}

TEST(ReductionSchedule, StemBatchNormGetsWholeBlocks) {
  // ResNet-50's stem: 64 channels of 64 x 112 x 112.
  EXPECT_EQ(chooseReductionThreads(rows(64, 64 * 112 * 112)), 1024);
  // layer1: 256 channels of 64 x 56 x 56.
  EXPECT_EQ(chooseReductionThreads(rows(256, 64 * 56 * 56)), 1024);
}

TEST(ReductionSchedule, LossOverClassesGetsSmallBlocks) {
  // GPT-2 at batch 8 x 1024 over 50304 classes: 8192 rows stay within four
  // waves of 132 x 2048 threads at 128 threads a row.
  EXPECT_EQ(chooseReductionThreads(rows(8192, 50304)), 128);
}

TEST(ReductionSchedule, ManyShortRowsStayOnWarps) {
  // GPT-2's attention softmax: 8 x 12 x 1024 rows of 1024.
  EXPECT_EQ(chooseReductionThreads(rows(8 * 12 * 1024, 1024)), 32);
}

TEST(ReductionSchedule, EveryThreadFoldsAtLeast64Bytes) {
  // 4096 floats: 256 threads fold 16 floats (64 bytes) each, 512 would
  // fold 8; doubles go to 512 threads of 8.
  EXPECT_EQ(chooseReductionThreads(rows(8, 4096)), 256);
  EXPECT_EQ(chooseReductionThreads(rows(8, 4095)), 128);
  EXPECT_EQ(chooseReductionThreads(rows(8, 4096, /*bytes=*/8)), 512);
  for (int64_t length : {64, 100, 1000, 5000, 77777, 1 << 22}) {
    int64_t threads = chooseReductionThreads(rows(4, length));
    EXPECT_TRUE(threads == 32 || length >= threads * 16)
        << length << " elements on " << threads << " threads";
  }
}

TEST(ReductionSchedule, ThreadsArePowersOfTwoWithinABlock) {
  for (int64_t count : {1, 7, 132, 5000, 1 << 20})
    for (int64_t length : {64, 999, 1 << 16, 1 << 24}) {
      int64_t threads = chooseReductionThreads(rows(count, length));
      EXPECT_TRUE(threads == 1 || (threads >= 32 && threads <= 1024 &&
                                   (threads & (threads - 1)) == 0))
          << count << " rows of " << length << ": " << threads;
    }
}

TEST(ReductionSchedule, StridedRowsThatFillAWaveStayOnThreads) {
  // Reducing axis 0 of [4096, 65536]: a thread per column reads coalesced.
  EXPECT_EQ(chooseReductionThreads(rows(65536, 4096, 4, false)), 1);
  // Few strided rows still share their work.
  EXPECT_EQ(chooseReductionThreads(rows(16, 4096, 4, false)), 256);
}

TEST(ReductionSchedule, SmallerDevicesGetFewerThreadsPerRow) {
  DeviceModel small{/*multiprocessors=*/8, /*threadsPerMultiprocessor=*/1024};
  EXPECT_EQ(chooseReductionThreads(rows(8192, 50304), small), 32);
  EXPECT_EQ(chooseReductionThreads(rows(64, 1 << 20), small), 512);
}

TEST(ReductionSplit, StemBatchNormSplitsToTwoBlocksPerMultiprocessor) {
  // 64 channels of 64 x 112 x 112 on 132 multiprocessors: 264 blocks
  // wanted, 5 chunks a channel (320 blocks of 160563 elements).
  EXPECT_EQ(chooseReductionSplit(rows(64, 64 * 112 * 112)), 5);
  // layer1's 256 channels are 256 blocks: nearly two a multiprocessor.
  EXPECT_EQ(chooseReductionSplit(rows(256, 64 * 56 * 56)), 2);
  EXPECT_EQ(chooseReductionSplit(rows(264, 64 * 56 * 56)), 1);
}

TEST(ReductionSplit, ChunksKeep64BytesPerThread) {
  // One row of 65536 floats: 4 chunks of 16384 (16 floats a thread).
  EXPECT_EQ(chooseReductionSplit(rows(1, 65536)), 4);
  EXPECT_EQ(chooseReductionSplit(rows(1, 65536, /*bytes=*/8)), 8);
  EXPECT_EQ(chooseReductionSplit(rows(1, 32767)), 1);
}

TEST(ReductionSplit, RowsBelowABlockAreNotSplit) {
  // The loss's rows take 128 threads; strided rows that fill a wave one.
  EXPECT_EQ(chooseReductionSplit(rows(8192, 50304)), 1);
  EXPECT_EQ(chooseReductionSplit(rows(4, 100)), 1);
  EXPECT_EQ(chooseReductionSplit(rows(0, 1 << 20)), 1);
}

TEST(ReductionSplit, StridedRowsSplitToAWaveOfThreads) {
  // Channels-last BatchNorm statistics of ResNet-50's first stage: 256
  // columns of 64 x 56 x 56; a wave (270336 threads) wants 1056 chunks.
  EXPECT_EQ(chooseReductionSplit(rows(256, 64 * 56 * 56, 4, false)), 1056);
  // GPT-2's bias gradients: 768 columns of 8192 tokens.
  EXPECT_EQ(chooseReductionSplit(rows(768, 8192, 4, false)), 352);
  // Chunks keep 8 elements: 4 columns of 64 give 8 chunks.
  EXPECT_EQ(chooseReductionSplit(rows(4, 64, 4, false)), 8);
  // Short columns, and columns enough for a wave, stay whole.
  EXPECT_EQ(chooseReductionSplit(rows(4, 15, 4, false)), 1);
  EXPECT_EQ(chooseReductionSplit(rows(300000, 4096, 4, false)), 1);
}

TEST(ReductionSplit, SmallerDevicesSplitLess) {
  mlir::dlc::DeviceModel small{8, 2048};
  EXPECT_EQ(chooseReductionSplit(rows(64, 64 * 112 * 112), small), 1);
  EXPECT_EQ(chooseReductionSplit(rows(2, 1 << 20), small), 8);
}

TEST(ScatterSchedule, EmbeddingGradientsFillAWave) {
  // GPT-2's token embedding: 768 columns of 50304 rows, 8192 tokens. One
  // wave (270336 threads) over 768 columns is 352 chunks of 143 rows.
  EXPECT_EQ(chooseScatterChunks(768, 50304, 8192), 352);
  // Its position embedding: 1024 rows; 8 chunks keep the walks at 64
  // index reads per result element.
  EXPECT_EQ(chooseScatterChunks(768, 1024, 8192), 8);
}

TEST(ScatterSchedule, NeverMoreChunksThanTargets) {
  EXPECT_EQ(chooseScatterChunks(32, 64, 32), 64);
  EXPECT_EQ(chooseScatterChunks(1, 5, 100), 3);
  EXPECT_EQ(chooseScatterChunks(4, 1, 1000), 1);
  EXPECT_EQ(chooseScatterChunks(0, 100, 10), 1);
}

TEST(ScatterSchedule, ManyLinesNeedNoChunks) {
  EXPECT_EQ(chooseScatterChunks(1 << 20, 1000, 100), 1);
  EXPECT_EQ(chooseScatterChunks(270336, 1000, 100), 1);
}

} // namespace
