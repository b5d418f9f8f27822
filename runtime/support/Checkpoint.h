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
// A sharded checkpoint (ZeRO-1: each of N ranks holds its own shard of the
// optimizer state) is a set of files written by the ranks together, named
// by the step and the set's id (8 hex digits, drawn for each attempt, so
// that a set never replaces the files of another, committed one): every
// rank r writes its shards to step-S-ID.shard-RRRR.dlcc (4 digits), and
// once all are on disk rank 0 writes the head, step-S-ID.dlcc (the
// replicated tensors and the metadata); each file records the set's rank
// count (__dlc__/ranks), id (__dlc__/set) and a shard file its rank
// (__dlc__/rank), int64 each. Then LATEST is replaced with the head's name,
// which commits the whole set at once. Pruning removes old sets whole, the
// set the new one supersedes (the same step), and the parts of any set
// without a head (one whose writing failed).
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
  /// A sharded checkpoint's rank count, and which rank's shard file this
  /// is (-1: the set's head, step-S.dlcc). 0 ranks: a whole checkpoint.
  int32_t ranks = 0;
  int32_t rank = -1;
  /// A sharded checkpoint's id, the same in all of its files.
  uint32_t set = 0;
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

/// Writes one file of a sharded checkpoint: the head (c.rank -1) or rank
/// c.rank's shards, atomically, without touching LATEST. c.ranks must be at
/// least 1 and c.rank below it; errors as writeCheckpoint's.
dlc_status_t writeCheckpointPart(const std::string &dir,
                                 const CheckpointContents &c);

/// Commits the sharded checkpoint whose head is `head` (its step and set)
/// once its files are all written: replaces LATEST, then keeps the newest
/// `keep` sets (0 = all).
dlc_status_t commitCheckpoint(const std::string &dir,
                              const CheckpointContents &head, int keep);

/// Removes the file of `part` (its step, set and rank) after its set failed
/// to be written, unless LATEST names that set.
void discardCheckpointPart(const std::string &dir,
                           const CheckpointContents &part);

/// `path`: a checkpoint directory (reads LATEST) or a checkpoint file.
/// When it is a sharded set's head and `rank` is one of the set's ranks,
/// that rank's shard file is read too (it must be of the same step, model
/// and rank count) and its tensors added; `rank` -1 refuses a sharded set
/// with DLC_FAILED_PRECONDITION (one process cannot restore every shard).
/// `out` is only changed on success. Fails with DLC_NOT_FOUND when there is
/// no checkpoint there, DLC_DATA_LOSS for a damaged file or marker (or a
/// missing shard file), and the errno's code of any other failed system
/// call.
dlc_status_t readCheckpoint(const std::string &path, CheckpointContents &out,
                            int rank = -1);

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
