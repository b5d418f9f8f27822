//===- LaunchPlan.h - Choices made before a kernel launches -----*- C++ -*-===//
//
// The decisions of the CUDA device that depend on no GPU, kept apart so the
// CPU-only test suite checks them: which of a module's kernel images a
// device of a given compute capability can load, and how many blocks a
// kernel's launch gets.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_LAUNCHPLAN_H
#define DLC_RUNTIME_CUDA_LAUNCHPLAN_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc::cuda {

/// A compute capability, as "sm_90a" names it.
struct Architecture {
  /// "sm_90a": the name dlc-compile --cuda-arch takes and messages use.
  std::string name() const;

  int major = 0;
  int minor = 0;
  /// 'a' (architecture-specific: runs on exactly this capability), 'f'
  /// (family-specific: this major, this minor or later) or 0.
  char suffix = 0;
};

/// Parses "sm_80", "sm_90a", "compute_80"; nullopt for anything else.
std::optional<Architecture> parseArchitecture(const std::string &name);

/// The PTX's target ("sm_80" from its ".target sm_80" line), or "".
std::string ptxTarget(const std::string &ptx);

/// Which image a device of capability `device` loads: the index in
/// `cubins` (their architectures' names) of the best cubin it can run,
/// else -1 for the PTX (JIT-compiled by the driver) when `ptx` targets a
/// capability at most the device's, else -2. A cubin for sm_XY runs on
/// capabilities X.Z with Z >= Y; an "a" cubin only on X.Y itself. Among
/// runnable cubins the closest to the device wins, "a" before plain.
int chooseKernelImage(const std::vector<std::string> &cubins,
                      const std::string &ptx, Architecture device);

/// A kernel launch's grid: `blocks` blocks of `threads` threads.
struct LaunchShape {
  int64_t blocks = 1;
  int64_t threads = 32;
};

/// The grid of a grid-stride kernel of `iterations` x `threadsPerIteration`
/// threads (dlcm.fbs KernelStep.threads_per_iteration), given the block
/// size the occupancy calculator chose for it and how many such blocks the
/// device keeps resident at once. Threads and warps per iteration run in
/// blocks of `blockSize`; a block per iteration (more than 32 threads)
/// runs in blocks of exactly its threads, as many as fit where the chosen
/// blocks would. Blocks: enough to cover the iterations, at most what is
/// resident at once (more would only queue), at least 1.
LaunchShape launchShape(int64_t iterations, int64_t threadsPerIteration,
                        int64_t blockSize, int64_t residentBlocks);

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_LAUNCHPLAN_H
