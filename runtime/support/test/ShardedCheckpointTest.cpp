//===- ShardedCheckpointTest.cpp - Tests of sharded checkpoint sets -------===//
//
// A sharded checkpoint (ZeRO-1) is a head written by rank 0 and one shard
// file per rank, committed by LATEST once all are written. These tests play
// every rank in one process: a set reads back whole for each rank, only
// LATEST commits it, pruning and discarding remove whole sets (never the
// committed one), a commit removes the parts of sets that lost their head
// and killed writers' temporary files, and each inconsistent set (a
// missing, foreign or mislabelled part, a part read as a checkpoint) is
// refused with a message naming the file.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Checkpoint.h"

#include "runtime/support/test/Outcome.h"
#include "runtime/support/test/TempDir.h"
#include "runtime/support/test/TestTensors.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace dlc;

namespace {

using namespace dlc::testing;

constexpr int kRanks = 3;

/// Rank `rank`'s part of the set of `step` (rank -1: the head).
CheckpointContents part(int64_t step, int rank) {
  CheckpointContents c;
  uint32_t seed = static_cast<uint32_t>(step * 10 + rank + 1);
  if (rank < 0) {
    c.tensors.emplace_back("w", randomTensor(DType::F32, {2, 3}, seed));
    c.metadata["position"] = step * 8;
  } else {
    c.tensors.emplace_back("m", randomTensor(DType::F32, {2}, seed));
    c.tensors.emplace_back("v", randomTensor(DType::BF16, {2}, seed + 100));
  }
  c.fingerprint = "fp";
  c.step = step;
  c.ranks = kRanks;
  c.rank = rank;
  return c;
}

class ShardedCheckpoints : public TempDirTest {
protected:
  std::string ckpt() const { return path("ckpt"); }

  void writeSet(int64_t step, int keep) {
    for (int rank = -1; rank < kRanks; ++rank)
      ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(step, rank))));
    ASSERT_TRUE(isOk(commitCheckpoint(ckpt(), step, keep)));
  }

  std::string readError(const std::string &path, int rank,
                        dlc_status_code_t code) {
    CheckpointContents out;
    Outcome o = outcome(readCheckpoint(path, out, rank));
    EXPECT_EQ(o.code, code) << path << ": " << o.message;
    return o.message;
  }
};

} // namespace

TEST_F(ShardedCheckpoints, EachRankReadsTheHeadAndItsShards) {
  writeSet(4, 0);
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>(
                {"LATEST", "step-00000004.dlcc", "step-00000004.shard-0000.dlcc",
                 "step-00000004.shard-0001.dlcc",
                 "step-00000004.shard-0002.dlcc"}));
  EXPECT_EQ(readFile("ckpt/LATEST"), "step-00000004.dlcc\n");
  for (int rank = 0; rank < kRanks; ++rank) {
    CheckpointContents read;
    ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read, rank)));
    CheckpointContents head = part(4, -1), shards = part(4, rank);
    EXPECT_EQ(read.step, 4);
    EXPECT_EQ(read.ranks, kRanks);
    EXPECT_EQ(read.fingerprint, "fp");
    EXPECT_EQ(read.metadata, head.metadata);
    ASSERT_EQ(read.tensors.size(), 3u);
    EXPECT_EQ(read.tensors[0], head.tensors[0]);
    EXPECT_EQ(read.tensors[1], shards.tensors[0]) << rank;
    EXPECT_EQ(read.tensors[2], shards.tensors[1]) << rank;
  }
  // The head's file names the set as well as LATEST does.
  CheckpointContents read;
  ASSERT_TRUE(
      isOk(readCheckpoint(ckpt() + "/step-00000004.dlcc", read, 1)));
  EXPECT_EQ(read.tensors.size(), 3u);
}

TEST_F(ShardedCheckpoints, OnlyTheMarkerCommitsASet) {
  writeSet(2, 0);
  // Step 5's parts are all on disk, but LATEST still names step 2.
  for (int rank = -1; rank < kRanks; ++rank)
    ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(5, rank))));
  CheckpointContents read;
  ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read, 0)));
  EXPECT_EQ(read.step, 2);
  // A set that failed is discarded part by part; the committed one never.
  for (int rank = -1; rank < kRanks; ++rank) {
    discardCheckpointPart(ckpt(), 5, rank);
    discardCheckpointPart(ckpt(), 2, rank);
  }
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>(
                {"LATEST", "step-00000002.dlcc", "step-00000002.shard-0000.dlcc",
                 "step-00000002.shard-0001.dlcc",
                 "step-00000002.shard-0002.dlcc"}));
}

TEST_F(ShardedCheckpoints, PruningRemovesWholeSets) {
  writeSet(1, 2);
  // A part left by a set that never committed goes with its step.
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(2, 1))));
  writeSet(3, 2);
  writeSet(4, 2);
  std::vector<std::string> names = listDir("ckpt");
  EXPECT_EQ(names.size(), 1u + 2 * (1 + kRanks));
  for (const std::string &name : names)
    EXPECT_TRUE(name == "LATEST" || name.rfind("step-00000003", 0) == 0 ||
                name.rfind("step-00000004", 0) == 0)
        << name;
  CheckpointContents read;
  ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read, 2)));
  EXPECT_EQ(read.step, 4);

  // Keeping every set, a commit still removes the parts of one that never
  // had its head (its rank 0 discarded it when another rank stopped), a
  // step before or after the committed one.
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(5, 2))));
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(9, 0))));
  // And the temporary files of writers killed mid-write; not others'.
  writeFile("ckpt/.step-00000005.shard-0001.dlcc.tmp", "half");
  writeFile("ckpt/.LATEST.tmp", "half");
  writeFile("ckpt/.notes.tmp", "mine");
  writeSet(6, 0);
  EXPECT_TRUE(std::filesystem::exists(ckpt() + "/.notes.tmp"));
  std::filesystem::remove(ckpt() + "/.notes.tmp");
  EXPECT_EQ(listDir("ckpt").size(), 1u + 3 * (1 + kRanks));
  EXPECT_FALSE(std::filesystem::exists(ckpt() + "/step-00000005.shard-0002.dlcc"));
  EXPECT_FALSE(std::filesystem::exists(ckpt() + "/step-00000009.shard-0000.dlcc"));
}

TEST_F(ShardedCheckpoints, RefusesInconsistentSets) {
  writeSet(6, 0);
  std::string head = ckpt() + "/step-00000006.dlcc";
  EXPECT_EQ(readError(ckpt(), -1, DLC_FAILED_PRECONDITION),
            head + " is sharded over 3 ranks (dlc-compile --zero 1): each "
                   "rank restores its own part, with its communicator");
  EXPECT_EQ(readError(ckpt(), 3, DLC_FAILED_PRECONDITION),
            head + " is sharded over 3 ranks; rank 3 has no part of it");
  std::string shard1 = ckpt() + "/step-00000006.shard-0001.dlcc";
  EXPECT_EQ(readError(shard1, 1, DLC_FAILED_PRECONDITION),
            shard1 + " is rank 1's part of a sharded checkpoint: restore from "
                     "its set's head, step-00000006.dlcc");

  // Rank 2's file holds rank 0's part, or another model's, or another
  // step's.
  std::filesystem::copy_file(
      ckpt() + "/step-00000006.shard-0000.dlcc",
      ckpt() + "/step-00000006.shard-0002.dlcc",
      std::filesystem::copy_options::overwrite_existing);
  std::string shard2 = ckpt() + "/step-00000006.shard-0002.dlcc";
  std::string notItsPart =
      shard2 + ": corrupt checkpoint: it is not rank 2's part of " + head;
  EXPECT_EQ(readError(ckpt(), 2, DLC_DATA_LOSS), notItsPart);
  CheckpointContents foreign = part(6, 2);
  foreign.fingerprint = "other";
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), foreign)));
  EXPECT_EQ(readError(ckpt(), 2, DLC_DATA_LOSS), notItsPart);
  CheckpointContents clash = part(6, 2);
  clash.tensors[0].first = "w";
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), clash)));
  EXPECT_EQ(readError(ckpt(), 2, DLC_DATA_LOSS),
            shard2 + ": corrupt checkpoint: 'w' is in " + head + " too");

  std::filesystem::remove(shard1);
  EXPECT_EQ(readError(ckpt(), 1, DLC_DATA_LOSS).rfind(
                head + ": its set's part " + shard1 + " is missing: ", 0),
            0u);
  // Rank 0's part is intact.
  CheckpointContents read;
  EXPECT_TRUE(isOk(readCheckpoint(ckpt(), read, 0)));
}

TEST_F(ShardedCheckpoints, RefusesInvalidParts) {
  auto expectRefused = [&](const CheckpointContents &c, bool asPart,
                           const std::string &reason) {
    Outcome o = outcome(asPart ? writeCheckpointPart(ckpt(), c)
                               : writeCheckpoint(ckpt(), c, 0));
    EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
    EXPECT_EQ(o.message, ckpt() + ": cannot write checkpoint: " + reason);
  };
  expectRefused(part(1, 0), false,
                "a sharded one is written part by part "
                "(writeCheckpointPart)");
  CheckpointContents c = part(1, 0);
  c.ranks = 0;
  expectRefused(c, true, "a part of a sharded checkpoint needs its rank "
                         "count");
  c.ranks = 2;
  c.rank = 2;
  expectRefused(c, true, "rank 2 is not one of 2 ranks");
  c.rank = -2;
  expectRefused(c, true, "rank -2 is not one of 2 ranks");
  EXPECT_FALSE(std::filesystem::exists(ckpt()));
}
