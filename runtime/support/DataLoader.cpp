//===- DataLoader.cpp - Batches from a memory-mapped dataset --------------===//
//
// Prefetching is a ring of depth + 1 slots, each with one buffer per array:
// the batch at position p lives in slot p % (depth + 1). The caller holds
// the slot of the batch next() last returned; the thread may fill positions
// [consumed, consumed + depth), whose slots are all different from it. A
// slot is handed out only when its recorded position is the one asked for,
// so a seek simply forgets every slot (and a fill still running for the old
// positions is dropped when it finishes: the generation tells).
//
// Filling is the same code with or without the thread, and the order comes
// from a SampleOrder only the filling thread touches, which is why the
// batches cannot depend on prefetching.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/DataLoader.h"

#include "runtime/support/MappedNpz.h"
#include "runtime/support/Shuffle.h"
#include "runtime/support/TokenFile.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <set>

namespace dlc {

namespace {

/// Batch buffers are aligned for any vector load.
constexpr size_t kBufferAlignment = 64;

struct FreeDeleter {
  void operator()(std::byte *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<std::byte[], FreeDeleter>;

/// "[N,3,32,32]": an expected array's shape, N standing for the samples.
std::string describeSpecShape(const ArraySpec &spec) {
  std::string text = "[N";
  for (int64_t dim : spec.sampleShape)
    text += "," + std::to_string(dim);
  return text + "]";
}

/// "[100,3,32,32]".
std::string describeShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Where one expected array's samples lie: sample i at data + i * stride,
/// `elements` values of type `from`, handed out as `to` (token ids widen).
struct Source {
  const std::byte *data;
  size_t stride;
  int64_t elements;
  DType from, to;
};

/// `n` unsigned token ids (U16 or U32) as I64 or I32.
void widenIds(DType from, DType to, const std::byte *in, std::byte *out,
              int64_t n) {
  auto widen = [&](auto *src) {
    if (to == DType::I64) {
      auto *dst = reinterpret_cast<int64_t *>(out);
      for (int64_t i = 0; i < n; ++i)
        dst[i] = src[i];
    } else {
      auto *dst = reinterpret_cast<int32_t *>(out);
      for (int64_t i = 0; i < n; ++i)
        dst[i] = static_cast<int32_t>(src[i]);
    }
  };
  if (from == DType::U16)
    widen(reinterpret_cast<const uint16_t *>(in));
  else
    widen(reinterpret_cast<const uint32_t *>(in));
}

/// One batch being assembled or handed out.
struct Slot {
  std::vector<Buffer> buffers;
  Batch batch;
  /// The position whose batch the slot holds, or -1.
  int64_t ready = -1;
};

} // namespace

struct DataLoader::State {
  /// The dataset: one of the two.
  std::unique_ptr<MappedNpz> npz;
  std::unique_ptr<TokenFile> tokens;
  std::vector<Source> sources;
  int64_t samples = 0;
  int64_t batchSize = 0;
  int64_t batchesPerEpoch = 0;
  int depth = 0;
  /// Touched only by whoever fills slots: the thread, or next() without it.
  SampleOrder order;
  std::vector<Slot> slots;

  std::mutex mutex;
  /// Signalled when a slot becomes ready or the loader fails.
  std::condition_variable produced;
  /// Signalled when the caller takes a batch, seeks, or stops the loader.
  std::condition_variable consumed;
  /// The position the next next() returns.
  int64_t consumePosition = 0;
  /// The position the thread fills next.
  int64_t producePosition = 0;
  /// Counts seeks, so a fill started before one is dropped.
  uint64_t generation = 0;
  bool stop = false;
  /// Set once, when a fill fails; every later next() returns a copy.
  StatusOwner failure{nullptr};
  bool threadStarted = false;
  pthread_t thread;

  State(int64_t samples, bool shuffle, uint64_t seed)
      : samples(samples), order(samples, shuffle, seed) {}

  const std::string &path() const {
    return npz ? npz->path() : tokens->path();
  }

  /// Gathers the batch at `position` into `slot`.
  dlc_status_t fill(Slot &slot, int64_t position) {
    DLC_RETURN_IF_ERROR(npz ? npz->file().checkSize() : tokens->checkSize());
    const std::vector<int64_t> &permutation =
        order.permutation(position / batchesPerEpoch);
    const int64_t *rows =
        permutation.data() + (position % batchesPerEpoch) * batchSize;
    for (size_t i = 0; i < sources.size(); ++i) {
      const Source &source = sources[i];
      size_t sampleBytes = source.elements * dtypeSize(source.to);
      std::byte *out = slot.buffers[i].get();
      for (int64_t j = 0; j < batchSize; ++j) {
        const std::byte *in = source.data + rows[j] * source.stride;
        if (source.from == source.to)
          std::memcpy(out + j * sampleBytes, in, sampleBytes);
        else
          widenIds(source.from, source.to, in, out + j * sampleBytes,
                   source.elements);
      }
    }
    slot.batch.position = position;
    return nullptr;
  }

  /// The background thread: fills slots ahead of the caller until stopped.
  void produce() {
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      consumed.wait(lock, [&] {
        return stop ||
               (!failure.get() && producePosition < consumePosition + depth);
      });
      if (stop)
        return;
      int64_t position = producePosition++;
      uint64_t started = generation;
      Slot &slot = slots[position % slots.size()];
      slot.ready = -1;
      lock.unlock();
      StatusOwner status(fill(slot, position));
      lock.lock();
      if (started != generation)
        continue;
      if (status.get())
        failure.reset(status.release());
      else
        slot.ready = position;
      produced.notify_all();
    }
  }

  static void *threadMain(void *state) {
    static_cast<State *>(state)->produce();
    return nullptr;
  }
};

namespace {

/// Checks the file's arrays against `expected`; on a mismatch returns one
/// message with what was expected, what was found and why they differ.
dlc_status_t matchArrays(const MappedNpz &npz,
                         const std::vector<ArraySpec> &expected,
                         int64_t batchSize,
                         std::vector<const MappedArray *> &found,
                         int64_t &samples) {
  std::vector<std::string> problems;
  const MappedArray *first = nullptr;
  for (const ArraySpec &spec : expected) {
    const MappedArray *array = npz.find(spec.name);
    found.push_back(array);
    if (!array) {
      problems.push_back("missing '" + spec.name + "'");
      continue;
    }
    if (array->dtype != spec.dtype)
      problems.push_back("'" + spec.name + "' is " + dtypeName(array->dtype) +
                         ", not " + dtypeName(spec.dtype));
    bool shapeMatches =
        array->shape.size() == spec.sampleShape.size() + 1 &&
        std::equal(spec.sampleShape.begin(), spec.sampleShape.end(),
                   array->shape.begin() + 1);
    if (!shapeMatches) {
      problems.push_back("'" + spec.name + "' has shape " +
                         describeShape(array->shape) + ", not " +
                         describeSpecShape(spec));
      continue;
    }
    if (!first) {
      first = array;
    } else if (array->shape[0] != first->shape[0]) {
      problems.push_back("'" + spec.name + "' has " +
                         std::to_string(array->shape[0]) + " samples, '" +
                         first->name + "' " + std::to_string(first->shape[0]));
    }
  }
  if (problems.empty() && first->shape[0] < batchSize)
    problems.push_back(std::to_string(first->shape[0]) +
                       " samples are fewer than the batch size " +
                       std::to_string(batchSize));
  if (problems.empty()) {
    samples = first->shape[0];
    return nullptr;
  }
  std::string wanted, have, why;
  for (const ArraySpec &spec : expected)
    wanted += (wanted.empty() ? "" : ", ") + spec.name + " " +
              dtypeName(spec.dtype) + describeSpecShape(spec);
  for (const MappedArray &array : npz.arrays())
    have += (have.empty() ? "" : ", ") + array.name + " " +
            dtypeName(array.dtype) + describeShape(array.shape);
  for (const std::string &problem : problems)
    why += (why.empty() ? "" : "; ") + problem;
  return makeStatus(DLC_FAILED_PRECONDITION,
                    npz.path() + ": expected arrays " + wanted + "; found " +
                        (have.empty() ? "no arrays" : have) + " (" + why + ")");
}

} // namespace

dlc_status_t DataLoader::open(const std::string &path,
                              const std::vector<ArraySpec> &expected,
                              int64_t batchSize, bool shuffle, uint64_t seed,
                              int prefetchDepth,
                              std::unique_ptr<DataLoader> &out) {
  if (batchSize <= 0)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      path + ": the batch size must be positive, not " +
                          std::to_string(batchSize));
  if (prefetchDepth < 0)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      path + ": the prefetch depth must not be negative, not " +
                          std::to_string(prefetchDepth));
  if (expected.empty())
    return makeStatus(DLC_INVALID_ARGUMENT,
                      path + ": no arrays to read were named");
  std::set<std::string> names;
  for (const ArraySpec &spec : expected)
    if (!names.insert(spec.name).second)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        path + ": array '" + spec.name + "' is expected twice");

  std::unique_ptr<MappedNpz> npz;
  DLC_RETURN_IF_ERROR(MappedNpz::open(path, CrcCheck::Skip, npz));
  std::vector<const MappedArray *> arrays;
  int64_t samples = 0;
  DLC_RETURN_IF_ERROR(matchArrays(*npz, expected, batchSize, arrays, samples));

  auto state = std::make_unique<State>(samples, shuffle, seed);
  state->npz = std::move(npz);
  state->batchSize = batchSize;
  state->depth = prefetchDepth;
  for (size_t i = 0; i < expected.size(); ++i) {
    const MappedArray &array = *arrays[i];
    int64_t elements = 1;
    for (int64_t dim : expected[i].sampleShape)
      elements *= dim;
    state->sources.push_back({array.data, array.bytes / samples, elements,
                              array.dtype, array.dtype});
  }
  return start(std::move(state), path, expected, out);
}

dlc_status_t DataLoader::openTokens(const std::string &path, DType rawWidth,
                                    const std::vector<ArraySpec> &expected,
                                    size_t labelIndex, int64_t batchSize,
                                    bool shuffle, uint64_t seed,
                                    int prefetchDepth,
                                    std::unique_ptr<DataLoader> &out) {
  if (batchSize <= 0 || prefetchDepth < 0 || expected.size() != 2 ||
      labelIndex > 1)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      path + ": token files feed one input and its label, "
                             "with a positive batch size and a prefetch depth "
                             "not negative");
  const ArraySpec &input = expected[1 - labelIndex],
                  &label = expected[labelIndex];
  for (const ArraySpec *spec : {&input, &label}) {
    if (spec->sampleShape.size() != 1 || spec->sampleShape[0] <= 0 ||
        (spec->dtype != DType::I64 && spec->dtype != DType::I32) ||
        spec->sampleShape != input.sampleShape)
      return makeStatus(DLC_FAILED_PRECONDITION,
                        path +
                            ": token files feed an int64 or int32 [T] "
                            "input and labels of the same shape; the model "
                            "has '" +
                            input.name + "' " + dtypeName(input.dtype) +
                            describeSpecShape(input) + " and '" + label.name +
                            "' " + dtypeName(label.dtype) +
                            describeSpecShape(label));
  }
  std::unique_ptr<TokenFile> tokens;
  DLC_RETURN_IF_ERROR(TokenFile::open(path, rawWidth, tokens));
  int64_t length = input.sampleShape[0];
  int64_t samples = tokens->count() > 0 ? (tokens->count() - 1) / length : 0;
  if (samples < batchSize)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      path + ": " + std::to_string(tokens->count()) +
                          " token ids make " + std::to_string(samples) +
                          " sequences of " + std::to_string(length) +
                          " (and their next tokens), fewer than the batch "
                          "size " +
                          std::to_string(batchSize));
  auto state = std::make_unique<State>(samples, shuffle, seed);
  size_t width = dtypeSize(tokens->dtype());
  size_t stride = static_cast<size_t>(length) * width;
  for (size_t i = 0; i < 2; ++i)
    state->sources.push_back({tokens->tokens() + (i == labelIndex ? width : 0),
                              stride, length, tokens->dtype(),
                              expected[i].dtype});
  state->tokens = std::move(tokens);
  state->batchSize = batchSize;
  state->depth = prefetchDepth;
  return start(std::move(state), path, expected, out);
}

dlc_status_t DataLoader::start(std::unique_ptr<State> state,
                               const std::string &path,
                               const std::vector<ArraySpec> &expected,
                               std::unique_ptr<DataLoader> &out) {
  int64_t batchSize = state->batchSize;
  state->batchesPerEpoch = state->samples / batchSize;
  // The caller's slot, plus `depth` being filled ahead.
  state->slots.resize(static_cast<size_t>(state->depth) + 1);
  for (size_t i = 0; i < expected.size(); ++i) {
    const Source &source = state->sources[i];
    size_t batchBytes = static_cast<size_t>(source.elements) *
                        dtypeSize(source.to) * static_cast<size_t>(batchSize);
    // aligned_alloc wants a non-zero multiple of the alignment.
    size_t allocated = std::max<size_t>(1, (batchBytes + kBufferAlignment - 1) /
                                               kBufferAlignment) *
                       kBufferAlignment;
    std::vector<int64_t> shape = {batchSize};
    shape.insert(shape.end(), expected[i].sampleShape.begin(),
                 expected[i].sampleShape.end());
    for (Slot &slot : state->slots) {
      Buffer buffer(static_cast<std::byte *>(
          std::aligned_alloc(kBufferAlignment, allocated)));
      if (!buffer)
        return makeStatus(DLC_RESOURCE_EXHAUSTED,
                          path + ": out of memory for batches of '" +
                              expected[i].name + "' (" +
                              std::to_string(allocated) + " bytes)");
      slot.batch.arrays.push_back(
          {buffer.get(), source.to, shape, batchBytes});
      slot.buffers.push_back(std::move(buffer));
    }
  }

  if (state->depth > 0) {
    int code = pthread_create(&state->thread, nullptr, &State::threadMain,
                              state.get());
    // EAGAIN, the one failure possible without attributes: no threads left.
    if (code != 0)
      return makeStatus(
          DLC_RESOURCE_EXHAUSTED,
          path + ": cannot start the prefetch thread: " + std::strerror(code));
    state->threadStarted = true;
  }
  out.reset(new DataLoader(std::move(state)));
  return nullptr;
}

DataLoader::DataLoader(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

DataLoader::~DataLoader() {
  if (!state_->threadStarted)
    return;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop = true;
  }
  state_->consumed.notify_all();
  pthread_join(state_->thread, nullptr);
}

int64_t DataLoader::numSamples() const { return state_->samples; }
int64_t DataLoader::batchSize() const { return state_->batchSize; }
int64_t DataLoader::batchesPerEpoch() const { return state_->batchesPerEpoch; }

int64_t DataLoader::position() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->consumePosition;
}

dlc_status_t DataLoader::seek(int64_t position) {
  State &s = *state_;
  if (position < 0)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      s.path() + ": cannot seek to batch position " +
                          std::to_string(position));
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.generation;
    s.consumePosition = s.producePosition = position;
    for (Slot &slot : s.slots)
      slot.ready = -1;
  }
  s.consumed.notify_all();
  return nullptr;
}

dlc_status_t DataLoader::next(const Batch *&out) {
  State &s = *state_;
  std::unique_lock<std::mutex> lock(s.mutex);
  // The failure stays the loader's: each call gets its own copy.
  auto failure = [&] {
    return makeStatus(dlc_status_code(s.failure.get()),
                      dlc_status_message(s.failure.get()));
  };
  if (s.depth == 0) {
    // No thread: the caller fills the one slot itself.
    if (!s.failure.get())
      s.failure.reset(s.fill(s.slots[0], s.consumePosition));
    if (s.failure.get())
      return failure();
    ++s.consumePosition;
    out = &s.slots[0].batch;
    return nullptr;
  }
  Slot &slot = s.slots[s.consumePosition % s.slots.size()];
  s.produced.wait(
      lock, [&] { return s.failure.get() || slot.ready == s.consumePosition; });
  // A batch filled before the failure is still good.
  if (slot.ready != s.consumePosition)
    return failure();
  ++s.consumePosition;
  lock.unlock();
  s.consumed.notify_all();
  out = &slot.batch;
  return nullptr;
}

} // namespace dlc
