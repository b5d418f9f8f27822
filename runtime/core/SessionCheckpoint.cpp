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
//===----------------------------------------------------------------------===//
#include "runtime/core/Handles.h"
#include "runtime/core/Session.h"
#include "runtime/core/Status.h"
#include "runtime/support/Checkpoint.h"
#include "runtime/support/OnnxExport.h"

#include <cstddef>
#include <iterator>

using namespace dlc;

namespace {

dlc_status_t globalTensor(const Session &session, size_t index, Tensor &t) {
  const ValueInfo &info = session.module().globals()[index];
  t = Tensor(info.type.dtype, info.type.shape);
  return t.byteSize() ? session.readGlobal(index, t.bytes()) : nullptr;
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
    CheckpointContents c;
    DLC_RETURN_IF_ERROR(readCheckpoint(directory, c));
    std::vector<CheckpointSlot> slots;
    for (const ValueInfo &g : s.module().globals())
      slots.push_back({g.name, g.type.dtype, g.type.shape});
    std::vector<const Tensor *> values;
    DLC_RETURN_IF_ERROR(matchCheckpoint(c, directory, s.module().name(),
                                        s.module().fingerprint(), slots,
                                        values));
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
    NamedTensors initializers;
    const auto &globals = s.module().globals();
    for (size_t i = 0; i < globals.size(); ++i)
      if (isExportedRole(globals[i].role)) {
        Tensor t;
        DLC_RETURN_IF_ERROR(globalTensor(s, i, t));
        initializers.emplace_back(globals[i].name, std::move(t));
      }
    std::string bytes;
    StatusOwner appended(appendOnnxInitializers(
        std::string(reinterpret_cast<const char *>(model->data()),
                    model->size()),
        initializers, bytes));
    // The caller gave no initializers: one the ONNX model already has, or
    // one without a name, is the module contradicting itself.
    if (appended.get() &&
        dlc_status_code(appended.get()) == DLC_INVALID_ARGUMENT)
      appended.reset(
          makeStatus(DLC_DATA_LOSS, dlc_status_message(appended.get())));
    DLC_RETURN_IF_ERROR(
        prefixStatus(appended.release(),
                     s.module().name() + ": cannot export its ONNX model"));
    return writeFileAtomically(path, bytes);
  });
}

} // extern "C"
