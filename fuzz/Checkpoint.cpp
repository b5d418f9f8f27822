//===- Checkpoint.cpp - Fuzz target: checkpoint files ---------------------===//
//
// The input is a checkpoint file, step-00000001.dlcc in a checkpoint
// folder whose LATEST marker names it, read as --resume DIR reads it. Each
// member's CRC-32 and the checksum member guard everything past the zip
// structure; libFuzzer's comparison tracing (-use_value_profile in a
// campaign) learns to write the computed value over the stored one, so the
// decoding behind the checks is reached too.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Checkpoint.h"
#include "fuzz/Scratch.h"
#include "fuzz/Status.h"

#include <filesystem>

namespace {

const std::string &checkpointDir() {
  static const std::string dir = [] {
    std::string made = dlc::fuzz::scratchDir() + "/checkpoint";
    std::filesystem::create_directories(made);
    std::string marker = "step-00000001.dlcc\n";
    dlc::fuzz::writeFile(made + "/LATEST",
                         reinterpret_cast<const uint8_t *>(marker.data()),
                         marker.size());
    return made;
  }();
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc::fuzz::writeFile(checkpointDir() + "/step-00000001.dlcc", data, size);
  dlc::CheckpointContents contents;
  dlc::fuzz::succeeded(dlc::readCheckpoint(checkpointDir(), contents));
  return 0;
}
