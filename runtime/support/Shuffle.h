//===- Shuffle.h - The order training visits samples in -------------------===//
//
// Epoch after epoch, each a permutation of the samples [0, n). With
// shuffling, epoch e's permutation is the (e+1)-th Fisher-Yates shuffle of
// the identity drawn from one std::mt19937_64 seeded with the run's seed;
// without, every epoch is the identity. The interpreter's trainer (dlc-run
// --train) and the runtime's data loader both take their order from here, so
// a compiled and an interpreted run of the same seed see the same batches.
// Header-only: the tools and the runtime share it without a link dependency.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_SHUFFLE_H
#define DLC_RUNTIME_SUPPORT_SHUFFLE_H

#include <cstdint>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

namespace dlc {

/// Sets `order` to the identity and shuffles it (Fisher-Yates from the back,
/// index `rng() % (i + 1)`), drawing exactly `order.size() - 1` numbers.
inline void shuffleSamples(std::vector<int64_t> &order, std::mt19937_64 &rng) {
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = static_cast<int64_t>(order.size()) - 1; i > 0; --i)
    std::swap(order[i], order[rng() % static_cast<uint64_t>(i + 1)]);
}

/// The permutation of each epoch. Only the latest epoch's permutation is
/// kept: asking for the next epoch costs one shuffle, any other one replays
/// the generator from the seed (discarding n - 1 numbers per epoch skipped).
class SampleOrder {
public:
  SampleOrder(int64_t n, bool shuffle, uint64_t seed)
      : n_(n), shuffle_(shuffle), seed_(seed), order_(static_cast<size_t>(n)) {
    std::iota(order_.begin(), order_.end(), 0);
  }

  /// Epoch `epoch`'s permutation of [0, n); valid until the next call.
  const std::vector<int64_t> &permutation(int64_t epoch) {
    if (!shuffle_ || epoch == epoch_)
      return order_;
    uint64_t drawsPerEpoch = n_ > 1 ? static_cast<uint64_t>(n_ - 1) : 0;
    if (epoch < epoch_) {
      rng_.seed(seed_);
      epoch_ = -1;
    }
    rng_.discard(static_cast<uint64_t>(epoch - epoch_ - 1) * drawsPerEpoch);
    shuffleSamples(order_, rng_);
    epoch_ = epoch;
    return order_;
  }

  /// The sample at `position` of the endless stream epoch 0, epoch 1, ...
  /// (dlc-run --train's step k takes positions k*B .. k*B+B-1).
  int64_t at(int64_t position) {
    return permutation(position / n_)[position % n_];
  }

private:
  int64_t n_;
  bool shuffle_;
  uint64_t seed_;
  std::mt19937_64 rng_{seed_};
  /// The epoch order_ holds; -1 before the first shuffle.
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;
};

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_SHUFFLE_H
