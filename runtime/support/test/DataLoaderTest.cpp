//===- DataLoaderTest.cpp - Tests of the shuffle order and the loader -----===//
//
// The sample order is pinned to dlc-run --train's (a copy of its original
// code is the reference); batches hold exactly the rows the order names;
// prefetching at any depth and seeking give the same batches as reading
// straight through; every dataset mismatch is one message saying what was
// expected and what was found.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/DataLoader.h"

#include "runtime/support/Npz.h"
#include "runtime/support/Shuffle.h"
#include "runtime/support/test/Outcome.h"
#include "runtime/support/test/TempDir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <numeric>

using namespace dlc;
using namespace dlc::testing;

namespace {

/// dlc-run --train's sample order as Train.cpp wrote it before it moved to
/// Shuffle.h: the reference the shared header must reproduce exactly.
class TrainSampleOrder {
public:
  TrainSampleOrder(int64_t n, bool shuffle, uint64_t seed)
      : n_(n), shuffle_(shuffle), rng_(seed) {}

  int64_t at(int64_t position) {
    if (!shuffle_)
      return position % n_;
    int64_t epoch = position / n_;
    while (epoch_ < epoch) {
      order_.resize(n_);
      std::iota(order_.begin(), order_.end(), 0);
      for (int64_t i = n_ - 1; i > 0; --i)
        std::swap(order_[i], order_[rng_() % static_cast<uint64_t>(i + 1)]);
      ++epoch_;
    }
    return order_[position % n_];
  }

private:
  int64_t n_;
  bool shuffle_;
  std::mt19937_64 rng_;
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;
};

TEST(SampleOrder, IsDlcRunTrainsOrder) {
  for (int64_t n : {1, 2, 7, 100}) {
    for (bool shuffle : {false, true}) {
      TrainSampleOrder reference(n, shuffle, 42);
      SampleOrder order(n, shuffle, 42);
      for (int64_t position = 0; position < 6 * n; ++position)
        ASSERT_EQ(order.at(position), reference.at(position))
            << "n " << n << " shuffle " << shuffle << " at " << position;
    }
  }
}

TEST(SampleOrder, EpochsInAnyOrderAreTheSame) {
  std::vector<std::vector<int64_t>> inOrder;
  SampleOrder sequential(50, true, 7);
  for (int64_t epoch = 0; epoch < 6; ++epoch)
    inOrder.push_back(sequential.permutation(epoch));
  SampleOrder jumping(50, true, 7);
  for (int64_t epoch : {5, 2, 3, 0, 4, 4, 1})
    EXPECT_EQ(jumping.permutation(epoch), inOrder[epoch]) << epoch;
  // Each epoch is a permutation, and they differ.
  for (const auto &permutation : inOrder) {
    std::vector<int64_t> sorted = permutation;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> identity(50);
    std::iota(identity.begin(), identity.end(), 0);
    EXPECT_EQ(sorted, identity);
  }
  EXPECT_NE(inOrder[0], inOrder[1]);
  EXPECT_NE(SampleOrder(50, true, 8).permutation(0), inOrder[0]);
  std::vector<int64_t> identity(50);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(SampleOrder(50, false, 7).permutation(3), identity);
}

/// Sample i of "x" is float32[2] {i, -i}; of "y" int64 1000 + i.
class DataLoaderFiles : public dlc::testing::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    writeData();
  }

  void writeData() {
    Tensor x(DType::F32, {kSamples, 2});
    Tensor y(DType::I64, {kSamples});
    for (int64_t i = 0; i < kSamples; ++i) {
      x.data<float>()[2 * i] = float(i);
      x.data<float>()[2 * i + 1] = -float(i);
      y.data<int64_t>()[i] = 1000 + i;
    }
    Tensor extra(DType::U8, {3});
    ASSERT_TRUE(isOk(
        writeNpz(path("data.npz"), {{"x", x}, {"extra", extra}, {"y", y}})));
  }

  std::vector<ArraySpec> specs() const {
    return {{"y", DType::I64, {}}, {"x", DType::F32, {2}}};
  }

  std::unique_ptr<DataLoader> open(int64_t batch, bool shuffle, int depth) {
    std::unique_ptr<DataLoader> loader;
    EXPECT_TRUE(isOk(DataLoader::open(path("data.npz"), specs(), batch, shuffle,
                                      99, depth, loader)));
    return loader;
  }

  /// Opens `file` for `expected`, expecting failure with `code`; returns
  /// the message.
  static std::string openError(const std::string &file,
                               const std::vector<ArraySpec> &expected,
                               int64_t batch, int depth,
                               dlc_status_code_t code) {
    std::unique_ptr<DataLoader> loader;
    Outcome o = outcome(
        DataLoader::open(file, expected, batch, false, 0, depth, loader));
    EXPECT_EQ(o.code, code) << o.message;
    EXPECT_EQ(loader, nullptr);
    return o.message;
  }

  /// The sample indices of a batch, read back from both arrays (which must
  /// agree).
  static std::vector<int64_t> samplesOf(const Batch &batch) {
    std::vector<int64_t> samples;
    const BatchArray &y = batch.arrays[0], &x = batch.arrays[1];
    int64_t size = y.shape[0];
    for (int64_t j = 0; j < size; ++j) {
      int64_t label;
      float feature[2];
      std::memcpy(&label, y.data + j * 8, 8);
      std::memcpy(feature, x.data + j * 8, 8);
      EXPECT_EQ(feature[0], float(label - 1000));
      EXPECT_EQ(feature[1], -float(label - 1000));
      samples.push_back(label - 1000);
    }
    return samples;
  }

  /// `count` batches from `loader`, as sample indices.
  static std::vector<std::vector<int64_t>> read(DataLoader &loader, int count) {
    std::vector<std::vector<int64_t>> batches;
    for (int i = 0; i < count; ++i) {
      const Batch *batch = nullptr;
      EXPECT_TRUE(isOk(loader.next(batch)));
      if (!batch)
        break;
      batches.push_back(samplesOf(*batch));
    }
    return batches;
  }

  static constexpr int64_t kSamples = 23;
};

TEST_F(DataLoaderFiles, BatchesInOrderDropThePartialOne) {
  auto loader = open(5, false, 0);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->numSamples(), kSamples);
  EXPECT_EQ(loader->batchSize(), 5);
  EXPECT_EQ(loader->batchesPerEpoch(), 4);
  const Batch *batch = nullptr;
  ASSERT_TRUE(isOk(loader->next(batch)));
  EXPECT_EQ(batch->position, 0);
  ASSERT_EQ(batch->arrays.size(), 2u);
  EXPECT_EQ(batch->arrays[0].dtype, DType::I64);
  EXPECT_EQ(batch->arrays[0].shape, std::vector<int64_t>({5}));
  EXPECT_EQ(batch->arrays[0].bytes, 40u);
  EXPECT_EQ(batch->arrays[1].dtype, DType::F32);
  EXPECT_EQ(batch->arrays[1].shape, std::vector<int64_t>({5, 2}));
  EXPECT_EQ(batch->arrays[1].bytes, 40u);
  for (const BatchArray &array : batch->arrays)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(array.data) % 64, 0u);
  EXPECT_EQ(samplesOf(*batch), std::vector<int64_t>({0, 1, 2, 3, 4}));
  EXPECT_EQ(loader->position(), 1);
  auto rest = read(*loader, 4);
  EXPECT_EQ(rest[2], std::vector<int64_t>({15, 16, 17, 18, 19}));
  // Samples 20..22 are dropped: the next epoch starts over.
  EXPECT_EQ(rest[3], std::vector<int64_t>({0, 1, 2, 3, 4}));
  EXPECT_EQ(loader->position(), 5);
}

TEST_F(DataLoaderFiles, ShuffledBatchesFollowTheSampleOrder) {
  auto loader = open(5, true, 0);
  ASSERT_NE(loader, nullptr);
  SampleOrder order(kSamples, true, 99);
  auto batches = read(*loader, 12);
  for (int64_t p = 0; p < 12; ++p) {
    const std::vector<int64_t> &permutation = order.permutation(p / 4);
    std::vector<int64_t> expected(permutation.begin() + (p % 4) * 5,
                                  permutation.begin() + (p % 4) * 5 + 5);
    EXPECT_EQ(batches[p], expected) << p;
  }
}

TEST_F(DataLoaderFiles, PrefetchAndSeekDoNotChangeBatches) {
  for (bool shuffle : {false, true}) {
    auto reference = open(4, shuffle, 0);
    ASSERT_NE(reference, nullptr);
    auto expected = read(*reference, 40);
    for (int depth : {1, 2, 3, 8}) {
      auto loader = open(4, shuffle, depth);
      ASSERT_NE(loader, nullptr);
      EXPECT_EQ(read(*loader, 40), expected) << depth;
      // Seeking back and forth, with the thread mid-way through the ring.
      for (int64_t position : {7, 0, 33, 12, 12, 39}) {
        ASSERT_TRUE(isOk(loader->seek(position)));
        EXPECT_EQ(loader->position(), position);
        auto batches = read(*loader, 1);
        ASSERT_EQ(batches.size(), 1u);
        EXPECT_EQ(batches[0], expected[position])
            << "depth " << depth << " position " << position;
      }
      EXPECT_EQ(loader->position(), 40);
    }
  }
}

TEST_F(DataLoaderFiles, ResumeAtAPositionContinuesTheRun) {
  auto straight = open(3, true, 2);
  ASSERT_NE(straight, nullptr);
  auto expected = read(*straight, 30);
  // A "second process" resuming at position 17, past two epochs.
  auto resumed = open(3, true, 2);
  ASSERT_NE(resumed, nullptr);
  ASSERT_TRUE(isOk(resumed->seek(17)));
  auto rest = read(*resumed, 13);
  EXPECT_EQ(rest, std::vector<std::vector<int64_t>>(expected.begin() + 17,
                                                    expected.end()));
  Outcome o = outcome(resumed->seek(-1));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, path("data.npz") + ": cannot seek to batch position -1");
}

TEST_F(DataLoaderFiles, ADestroyedLoaderStopsItsThread) {
  // Destroyed with the ring full, mid-fill, and before any batch.
  for (int depth : {1, 4}) {
    auto idle = open(2, true, depth);
    auto used = open(2, true, depth);
    read(*used, 3);
  }
}

TEST_F(DataLoaderFiles, AFileThatChangesSizeIsAnError) {
  for (int depth : {0, 2}) {
    auto loader = open(5, false, depth);
    ASSERT_NE(loader, nullptr);
    // Appending cannot make the mapping fault (truncating could), so the
    // test is safe while the thread reads.
    std::ofstream(path("data.npz"), std::ios::binary | std::ios::app) << "x";
    const Batch *batch = nullptr;
    Outcome o;
    int good = 0;
    while ((o = outcome(loader->next(batch))).ok() && good <= depth)
      ++good;
    EXPECT_LE(good, depth);
    EXPECT_EQ(o.code, DLC_DATA_LOSS);
    EXPECT_NE(o.message.find(path("data.npz") + ": changed size while in use"),
              std::string::npos)
        << o.message;
    // The failure is final, and every call reports it.
    Outcome again = outcome(loader->next(batch));
    EXPECT_EQ(again.code, o.code);
    EXPECT_EQ(again.message, o.message);
    writeData();
  }
}

TEST_F(DataLoaderFiles, ReadsASingleNpyArray) {
  Tensor x(DType::I32, {6, 2});
  for (int i = 0; i < 12; ++i)
    x.data<int32_t>()[i] = i;
  ASSERT_TRUE(isOk(writeNpy(path("x.npy"), x)));
  std::unique_ptr<DataLoader> loader;
  ASSERT_TRUE(isOk(DataLoader::open(path("x.npy"), {{"x", DType::I32, {2}}}, 3,
                                    false, 0, 1, loader)));
  const Batch *batch = nullptr;
  ASSERT_TRUE(isOk(loader->next(batch)));
  ASSERT_TRUE(isOk(loader->next(batch)));
  int32_t values[6];
  std::memcpy(values, batch->arrays[0].data, sizeof(values));
  EXPECT_EQ(std::vector<int32_t>(values, values + 6),
            std::vector<int32_t>({6, 7, 8, 9, 10, 11}));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(DataLoaderFiles, MismatchesAreOneMessage) {
  Tensor input(DType::F32, {100, 3, 32, 32});
  Tensor label(DType::I64, {100});
  ASSERT_TRUE(
      isOk(writeNpz(path("cifar.npz"), {{"input", input}, {"label", label}})));
  std::vector<ArraySpec> cifar = {{"input", DType::F32, {3, 32, 32}},
                                  {"labels", DType::I64, {}}};
  auto expectError = [&](const std::vector<ArraySpec> &specs, int64_t batch,
                         const std::string &found) {
    EXPECT_EQ(
        openError(path("cifar.npz"), specs, batch, 0, DLC_FAILED_PRECONDITION),
        found);
  };
  std::string file = path("cifar.npz") + ": expected arrays ";
  std::string have = "; found input float32[100,3,32,32], label int64[100] (";
  expectError(cifar, 32,
              file + "input float32[N,3,32,32], labels int64[N]" + have +
                  "missing 'labels')");
  expectError({{"input", DType::F16, {3, 32}}, {"label", DType::I32, {1}}}, 32,
              file + "input float16[N,3,32], label int32[N,1]" + have +
                  "'input' is float32, not float16; 'input' has shape "
                  "[100,3,32,32], not [N,3,32]; 'label' is int64, not int32; "
                  "'label' has shape [100], not [N,1])");
  expectError({{"input", DType::F32, {3, 32, 32}}, {"label", DType::I64, {}}},
              101,
              file + "input float32[N,3,32,32], label int64[N]" + have +
                  "100 samples are fewer than the batch size 101)");

  ASSERT_TRUE(
      isOk(writeNpz(path("cifar.npz"),
                    {{"input", input}, {"label", Tensor(DType::I64, {99})}})));
  expectError({{"input", DType::F32, {3, 32, 32}}, {"label", DType::I64, {}}},
              8,
              file + "input float32[N,3,32,32], label int64[N]; found "
                     "input float32[100,3,32,32], label int64[99] "
                     "('label' has 99 samples, 'input' 100)");
}

TEST_F(DataLoaderFiles, BadArguments) {
  std::string file = path("data.npz");
  EXPECT_EQ(openError(file, specs(), 0, 0, DLC_INVALID_ARGUMENT),
            file + ": the batch size must be positive, not 0");
  EXPECT_EQ(openError(file, specs(), 2, -1, DLC_INVALID_ARGUMENT),
            file + ": the prefetch depth must not be negative, not -1");
  EXPECT_EQ(openError(file, {}, 2, 0, DLC_INVALID_ARGUMENT),
            file + ": no arrays to read were named");
  EXPECT_EQ(
      openError(file, {specs()[0], specs()[0]}, 2, 0, DLC_INVALID_ARGUMENT),
      file + ": array 'y' is expected twice");
  EXPECT_EQ(openError(path("none.npz"), specs(), 2, 0, DLC_NOT_FOUND),
            path("none.npz") + ": cannot open: No such file or directory");
}

} // namespace
