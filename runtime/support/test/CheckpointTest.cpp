//===- CheckpointTest.cpp - Tests of checkpoint files ---------------------===//
//
// Round trips of every dtype with metadata; the marker and pruning; every
// truncation and random byte flip of a checkpoint is Corrupt (or, for bytes
// no reader looks at, reads exactly as before), never a crash; and a write
// that runs out of space (RLIMIT_FSIZE in a child process) leaves the
// previous checkpoint and LATEST bit-identical with no temporary file left.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Checkpoint.h"

#include "runtime/support/test/Outcome.h"
#include "runtime/support/test/TempDir.h"
#include "runtime/support/test/TestTensors.h"

#include <gtest/gtest.h>

#include <csignal>
#include <random>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace dlc;

namespace {

using namespace dlc::testing;

/// A small checkpoint of every dtype, with binary bytes in the fingerprint.
CheckpointContents sample(int64_t step) {
  CheckpointContents c;
  const DType types[] = {DType::Bool, DType::I8,  DType::I16,  DType::I32,
                         DType::I64,  DType::U8,  DType::U16,  DType::U32,
                         DType::U64,  DType::F16, DType::BF16, DType::F32,
                         DType::F64};
  uint32_t seed = uint32_t(step) * 100;
  for (DType type : types)
    c.tensors.emplace_back(std::string("layer/") + dtypeName(type),
                           randomTensor(type, {2, 3}, seed++));
  c.tensors.emplace_back("scalar", randomTensor(DType::F32, {}, seed++));
  c.tensors.emplace_back("empty", Tensor(DType::BF16, {0, 2}));
  c.metadata = {{"data_position", 1234567890123}, {"epoch", -3}};
  c.fingerprint = std::string("model\0\xff", 7);
  c.step = step;
  return c;
}

/// A checkpoint small enough for tests that alter each of its bytes.
CheckpointContents tiny(int64_t step) {
  CheckpointContents c;
  c.tensors.emplace_back("w", randomTensor(DType::F32, {3}, 1));
  c.tensors.emplace_back("h", randomTensor(DType::BF16, {2}, 2));
  c.metadata["position"] = 12;
  c.fingerprint = "fp";
  c.step = step;
  return c;
}

void expectEqual(const CheckpointContents &a, const CheckpointContents &b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    EXPECT_EQ(a.tensors[i].second, b.tensors[i].second) << a.tensors[i].first;
  }
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.step, b.step);
}

class CheckpointFiles : public dlc::testing::TempDirTest {
protected:
  std::string ckpt() const { return path("ckpt"); }

  void write(const CheckpointContents &c, int keep) {
    ASSERT_TRUE(isOk(writeCheckpoint(ckpt(), c, keep)));
  }

  /// Reads `path`, expecting a failure with `code`; returns the message.
  std::string readError(const std::string &path, dlc_status_code_t code) {
    CheckpointContents out;
    Outcome o = outcome(readCheckpoint(path, out));
    EXPECT_EQ(o.code, code) << path << ": " << o.message;
    return o.message;
  }
};

} // namespace

TEST_F(CheckpointFiles, RoundTripsEveryDtypeAndTheMetadata) {
  CheckpointContents written = sample(7);
  write(written, 0);
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>({"LATEST", "step-00000007.dlcc"}));
  EXPECT_EQ(readFile("ckpt/LATEST"), "step-00000007.dlcc\n");
  for (const std::string &path : {ckpt(), ckpt() + "/step-00000007.dlcc"}) {
    CheckpointContents read;
    ASSERT_TRUE(isOk(readCheckpoint(path, read)));
    expectEqual(read, written);
  }
  // The same contents give the same bytes.
  std::string first = readFile("ckpt/step-00000007.dlcc");
  write(written, 0);
  EXPECT_EQ(readFile("ckpt/step-00000007.dlcc"), first);
}

TEST_F(CheckpointFiles, NumpyReadsCheckpoints) {
  if (!dlc::testing::pythonHas("numpy"))
    GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  write(sample(3), 0);
  writeFile("check.py", R"(
import sys
import numpy as np
f = np.load(sys.argv[1])
assert f['__dlc__/step'] == 3
assert f['__dlc__/meta/epoch'] == -3
assert bytes(f['__dlc__/fingerprint']) == b'model\0\xff'
assert f['layer/float32'].shape == (2, 3) and f['layer/float32'].dtype == np.float32
assert f['layer/bfloat16'].dtype == np.uint16 and '__dlc__/bfloat16/layer/bfloat16' in f.files
assert f.files[-1] == '__dlc__/checksum'
)");
  std::string command = "/usr/bin/python3 " + path("check.py") + " " + ckpt() +
                        "/step-00000003.dlcc";
  EXPECT_EQ(std::system(command.c_str()), 0);
}

TEST_F(CheckpointFiles, KeepsTheNewest) {
  for (int64_t step = 1; step <= 5; ++step)
    write(sample(step), 2);
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>(
                {"LATEST", "step-00000004.dlcc", "step-00000005.dlcc"}));
  // A run resumed from an older step keeps what it just wrote.
  write(sample(3), 2);
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>(
                {"LATEST", "step-00000003.dlcc", "step-00000005.dlcc"}));
  EXPECT_EQ(readFile("ckpt/LATEST"), "step-00000003.dlcc\n");
  write(sample(6), 0);
  write(sample(123456789), 1);
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>({"LATEST", "step-123456789.dlcc"}));
  CheckpointContents read;
  ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read)));
  EXPECT_EQ(read.step, 123456789);
}

TEST_F(CheckpointFiles, MissingCheckpointsAndMarkers) {
  EXPECT_EQ(readError(path("none"), DLC_NOT_FOUND),
            path("none") + ": No such file or directory");
  EXPECT_EQ(readError(dir, DLC_NOT_FOUND),
            dir + " has no checkpoint (no LATEST marker)");
  write(sample(1), 0);
  writeFile("ckpt/LATEST", "step-00000002.dlcc\n");
  EXPECT_EQ(readError(ckpt(), DLC_DATA_LOSS),
            ckpt() + "/LATEST names step-00000002.dlcc, which cannot be "
                     "read: No such file or directory");
  for (const char *garbage : {"", "../step-00000001.dlcc", "LATEST", "\xff"}) {
    writeFile("ckpt/LATEST", garbage);
    EXPECT_EQ(readError(ckpt(), DLC_DATA_LOSS),
              ckpt() + "/LATEST is corrupt (it does not name a checkpoint "
                       "file)");
  }
  // An .npz that is not a checkpoint.
  ASSERT_TRUE(isOk(
      writeNpz(path("plain.npz"), {{"w", randomTensor(DType::F32, {2}, 1)}})));
  EXPECT_EQ(readError(path("plain.npz"), DLC_DATA_LOSS),
            path("plain.npz") + ": corrupt checkpoint: not a dlc checkpoint "
                                "(it does not end with __dlc__/checksum)");
}

TEST_F(CheckpointFiles, EveryTruncationIsCorrupt) {
  write(tiny(0), 0);
  std::string bytes = readFile("ckpt/step-00000000.dlcc");
  for (size_t size = 0; size < bytes.size(); ++size) {
    writeFile("cut.dlcc", bytes.substr(0, size));
    std::string message = readError(path("cut.dlcc"), DLC_DATA_LOSS);
    ASSERT_NE(message.find(path("cut.dlcc")), std::string::npos) << message;
  }
}

TEST_F(CheckpointFiles, RandomByteFlipsAreCorruptOrHarmless) {
  CheckpointContents c = tiny(4);
  write(c, 0);
  std::string original = readFile("ckpt/step-00000004.dlcc");
  std::mt19937 rng(99);
  int harmless = 0;
  for (size_t at = 0; at < original.size(); ++at) {
    std::string bytes = original;
    bytes[at] ^= char(1 + rng() % 255);
    writeFile("ckpt/step-00000004.dlcc", bytes);
    CheckpointContents read;
    Outcome o = outcome(readCheckpoint(ckpt(), read));
    if (o.ok()) {
      // Only bytes nothing reads (timestamps, versions, attributes, the
      // local copies of sizes) may change without an error.
      expectEqual(read, c);
      ++harmless;
    } else {
      ASSERT_EQ(o.code, DLC_DATA_LOSS) << o.message;
      ASSERT_NE(o.message.find(ckpt() + "/step-00000004.dlcc"),
                std::string::npos)
          << o.message;
    }
  }
  EXPECT_LT(harmless, int(original.size()) / 4);
}

TEST_F(CheckpointFiles, AFullDiskKeepsThePreviousCheckpoint) {
  write(sample(1), 1);
  std::string previous = readFile("ckpt/step-00000001.dlcc");
  std::string latest = readFile("ckpt/LATEST");
  CheckpointContents big = sample(2);
  big.tensors.emplace_back("big", Tensor(DType::F32, {64, 1024}));

  // The child can write at most 16 KiB per file; the write fails with EFBIG
  // (SIGXFSZ ignored), and the child reports what writeCheckpoint said.
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipeFds[0]);
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit = {16 << 10, 16 << 10};
    setrlimit(RLIMIT_FSIZE, &limit);
    Outcome o = outcome(writeCheckpoint(ckpt(), big, 1));
    std::string report =
        (o.ok() ? "written" : std::to_string(int(o.code))) + "\n" + o.message;
    ssize_t ignored = ::write(pipeFds[1], report.data(), report.size());
    (void)ignored;
    _exit(0);
  }
  close(pipeFds[1]);
  std::string report;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipeFds[0], buffer, sizeof(buffer))) > 0)
    report.append(buffer, size_t(n));
  close(pipeFds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  std::string file = ckpt() + "/step-00000002.dlcc";
  EXPECT_EQ(report, std::to_string(int(DLC_RESOURCE_EXHAUSTED)) + "\n" + file +
                        ": cannot write '" + ckpt() +
                        "/.step-00000002.dlcc.tmp': File too large");
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>({"LATEST", "step-00000001.dlcc"}));
  EXPECT_EQ(readFile("ckpt/step-00000001.dlcc"), previous);
  EXPECT_EQ(readFile("ckpt/LATEST"), latest);
  CheckpointContents read;
  ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read)));
  EXPECT_EQ(read.step, 1);
}

TEST_F(CheckpointFiles, RefusesInvalidContents) {
  auto expectRefused = [&](const CheckpointContents &c,
                           const std::string &reason) {
    Outcome o = outcome(writeCheckpoint(ckpt(), c, 0));
    EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
    EXPECT_EQ(o.message, ckpt() + ": cannot write checkpoint: " + reason);
  };
  CheckpointContents c;
  c.step = -1;
  expectRefused(c, "the step must not be negative, not -1");
  c.step = 0;
  c.tensors = {{"__dlc__/step", Tensor(DType::I64, {})}};
  expectRefused(c, "tensor '__dlc__/step' uses the reserved prefix __dlc__/");
  c.tensors = {{"a", Tensor()}, {"a", Tensor()}};
  expectRefused(c, "tensor 'a' appears twice");
  c.tensors = {{"", Tensor()}};
  expectRefused(c, "a tensor name is empty or holds a NUL");
  c.tensors.clear();
  c.metadata[""] = 1;
  expectRefused(c, "a metadata key is empty or holds a NUL");
  EXPECT_FALSE(std::filesystem::exists(ckpt()));

  // A directory that cannot be created.
  writeFile("file", "x");
  Outcome o = outcome(writeCheckpoint(path("file") + "/ckpt", sample(1), 0));
  EXPECT_EQ(o.code, DLC_IO_ERROR);
  EXPECT_EQ(o.message.rfind(path("file") + "/ckpt: cannot create the "
                                           "directory: ",
                            0),
            0u)
      << o.message;
}
