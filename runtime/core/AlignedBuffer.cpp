//===- AlignedBuffer.cpp - Owned memory aligned for the module format -----===//
#include "runtime/core/AlignedBuffer.h"

#include "runtime/module/Format.h"

#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace dlc {
namespace {
/// From this size on, buffers are mapped rather than allocated.
constexpr size_t kMapThreshold = size_t(1) << 20;
} // namespace

void AlignedBuffer::release() {
  if (mapped_)
    ::munmap(data_, mapped_);
  else
    std::free(data_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = 0;
}

bool AlignedBuffer::allocate(size_t size, bool zero) {
  release();
  size_t rounded =
      (size + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  if (rounded < size)
    return false;
  if (rounded == 0)
    rounded = kBufferAlignment;
  if (rounded >= kMapThreshold) {
    void *p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return false;
    data_ = static_cast<std::byte *>(p);
    mapped_ = rounded;
    size_ = size;
    return true;
  }
  void *p = nullptr;
  if (posix_memalign(&p, kBufferAlignment, rounded) != 0)
    return false;
  data_ = static_cast<std::byte *>(p);
  size_ = size;
  if (zero)
    std::memset(data_, 0, rounded);
  return true;
}

} // namespace dlc
