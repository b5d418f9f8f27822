//===- CachingAllocatorTest.cpp - Caching device allocator on the host ----===//
//
// The allocator's logic runs on a fake segment source over aligned host
// memory, so it is tested without a GPU: the fake records every segment
// and can be told to refuse beyond a capacity, as a full device does.
// Blocks are real host memory, so tests also write to them and check that
// no block overwrote another.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CachingAllocator.h"

#include "runtime/core/Status.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

using dlc::StatusOwner;
using dlc::cuda::CachingAllocator;
using dlc::cuda::SegmentSource;

namespace {

constexpr size_t KiB = size_t(1) << 10;
constexpr size_t MiB = size_t(1) << 20;

/// Segments of aligned host memory, at most `capacity` bytes live at once.
/// With an `arena` size, segments are carved one after another from one
/// block of that many bytes and never reused, so consecutive segments are
/// adjacent in memory (as cuMemAlloc's may be).
class FakeSource : public SegmentSource {
public:
  explicit FakeSource(size_t capacity = SIZE_MAX, size_t arena = 0)
      : capacity(capacity), arenaSize_(arena) {
    if (arena)
      arena_ = static_cast<std::byte *>(
          std::aligned_alloc(CachingAllocator::kAlignment, arena));
  }
  ~FakeSource() override {
    if (arena_) {
      std::free(arena_);
      return;
    }
    for (const auto &[address, bytes] : live)
      std::free(reinterpret_cast<void *>(address));
  }

  bool allocate(size_t bytes, uint64_t &address) override {
    if (bytes > capacity - liveBytes())
      return false;
    void *memory = nullptr;
    if (!arena_) {
      memory = std::aligned_alloc(CachingAllocator::kAlignment, bytes);
    } else if (bytes <= arenaSize_ - arenaUsed_) {
      memory = arena_ + arenaUsed_;
      arenaUsed_ += bytes;
    }
    if (!memory)
      return false;
    address = reinterpret_cast<uint64_t>(memory);
    live.emplace(address, bytes);
    allocations.push_back(bytes);
    return true;
  }

  void release(uint64_t address, size_t bytes) override {
    auto it = live.find(address);
    ASSERT_NE(it, live.end()) << "releasing a segment never allocated";
    EXPECT_EQ(it->second, bytes) << "releasing with another size";
    if (!arena_)
      std::free(reinterpret_cast<void *>(address));
    live.erase(it);
    ++releases;
  }

  size_t liveBytes() const {
    size_t total = 0;
    for (const auto &[address, bytes] : live)
      total += bytes;
    return total;
  }

  size_t capacity;
  /// Live segments: address to size.
  std::map<uint64_t, size_t> live;
  /// The size of every segment allocated, in order.
  std::vector<size_t> allocations;
  size_t releases = 0;

private:
  size_t arenaSize_;
  size_t arenaUsed_ = 0;
  std::byte *arena_ = nullptr;
};

/// Allocates `bytes`, failing the test on an error.
uint64_t allocateOk(CachingAllocator &allocator, size_t bytes) {
  uint64_t address = 0;
  StatusOwner status(allocator.allocate(bytes, address));
  EXPECT_EQ(status.get(), nullptr)
      << bytes << " bytes: " << dlc_status_message(status.get());
  return address;
}

void freeOk(CachingAllocator &allocator, uint64_t address) {
  StatusOwner status(allocator.free(address));
  EXPECT_EQ(status.get(), nullptr) << dlc_status_message(status.get());
}

TEST(CachingAllocator, BlockSizes) {
  EXPECT_EQ(CachingAllocator::blockSize(0), 256u);
  EXPECT_EQ(CachingAllocator::blockSize(1), 256u);
  EXPECT_EQ(CachingAllocator::blockSize(256), 256u);
  EXPECT_EQ(CachingAllocator::blockSize(257), 512u);
  EXPECT_EQ(CachingAllocator::blockSize(MiB), MiB);
  EXPECT_EQ(CachingAllocator::blockSize(MiB + 1), 2 * MiB);
  EXPECT_EQ(CachingAllocator::blockSize(2 * MiB + 1), 4 * MiB);
  EXPECT_EQ(CachingAllocator::blockSize(SIZE_MAX), 0u);
}

TEST(CachingAllocator, BlocksAreAlignedAndDistinct) {
  FakeSource source;
  CachingAllocator allocator(source);
  std::vector<uint64_t> addresses;
  for (size_t bytes :
       {size_t(0), size_t(0), size_t(1), size_t(255), size_t(256), size_t(257),
        size_t(1000), MiB, MiB + 1, 3 * MiB + 5})
    addresses.push_back(allocateOk(allocator, bytes));
  for (uint64_t address : addresses)
    EXPECT_EQ(address % CachingAllocator::kAlignment, 0u) << address;
  std::vector<uint64_t> sorted = addresses;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end())
      << "two blocks at one address (zero-byte blocks must be unique)";
  for (uint64_t address : addresses)
    freeOk(allocator, address);
}

TEST(CachingAllocator, ReusesAFreedBlockWithoutANewSegment) {
  FakeSource source;
  CachingAllocator allocator(source);
  uint64_t first = allocateOk(allocator, 1000);
  freeOk(allocator, first);
  EXPECT_EQ(allocateOk(allocator, 1000), first);
  EXPECT_EQ(allocator.stats().sourceAllocations, 1u);
  freeOk(allocator, first);
}

TEST(CachingAllocator, SmallBlocksShareASegment) {
  FakeSource source;
  CachingAllocator allocator(source);
  // Eight 256 KiB blocks fill one 2 MiB segment exactly; the ninth needs a
  // second.
  std::vector<uint64_t> blocks;
  for (int i = 0; i < 8; ++i)
    blocks.push_back(allocateOk(allocator, 256 * KiB));
  EXPECT_EQ(source.allocations, std::vector<size_t>{2 * MiB});
  EXPECT_EQ(allocator.stats().segments, 1u);
  uint64_t low = *std::min_element(blocks.begin(), blocks.end());
  for (uint64_t block : blocks)
    EXPECT_LT(block - low, 2 * MiB);
  blocks.push_back(allocateOk(allocator, 1));
  EXPECT_EQ(source.allocations, (std::vector<size_t>{2 * MiB, 2 * MiB}));
  for (uint64_t block : blocks)
    freeOk(allocator, block);
}

TEST(CachingAllocator, SmallBlocksMergeInAnyFreeOrder) {
  std::array<int, 3> order = {0, 1, 2};
  do {
    FakeSource source;
    CachingAllocator allocator(source);
    // Three 640 KiB blocks and a 128 KiB remainder tile one segment.
    std::array<uint64_t, 3> blocks;
    for (uint64_t &block : blocks)
      block = allocateOk(allocator, 640 * KiB);
    EXPECT_EQ(blocks[1], blocks[0] + 640 * KiB);
    EXPECT_EQ(blocks[2], blocks[1] + 640 * KiB);
    for (int i : order)
      freeOk(allocator, blocks[i]);
    // Two 1 MiB blocks fit only if all four pieces merged back.
    EXPECT_EQ(allocateOk(allocator, MiB), blocks[0]);
    EXPECT_EQ(allocateOk(allocator, MiB), blocks[0] + MiB);
    EXPECT_EQ(allocator.stats().sourceAllocations, 1u)
        << "order " << order[0] << order[1] << order[2];
    freeOk(allocator, blocks[0]);
    freeOk(allocator, blocks[0] + MiB);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(CachingAllocator, LargeBlocksSplitAndMergeInAnyFreeOrder) {
  std::array<int, 3> order = {0, 1, 2};
  do {
    FakeSource source;
    CachingAllocator allocator(source);
    uint64_t whole = allocateOk(allocator, 6 * MiB);
    freeOk(allocator, whole);
    std::array<uint64_t, 3> blocks;
    for (uint64_t &block : blocks)
      block = allocateOk(allocator, 2 * MiB);
    EXPECT_EQ(blocks, (std::array<uint64_t, 3>{whole, whole + 2 * MiB,
                                               whole + 4 * MiB}));
    for (int i : order)
      freeOk(allocator, blocks[i]);
    EXPECT_EQ(allocateOk(allocator, 6 * MiB), whole);
    EXPECT_EQ(allocator.stats().sourceAllocations, 1u)
        << "order " << order[0] << order[1] << order[2];
    freeOk(allocator, whole);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(CachingAllocator, BlocksNeverMergeAcrossAdjacentSegments) {
  FakeSource source(SIZE_MAX, 16 * MiB);
  CachingAllocator allocator(source);
  // Two full small segments and two large ones, each adjacent to the next.
  std::vector<uint64_t> blocks;
  for (int i = 0; i < 4; ++i)
    blocks.push_back(allocateOk(allocator, MiB));
  uint64_t a = allocateOk(allocator, 2 * MiB);
  uint64_t b = allocateOk(allocator, 2 * MiB);
  ASSERT_EQ(blocks[2], blocks[0] + 2 * MiB);
  ASSERT_EQ(a, blocks[0] + 4 * MiB);
  ASSERT_EQ(b, a + 2 * MiB);
  for (uint64_t block : {blocks[1], blocks[2], blocks[0], blocks[3], b, a})
    freeOk(allocator, block);
  // 4 MiB fits in two adjacent free 2 MiB segments only by crossing them.
  uint64_t c = allocateOk(allocator, 4 * MiB);
  EXPECT_EQ(c, b + 2 * MiB);
  EXPECT_EQ(allocator.stats().sourceAllocations, 5u);
  freeOk(allocator, c);
  // Each segment is released whole, with its own size.
  allocator.releaseCached();
  EXPECT_EQ(source.releases, 5u);
  EXPECT_TRUE(source.live.empty());
}

TEST(CachingAllocator, LargeRequestsAreRoundedAndCached) {
  FakeSource source;
  CachingAllocator allocator(source);
  uint64_t block = allocateOk(allocator, 2 * MiB + 1);
  EXPECT_EQ(source.allocations, std::vector<size_t>{4 * MiB});
  EXPECT_EQ(allocator.stats().allocatedBytes, 4 * MiB);
  freeOk(allocator, block);
  EXPECT_EQ(allocator.stats().allocatedBytes, 0u);
  EXPECT_EQ(allocator.stats().reservedBytes, 4 * MiB);
  // Another size that rounds to 4 MiB reuses it.
  EXPECT_EQ(allocateOk(allocator, 3 * MiB), block);
  EXPECT_EQ(source.allocations.size(), 1u);
  freeOk(allocator, block);
  // A small request never takes memory from the large pool.
  uint64_t small = allocateOk(allocator, 16);
  EXPECT_EQ(source.allocations, (std::vector<size_t>{4 * MiB, 2 * MiB}));
  freeOk(allocator, small);
}

TEST(CachingAllocator, LargeRequestsTakeTheBestFit) {
  FakeSource source;
  CachingAllocator allocator(source);
  uint64_t eight = allocateOk(allocator, 8 * MiB);
  uint64_t four = allocateOk(allocator, 4 * MiB);
  uint64_t sixteen = allocateOk(allocator, 16 * MiB);
  for (uint64_t block : {eight, four, sixteen})
    freeOk(allocator, block);
  EXPECT_EQ(allocateOk(allocator, 3 * MiB), four);
  EXPECT_EQ(allocateOk(allocator, 5 * MiB), eight);
  // 8 MiB of the 16 MiB block, leaving 8 MiB free in its segment.
  EXPECT_EQ(allocateOk(allocator, 8 * MiB), sixteen);
  EXPECT_EQ(allocateOk(allocator, 8 * MiB), sixteen + 8 * MiB);
  EXPECT_EQ(source.allocations.size(), 3u);
  for (uint64_t block : {four, eight, sixteen, sixteen + 8 * MiB})
    freeOk(allocator, block);
}

TEST(CachingAllocator, OutOfMemoryReleasesCachedSegmentsAndRetries) {
  FakeSource source(8 * MiB);
  CachingAllocator allocator(source);
  uint64_t a = allocateOk(allocator, 4 * MiB);
  uint64_t b = allocateOk(allocator, 4 * MiB);
  freeOk(allocator, a);
  freeOk(allocator, b);
  // Neither cached 4 MiB block fits 6 MiB, and the source is full until
  // they go back.
  uint64_t c = allocateOk(allocator, 6 * MiB);
  EXPECT_EQ(source.releases, 2u);
  EXPECT_EQ(source.allocations,
            (std::vector<size_t>{4 * MiB, 4 * MiB, 6 * MiB}));
  CachingAllocator::Stats stats = allocator.stats();
  EXPECT_EQ(stats.reservedBytes, 6 * MiB);
  EXPECT_EQ(stats.segments, 1u);
  freeOk(allocator, c);
}

TEST(CachingAllocator, OutOfMemoryIsAnErrorNamingTheRequest) {
  FakeSource source(6 * MiB);
  CachingAllocator allocator(source);
  uint64_t held = allocateOk(allocator, 4 * MiB);
  uint64_t small = allocateOk(allocator, 100);
  // 6 MiB reserved, of which the small segment is partly used: nothing
  // can be released.
  uint64_t address = 0;
  StatusOwner status(allocator.allocate(3 * MiB, address));
  ASSERT_EQ(dlc_status_code(status.get()), DLC_RESOURCE_EXHAUSTED);
  EXPECT_EQ(std::string(dlc_status_message(status.get())),
            "out of device memory for a block of 3145728 bytes: no segment "
            "of 4194304 bytes after releasing the cached ones (6291456 bytes "
            "reserved, 4194560 allocated)");
  EXPECT_EQ(source.releases, 0u);
  // The allocator still works once memory is freed.
  freeOk(allocator, held);
  EXPECT_EQ(allocateOk(allocator, 3 * MiB), held);
  freeOk(allocator, held);
  freeOk(allocator, small);
}

TEST(CachingAllocator, UnroundableRequestIsOutOfMemory) {
  FakeSource source;
  CachingAllocator allocator(source);
  uint64_t address = 0;
  StatusOwner status(allocator.allocate(SIZE_MAX, address));
  EXPECT_EQ(dlc_status_code(status.get()), DLC_RESOURCE_EXHAUSTED);
  EXPECT_TRUE(source.allocations.empty());
}

TEST(CachingAllocator, FreeingAnythingButAnAllocatedBlockIsAnError) {
  FakeSource source;
  CachingAllocator allocator(source);
  uint64_t block = allocateOk(allocator, 1000);
  auto expectInvalid = [&](uint64_t address, const char *what) {
    StatusOwner status(allocator.free(address));
    EXPECT_EQ(dlc_status_code(status.get()), DLC_INVALID_ARGUMENT) << what;
  };
  expectInvalid(0x1234, "an unknown address");
  expectInvalid(block + 256, "an address inside a block");
  expectInvalid(block + 1024, "the free rest of the segment");
  {
    StatusOwner status(allocator.free(0xabc00));
    EXPECT_EQ(std::string(dlc_status_message(status.get())),
              "freeing device memory at 0xabc00: not an allocated block");
  }
  freeOk(allocator, block);
  expectInvalid(block, "a block freed twice");
  EXPECT_EQ(allocator.stats().allocatedBytes, 0u);
}

TEST(CachingAllocator, StatsTrackPeaks) {
  FakeSource source;
  CachingAllocator allocator(source);
  uint64_t a = allocateOk(allocator, 1000);    // 1024 of a 2 MiB segment
  uint64_t b = allocateOk(allocator, 5 * MiB); // 6 MiB segment
  CachingAllocator::Stats stats = allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 1024 + 6 * MiB);
  EXPECT_EQ(stats.reservedBytes, 8 * MiB);
  EXPECT_EQ(stats.segments, 2u);
  EXPECT_EQ(stats.blocks, 2u);
  freeOk(allocator, b);
  uint64_t c = allocateOk(allocator, 2 * MiB);
  stats = allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 1024 + 2 * MiB);
  EXPECT_EQ(stats.peakAllocatedBytes, 1024 + 6 * MiB);
  EXPECT_EQ(stats.reservedBytes, 8 * MiB);
  EXPECT_EQ(stats.blocks, 2u);
  EXPECT_EQ(stats.sourceAllocations, 2u);
  freeOk(allocator, a);
  freeOk(allocator, c);
  allocator.releaseCached();
  stats = allocator.stats();
  EXPECT_EQ(stats.allocatedBytes, 0u);
  EXPECT_EQ(stats.reservedBytes, 0u);
  EXPECT_EQ(stats.segments, 0u);
  EXPECT_EQ(stats.blocks, 0u);
  EXPECT_EQ(stats.peakAllocatedBytes, 1024 + 6 * MiB);
  EXPECT_EQ(stats.peakReservedBytes, 8 * MiB);
  EXPECT_TRUE(source.live.empty());
}

TEST(CachingAllocator, ReleaseCachedKeepsSegmentsInUse) {
  FakeSource source;
  CachingAllocator allocator(source);
  uint64_t small = allocateOk(allocator, 100);
  uint64_t otherSmall = allocateOk(allocator, 100);
  uint64_t large = allocateOk(allocator, 4 * MiB);
  uint64_t cached = allocateOk(allocator, 8 * MiB);
  freeOk(allocator, small);
  freeOk(allocator, cached);
  allocator.releaseCached();
  EXPECT_EQ(source.releases, 1u);
  EXPECT_EQ(allocator.stats().reservedBytes, 6 * MiB);
  freeOk(allocator, otherSmall);
  freeOk(allocator, large);
}

TEST(CachingAllocator, DestructorReleasesEverySegment) {
  FakeSource source;
  {
    CachingAllocator allocator(source);
    freeOk(allocator, allocateOk(allocator, 100));
    freeOk(allocator, allocateOk(allocator, 3 * MiB));
    uint64_t a = allocateOk(allocator, 10 * MiB);
    uint64_t b = allocateOk(allocator, MiB);
    freeOk(allocator, a);
    freeOk(allocator, b);
    EXPECT_EQ(source.live.size(), 3u);
  }
  EXPECT_TRUE(source.live.empty());
  EXPECT_EQ(source.releases, source.allocations.size());
}

TEST(CachingAllocatorDeathTest, DestroyingWithBlocksAllocatedAsserts) {
  FakeSource source;
  // In a debug build the assertion fires; otherwise the segment is
  // released anyway.
  EXPECT_DEBUG_DEATH(
      {
        CachingAllocator allocator(source);
        allocateOk(allocator, 100);
      },
      "still allocated");
  EXPECT_TRUE(source.live.empty());
}

/// A live block in the stress tests: its range and the tag written at both
/// ends of it.
struct LiveBlock {
  uint64_t address;
  size_t size;
  uint64_t tag;
};

void writeTag(const LiveBlock &block) {
  std::memcpy(reinterpret_cast<void *>(block.address), &block.tag, 8);
  std::memcpy(reinterpret_cast<void *>(block.address + block.size - 8),
              &block.tag, 8);
}

bool tagIntact(const LiveBlock &block) {
  uint64_t head, tail;
  std::memcpy(&head, reinterpret_cast<const void *>(block.address), 8);
  std::memcpy(
      &tail, reinterpret_cast<const void *>(block.address + block.size - 8), 8);
  return head == block.tag && tail == block.tag;
}

/// Thousands of allocations and frees of random sizes from a seeded
/// generator; after each step, no two live blocks overlap and the
/// allocator's counts match the live blocks and the source's segments.
/// With a `capacity`, allocations may fail, but only as out of memory.
void stress(uint32_t seed, size_t capacity) {
  FakeSource source(capacity);
  CachingAllocator allocator(source);
  std::mt19937_64 random(seed);
  std::vector<LiveBlock> live;
  /// Live blocks by address, to check overlap with the neighbours.
  std::map<uint64_t, size_t> ranges;
  size_t allocated = 0, failures = 0;
  auto randomSize = [&]() -> size_t {
    switch (random() % 8) {
    case 0:
      return 0;
    case 1:
    case 2:
    case 3:
      return random() % (4 * KiB);
    case 4:
    case 5:
      return random() % (CachingAllocator::kSmallRequest + 1);
    default:
      return random() % (12 * MiB);
    }
  };
  for (int step = 0; step < 20000; ++step) {
    // Frees are a little less likely than allocations, so the live set
    // grows and shrinks over the run.
    bool doFree =
        !live.empty() && (random() % 100 < (live.size() > 64 ? 60 : 45));
    if (doFree) {
      size_t index = random() % live.size();
      LiveBlock block = live[index];
      ASSERT_TRUE(tagIntact(block)) << "step " << step << ": a block at "
                                    << block.address << " was overwritten";
      freeOk(allocator, block.address);
      live[index] = live.back();
      live.pop_back();
      ranges.erase(block.address);
      allocated -= block.size;
    } else {
      size_t bytes = randomSize();
      uint64_t address = 0;
      StatusOwner status(allocator.allocate(bytes, address));
      if (status.get()) {
        ASSERT_EQ(dlc_status_code(status.get()), DLC_RESOURCE_EXHAUSTED)
            << dlc_status_message(status.get());
        ++failures;
        continue;
      }
      size_t size = CachingAllocator::blockSize(bytes);
      ASSERT_EQ(address % CachingAllocator::kAlignment, 0u);
      auto next = ranges.lower_bound(address);
      ASSERT_TRUE(next == ranges.end() || address + size <= next->first)
          << "step " << step << ": overlaps the next block";
      ASSERT_TRUE(next == ranges.begin() ||
                  std::prev(next)->first + std::prev(next)->second <= address)
          << "step " << step << ": overlaps the previous block";
      ranges.emplace(address, size);
      LiveBlock block{address, size, random()};
      writeTag(block);
      live.push_back(block);
      allocated += size;
    }
    CachingAllocator::Stats stats = allocator.stats();
    ASSERT_EQ(stats.allocatedBytes, allocated) << "step " << step;
    ASSERT_EQ(stats.blocks, live.size()) << "step " << step;
    ASSERT_EQ(stats.reservedBytes, source.liveBytes()) << "step " << step;
    ASSERT_EQ(stats.segments, source.live.size()) << "step " << step;
    ASSERT_LE(stats.reservedBytes, capacity);
  }
  if (capacity != SIZE_MAX) {
    EXPECT_GT(failures, 0u) << "the capacity never ran out";
  }
  for (const LiveBlock &block : live) {
    EXPECT_TRUE(tagIntact(block));
    freeOk(allocator, block.address);
  }
  // With everything freed, every segment is one free block again.
  allocator.releaseCached();
  EXPECT_TRUE(source.live.empty());
  EXPECT_EQ(allocator.stats().reservedBytes, 0u);
}

TEST(CachingAllocator, RandomizedStress) {
  for (uint32_t seed : {1u, 2u, 3u})
    stress(seed, SIZE_MAX);
}

TEST(CachingAllocator, RandomizedStressNearCapacity) {
  for (uint32_t seed : {4u, 5u, 6u})
    stress(seed, 96 * MiB);
}

TEST(CachingAllocator, ThreadsShareOneAllocator) {
  FakeSource source;
  CachingAllocator allocator(source);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t)
    threads.emplace_back([&allocator, t] {
      std::mt19937 random(t);
      std::vector<LiveBlock> live;
      for (int step = 0; step < 2000; ++step) {
        if (!live.empty() && random() % 2) {
          LiveBlock block = live.back();
          live.pop_back();
          EXPECT_TRUE(tagIntact(block));
          freeOk(allocator, block.address);
          continue;
        }
        size_t bytes = random() % (3 * MiB);
        LiveBlock block{allocateOk(allocator, bytes),
                        CachingAllocator::blockSize(bytes), random()};
        writeTag(block);
        live.push_back(block);
      }
      for (const LiveBlock &block : live) {
        EXPECT_TRUE(tagIntact(block));
        freeOk(allocator, block.address);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(allocator.stats().allocatedBytes, 0u);
}

} // namespace
