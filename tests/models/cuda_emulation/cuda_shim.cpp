//===- cuda_shim.cpp - Host launches of generated CUDA kernels -----------===//
//
// Runs a kernel compiled against cuda_shim.h over an emulated grid, for
// cuda_emulation_check.py. A kernel step of one thread per iteration has no
// communication between threads, so its threads run one after another on
// the calling thread. A step of 32 threads per iteration (a warp per
// iteration, combined with warp shuffles) runs each warp's lanes as 32 real
// threads that meet at a barrier for every shuffle, so a butterfly exchanges
// the values the other lanes computed, in the order a GPU combines them.
// Warps run one after another (the kernels share nothing between warps), so
// a run is deterministic: the harness compares runs bit for bit.
//
// A shuffle is checked as the GPU requires it: full mask, every lane of the
// warp taking part (a lane that returned from the kernel while others wait
// in a shuffle is an error, not a hang), and none in a step the plan runs
// with one thread per iteration (those lanes belong to different
// iterations). An aligned view is checked to be aligned, and counted.
//
//===----------------------------------------------------------------------===//

#include "cuda_shim.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

thread_local dlc_emu_dim3 threadIdx, blockIdx;
dlc_emu_dim3 blockDim, gridDim;

namespace {

constexpr unsigned kWarpSize = 32;

/// The 32 lanes of a running warp: the slots their shuffles exchange
/// through and the barrier they meet at.
class Warp {
public:
  /// Lane `lane`'s part of a butterfly step: publishes `value`, waits for
  /// every lane, reads lane `lane ^ laneMask`'s value into `result`, and
  /// waits again so that no lane overwrites its slot before all have read.
  void shuffle(unsigned lane, const void *value, void *result, unsigned size,
               int laneMask) {
    std::unique_lock<std::mutex> lock(mutex_);
    std::memcpy(slots_[lane], value, size);
    arrive(lock);
    // As __shfl_xor_sync: a source lane outside the warp reads the
    // caller's own value.
    unsigned source = lane ^ static_cast<unsigned>(laneMask);
    std::memcpy(result, slots_[source < kWarpSize ? source : lane], size);
    arrive(lock);
  }

  /// Called by each lane when it returns from the kernel.
  void exit() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++exited_;
    if (arrived_ && arrived_ + exited_ == kWarpSize)
      release();
  }

  /// Why the warp's shuffles were wrong, or null.
  const char *error() const { return error_; }

private:
  /// The barrier: the last of the lanes still in the kernel to arrive
  /// releases the others.
  void arrive(std::unique_lock<std::mutex> &lock) {
    unsigned long long round = round_;
    if (++arrived_ + exited_ == kWarpSize) {
      release();
      return;
    }
    released_.wait(lock, [&] { return round_ != round; });
  }

  void release() {
    if (exited_)
      error_ = "a warp shuffle that not every lane reaches (some lanes "
               "returned from the kernel first)";
    arrived_ = 0;
    ++round_;
    released_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable released_;
  unsigned arrived_ = 0;
  unsigned exited_ = 0;
  unsigned long long round_ = 0;
  const char *error_ = nullptr;
  unsigned char slots_[kWarpSize][8];
};

/// The warp the calling thread is a lane of; null in a step of one thread
/// per iteration.
thread_local Warp *currentWarp = nullptr;
/// The first thing a launch's kernel did wrong, or null.
std::atomic<const char *> launchError{nullptr};
/// Aligned views taken since the library was loaded.
std::atomic<unsigned long long> alignedViews{0};

void fail(const char *why) {
  const char *none = nullptr;
  launchError.compare_exchange_strong(none, why);
}

} // namespace

extern "C" void dlc_emu_shuffle_xor(unsigned mask, const void *value,
                                    void *result, unsigned size, int laneMask) {
  if (mask != 0xffffffffu || !currentWarp) {
    // Only full-warp shuffles in warp-per-iteration steps are generated;
    // anything else is emulated as nothing, so it must fail.
    fail(mask != 0xffffffffu
             ? "a warp shuffle whose mask is not the full warp"
             : "a warp shuffle in a kernel step of one thread per iteration "
               "(its lanes run different iterations)");
    std::memcpy(result, value, size);
    return;
  }
  currentWarp->shuffle(threadIdx.x % kWarpSize, value, result, size, laneMask);
}

extern "C" void *dlc_emu_assume_aligned(const void *pointer,
                                        unsigned long alignment) {
  if (reinterpret_cast<unsigned long>(pointer) % alignment)
    fail("an aligned view (__builtin_assume_aligned) of a misaligned "
         "address");
  alignedViews.fetch_add(1, std::memory_order_relaxed);
  return const_cast<void *>(pointer);
}

/// How many aligned views the kernels have taken, for the harness to tell
/// which path the elementwise groups ran.
extern "C" unsigned long long dlc_emu_aligned_views() {
  return alignedViews.load();
}

/// Runs `entry` (a DLC_EMU_ENTRY) over a grid of `blocks` x
/// `threadsPerBlock` threads with `threadsPerIteration` (1 or 32) threads
/// per iteration, as cuLaunchKernel would with kernelParams {addresses,
/// &iterations}. Returns null, or why the launch or its shuffles were wrong.
extern "C" const char *
dlc_emu_launch(void (*entry)(void *const *, long long), void *const *addresses,
               long long iterations, unsigned threadsPerIteration,
               unsigned blocks, unsigned threadsPerBlock) {
  if (blocks == 0 || threadsPerBlock == 0 || threadsPerBlock % kWarpSize)
    return "blockDim.x must be a positive multiple of 32";
  gridDim = {blocks, 1, 1};
  blockDim = {threadsPerBlock, 1, 1};
  launchError = nullptr;
  if (threadsPerIteration == 1) {
    for (unsigned block = 0; block < blocks; ++block)
      for (unsigned thread = 0; thread < threadsPerBlock; ++thread) {
        blockIdx = {block, 0, 0};
        threadIdx = {thread, 0, 0};
        entry(addresses, iterations);
      }
    return launchError.load();
  }
  if (threadsPerIteration != kWarpSize)
    return "threads_per_iteration must be 1 or 32";
  for (unsigned block = 0; block < blocks; ++block)
    for (unsigned first = 0; first < threadsPerBlock; first += kWarpSize) {
      Warp warp;
      std::vector<std::thread> lanes;
      for (unsigned lane = 0; lane < kWarpSize; ++lane)
        lanes.emplace_back([&, lane] {
          currentWarp = &warp;
          blockIdx = {block, 0, 0};
          threadIdx = {first + lane, 0, 0};
          entry(addresses, iterations);
          warp.exit();
        });
      for (std::thread &lane : lanes)
        lane.join();
      if (warp.error())
        return warp.error();
      if (const char *error = launchError.load())
        return error;
    }
  return nullptr;
}
