//===- LaunchPlan.cpp - Choices made before a kernel launches -------------===//
#include "runtime/cuda/LaunchPlan.h"

#include <algorithm>
#include <cctype>

namespace dlc::cuda {

std::optional<Architecture> parseArchitecture(const std::string &name) {
  std::string digits;
  for (const char *prefix : {"sm_", "compute_"})
    if (name.rfind(prefix, 0) == 0)
      digits = name.substr(std::string(prefix).size());
  char suffix = 0;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    suffix = digits.back();
    digits.pop_back();
  }
  if (digits.size() < 2 || digits.size() > 3 ||
      !std::all_of(digits.begin(), digits.end(),
                   [](char c) { return std::isdigit(c); }))
    return std::nullopt;
  int value = std::stoi(digits);
  return Architecture{value / 10, value % 10, suffix};
}

std::string Architecture::name() const {
  std::string name = "sm_" + std::to_string(major) + std::to_string(minor);
  if (suffix)
    name += suffix;
  return name;
}

std::string ptxTarget(const std::string &ptx) {
  size_t at = ptx.find("\n.target ");
  if (at == std::string::npos)
    return "";
  at += 9;
  size_t end = ptx.find_first_of(", \n", at);
  return ptx.substr(at, end == std::string::npos ? end : end - at);
}

namespace {

bool runs(Architecture image, Architecture device) {
  if (image.major != device.major)
    return false;
  return image.suffix == 'a' ? image.minor == device.minor
                             : image.minor <= device.minor;
}

} // namespace

int chooseKernelImage(const std::vector<std::string> &cubins,
                      const std::string &ptx, Architecture device) {
  int best = -2;
  Architecture bestArch;
  for (size_t i = 0; i < cubins.size(); ++i) {
    std::optional<Architecture> arch = parseArchitecture(cubins[i]);
    if (!arch || !runs(*arch, device))
      continue;
    bool better = best < 0 || arch->minor > bestArch.minor ||
                  (arch->minor == bestArch.minor && arch->suffix == 'a' &&
                   bestArch.suffix != 'a');
    if (better) {
      best = static_cast<int>(i);
      bestArch = *arch;
    }
  }
  if (best >= 0)
    return best;
  // PTX is forward-compatible: the driver compiles it for any capability
  // at least its target's (an "a" target's PTX only for that one).
  std::optional<Architecture> target = parseArchitecture(ptxTarget(ptx));
  if (target &&
      (target->suffix == 'a'
           ? target->major == device.major && target->minor == device.minor
           : std::make_pair(target->major, target->minor) <=
                 std::make_pair(device.major, device.minor)))
    return -1;
  return -2;
}

LaunchShape launchShape(int64_t iterations, int64_t threadsPerIteration,
                        int64_t blockSize, int64_t residentBlocks) {
  blockSize = std::max<int64_t>(1, blockSize);
  int64_t perIteration = std::max<int64_t>(1, threadsPerIteration);
  LaunchShape shape;
  if (perIteration > 32) {
    shape.threads = perIteration;
    residentBlocks = residentBlocks * blockSize / perIteration;
  } else {
    shape.threads = blockSize;
  }
  int64_t blocks =
      (iterations * perIteration + shape.threads - 1) / shape.threads;
  shape.blocks =
      std::max<int64_t>(1, std::min(blocks, std::max<int64_t>(1, residentBlocks)));
  return shape;
}

} // namespace dlc::cuda
