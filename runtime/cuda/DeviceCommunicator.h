//===- DeviceCommunicator.h - Collectives a CUDA session enqueues -*- C++
//-*-===//
//
// What a CUDA session's data-parallel steps (CollectiveStep.h) need of the
// ranks' device communicator: collectives on device memory enqueued on a
// stream, and a bounded wait for a stream. NcclCommunicator implements it;
// a build without nccl.h has none (NoNccl.cpp), so that the CUDA device
// builds and runs everything but collectives there.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DEVICECOMMUNICATOR_H
#define DLC_RUNTIME_CUDA_DEVICECOMMUNICATOR_H

#include "dlc/runtime.h"
#include "runtime/comm/Communicator.h"

#include <cuda.h>

#include <memory>

namespace dlc::cuda {

class CudaDevice;

class DeviceCommunicator {
public:
  virtual ~DeviceCommunicator() = default;

  /// Enqueues on `stream` the in-place sum or mean over the ranks of
  /// `count` elements at `data`.
  virtual dlc_status_t allReduce(void *data, size_t count, dlc_dtype_t dtype,
                                 dlc_reduce_op_t op, CUstream stream) = 0;
  /// Enqueues the reduction of `send` (size() blocks of `recvCount`
  /// elements), leaving block rank() of it in `recv`.
  virtual dlc_status_t reduceScatter(const void *send, void *recv,
                                     size_t recvCount, dlc_dtype_t dtype,
                                     dlc_reduce_op_t op, CUstream stream) = 0;
  /// Enqueues the concatenation of every rank's `send` (`sendCount`
  /// elements) into `recv`, in rank order.
  virtual dlc_status_t allGather(const void *send, void *recv, size_t sendCount,
                                 dlc_dtype_t dtype, CUstream stream) = 0;
  /// Waits until `stream`'s work has completed, or fails past the host
  /// communicator's timeout naming the collective in flight (after which
  /// the communicator is unusable).
  virtual dlc_status_t synchronize(CUstream stream) = 0;
};

/// Opens the device communicator of `host`'s ranks on `device`: every rank
/// of `host` must call it (it is a collective). DLC_UNAVAILABLE where this
/// build or machine has no NCCL, naming what is missing.
dlc_status_t openDeviceCommunicator(Communicator &host,
                                    const CudaDevice &device,
                                    std::unique_ptr<DeviceCommunicator> &out);

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DEVICECOMMUNICATOR_H
