//===- TokenFile.cpp - Flat token files for language-model training -------===//
#include "runtime/support/TokenFile.h"

#include <cstring>

namespace dlc {

namespace {

int32_t readInt32(const std::byte *p) {
  int32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

} // namespace

dlc_status_t TokenFile::open(const std::string &path, DType rawWidth,
                             std::unique_ptr<TokenFile> &out) {
  if (rawWidth != DType::U16 && rawWidth != DType::U32)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      path + ": token ids are uint16 or uint32, not " +
                          dtypeName(rawWidth));
  std::unique_ptr<MappedFile> file;
  DLC_RETURN_IF_ERROR(MappedFile::open(path, file));
  const std::byte *data = file->data();
  size_t size = file->size();
  if (size >= 4 && readInt32(data) == kLlmcMagic) {
    if (size < kLlmcHeaderBytes)
      return makeStatus(
          DLC_DATA_LOSS,
          path + ": llm.c token file (magic " + std::to_string(kLlmcMagic) +
              ") of " + std::to_string(size) + " bytes is shorter than its " +
              std::to_string(kLlmcHeaderBytes) + "-byte header");
    int32_t version = readInt32(data + 4), count = readInt32(data + 8);
    if (version != 1 && version != 2)
      return makeStatus(DLC_UNIMPLEMENTED,
                        path + ": llm.c token file version " +
                            std::to_string(version) +
                            " is unknown (1: uint16 ids, 2: uint32 ids)");
    DType dtype = version == 1 ? DType::U16 : DType::U32;
    size_t expected =
        kLlmcHeaderBytes +
        static_cast<size_t>(count < 0 ? 0 : count) * dtypeSize(dtype);
    if (count < 0 || size != expected)
      return makeStatus(DLC_DATA_LOSS,
                        path + ": llm.c token file header says " +
                            std::to_string(count) + " " + dtypeName(dtype) +
                            " ids (" + std::to_string(expected) +
                            " bytes with the header), but the file has " +
                            std::to_string(size) + " bytes");
    out.reset(
        new TokenFile(std::move(file), dtype, data + kLlmcHeaderBytes, count));
    return nullptr;
  }
  size_t width = dtypeSize(rawWidth);
  if (size % width != 0)
    return makeStatus(DLC_DATA_LOSS,
                      path + ": " + std::to_string(size) +
                          " bytes are not a whole number of " +
                          dtypeName(rawWidth) +
                          " token ids (and the file has no llm.c header, "
                          "magic " +
                          std::to_string(kLlmcMagic) + ")");
  out.reset(new TokenFile(std::move(file), rawWidth, data,
                          static_cast<int64_t>(size / width)));
  return nullptr;
}

} // namespace dlc
