//===- Format.h - Version of the .dlcm module format ------------*- C++ -*-===//
//
// The schema is dlcm.fbs; flatc generates runtime/module/dlcm_generated.h
// into the build tree. Writers stamp kFormatVersion; readers refuse any
// other version with a message naming both, since a field's meaning may
// have changed.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_MODULE_FORMAT_H
#define DLC_RUNTIME_MODULE_FORMAT_H

#include <cstdint>

namespace dlc {

/// The .dlcm format version this build writes and reads (3: globals may be
/// 16-bit copies of others, Global.copy_of, which an older runtime would
/// leave at zero; 4: shard steps among a tensor group,
/// ShardStep.tensor_parallel, which an older runtime would run among the
/// data-parallel replicas).
constexpr uint32_t kModuleFormatVersion = 4;

/// Alignment of every arena offset and of the arena itself, in bytes: wide
/// enough for any vector load and for cache-line separation of buffers.
constexpr uint64_t kBufferAlignment = 64;

} // namespace dlc

#endif // DLC_RUNTIME_MODULE_FORMAT_H
