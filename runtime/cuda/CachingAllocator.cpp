//===- CachingAllocator.cpp - Cached device memory for CUDA sessions ------===//
//
// The block bookkeeping of CachingAllocator.h: an address-ordered map of
// every block for merging neighbours, and a (size, address)-ordered set of
// free blocks per pool for best fit.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CachingAllocator.h"

#include "runtime/core/Status.h"

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>

namespace dlc::cuda {
namespace {

size_t roundUp(size_t bytes, size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

} // namespace

CachingAllocator::CachingAllocator(SegmentSource &source) : source_(source) {}

CachingAllocator::~CachingAllocator() {
  assert(stats_.blocks == 0 && "device memory still allocated when the "
                               "allocator is destroyed");
  for (const auto &[address, size] : segments_)
    source_.release(address, size);
}

size_t CachingAllocator::blockSize(size_t bytes) {
  if (bytes <= kSmallRequest)
    return bytes == 0 ? kAlignment : roundUp(bytes, kAlignment);
  if (bytes > std::numeric_limits<size_t>::max() - kSegmentGranularity)
    return 0;
  return roundUp(bytes, kSegmentGranularity);
}

dlc_status_t CachingAllocator::allocate(size_t bytes, uint64_t &address) {
  size_t size = blockSize(bytes);
  if (size == 0)
    return makeStatus(DLC_RESOURCE_EXHAUSTED,
                      "out of device memory for a block of " +
                          std::to_string(bytes) +
                          " bytes: larger than any device");
  bool small = bytes <= kSmallRequest;
  std::lock_guard<std::mutex> lock(mutex_);
  FreeSet &freeBlocks = pool(small);
  auto fit = freeBlocks.lower_bound({size, 0});
  if (fit == freeBlocks.end()) {
    // Cached segments go back only when the source says no: they are likely
    // to be reused, and cuMemFree synchronizes the device.
    if (!addSegment(size, small) &&
        !(releaseCachedLocked() > 0 && addSegment(size, small))) {
      size_t segment = small ? kSegmentGranularity : size;
      return makeStatus(
          DLC_RESOURCE_EXHAUSTED,
          "out of device memory for a block of " + std::to_string(bytes) +
              " bytes: no segment of " + std::to_string(segment) +
              " bytes after releasing the cached ones (" +
              std::to_string(stats_.reservedBytes) + " bytes reserved, " +
              std::to_string(stats_.allocatedBytes) + " allocated)");
    }
    // The new segment's block is the only free block large enough.
    fit = freeBlocks.lower_bound({size, 0});
  }
  address = fit->second;
  freeBlocks.erase(fit);
  takeBlock(blocks_.find(address), size);
  return nullptr;
}

dlc_status_t CachingAllocator::free(uint64_t address) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(address);
  if (it == blocks_.end() || !it->second.allocated) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "0x%" PRIx64, address);
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string("freeing device memory at ") + hex +
                          ": not an allocated block");
  }
  Block &block = it->second;
  block.allocated = false;
  stats_.allocatedBytes -= block.size;
  --stats_.blocks;
  FreeSet &freeBlocks = pool(block.small);
  // Blocks tile their segment, so a free neighbour in the same segment is
  // the adjacent memory.
  auto next = std::next(it);
  if (next != blocks_.end() && next->second.segment == block.segment &&
      !next->second.allocated) {
    freeBlocks.erase({next->second.size, next->first});
    block.size += next->second.size;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    auto previous = std::prev(it);
    if (previous->second.segment == block.segment &&
        !previous->second.allocated) {
      freeBlocks.erase({previous->second.size, previous->first});
      previous->second.size += block.size;
      blocks_.erase(it);
      it = previous;
    }
  }
  freeBlocks.insert({it->second.size, it->first});
  return nullptr;
}

void CachingAllocator::releaseCached() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseCachedLocked();
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

bool CachingAllocator::addSegment(size_t size, bool small) {
  size_t segment = small ? kSegmentGranularity : size;
  uint64_t address = 0;
  if (!source_.allocate(segment, address))
    return false;
  assert(address % kAlignment == 0 && "a segment source broke its alignment");
  segments_.emplace(address, segment);
  blocks_.emplace(address, Block{segment, address, false, small});
  pool(small).insert({segment, address});
  stats_.reservedBytes += segment;
  stats_.peakReservedBytes =
      std::max(stats_.peakReservedBytes, stats_.reservedBytes);
  ++stats_.segments;
  ++stats_.sourceAllocations;
  return true;
}

void CachingAllocator::takeBlock(Blocks::iterator it, size_t size) {
  Block &block = it->second;
  // Every block size of a pool is a multiple of the pool's rounding, so any
  // remainder can serve a request of that pool.
  if (block.size > size) {
    Block rest{block.size - size, block.segment, false, block.small};
    blocks_.emplace_hint(std::next(it), it->first + size, rest);
    pool(block.small).insert({rest.size, it->first + size});
    block.size = size;
  }
  block.allocated = true;
  stats_.allocatedBytes += size;
  stats_.peakAllocatedBytes =
      std::max(stats_.peakAllocatedBytes, stats_.allocatedBytes);
  ++stats_.blocks;
}

size_t CachingAllocator::releaseCachedLocked() {
  size_t released = 0;
  for (auto segment = segments_.begin(); segment != segments_.end();) {
    auto [address, size] = *segment;
    auto block = blocks_.find(address);
    if (block->second.allocated || block->second.size != size) {
      ++segment;
      continue;
    }
    pool(block->second.small).erase({size, address});
    blocks_.erase(block);
    source_.release(address, size);
    stats_.reservedBytes -= size;
    --stats_.segments;
    segment = segments_.erase(segment);
    ++released;
  }
  return released;
}

} // namespace dlc::cuda
