//===- TokenFile.cpp - Fuzz target: token files ---------------------------===//
//
// The input is a token file (--data *.bin), opened as nanoGPT's raw uint16
// and uint32 ids and as llm.c's file with a header. An opened file's ids
// must all lie inside the mapping: the first and the last are read, and
// under AddressSanitizer the mapping's tail is poisoned
// (runtime/support/MappedFile.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/support/TokenFile.h"
#include "fuzz/Scratch.h"
#include "fuzz/Status.h"

#include <cstring>

namespace {

void open(const std::string &path, dlc::DType rawWidth) {
  std::unique_ptr<dlc::TokenFile> file;
  if (!dlc::fuzz::succeeded(dlc::TokenFile::open(path, rawWidth, file)))
    return;
  if (file->count() == 0)
    return;
  size_t width = dlc::dtypeSize(file->dtype());
  uint32_t first = 0, last = 0;
  std::memcpy(&first, file->tokens(), width);
  std::memcpy(&last, file->tokens() + (file->count() - 1) * width, width);
  volatile uint32_t sink = first ^ last;
  (void)sink;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = dlc::fuzz::scratchDir() + "/tokens.bin";
  dlc::fuzz::writeFile(path, data, size);
  open(path, dlc::DType::U16);
  open(path, dlc::DType::U32);
  return 0;
}
