//===- Npz.cpp - Fuzz target: .npz archives -------------------------------===//
//
// The input is a .npz (or .npy) file, read by dlc's one reader, MappedNpz
// (its own zip parser over a mapping; datasets, checkpoints, and readNpz's
// copies for dlc-run --inputs), with and without CRC checks so that a stale
// CRC does not hide the parsing behind it. Under AddressSanitizer the
// mapping's tail is poisoned (runtime/support/MappedFile.cpp), so reading
// past the file is reported. readNpz's copies must equal the mapped arrays.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Npz.h"
#include "fuzz/Scratch.h"
#include "fuzz/Status.h"
#include "runtime/support/MappedNpz.h"

#include <cstdlib>
#include <cstring>

namespace {

bool sameArrays(const dlc::NamedTensors &read, const dlc::MappedNpz &mapped) {
  const std::vector<dlc::MappedArray> &arrays = mapped.arrays();
  if (read.size() != arrays.size())
    return false;
  for (size_t i = 0; i < read.size(); ++i) {
    const auto &[name, tensor] = read[i];
    const dlc::MappedArray &array = arrays[i];
    if (name != array.name || tensor.dtype() != array.dtype ||
        tensor.shape() != array.shape || tensor.byteSize() != array.bytes ||
        (array.bytes &&
         std::memcmp(tensor.bytes(), array.data, array.bytes) != 0))
      return false;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = dlc::fuzz::scratchDir() + "/input.npz";
  dlc::fuzz::writeFile(path, data, size);

  std::unique_ptr<dlc::MappedNpz> unchecked;
  dlc::fuzz::succeeded(
      dlc::MappedNpz::open(path, dlc::CrcCheck::Skip, unchecked));
  unchecked.reset();

  std::unique_ptr<dlc::MappedNpz> mapped;
  dlc::fuzz::succeeded(
      dlc::MappedNpz::open(path, dlc::CrcCheck::Verify, mapped));

  dlc::NamedTensors read;
  if (dlc::fuzz::succeeded(dlc::readNpz(path, read)) && mapped &&
      !sameArrays(read, *mapped))
    std::abort();
  return 0;
}
