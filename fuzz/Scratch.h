//===- Scratch.h - Files for the loaders that read a path -------*- C++ -*-===//
//
// The importer, the checkpoint reader and the .npz readers take a path, not
// bytes, so their fuzz targets write each input to a file. The files live in
// a folder of the process's own (mkdtemp under $TMPDIR or /tmp: the jobs of
// a campaign never share one), removed when the process exits normally; a
// crashing run leaves it behind for inspection.
//
// The folder also holds the model folder the ONNX targets resolve external
// data against, with the files a hostile model might name:
//   model/weights.bin      256 bytes 0, 1, ..., 255
//   model/sub/weights.bin  the same, one folder down
//   model/escape.bin       a symlink to ../secret.bin, outside the folder
//   model/folder           a directory, not a file
//   secret.bin             24 bytes no model may read
//
//===----------------------------------------------------------------------===//
#ifndef DLC_FUZZ_SCRATCH_H
#define DLC_FUZZ_SCRATCH_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace dlc::fuzz {

/// The process's scratch folder, made on the first call.
const std::string &scratchDir();

/// The model folder inside it (see the file comment).
const std::string &modelDir();

/// Writes `size` bytes to `path`, replacing the file. Aborts when it cannot:
/// a full disk is a broken fuzzing run, not a finding in the code under
/// test.
void writeFile(const std::string &path, const uint8_t *data, size_t size);

} // namespace dlc::fuzz

#endif // DLC_FUZZ_SCRATCH_H
