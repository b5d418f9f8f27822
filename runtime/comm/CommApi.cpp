//===- CommApi.cpp - dlc_comm_* of the C API ------------------------------===//
//
// The C API's communicators: a handle owns one dlc::Communicator
// (Communicator.h), which checks arguments and names the collective in its
// messages; this file adds the checks of the handle and of the outputs.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"
#include "runtime/core/Status.h"

using namespace dlc;

extern "C" {

dlc_status_t dlc_comm_open(const char *kind, double timeout_seconds,
                           dlc_comm_t **out) {
  return guardStatus("dlc_comm_open", [&]() -> dlc_status_t {
    if (!kind || !out)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_open: no communicator kind or output");
    *out = nullptr;
    std::unique_ptr<Communicator> comm;
    DLC_RETURN_IF_ERROR(openCommunicator(kind, timeout_seconds, comm));
    *out = new dlc_comm_s{std::move(comm)};
    return nullptr;
  });
}

void dlc_comm_release(dlc_comm_t *comm) { delete comm; }

void dlc_comm_abort(dlc_comm_t *comm, int32_t code) {
  if (comm)
    comm->comm->abort(code);
}

const char *dlc_comm_kind(const dlc_comm_t *comm) {
  return comm ? comm->comm->kind() : "";
}

int32_t dlc_comm_rank(const dlc_comm_t *comm) {
  return comm ? comm->comm->rank() : 0;
}

int32_t dlc_comm_size(const dlc_comm_t *comm) {
  return comm ? comm->comm->size() : 0;
}

int32_t dlc_comm_local_rank(const dlc_comm_t *comm) {
  return comm ? comm->comm->localRank() : 0;
}

dlc_status_t dlc_comm_all_reduce(dlc_comm_t *comm, void *data, size_t count,
                                 dlc_dtype_t dtype, dlc_reduce_op_t op) {
  return guardStatus("dlc_comm_all_reduce", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_all_reduce: no communicator");
    return comm->comm->allReduce(data, count, dtype, op);
  });
}

dlc_status_t dlc_comm_reduce_scatter(dlc_comm_t *comm, const void *send,
                                     void *recv, const size_t *counts,
                                     dlc_dtype_t dtype, dlc_reduce_op_t op) {
  return guardStatus("dlc_comm_reduce_scatter", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_reduce_scatter: no communicator");
    return comm->comm->reduceScatter(send, recv, counts, dtype, op);
  });
}

dlc_status_t dlc_comm_all_gather(dlc_comm_t *comm, const void *send, void *recv,
                                 const size_t *counts, dlc_dtype_t dtype) {
  return guardStatus("dlc_comm_all_gather", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_all_gather: no communicator");
    return comm->comm->allGather(send, recv, counts, dtype);
  });
}

dlc_status_t dlc_comm_broadcast(dlc_comm_t *comm, void *data, size_t count,
                                dlc_dtype_t dtype, int32_t root) {
  return guardStatus("dlc_comm_broadcast", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_broadcast: no communicator");
    return comm->comm->broadcast(data, count, dtype, root);
  });
}

dlc_status_t dlc_comm_send(dlc_comm_t *comm, const void *data, size_t count,
                           dlc_dtype_t dtype, int32_t peer) {
  return guardStatus("dlc_comm_send", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT, "dlc_comm_send: no communicator");
    return comm->comm->send(data, count, dtype, peer);
  });
}

dlc_status_t dlc_comm_recv(dlc_comm_t *comm, void *data, size_t count,
                           dlc_dtype_t dtype, int32_t peer) {
  return guardStatus("dlc_comm_recv", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT, "dlc_comm_recv: no communicator");
    return comm->comm->recv(data, count, dtype, peer);
  });
}

dlc_status_t dlc_comm_barrier(dlc_comm_t *comm) {
  return guardStatus("dlc_comm_barrier", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_barrier: no communicator");
    return comm->comm->barrier();
  });
}

dlc_status_t dlc_comm_split(dlc_comm_t *comm, int32_t color, int32_t key,
                            dlc_comm_t **out) {
  return guardStatus("dlc_comm_split", [&]() -> dlc_status_t {
    if (!comm)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_split: no communicator");
    // Without an output this rank still takes part (the others are in the
    // split), then drops its part: skipping it would pair this rank's next
    // collective with their split.
    if (out)
      *out = nullptr;
    std::unique_ptr<Communicator> part;
    DLC_RETURN_IF_ERROR(comm->comm->split(color, key, part));
    if (!out)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_comm_split: no output (the split was made and "
                        "released)");
    *out = new dlc_comm_s{std::move(part)};
    return nullptr;
  });
}

} // extern "C"
