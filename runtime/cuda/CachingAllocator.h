//===- CachingAllocator.h - Cached device memory for CUDA -------*- C++ -*-===//
//
// cuMemAlloc and cuMemFree are slow (a free synchronizes the device) and
// every allocation rounds up to the driver's granularity, so the CUDA device
// takes memory from the driver in segments and carves sessions' globals,
// arenas and workspaces out of them, keeping freed blocks for the next
// request (the design of PyTorch's CUDACachingAllocator and IREE's caching
// allocator, reduced to what dlc needs):
//  - Requests of at most 1 MiB (small: scalars, hyperparameters, small
//    parameters) share 2 MiB segments, so a model with hundreds of biases
//    does not cost hundreds of driver allocations.
//  - Larger requests are rounded up to a multiple of 2 MiB and take the
//    best-fitting cached free block of the large pool, split when larger,
//    or a segment of their own. The rounding makes blocks of nearby sizes
//    interchangeable, so a session reopened with the same model reuses the
//    memory of the one before it.
//  - A freed block merges with its free neighbours in the same segment, so
//    small frees do not fragment a segment for good.
//  - When the driver is out of memory, wholly free cached segments go back
//    to it and the allocation is tried once more.
//
// There is no stream-ordered reuse (PyTorch records the streams that use a
// block and waits on events before reusing it): the runtime frees device
// memory only after synchronizing the device, so a freed block is idle and
// can be handed out again at once. Requests come from sessions' setup and
// teardown, not from the hot path; a mutex around each public method makes
// one allocator safe to share between the sessions of a device.
//
// The allocator deals in addresses (CUdeviceptr is a 64-bit integer) and
// reaches the driver only through a SegmentSource, so all of its logic runs,
// and is tested, on the host. Its bookkeeping allocates host memory, which
// can throw std::bad_alloc; the C API's guardStatus turns that into
// DLC_RESOURCE_EXHAUSTED.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_CACHINGALLOCATOR_H
#define DLC_RUNTIME_CUDA_CACHINGALLOCATOR_H

#include "dlc/runtime.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace dlc::cuda {

/// Where the allocator gets whole segments of device memory and returns
/// them: cuMemAlloc/cuMemFree on a device, aligned host memory in tests.
class SegmentSource {
public:
  virtual ~SegmentSource() = default;
  /// Sets `address` to a new segment of `bytes` bytes (256-byte aligned);
  /// false when the device is out of memory.
  virtual bool allocate(size_t bytes, uint64_t &address) = 0;
  /// Returns a segment that allocate gave, with the size it was asked for.
  virtual void release(uint64_t address, size_t bytes) = 0;
};

/// Device memory handed out in blocks carved from cached segments.
class CachingAllocator {
public:
  /// Every block's address and size are multiples of this (cuBLASLt and
  /// cuDNN want 256-byte aligned operands and workspaces).
  static constexpr size_t kAlignment = 256;
  /// The largest request served from the small pool.
  static constexpr size_t kSmallRequest = size_t(1) << 20;
  /// The size of a small pool segment, and the granularity of large blocks.
  static constexpr size_t kSegmentGranularity = size_t(2) << 20;

  explicit CachingAllocator(SegmentSource &source);
  /// Returns every segment to the source. Blocks still allocated are a
  /// caller's bug (asserted in debug builds); their segments are released
  /// anyway.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  /// The size of the block a request of `bytes` gets: a multiple of
  /// kAlignment (at least one) for a small request, of kSegmentGranularity
  /// for a large one. 0 for a request too large to round.
  static size_t blockSize(size_t bytes);

  /// Sets `address` to a block of blockSize(bytes) bytes, kAlignment
  /// aligned; 0 bytes gives a valid block of its own. Out of device memory
  /// even after releasing the cached segments is DLC_RESOURCE_EXHAUSTED
  /// naming the request and the reserved and allocated bytes.
  dlc_status_t allocate(size_t bytes, uint64_t &address);

  /// Returns the block at `address` to the cache (not to the device). An
  /// address that is not an allocated block's is DLC_INVALID_ARGUMENT.
  dlc_status_t free(uint64_t address);

  /// Returns every wholly free segment to the source.
  void releaseCached();

  struct Stats {
    /// Bytes in allocated blocks (block sizes, not request sizes).
    size_t allocatedBytes = 0;
    /// Bytes in segments taken from the source.
    size_t reservedBytes = 0;
    size_t peakAllocatedBytes = 0;
    size_t peakReservedBytes = 0;
    /// Segments held now.
    size_t segments = 0;
    /// Blocks allocated now.
    size_t blocks = 0;
    /// Segments ever taken from the source (a request served from the
    /// cache leaves it unchanged).
    size_t sourceAllocations = 0;
  };
  Stats stats() const;

private:
  /// A piece of a segment, free or allocated. The blocks of a segment tile
  /// it, so a block's neighbours in memory are its neighbours in the
  /// address-ordered block map that have the same `segment`.
  struct Block {
    size_t size;
    uint64_t segment;
    bool allocated;
    bool small;
  };
  using Blocks = std::map<uint64_t, Block>;
  /// Free blocks of one pool ordered by (size, address): lower_bound of
  /// (n, 0) is the best fit for n bytes, the lowest address among equals.
  using FreeSet = std::set<std::pair<size_t, uint64_t>>;

  FreeSet &pool(bool small) { return small ? smallFree_ : largeFree_; }
  /// A new segment for a block of `size` bytes, with its one free block;
  /// false when the source is out of memory.
  bool addSegment(size_t size, bool small);
  /// Allocates the first `size` bytes of the free block `it`, already taken
  /// out of its free set, making the rest a new free block.
  void takeBlock(Blocks::iterator it, size_t size);
  /// Releases the wholly free segments; the number released.
  size_t releaseCachedLocked();

  SegmentSource &source_;
  mutable std::mutex mutex_;
  /// Every block, free or allocated, by address.
  Blocks blocks_;
  FreeSet smallFree_, largeFree_;
  /// Segment address to size.
  std::map<uint64_t, size_t> segments_;
  Stats stats_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_CACHINGALLOCATOR_H
