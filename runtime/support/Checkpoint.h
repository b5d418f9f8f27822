//===- Checkpoint.h - Checkpoint files written so none is ever lost -------===//
//
// A checkpoint is DIR/step-<step, 8 digits>.dlcc: a .npz (np.load reads it)
// holding the tensors by name and reserved members for the rest:
//   __dlc__/fingerprint      uint8[n]   which model and configuration
//   __dlc__/step             int64      the training step
//   __dlc__/meta/KEY         int64      caller's metadata (data position...)
//   __dlc__/bfloat16/NAME    uint8[0]   NAME's uint16 bits are bfloat16
//   __dlc__/checksum         uint32     last: CRC-32 over every other member's
//                                       name, CRC-32 and size
// Each member's CRC-32 (in the zip directory) covers its bytes and is
// checked on every read; the checksum member covers the names, so any
// damaged byte that matters is found, and reported as DLC_DATA_LOSS.
//
// Writing follows DESIGN.md decision 10: the file is written under a
// temporary name, flushed to disk, renamed, the directory flushed; then the
// marker DIR/LATEST (holding the file's name) is replaced the same way; only
// then are old checkpoints pruned. A failure at any point (a full disk)
// leaves the previous checkpoint and LATEST as they were and removes the
// temporary file.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_CHECKPOINT_H
#define DLC_RUNTIME_SUPPORT_CHECKPOINT_H

#include "runtime/support/Npz.h"

#include <cstdint>
#include <map>
#include <string>

namespace dlc {

/// Everything a checkpoint holds. Tensor names must be non-empty, unique and
/// not begin with "__dlc__/".
struct CheckpointContents {
  NamedTensors tensors;
  std::map<std::string, int64_t> metadata;
  std::string fingerprint;
  int64_t step = 0;
};

/// Writes DIR/step-<step, 8 digits>.dlcc atomically, then DIR/LATEST; keeps
/// the newest `keep` (0 = all): the one just written and the keep - 1 others
/// with the highest steps. Creates `dir` if needed. A checkpoint that cannot
/// be pruned is left in place. Fails with DLC_INVALID_ARGUMENT for contents
/// breaking the rules above, else with the errno's code of the failed
/// system call (errnoStatusCode: a full disk or a size limit is
/// DLC_RESOURCE_EXHAUSTED).
dlc_status_t writeCheckpoint(const std::string &dir,
                             const CheckpointContents &c, int keep);

/// `path`: a checkpoint directory (reads LATEST) or a checkpoint file.
/// `out` is only changed on success. Fails with DLC_NOT_FOUND when there is
/// no checkpoint there, DLC_DATA_LOSS for a damaged file or marker, and the
/// errno's code of any other failed system call.
dlc_status_t readCheckpoint(const std::string &path, CheckpointContents &out);

/// A tensor a checkpoint must hold to be restored into a model.
struct CheckpointSlot {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};

/// Checks that `c`, read from `path`, comes from the model `model` whose
/// fingerprint is `fingerprint` and holds every slot with its exact type;
/// then sets `values` to each slot's tensor in `c`. Otherwise fails with
/// DLC_FAILED_PRECONDITION and one message naming the other model, or every
/// missing and mistyped tensor. Both the runtime's sessions and the
/// evaluator restore through this, so a checkpoint of either is accepted or
/// refused alike.
dlc_status_t matchCheckpoint(const CheckpointContents &c,
                             const std::string &path, const std::string &model,
                             const std::string &fingerprint,
                             const std::vector<CheckpointSlot> &slots,
                             std::vector<const Tensor *> &values);

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_CHECKPOINT_H
