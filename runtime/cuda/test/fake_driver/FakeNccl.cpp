//===- FakeNccl.cpp - An NCCL of mirrored ranks beside the fake driver ----===//
//
// libnccl.so.2 for testing the CUDA session's collectives where there is no
// GPU and no NCCL: put beside the fake driver (FakeDriver.cpp) on
// LD_LIBRARY_PATH, it is what runtime/cuda/Nccl.cpp opens, and it exports
// every function Nccl.h binds.
//
// One process stands for every rank of the communicator it joins, and the
// other ranks' data follow from this one's by fixed rules, so that a test
// knows every result exactly for whichever rank it plays, and each block
// of a bucket is read:
// - all-reduce: every rank holds this one's data (mirrored ranks): the sum
//   is nranks times it, the average the data itself;
// - reduce-scatter: rank q's block for this rank is this rank's block q
//   times q + 1 (transposed and weighted), so the result is the sum of this
//   rank's blocks so weighted (divided by nranks for the average), and a
//   block packed wrong anywhere, or in another's place, shows;
// - all-gather: rank q sends this rank's block with every byte XOR-ed with
//   (q - rank) mod 256, so each gathered block is told apart;
// - broadcast copies.
//
// The collectives run as the fake driver's streams run work: when the
// stream reaches them, after what was enqueued before and once the events
// the stream waits for are done (dlc_fake_enqueue_host). Their buffers must
// be the fake device's memory. Communicators are non-blocking as dlc asks,
// complete at once and never fail; float32, float64, float16 and bfloat16
// are reduced (in float64, rounded to their type through float32).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/test/fake_driver/FakeDriver.h"
#include "runtime/support/Float16.h"

#include <cuda.h>
#include <nccl.h>

#include <cstring>
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

/// Element i of `data`, of reducible `type`, as a double.
double load(ncclDataType_t type, const unsigned char *data, size_t i) {
  switch (type) {
  case ncclFloat32:
    return reinterpret_cast<const float *>(data)[i];
  case ncclFloat64:
    return reinterpret_cast<const double *>(data)[i];
  case ncclFloat16:
    return static_cast<float>(reinterpret_cast<const dlc::Half *>(data)[i]);
  default:
    return static_cast<float>(reinterpret_cast<const dlc::BFloat16 *>(data)[i]);
  }
}

void store(ncclDataType_t type, unsigned char *data, size_t i, double value) {
  switch (type) {
  case ncclFloat32:
    reinterpret_cast<float *>(data)[i] = static_cast<float>(value);
    break;
  case ncclFloat64:
    reinterpret_cast<double *>(data)[i] = value;
    break;
  case ncclFloat16:
    reinterpret_cast<dlc::Half *>(data)[i] =
        dlc::Half(static_cast<float>(value));
    break;
  default:
    reinterpret_cast<dlc::BFloat16 *>(data)[i] =
        dlc::BFloat16(static_cast<float>(value));
  }
}

/// What a collective does when its stream reaches it. A reduction writes
/// `count` elements: `factor` times the sum of `blocks` blocks of `from`,
/// `bytes` apart, block b times b + 1 when `weighted`. A copy writes
/// `copies` blocks of `bytes` side by side, copy c of `from` XOR-ed with
/// (c - rank) mod 256.
struct Work {
  const unsigned char *from = nullptr;
  unsigned char *to = nullptr;
  size_t bytes = 0;
  bool reduce = false, weighted = false;
  size_t blocks = 1, count = 0;
  ncclDataType_t type = ncclFloat32;
  double factor = 1;
  size_t copies = 1;
  int rank = 0;
};

void runWork(void *argument) {
  Work *work = static_cast<Work *>(argument);
  // Read whole first: `from` may overlap `to` (in place).
  std::vector<unsigned char> source(work->from,
                                    work->from + work->bytes * work->blocks);
  if (work->reduce) {
    for (size_t i = 0; i < work->count; ++i) {
      double sum = 0;
      for (size_t b = 0; b < work->blocks; ++b)
        sum += (work->weighted ? b + 1.0 : 1.0) *
               load(work->type, source.data() + b * work->bytes, i);
      store(work->type, work->to, i, work->factor * sum);
    }
  } else {
    for (size_t c = 0; c < work->copies; ++c) {
      auto tag = static_cast<unsigned char>(c - work->rank);
      for (size_t i = 0; i < work->bytes; ++i)
        work->to[c * work->bytes + i] = source[i] ^ tag;
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
  Work work;
  work.from = static_cast<const unsigned char *>(send);
  work.to = static_cast<unsigned char *>(recv);
  work.bytes = count * typeSize(type);
  work.reduce = true;
  work.count = count;
  work.type = type;
  work.factor = op == ncclSum ? c.ranks : 1;
  return enqueue("nccl all_reduce", send, work.bytes, recv, work.bytes, work,
                 stream);
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count,
                               ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  const Comm &c = *reinterpret_cast<Comm *>(comm);
  if (!reducible(type) || (op != ncclSum && op != ncclAvg))
    return ncclInvalidArgument;
  Work work;
  work.from = static_cast<const unsigned char *>(send);
  work.to = static_cast<unsigned char *>(recv);
  work.bytes = count * typeSize(type);
  work.reduce = work.weighted = true;
  work.blocks = static_cast<size_t>(c.ranks);
  work.count = count;
  work.type = type;
  work.factor = op == ncclSum ? 1 : 1.0 / c.ranks;
  return enqueue("nccl reduce_scatter", send, c.ranks * work.bytes, recv,
                 work.bytes, work, stream);
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream) {
  const Comm &c = *reinterpret_cast<Comm *>(comm);
  Work work;
  work.from = static_cast<const unsigned char *>(send);
  work.to = static_cast<unsigned char *>(recv);
  work.bytes = count * typeSize(type);
  work.copies = static_cast<size_t>(c.ranks);
  work.rank = c.rank;
  return enqueue("nccl all_gather", send, work.bytes, recv,
                 c.ranks * work.bytes, work, stream);
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  const Comm &c = *reinterpret_cast<Comm *>(comm);
  if (root < 0 || root >= c.ranks)
    return ncclInvalidArgument;
  Work work;
  work.from = static_cast<const unsigned char *>(send);
  work.to = static_cast<unsigned char *>(recv);
  work.bytes = count * typeSize(type);
  return enqueue("nccl broadcast", send, work.bytes, recv, work.bytes, work,
                 stream);
}

} // extern "C"
