//===- FakeNccl.cpp - An NCCL of mirrored ranks beside the fake driver ----===//
//
// libnccl.so.2 for testing the CUDA session's collectives where there is no
// GPU and no NCCL: put beside the fake driver (FakeDriver.cpp) on
// LD_LIBRARY_PATH, it is what runtime/cuda/Nccl.cpp opens, and it exports
// every function Nccl.h binds.
//
// One process stands for every rank of the communicator it joins, by the
// rule that the other ranks hold what this one holds (mirrored ranks): an
// all-reduce's sum is nranks times this rank's data and its average the
// data itself, a reduce-scatter leaves this rank's block of that, an
// all-gather repeats this rank's block nranks times, a broadcast copies.
// A test that gives every rank the same data therefore knows each result
// exactly, for any rank it plays, and a wrong offset, block or count shows.
//
// The collectives run as the fake driver's streams run work: when the
// stream reaches them, after what was enqueued before and once the events
// the stream waits for are done (dlc_fake_enqueue_host). Their buffers must
// be the fake device's memory. Communicators are non-blocking as dlc asks,
// complete at once and never fail; float32, float64, float16 and bfloat16
// are reduced (16-bit data in float32, rounded once, as NCCL does for a
// sum of two).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/test/fake_driver/FakeDriver.h"
#include "runtime/support/Float16.h"

#include <cuda.h>
#include <nccl.h>

#include <cstring>
#include <type_traits>
#include <vector>

namespace {

struct Comm {
  int ranks = 1, rank = 0;
};

size_t typeSize(ncclDataType_t type) {
  switch (type) {
  case ncclInt8:
  case ncclUint8:
  case ncclFloat8e4m3:
  case ncclFloat8e5m2:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  default:
    return 8;
  }
}

bool reducible(ncclDataType_t type) {
  return type == ncclFloat32 || type == ncclFloat64 || type == ncclFloat16 ||
         type == ncclBfloat16;
}

/// Element i of `data` times `factor`, stored back in its type.
template <typename T> void scale(void *data, size_t count, double factor) {
  T *values = static_cast<T *>(data);
  for (size_t i = 0; i < count; ++i) {
    if constexpr (std::is_same_v<T, double>)
      values[i] *= factor;
    else
      values[i] = T(static_cast<float>(values[i]) * static_cast<float>(factor));
  }
}

/// What a collective does when its stream reaches it: copy `bytes` from
/// `from` to `to` `copies` times, side by side, then scale the `count`
/// elements at `to` by `factor` (1: unchanged).
struct Work {
  const unsigned char *from;
  unsigned char *to;
  size_t bytes, copies, count;
  ncclDataType_t type;
  double factor;
};

void runWork(void *argument) {
  Work *work = static_cast<Work *>(argument);
  // Gathered into a copy first: `from` may be a block of `to`.
  std::vector<unsigned char> block(work->from, work->from + work->bytes);
  for (size_t c = 0; c < work->copies; ++c)
    std::memcpy(work->to + c * work->bytes, block.data(), work->bytes);
  if (work->factor != 1) {
    switch (work->type) {
    case ncclFloat32:
      scale<float>(work->to, work->count, work->factor);
      break;
    case ncclFloat64:
      scale<double>(work->to, work->count, work->factor);
      break;
    case ncclFloat16:
      scale<dlc::Half>(work->to, work->count, work->factor);
      break;
    default:
      scale<dlc::BFloat16>(work->to, work->count, work->factor);
      break;
    }
  }
  delete work;
}

/// Checks the buffers and enqueues `work` on `stream`, traced as `what`.
ncclResult_t enqueue(const char *what, const void *send, size_t sendBytes,
                     void *recv, size_t recvBytes, Work work,
                     cudaStream_t stream) {
  if ((sendBytes && !dlc_fake_is_device_memory(send, sendBytes)) ||
      (recvBytes && !dlc_fake_is_device_memory(recv, recvBytes)))
    return ncclInvalidArgument;
  Work *owned = new Work(work);
  if (dlc_fake_enqueue_host(stream, what, runWork, owned) != CUDA_SUCCESS) {
    delete owned;
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

/// The factor a reduction `op` over `comm`'s mirrored ranks multiplies by.
double factorOf(const Comm &comm, ncclRedOp_t op) {
  return op == ncclSum ? comm.ranks : 1;
}

} // namespace

extern "C" {

ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t) { return "fake NCCL error"; }

const char *ncclGetLastError(ncclComm_t) { return ""; }

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::memset(id->internal, 7, sizeof(id->internal));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int ranks, ncclUniqueId,
                                    int rank, ncclConfig_t *) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    return ncclInvalidArgument;
  *comm = reinterpret_cast<ncclComm_t>(new Comm{ranks, rank});
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t *state) {
  *state = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete reinterpret_cast<Comm *>(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete reinterpret_cast<Comm *>(comm);
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  const Comm &c = *reinterpret_cast<Comm *>(comm);
  if (!reducible(type) || (op != ncclSum && op != ncclAvg))
    return ncclInvalidArgument;
  size_t bytes = count * typeSize(type);
  return enqueue("nccl all_reduce", send, bytes, recv, bytes,
                 {static_cast<const unsigned char *>(send),
                  static_cast<unsigned char *>(recv), bytes, 1, count, type,
                  factorOf(c, op)},
                 stream);
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  const Comm &c = *reinterpret_cast<Comm *>(comm);
  if (!reducible(type) || (op != ncclSum && op != ncclAvg))
    return ncclInvalidArgument;
  size_t bytes = count * typeSize(type);
  auto *block = static_cast<const unsigned char *>(send) + c.rank * bytes;
  return enqueue("nccl reduce_scatter", send, c.ranks * bytes, recv, bytes,
                 {block, static_cast<unsigned char *>(recv), bytes, 1, count,
                  type, factorOf(c, op)},
                 stream);
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  const Comm &c = *reinterpret_cast<Comm *>(comm);
  size_t bytes = count * typeSize(type);
  return enqueue("nccl all_gather", send, bytes, recv, c.ranks * bytes,
                 {static_cast<const unsigned char *>(send),
                  static_cast<unsigned char *>(recv), bytes,
                  static_cast<size_t>(c.ranks), count, type, 1},
                 stream);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  const Comm &c = *reinterpret_cast<Comm *>(comm);
  if (root < 0 || root >= c.ranks)
    return ncclInvalidArgument;
  size_t bytes = count * typeSize(type);
  return enqueue("nccl broadcast", send, bytes, recv, bytes,
                 {static_cast<const unsigned char *>(send),
                  static_cast<unsigned char *>(recv), bytes, 1, count, type, 1},
                 stream);
}

} // extern "C"
