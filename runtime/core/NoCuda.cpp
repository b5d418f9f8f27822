//===- NoCuda.cpp - The CUDA device of a build without CUDA ---------------===//
//
// Built in place of runtime/cuda/ when CMake found no CUDA toolkit headers
// (DLC_CUDA=OFF, or AUTO without them): "cuda:N" then says why it cannot
// be opened.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Devices.h"
#include "runtime/core/Status.h"

namespace dlc::cuda {

dlc_status_t createCudaDevice(const std::string &spec, int,
                              std::shared_ptr<Device> &) {
  return makeStatus(DLC_UNAVAILABLE,
                    "device '" + spec +
                        "': this build of dlc has no CUDA device support "
                        "(it was configured without the CUDA toolkit)");
}

} // namespace dlc::cuda
