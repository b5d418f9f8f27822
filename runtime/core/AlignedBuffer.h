//===- AlignedBuffer.h - Owned memory aligned for the module format -------===//
//
// Module files, globals and arenas live in memory aligned to
// kBufferAlignment (64 bytes): the module's force_align(64) data must stay
// aligned once the file is in memory, and generated kernels and oneDNN may
// use aligned vector loads on any buffer. Large buffers are anonymous
// mappings: page-aligned, zero-filled by the kernel and committed only as
// they are touched, so a zeroed multi-gigabyte global costs nothing until
// it is used.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_ALIGNEDBUFFER_H
#define DLC_RUNTIME_CORE_ALIGNEDBUFFER_H

#include <cstddef>
#include <utility>

namespace dlc {

/// A block of bytes aligned to kBufferAlignment; movable, not copyable.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  AlignedBuffer(AlignedBuffer &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        mapped_(std::exchange(other.mapped_, 0)) {}
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(mapped_, other.mapped_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() { release(); }

  /// Allocates `size` bytes (at least one alignment unit, so even an empty
  /// buffer has a valid address), zero-filled if `zero`. False when out of
  /// memory.
  bool allocate(size_t size, bool zero);

  std::byte *data() { return data_; }
  const std::byte *data() const { return data_; }
  size_t size() const { return size_; }

private:
  void release();

  std::byte *data_ = nullptr;
  size_t size_ = 0;
  /// Bytes mapped with mmap (0: allocated with posix_memalign).
  size_t mapped_ = 0;
};

} // namespace dlc

#endif // DLC_RUNTIME_CORE_ALIGNEDBUFFER_H
