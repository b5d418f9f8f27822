//===- NpzTest.cpp - Tests of the .npy and .npz reader and writer ---------===//
//
// Round trips of every dtype and shape kind, the layouts only other writers
// produce (Fortran order, big-endian, format 2.0/3.0, deflated members),
// every malformed-input error with its reason, a mutation fuzz of the header
// parser, and interoperability with NumPy itself through /usr/bin/python3.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Npz.h"
#include "runtime/support/test/Outcome.h"
#include "runtime/support/test/TempDir.h"
#include "runtime/support/test/TestTensors.h"

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace dlc;
namespace fs = std::filesystem;

namespace {

using namespace dlc::testing;

/// Tensor with elements 0, 1, 2... in row-major order.
Tensor iota(DType type, std::vector<int64_t> shape) {
  Tensor t(type, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i) {
    switch (type) {
    case DType::I32:
      t.data<int32_t>()[i] = int32_t(i);
      break;
    case DType::I64:
      t.data<int64_t>()[i] = i;
      break;
    case DType::F32:
      t.data<float>()[i] = float(i);
      break;
    case DType::F64:
      t.data<double>()[i] = double(i);
      break;
    default:
      ADD_FAILURE() << "iota of " << dtypeName(type);
    }
  }
  return t;
}

/// A .npy file with the given header text and data, no padding.
std::string npyBytes(const std::string &header, const std::string &data,
                     int major = 1) {
  std::string out = std::string("\x93NUMPY", 6);
  out += char(major);
  out += '\0';
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string header(const std::string &descr, const std::string &shape,
                   const std::string &fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
         ", 'shape': " + shape + ", }\n";
}

std::string rawBytes(const Tensor &t) {
  return std::string(reinterpret_cast<const char *>(t.bytes()), t.byteSize());
}

/// Parses `bytes`, expecting failure with `code` and `reason` in the
/// message: a damaged file is DLC_DATA_LOSS, a valid one dlc does not hold
/// DLC_UNIMPLEMENTED.
void expectParseError(const std::string &bytes, const std::string &reason,
                      dlc_status_code_t code = DLC_DATA_LOSS) {
  Tensor t;
  Outcome o = outcome(parseNpy(bytes.data(), bytes.size(), "in.npy", t));
  EXPECT_EQ(o.code, code) << "expected: " << reason << "; got " << o.message;
  EXPECT_EQ(o.message.rfind("in.npy: ", 0), 0u) << o.message;
  EXPECT_NE(o.message.find(reason), std::string::npos)
      << "error '" << o.message << "' lacks '" << reason << "'";
  EXPECT_EQ(o.message.find('\n'), std::string::npos) << o.message;
}

} // namespace

namespace dlc {
/// Failure messages show "float32[2,3]" rather than raw bytes.
void PrintTo(const Tensor &t, std::ostream *os) { *os << t.describe(); }
} // namespace dlc

namespace {

class NpzFiles : public dlc::testing::TempDirTest {};

} // namespace

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

TEST_F(NpzFiles, NpyRoundTripsEveryDtypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4}};
  uint32_t seed = 0;
  for (DType type : kNumpyTypes) {
    for (const auto &shape : shapes) {
      Tensor t = randomTensor(type, shape, seed++);
      SCOPED_TRACE(t.describe());
      std::string bytes = serializeNpy(t);
      // NumPy's layout: the data starts on a 64-byte boundary.
      ASSERT_EQ((bytes.size() - t.byteSize()) % 64, 0u);
      Tensor parsed;
      ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "t", parsed)));
      EXPECT_EQ(parsed, t);

      ASSERT_TRUE(isOk(writeNpy(path("t.npy"), t)));
      Tensor read;
      ASSERT_TRUE(isOk(readNpy(path("t.npy"), read)));
      EXPECT_EQ(read, t);
    }
  }
  EXPECT_FALSE(fs::exists(path("t.npy.tmp")));
}

TEST_F(NpzFiles, NpyHeaderIsNumpys) {
  std::string bytes = serializeNpy(Tensor(DType::F32, {2, 3}));
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes[127], '\n');
  std::string vector = serializeNpy(Tensor(DType::Bool, {7}));
  EXPECT_NE(vector.find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(vector.find("'shape': (7,)"), std::string::npos);
  EXPECT_NE(serializeNpy(Tensor(DType::I64, {})).find("'shape': ()"),
            std::string::npos);
}

TEST_F(NpzFiles, LongHeaderUsesFormat2) {
  // 30000 dimensions of 1 take more header than format 1.0's 16-bit length.
  Tensor t = randomTensor(DType::I16, std::vector<int64_t>(30000, 1), 1);
  std::string bytes = serializeNpy(t);
  EXPECT_EQ(bytes[6], 2);
  Tensor parsed;
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "t", parsed)));
  EXPECT_EQ(parsed, t);
}

TEST_F(NpzFiles, NpzRoundTripKeepsNamesAndOrder) {
  NamedTensors arrays;
  uint32_t seed = 100;
  for (DType type : kNumpyTypes)
    arrays.emplace_back(std::string("z_") + dtypeName(type),
                        randomTensor(type, {3, 2}, seed++));
  arrays.emplace_back("scalar", randomTensor(DType::F32, {}, seed++));
  arrays.emplace_back("empty", Tensor(DType::I64, {2, 0, 3}));
  arrays.emplace_back("dir/nested.name", randomTensor(DType::U8, {4}, 7));
  ASSERT_TRUE(isOk(writeNpz(path("a.npz"), arrays)));
  NamedTensors read;
  ASSERT_TRUE(isOk(readNpz(path("a.npz"), read)));
  EXPECT_EQ(read, arrays);
  EXPECT_FALSE(fs::exists(path("a.npz.tmp")));

  // Overwriting replaces the content.
  NamedTensors other = {{"only", randomTensor(DType::F64, {2}, 9)}};
  ASSERT_TRUE(isOk(writeNpz(path("a.npz"), other)));
  ASSERT_TRUE(isOk(readNpz(path("a.npz"), read)));
  EXPECT_EQ(read, other);
}

TEST_F(NpzFiles, EmptyNpz) {
  ASSERT_TRUE(isOk(writeNpz(path("e.npz"), {})));
  NamedTensors read = {{"stale", Tensor()}};
  ASSERT_TRUE(isOk(readNpz(path("e.npz"), read)));
  EXPECT_TRUE(read.empty());
}

TEST_F(NpzFiles, ReadsDeflatedMembers) {
  Tensor a = iota(DType::F32, {100, 10});
  Tensor b = randomTensor(DType::I8, {7}, 3);
  writeZip("d.npz", {{"a.npy", serializeNpy(a)}, {"b.npy", serializeNpy(b)}},
           ZIP_CM_DEFLATE);
  NamedTensors read;
  ASSERT_TRUE(isOk(readNpz(path("d.npz"), read)));
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].first, "a");
  EXPECT_EQ(read[0].second, a);
  EXPECT_EQ(read[1].first, "b");
  EXPECT_EQ(read[1].second, b);
}

//===----------------------------------------------------------------------===//
// Foreign layouts
//===----------------------------------------------------------------------===//

TEST_F(NpzFiles, ReadsFortranOrder) {
  // Column-major 2x3: memory holds a[0,0] a[1,0] a[0,1] a[1,1] a[0,2] a[1,2].
  int32_t columnMajor[] = {0, 3, 1, 4, 2, 5};
  std::string bytes = npyBytes(
      header("<i4", "(2, 3)", "True"),
      std::string(reinterpret_cast<char *>(columnMajor), sizeof(columnMajor)));
  Tensor t;
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "f", t)));
  EXPECT_EQ(t, iota(DType::I32, {2, 3}));

  // Rank 3: element (i, j, k) sits at i + 2 * (j + 3 * k) in memory.
  std::vector<double> memory(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        memory[i + 2 * (j + 3 * k)] = i * 12 + j * 4 + k;
  bytes = npyBytes(header("<f8", "(2, 3, 4)", "True"),
                   std::string(reinterpret_cast<char *>(memory.data()),
                               memory.size() * sizeof(double)));
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "f", t)));
  EXPECT_EQ(t, iota(DType::F64, {2, 3, 4}));

  // Rank 0 and 1 and empty arrays are the same in either order.
  bytes = npyBytes(header("<i8", "(0, 3)", "True"), "");
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "f", t)));
  EXPECT_EQ(t, Tensor(DType::I64, {0, 3}));
}

TEST_F(NpzFiles, ReadsBigEndian) {
  std::string bytes =
      npyBytes(header(">i4", "(2,)"), std::string("\x00\x00\x01\x02"
                                                  "\xff\xff\xff\xfe",
                                                  8));
  Tensor t;
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "b", t)));
  ASSERT_EQ(t.dtype(), DType::I32);
  EXPECT_EQ(t.getInt(0), 0x0102);
  EXPECT_EQ(t.getInt(1), -2);

  bytes = npyBytes(header(">f8", "()"),
                   std::string("\x3f\xf8\x00\x00\x00\x00\x00\x00", 8));
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "b", t)));
  EXPECT_EQ(t.describe(), "float64[]");
  EXPECT_EQ(t.getDouble(0), 1.5);

  bytes = npyBytes(header(">f2", "(1,)"), std::string("\x3c\x00", 2));
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "b", t)));
  EXPECT_EQ(t.getDouble(0), 1.0);

  // Byte order does not apply to single bytes; '>' is accepted there too.
  bytes = npyBytes(header(">u1", "(1,)"), std::string("\x07", 1));
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "b", t)));
  EXPECT_EQ(t.getInt(0), 7);

  // Both at once: big-endian and Fortran order.
  bytes = npyBytes(header(">u2", "(2, 2)", "True"),
                   std::string("\x00\x00\x00\x02\x00\x01\x00\x03", 8));
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "b", t)));
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(t.getInt(i), i);
}

TEST_F(NpzFiles, ReadsFormats2And3AndHeaderVariants) {
  Tensor expected = iota(DType::F32, {3});
  for (int major : {2, 3}) {
    std::string bytes =
        npyBytes(header("<f4", "(3,)"), rawBytes(expected), major);
    Tensor t;
    ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "v", t)));
    EXPECT_EQ(t, expected);
  }
  // Python 2 era headers: double quotes, long suffixes, no trailing comma,
  // keys in any order, a native-order descr.
  for (const char *text :
       {"{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"<f4\"}",
        "{'descr':'=f4','fortran_order':False,'shape':(3,)}   \n",
        "  { 'descr' : 'f4' , 'fortran_order' : False , 'shape' : ( 3 , ) }"}) {
    std::string bytes = npyBytes(text, rawBytes(expected));
    Tensor t;
    ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "v", t))) << text;
    EXPECT_EQ(t, expected);
  }
}

TEST_F(NpzFiles, NormalizesBoolBytes) {
  std::string bytes =
      npyBytes(header("|b1", "(3,)"), std::string("\x00\x02\xff", 3));
  Tensor t;
  ASSERT_TRUE(isOk(parseNpy(bytes.data(), bytes.size(), "b", t)));
  EXPECT_EQ(rawBytes(t), std::string("\x00\x01\x01", 3));
}

//===----------------------------------------------------------------------===//
// Malformed input
//===----------------------------------------------------------------------===//

TEST_F(NpzFiles, RejectsMalformedHeaders) {
  std::string data8(8, '\0');
  expectParseError("", "bad magic");
  expectParseError("\x93NUMPZ\x01\x00", "bad magic");
  expectParseError(std::string("\x93NUMPY", 6), "truncated header");
  expectParseError(std::string("\x93NUMPY\x01\x00\x05", 9), "truncated header");
  expectParseError(npyBytes(header("<f4", "(2,)"), data8, 4),
                   "unsupported .npy format version 4.0", DLC_UNIMPLEMENTED);
  std::string badMinor = npyBytes(header("<f4", "(2,)"), data8);
  badMinor[7] = 1;
  expectParseError(badMinor, "unsupported .npy format version 1.1",
                   DLC_UNIMPLEMENTED);
  std::string longClaim = npyBytes(header("<f4", "(2,)"), data8);
  longClaim[8] = '\xff';
  longClaim[9] = '\xff';
  expectParseError(longClaim, "truncated header");

  expectParseError(npyBytes(header("<c8", "(1,)"), data8),
                   "unsupported dtype '<c8'", DLC_UNIMPLEMENTED);
  expectParseError(npyBytes(header("<V2", "(4,)"), data8),
                   "unsupported dtype '<V2'", DLC_UNIMPLEMENTED);
  expectParseError(npyBytes(header("<U2", "(1,)"), data8),
                   "unsupported dtype '<U2'", DLC_UNIMPLEMENTED);
  expectParseError(npyBytes(header("<M8[ns]", "(1,)"), data8),
                   "unsupported dtype '<M8[ns]'", DLC_UNIMPLEMENTED);
  expectParseError(npyBytes(header("|O", "(1,)"), data8),
                   "object arrays are not supported", DLC_UNIMPLEMENTED);
  expectParseError(
      npyBytes("{'descr': [('a', '<i4'), ('b', '<f4')], 'fortran_order': "
               "False, 'shape': (1,), }",
               data8),
      "structured dtypes are not supported", DLC_UNIMPLEMENTED);
  expectParseError(npyBytes(header("<f4", "(-2,)"), data8),
                   "negative dimension -2");
  expectParseError(npyBytes(header("<f4", "(4294967296, 4294967296)"), data8),
                   "element count of the shape overflows int64");
  expectParseError(npyBytes(header("<f4", "(0, 4294967296, 4294967296)"), ""),
                   "overflows int64");
  expectParseError(npyBytes(header("<f4", "(99999999999999999999,)"), data8),
                   "dimension too large");
  expectParseError(npyBytes(header("<f4", "(2)"), data8),
                   "'shape' is not a tuple");
  expectParseError(npyBytes(header("<f4", "[2]"), data8),
                   "'shape' is not a tuple");
  expectParseError(npyBytes(header("<f4", "(2,)", "0"), data8),
                   "'fortran_order' is not True or False");
  expectParseError(npyBytes("{'descr': 3, 'fortran_order': False, "
                            "'shape': (2,)}",
                            data8),
                   "'descr' is not a string");
  expectParseError(npyBytes("{'descr': '<f4', 'shape': (2,)}", data8),
                   "missing key 'fortran_order'");
  expectParseError(npyBytes("{'descr': '<f4', 'fortran_order': False}", data8),
                   "missing key 'shape'");
  expectParseError(npyBytes("{'fortran_order': False, 'shape': (2,)}", data8),
                   "missing key 'descr'");
  expectParseError(npyBytes("{'descr': '<f4', 'descr': '<f4', "
                            "'fortran_order': False, 'shape': (2,)}",
                            data8),
                   "duplicate key 'descr'");
  expectParseError(npyBytes("{'descr': '<f4', 'fortran_order': False, "
                            "'shape': (2,), 'extra': 1}",
                            data8),
                   "unexpected key 'extra'");
  expectParseError(npyBytes("not a dict", data8), "expected '{'");
  expectParseError(npyBytes("{'descr': '<f4", data8), "malformed header");
  expectParseError(npyBytes(header("<f4", "(2,)") + "x", data8),
                   "unexpected text after '}'");
  expectParseError(npyBytes("{'descr': '<f4' 'fortran_order': False}", data8),
                   "expected ',' or '}'");
  // Untrusted text in messages is made printable and kept on one line.
  expectParseError(npyBytes(header("<\x01\x7f", "(1,)"), data8),
                   "unsupported dtype '<?\?'", DLC_UNIMPLEMENTED);
}

TEST_F(NpzFiles, RejectsWrongDataLength) {
  expectParseError(npyBytes(header("<f4", "(3,)"), std::string(8, '\0')),
                   "truncated data");
  expectParseError(npyBytes(header("<f4", "(1,)"), std::string(8, '\0')),
                   "4 unexpected bytes after the data");
  // A shape that claims far more than the file holds must not allocate it.
  expectParseError(npyBytes(header("<f8", "(1000000000, 1000000000)"), ""),
                   "truncated data");
}

TEST_F(NpzFiles, EveryTruncationIsAnError) {
  std::string bytes = serializeNpy(iota(DType::F64, {4, 3}));
  for (size_t size = 0; size < bytes.size(); ++size) {
    Tensor t;
    Outcome o = outcome(parseNpy(bytes.data(), size, "cut", t));
    EXPECT_EQ(o.code, DLC_DATA_LOSS) << size << ": " << o.message;
    EXPECT_FALSE(o.message.empty());
  }
  writeFile("cut.npy", bytes.substr(0, bytes.size() - 1));
  Tensor t;
  Outcome o = outcome(readNpy(path("cut.npy"), t));
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_NE(o.message.find("truncated data"), std::string::npos) << o.message;
  EXPECT_EQ(o.message.rfind(path("cut.npy") + ": ", 0), 0u) << o.message;
}

TEST_F(NpzFiles, RandomBytesAndMutationsNeverCrash) {
  // Header syntax characters reach deeper into the parser than random ones.
  const std::string kSyntax = "(),: '\"-0123456789LTF{}[]";
  std::mt19937 rng(42);
  std::string valid = serializeNpy(iota(DType::I32, {3, 4}));
  for (int round = 0; round < 20000; ++round) {
    std::string bytes;
    if (round % 4 == 0) {
      bytes.resize(rng() % 200);
      for (char &c : bytes)
        c = char(rng());
      if (round % 8 == 0 && bytes.size() >= 6)
        bytes.replace(0, 6, "\x93NUMPY");
    } else {
      // Mutate a few bytes of a valid file, mostly in its header, and
      // sometimes cut it.
      bytes = valid;
      for (int k = 1 + rng() % 4; k > 0; --k) {
        size_t at = rng() % (rng() % 2 ? 128 : bytes.size());
        bytes[at] = char(rng() % 2 ? rng() : kSyntax[rng() % kSyntax.size()]);
      }
      if (rng() % 4 == 0)
        bytes.resize(rng() % bytes.size());
    }
    Tensor t;
    Outcome o = outcome(parseNpy(bytes.data(), bytes.size(), "fuzz", t));
    if (!o.ok())
      ASSERT_FALSE(o.message.empty());
    else
      ASSERT_EQ(t.byteSize(), size_t(t.numElements()) * dtypeSize(t.dtype()));
  }
}

TEST_F(NpzFiles, MissingFiles) {
  Tensor t;
  NamedTensors arrays;
  Outcome o = outcome(readNpy(path("none.npy"), t));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_EQ(o.message,
            path("none.npy") + ": cannot open: No such file or directory");
  o = outcome(readNpz(path("none.npz"), arrays));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_EQ(o.message.rfind(path("none.npz") + ": cannot open: ", 0), 0u)
      << o.message;
  EXPECT_NE(o.message.find("No such file"), std::string::npos) << o.message;
  o = outcome(readNpy(dir, t));
  EXPECT_EQ(o.code, DLC_IO_ERROR);
  EXPECT_NE(o.message.find("Is a directory"), std::string::npos) << o.message;
}

TEST_F(NpzFiles, RejectsBadArchives) {
  NamedTensors arrays;
  writeFile("random.npz", "this is not a zip archive at all, only text");
  Outcome o = outcome(readNpz(path("random.npz"), arrays));
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_EQ(o.message,
            path("random.npz") +
                ": not a .npy or .npz file (no NumPy or zip signature)");

  std::string complexMember =
      npyBytes(header("<c8", "(1,)"), std::string(8, '\0'));
  writeZip("c.npz",
           {{"ok.npy", serializeNpy(Tensor(DType::F32, {1}))},
            {"a.npy", complexMember}},
           ZIP_CM_STORE);
  o = outcome(readNpz(path("c.npz"), arrays));
  EXPECT_EQ(o.code, DLC_UNIMPLEMENTED);
  EXPECT_EQ(o.message,
            path("c.npz") + ": member 'a.npy': unsupported dtype '<c8'");

  writeZip("n.npz", {{"notes.txt", "hello"}}, ZIP_CM_DEFLATE);
  o = outcome(readNpz(path("n.npz"), arrays));
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_EQ(o.message, path("n.npz") + ": member 'notes.txt': not a .npy file");

  writeZip("bad.npz", {{"x.npy", "\x93NUMPY garbage"}}, ZIP_CM_DEFLATE);
  o = outcome(readNpz(path("bad.npz"), arrays));
  EXPECT_NE(o.message.find("member 'x.npy': "), std::string::npos) << o.message;

  // A corrupted stored member fails its CRC check.
  Tensor big = iota(DType::F32, {256});
  std::string member = serializeNpy(big);
  writeZip("crc.npz", {{"big.npy", member}}, ZIP_CM_STORE);
  std::string archive = readFile("crc.npz");
  size_t at = archive.find(member.substr(200, 32));
  ASSERT_NE(at, std::string::npos);
  archive[at] ^= 1;
  writeFile("crc.npz", archive);
  o = outcome(readNpz(path("crc.npz"), arrays));
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_NE(o.message.find("member 'big.npy': CRC-32 mismatch"),
            std::string::npos)
      << o.message;
  EXPECT_TRUE(arrays.empty()) << "failed reads leave the output untouched";
}

TEST_F(NpzFiles, EveryArchiveTruncationIsAnError) {
  NamedTensors arrays = {{"a", iota(DType::I64, {10})},
                         {"b", iota(DType::F32, {3, 3})}};
  ASSERT_TRUE(isOk(writeNpz(path("full.npz"), arrays)));
  std::string archive = readFile("full.npz");
  for (size_t size = 0; size < archive.size(); size += 7) {
    writeFile("cut.npz", archive.substr(0, size));
    NamedTensors read;
    Outcome o = outcome(readNpz(path("cut.npz"), read));
    EXPECT_EQ(o.code, DLC_DATA_LOSS) << size << ": " << o.message;
    EXPECT_FALSE(o.message.empty());
  }
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

TEST_F(NpzFiles, RefusesBFloat16) {
  Tensor bf16(DType::BF16, {2});
  EXPECT_TRUE(serializeNpy(bf16).empty());
  Outcome o = outcome(writeNpy(path("b.npy"), bf16));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message,
            path("b.npy") + ": bfloat16 has no NumPy dtype; cast to float32");
  EXPECT_FALSE(fs::exists(path("b.npy")));
  o = outcome(writeNpz(path("b.npz"), {{"w", bf16}}));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, path("b.npz") +
                           ": array 'w': bfloat16 has no NumPy dtype; cast to "
                           "float32");
}

TEST_F(NpzFiles, FailedWritesKeepTheOldFile) {
  NamedTensors original = {{"x", iota(DType::F32, {4})}};
  ASSERT_TRUE(isOk(writeNpz(path("keep.npz"), original)));
  std::string before = readFile("keep.npz");

  EXPECT_FALSE(
      isOk(writeNpz(path("keep.npz"), {{"x", iota(DType::F32, {4})},
                                       {"y", Tensor(DType::BF16, {1})}})));
  Outcome o =
      outcome(writeNpz(path("keep.npz"), {{"x", Tensor()}, {"x", Tensor()}}));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_NE(o.message.find("array 'x': duplicate name"), std::string::npos)
      << o.message;
  EXPECT_EQ(readFile("keep.npz"), before);
  EXPECT_FALSE(fs::exists(path("keep.npz.tmp")));

  // The temporary cannot be created: the target stays as it was.
  ASSERT_TRUE(fs::create_directory(path("blocked.npz.tmp")));
  writeFile("blocked.npz", before);
  o = outcome(writeNpz(path("blocked.npz"), original));
  EXPECT_FALSE(o.ok());
  EXPECT_FALSE(o.message.empty());
  EXPECT_EQ(readFile("blocked.npz"), before);
  ASSERT_TRUE(fs::create_directory(path("blocked.npy.tmp")));
  o = outcome(writeNpy(path("blocked.npy"), iota(DType::F32, {1})));
  EXPECT_EQ(o.code, DLC_IO_ERROR);
  EXPECT_NE(o.message.find("cannot create"), std::string::npos) << o.message;

  o = outcome(writeNpz(path("no/such/dir/x.npz"), original));
  EXPECT_FALSE(o.ok());
  EXPECT_NE(o.message.find("no/such/dir/x.npz"), std::string::npos)
      << o.message;
  o = outcome(writeNpy(path("no/such/dir/x.npy"), original[0].second));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_NE(o.message.find("No such file or directory"), std::string::npos)
      << o.message;
}

//===----------------------------------------------------------------------===//
// NumPy interoperability
//===----------------------------------------------------------------------===//

TEST_F(NpzFiles, NumpyReadsOursAndWeReadNumpys) {
  if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";

  NamedTensors ours;
  uint32_t seed = 1000;
  for (DType type : kNumpyTypes)
    ours.emplace_back(dtypeName(type), randomTensor(type, {2, 3}, seed++));
  ours.emplace_back("scalar", randomTensor(DType::F32, {}, seed++));
  ours.emplace_back("empty", Tensor(DType::I64, {2, 0, 3}));
  ASSERT_TRUE(isOk(writeNpz(path("ours.npz"), ours)));
  ASSERT_TRUE(isOk(writeNpy(path("ours.npy"), iota(DType::F64, {2, 3}))));

  // NumPy checks what it reads, re-saves our arrays deflated, and writes
  // the layouts we only read: Fortran order and big-endian.
  writeFile("interop.py", R"(
import sys
import numpy as np
d = sys.argv[1]
ours = np.load(d + '/ours.npz')
names = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
         'uint32', 'uint64', 'float16', 'float32', 'float64']
assert ours.files == names + ['scalar', 'empty'], ours.files
for name in names:
    assert ours[name].dtype == np.dtype(name), name
    assert ours[name].shape == (2, 3), name
assert ours['scalar'].shape == () and ours['scalar'].dtype == np.float32
assert ours['empty'].shape == (2, 0, 3) and ours['empty'].dtype == np.int64
single = np.load(d + '/ours.npy')
assert (single == np.arange(6.0).reshape(2, 3)).all(), single
np.savez_compressed(d + '/theirs.npz', **{k: ours[k] for k in ours.files})
a = np.arange(24).reshape(2, 3, 4)
np.save(d + '/fortran.npy', np.asfortranarray(a.astype('<f4')))
np.save(d + '/big.npy', a.astype('>i8'))
np.save(d + '/big_fortran.npy', np.asfortranarray(a.astype('>f8')))
np.save(d + '/numpy_iota.npy', np.arange(6.0).reshape(2, 3))
)");
  std::string command = "/usr/bin/python3 " + path("interop.py") + " " + dir;
  ASSERT_EQ(std::system(command.c_str()), 0) << "NumPy rejected our files";

  NamedTensors theirs;
  ASSERT_TRUE(isOk(readNpz(path("theirs.npz"), theirs)));
  EXPECT_EQ(theirs, ours);

  Tensor t;
  ASSERT_TRUE(isOk(readNpy(path("fortran.npy"), t)));
  EXPECT_EQ(t, iota(DType::F32, {2, 3, 4}));
  ASSERT_TRUE(isOk(readNpy(path("big.npy"), t)));
  EXPECT_EQ(t, iota(DType::I64, {2, 3, 4}));
  ASSERT_TRUE(isOk(readNpy(path("big_fortran.npy"), t)));
  EXPECT_EQ(t, iota(DType::F64, {2, 3, 4}));
  // For the same array our .npy is byte-identical to NumPy's.
  EXPECT_EQ(readFile("numpy_iota.npy"), serializeNpy(iota(DType::F64, {2, 3})));
}
