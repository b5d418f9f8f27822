//===- MappedNpzTest.cpp - Tests of the in-place .npz/.npy reader ---------===//
//
// Stored members are read in place and agree with readNpz; deflated,
// big-endian and odd-boolean members are converted; zip64 archives (built
// byte by byte here, and by NumPy) are read; every truncation and random
// byte flip of a small archive is an error or, with CRC checks, a file that
// reads exactly as before, never a crash.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/MappedNpz.h"

#include "runtime/support/Npz.h"
#include "runtime/support/test/Outcome.h"
#include "runtime/support/test/TempDir.h"
#include "runtime/support/test/TestTensors.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstring>
#include <random>

using namespace dlc;

namespace {

using namespace dlc::testing;

/// A MappedArray as a Tensor, to compare with readNpz's.
Tensor toTensor(const MappedArray &array) {
  Tensor t(array.dtype, array.shape);
  EXPECT_EQ(array.bytes, t.byteSize()) << array.name;
  if (array.bytes == t.byteSize() && array.bytes > 0)
    std::memcpy(t.bytes(), array.data, array.bytes);
  return t;
}

NamedTensors toTensors(const MappedNpz &npz) {
  NamedTensors out;
  for (const MappedArray &array : npz.arrays())
    out.emplace_back(array.name, toTensor(array));
  return out;
}

void appendLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += char((value >> (8 * i)) & 0xff);
}

/// A zip archive of stored members built byte by byte, independently of
/// the code under test. With `zip64` every size and offset is all ones in
/// the headers and real in zip64 extra fields, and a zip64 end record and
/// locator precede the end record.
std::string
buildZip(const std::vector<std::pair<std::string, std::string>> &members,
         bool zip64) {
  std::string out, directory;
  for (const auto &[name, bytes] : members) {
    uint64_t offset = out.size();
    uint32_t crc = crc32(0, bytes.data(), bytes.size());
    uint64_t small = zip64 ? 0xffffffff : bytes.size();
    appendLE(out, 0x04034b50, 4);
    appendLE(out, 45, 2);
    appendLE(out, 0, 2);
    appendLE(out, 0, 2);
    appendLE(out, 0, 4);
    appendLE(out, crc, 4);
    appendLE(out, small, 4);
    appendLE(out, small, 4);
    appendLE(out, name.size(), 2);
    appendLE(out, zip64 ? 20 : 0, 2);
    out += name;
    if (zip64) {
      appendLE(out, 1, 2);
      appendLE(out, 16, 2);
      appendLE(out, bytes.size(), 8);
      appendLE(out, bytes.size(), 8);
    }
    out += bytes;
    appendLE(directory, 0x02014b50, 4);
    appendLE(directory, 45, 2);
    appendLE(directory, 45, 2);
    appendLE(directory, 0, 2);
    appendLE(directory, 0, 2);
    appendLE(directory, 0, 4);
    appendLE(directory, crc, 4);
    appendLE(directory, small, 4);
    appendLE(directory, small, 4);
    appendLE(directory, name.size(), 2);
    appendLE(directory, zip64 ? 28 : 0, 2);
    appendLE(directory, 0, 2);
    appendLE(directory, 0, 2);
    appendLE(directory, 0, 2);
    appendLE(directory, 0, 4);
    appendLE(directory, zip64 ? 0xffffffff : offset, 4);
    directory += name;
    if (zip64) {
      appendLE(directory, 1, 2);
      appendLE(directory, 24, 2);
      appendLE(directory, bytes.size(), 8);
      appendLE(directory, bytes.size(), 8);
      appendLE(directory, offset, 8);
    }
  }
  uint64_t directoryOffset = out.size();
  out += directory;
  if (zip64) {
    uint64_t record = out.size();
    appendLE(out, 0x06064b50, 4);
    appendLE(out, 44, 8);
    appendLE(out, 45, 2);
    appendLE(out, 45, 2);
    appendLE(out, 0, 8);
    appendLE(out, members.size(), 8);
    appendLE(out, members.size(), 8);
    appendLE(out, directory.size(), 8);
    appendLE(out, directoryOffset, 8);
    appendLE(out, 0x07064b50, 4);
    appendLE(out, 0, 4);
    appendLE(out, record, 8);
    appendLE(out, 1, 4);
  }
  appendLE(out, 0x06054b50, 4);
  appendLE(out, 0, 4);
  appendLE(out, zip64 ? 0xffff : members.size(), 2);
  appendLE(out, zip64 ? 0xffff : members.size(), 2);
  appendLE(out, zip64 ? 0xffffffff : directory.size(), 4);
  appendLE(out, zip64 ? 0xffffffff : directoryOffset, 4);
  appendLE(out, 0, 2);
  return out;
}

/// A .npy file with the given header text and data, no padding.
std::string npyBytes(const std::string &descr, const std::string &shape,
                     const std::string &data,
                     const std::string &fortran = "False") {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + fortran +
                       ", 'shape': " + shape + ", }\n";
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  appendLE(out, header.size(), 2);
  return out + header + data;
}

class MappedNpzFiles : public dlc::testing::TempDirTest {
protected:
  /// Opens `name`, expecting failure with `code`; returns the message.
  std::string openError(const std::string &name, CrcCheck crc = CrcCheck::Skip,
                        dlc_status_code_t code = DLC_DATA_LOSS) const {
    std::unique_ptr<MappedNpz> npz;
    Outcome o = outcome(MappedNpz::open(path(name), crc, npz));
    EXPECT_EQ(o.code, code) << name << ": " << o.message;
    EXPECT_EQ(npz, nullptr) << name;
    EXPECT_EQ(o.message.rfind(path(name), 0), 0u) << o.message;
    return o.message;
  }

  NamedTensors sample() const {
    return {{"weights", randomTensor(DType::F32, {3, 5}, 1)},
            {"labels", randomTensor(DType::I64, {3}, 2)},
            {"mask", randomTensor(DType::Bool, {2, 2}, 3)}};
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

TEST(Crc32, MatchesTheStandardCheckValue) {
  const char *text = "123456789";
  EXPECT_EQ(crc32(0, text, 9), 0xCBF43926u);
  EXPECT_EQ(crc32(crc32(0, text, 4), text + 4, 5), 0xCBF43926u);
  EXPECT_EQ(crc32(0, nullptr, 0), 0u);
  // Long input goes through the eight-byte loop at every alignment.
  std::string bytes(1000, '\0');
  std::mt19937 rng(7);
  for (char &c : bytes)
    c = char(rng());
  for (size_t start = 0; start < 9; ++start) {
    uint32_t whole = crc32(0, bytes.data() + start, bytes.size() - start);
    uint32_t bytewise = 0;
    for (size_t i = start; i < bytes.size(); ++i)
      bytewise = crc32(bytewise, bytes.data() + i, 1);
    EXPECT_EQ(whole, bytewise) << start;
  }
}

TEST_F(MappedNpzFiles, StoredMembersAreReadInPlace) {
  NamedTensors arrays;
  uint32_t seed = 10;
  for (DType type : kNumpyTypes)
    arrays.emplace_back(dtypeName(type), randomTensor(type, {2, 3}, seed++));
  arrays.emplace_back("scalar", randomTensor(DType::F64, {}, seed++));
  arrays.emplace_back("empty", Tensor(DType::I32, {0, 4}));
  ASSERT_TRUE(isOk(writeNpz(path("a.npz"), arrays)));

  std::unique_ptr<MappedNpz> npz;
  ASSERT_TRUE(isOk(MappedNpz::open(path("a.npz"), CrcCheck::Verify, npz)));
  EXPECT_EQ(toTensors(*npz), arrays);
  const std::byte *begin = npz->file().data();
  const std::byte *end = begin + npz->file().size();
  int count = 0;
  zip_t *archive = zip_open(path("a.npz").c_str(), ZIP_RDONLY, nullptr);
  ASSERT_NE(archive, nullptr);
  for (const MappedArray &array : npz->arrays()) {
    EXPECT_TRUE(array.mapped) << array.name;
    EXPECT_TRUE(array.data >= begin && array.data + array.bytes <= end)
        << array.name;
    zip_stat_t stat;
    ASSERT_EQ(zip_stat_index(archive, count++, 0, &stat), 0);
    EXPECT_EQ(array.crc32, stat.crc) << array.name;
  }
  zip_discard(archive);
  EXPECT_EQ(npz->find("float32"), &npz->arrays()[10]);
  EXPECT_EQ(npz->find("missing"), nullptr);
}

TEST_F(MappedNpzFiles, ReadsNpyFilesNamedAfterTheFile) {
  Tensor t = randomTensor(DType::I16, {4, 2}, 5);
  ASSERT_TRUE(isOk(writeNpy(path("feat.npy"), t)));
  std::unique_ptr<MappedNpz> npz;
  ASSERT_TRUE(isOk(MappedNpz::open(path("feat.npy"), CrcCheck::Verify, npz)));
  ASSERT_EQ(npz->arrays().size(), 1u);
  EXPECT_EQ(npz->arrays()[0].name, "feat");
  EXPECT_TRUE(npz->arrays()[0].mapped);
  EXPECT_EQ(toTensor(npz->arrays()[0]), t);
}

TEST_F(MappedNpzFiles, InflatesDeflatedMembers) {
  NamedTensors arrays = sample();
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto &[name, t] : arrays)
    members.emplace_back(name + ".npy", serializeNpy(t));
  writeZip("deflated.npz", members, ZIP_CM_DEFLATE);
  std::unique_ptr<MappedNpz> npz;
  ASSERT_TRUE(isOk(MappedNpz::open(path("deflated.npz"), CrcCheck::Skip, npz)));
  EXPECT_EQ(toTensors(*npz), arrays);
  for (const MappedArray &array : npz->arrays())
    EXPECT_FALSE(array.mapped) << array.name;
}

TEST_F(MappedNpzFiles, ConvertsBigEndianAndOddBooleans) {
  std::string big = npyBytes(">i4", "(2,)", std::string("\0\0\1\2\0\0\0\3", 8));
  std::string bools = npyBytes("|b1", "(3,)", std::string("\0\7\1", 3));
  writeFile("c.npz", buildZip({{"big.npy", big}, {"b.npy", bools}}, false));
  std::unique_ptr<MappedNpz> npz;
  ASSERT_TRUE(isOk(MappedNpz::open(path("c.npz"), CrcCheck::Verify, npz)));
  Tensor expectBig(DType::I32, {2});
  expectBig.data<int32_t>()[0] = 0x0102;
  expectBig.data<int32_t>()[1] = 3;
  Tensor expectBools(DType::Bool, {3});
  expectBools.data<bool>()[1] = expectBools.data<bool>()[2] = true;
  EXPECT_EQ(toTensor(npz->arrays()[0]), expectBig);
  EXPECT_EQ(toTensor(npz->arrays()[1]), expectBools);
  EXPECT_FALSE(npz->arrays()[0].mapped);
  EXPECT_FALSE(npz->arrays()[1].mapped);
}

TEST_F(MappedNpzFiles, ReadsZip64Archives) {
  NamedTensors arrays = sample();
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto &[name, t] : arrays)
    members.emplace_back(name + ".npy", serializeNpy(t));
  writeFile("z.npz", buildZip(members, true));
  std::unique_ptr<MappedNpz> npz;
  ASSERT_TRUE(isOk(MappedNpz::open(path("z.npz"), CrcCheck::Verify, npz)));
  EXPECT_EQ(toTensors(*npz), arrays);
  // libzip agrees that the hand-built archive is valid.
  NamedTensors viaLibzip;
  ASSERT_TRUE(isOk(readNpz(path("z.npz"), viaLibzip)));
  EXPECT_EQ(viaLibzip, arrays);
}

TEST_F(MappedNpzFiles, EmptyArchive) {
  ASSERT_TRUE(isOk(writeNpz(path("e.npz"), {})));
  std::unique_ptr<MappedNpz> npz;
  ASSERT_TRUE(isOk(MappedNpz::open(path("e.npz"), CrcCheck::Verify, npz)));
  EXPECT_TRUE(npz->arrays().empty());
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(MappedNpzFiles, TransposesFortranOrderArrays) {
  // np.asfortranarray([[1, 2], [3, 4]]) stores 1, 3, 2, 4; the array read
  // is row-major, in memory the MappedNpz owns.
  std::string elements;
  for (float v : {1.0f, 3.0f, 2.0f, 4.0f})
    elements.append(reinterpret_cast<const char *>(&v), sizeof(v));
  writeFile("f.npz",
            buildZip({{"w.npy", npyBytes("<f4", "(2, 2)", elements, "True")}},
                     false));
  std::unique_ptr<MappedNpz> npz;
  ASSERT_TRUE(isOk(MappedNpz::open(path("f.npz"), CrcCheck::Verify, npz)));
  const MappedArray &w = npz->arrays().at(0);
  EXPECT_FALSE(w.mapped);
  float values[4];
  ASSERT_EQ(w.bytes, sizeof(values));
  std::memcpy(values, w.data, sizeof(values));
  EXPECT_EQ(std::vector<float>(values, values + 4),
            (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(MappedNpzFiles, RejectsWhatItCannotRead) {
  // A 1-D Fortran array is laid out as a C one.
  writeFile("f1.npz",
            buildZip({{"v.npy",
                       npyBytes("<f4", "(4,)", std::string(16, '\0'), "True")}},
                     false));
  std::unique_ptr<MappedNpz> npz;
  EXPECT_TRUE(isOk(MappedNpz::open(path("f1.npz"), CrcCheck::Skip, npz)));

  std::string good = serializeNpy(Tensor(DType::F32, {2}));
  writeFile("dup.npz", buildZip({{"a.npy", good}, {"a.npy", good}}, false));
  EXPECT_EQ(openError("dup.npz"),
            path("dup.npz") + ": member 'a.npy': duplicate member");
  writeFile("txt.npz", buildZip({{"notes.txt", "hello"}}, false));
  EXPECT_EQ(openError("txt.npz"),
            path("txt.npz") + ": member 'notes.txt': not a .npy file");
  writeFile("text.npz", "just some text, not an archive");
  EXPECT_EQ(openError("text.npz"),
            path("text.npz") +
                ": not a .npy or .npz file (no NumPy or zip signature)");
  writeFile("empty.npz", "");
  openError("empty.npz");
  Outcome o = outcome(MappedNpz::open(path("none.npz"), CrcCheck::Skip, npz));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_EQ(o.message,
            path("none.npz") + ": cannot open: No such file or directory");
  o = outcome(MappedNpz::open(dir, CrcCheck::Skip, npz));
  EXPECT_EQ(o.code, DLC_IO_ERROR);
  EXPECT_EQ(o.message, dir + ": is a directory");
}

TEST_F(MappedNpzFiles, CrcCheckFindsAFlippedDataByte) {
  ASSERT_TRUE(isOk(writeNpz(path("a.npz"), sample())));
  std::string bytes = readFile("a.npz");
  // Flip a bit of the second element of "weights", the first member.
  size_t member = bytes.find("\x93NUMPY", bytes.find("weights.npy"));
  ASSERT_NE(member, std::string::npos);
  bytes[member + serializeNpyHeader(DType::F32, {3, 5}).size() + 4] ^= 0x40;
  writeFile("a.npz", bytes);
  std::unique_ptr<MappedNpz> npz;
  EXPECT_TRUE(isOk(MappedNpz::open(path("a.npz"), CrcCheck::Skip, npz)));
  EXPECT_EQ(openError("a.npz", CrcCheck::Verify),
            path("a.npz") + ": member 'weights.npy': CRC-32 mismatch (the "
                            "member's bytes are corrupt)");
  // readNpz reads through MappedNpz, checking every CRC-32.
  NamedTensors arrays;
  Outcome o = outcome(readNpz(path("a.npz"), arrays));
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_EQ(o.message, path("a.npz") + ": member 'weights.npy': CRC-32 "
                                       "mismatch (the member's bytes are "
                                       "corrupt)");
}

TEST_F(MappedNpzFiles, EveryTruncationIsAnError) {
  ASSERT_TRUE(isOk(writeNpz(path("a.npz"), sample())));
  std::string bytes = readFile("a.npz");
  ASSERT_TRUE(isOk(writeNpy(path("a.npy"), sample()[0].second)));
  std::string npy = readFile("a.npy");
  for (size_t size = 0; size < bytes.size(); ++size) {
    writeFile("cut.npz", bytes.substr(0, size));
    openError("cut.npz", size % 2 ? CrcCheck::Verify : CrcCheck::Skip);
  }
  for (size_t size = 0; size < npy.size(); ++size) {
    writeFile("cut.npy", npy.substr(0, size));
    openError("cut.npy");
  }
}

TEST_F(MappedNpzFiles, RandomByteFlipsAreErrorsOrHarmless) {
  NamedTensors arrays = sample();
  ASSERT_TRUE(isOk(writeNpz(path("a.npz"), arrays)));
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto &[name, t] : arrays)
    members.emplace_back(name + ".npy", serializeNpy(t));
  writeZip("d.npz", members, ZIP_CM_DEFLATE);
  writeFile("z.npz", buildZip(members, true));
  std::mt19937 rng(1234);
  for (const std::string name : {"a.npz", "d.npz", "z.npz"}) {
    std::string original = readFile(name);
    for (size_t at = 0; at < original.size(); ++at) {
      std::string bytes = original;
      bytes[at] ^= char(1 + rng() % 255);
      writeFile("flip.npz", bytes);
      // Unchecked, a flipped element is just another value; checked, the
      // file reads exactly as before or not at all.
      for (CrcCheck crc : {CrcCheck::Skip, CrcCheck::Verify}) {
        std::unique_ptr<MappedNpz> npz;
        Outcome o = outcome(MappedNpz::open(path("flip.npz"), crc, npz));
        if (!o.ok())
          ASSERT_EQ(o.message.rfind(path("flip.npz"), 0), 0u) << o.message;
        else if (crc == CrcCheck::Verify)
          ASSERT_EQ(toTensors(*npz), arrays) << name << " byte " << at;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// NumPy interoperability
//===----------------------------------------------------------------------===//

TEST_F(MappedNpzFiles, ReadsWhatNumpyWrites) {
  if (!dlc::testing::pythonHas("numpy"))
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  writeFile("write.py", R"(
import sys
import numpy as np
d = sys.argv[1]
a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
b = np.array([[True, False], [False, True]])
c = np.arange(5, dtype='>i8')
np.savez(d + '/stored.npz', a=a, b=b, c=c)
np.savez_compressed(d + '/deflated.npz', a=a, b=b, c=c)
)");
  std::string command = "/usr/bin/python3 " + path("write.py") + " " + dir;
  ASSERT_EQ(std::system(command.c_str()), 0);
  for (const char *name : {"stored.npz", "deflated.npz"}) {
    std::unique_ptr<MappedNpz> npz;
    ASSERT_TRUE(isOk(MappedNpz::open(path(name), CrcCheck::Verify, npz)));
    NamedTensors expected;
    ASSERT_TRUE(isOk(readNpz(path(name), expected)));
    EXPECT_EQ(toTensors(*npz), expected) << name;
    bool stored = std::string(name) == "stored.npz";
    EXPECT_EQ(npz->find("a")->mapped, stored) << name;
    EXPECT_EQ(npz->find("b")->mapped, stored) << name;
    EXPECT_FALSE(npz->find("c")->mapped) << name; // byte-swapped
  }
}
