//===- ThreadPoolTest.cpp - parallelFor splits work; ranks share cores ----===//
#include "runtime/cpu/ThreadPool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

using dlc::cpu::ThreadPool;

namespace {

struct Chunk {
  int64_t begin, end;
  std::thread::id thread;
};

/// Runs parallelFor and returns its chunks in order, checking that they
/// tile [0, n) and that chunk 0 ran on the calling thread.
std::vector<Chunk> runAndCheck(ThreadPool &pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> visits(static_cast<size_t>(n));
  std::mutex mutex;
  std::vector<Chunk> chunks;
  pool.parallelFor(n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      visits[i].fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex);
    chunks.push_back({begin, end, std::this_thread::get_id()});
  });
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(visits[i].load(), 1) << "n " << n << " index " << i;
  std::sort(chunks.begin(), chunks.end(),
            [](const Chunk &a, const Chunk &b) { return a.begin < b.begin; });
  int64_t next = 0;
  for (const Chunk &c : chunks) {
    EXPECT_EQ(c.begin, next);
    EXPECT_LT(c.begin, c.end);
    next = c.end;
  }
  EXPECT_EQ(next, n);
  EXPECT_LE(static_cast<int64_t>(chunks.size()), pool.numThreads());
  if (!chunks.empty())
    EXPECT_EQ(chunks.front().thread, std::this_thread::get_id());
  return chunks;
}

TEST(ThreadPool, EveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 4, 7, 16}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 3, 5, 15, 16, 17, 100, 1000, 2047, 2048, 4095,
                      4096, 4097, 10007, 100000})
      for (int64_t grain :
           {int64_t(0), int64_t(1), int64_t(7), ThreadPool::kDefaultGrain}) {
        std::vector<Chunk> chunks = runAndCheck(pool, n, grain);
        EXPECT_EQ(static_cast<int64_t>(chunks.size()),
                  pool.chunkCount(n, grain));
      }
  }
}

TEST(ThreadPool, ChunksAreBalancedAndRespectTheGrain) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.chunkCount(0, 1), 0);
  EXPECT_EQ(pool.chunkCount(3, 1), 3);
  EXPECT_EQ(pool.chunkCount(100, 1), 4);
  // Fewer iterations than two grains run inline as one chunk.
  EXPECT_EQ(pool.chunkCount(2 * ThreadPool::kDefaultGrain - 1,
                            ThreadPool::kDefaultGrain),
            1);
  EXPECT_EQ(
      pool.chunkCount(2 * ThreadPool::kDefaultGrain, ThreadPool::kDefaultGrain),
      2);
  int64_t begin, end;
  // 10 over 4 chunks: 3, 3, 2, 2.
  int64_t expected[][2] = {{0, 3}, {3, 6}, {6, 8}, {8, 10}};
  for (int64_t i = 0; i < 4; ++i) {
    ThreadPool::chunkRange(10, 4, i, begin, end);
    EXPECT_EQ(begin, expected[i][0]);
    EXPECT_EQ(end, expected[i][1]);
  }
  // No overflow near the top of the range.
  int64_t n = INT64_MAX;
  ThreadPool::chunkRange(n, 3, 2, begin, end);
  EXPECT_EQ(end, n);
  EXPECT_GT(begin, 0);
}

TEST(ThreadPool, NestedLoopsRunInline) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> visits(64 * 64);
  pool.parallelFor(64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallelFor(64, 1, [&](int64_t b2, int64_t e2) {
        for (int64_t j = b2; j < e2; ++j)
          visits[i * 64 + j].fetch_add(1);
      });
  });
  for (auto &v : visits)
    EXPECT_EQ(v.load(), 1);
}

TEST(ThreadPool, ConcurrentCallersEachGetEveryIndex) {
  ThreadPool pool(3);
  auto work = [&] {
    for (int round = 0; round < 50; ++round)
      runAndCheck(pool, 1000 + round, 1);
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
}

TEST(ThreadPool, RanksShareTheCores) {
  // One process, or an unknown count: every core it may run on.
  EXPECT_EQ(dlc::cpu::sharedCores(16, 16, 1), 16);
  EXPECT_EQ(dlc::cpu::sharedCores(16, 16, -1), 16);
  // Unbound ranks split the machine, each keeping at least one thread.
  EXPECT_EQ(dlc::cpu::sharedCores(16, 16, 4), 4);
  EXPECT_EQ(dlc::cpu::sharedCores(16, 16, 3), 5);
  EXPECT_EQ(dlc::cpu::sharedCores(2, 2, 4), 1);
  // Bound to a share already (mpirun binds each rank to its cores).
  EXPECT_EQ(dlc::cpu::sharedCores(4, 16, 4), 4);
  EXPECT_EQ(dlc::cpu::sharedCores(1, 16, 4), 1);
  // Two of four ranks bound to each 8-core socket: half a socket each.
  EXPECT_EQ(dlc::cpu::sharedCores(8, 16, 4), 4);
}

} // namespace
