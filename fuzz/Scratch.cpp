//===- Scratch.cpp - Files for the loaders that read a path ---------------===//
#include "fuzz/Scratch.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace dlc::fuzz {
namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "fuzz scratch: %s\n", what.c_str());
  std::abort();
}

void removeScratch() {
  std::error_code ignored;
  std::filesystem::remove_all(scratchDir(), ignored);
}

std::string makeScratch() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/dlc-fuzz-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    die("cannot make a folder like " + pattern);
  return name.data();
}

void makeModelDir(const std::string &scratch) {
  std::string model = scratch + "/model";
  std::vector<uint8_t> bytes(256);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i);
  std::error_code ec;
  std::filesystem::create_directories(model + "/sub", ec);
  std::filesystem::create_directories(model + "/folder", ec);
  if (ec)
    die("cannot make " + model + ": " + ec.message());
  writeFile(model + "/weights.bin", bytes.data(), bytes.size());
  writeFile(model + "/sub/weights.bin", bytes.data(), bytes.size());
  writeFile(scratch + "/secret.bin", bytes.data(), 24);
  std::filesystem::create_symlink("../secret.bin", model + "/escape.bin", ec);
  if (ec)
    die("cannot make the symlink in " + model + ": " + ec.message());
}

} // namespace

const std::string &scratchDir() {
  // Never destroyed: removeScratch runs at exit, after static destructors
  // may have run.
  static const std::string *dir = [] {
    auto *made = new std::string(makeScratch());
    std::atexit(removeScratch);
    return made;
  }();
  return *dir;
}

const std::string &modelDir() {
  static const std::string dir = [] {
    makeModelDir(scratchDir());
    return scratchDir() + "/model";
  }();
  return dir;
}

void writeFile(const std::string &path, const uint8_t *data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(data),
            static_cast<std::streamsize>(size));
  out.close();
  if (!out)
    die("cannot write " + path);
}

} // namespace dlc::fuzz
