//===- TokenFile.cpp - Flat token files for language-model training -------===//
#include "runtime/support/TokenFile.h"

#include <cstring>

namespace dlc {

namespace {

bool fail(std::string *error, const std::string &message) {
  if (error)
    *error = message;
  return false;
}

int32_t readInt32(const std::byte *p) {
  int32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

} // namespace

std::unique_ptr<TokenFile> TokenFile::open(const std::string &path,
                                           DType rawWidth, std::string *error) {
  if (rawWidth != DType::U16 && rawWidth != DType::U32) {
    fail(error, path + ": token ids are uint16 or uint32, not " +
                    std::string(dtypeName(rawWidth)));
    return nullptr;
  }
  std::unique_ptr<MappedFile> file = MappedFile::open(path, error);
  if (!file)
    return nullptr;
  const std::byte *data = file->data();
  size_t size = file->size();
  if (size >= 4 && readInt32(data) == kLlmcMagic) {
    if (size < kLlmcHeaderBytes) {
      fail(error, path + ": llm.c token file (magic " +
                      std::to_string(kLlmcMagic) + ") of " +
                      std::to_string(size) + " bytes is shorter than its " +
                      std::to_string(kLlmcHeaderBytes) + "-byte header");
      return nullptr;
    }
    int32_t version = readInt32(data + 4), count = readInt32(data + 8);
    if (version != 1 && version != 2) {
      fail(error, path + ": llm.c token file version " +
                      std::to_string(version) +
                      " is unknown (1: uint16 ids, 2: uint32 ids)");
      return nullptr;
    }
    DType dtype = version == 1 ? DType::U16 : DType::U32;
    size_t expected =
        kLlmcHeaderBytes +
        static_cast<size_t>(count < 0 ? 0 : count) * dtypeSize(dtype);
    if (count < 0 || size != expected) {
      fail(error, path + ": llm.c token file header says " +
                      std::to_string(count) + " " + dtypeName(dtype) +
                      " ids (" + std::to_string(expected) +
                      " bytes with the header), but the file has " +
                      std::to_string(size) + " bytes");
      return nullptr;
    }
    return std::unique_ptr<TokenFile>(
        new TokenFile(std::move(file), dtype, data + kLlmcHeaderBytes, count));
  }
  size_t width = dtypeSize(rawWidth);
  if (size % width != 0) {
    fail(error, path + ": " + std::to_string(size) +
                    " bytes are not a whole number of " + dtypeName(rawWidth) +
                    " token ids (and the file has no " +
                    "llm.c header, magic " + std::to_string(kLlmcMagic) + ")");
    return nullptr;
  }
  return std::unique_ptr<TokenFile>(new TokenFile(
      std::move(file), rawWidth, data, static_cast<int64_t>(size / width)));
}

} // namespace dlc
