//===- Embedded.h - A module appended to the runner executable --*- C++ -*-===//
//
// A training binary (dlc-compile --emit=exe) is the prebuilt runner with a
// module appended, so building one needs no linker:
//   [runner executable][module bytes][module size: 8 bytes little-endian]
//   [kEmbeddedModuleMagic: 8 bytes]
// ELF loaders ignore bytes past the last segment; the runner finds its
// module by reading its own file's tail.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_MODULE_EMBEDDED_H
#define DLC_RUNTIME_MODULE_EMBEDDED_H

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace dlc {

inline constexpr char kEmbeddedModuleMagic[8] = {'D', 'L', 'C', 'M',
                                                 'E', 'X', 'E', '1'};
inline constexpr size_t kEmbeddedTrailerSize = 16;

/// `runner` with `module` and the trailer appended.
inline std::string appendEmbeddedModule(std::string runner,
                                        std::string_view module) {
  runner.append(module.data(), module.size());
  uint64_t size = module.size();
  for (int i = 0; i < 8; ++i)
    runner.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  runner.append(kEmbeddedModuleMagic, sizeof(kEmbeddedModuleMagic));
  return runner;
}

/// Given the last kEmbeddedTrailerSize bytes of a file of `fileSize` bytes,
/// the embedded module's offset and size; false when there is none.
inline bool parseEmbeddedTrailer(const char *trailer, uint64_t fileSize,
                                 uint64_t &offset, uint64_t &size) {
  if (fileSize < kEmbeddedTrailerSize ||
      std::memcmp(trailer + 8, kEmbeddedModuleMagic, 8) != 0)
    return false;
  size = 0;
  for (int i = 0; i < 8; ++i)
    size |= static_cast<uint64_t>(static_cast<unsigned char>(trailer[i]))
            << (8 * i);
  if (size > fileSize - kEmbeddedTrailerSize)
    return false;
  offset = fileSize - kEmbeddedTrailerSize - size;
  return true;
}

} // namespace dlc

#endif // DLC_RUNTIME_MODULE_EMBEDDED_H
