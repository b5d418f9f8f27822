//===- DataLoader.h - Batches from a memory-mapped dataset ----------------===//
//
// A training dataset is an .npz with one array per model input and label,
// samples on the first axis (np.savez(path, input=x, labels=y)), or a
// token file (TokenFile.h) whose samples are windows of the token stream. The loader
// maps it (MappedNpz), checks it against what the model expects, and hands
// out batches: batch b of an epoch holds the samples perm[b*B .. b*B+B) of
// that epoch's permutation (Shuffle.h: the same order as dlc-run --train),
// a partial last batch is dropped, so an epoch is N / B batches.
//
// The global batch position p = epoch * batchesPerEpoch + b says where
// training is; a checkpoint saves it and seek(p) resumes there exactly.
//
// With prefetchDepth > 0 a background thread gathers the next batches'
// rows from the mapping into buffers the loader owns, while the caller
// trains on the current one; the buffers are allocated once, at open. The
// batches are the same with and without prefetching.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_DATALOADER_H
#define DLC_RUNTIME_SUPPORT_DATALOADER_H

#include "runtime/support/Status.h"
#include "runtime/support/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dlc {

/// An array the model expects in the dataset, described by one sample (no
/// batch dimension): the file's array is dtype[N, sampleShape...].
struct ArraySpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> sampleShape;
};

/// One array of a batch: dtype[B, sampleShape...], its data aligned to 64
/// bytes.
using BatchArray = ArrayView;

/// A batch: one BatchArray per expected array, in the order they were given.
struct Batch {
  /// The global batch position of this batch.
  int64_t position = 0;
  std::vector<BatchArray> arrays;
};

class DataLoader {
public:
  /// Opens into `out` the dataset `path` (.npz, or .npy for a single array)
  /// for batches of `batchSize` samples of the `expected` arrays (others are
  /// ignored), shuffled per epoch from `seed` if `shuffle`, with
  /// `prefetchDepth` batches (0: none) assembled ahead by a background
  /// thread. Fails with DLC_INVALID_ARGUMENT for a bad batch size, depth or
  /// `expected`; as MappedNpz::open when the file cannot be read; with
  /// DLC_FAILED_PRECONDITION when it does not hold the expected arrays (one
  /// message listing what was expected and what the file has); with
  /// DLC_RESOURCE_EXHAUSTED when the batch buffers or the thread cannot be
  /// had.
  static dlc_status_t open(const std::string &path,
                           const std::vector<ArraySpec> &expected,
                           int64_t batchSize, bool shuffle, uint64_t seed,
                           int prefetchDepth, std::unique_ptr<DataLoader> &out);
  /// Opens the token file `path` (TokenFile.h; `rawWidth` U16 or U32 is the
  /// id type of a file without llm.c's header) for language-model batches
  /// of the two `expected` arrays, in their order: sample i is the window
  /// of T ids from id i*T for the input (int64 or int32 [T]) and the window
  /// one id later, its next tokens, for the label (expected[labelIndex]),
  /// so N = (ids - 1) / T. Batches, shuffling, prefetching, seek and
  /// failures as open's (TokenFile::open's for the file).
  static dlc_status_t openTokens(const std::string &path, DType rawWidth,
                                 const std::vector<ArraySpec> &expected,
                                 size_t labelIndex, int64_t batchSize,
                                 bool shuffle, uint64_t seed, int prefetchDepth,
                                 std::unique_ptr<DataLoader> &out);
  /// Stops the background thread.
  ~DataLoader();
  DataLoader(const DataLoader &) = delete;
  DataLoader &operator=(const DataLoader &) = delete;

  /// N, the samples in each array.
  int64_t numSamples() const;
  int64_t batchSize() const;
  /// N / batchSize.
  int64_t batchesPerEpoch() const;
  /// The global position of the batch the next call to next() returns.
  int64_t position() const;

  /// Makes the batch at global position `position` (>= 0) the next one.
  /// Fails (DLC_INVALID_ARGUMENT) for a negative position.
  dlc_status_t seek(int64_t position);

  /// Sets `out` to the next batch and advances the position; the batch and
  /// its data stay valid until the following next() or seek(). Fails when
  /// the batch could not be assembled (the file changed size under the
  /// mapping: DLC_DATA_LOSS); the failure is then final.
  dlc_status_t next(const Batch *&out);

private:
  struct State;
  explicit DataLoader(std::unique_ptr<State> state);
  /// Allocates `state`'s batch buffers for `expected` and starts the
  /// prefetch thread: what open and openTokens share.
  static dlc_status_t start(std::unique_ptr<State> state,
                            const std::string &path,
                            const std::vector<ArraySpec> &expected,
                            std::unique_ptr<DataLoader> &out);

  std::unique_ptr<State> state_;
};

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_DATALOADER_H
