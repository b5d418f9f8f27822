//===- TensorBoard.cpp - Scalars as TensorBoard event files ---------------===//
#include "tools/runner/TensorBoard.h"

#include "tools/runner/Error.h"
#include "tools/runner/MetricsLog.h"
#include "tools/runner/event.pb.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dlc::runner {
namespace {

/// The CRC-32C table of the reflected polynomial 0x82F63B78.
struct Crc32cTable {
  uint32_t entries[256];
  Crc32cTable() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      entries[i] = c;
    }
  }
};

/// TFRecord stores CRCs rotated and offset ("masked"), so that a CRC of
/// data holding CRCs is not trivially related to them.
uint32_t masked(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void appendLittleEndian(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xff);
}

double now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Creates `dir` and its missing parents.
void makeDirectories(const std::string &dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/')
      continue;
    std::string prefix = dir.substr(0, at);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      throw Error("--tensorboard: cannot create " + prefix + ": " +
                  std::strerror(errno));
  }
}

} // namespace

uint32_t crc32c(const void *data, size_t size) {
  static const Crc32cTable table;
  const auto *bytes = static_cast<const unsigned char *>(data);
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i)
    crc = table.entries[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

TensorBoardWriter::TensorBoardWriter(const std::string &dir) {
  makeDirectories(dir);
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  double started = now();
  // TensorBoard orders a directory's files by name; the pid keeps two runs
  // started in the same second apart.
  path_ = dir + "/events.out.tfevents." +
          std::to_string(static_cast<int64_t>(started)) + "." + host + "." +
          std::to_string(::getpid());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error("--tensorboard: cannot create " + path_ + ": " +
                std::strerror(errno));
  tensorboard::Event event;
  event.set_wall_time(started);
  event.set_file_version("brain.Event:2");
  writeRecord(event.SerializeAsString());
}

TensorBoardWriter::~TensorBoardWriter() {
  if (fd_ >= 0)
    ::close(fd_);
}

void TensorBoardWriter::scalar(const std::string &tag, int64_t step,
                               double value) {
  tensorboard::Event event;
  event.set_wall_time(now());
  event.set_step(step);
  tensorboard::SummaryValue *entry = event.mutable_summary()->add_value();
  entry->set_tag(tag);
  entry->set_simple_value(static_cast<float>(value));
  writeRecord(event.SerializeAsString());
}

void TensorBoardWriter::writeRecord(const std::string &bytes) {
  std::string record;
  appendLittleEndian(record, bytes.size(), 8);
  appendLittleEndian(record, masked(crc32c(record.data(), 8)), 4);
  record += bytes;
  appendLittleEndian(record, masked(crc32c(bytes.data(), bytes.size())), 4);
  if (int error = writeFully(fd_, record.data(), record.size()))
    throw Error("--tensorboard: cannot write " + path_ + ": " +
                std::strerror(error));
}

} // namespace dlc::runner
