//===- ShardedCheckpointTest.cpp - Tests of sharded checkpoint sets -------===//
//
// A sharded checkpoint (ZeRO-1) is a head written by rank 0 and one shard
// file per rank, committed by LATEST once all are written. These tests play
// every rank in one process: a set reads back whole for each rank, only
// LATEST commits it, a set never replaces a committed one's files,
// pruning and discarding remove whole sets (never the committed one), a
// commit removes the parts of sets that lost their head
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
  c.set = 0xabc00000u + static_cast<uint32_t>(step);
  return c;
}

/// The name of `step`'s file for `rank` (-1: the head).
std::string name(int64_t step, int rank) {
  char text[64];
  std::snprintf(text, sizeof(text), "step-%08lld-abc%05llx",
                static_cast<long long>(step), static_cast<long long>(step));
  std::string out = text;
  if (rank >= 0) {
    std::snprintf(text, sizeof(text), ".shard-%04d", rank);
    out += text;
  }
  return out + ".dlcc";
}

class ShardedCheckpoints : public TempDirTest {
protected:
  std::string ckpt() const { return path("ckpt"); }

  void writeSet(int64_t step, int keep) {
    for (int rank = -1; rank < kRanks; ++rank)
      ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(step, rank))));
    ASSERT_TRUE(isOk(commitCheckpoint(ckpt(), part(step, -1), keep)));
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
                {"LATEST", name(4, -1), name(4, 0), name(4, 1), name(4, 2)}));
  EXPECT_EQ(readFile("ckpt/LATEST"), name(4, -1) + "\n");
  for (int rank = 0; rank < kRanks; ++rank) {
    CheckpointContents read;
    ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read, rank)));
    CheckpointContents head = part(4, -1), shards = part(4, rank);
    EXPECT_EQ(read.step, 4);
    EXPECT_EQ(read.ranks, kRanks);
    EXPECT_EQ(read.set, head.set);
    EXPECT_EQ(read.fingerprint, "fp");
    EXPECT_EQ(read.metadata, head.metadata);
    ASSERT_EQ(read.tensors.size(), 3u);
    EXPECT_EQ(read.tensors[0], head.tensors[0]);
    EXPECT_EQ(read.tensors[1], shards.tensors[0]) << rank;
    EXPECT_EQ(read.tensors[2], shards.tensors[1]) << rank;
  }
  // The head's file names the set as well as LATEST does.
  CheckpointContents read;
  ASSERT_TRUE(isOk(readCheckpoint(ckpt() + "/" + name(4, -1), read, 1)));
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
    discardCheckpointPart(ckpt(), part(5, rank));
    discardCheckpointPart(ckpt(), part(2, rank));
  }
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>(
                {"LATEST", name(2, -1), name(2, 0), name(2, 1), name(2, 2)}));
}

TEST_F(ShardedCheckpoints, ASetNeverReplacesACommittedOne) {
  // A run resumed from an earlier step saves step 4 again (another set id)
  // and fails half-way: the committed set is intact and still restores.
  writeSet(4, 0);
  auto again = [](int rank) {
    CheckpointContents c = part(4, rank);
    c.set = 0x12345678;
    c.tensors[0].second = randomTensor(c.tensors[0].second.dtype(),
                                       c.tensors[0].second.shape(), 99);
    return c;
  };
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), again(0))));
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), again(1))));
  for (int rank = 0; rank < kRanks; ++rank) {
    CheckpointContents read;
    ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read, rank)));
    EXPECT_EQ(read.tensors[1], part(4, rank).tensors[0]) << rank;
  }
  // Committed whole, it supersedes the old set, whose files go.
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), again(2))));
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), again(-1))));
  ASSERT_TRUE(isOk(commitCheckpoint(ckpt(), again(-1), 0)));
  EXPECT_EQ(listDir("ckpt"), std::vector<std::string>(
                                 {"LATEST", "step-00000004-12345678.dlcc",
                                  "step-00000004-12345678.shard-0000.dlcc",
                                  "step-00000004-12345678.shard-0001.dlcc",
                                  "step-00000004-12345678.shard-0002.dlcc"}));
  CheckpointContents read;
  ASSERT_TRUE(isOk(readCheckpoint(ckpt(), read, 1)));
  EXPECT_EQ(read.tensors[1], again(1).tensors[0]);
}

TEST_F(ShardedCheckpoints, PruningRemovesWholeSets) {
  writeSet(1, 2);
  // A part left by a set that never committed goes with its step.
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(2, 1))));
  writeSet(3, 2);
  writeSet(4, 2);
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>({"LATEST", name(3, -1), name(3, 0),
                                      name(3, 1), name(3, 2), name(4, -1),
                                      name(4, 0), name(4, 1), name(4, 2)}));

  // Keeping every set, a commit still removes the parts of one that never
  // had its head (its rank 0 discarded it when another rank stopped), a
  // step before or after the committed one, and the temporary files of
  // writers killed mid-write; not others' files.
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(5, 2))));
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), part(9, 0))));
  writeFile("ckpt/." + name(5, 1) + ".tmp", "half");
  writeFile("ckpt/.LATEST.tmp", "half");
  writeFile("ckpt/.notes.tmp", "mine");
  writeFile("ckpt/step-1.shard-2.dlcc", "not a name dlc writes");
  writeSet(6, 0);
  EXPECT_EQ(listDir("ckpt"),
            std::vector<std::string>(
                {".notes.tmp", "LATEST", name(3, -1), name(3, 0), name(3, 1),
                 name(3, 2), name(4, -1), name(4, 0), name(4, 1), name(4, 2),
                 name(6, -1), name(6, 0), name(6, 1), name(6, 2),
                 "step-1.shard-2.dlcc"}));
}

TEST_F(ShardedCheckpoints, RefusesInconsistentSets) {
  writeSet(6, 0);
  std::string head = ckpt() + "/" + name(6, -1);
  EXPECT_EQ(readError(ckpt(), -1, DLC_FAILED_PRECONDITION),
            head + " is sharded over 3 ranks (dlc-compile --zero 1): each "
                   "rank restores its own part, with its communicator");
  EXPECT_EQ(readError(ckpt(), 3, DLC_FAILED_PRECONDITION),
            head + " is sharded over 3 ranks; rank 3 has no part of it");
  std::string shard1 = ckpt() + "/" + name(6, 1);
  EXPECT_EQ(readError(shard1, 1, DLC_FAILED_PRECONDITION),
            shard1 +
                " is rank 1's part of a sharded checkpoint: restore from "
                "its set's head, " +
                name(6, -1));

  // Rank 2's file holds rank 0's part, or another model's, or another
  // set's.
  std::string shard2 = ckpt() + "/" + name(6, 2);
  std::filesystem::copy_file(ckpt() + "/" + name(6, 0), shard2,
                             std::filesystem::copy_options::overwrite_existing);
  std::string notItsPart =
      shard2 + ": corrupt checkpoint: it is not rank 2's part of " + head;
  EXPECT_EQ(readError(ckpt(), 2, DLC_DATA_LOSS), notItsPart);
  CheckpointContents foreign = part(6, 2);
  foreign.fingerprint = "other";
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), foreign)));
  EXPECT_EQ(readError(ckpt(), 2, DLC_DATA_LOSS), notItsPart);
  CheckpointContents otherSet = part(6, 2);
  otherSet.set = 7;
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), otherSet)));
  std::filesystem::rename(ckpt() + "/step-00000006-00000007.shard-0002.dlcc",
                          shard2);
  EXPECT_EQ(readError(ckpt(), 2, DLC_DATA_LOSS), notItsPart);
  CheckpointContents clash = part(6, 2);
  clash.tensors[0].first = "w";
  ASSERT_TRUE(isOk(writeCheckpointPart(ckpt(), clash)));
  EXPECT_EQ(readError(ckpt(), 2, DLC_DATA_LOSS),
            shard2 + ": corrupt checkpoint: 'w' is in " + head + " too");

  std::filesystem::remove(shard1);
  EXPECT_EQ(
      readError(ckpt(), 1, DLC_DATA_LOSS)
          .rfind(head + ": its set's part " + shard1 + " is missing: ", 0),
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
  expectRefused(c, true,
                "a part of a sharded checkpoint needs its rank "
                "count");
  c.ranks = 2;
  c.rank = 2;
  expectRefused(c, true, "rank 2 is not one of 2 ranks");
  c.rank = -2;
  expectRefused(c, true, "rank -2 is not one of 2 ranks");
  EXPECT_FALSE(std::filesystem::exists(ckpt()));
}
