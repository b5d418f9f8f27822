//===- NcclCommunicator.h - Collectives on device memory over NCCL -*- C++
//-*-===//
//
// The device side of data parallelism (DESIGN.md decision 9: NCCL for GPU
// collectives, bootstrapped over MPI). A host dlc::Communicator
// (runtime/comm/) carries the bootstrap: rank 0 asks NCCL for a unique id,
// broadcasts its 128 bytes to every rank, and every rank joins the NCCL
// communicator of (size, id, rank) on the GPU the CUDA side chose for it
// (from the host communicator's localRank()). Its collectives then work on
// device pointers, enqueued on a CUstream like any kernel, so that they
// order with the compute around them without the host waiting.
//
// Timeouts follow dlc::Communicator's: the host never blocks inside NCCL.
// The communicator is NCCL's non-blocking kind, so initialization and each
// enqueue return at once (ncclInProgress) and are polled; synchronize()
// polls the stream (cuStreamQuery) and NCCL's asynchronous error. Past the
// host communicator's timeout the NCCL communicator is aborted (ncclComm-
// Abort, which also ends its kernels still waiting for a peer) and the call
// is DLC_DEADLINE_EXCEEDED naming the collective, its size and the rank;
// after that, or any other failure, every call is DLC_FAILED_PRECONDITION.
//
// Argument checks are dlc::Communicator's: a dtype or op that every rank
// rejects alike leaves the communicator usable; a NULL buffer, which this
// rank alone may have, fails it (the other ranks then time out cleanly).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
#define DLC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H

#include "dlc/runtime.h"
#include "runtime/comm/Communicator.h"
#include "runtime/cuda/DeviceCommunicator.h"
#include "runtime/cuda/Driver.h"
#include "runtime/cuda/Nccl.h"

#include <cuda.h>

#include <functional>
#include <memory>
#include <string>

namespace dlc::cuda {

/// The driver calls an NcclCommunicator makes, apart from Driver so that
/// the tests without a GPU can fake them beside NCCL's table.
struct NcclDriverCalls {
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuStreamQuery) cuStreamQuery = nullptr;
  /// A status for a failing driver call (Driver::check).
  std::function<dlc_status_t(CUresult, const std::string &)> check;

  /// The calls of the process's driver.
  static NcclDriverCalls of(const Driver &driver);
};

class NcclCommunicator final : public DeviceCommunicator {
public:
  /// Joins the NCCL communicator of `host`'s ranks on the GPU whose
  /// primary context is `context` (retained by the caller for the
  /// communicator's life). Every rank of `host` must call it; it takes one
  /// host broadcast and NCCL's initialization, each bounded by
  /// host.timeout(). A failure of rank 0's ncclGetUniqueId leaves the other
  /// ranks to time out in the broadcast.
  static dlc_status_t open(Communicator &host, std::shared_ptr<const Nccl> nccl,
                           NcclDriverCalls driver, CUcontext context,
                           std::unique_ptr<NcclCommunicator> &out);
  /// Destroys the NCCL communicator (ncclCommDestroy waits for its
  /// enqueued collectives), unless a failure aborted it.
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  double timeout() const { return timeout_; }

  /// Enqueues on `stream` the reduction of `count` elements of device
  /// buffer `data` over all ranks, in place: their sum, or their mean
  /// (ncclAvg). float32, float64, bfloat16 and float16.
  dlc_status_t allReduce(void *data, size_t count, dlc_dtype_t dtype,
                         dlc_reduce_op_t op, CUstream stream) override;
  /// Enqueues the reduction of `send` (size() * recvCount elements) over
  /// all ranks, leaving block rank() of the result in `recv` (recvCount
  /// elements). NCCL's blocks are all alike in size, unlike the host
  /// communicator's.
  dlc_status_t reduceScatter(const void *send, void *recv, size_t recvCount,
                             dlc_dtype_t dtype, dlc_reduce_op_t op,
                             CUstream stream) override;
  /// Enqueues the concatenation of every rank's `send` (sendCount elements
  /// each) into `recv` (size() * sendCount) in rank order. Any dtype: the
  /// bytes move unchanged.
  dlc_status_t allGather(const void *send, void *recv, size_t sendCount,
                         dlc_dtype_t dtype, CUstream stream) override;
  /// Enqueues the copy of `root`'s `count` elements of `data` to every
  /// rank's `data`. Any dtype.
  dlc_status_t broadcast(void *data, size_t count, dlc_dtype_t dtype, int root,
                         CUstream stream);
  /// Waits until the work enqueued on `stream` has completed, polling it
  /// and NCCL's asynchronous error; past timeout() seconds from this call
  /// the communicator is aborted and the call is DLC_DEADLINE_EXCEEDED,
  /// naming the last collective enqueued since the previous synchronize.
  dlc_status_t synchronize(CUstream stream) override;

private:
  NcclCommunicator(const Communicator &host, std::shared_ptr<const Nccl> nccl,
                   NcclDriverCalls driver, CUcontext context);

  /// NCCL's reduction for `op` over this communicator's ranks.
  ncclRedOp_t reduction(dlc_reduce_op_t op) const;

  /// NCCL takes its device from the CUDA runtime's current device, which
  /// the runtime derives from the calling thread's current context; dlc
  /// uses the driver API and may call from any thread, so every entry
  /// makes the device's primary context current first.
  dlc_status_t makeCurrent() const;
  /// DLC_FAILED_PRECONDITION after an earlier failure.
  dlc_status_t checkUsable(const char *collective) const;
  /// Aborts the NCCL communicator after `status` and keeps its message;
  /// returns `status` (NULL passes).
  dlc_status_t fail(dlc_status_t status);
  /// Polls until NCCL's state on the communicator is ncclSuccess and
  /// `ready` (null: always) is true, or fails: an NCCL error, a false
  /// `ready` that set a status, or timeout() seconds passing, which is
  /// DLC_DEADLINE_EXCEEDED naming `what`.
  dlc_status_t waitUntil(const std::string &what,
                         const std::function<bool(dlc_status_t &)> &ready);
  /// Checks `result` of enqueueing `what` (`call` names the NCCL function)
  /// and waits for an enqueue NCCL left in progress.
  dlc_status_t enqueued(ncclResult_t result, const char *call,
                        std::string what);

  std::shared_ptr<const Nccl> nccl_;
  NcclDriverCalls driver_;
  CUcontext context_;
  int rank_, size_;
  double timeout_;
  ncclComm_t comm_ = nullptr;
  /// "all_reduce of 1000 float32 elements": the last collective enqueued
  /// since the last synchronize, for a timeout's message.
  std::string pending_;
  /// The message of the failure that made this communicator unusable.
  std::string failure_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
