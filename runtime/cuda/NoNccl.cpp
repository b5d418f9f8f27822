//===- NoNccl.cpp - The device communicator of a build without NCCL -------===//
#include "runtime/core/Status.h"
#include "runtime/cuda/DeviceCommunicator.h"

namespace dlc::cuda {

dlc_status_t openDeviceCommunicator(Communicator &, const CudaDevice &,
                                    std::unique_ptr<DeviceCommunicator> &) {
  return makeStatus(DLC_UNAVAILABLE,
                    "this build of dlc has no GPU collectives: nccl.h was not "
                    "found when it was built (set NCCL_INCLUDE_DIR and "
                    "rebuild to run data-parallel modules on GPUs)");
}

} // namespace dlc::cuda
