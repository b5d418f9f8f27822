//===- NoMpi.cpp - The MPI communicator of a build without MPI ------------===//
//
// CMake found no MPI (runtime/CMakeLists.txt, DLC_MPI): the runtime still
// builds and runs one rank; asking for MPI says why it cannot be had.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"

#include "runtime/support/Status.h"

namespace dlc {

dlc_status_t createMpiCommunicator(const LaunchInfo &launch, double,
                                   std::unique_ptr<Communicator> &) {
  std::string launched = launch.launcher.empty()
                             ? std::string()
                             : " (launched by " + launch.launcher +
                                   " as rank " + std::to_string(launch.rank) +
                                   " of " + std::to_string(launch.size) + ")";
  return makeStatus(DLC_UNAVAILABLE,
                    "MPI communicator" + launched +
                        ": this build of dlc has no MPI (configure with "
                        "Open MPI's development files installed)");
}

} // namespace dlc
