//===- Checkpoint.cpp - Checkpoint files written so none is ever lost -----===//
//
// The archive is written here rather than with libzip because the protocol
// needs the descriptor (fsync before rename), and libzip writes through a
// temporary file of its own; it also streams each tensor straight from its
// memory instead of copying the checkpoint. Every entry carries zip64 sizes
// and the archive a zip64 end record, as a file over 4 GiB needs, so that
// one layout serves every size and the small files of the tests exercise
// it. Timestamps are fixed, so equal contents give identical files.
//
// Reading maps the file (MappedNpz, which checks every member's CRC-32),
// verifies the checksum member and copies the tensors out.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Checkpoint.h"

#include "runtime/support/MappedNpz.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace dlc {

namespace {

const std::string kReserved = "__dlc__/";
const std::string kFingerprint = "__dlc__/fingerprint";
const std::string kStep = "__dlc__/step";
const std::string kRanks = "__dlc__/ranks";
const std::string kRank = "__dlc__/rank";
const std::string kSet = "__dlc__/set";
const std::string kMetaPrefix = "__dlc__/meta/";
const std::string kBFloat16Prefix = "__dlc__/bfloat16/";
const std::string kChecksum = "__dlc__/checksum";
const std::string kMarker = "LATEST";
const std::string kFilePrefix = "step-";
const std::string kShardInfix = ".shard-";
const std::string kFileSuffix = ".dlcc";

/// A checkpoint file's name: step-<step, 8+ digits>.dlcc for a whole
/// checkpoint; for a sharded set's head step-<step>-<set, 8 hex
/// digits>.dlcc, and for rank r's shards
/// step-<step>-<set>.shard-<r, 4+ digits>.dlcc.
struct FileName {
  int64_t step = -1; // -1: not a checkpoint's name
  bool sharded = false;
  uint32_t set = 0;
  int32_t rank = -1; // -1: a head or a whole checkpoint

  std::string str() const {
    char text[96];
    int n = std::snprintf(text, sizeof(text), "%s%08lld", kFilePrefix.c_str(),
                          static_cast<long long>(step));
    if (sharded)
      n += std::snprintf(text + n, sizeof(text) - n, "-%08x", set);
    if (rank >= 0)
      n += std::snprintf(text + n, sizeof(text) - n, "%s%04d",
                         kShardInfix.c_str(), rank);
    return text + kFileSuffix;
  }
  /// The name of the set's head (of itself for a whole checkpoint).
  FileName head() const { return {step, sharded, set, -1}; }
  /// Sets ordered by step: whole checkpoints and sets, part by part alike.
  bool operator<(const FileName &o) const {
    return std::tie(step, sharded, set) < std::tie(o.step, o.sharded, o.set);
  }
  bool sameSet(const FileName &o) const { return !(*this < o) && !(o < *this); }
};

FileName nameOf(const CheckpointContents &c) {
  return {c.step, c.ranks > 0, c.set, c.rank};
}

/// The value of `text`'s decimal digits, at least `width` of them; -1 for
/// fewer, another character, or a value past `limit`.
int64_t digitsValue(const std::string &text, size_t width, int64_t limit) {
  if (text.size() < width)
    return -1;
  int64_t value = 0;
  for (char c : text)
    if (c < '0' || c > '9' || __builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, c - '0', &value) || value > limit)
      return -1;
  return value;
}

/// Parses what FileName::str() writes; step -1 for any other name.
FileName parseName(const std::string &name) {
  FileName parsed, none;
  if (name.size() < kFilePrefix.size() + kFileSuffix.size() ||
      name.compare(0, kFilePrefix.size(), kFilePrefix) != 0 ||
      name.compare(name.size() - kFileSuffix.size(), kFileSuffix.size(),
                   kFileSuffix) != 0)
    return none;
  std::string stem =
      name.substr(kFilePrefix.size(),
                  name.size() - kFilePrefix.size() - kFileSuffix.size());
  if (size_t infix = stem.find(kShardInfix); infix != std::string::npos) {
    int64_t rank = digitsValue(stem.substr(infix + kShardInfix.size()), 4,
                               std::numeric_limits<int32_t>::max());
    if (rank < 0)
      return none;
    parsed.rank = static_cast<int32_t>(rank);
    stem.resize(infix);
  }
  if (size_t dash = stem.find('-'); dash != std::string::npos) {
    std::string hex = stem.substr(dash + 1);
    if (hex.size() != 8 ||
        hex.find_first_not_of("0123456789abcdef") != std::string::npos)
      return none;
    parsed.sharded = true;
    parsed.set = static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
    stem.resize(dash);
  }
  if (parsed.rank >= 0 && !parsed.sharded)
    return none;
  parsed.step = digitsValue(stem, 8, std::numeric_limits<int64_t>::max());
  return parsed.step < 0 ? none : parsed;
}

/// Whether `name` is a head's or a whole checkpoint's, as LATEST names.
bool isHead(const std::string &name) {
  FileName parsed = parseName(name);
  return parsed.step >= 0 && parsed.rank < 0;
}

void appendLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xff);
}

//===----------------------------------------------------------------------===//
// The checksum over names
//===----------------------------------------------------------------------===//

/// Folds one member into the checksum: its name, CRC-32 and data size.
uint32_t addToChecksum(uint32_t checksum, const std::string &name, uint32_t crc,
                       uint64_t bytes) {
  std::string record = name;
  record += '\0';
  appendLE(record, crc, 4);
  appendLE(record, bytes, 8);
  return crc32(checksum, record.data(), record.size());
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// One archive member: "<name>.npy", a .npy header and the elements.
struct Member {
  std::string name;
  std::string header;
  const void *data;
  uint64_t dataBytes;
  uint32_t crc = 0;
  uint64_t offset = 0;

  uint64_t size() const { return header.size() + dataBytes; }
};

/// Buffers small writes to a descriptor; large ones go straight through.
/// The first failure's errno is kept and later writes do nothing.
class FileWriter {
public:
  explicit FileWriter(int fd) : fd_(fd) {}

  void write(const void *data, uint64_t size) {
    if (size == 0)
      return;
    if (size >= kBufferSize) {
      flush();
      writeAll(data, size);
    } else {
      buffer_.append(static_cast<const char *>(data), size);
      if (buffer_.size() >= kBufferSize)
        flush();
    }
    written_ += size;
  }
  void write(const std::string &bytes) { write(bytes.data(), bytes.size()); }

  void flush() {
    writeAll(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

  uint64_t written() const { return written_; }
  /// The errno of the first failed write, or 0.
  int error() const { return errno_; }

private:
  static constexpr uint64_t kBufferSize = 1 << 20;

  void writeAll(const void *data, uint64_t size) {
    const char *p = static_cast<const char *>(data);
    while (size > 0 && errno_ == 0) {
      ssize_t n = ::write(fd_, p, std::min<uint64_t>(size, 1 << 30));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        errno_ = n < 0 ? errno : EIO;
        return;
      }
      p += n;
      size -= static_cast<uint64_t>(n);
    }
  }

  int fd_;
  std::string buffer_;
  uint64_t written_ = 0;
  int errno_ = 0;
};

constexpr uint16_t kZipVersion = 45; // 4.5: zip64
constexpr uint16_t kUtf8Names = 0x0800;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1; // 1980-01-01
constexpr uint32_t kAllOnes = 0xffffffff;

/// Writes `members` as a stored zip64 archive.
void writeArchive(FileWriter &out, std::vector<Member> &members) {
  for (Member &m : members) {
    m.offset = out.written();
    std::string local;
    appendLE(local, 0x04034b50, 4);
    appendLE(local, kZipVersion, 2);
    appendLE(local, kUtf8Names, 2);
    appendLE(local, 0, 2); // stored
    appendLE(local, 0, 2); // time
    appendLE(local, kDosDate, 2);
    appendLE(local, m.crc, 4);
    appendLE(local, kAllOnes, 4); // sizes: in the zip64 extra field
    appendLE(local, kAllOnes, 4);
    appendLE(local, m.name.size(), 2);
    appendLE(local, 20, 2);
    local += m.name;
    appendLE(local, 0x0001, 2);
    appendLE(local, 16, 2);
    appendLE(local, m.size(), 8);
    appendLE(local, m.size(), 8);
    out.write(local);
    out.write(m.header);
    out.write(m.data, m.dataBytes);
  }
  uint64_t directory = out.written();
  for (const Member &m : members) {
    std::string entry;
    appendLE(entry, 0x02014b50, 4);
    appendLE(entry, kZipVersion, 2);
    appendLE(entry, kZipVersion, 2);
    appendLE(entry, kUtf8Names, 2);
    appendLE(entry, 0, 2);
    appendLE(entry, 0, 2);
    appendLE(entry, kDosDate, 2);
    appendLE(entry, m.crc, 4);
    appendLE(entry, kAllOnes, 4);
    appendLE(entry, kAllOnes, 4);
    appendLE(entry, m.name.size(), 2);
    appendLE(entry, 28, 2);
    appendLE(entry, 0, 2);        // comment
    appendLE(entry, 0, 2);        // disk
    appendLE(entry, 0, 2);        // internal attributes
    appendLE(entry, 0, 4);        // external attributes
    appendLE(entry, kAllOnes, 4); // offset: in the zip64 extra field
    entry += m.name;
    appendLE(entry, 0x0001, 2);
    appendLE(entry, 24, 2);
    appendLE(entry, m.size(), 8);
    appendLE(entry, m.size(), 8);
    appendLE(entry, m.offset, 8);
    out.write(entry);
  }
  uint64_t directorySize = out.written() - directory;
  uint64_t zip64End = out.written();
  std::string end;
  appendLE(end, 0x06064b50, 4);
  appendLE(end, 44, 8); // the record's size after this field
  appendLE(end, kZipVersion, 2);
  appendLE(end, kZipVersion, 2);
  appendLE(end, 0, 4);
  appendLE(end, 0, 4);
  appendLE(end, members.size(), 8);
  appendLE(end, members.size(), 8);
  appendLE(end, directorySize, 8);
  appendLE(end, directory, 8);
  appendLE(end, 0x07064b50, 4); // the zip64 end locator
  appendLE(end, 0, 4);
  appendLE(end, zip64End, 8);
  appendLE(end, 1, 4);
  appendLE(end, 0x06054b50, 4); // the classic end record, all in zip64
  appendLE(end, 0, 2);
  appendLE(end, 0, 2);
  appendLE(end, 0xffff, 2);
  appendLE(end, 0xffff, 2);
  appendLE(end, kAllOnes, 4);
  appendLE(end, kAllOnes, 4);
  appendLE(end, 0, 2);
  out.write(end);
}

/// Flushes a directory, so a rename in it is on disk.
int syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  int result = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return result;
}

/// Writes `dir/.name.tmp` with `write`, flushes it, renames it to `dir/name`
/// and flushes `dir`. On failure removes the temporary file.
template <typename WriteFn>
dlc_status_t replaceFile(const std::string &dir, const std::string &name,
                         WriteFn write) {
  std::string path = dir + "/" + name;
  std::string tmp = dir + "/." + name + ".tmp";
  auto failWith = [&](const std::string &what, int errnoValue) {
    ::unlink(tmp.c_str());
    return makeStatus(errnoStatusCode(errnoValue),
                      path + ": cannot " + what + ": " +
                          std::strerror(errnoValue));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return failWith("create '" + tmp + "'", errno);
  FileWriter out(fd);
  write(out);
  out.flush();
  int errnoValue = out.error();
  if (errnoValue == 0 && ::fsync(fd) != 0)
    errnoValue = errno;
  if (::close(fd) != 0 && errnoValue == 0)
    errnoValue = errno;
  if (errnoValue != 0)
    return failWith("write '" + tmp + "'", errnoValue);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return failWith("rename '" + tmp + "' to it", errno);
  if ((errnoValue = syncDirectory(dir)) != 0)
    return makeStatus(errnoStatusCode(errnoValue),
                      dir + ": cannot flush the directory after writing " +
                          name + ": " + std::strerror(errnoValue));
  return nullptr;
}

/// Whether `name` is replaceFile's temporary file for a checkpoint or LATEST.
bool isTemporary(const std::string &name) {
  const std::string suffix = ".tmp";
  if (name.size() < 1 + suffix.size() || name[0] != '.' ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  std::string target = name.substr(1, name.size() - 1 - suffix.size());
  return target == kMarker || parseName(target).step >= 0;
}

/// Removes checkpoints beyond the newest `keep` (0: none), never
/// `current`: a sharded checkpoint's files go together, as their set's.
/// Parts of a set without its head go whatever `keep` says: their set was
/// never committed (a rank failed while writing it) and cannot be restored;
/// so do another set of `current`'s step (the one it superseded) and the
/// temporary files of writers killed mid-write (every writer of the
/// directory has finished when a set is committed).
void prune(const std::string &dir, const FileName &current, int keep) {
  DIR *listing = ::opendir(dir.c_str());
  if (!listing)
    return;
  struct Set {
    bool head = false;
    std::vector<std::string> names;
  };
  std::map<FileName, Set> others;
  while (const dirent *entry = ::readdir(listing)) {
    std::string name = entry->d_name;
    if (isTemporary(name)) {
      ::unlink((dir + "/" + name).c_str());
      continue;
    }
    FileName parsed = parseName(name);
    if (parsed.step < 0 || parsed.sameSet(current))
      continue;
    Set &set = others[parsed.head()];
    set.head |= parsed.rank < 0;
    set.names.push_back(name);
  }
  ::closedir(listing);
  int kept = 1;
  // Newest first.
  for (auto it = others.rbegin(); it != others.rend(); ++it) {
    const auto &[id, set] = *it;
    if (!set.head || id.step == current.step || (keep > 0 && kept++ >= keep))
      for (const std::string &name : set.names)
        ::unlink((dir + "/" + name).c_str());
  }
}

/// Checks names and keys; the reason of the first problem, or "".
std::string checkContents(const CheckpointContents &c) {
  if (c.step < 0)
    return "the step must not be negative, not " + std::to_string(c.step);
  if (c.ranks < 0 || c.rank < -1 || (c.rank >= 0 && c.rank >= c.ranks))
    return "rank " + std::to_string(c.rank) + " is not one of " +
           std::to_string(c.ranks) + " ranks";
  std::set<std::string> names;
  for (const auto &[name, tensor] : c.tensors) {
    if (name.empty() || name.find('\0') != std::string::npos)
      return "a tensor name is empty or holds a NUL";
    if (name.compare(0, kReserved.size(), kReserved) == 0)
      return "tensor '" + name + "' uses the reserved prefix " + kReserved;
    if (!names.insert(name).second)
      return "tensor '" + name + "' appears twice";
  }
  for (const auto &[key, value] : c.metadata)
    if (key.empty() || key.find('\0') != std::string::npos)
      return "a metadata key is empty or holds a NUL";
  return "";
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Reads the file name LATEST in `dir` holds.
dlc_status_t readMarker(const std::string &dir, std::string &name) {
  std::string marker = dir + "/" + kMarker;
  std::FILE *in = std::fopen(marker.c_str(), "rb");
  if (!in) {
    int e = errno;
    if (e == ENOENT)
      return makeStatus(DLC_NOT_FOUND,
                        dir + " has no checkpoint (no " + kMarker + " marker)");
    return makeStatus(errnoStatusCode(e),
                      marker + ": cannot open: " + std::strerror(e));
  }
  char text[512];
  size_t n = std::fread(text, 1, sizeof(text), in);
  bool readFailed = std::ferror(in);
  std::fclose(in);
  if (readFailed)
    return makeStatus(DLC_IO_ERROR, marker + ": cannot read");
  name.assign(text, n);
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
    name.pop_back();
  return nullptr;
}

/// Finds the checkpoint file `path` stands for.
dlc_status_t resolve(const std::string &path, std::string &file) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    int e = errno;
    return makeStatus(errnoStatusCode(e), path + ": " + std::strerror(e));
  }
  if (!S_ISDIR(info.st_mode)) {
    file = path;
    return nullptr;
  }
  std::string name;
  DLC_RETURN_IF_ERROR(readMarker(path, name));
  std::string marker = path + "/" + kMarker;
  if (!isHead(name))
    return makeStatus(DLC_DATA_LOSS, marker + " is corrupt (it does not name "
                                              "a checkpoint file)");
  file = path + "/" + name;
  if (::stat(file.c_str(), &info) != 0)
    return makeStatus(DLC_DATA_LOSS,
                      marker + " names " + name +
                          ", which cannot be read: " + std::strerror(errno));
  return nullptr;
}

bool isScalar(const MappedArray &array, DType dtype) {
  return array.dtype == dtype && array.shape.empty();
}

int64_t scalarValue(const MappedArray &array) {
  int64_t value;
  std::memcpy(&value, array.data, sizeof(value));
  return value;
}

/// Fills `out` from the arrays of a checkpoint file; the reason on failure.
std::string decode(const MappedNpz &npz, CheckpointContents &out) {
  const std::vector<MappedArray> &arrays = npz.arrays();
  if (arrays.empty() || arrays.back().name != kChecksum ||
      !isScalar(arrays.back(), DType::U32))
    return "not a dlc checkpoint (it does not end with " + kChecksum + ")";
  uint32_t checksum = 0, stored;
  std::memcpy(&stored, arrays.back().data, sizeof(stored));
  for (size_t i = 0; i + 1 < arrays.size(); ++i)
    checksum = addToChecksum(checksum, arrays[i].name, arrays[i].crc32,
                             arrays[i].bytes);
  if (checksum != stored)
    return "the checksum over the member names does not match";

  bool sawStep = false, sawFingerprint = false;
  std::set<std::string> bfloat16;
  for (size_t i = 0; i + 1 < arrays.size(); ++i) {
    const MappedArray &array = arrays[i];
    const std::string &name = array.name;
    if (name == kStep) {
      if (!isScalar(array, DType::I64))
        return kStep + " is not an int64 scalar";
      out.step = scalarValue(array);
      sawStep = true;
    } else if (name == kRanks || name == kRank) {
      if (!isScalar(array, DType::I64))
        return name + " is not an int64 scalar";
      int64_t value = scalarValue(array);
      if (value < (name == kRanks ? 1 : 0) ||
          value > std::numeric_limits<int32_t>::max())
        return name + " is " + std::to_string(value);
      (name == kRanks ? out.ranks : out.rank) = static_cast<int32_t>(value);
    } else if (name == kSet) {
      if (!isScalar(array, DType::I64))
        return name + " is not an int64 scalar";
      int64_t value = scalarValue(array);
      if (value < 0 || value > std::numeric_limits<uint32_t>::max())
        return name + " is " + std::to_string(value);
      out.set = static_cast<uint32_t>(value);
    } else if (name == kFingerprint) {
      if (array.dtype != DType::U8 || array.shape.size() != 1)
        return kFingerprint + " is not a uint8 vector";
      out.fingerprint.assign(reinterpret_cast<const char *>(array.data),
                             array.bytes);
      sawFingerprint = true;
    } else if (name.compare(0, kMetaPrefix.size(), kMetaPrefix) == 0) {
      if (!isScalar(array, DType::I64))
        return name + " is not an int64 scalar";
      out.metadata[name.substr(kMetaPrefix.size())] = scalarValue(array);
    } else if (name.compare(0, kBFloat16Prefix.size(), kBFloat16Prefix) == 0) {
      bfloat16.insert(name.substr(kBFloat16Prefix.size()));
    } else if (name.compare(0, kReserved.size(), kReserved) != 0) {
      Tensor tensor(array.dtype, array.shape);
      if (array.bytes > 0)
        std::memcpy(tensor.bytes(), array.data, array.bytes);
      out.tensors.emplace_back(name, std::move(tensor));
    }
  }
  if (!sawStep || !sawFingerprint)
    return "missing " + (sawStep ? kFingerprint : kStep);
  if (out.rank >= out.ranks && out.rank >= 0)
    return kRank + " " + std::to_string(out.rank) + " is not one of " +
           std::to_string(out.ranks) + " ranks";
  // bfloat16 has no NumPy dtype: its bits are stored as uint16.
  for (auto &[name, tensor] : out.tensors) {
    if (!bfloat16.erase(name))
      continue;
    if (tensor.dtype() != DType::U16)
      return "'" + name + "' is marked bfloat16 but stored as " +
             dtypeName(tensor.dtype());
    tensor = bfloat16FromBits(tensor);
  }
  if (!bfloat16.empty())
    return "'" + *bfloat16.begin() + "' is marked bfloat16 but missing";
  return "";
}

/// Writes `c` as its file in `dir` (created if needed), leaving LATEST.
dlc_status_t writeFile(const std::string &dir, const CheckpointContents &c) {
  std::string problem = checkContents(c);
  if (!problem.empty())
    return makeStatus(DLC_INVALID_ARGUMENT,
                      dir + ": cannot write checkpoint: " + problem);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return makeStatus(errnoStatusCode(ec.value()),
                      dir + ": cannot create the directory: " + ec.message());

  // The members, with every scalar's storage reserved up front so the
  // pointers to it stay valid.
  std::vector<int64_t> scalars;
  scalars.reserve(c.metadata.size() + 4);
  std::vector<Member> members;
  auto add = [&](const std::string &name, DType dtype,
                 const std::vector<int64_t> &shape, const void *data,
                 uint64_t bytes) {
    members.push_back(
        {name + ".npy", serializeNpyHeader(dtype, shape), data, bytes});
  };
  auto addScalar = [&](const std::string &name, int64_t value) {
    scalars.push_back(value);
    add(name, DType::I64, {}, &scalars.back(), sizeof(int64_t));
  };
  for (const auto &[name, tensor] : c.tensors) {
    bool isBFloat16 = tensor.dtype() == DType::BF16;
    add(name, isBFloat16 ? DType::U16 : tensor.dtype(), tensor.shape(),
        tensor.bytes(), tensor.byteSize());
    if (isBFloat16)
      add(kBFloat16Prefix + name, DType::U8, {0}, nullptr, 0);
  }
  add(kFingerprint, DType::U8, {static_cast<int64_t>(c.fingerprint.size())},
      c.fingerprint.data(), c.fingerprint.size());
  addScalar(kStep, c.step);
  if (c.ranks > 0)
    addScalar(kRanks, c.ranks);
  if (c.rank >= 0)
    addScalar(kRank, c.rank);
  if (c.ranks > 0)
    addScalar(kSet, c.set);
  for (const auto &[key, value] : c.metadata)
    addScalar(kMetaPrefix + key, value);
  uint32_t checksum = 0;
  for (Member &m : members) {
    m.crc =
        crc32(crc32(0, m.header.data(), m.header.size()), m.data, m.dataBytes);
    checksum = addToChecksum(checksum, m.name.substr(0, m.name.size() - 4),
                             m.crc, m.dataBytes);
  }
  add(kChecksum, DType::U32, {}, &checksum, sizeof(checksum));
  Member &last = members.back();
  last.crc = crc32(crc32(0, last.header.data(), last.header.size()), &checksum,
                   sizeof(checksum));

  return replaceFile(dir, nameOf(c).str(),
                     [&](FileWriter &out) { writeArchive(out, members); });
}

} // namespace

dlc_status_t writeCheckpoint(const std::string &dir,
                             const CheckpointContents &c, int keep) {
  if (c.ranks != 0 || c.rank != -1)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      dir + ": cannot write checkpoint: a sharded one is "
                            "written part by part (writeCheckpointPart)");
  DLC_RETURN_IF_ERROR(writeFile(dir, c));
  return commitCheckpoint(dir, c, keep);
}

dlc_status_t writeCheckpointPart(const std::string &dir,
                                 const CheckpointContents &c) {
  if (c.ranks < 1)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      dir + ": cannot write checkpoint: a part of a sharded "
                            "checkpoint needs its rank count");
  return writeFile(dir, c);
}

dlc_status_t commitCheckpoint(const std::string &dir,
                              const CheckpointContents &head, int keep) {
  FileName name = nameOf(head).head();
  DLC_RETURN_IF_ERROR(replaceFile(
      dir, kMarker, [&](FileWriter &out) { out.write(name.str() + "\n"); }));
  prune(dir, name, keep);
  return nullptr;
}

void discardCheckpointPart(const std::string &dir,
                           const CheckpointContents &part) {
  FileName name = nameOf(part);
  std::string committed;
  StatusOwner read(readMarker(dir, committed));
  if (read.get() || committed != name.head().str())
    ::unlink((dir + "/" + name.str()).c_str());
}

namespace {

/// Reads the checkpoint file `file`.
dlc_status_t readFile(const std::string &file, CheckpointContents &out) {
  std::unique_ptr<MappedFile> mapped;
  DLC_RETURN_IF_ERROR(MappedFile::open(file, mapped));
  std::unique_ptr<MappedNpz> npz;
  StatusOwner parsed(MappedNpz::open(std::move(mapped), CrcCheck::Verify, npz));
  // dlc writes checkpoints with nothing MappedNpz does not read, so any
  // archive it refuses (even as unsupported) is a damaged checkpoint; only
  // a want of memory is not.
  if (parsed.get() && dlc_status_code(parsed.get()) == DLC_RESOURCE_EXHAUSTED)
    return parsed.release();
  if (parsed.get())
    return makeStatus(DLC_DATA_LOSS, std::string("corrupt checkpoint: ") +
                                         dlc_status_message(parsed.get()));
  CheckpointContents contents;
  std::string reason = decode(*npz, contents);
  if (!reason.empty())
    return makeStatus(DLC_DATA_LOSS, file + ": corrupt checkpoint: " + reason);
  out = std::move(contents);
  return nullptr;
}

/// Adds rank `rank`'s shards to `head`, read from `file`'s set.
dlc_status_t addShards(const std::string &file, int rank,
                       CheckpointContents &head) {
  if (rank >= head.ranks)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      file + " is sharded over " + std::to_string(head.ranks) +
                          " ranks; rank " + std::to_string(rank) +
                          " has no part of it");
  size_t slash = file.rfind('/');
  std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
  FileName name = nameOf(head);
  name.rank = rank;
  std::string shardFile = dir + "/" + name.str();
  CheckpointContents shards;
  StatusOwner read(readFile(shardFile, shards));
  if (read.get()) {
    // Only the head says a shard file is due: its absence is damage.
    if (dlc_status_code(read.get()) == DLC_NOT_FOUND)
      return makeStatus(DLC_DATA_LOSS,
                        file + ": its set's part " + shardFile +
                            " is missing: " + dlc_status_message(read.get()));
    return read.release();
  }
  if (shards.step != head.step || shards.set != head.set ||
      shards.fingerprint != head.fingerprint || shards.ranks != head.ranks ||
      shards.rank != rank)
    return makeStatus(DLC_DATA_LOSS,
                      shardFile + ": corrupt checkpoint: it is not rank " +
                          std::to_string(rank) + "'s part of " + file);
  std::set<std::string> names;
  for (const auto &entry : head.tensors)
    names.insert(entry.first);
  for (auto &entry : shards.tensors) {
    if (!names.insert(entry.first).second)
      return makeStatus(DLC_DATA_LOSS, shardFile + ": corrupt checkpoint: '" +
                                           entry.first + "' is in " + file +
                                           " too");
    head.tensors.push_back(std::move(entry));
  }
  return nullptr;
}

} // namespace

dlc_status_t readCheckpoint(const std::string &path, CheckpointContents &out,
                            int rank) {
  std::string file;
  DLC_RETURN_IF_ERROR(resolve(path, file));
  CheckpointContents contents;
  DLC_RETURN_IF_ERROR(readFile(file, contents));
  if (contents.rank >= 0)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      file + " is rank " + std::to_string(contents.rank) +
                          "'s part of a sharded checkpoint: restore from its "
                          "set's head, " +
                          nameOf(contents).head().str());
  if (contents.ranks > 0) {
    if (rank < 0)
      return makeStatus(DLC_FAILED_PRECONDITION,
                        file + " is sharded over " +
                            std::to_string(contents.ranks) +
                            " ranks (dlc-compile --zero 1): each rank "
                            "restores its own part, with its communicator");
    DLC_RETURN_IF_ERROR(addShards(file, rank, contents));
  }
  out = std::move(contents);
  return nullptr;
}

dlc_status_t matchCheckpoint(const CheckpointContents &c,
                             const std::string &path, const std::string &model,
                             const std::string &fingerprint,
                             const std::vector<CheckpointSlot> &slots,
                             std::vector<const Tensor *> &values) {
  if (c.fingerprint != fingerprint)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      path + " is from another model (its fingerprint is '" +
                          c.fingerprint + "', module " + model + " has '" +
                          fingerprint + "')");
  std::map<std::string, const Tensor *> byName;
  for (const auto &[name, tensor] : c.tensors)
    byName[name] = &tensor;
  std::string missing, wrong;
  std::vector<const Tensor *> found;
  for (const CheckpointSlot &slot : slots) {
    auto it = byName.find(slot.name);
    if (it == byName.end()) {
      missing += (missing.empty() ? "'" : ", '") + slot.name + "'";
      continue;
    }
    const Tensor &t = *it->second;
    if (t.dtype() != slot.dtype || t.shape() != slot.shape)
      wrong += (wrong.empty() ? "'" : ", '") + slot.name + "' is " +
               t.describe() + ", expected " +
               describeType(slot.dtype, slot.shape);
    found.push_back(&t);
  }
  if (missing.empty() && wrong.empty()) {
    values = std::move(found);
    return nullptr;
  }
  std::string message = path + ": does not match module " + model;
  if (!missing.empty())
    message += "; missing " + missing;
  if (!wrong.empty())
    message += "; " + wrong;
  return makeStatus(DLC_FAILED_PRECONDITION, message);
}

} // namespace dlc
