//===- NcclCommunicator.cpp - Collectives on device memory over NCCL ------===//
#include "runtime/cuda/NcclCommunicator.h"

#include "runtime/core/Status.h"
#include "runtime/cuda/CudaDevice.h"

#include <chrono>
#include <cstdint>
#include <sstream>
#include <thread>

namespace dlc::cuda {

namespace {

/// NCCL's type of a reducible dtype (checkReduction passed).
ncclDataType_t ncclTypeOf(dlc_dtype_t dtype) {
  switch (dtype) {
  case DLC_F64:
    return ncclFloat64;
  case DLC_BF16:
    return ncclBfloat16;
  case DLC_F16:
    return ncclFloat16;
  default:
    return ncclFloat32;
  }
}

/// "all_reduce of 1000 float32 elements".
std::string describe(const char *collective, size_t count, dlc_dtype_t dtype) {
  return std::string(collective) + " of " + std::to_string(count) + " " +
         dtypeName(dtype) + " elements";
}

/// The rank-independent check of a collective that moves bytes: any dtype
/// whose size is known.
dlc_status_t checkMovable(const char *collective, dlc_dtype_t dtype) {
  if (dlc_dtype_size(dtype) == 0)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string(collective) + ": " + dtypeName(dtype));
  return nullptr;
}

} // namespace

NcclDriverCalls NcclDriverCalls::of(const Driver &driver) {
  NcclDriverCalls calls;
  calls.cuCtxSetCurrent = driver.cuCtxSetCurrent;
  calls.cuStreamQuery = driver.cuStreamQuery;
  calls.check = [&driver](CUresult result, const std::string &call) {
    return driver.check(result, call);
  };
  return calls;
}

NcclCommunicator::NcclCommunicator(const Communicator &host,
                                   std::shared_ptr<const Nccl> nccl,
                                   NcclDriverCalls driver, CUcontext context)
    : nccl_(std::move(nccl)), driver_(std::move(driver)), context_(context),
      rank_(host.rank()), size_(host.size()), timeout_(host.timeout()) {}

dlc_status_t NcclCommunicator::open(Communicator &host,
                                    std::shared_ptr<const Nccl> nccl,
                                    NcclDriverCalls driver, CUcontext context,
                                    std::unique_ptr<NcclCommunicator> &out) {
  std::unique_ptr<NcclCommunicator> comm(
      new NcclCommunicator(host, std::move(nccl), std::move(driver), context));
  const Nccl &api = *comm->nccl_;
  DLC_RETURN_IF_ERROR(comm->makeCurrent());
  ncclUniqueId id{};
  if (host.rank() == 0)
    DLC_RETURN_IF_ERROR(
        api.check(api.ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr));
  DLC_RETURN_IF_ERROR(host.broadcast(&id, sizeof(id), DLC_U8, /*root=*/0));
  // Non-blocking, so that a rank that never joins is a timeout here rather
  // than a hang inside NCCL.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t result = api.ncclCommInitRankConfig(&comm->comm_, comm->size_,
                                                   id, comm->rank_, &config);
  if (result != ncclInProgress)
    DLC_RETURN_IF_ERROR(
        comm->fail(api.check(result, "ncclCommInitRankConfig", comm->comm_)));
  DLC_RETURN_IF_ERROR(comm->waitUntil("ncclCommInitRankConfig", nullptr));
  out = std::move(comm);
  return nullptr;
}

NcclCommunicator::~NcclCommunicator() {
  if (!comm_)
    return;
  StatusOwner current(makeCurrent());
  nccl_->ncclCommDestroy(comm_);
}

dlc_status_t NcclCommunicator::makeCurrent() const {
  return driver_.check(driver_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

dlc_status_t NcclCommunicator::checkUsable(const char *collective) const {
  if (failure_.empty())
    return nullptr;
  return makeStatus(DLC_FAILED_PRECONDITION,
                    std::string(collective) +
                        ": the NCCL communicator failed earlier (" + failure_ +
                        ")");
}

dlc_status_t NcclCommunicator::fail(dlc_status_t status) {
  if (!status)
    return nullptr;
  if (failure_.empty())
    failure_ = dlc_status_message(status);
  if (comm_) {
    // Abort rather than destroy: it also ends this rank's kernels still
    // waiting for a peer, which would otherwise never complete.
    StatusOwner current(makeCurrent());
    nccl_->ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  return status;
}

dlc_status_t
NcclCommunicator::waitUntil(const std::string &what,
                            const std::function<bool(dlc_status_t &)> &ready) {
  const Nccl &api = *nccl_;
  auto start = std::chrono::steady_clock::now();
  std::string where =
      " on rank " + std::to_string(rank_) + " of " + std::to_string(size_);
  for (int polls = 0;; ++polls) {
    ncclResult_t state = ncclSuccess;
    DLC_RETURN_IF_ERROR(fail(api.check(api.ncclCommGetAsyncError(comm_, &state),
                                       "ncclCommGetAsyncError", comm_)));
    if (state != ncclSuccess && state != ncclInProgress)
      return fail(api.check(state, what + where, comm_));
    if (state == ncclSuccess) {
      if (!ready)
        return nullptr;
      dlc_status_t error = nullptr;
      if (ready(error))
        return nullptr;
      DLC_RETURN_IF_ERROR(fail(error));
    }
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (waited.count() >= timeout_) {
      std::ostringstream message;
      message << what << " timed out after " << timeout_ << " s" << where
              << "; the NCCL communicator was aborted";
      return fail(makeStatus(DLC_DEADLINE_EXCEEDED, message.str()));
    }
    // As the MPI communicator waits: a short wait stays responsive, a
    // long one leaves the core to the rank's other threads.
    if (polls >= 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

dlc_status_t NcclCommunicator::enqueued(ncclResult_t result, const char *call,
                                        std::string what) {
  pending_ = std::move(what);
  // A non-blocking communicator may still be enqueueing; the stream must
  // not be used (nor NCCL called again) until its state is ncclSuccess.
  if (result == ncclInProgress)
    return waitUntil(pending_, nullptr);
  return fail(nccl_->check(result, call, comm_));
}

ncclRedOp_t NcclCommunicator::reduction(dlc_reduce_op_t op) const {
  // One rank's mean is its sum. NCCL 2.28.9's ncclAvg over one rank left a
  // reduce-scatter's last count % 4 elements unwritten (H200, 2026-11-27:
  // 2^20 + 3 elements, float32 and bfloat16), where ncclSum wrote them.
  return op == DLC_REDUCE_MEAN && size_ > 1 ? ncclAvg : ncclSum;
}

dlc_status_t NcclCommunicator::allReduce(void *data, size_t count,
                                         dlc_dtype_t dtype, dlc_reduce_op_t op,
                                         CUstream stream) {
  DLC_RETURN_IF_ERROR(checkUsable("all_reduce"));
  DLC_RETURN_IF_ERROR(checkReduction("all_reduce", dtype, op));
  DLC_RETURN_IF_ERROR(fail(checkPointer("all_reduce", "data", data, count)));
  if (count == 0)
    return nullptr;
  DLC_RETURN_IF_ERROR(fail(makeCurrent()));
  return enqueued(nccl_->ncclAllReduce(data, data, count, ncclTypeOf(dtype),
                                       reduction(op), comm_, stream),
                  "ncclAllReduce", describe("all_reduce", count, dtype));
}

dlc_status_t NcclCommunicator::reduceScatter(const void *send, void *recv,
                                             size_t recvCount,
                                             dlc_dtype_t dtype,
                                             dlc_reduce_op_t op,
                                             CUstream stream) {
  DLC_RETURN_IF_ERROR(checkUsable("reduce_scatter"));
  DLC_RETURN_IF_ERROR(checkReduction("reduce_scatter", dtype, op));
  if (recvCount > SIZE_MAX / dlc_dtype_size(dtype) / size_)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "reduce_scatter: " + std::to_string(size_) +
                          " blocks of " + std::to_string(recvCount) +
                          " elements overflow size_t");
  DLC_RETURN_IF_ERROR(fail(
      checkPointer("reduce_scatter", "send buffer", send, recvCount * size_)));
  DLC_RETURN_IF_ERROR(
      fail(checkPointer("reduce_scatter", "receive buffer", recv, recvCount)));
  if (recvCount == 0)
    return nullptr;
  DLC_RETURN_IF_ERROR(fail(makeCurrent()));
  return enqueued(nccl_->ncclReduceScatter(send, recv, recvCount,
                                           ncclTypeOf(dtype), reduction(op),
                                           comm_, stream),
                  "ncclReduceScatter",
                  describe("reduce_scatter", recvCount * size_, dtype));
}

dlc_status_t NcclCommunicator::allGather(const void *send, void *recv,
                                         size_t sendCount, dlc_dtype_t dtype,
                                         CUstream stream) {
  DLC_RETURN_IF_ERROR(checkUsable("all_gather"));
  DLC_RETURN_IF_ERROR(checkMovable("all_gather", dtype));
  size_t width = dlc_dtype_size(dtype);
  if (sendCount > SIZE_MAX / width / size_)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "all_gather: " + std::to_string(size_) + " blocks of " +
                          std::to_string(sendCount) +
                          " elements overflow size_t");
  DLC_RETURN_IF_ERROR(
      fail(checkPointer("all_gather", "send buffer", send, sendCount)));
  DLC_RETURN_IF_ERROR(fail(
      checkPointer("all_gather", "receive buffer", recv, sendCount * size_)));
  if (sendCount == 0)
    return nullptr;
  DLC_RETURN_IF_ERROR(fail(makeCurrent()));
  // Bytes: the data is copied, never combined, so any dtype goes.
  return enqueued(nccl_->ncclAllGather(send, recv, sendCount * width, ncclUint8,
                                       comm_, stream),
                  "ncclAllGather",
                  describe("all_gather", sendCount * size_, dtype));
}

dlc_status_t NcclCommunicator::broadcast(void *data, size_t count,
                                         dlc_dtype_t dtype, int root,
                                         CUstream stream) {
  DLC_RETURN_IF_ERROR(checkUsable("broadcast"));
  DLC_RETURN_IF_ERROR(checkMovable("broadcast", dtype));
  if (root < 0 || root >= size_)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "broadcast: root " + std::to_string(root) +
                          " is not a rank (0 to " + std::to_string(size_ - 1) +
                          ")");
  size_t width = dlc_dtype_size(dtype);
  if (count > SIZE_MAX / width)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "broadcast: " + std::to_string(count) +
                          " elements overflow size_t");
  DLC_RETURN_IF_ERROR(fail(checkPointer("broadcast", "data", data, count)));
  if (count == 0)
    return nullptr;
  DLC_RETURN_IF_ERROR(fail(makeCurrent()));
  return enqueued(nccl_->ncclBroadcast(data, data, count * width, ncclUint8,
                                       root, comm_, stream),
                  "ncclBroadcast", describe("broadcast", count, dtype));
}

dlc_status_t NcclCommunicator::synchronize(CUstream stream) {
  DLC_RETURN_IF_ERROR(checkUsable("synchronize"));
  DLC_RETURN_IF_ERROR(fail(makeCurrent()));
  std::string what =
      pending_.empty() ? "the stream's work (no collective pending)" : pending_;
  DLC_RETURN_IF_ERROR(waitUntil(what, [&](dlc_status_t &error) {
    CUresult result = driver_.cuStreamQuery(stream);
    if (result == CUDA_ERROR_NOT_READY)
      return false;
    error = driver_.check(result, what + ": cuStreamQuery");
    return result == CUDA_SUCCESS;
  }));
  pending_.clear();
  return nullptr;
}

dlc_status_t openDeviceCommunicator(Communicator &host,
                                    const CudaDevice &device,
                                    std::unique_ptr<DeviceCommunicator> &out) {
  std::shared_ptr<const Nccl> nccl;
  DLC_RETURN_IF_ERROR(Nccl::open(nccl));
  std::unique_ptr<NcclCommunicator> comm;
  DLC_RETURN_IF_ERROR(NcclCommunicator::open(
      host, std::move(nccl), NcclDriverCalls::of(device.driver()),
      device.context(), comm));
  out = std::move(comm);
  return nullptr;
}

} // namespace dlc::cuda
