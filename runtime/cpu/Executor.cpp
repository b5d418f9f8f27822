//===- Executor.cpp - Runs one function's plan on the CPU -----------------===//
//
// Prepares each step once (kernel symbols, oneDNN primitives, buffer
// references) and, per call, resolves the references against the call's
// arguments and results and runs the steps in order: kernels through the
// thread pool, matmuls and convolutions through their library kernels,
// copies with memmove. Errors name the step and its ONNX node.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Executor.h"

#include "runtime/core/Status.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace dlc::cpu {
namespace {

/// The address of an empty constant (no data in the module): never read,
/// but valid, so that no step is handed a null pointer.
alignas(64) std::byte emptyConstant[64];

} // namespace

dlc_status_t
FunctionExecutor::create(const ModuleFile &module, const FunctionInfo &function,
                         CpuDevice &device,
                         const std::vector<KernelFunction> &kernels,
                         std::unique_ptr<FunctionExecutor> &out) {
  std::unique_ptr<FunctionExecutor> e(new FunctionExecutor());
  e->functionName_ = function.name;
  e->device_ = &device;
  const fb::Function &plan = *function.plan;
  if (!e->arena_.allocate(plan.arena_size(), true))
    return makeStatus(DLC_RESOURCE_EXHAUSTED,
                      function.name + ": out of memory for its " +
                          std::to_string(plan.arena_size()) + "-byte arena");
  if (const auto *constants = module.root().constants())
    for (const fb::Constant *c : *constants)
      e->constants_.push_back(
          c->data() && c->data()->size()
              ? reinterpret_cast<const std::byte *>(c->data()->data())
              : emptyConstant);

  DLC_RETURN_IF_ERROR(prepareSteps(
      module, function, e->steps_,
      [&](const fb::Step &fbStep, Step &step) -> dlc_status_t {
        step.pointers.resize(step.refs.size());
        switch (step.kind) {
        case fb::StepKind::KernelStep: {
          const fb::KernelStep &k = *fbStep.step_as_KernelStep();
          step.kernel = kernels[k.kernel()];
          step.iterations = k.iterations();
          step.grain = k.grain() > 0 ? k.grain() : ThreadPool::kDefaultGrain;
          return nullptr;
        }
        case fb::StepKind::MatmulStep:
          return createMatmulKernel(*fbStep.step_as_MatmulStep(), device,
                                    step.library);
        case fb::StepKind::ConvStep:
          return createConvKernel(*fbStep.step_as_ConvStep(), device,
                                  step.library);
        case fb::StepKind::CopyStep:
          step.bytes = fbStep.step_as_CopyStep()->bytes();
          return nullptr;
        case fb::StepKind::TransferStep: {
          const fb::TransferStep &t = *fbStep.step_as_TransferStep();
          step.bytes = t.bytes();
          step.from = static_cast<int>(t.from());
          step.to = static_cast<int>(t.to());
          step.waitStep = t.wait_step();
          if (!e->commThread_)
            e->commThread_ = std::make_unique<CommThread>();
          return nullptr;
        }
        case fb::StepKind::AllReduceStep: {
          const fb::AllReduceStep &r = *fbStep.step_as_AllReduceStep();
          if (!e->commThread_)
            e->commThread_ = std::make_unique<CommThread>();
          step.waitStep = r.wait_step();
          step.dtype = static_cast<dlc_dtype_t>(r.dtype());
          step.reduction = r.reduction() == fb::RankReduction::Mean
                               ? DLC_REDUCE_MEAN
                               : DLC_REDUCE_SUM;
          step.amongTensorRanks = r.tensor_parallel();
          uint64_t total = 0;
          for (uint64_t elements : *r.elements()) {
            step.valueBytes.push_back(elements * dlc_dtype_size(step.dtype));
            total += step.valueBytes.back();
          }
          if (!step.bucket.allocate(total, false))
            return makeStatus(DLC_RESOURCE_EXHAUSTED,
                              "out of memory for its " + std::to_string(total) +
                                  "-byte bucket");
          return nullptr;
        }
        case fb::StepKind::ShardStep: {
          const fb::ShardStep &z = *fbStep.step_as_ShardStep();
          step.shardKind = z.kind();
          step.amongTensorRanks = z.tensor_parallel();
          step.waitStep = z.wait_step();
          step.dtype = static_cast<dlc_dtype_t>(z.dtype());
          step.reduction = z.reduction() == fb::RankReduction::Mean
                               ? DLC_REDUCE_MEAN
                               : DLC_REDUCE_SUM;
          const uint64_t ranks = z.ranks();
          uint64_t shards = 0;
          for (uint64_t elements : *z.elements()) {
            step.wholeElements.push_back(elements);
            step.shardElements.push_back(elements / ranks +
                                         (elements % ranks != 0));
            shards += step.shardElements.back();
          }
          if (step.shardKind == fb::ShardKind::RankShard)
            return nullptr;
          step.counts.assign(ranks, shards);
          if (!e->commThread_)
            e->commThread_ = std::make_unique<CommThread>();
          // Every rank's shards (sent by a reduce-scatter, received by an
          // all-gather) and this rank's.
          uint64_t bytes = (ranks + 1) * shards * dlc_dtype_size(step.dtype);
          if (!step.bucket.allocate(bytes, false))
            return makeStatus(DLC_RESOURCE_EXHAUSTED,
                              "out of memory for its " + std::to_string(bytes) +
                                  "-byte bucket");
          return nullptr;
        }
        default:
          // ModuleFile refuses any other step kind.
          return makeStatus(DLC_INTERNAL, "unknown step kind");
        }
      }));
  // Room for every collective and send in flight at once, so that issuing
  // one never allocates after its job is queued.
  e->inFlight_.reserve(
      std::count_if(e->steps_.begin(), e->steps_.end(), [](const Step &step) {
        return step.kind == fb::StepKind::AllReduceStep ||
               step.kind == fb::StepKind::TransferStep ||
               (step.kind == fb::StepKind::ShardStep &&
                step.shardKind != fb::ShardKind::RankShard);
      }));
  // The library steps share one scratch buffer, as large as the largest
  // needs.
  for (const Step &step : e->steps_)
    if (step.library)
      e->scratchBytes_ =
          std::max(e->scratchBytes_, step.library->scratchBytes());
  out = std::move(e);
  return nullptr;
}

std::byte *FunctionExecutor::resolve(const StepRef &ref,
                                     std::byte *const *arguments,
                                     std::byte *const *results) const {
  std::byte *base = nullptr;
  switch (ref.kind) {
  case fb::BufferKind::Arena:
    base = const_cast<std::byte *>(arena_.data());
    break;
  case fb::BufferKind::Argument:
    base = arguments[ref.index];
    break;
  case fb::BufferKind::Result:
    base = results[ref.index];
    break;
  case fb::BufferKind::Constant:
    // Constants are only ever read (ModuleFile refuses a step writing one).
    base = const_cast<std::byte *>(constants_[ref.index]);
    break;
  }
  return base + ref.offset;
}

void FunctionExecutor::issueAllReduce(size_t s, Communicator &comm) {
  Step &step = steps_[s];
  // The inputs are packed now: the steps after this one may reuse their
  // buffers. The outputs' buffers are this step's until its wait.
  const size_t n = step.valueBytes.size();
  std::byte *packed = step.bucket.data();
  for (size_t i = 0, at = 0; i < n; at += step.valueBytes[i++])
    std::memcpy(packed + at, step.pointers[i], step.valueBytes[i]);
  step.ticket = commThread_->enqueue([&step, &comm, n, packed] {
    size_t count = step.bucket.size() / dlc_dtype_size(step.dtype);
    DLC_RETURN_IF_ERROR(
        comm.allReduce(packed, count, step.dtype, step.reduction));
    for (size_t i = 0, at = 0; i < n; at += step.valueBytes[i++])
      std::memcpy(step.pointers[n + i], packed + at, step.valueBytes[i]);
    return dlc_status_t(nullptr);
  });
  inFlight_.push_back(s);
}

namespace {

/// Where rank `rank`'s shard of a value of `whole` elements (shards of
/// `shard`) starts and ends within it: [begin, end), short or empty where it
/// reaches the padding.
std::pair<uint64_t, uint64_t> shardRange(uint64_t whole, uint64_t shard,
                                         uint64_t rank) {
  uint64_t begin = std::min(rank * shard, whole);
  return {begin, std::min(begin + shard, whole)};
}

} // namespace

void FunctionExecutor::issueShardCollective(size_t s, Communicator &comm) {
  Step &step = steps_[s];
  const size_t n = step.wholeElements.size();
  const size_t element = dlc_dtype_size(step.dtype);
  const uint64_t ranks = step.counts.size(), shards = step.counts.front();
  std::byte *bucket = step.bucket.data();
  if (step.shardKind == fb::ShardKind::ReduceScatter) {
    // Rank-major: every value's block r, padded with zeros, for each rank r.
    std::byte *send = bucket, *recv = bucket + ranks * shards * element;
    std::memset(send, 0, ranks * shards * element);
    for (uint64_t r = 0, at = 0; r < ranks; ++r)
      for (size_t i = 0; i < n; at += step.shardElements[i++] * element) {
        auto [begin, end] =
            shardRange(step.wholeElements[i], step.shardElements[i], r);
        std::memcpy(send + at,
                    static_cast<std::byte *>(step.pointers[i]) +
                        begin * element,
                    (end - begin) * element);
      }
    step.ticket = commThread_->enqueue([&step, &comm, n, send, recv, element] {
      DLC_RETURN_IF_ERROR(comm.reduceScatter(send, recv, step.counts.data(),
                                             step.dtype, step.reduction));
      for (size_t i = 0, at = 0; i < n; at += step.shardElements[i++] * element)
        std::memcpy(step.pointers[n + i], recv + at,
                    step.shardElements[i] * element);
      return dlc_status_t(nullptr);
    });
  } else {
    // This rank's shards, then every rank's in rank order.
    std::byte *send = bucket, *recv = bucket + shards * element;
    for (size_t i = 0, at = 0; i < n; at += step.shardElements[i++] * element)
      std::memcpy(send + at, step.pointers[i], step.shardElements[i] * element);
    step.ticket = commThread_->enqueue(
        [&step, &comm, n, send, recv, element, ranks, shards] {
          DLC_RETURN_IF_ERROR(
              comm.allGather(send, recv, step.counts.data(), step.dtype));
          for (uint64_t r = 0; r < ranks; ++r)
            for (size_t i = 0, at = r * shards * element; i < n;
                 at += step.shardElements[i++] * element) {
              auto [begin, end] =
                  shardRange(step.wholeElements[i], step.shardElements[i], r);
              std::memcpy(static_cast<std::byte *>(step.pointers[n + i]) +
                              begin * element,
                          recv + at, (end - begin) * element);
            }
          return dlc_status_t(nullptr);
        });
  }
  inFlight_.push_back(s);
}

void FunctionExecutor::copyRankShards(size_t s, int rank) {
  Step &step = steps_[s];
  const size_t n = step.wholeElements.size();
  const size_t element = dlc_dtype_size(step.dtype);
  for (size_t i = 0; i < n; ++i) {
    auto [begin, end] = shardRange(step.wholeElements[i], step.shardElements[i],
                                   static_cast<uint64_t>(rank));
    auto *out = static_cast<std::byte *>(step.pointers[n + i]);
    // memmove: only a corrupt module overlaps them, as for CopyStep.
    std::memmove(out,
                 static_cast<std::byte *>(step.pointers[i]) + begin * element,
                 (end - begin) * element);
    std::memset(out + (end - begin) * element, 0,
                (step.shardElements[i] - (end - begin)) * element);
  }
}

dlc_status_t FunctionExecutor::waitAllReduce(size_t s, bool profiling) {
  auto start = std::chrono::steady_clock::now();
  CommThread::Done done = commThread_->wait(steps_[s].ticket);
  // A receive started by its job completes now.
  if (Step &step = steps_[s]; step.receiving && !done.status) {
    step.receiving = false;
    Communicator &stages = *step.receivedFrom;
    double started = done.seconds;
    done = commThread_->wait(commThread_->enqueue(
        [&stages, &step] { return stages.waitRecv(step.receive); }));
    done.seconds += started;
  }
  std::chrono::duration<double> blocked =
      std::chrono::steady_clock::now() - start;
  lastWaitSeconds_ += blocked.count();
  if (profiling) {
    profileExposedSeconds_[s] += blocked.count();
    profileCollectiveSeconds_[s] += done.seconds;
  }
  if (done.status)
    return prefixStatus(done.status, functionName_ + ": " + steps_[s].label);
  return nullptr;
}

dlc_status_t FunctionExecutor::transfer(size_t s, const Comms &comms,
                                        bool profiling) {
  Step &step = steps_[s];
  void *source = step.pointers[0], *destination = step.pointers[1];
  // Every other rank holds the value already, in the same buffer unless it
  // is an argument or a constant.
  if (comms.stage != step.to && source != destination)
    std::memmove(destination, source, step.bytes);
  // The communication thread runs the transfers behind the collectives
  // issued before them (MPI_THREAD_SERIALIZED: one thread calls MPI at a
  // time).
  Communicator &stages = *comms.stages;
  if (comms.stage == step.from) {
    // The send is started and left in flight: the steps after it may
    // overwrite its buffer, so it sends a copy; run() waits for it last.
    if (step.bucket.size() < step.bytes &&
        !step.bucket.allocate(step.bytes, false))
      return makeStatus(DLC_RESOURCE_EXHAUSTED,
                        functionName_ + ": " + step.label +
                            ": out of memory for its " +
                            std::to_string(step.bytes) + "-byte send buffer");
    std::memcpy(step.bucket.data(), source, step.bytes);
    step.ticket = commThread_->enqueue([&stages, &step] {
      return stages.startSend(step.bucket.data(), step.bytes, DLC_U8, step.to);
    });
    inFlight_.push_back(s);
    commThread_->setProgress([&stages] { return stages.progressTransfers(); });
    sendsStarted_ = true;
    return nullptr;
  }
  if (comms.stage != step.to)
    return nullptr;
  // The receive is started and left in flight until the first step that
  // reads the value (waitAllReduce).
  step.receiving = true;
  step.receivedFrom = &stages;
  step.ticket = commThread_->enqueue([&stages, &step, destination] {
    return stages.startRecv(destination, step.bytes, DLC_U8, step.from,
                            step.receive);
  });
  inFlight_.push_back(s);
  commThread_->setProgress([&stages] { return stages.progressTransfers(); });
  return nullptr;
}

dlc_status_t FunctionExecutor::run(std::byte *const *arguments,
                                   std::byte *const *results,
                                   std::byte *scratch, dnnl::stream &stream,
                                   bool profiling, const Comms &comms) {
  lastWaitSeconds_ = 0;
  if (profiling && profileCalls_.size() != steps_.size()) {
    profileCalls_.assign(steps_.size(), 0);
    profileSeconds_.assign(steps_.size(), 0.0);
    profileCollectiveSeconds_.assign(steps_.size(), 0.0);
    profileExposedSeconds_.assign(steps_.size(), 0.0);
  }
  dlc_status_t status = guardStatus(functionName_.c_str(), [&] {
    return runSteps(arguments, results, scratch, stream, profiling, comms);
  });
  // Nothing may still write into this call's buffers when it returns, even
  // after a failure: the collectives in flight complete (or time out).
  for (size_t s : inFlight_) {
    dlc_status_t waited = waitAllReduce(s, profiling);
    if (!status)
      status = waited;
    else
      dlc_status_free(waited);
  }
  inFlight_.clear();
  // Nor read from them: the sends complete. Then nothing polls the
  // transfers any more, so the caller may use the communicator.
  if (sendsStarted_) {
    Communicator &stages = *comms.stages;
    auto start = std::chrono::steady_clock::now();
    CommThread::Done done =
        commThread_->wait(commThread_->enqueue([&stages] {
          return stages.waitSends();
        }));
    lastWaitSeconds_ += std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    if (!status)
      status = prefixStatus(done.status, functionName_);
    else
      dlc_status_free(done.status);
    sendsStarted_ = false;
  }
  if (commThread_)
    commThread_->stopProgress();
  return status;
}

dlc_status_t FunctionExecutor::runSteps(std::byte *const *arguments,
                                        std::byte *const *results,
                                        std::byte *scratch,
                                        dnnl::stream &stream, bool profiling,
                                        const Comms &comms) {
  ThreadPool &pool = device_->pool();
  for (size_t s = 0; s < steps_.size(); ++s) {
    // The collectives whose outputs this step reads first, and those issued
    // before them: the communication thread runs them in issue order, and
    // the order their outputs are needed in is another (the optimizer
    // updates the first layer, whose bucket backward issues last, first).
    size_t due = 0;
    for (size_t i = 0; i < inFlight_.size(); ++i)
      if (steps_[inFlight_[i]].waitStep <= s)
        due = i + 1;
    for (size_t i = 0; i < due; ++i) {
      size_t reduce = inFlight_.front();
      inFlight_.erase(inFlight_.begin());
      DLC_RETURN_IF_ERROR(waitAllReduce(reduce, profiling));
    }
    Step &step = steps_[s];
    // Another pipeline stage's step.
    if (step.stage >= 0 && step.stage != comms.stage)
      continue;
    auto start = profiling ? std::chrono::steady_clock::now()
                           : std::chrono::steady_clock::time_point();
    for (size_t i = 0; i < step.refs.size(); ++i)
      step.pointers[i] = resolve(step.refs[i], arguments, results);
    void *const *pointers = step.pointers.data();
    try {
      switch (step.kind) {
      case fb::StepKind::KernelStep: {
        KernelFunction kernel = step.kernel;
        pool.parallelFor(
            step.iterations, step.grain,
            [&](int64_t begin, int64_t end) { kernel(pointers, begin, end); });
        break;
      }
      case fb::StepKind::MatmulStep:
      case fb::StepKind::ConvStep:
        step.library->run(pointers, scratch, stream, pool);
        break;
      case fb::StepKind::CopyStep:
        // memmove: a plan may copy between overlapping arena ranges.
        if (step.bytes)
          std::memmove(pointers[1], pointers[0], step.bytes);
        break;
      case fb::StepKind::AllReduceStep:
        // Session::call refuses a function with collectives without a
        // communicator; a tensor-parallel module's session has both.
        issueAllReduce(s,
                       step.amongTensorRanks ? *comms.tensor : *comms.replicas);
        break;
      case fb::StepKind::ShardStep: {
        Communicator &group =
            step.amongTensorRanks ? *comms.tensor : *comms.replicas;
        if (step.shardKind == fb::ShardKind::RankShard)
          copyRankShards(s, group.rank());
        else
          issueShardCollective(s, group);
        break;
      }
      case fb::StepKind::TransferStep:
        DLC_RETURN_IF_ERROR(transfer(s, comms, profiling));
        break;
      default:
        break;
      }
    } catch (const dnnl::error &error) {
      return makeStatus(DLC_INTERNAL, functionName_ + ": " + step.label +
                                          ": oneDNN failed: " + error.what());
    }
    if (profiling) {
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      profileSeconds_[s] += elapsed.count();
      ++profileCalls_[s];
    }
  }
  return nullptr;
}

std::vector<FunctionExecutor::StepProfile> FunctionExecutor::profile() const {
  std::vector<StepProfile> out;
  for (size_t s = 0; s < profileCalls_.size(); ++s) {
    if (!profileCalls_[s])
      continue;
    const char *kind = fb::EnumNameStepKind(steps_[s].kind);
    out.push_back({kind, steps_[s].label, profileCalls_[s], profileSeconds_[s],
                   profileCollectiveSeconds_[s], profileExposedSeconds_[s]});
  }
  return out;
}

} // namespace dlc::cpu
