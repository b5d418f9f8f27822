//===- RankLayout.h - Where each rank of a partitioned job sits -*- C++ -*-===//
//
// A module compiled with --dp D --tp T --pp S runs on D x T x S ranks.
// Rank r is tensor rank r % T of replica (r / T) % D of pipeline stage
// r / (D T): tensor ranks innermost, since they talk most (every layer),
// and stages outermost, as Megatron-LM lays them out; the evaluator's
// RankGrid (ir/eval/Evaluator.h) simulates the same layout. The session
// and the runner both split the job's communicator with these colors, so
// that they agree on every group.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_COMM_RANKLAYOUT_H
#define DLC_RUNTIME_COMM_RANKLAYOUT_H

namespace dlc {

struct RankLayout {
  int replicas = 1;
  int tensorRanks = 1;
  int stages = 1;

  int tensorRank(int rank) const { return rank % tensorRanks; }
  int replica(int rank) const { return rank / tensorRanks % replicas; }
  int stage(int rank) const { return rank / (replicas * tensorRanks); }

  // Colors for Communicator::split: the ranks of one color form a group,
  // ordered by their rank in the job.

  /// The ranks that average gradients (the same stage and tensor rank of
  /// every replica).
  int replicaColor(int rank) const {
    return stage(rank) * tensorRanks + tensorRank(rank);
  }
  /// The ranks that split one replica's layers of one stage.
  int tensorColor(int rank) const { return rank / tensorRanks; }
  /// The ranks that pass one replica's activations from stage to stage
  /// (the same replica and tensor rank of every stage): stage s is rank s
  /// of the group.
  int stageColor(int rank) const { return rank % (replicas * tensorRanks); }
};

} // namespace dlc

#endif // DLC_RUNTIME_COMM_RANKLAYOUT_H
