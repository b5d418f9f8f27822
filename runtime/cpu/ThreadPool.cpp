//===- ThreadPool.cpp - The CPU device's threads --------------------------===//
#include "runtime/cpu/ThreadPool.h"

#include <algorithm>
#include <cblas.h>
#include <omp.h>

namespace dlc::cpu {

int64_t ThreadPool::chunkCount(int64_t n, int64_t grain) const {
  if (n <= 0)
    return 0;
  int64_t byGrain = grain > 1 ? n / grain : n;
  return std::clamp<int64_t>(byGrain, 1, numThreads_);
}

void ThreadPool::chunkRange(int64_t n, int64_t chunks, int64_t i,
                            int64_t &begin, int64_t &end) {
  // The first n % chunks chunks take one iteration more; no i * n product
  // that could overflow.
  int64_t base = n / chunks, extra = n % chunks;
  begin = i * base + std::min(i, extra);
  end = begin + base + (i < extra ? 1 : 0);
}

void ThreadPool::run(int64_t n, int64_t grain, Trampoline call,
                     void *fn) const {
  int64_t chunks = chunkCount(n, grain);
  if (chunks == 0)
    return;
  if (chunks == 1 || omp_in_parallel()) {
    call(fn, 0, n);
    return;
  }
#pragma omp parallel num_threads(static_cast <int>(chunks))
  {
    // OpenMP may grant fewer threads than asked (OMP_THREAD_LIMIT, a
    // nested region): then a thread runs several chunks. Thread 0 is the
    // caller, so chunk 0 always runs on the calling thread.
    int64_t team = omp_get_num_threads();
    for (int64_t i = omp_get_thread_num(); i < chunks; i += team) {
      int64_t begin, end;
      chunkRange(n, chunks, i, begin, end);
      call(fn, begin, end);
    }
  }
}

LibraryThreads::LibraryThreads(int numThreads)
    : savedOmp_(omp_get_max_threads()), savedBlas_(openblas_get_num_threads()) {
  omp_set_num_threads(numThreads);
  if (savedBlas_ != numThreads)
    openblas_set_num_threads(numThreads);
}

LibraryThreads::~LibraryThreads() {
  omp_set_num_threads(savedOmp_);
  if (openblas_get_num_threads() != savedBlas_)
    openblas_set_num_threads(savedBlas_);
}

int sharedCores(int available, int machine, int localRanks) {
  if (localRanks <= 1)
    return available;
  return std::max(1, std::min(available, machine / localRanks));
}

} // namespace dlc::cpu
