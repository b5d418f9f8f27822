//===- CollectiveStep.h - A data-parallel step of a CUDA plan ---*- C++ -*-===//
//
// AllReduceStep and ShardStep (dlcm.fbs) on a GPU, with the CPU's bucket
// layouts (cpu/Executor.cpp). Issuing a collective packs its inputs into its
// bucket on the compute stream, so that the steps after it may reuse their
// buffers at once; the collective and the unpacking of its result into the
// outputs run on the communication stream once the packing is done (an
// event), beside the compute steps that follow, which are backward's; the
// compute stream waits for them (another event) before the first step that
// reads an output. A RankShard step communicates nothing: it copies this
// rank's shard on the compute stream.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_COLLECTIVESTEP_H
#define DLC_RUNTIME_CUDA_COLLECTIVESTEP_H

#include "runtime/cuda/DeviceCommunicator.h"
#include "runtime/cuda/DeviceResources.h"
#include "runtime/module/ModuleFile.h"

#include <memory>
#include <vector>

namespace dlc::cuda {

class CollectiveStep {
public:
  /// Prepares `step` (an AllReduceStep or a ShardStep ModuleFile checked):
  /// its bucket in `device`'s memory and its events.
  static dlc_status_t create(CudaDevice &device, const fb::Step &step,
                             std::unique_ptr<CollectiveStep> &out);

  /// Whether it runs a collective (all but RankShard).
  bool communicates() const { return kind_ != Kind::RankShard; }
  /// The first step that reads an output: join() must come before it.
  uint32_t waitStep() const { return waitStep_; }

  /// Enqueues the step on `addresses` (its inputs' device addresses, then
  /// its outputs'): the packing on `compute`, the collective over `comm`
  /// and the unpacking on `communication`. With `profiling`, the
  /// collective is timed. RankShard takes `rank` and only `compute`.
  dlc_status_t issue(const std::vector<uint64_t> &addresses,
                     DeviceCommunicator *comm, int rank, CUstream compute,
                     CUstream communication, bool profiling);
  /// Makes `compute` wait for the issued collective; with `profiling`,
  /// between timing events that measure how long it waited.
  dlc_status_t join(CUstream compute, bool profiling);
  /// After a profiled issue and join, once the compute stream is done: the
  /// collective's milliseconds on the communication stream (with its
  /// unpacking), and how long the compute stream waited for it.
  dlc_status_t elapsed(float &collectiveMs, float &exposedMs) const;

private:
  enum class Kind { AllReduce, ReduceScatter, AllGather, RankShard };

  explicit CollectiveStep(const Driver &driver) : driver_(driver) {}
  /// Enqueues a copy of `bytes` (none: nothing) on `stream`.
  dlc_status_t copy(uint64_t to, uint64_t from, uint64_t bytes,
                    CUstream stream) const;
  dlc_status_t zero(uint64_t to, uint64_t bytes, CUstream stream) const;
  /// Enqueues the copies between rank `rank`'s shard of each value's whole
  /// (`whole[i]`) and its packed place in `packed`: into the bucket when
  /// `pack`, else out of it.
  dlc_status_t copyRankShards(const std::vector<uint64_t> &whole,
                              uint64_t packed, uint64_t rank, bool pack,
                              CUstream stream) const;
  dlc_status_t check(CUresult result, const char *call) const {
    return driver_.check(result, call);
  }

  const Driver &driver_;
  Kind kind_ = Kind::AllReduce;
  dlc_dtype_t dtype_ = DLC_F32;
  dlc_reduce_op_t reduction_ = DLC_REDUCE_MEAN;
  uint32_t waitStep_ = 0;
  /// Each value's element count: of the whole value, and of one shard
  /// (the whole for an all-reduce); their shards' sum.
  std::vector<uint64_t> wholeElements_, shardElements_;
  uint64_t shards_ = 0;
  int ranks_ = 1;
  /// AllReduce: the packed inputs, reduced in place. ReduceScatter: every
  /// rank's shards (rank-major, padded with zeros), then this rank's
  /// reduced ones. AllGather: this rank's shards, then every rank's.
  DeviceBlock bucket_;
  /// Packing done (compute stream), collective and unpacking done
  /// (communication stream); and the profiling's timing events around the
  /// collective and around the compute stream's wait.
  Event packed_, done_, started_, finished_, joinBegin_, joinEnd_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_COLLECTIVESTEP_H
