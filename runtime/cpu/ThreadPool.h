//===- ThreadPool.h - The CPU device's threads ------------------*- C++ -*-===//
//
// parallelFor splits [0, n) into at most numThreads() contiguous chunks of
// nearly equal size, runs chunk 0 on the calling thread and the others on
// the pool's other threads, and returns when all are done. Generated
// kernels, the direct convolution and the executor's other loops use it.
//
// The threads are an OpenMP team, not threads of our own: Debian's oneDNN
// runs its primitives on OpenMP (libgomp), and a second pool of our own
// would compete with libgomp's spinning workers for the same cores between
// a oneDNN call and a kernel. Measured on the 2-core build machine
// (docs/performance.md): a matmul followed by five elementwise kernels took
// 943 us with a condition-variable pool and 444 us on the OpenMP team; an
// empty dispatch cost 7.3 us against well under 1 us.
//
// A loop too small to pay for its threads runs inline (the grain), and so
// does a loop started inside another one (nesting). Different threads may
// run loops at the same time: each calling thread leads its own team.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_THREADPOOL_H
#define DLC_RUNTIME_CPU_THREADPOOL_H

#include <cstdint>
#include <type_traits>
#include <utility>

namespace dlc::cpu {

class ThreadPool {
public:
  /// The fewest iterations a chunk gets by default. On the build machine a
  /// two-thread loop of an elementwise kernel (one element per iteration,
  /// ~0.5 ns each) breaks even with running inline at about 4096
  /// iterations, i.e. two chunks of 2048 (docs/performance.md). Kernels
  /// whose iterations are heavier (rows) pass a smaller grain.
  static constexpr int64_t kDefaultGrain = 2048;

  /// A pool of `numThreads` threads in all, the caller included;
  /// numThreads < 1 counts as 1.
  explicit ThreadPool(int numThreads)
      : numThreads_(numThreads < 1 ? 1 : numThreads) {}

  int numThreads() const { return numThreads_; }

  /// Calls fn(begin, end) on disjoint contiguous ranges covering [0, n),
  /// each of at least `grain` iterations when there are several (grain < 1
  /// counts as 1), and returns when every call has returned. n <= 0 calls
  /// nothing. `fn` must not throw.
  template <typename Fn> void parallelFor(int64_t n, int64_t grain, Fn &&fn) {
    run(n, grain, &invoke<std::remove_reference_t<Fn>>,
        const_cast<void *>(static_cast<const void *>(&fn)));
  }
  template <typename Fn> void parallelFor(int64_t n, Fn &&fn) {
    parallelFor(n, kDefaultGrain, std::forward<Fn>(fn));
  }

  /// The number of chunks parallelFor uses for `n` iterations and `grain`
  /// outside any other loop.
  int64_t chunkCount(int64_t n, int64_t grain) const;
  /// Chunk `i` of `chunks` over [0, n) is [begin, end).
  static void chunkRange(int64_t n, int64_t chunks, int64_t i, int64_t &begin,
                         int64_t &end);

private:
  using Trampoline = void (*)(void *fn, int64_t begin, int64_t end);
  template <typename Fn> static void invoke(void *fn, int64_t b, int64_t e) {
    (*static_cast<Fn *>(fn))(b, e);
  }
  void run(int64_t n, int64_t grain, Trampoline call, void *fn) const;

  int numThreads_;
};

/// Sets the thread count the CPU libraries use (oneDNN through OpenMP on
/// this thread, OpenBLAS process-wide) for the scope's duration and puts
/// the previous counts back after it, so a session's device decides how
/// many threads its library calls get without changing the caller's own
/// OpenMP settings.
class LibraryThreads {
public:
  explicit LibraryThreads(int numThreads);
  ~LibraryThreads();
  LibraryThreads(const LibraryThreads &) = delete;
  LibraryThreads &operator=(const LibraryThreads &) = delete;

private:
  int savedOmp_;
  int savedBlas_;
};

/// The threads for one of `localRanks` processes (-1 when unknown) on a
/// machine of `machine` cores, this one able to run on `available` of
/// them: all `available` for a lone process, else the machine's equal
/// share, at least 1 and at most `available`, so that N ranks do not run
/// N times the cores' threads, whether unbound or bound each to its cores
/// or several to a socket. Ranks confined together to fewer cores than the
/// machine's (a cpuset container) still oversubscribe them: pass threads.
int sharedCores(int available, int machine, int localRanks);

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_THREADPOOL_H
