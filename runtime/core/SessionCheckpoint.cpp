//===- SessionCheckpoint.cpp - Checkpoints, metadata and ONNX export ------===//
//
// The C API's dlc_metadata_*, dlc_session_save_checkpoint,
// dlc_session_load_checkpoint and dlc_session_export_onnx. The file formats
// and their atomic writes are runtime/support's (Checkpoint.h,
// OnnxExport.h); this file decides what a session puts in them and what it
// accepts back: a checkpoint is restored only when it comes from the same
// model (fingerprint) and holds every global with its exact type, and only
// then is anything copied, so a refused checkpoint changes nothing.
//
// A module that shards its optimizer state over N ranks (ZeRO-1), without
// tensor parallelism, saves a sharded checkpoint, all ranks together: every
// rank writes its own shards, the ranks agree over the session's communicator
// that every file is on disk, and only then does rank 0 write the head (the
// replicated globals and the metadata) and commit the set (Checkpoint.h). A
// failure anywhere leaves LATEST as it was and every rank removes what it
// wrote. Each rank restores the set's head and its own shards. In a pipeline,
// the replicas of stage 0 write the set (each rank holds every stage's globals
// by then) and every stage's rank of replica r restores part r.
//
// A tensor-parallel module's checkpoints and exports hold the whole values:
// every rank calls them, the tensor group of replica 0 of stage 0 gathers
// the split globals' slices, and rank 0 of the job writes, once every rank
// has agreed that nothing failed; on restore each rank takes its slice of
// the whole. ZeRO-1's shards are made whole too, gathered over each tensor
// rank's replicas first, so such a checkpoint is a plain tensor-parallel
// one, and each rank restores its shard of its slice.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Handles.h"
#include "runtime/core/Session.h"
#include "runtime/core/Status.h"
#include "runtime/support/Checkpoint.h"
#include "runtime/support/OnnxExport.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace dlc;

namespace {

dlc_status_t globalTensor(const Session &session, size_t index, Tensor &t) {
  const ValueInfo &info = session.module().globals()[index];
  t = Tensor(info.type.dtype, info.type.shape);
  return t.byteSize() ? session.readGlobal(index, t.bytes()) : nullptr;
}

/// Session::checkGathered for every global.
dlc_status_t checkAllGathered(const Session &s, const char *what) {
  for (size_t g = 0; g < s.module().globals().size(); ++g)
    DLC_RETURN_IF_ERROR(s.checkGathered(g, what));
  return nullptr;
}

/// Keeps the first failure of steps that must all run (collectives).
void keepFirst(StatusOwner &first, dlc_status_t status) {
  if (!first.get())
    first.reset(status);
  else
    dlc_status_free(status);
}

bool hasShardedGlobals(const Session &session) {
  for (const ValueInfo &g : session.module().globals())
    if (g.sharded)
      return true;
  return false;
}

/// The communicator a sharded module's checkpoint is saved or restored
/// with; null (and `status` set) without one.
Communicator *shardingComm(const Session &s, const std::string &directory,
                           dlc_status_t &status) {
  Communicator *comm = s.communicator();
  if (!comm)
    status = makeStatus(
        DLC_FAILED_PRECONDITION,
        directory + ": module " + s.module().name() +
            " shards its optimizer state over " +
            std::to_string(s.module().dataParallelRanks()) +
            " ranks (dlc-compile --zero 1): each rank saves and restores "
            "its part of a checkpoint with the session's communicator "
            "(dlc_session_set_comm)");
  return comm;
}

/// A tensor-parallel module's tensor group, through which its ranks save
/// and restore checkpoints of the whole values, or null (with `status`)
/// when the session has none.
Communicator *tensorGroup(const Session &s, const std::string &directory,
                          dlc_status_t &status) {
  Communicator *group = s.tensorCommunicator();
  if (!group)
    status = makeStatus(
        DLC_FAILED_PRECONDITION,
        directory + ": module " + s.module().name() +
            " splits parameters over " +
            std::to_string(s.module().tensorParallelRanks()) +
            " tensor-parallel ranks (dlc-compile --tp): its ranks save, "
            "restore and export it together, with the session's "
            "communicator (dlc_session_set_comm)");
  return group;
}

/// The whole shape of a global each tensor rank of `ranks` holds a slice
/// of. A tensor-parallel module's checkpoints hold the whole of ZeRO shards
/// too: the shards' value (a slice, for a split global) made whole.
std::vector<int64_t> wholeShape(const ValueInfo &g, int ranks) {
  std::vector<int64_t> shape =
      g.wholeShape && ranks > 1 ? *g.wholeShape : g.type.shape;
  if (g.tpSplit >= 0)
    shape[g.tpSplit] *= ranks;
  return shape;
}

/// Every rank's outcome of a step all of `comm` take: null when all
/// succeeded, else this rank's own failure or one naming the ranks that
/// failed by their rank in the job (a group of a grid numbers its members
/// otherwise).
dlc_status_t agree(const Session &s, Communicator &comm, dlc_status_t own,
                   const std::string &what) {
  // Slot r: member r's job rank plus one if it failed, else 0.
  std::vector<double> failed(static_cast<size_t>(comm.size()), 0.0);
  failed[static_cast<size_t>(comm.rank())] = own ? s.jobRank() + 1.0 : 0.0;
  dlc_status_t reduced =
      comm.allReduce(failed.data(), failed.size(), DLC_F64, DLC_REDUCE_SUM);
  if (own) {
    dlc_status_free(reduced);
    return own;
  }
  if (reduced)
    return prefixStatus(reduced, what);
  std::string ranks;
  for (double member : failed)
    if (member != 0)
      ranks += (ranks.empty() ? "" : ", ") +
               std::to_string(static_cast<int64_t>(member) - 1);
  if (ranks.empty())
    return nullptr;
  return makeStatus(DLC_FAILED_PRECONDITION,
                    what + ": rank " + ranks + " failed (see its error)");
}

/// Every member's `t` of `group`, in rank order, in `all`.
dlc_status_t allGatherTensors(Communicator &group, const Tensor &t,
                              std::vector<Tensor> &all) {
  const int ranks = group.size();
  std::vector<std::byte> bytes(t.byteSize() * ranks);
  std::vector<size_t> counts(ranks, t.byteSize());
  DLC_RETURN_IF_ERROR(
      group.allGather(t.bytes(), bytes.data(), counts.data(), DLC_U8));
  all.assign(ranks, t);
  for (int r = 0; r < ranks; ++r)
    std::copy_n(bytes.data() + r * t.byteSize(), t.byteSize(), all[r].bytes());
  return nullptr;
}

/// Global `index`'s whole value in `t`: this rank's; for a ZeRO-sharded
/// global, first the replicas' shards all-gathered over the session's
/// communicator (a tensor-parallel session always has it) and joined; for
/// a split global, then (with `join`) every tensor rank's slices
/// all-gathered over `tensor` and joined. Every rank of each group calls it
/// for the same globals in the same order, with the same `join`, and the
/// all-gathers run even when this rank's read failed, so that the groups'
/// collectives stay in step; the read's failure is returned.
dlc_status_t wholeGlobal(const Session &s, Communicator &tensor, size_t index,
                         bool join, Tensor &t) {
  const ValueInfo &g = s.module().globals()[index];
  StatusOwner read(globalTensor(s, index, t));
  std::vector<Tensor> parts;
  if (g.sharded) {
    DLC_RETURN_IF_ERROR(allGatherTensors(*s.communicator(), t, parts));
    t = gatherShards(parts, t.dtype(),
                     g.wholeShape ? *g.wholeShape : g.type.shape);
  }
  if (g.tpSplit < 0 || !join)
    return read.release();
  DLC_RETURN_IF_ERROR(allGatherTensors(tensor, t, parts));
  t = joinSlices(parts, g.tpSplit, g.tpSplitGroups);
  return read.release();
}

/// Whether this rank is in the tensor group of replica 0 of stage 0, whose
/// rank 0 (rank 0 of the job, RankLayout) writes what a tensor-parallel
/// job saves.
bool inWritersGroup(const Session &s) {
  return (!s.communicator() || s.communicator()->rank() == 0) &&
         s.pipelineStage() <= 0;
}

bool writesForJob(const Session &s, const Communicator &tensor) {
  return inWritersGroup(s) && tensor.rank() == 0;
}

/// `status` of any rank of a tensor-parallel job, on every rank: through
/// its replicas, then their tensor groups, then every stage.
dlc_status_t agreeEverywhere(const Session &s, Communicator &tensor,
                             dlc_status_t status, const std::string &what) {
  for (Communicator *group : {s.communicator(), &tensor, s.stageCommunicator()})
    if (group)
      status = agree(s, *group, status, what);
  return status;
}

/// The whole values of the globals `wanted` selects, in `into` on the
/// writer (writesForJob), every rank of a tensor-parallel job together:
/// first all agree on `before` (a failure this rank found already), then
/// the writer's tensor group gathers (the other groups have nothing to
/// give it, but ZeRO's shards, which every replica of stage 0 gathers for
/// its tensor rank), each rank keeping the first failure of its reads but
/// taking part in every collective, and then all agree again, so that the
/// writer writes only what every rank gave it.
dlc_status_t gatherForWriter(const Session &s, Communicator &tensor,
                             dlc_status_t before,
                             const std::function<bool(size_t)> &wanted,
                             NamedTensors &into, const std::string &what) {
  DLC_RETURN_IF_ERROR(agreeEverywhere(s, tensor, before, what));
  StatusOwner failed(nullptr);
  // ZeRO shards are gathered over every replica of stage 0.
  if (inWritersGroup(s) || (hasShardedGlobals(s) && s.pipelineStage() <= 0))
    for (size_t i = 0; i < s.module().globals().size(); ++i) {
      if (!wanted(i))
        continue;
      Tensor t;
      keepFirst(failed, wholeGlobal(s, tensor, i, inWritersGroup(s), t));
      if (writesForJob(s, tensor))
        into.emplace_back(s.module().globals()[i].name, std::move(t));
    }
  return agreeEverywhere(s, tensor, failed.release(), what);
}

/// A tensor-parallel module's checkpoint, every rank together: the split
/// globals' slices gathered from the writer's tensor group and joined, so
/// that the file holds the whole values one process (or another grid)
/// restores; rank 0 of the job writes it, and every rank learns whether
/// it did. `before`: this rank's failure found before, if any.
dlc_status_t saveTensorParallel(const Session &s, Communicator &tensor,
                                dlc_status_t before,
                                const std::string &directory,
                                const dlc_metadata_t *metadata, int32_t keep) {
  const std::string what =
      directory + ": the checkpoint of step " + std::to_string(s.step());
  CheckpointContents c;
  DLC_RETURN_IF_ERROR(gatherForWriter(
      s, tensor, before, [](size_t) { return true; }, c.tensors, what));
  auto write = [&]() -> dlc_status_t {
    if (!writesForJob(s, tensor))
      return nullptr;
    if (metadata)
      c.metadata = metadata->values;
    c.fingerprint = s.module().fingerprint();
    c.step = s.step();
    return writeCheckpoint(directory, c, keep);
  };
  return agreeEverywhere(s, tensor, guardStatus("saving a checkpoint", write),
                         what);
}

/// Writes this rank's part of a sharded checkpoint and, once every rank's
/// is on disk, commits the set on rank 0.
dlc_status_t saveSharded(const Session &s, Communicator &comm,
                         const std::string &directory,
                         const dlc_metadata_t *metadata, int32_t keep) {
  CheckpointContents head, part;
  head.fingerprint = part.fingerprint = s.module().fingerprint();
  head.step = part.step = s.step();
  head.ranks = part.ranks = comm.size();
  part.rank = comm.rank();
  if (metadata)
    head.metadata = metadata->values;
  const bool writesHead = comm.rank() == 0;
  // The set's id, rank 0's draw: a new one for every attempt, so that no
  // file of this set replaces one of a committed set of the same step.
  uint32_t set = writesHead ? std::random_device()() : 0;
  DLC_RETURN_IF_ERROR(comm.broadcast(&set, 1, DLC_U32, 0));
  head.set = part.set = set;
  // Every rank reaches each agreement whatever fails before it (an
  // exception included): one that left early would keep the others
  // waiting in it.
  auto write = [&]() -> dlc_status_t {
    for (size_t i = 0; i < s.module().globals().size(); ++i) {
      const ValueInfo &g = s.module().globals()[i];
      if (!g.sharded && !writesHead)
        continue;
      Tensor t;
      DLC_RETURN_IF_ERROR(globalTensor(s, i, t));
      (g.sharded ? part : head).tensors.emplace_back(g.name, std::move(t));
    }
    return writeCheckpointPart(directory, part);
  };
  // The head is written once every shard file is on disk: a head stands
  // for a whole set, and a commit removes the parts of sets without one.
  auto commit = [&]() -> dlc_status_t {
    if (!writesHead)
      return nullptr;
    DLC_RETURN_IF_ERROR(writeCheckpointPart(directory, head));
    return commitCheckpoint(directory, head, keep);
  };
  std::string what =
      directory + ": the checkpoint of step " + std::to_string(head.step);
  const std::function<dlc_status_t()> phases[] = {write, commit};
  for (const std::function<dlc_status_t()> &phase : phases)
    if (dlc_status_t agreed =
            agree(s, comm, guardStatus("saving a checkpoint", phase), what)) {
      if (writesHead)
        discardCheckpointPart(directory, head);
      discardCheckpointPart(directory, part);
      return agreed;
    }
  return nullptr;
}

} // namespace

extern "C" {

dlc_status_t dlc_metadata_create(dlc_metadata_t **out) {
  return guardStatus("dlc_metadata_create", [&]() -> dlc_status_t {
    if (!out)
      return makeStatus(DLC_INVALID_ARGUMENT, "dlc_metadata_create: no output");
    *out = new dlc_metadata_s();
    return nullptr;
  });
}

void dlc_metadata_release(dlc_metadata_t *metadata) { delete metadata; }

dlc_status_t dlc_metadata_set(dlc_metadata_t *metadata, const char *key,
                              int64_t value) {
  return guardStatus("dlc_metadata_set", [&]() -> dlc_status_t {
    if (!metadata || !key || !*key)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_metadata_set: no metadata or key");
    metadata->values[key] = value;
    return nullptr;
  });
}

dlc_status_t dlc_metadata_get(const dlc_metadata_t *metadata, const char *key,
                              int64_t *value) {
  return guardStatus("dlc_metadata_get", [&]() -> dlc_status_t {
    if (!metadata || !key || !value)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_metadata_get: no metadata, key or output");
    auto it = metadata->values.find(key);
    if (it == metadata->values.end())
      return makeStatus(DLC_NOT_FOUND,
                        std::string("no metadata key '") + key + "'");
    *value = it->second;
    return nullptr;
  });
}

size_t dlc_metadata_count(const dlc_metadata_t *metadata) {
  return metadata ? metadata->values.size() : 0;
}

dlc_status_t dlc_metadata_entry(const dlc_metadata_t *metadata, size_t index,
                                const char **key, int64_t *value) {
  return guardStatus("dlc_metadata_entry", [&]() -> dlc_status_t {
    if (!metadata || !key || !value)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_metadata_entry: no metadata, key or value");
    if (index >= metadata->values.size())
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_metadata_entry: index " + std::to_string(index) +
                            " of " + std::to_string(metadata->values.size()) +
                            " entries");
    auto it =
        std::next(metadata->values.begin(), static_cast<std::ptrdiff_t>(index));
    *key = it->first.c_str();
    *value = it->second;
    return nullptr;
  });
}

dlc_status_t dlc_session_save_checkpoint(dlc_session_t *session,
                                         const char *directory,
                                         const dlc_metadata_t *metadata,
                                         int32_t keep) {
  return guardStatus("dlc_session_save_checkpoint", [&]() -> dlc_status_t {
    if (!session || !directory || !*directory)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_save_checkpoint: no session or "
                        "directory");
    if (keep < 0)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        std::string(directory) + ": keep " +
                            std::to_string(keep) +
                            " checkpoints (expected 0 for all, or more)");
    const Session &s = *session->session;
    // A tensor-parallel module's ranks agree on a failure before any
    // collective.
    if (s.module().tensorParallelRanks() > 1) {
      dlc_status_t status = nullptr;
      Communicator *tensor = tensorGroup(s, directory, status);
      return tensor
                 ? saveTensorParallel(s, *tensor, checkAllGathered(s, "saving"),
                                      directory, metadata, keep)
                 : status;
    }
    DLC_RETURN_IF_ERROR(checkAllGathered(s, "saving"));
    if (hasShardedGlobals(s)) {
      dlc_status_t status = nullptr;
      Communicator *comm = shardingComm(s, directory, status);
      if (!comm)
        return status;
      // A pipelined module's ranks hold every stage's globals by now, a
      // replica's shards of each on all of its stages: stage 0's replicas
      // write the set (part r is replica r's), and the other stages learn
      // whether they did.
      if (s.pipelineStage() <= 0)
        status = saveSharded(s, *comm, directory, metadata, keep);
      if (Communicator *stages = s.stageCommunicator())
        status = agree(s, *stages, status,
                       std::string(directory) + ": the checkpoint of step " +
                           std::to_string(s.step()));
      return status;
    }
    CheckpointContents c;
    for (size_t i = 0; i < s.module().globals().size(); ++i) {
      Tensor t;
      DLC_RETURN_IF_ERROR(globalTensor(s, i, t));
      c.tensors.emplace_back(s.module().globals()[i].name, std::move(t));
    }
    if (metadata)
      c.metadata = metadata->values;
    c.fingerprint = s.module().fingerprint();
    c.step = s.step();
    return writeCheckpoint(directory, c, keep);
  });
}

dlc_status_t dlc_session_load_checkpoint(dlc_session_t *session,
                                         const char *directory,
                                         dlc_metadata_t **metadata) {
  return guardStatus("dlc_session_load_checkpoint", [&]() -> dlc_status_t {
    if (!session || !directory || !*directory)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_load_checkpoint: no session or "
                        "directory");
    if (metadata)
      *metadata = nullptr;
    Session &s = *session->session;
    // A tensor-parallel module's ranks restore their slices of the whole.
    Communicator *tensor = nullptr;
    if (s.module().tensorParallelRanks() > 1) {
      dlc_status_t status = nullptr;
      if (!(tensor = tensorGroup(s, directory, status)))
        return status;
    }
    // A sharded module restores the set's head and its own rank's shards; a
    // tensor-parallel one its part of each whole value, ZeRO's shards too.
    int rank = -1;
    if (hasShardedGlobals(s)) {
      dlc_status_t status = nullptr;
      Communicator *comm = shardingComm(s, directory, status);
      if (!comm)
        return status;
      if (!tensor)
        rank = comm->rank();
    }
    CheckpointContents c;
    std::vector<const Tensor *> values;
    // This rank's slices of the split globals (a deque: values point in).
    std::deque<Tensor> slices;
    auto check = [&]() -> dlc_status_t {
      DLC_RETURN_IF_ERROR(readCheckpoint(directory, c, rank));
      if (rank >= 0 && c.ranks != s.communicator()->size())
        return makeStatus(
            DLC_FAILED_PRECONDITION,
            std::string(directory) + ": " +
                (c.ranks ? "its optimizer state is sharded over " +
                               std::to_string(c.ranks) + " ranks"
                         : std::string("it is a whole checkpoint")) +
                ", but module " + s.module().name() + " shards it over " +
                std::to_string(s.communicator()->size()));
      std::vector<CheckpointSlot> slots;
      for (const ValueInfo &g : s.module().globals())
        slots.push_back(
            {g.name, g.type.dtype, wholeShape(g, tensor ? tensor->size() : 1)});
      DLC_RETURN_IF_ERROR(matchCheckpoint(c, directory, s.module().name(),
                                          s.module().fingerprint(), slots,
                                          values));
      for (size_t i = 0; tensor && i < values.size(); ++i) {
        const ValueInfo &g = s.module().globals()[i];
        if (g.tpSplit >= 0) {
          slices.push_back(sliceOf(*values[i], g.tpSplit, tensor->rank(),
                                   tensor->size(), g.tpSplitGroups));
          values[i] = &slices.back();
        }
        if (g.sharded) {
          const Communicator &replicas = *s.communicator();
          slices.push_back(
              shardOf(*values[i], replicas.rank(), replicas.size()));
          values[i] = &slices.back();
        }
      }
      return nullptr;
    };
    dlc_status_t checked = guardStatus("restoring a checkpoint", check);
    // The ranks of a sharded or tensor-parallel module restore a set
    // together or not at all.
    const std::string what =
        std::string(directory) + ": restoring the checkpoint";
    if (rank >= 0) {
      checked = agree(s, *s.communicator(), checked, what);
      if (!tensor && s.stageCommunicator())
        checked = agree(s, *s.stageCommunicator(), checked, what);
    }
    if (tensor)
      checked = agreeEverywhere(s, *tensor, checked, what);
    DLC_RETURN_IF_ERROR(checked);
    // Everything that can fail has been checked: from here on the session
    // changes all at once (only a failing device can stop the copies, and
    // that leaves the whole session unusable anyway).
    std::unique_ptr<dlc_metadata_s> meta;
    if (metadata)
      meta = std::make_unique<dlc_metadata_s>(dlc_metadata_s{c.metadata});
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i]->byteSize())
        DLC_RETURN_IF_ERROR(s.writeGlobal(i, values[i]->bytes()));
    // The copies are saved too, but follow their sources whatever the file
    // holds.
    DLC_RETURN_IF_ERROR(s.refreshCopies());
    s.setCallCount(c.step);
    if (metadata)
      *metadata = meta.release();
    return nullptr;
  });
}

dlc_status_t dlc_session_export_onnx(dlc_session_t *session, const char *path) {
  return guardStatus("dlc_session_export_onnx", [&]() -> dlc_status_t {
    if (!session || !path || !*path)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_export_onnx: no session or path");
    const Session &s = *session->session;
    const auto *model = s.module().root().onnx_model();
    if (!model || !model->size())
      return makeStatus(DLC_FAILED_PRECONDITION,
                        s.module().name() +
                            ": the module kept no ONNX model to export "
                            "into");
    // A tensor-parallel module's ranks export together: each split
    // parameter's slices are gathered, and rank 0 of the job writes.
    Communicator *tensor = nullptr;
    if (s.module().tensorParallelRanks() > 1) {
      dlc_status_t status = nullptr;
      if (!(tensor = tensorGroup(s, path, status)))
        return status;
    }
    const std::string what = std::string(path) + ": exporting the model";
    const auto &globals = s.module().globals();
    auto exported = [&](size_t i) { return isExportedRole(globals[i].role); };
    NamedTensors initializers;
    if (tensor) {
      DLC_RETURN_IF_ERROR(gatherForWriter(s, *tensor,
                                          checkAllGathered(s, "exporting"),
                                          exported, initializers, what));
    } else {
      DLC_RETURN_IF_ERROR(checkAllGathered(s, "exporting"));
      for (size_t i = 0; i < globals.size(); ++i)
        if (exported(i)) {
          Tensor t;
          DLC_RETURN_IF_ERROR(globalTensor(s, i, t));
          initializers.emplace_back(globals[i].name, std::move(t));
        }
    }
    auto write = [&]() -> dlc_status_t {
      if (tensor && !writesForJob(s, *tensor))
        return nullptr;
      std::string bytes;
      StatusOwner appended(appendOnnxInitializers(
          std::string(reinterpret_cast<const char *>(model->data()),
                      model->size()),
          initializers, bytes));
      // The caller gave no initializers: one the ONNX model already has,
      // or one without a name, is the module contradicting itself.
      if (appended.get() &&
          dlc_status_code(appended.get()) == DLC_INVALID_ARGUMENT)
        appended.reset(
            makeStatus(DLC_DATA_LOSS, dlc_status_message(appended.get())));
      DLC_RETURN_IF_ERROR(
          prefixStatus(appended.release(),
                       s.module().name() + ": cannot export its ONNX model"));
      return writeFileAtomically(path, bytes);
    };
    if (!tensor)
      return write();
    return agreeEverywhere(s, *tensor, guardStatus("exporting", write), what);
  });
}

} // extern "C"
