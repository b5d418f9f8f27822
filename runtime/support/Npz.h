//===- Npz.h - NumPy .npy and .npz files ----------------------------------===//
//
// Reads and writes NumPy's array files, the interchange format for datasets,
// reference outputs and exported weights: a user produces them with
// np.save/np.savez and checks our results with np.load.
//
// Every byte read is untrusted. Any failure returns a status whose one-line
// message names the file, the member and the reason; nothing asserts or
// aborts, and no size is allocated before the input is known to hold it.
// The codes: a missing file is DLC_NOT_FOUND, a truncated or corrupt one
// DLC_DATA_LOSS, a valid one dlc cannot hold (a complex dtype, a compression
// method other than deflate) DLC_UNIMPLEMENTED, a failed system call
// errnoStatusCode's (Status.h: a full disk is DLC_RESOURCE_EXHAUSTED), and an
// array a writer cannot write DLC_INVALID_ARGUMENT.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_NPZ_H
#define DLC_RUNTIME_SUPPORT_NPZ_H

#include "runtime/support/Status.h"
#include "runtime/support/Tensor.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace dlc {

/// Named arrays in file order.
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// NumPy has no bfloat16: dlc writes a bfloat16 array as the uint16 array
/// of its bits (checkpoints, dlc-run's outputs and saved state), and reads
/// such an array back where a bfloat16 value is expected.
Tensor bfloat16AsBits(const Tensor &tensor);
Tensor bfloat16FromBits(const Tensor &bits);

/// Reads a .npy file (format 1.0, 2.0 or 3.0). Big-endian arrays are byte
/// swapped and Fortran-order arrays transposed, so `out` is always native
/// row-major. `out` is only changed on success.
dlc_status_t readNpy(const std::string &path, Tensor &out);

/// Parses the bytes of a .npy file; `what` names them in error messages
/// ("x.npz: member 'a.npy'").
dlc_status_t parseNpy(const void *data, size_t size, const std::string &what,
                      Tensor &out);

/// What the header of a .npy file says and where its elements lie, as
/// parseNpyHeader finds them: `dataBytes` bytes at `dataOffset`, in the
/// file's byte order and layout.
struct NpyLayout {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  bool fortranOrder = false;
  /// The elements are big-endian (this host is little-endian).
  bool byteSwapped = false;
  size_t dataOffset = 0;
  size_t dataBytes = 0;
};

/// Parses the header of the .npy bytes `data` and checks that exactly the
/// elements its shape needs follow it, without copying them (readers of
/// memory-mapped files use the elements in place). Fails as parseNpy does.
dlc_status_t parseNpyHeader(const void *data, size_t size,
                            const std::string &what, NpyLayout &out);

/// Writes `t` as a .npy file (format 1.0, or 2.0 when the header needs it),
/// through a temporary file so an existing file survives a failed write.
/// BF16 has no NumPy dtype and is refused.
dlc_status_t writeNpy(const std::string &path, const Tensor &t);

/// Writes `bytes` to a temporary file beside `path`, flushes it and renames
/// it over `path`: readers see the old file or the whole new one, and a
/// failed write leaves the old file. On failure the message names the path
/// and the cause, and the code is its errno's (errnoStatusCode).
dlc_status_t writeFileAtomically(const std::string &path,
                                 const std::string &bytes);

/// The bytes writeNpy writes; empty for BF16, which has no NumPy dtype.
std::string serializeNpy(const Tensor &t);

/// The header serializeNpy writes before the elements of an array of this
/// type and shape (its size is a multiple of 64); empty for BF16.
std::string serializeNpyHeader(DType dtype, const std::vector<int64_t> &shape);

/// Untrusted text (a member name, a header's field) made safe for a
/// one-line message: printable ASCII only, cut at 64 characters. MappedNpz
/// names members with it too.
std::string sanitize(const std::string &text);

/// Reads every member of a .npz archive (stored or deflated) with MappedNpz,
/// checking every CRC, into tensors of its own. Keys are the member names
/// without their ".npy" suffix; a member without it is an error. `out` is
/// only changed on success.
dlc_status_t readNpz(const std::string &path, NamedTensors &out);

/// Writes a .npz archive with one stored member "<name>.npy" per array, as
/// np.savez does. Writes `path + ".tmp"` and renames it over `path`, so an
/// existing file is never lost on failure. Duplicate names and BF16 arrays
/// are refused before anything is written.
dlc_status_t writeNpz(const std::string &path, const NamedTensors &arrays);

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_NPZ_H
