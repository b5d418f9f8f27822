//===- Executor.h - Runs one function's plan on the CPU ---------*- C++ -*-===//
//
// At session creation every step of a function is prepared: its kernel
// symbol looked up, its matmul/convolution library kernel created, each
// buffer reference turned into (base, offset). A call then only binds the
// base pointers of its arguments and results and walks the steps.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_EXECUTOR_H
#define DLC_RUNTIME_CPU_EXECUTOR_H

#include "dlc/runtime.h"
#include "runtime/comm/CommThread.h"
#include "runtime/comm/Communicator.h"
#include "runtime/core/AlignedBuffer.h"
#include "runtime/core/PlanStep.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/KernelLibrary.h"
#include "runtime/cpu/LibraryKernel.h"
#include "runtime/module/ModuleFile.h"

#include <memory>
#include <string>
#include <vector>

namespace dlc::cpu {

class FunctionExecutor {
public:
  /// Prepares `function` of `module`; `kernels` are the module's kernels
  /// by index (looked up once per session). Errors name the step.
  static dlc_status_t create(const ModuleFile &module,
                             const FunctionInfo &function, CpuDevice &device,
                             const std::vector<KernelFunction> &kernels,
                             std::unique_ptr<FunctionExecutor> &out);

  /// Bytes of scratch memory run() needs (shared by a session's functions,
  /// which never run at the same time).
  size_t scratchBytes() const { return scratchBytes_; }

  /// The communicators a rank's steps use: collectives run among its
  /// data-parallel replicas (`replicas`) or its tensor group (`tensor`); in
  /// a module of pipeline stages the rank runs the steps of stage `stage`
  /// and those of every stage, and transfers go between the ranks of
  /// `stages`, one per stage in stage order.
  struct Comms {
    Communicator *replicas = nullptr;
    Communicator *tensor = nullptr;
    Communicator *stages = nullptr;
    int stage = -1;
  };

  /// Runs the plan: arguments[i] / results[i] are the base addresses of
  /// argument / result i (the caller's tensors or globals' buffers). With
  /// `profiling`, times each step (two clock reads per step). Collectives
  /// and transfers run one at a time in the plan's order, which every rank
  /// shares.
  dlc_status_t run(std::byte *const *arguments, std::byte *const *results,
                   std::byte *scratch, dnnl::stream &stream, bool profiling,
                   const Comms &comms);

  /// Per-step wall time, accumulated over the run() calls that profiled.
  /// An all-reduce step's `seconds` is its issue (packing the bucket); the
  /// collective itself runs beside the steps after it for
  /// `collectiveSeconds`, of which the step waited `exposedSeconds`.
  struct StepProfile {
    std::string kind;
    std::string label;
    int64_t calls = 0;
    double seconds = 0;
    double collectiveSeconds = 0;
    double exposedSeconds = 0;
  };
  std::vector<StepProfile> profile() const;
  /// Seconds the last run() waited for its collectives and transfers to
  /// finish (its steps idle for communication, a pipeline stage's for
  /// another's values too), measured on every run.
  double lastWaitSeconds() const { return lastWaitSeconds_; }

private:
  struct Step : PlanStep {
    /// The addresses of refs, refilled per call.
    std::vector<void *> pointers;
    /// KernelStep: the kernel (run on `pointers`).
    KernelFunction kernel = nullptr;
    int64_t iterations = 0;
    int64_t grain = 0;
    /// MatmulStep, ConvStep: the prepared library call (run on `pointers`).
    std::unique_ptr<LibraryKernel> library;
    /// CopyStep: bytes copied from refs[0] to refs[1]. TransferStep: the
    /// bytes sent from refs[0] by stage `from`'s rank and received into
    /// refs[1] by stage `to`'s.
    uint64_t bytes = 0;
    int from = 0;
    int to = 0;
    /// TransferStep: a send is in flight, from a copy in `bucket`, or a
    /// receive (`receiving`: number `receive` of `receivedFrom`), until
    /// `waitStep`.
    bool receiving = false;
    uint64_t receive = 0;
    Communicator *receivedFrom = nullptr;
    /// AllReduceStep: each value's bytes (refs holds the n inputs, then
    /// the n outputs), packed into `bucket` for one collective, which is
    /// complete before step `waitStep`; `ticket` is its job on the
    /// communication thread while it is in flight.
    std::vector<uint64_t> valueBytes;
    dlc_dtype_t dtype = DLC_F32;
    dlc_reduce_op_t reduction = DLC_REDUCE_MEAN;
    /// Among the rank's tensor group instead of its replicas.
    bool amongTensorRanks = false;
    AlignedBuffer bucket;
    uint32_t waitStep = 0;
    uint64_t ticket = 0;
    /// ShardStep: what it does, each value's whole element count and shard
    /// size, and a collective's per-rank counts (the shards' sum, on every
    /// rank; empty for RankShard); `bucket` holds what it sends, then what
    /// it receives.
    fb::ShardKind shardKind = fb::ShardKind::RankShard;
    std::vector<uint64_t> wholeElements;
    std::vector<uint64_t> shardElements;
    std::vector<size_t> counts;
  };

  FunctionExecutor() = default;
  std::byte *resolve(const StepRef &ref, std::byte *const *arguments,
                     std::byte *const *results) const;
  /// The steps from the first on; run() waits for what they leave in
  /// flight.
  dlc_status_t runSteps(std::byte *const *arguments, std::byte *const *results,
                        std::byte *scratch, dnnl::stream &stream,
                        bool profiling, const Comms &comms);
  /// Transfer step `s`: this rank receives, sends or keeps its value, and
  /// waits until it is done.
  dlc_status_t transfer(size_t s, const Comms &comms, bool profiling);
  /// Packs all-reduce step `s`'s inputs and queues the collective that
  /// reduces them over the ranks of `comm` and unpacks the result into its
  /// outputs.
  void issueAllReduce(size_t s, Communicator &comm);
  /// The same for a reduce-scatter or all-gather ShardStep.
  void issueShardCollective(size_t s, Communicator &comm);
  /// A RankShard ShardStep: this rank's shard of each input, at once.
  void copyRankShards(size_t s, int rank);
  /// Waits for in-flight collective step `s`; failures name it.
  dlc_status_t waitAllReduce(size_t s, bool profiling);

  std::string functionName_;
  /// Parallel to steps_.
  std::vector<int64_t> profileCalls_;
  std::vector<double> profileSeconds_;
  std::vector<double> profileCollectiveSeconds_;
  std::vector<double> profileExposedSeconds_;
  double lastWaitSeconds_ = 0;
  /// Collective and transfer steps: their communication thread, and the
  /// collectives in flight, oldest first.
  std::unique_ptr<CommThread> commThread_;
  std::vector<size_t> inFlight_;
  /// Whether this run started sends, which it waits for before returning.
  bool sendsStarted_ = false;
  CpuDevice *device_ = nullptr;
  AlignedBuffer arena_;
  std::vector<const std::byte *> constants_;
  std::vector<Step> steps_;
  size_t scratchBytes_ = 0;
};

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_EXECUTOR_H
