//===- MappedNpz.h - .npz and .npy arrays read in place -------------------===//
//
// Datasets are .npz archives written by np.savez: a zip whose members are
// stored, not compressed, so each array's elements lie in the file as they
// will lie in memory. MappedNpz maps the file and hands out pointers into the
// mapping for those members, so opening a 50 GB dataset costs a page-table
// setup, not a copy. Deflated members (np.savez_compressed) are inflated
// into memory MappedNpz owns, and so are the few arrays whose bytes need
// changing: big-endian elements, Fortran-order arrays and booleans stored
// as bytes other than 0/1. It is dlc's one reader of .npz files: readNpz
// (Npz.h) copies its arrays out.
//
// libzip reads a member through a stream and never says where its bytes
// start, so the zip structures are parsed here: the end-of-central-directory
// record (and its zip64 form: data files exceed 4 GiB), each central
// directory entry (with its zip64 extra field) and each local header. Every
// offset and length is untrusted and checked against the file before use;
// a truncated or corrupt file is an error naming the file and the member.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_MAPPEDNPZ_H
#define DLC_RUNTIME_SUPPORT_MAPPEDNPZ_H

#include "runtime/support/MappedFile.h"
#include "runtime/support/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dlc {

/// One array of a MappedNpz: native byte order, row-major. Inside the
/// mapping its data is only as aligned as the archive placed it (np.savez
/// does not align members), so read it with memcpy, not through a typed
/// pointer.
struct MappedArray : ArrayView {
  /// The member name without ".npy"; for a .npy file, the file's name
  /// without its directory and ".npy".
  std::string name;
  /// Whether `data` points into the file's mapping (zero-copy) rather than
  /// into memory the MappedNpz owns.
  bool mapped = false;
  /// The member's CRC-32 as the zip central directory records it; 0 for a
  /// .npy file.
  uint32_t crc32 = 0;
};

/// Whether open checks the CRC-32 of stored members (reading every byte of
/// the file once). Deflated members are always checked as they inflate.
enum class CrcCheck : bool { Skip, Verify };

/// The arrays of a .npz or .npy file (told apart by their first bytes, not
/// their names), valid while the MappedNpz lives.
class MappedNpz {
public:
  /// Opens and parses `path` into `out`. Fails with one line naming the
  /// file (and the member) and the reason: MappedFile::open's failures, then
  /// DLC_DATA_LOSS for a truncated or corrupt file, DLC_UNIMPLEMENTED for
  /// what dlc does not read (encrypted members, a complex dtype...).
  static dlc_status_t open(const std::string &path, CrcCheck crc,
                           std::unique_ptr<MappedNpz> &out);
  /// Parses an already mapped file (a caller that tells a file it cannot
  /// read from a corrupt one).
  static dlc_status_t open(std::unique_ptr<MappedFile> file, CrcCheck crc,
                           std::unique_ptr<MappedNpz> &out);

  const std::string &path() const { return file_->path(); }
  const MappedFile &file() const { return *file_; }
  /// In file order.
  const std::vector<MappedArray> &arrays() const { return arrays_; }
  /// The array named `name`, or null.
  const MappedArray *find(const std::string &name) const;

private:
  struct FreeDeleter {
    void operator()(std::byte *p) const;
  };
  using OwnedBytes = std::unique_ptr<std::byte[], FreeDeleter>;
  class Parser;

  explicit MappedNpz(std::unique_ptr<MappedFile> file)
      : file_(std::move(file)) {}

  std::unique_ptr<MappedFile> file_;
  std::vector<MappedArray> arrays_;
  /// Inflated members and converted arrays that arrays_ point into (a
  /// Tensor's elements stay where they are when the Tensor moves).
  std::vector<OwnedBytes> owned_;
  std::vector<Tensor> converted_;
};

/// The CRC-32 of zip (and zlib, gzip, PNG): `crc32(0, data, size)`, or
/// continued over more bytes as `crc32(previous, more, n)`.
uint32_t crc32(uint32_t crc, const void *data, size_t size);

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_MAPPEDNPZ_H
