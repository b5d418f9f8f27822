//===- CpuDevice.cpp - The "cpu" device -----------------------------------===//
#include "runtime/cpu/CpuDevice.h"

#include "runtime/comm/Communicator.h"

#include <sched.h>
#include <thread>

namespace dlc::cpu {

int CpuDevice::availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

int CpuDevice::defaultThreads() {
  unsigned machine = std::thread::hardware_concurrency();
  return sharedCores(availableCores(), static_cast<int>(machine),
                     detectLaunch().localSize);
}

} // namespace dlc::cpu
