//===- cuda_shim.cpp - Host launches of generated CUDA kernels -----------===//
//
// Runs a kernel compiled against cuda_shim.h over an emulated grid, for
// cuda_emulation_check.py. A kernel step of one thread per iteration has no
// communication between threads, so its threads run one after another on
// the calling thread. A step of 32 threads per iteration (a warp per
// iteration, combined with warp shuffles) runs each warp's lanes as 32 real
// threads that meet at a barrier for every shuffle, so a butterfly exchanges
// the values the other lanes computed, in the order a GPU combines them.
// Warps run one after another (the kernels share nothing between warps). A
// step of more threads per iteration (a block per iteration, whose warps
// meet in shared memory) runs a whole block's threads at once, each warp's
// lanes shuffling among themselves and the block meeting at __syncthreads;
// blocks run one after another, so shared memory (static storage here)
// belongs to one block at a time. Runs are deterministic: the harness
// compares runs bit for bit.
//
// A shuffle is checked as the GPU requires it: full mask, every lane of the
// warp taking part (a lane that returned from the kernel while others wait
// in a shuffle is an error, not a hang), and none in a step the plan runs
// with one thread per iteration (those lanes belong to different
// iterations). __syncthreads is checked the same way against the block. An
// aligned view is checked to be aligned, and counted.
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

/// A barrier of `size` threads that may each leave for good (exit): the
/// last of the threads still running to arrive releases the others. A
/// thread that exits while others wait is an error (`what` says which
/// barrier), and releases them rather than hanging.
class Barrier {
public:
  Barrier(unsigned size, const char *what) : size_(size), what_(what) {}

  /// Waits for the others.
  void sync() {
    std::unique_lock<std::mutex> lock(mutex_);
    arrive(lock);
  }

  /// Waits for the others with `lock` (on mutex()) held.
  void arrive(std::unique_lock<std::mutex> &lock) {
    unsigned long long round = round_;
    if (++arrived_ + exited_ == size_) {
      release();
      return;
    }
    released_.wait(lock, [&] { return round_ != round; });
  }

  /// Called by each thread when it returns from the kernel.
  void exit() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++exited_;
    if (arrived_ && arrived_ + exited_ == size_)
      release();
  }

  /// Why the threads met wrongly, or null.
  const char *error() const { return error_; }

  std::mutex &mutex() { return mutex_; }

private:
  void release() {
    if (exited_)
      error_ = what_;
    arrived_ = 0;
    ++round_;
    released_.notify_all();
  }

  unsigned size_;
  const char *what_;
  std::mutex mutex_;
  std::condition_variable released_;
  unsigned arrived_ = 0;
  unsigned exited_ = 0;
  unsigned long long round_ = 0;
  const char *error_ = nullptr;
};

/// The 32 lanes of a running warp: the slots their shuffles exchange
/// through and the barrier they meet at.
class Warp {
public:
  /// Lane `lane`'s part of a butterfly step: publishes `value`, waits for
  /// every lane, reads lane `lane ^ laneMask`'s value into `result`, and
  /// waits again so that no lane overwrites its slot before all have read.
  void shuffle(unsigned lane, const void *value, void *result, unsigned size,
               int laneMask) {
    std::unique_lock<std::mutex> lock(barrier_.mutex());
    std::memcpy(slots_[lane], value, size);
    barrier_.arrive(lock);
    // As __shfl_xor_sync: a source lane outside the warp reads the
    // caller's own value.
    unsigned source = lane ^ static_cast<unsigned>(laneMask);
    std::memcpy(result, slots_[source < kWarpSize ? source : lane], size);
    barrier_.arrive(lock);
  }

  /// Called by each lane when it returns from the kernel.
  void exit() { barrier_.exit(); }

  /// Why the warp's shuffles were wrong, or null.
  const char *error() const { return barrier_.error(); }

private:
  Barrier barrier_{kWarpSize, "a warp shuffle that not every lane reaches "
                              "(some lanes returned from the kernel first)"};
  unsigned char slots_[kWarpSize][8];
};

/// The warp the calling thread is a lane of; null in a step of one thread
/// per iteration.
thread_local Warp *currentWarp = nullptr;
/// The __syncthreads barrier of the block the calling thread belongs to in
/// a block-per-iteration step; null in other steps.
thread_local Barrier *currentBlock = nullptr;
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

extern "C" void dlc_emu_syncthreads() {
  if (!currentBlock) {
    // A step of one thread or one warp per iteration runs its blocks'
    // threads one by one or a warp at a time: a barrier there would be
    // emulated as nothing.
    fail("a __syncthreads in a kernel step of fewer than 64 threads per "
         "iteration");
    return;
  }
  currentBlock->sync();
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
/// `threadsPerBlock` threads with `threadsPerIteration` (1, 32, or the
/// block's threads) threads per iteration, as cuLaunchKernel would with
/// kernelParams {addresses, &iterations}. Returns null, or why the launch,
/// its shuffles or its barriers were wrong.
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
  if (threadsPerIteration > kWarpSize) {
    if (threadsPerIteration != threadsPerBlock)
      return "a block-per-iteration step must run blocks of its threads per "
             "iteration";
    for (unsigned block = 0; block < blocks; ++block) {
      Barrier shared(threadsPerBlock,
                     "a __syncthreads that not every thread of the block "
                     "reaches (some returned from the kernel first)");
      std::vector<Warp> warps(threadsPerBlock / kWarpSize);
      std::vector<std::thread> threads;
      for (unsigned thread = 0; thread < threadsPerBlock; ++thread)
        threads.emplace_back([&, thread] {
          Warp &warp = warps[thread / kWarpSize];
          currentWarp = &warp;
          currentBlock = &shared;
          blockIdx = {block, 0, 0};
          threadIdx = {thread, 0, 0};
          entry(addresses, iterations);
          warp.exit();
          shared.exit();
        });
      for (std::thread &thread : threads)
        thread.join();
      for (const Warp &warp : warps)
        if (warp.error())
          return warp.error();
      if (shared.error())
        return shared.error();
      if (const char *error = launchError.load())
        return error;
    }
    return nullptr;
  }
  if (threadsPerIteration != kWarpSize)
    return "threads_per_iteration must be 1, 32 or the block's threads";
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
