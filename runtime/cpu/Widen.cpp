//===- Widen.cpp - 16-bit library calls computed in float32 ---------------===//
#include "runtime/cpu/Widen.h"

#include "runtime/module/Format.h"

namespace dlc::cpu {

size_t alignScratch(size_t bytes) {
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

} // namespace dlc::cpu
