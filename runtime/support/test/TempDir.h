//===- TempDir.h - A scratch directory per test ---------------------------===//
//
// The file-based tests of dlc_support each get a fresh directory under
// gtest's TempDir, removed afterwards, and small helpers to read and write
// files in it byte for byte, or as zip archives built with libzip.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_TEST_TEMPDIR_H
#define DLC_RUNTIME_SUPPORT_TEST_TEMPDIR_H

#include "runtime/support/Tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>
#include <zip.h>

namespace dlc {
/// Failure messages show "float32[2,3]" rather than raw bytes (defined in
/// NpzTest.cpp, which this test binary links).
void PrintTo(const Tensor &t, std::ostream *os);
} // namespace dlc

namespace dlc::testing {

class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    static int counter = 0;
    const ::testing::TestInfo *info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    dir = ::testing::TempDir() + "dlc_" + info->name() + "_" +
          std::to_string(getpid()) + "_" + std::to_string(counter++);
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(std::filesystem::create_directories(dir)) << dir;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }

  std::string path(const std::string &name) const { return dir + "/" + name; }

  void writeFile(const std::string &name, const std::string &bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }

  std::string readFile(const std::string &name) const {
    std::ifstream in(path(name), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }

  /// Writes a zip archive with libzip directly, to build what dlc's writers
  /// never produce: deflated members, foreign names, bad members.
  void writeZip(const std::string &name,
                const std::vector<std::pair<std::string, std::string>> &members,
                zip_int32_t method) const {
    int code = 0;
    zip_t *archive =
        zip_open(path(name).c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    ASSERT_NE(archive, nullptr);
    for (const auto &[member, bytes] : members) {
      zip_source_t *source =
          zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
      zip_int64_t index = zip_file_add(archive, member.c_str(), source, 0);
      ASSERT_GE(index, 0);
      ASSERT_EQ(
          zip_set_file_compression(archive, zip_uint64_t(index), method, 0), 0);
    }
    ASSERT_EQ(zip_close(archive), 0);
  }

  /// The names in the directory, sorted.
  std::vector<std::string> listDir(const std::string &sub = "") const {
    std::vector<std::string> names;
    for (const auto &entry :
         std::filesystem::directory_iterator(sub.empty() ? dir : path(sub)))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir;
};

/// Whether /usr/bin/python3 can import `modules` ("numpy, onnx").
inline bool pythonHas(const std::string &modules) {
  std::string command =
      "/usr/bin/python3 -c 'import " + modules + "' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

} // namespace dlc::testing

#endif // DLC_RUNTIME_SUPPORT_TEST_TEMPDIR_H
