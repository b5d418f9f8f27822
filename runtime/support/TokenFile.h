//===- TokenFile.h - Flat token files for language-model training ---------===//
//
// A token file is a corpus tokenized once: the token ids one after another,
// unsigned 16-bit (GPT-2's 50257 ids fit) or 32-bit. Two layouts are read,
// memory-mapped:
//  - nanoGPT's .bin: the ids alone (numpy's tofile of a uint16 array); the
//    width is the caller's choice (uint16 unless said otherwise);
//  - llm.c's: a header of 256 little-endian int32 (magic 20240520, version
//    1 for uint16 ids or 2 for uint32, the number of ids), then the ids.
// The header is recognized by its magic; a file whose header or size does
// not add up is refused with one message naming it.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_TOKENFILE_H
#define DLC_RUNTIME_SUPPORT_TOKENFILE_H

#include "runtime/support/MappedFile.h"
#include "runtime/support/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>

namespace dlc {

class TokenFile {
public:
  /// llm.c's magic number, the header's first int32.
  static constexpr int32_t kLlmcMagic = 20240520;
  /// llm.c's header: 256 int32.
  static constexpr size_t kLlmcHeaderBytes = 256 * 4;

  /// Maps `path` into `out`; `rawWidth` (U16 or U32, else
  /// DLC_INVALID_ARGUMENT) is the id type of a file without llm.c's header.
  /// Fails as MappedFile::open does, or when the header or size is wrong
  /// (DLC_DATA_LOSS) or the header's version unknown (DLC_UNIMPLEMENTED).
  static dlc_status_t open(const std::string &path, DType rawWidth,
                           std::unique_ptr<TokenFile> &out);

  const std::string &path() const { return file_->path(); }
  /// U16 or U32.
  DType dtype() const { return dtype_; }
  /// The first id.
  const std::byte *tokens() const { return tokens_; }
  int64_t count() const { return count_; }
  /// Fails when the file no longer has the size it was opened with.
  dlc_status_t checkSize() const { return file_->checkSize(); }

private:
  TokenFile(std::unique_ptr<MappedFile> file, DType dtype,
            const std::byte *tokens, int64_t count)
      : file_(std::move(file)), dtype_(dtype), tokens_(tokens), count_(count) {}

  std::unique_ptr<MappedFile> file_;
  DType dtype_;
  const std::byte *tokens_;
  int64_t count_;
};

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_TOKENFILE_H
