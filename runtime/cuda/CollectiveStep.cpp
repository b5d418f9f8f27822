//===- CollectiveStep.cpp - A data-parallel step of a CUDA plan -----------===//
#include "runtime/cuda/CollectiveStep.h"

#include "runtime/core/Status.h"

#include <algorithm>

namespace dlc::cuda {
namespace {

dlc_reduce_op_t reductionOf(fb::RankReduction reduction) {
  return reduction == fb::RankReduction::Mean ? DLC_REDUCE_MEAN
                                              : DLC_REDUCE_SUM;
}

/// Where rank `rank`'s shard of a value of `whole` elements (shards of
/// `shard`) starts and ends within it: [begin, end), short or empty where it
/// reaches the padding.
std::pair<uint64_t, uint64_t> shardRange(uint64_t whole, uint64_t shard,
                                         uint64_t rank) {
  uint64_t begin = std::min(rank * shard, whole);
  return {begin, std::min(begin + shard, whole)};
}

} // namespace

dlc_status_t CollectiveStep::create(CudaDevice &device, const fb::Step &step,
                                    std::unique_ptr<CollectiveStep> &out) {
  std::unique_ptr<CollectiveStep> c(new CollectiveStep(device.driver()));
  const flatbuffers::Vector<uint64_t> *elements = nullptr;
  if (const fb::AllReduceStep *r = step.step_as_AllReduceStep()) {
    c->kind_ = Kind::AllReduce;
    c->dtype_ = static_cast<dlc_dtype_t>(r->dtype());
    c->reduction_ = reductionOf(r->reduction());
    c->waitStep_ = r->wait_step();
    elements = r->elements();
  } else {
    const fb::ShardStep &z = *step.step_as_ShardStep();
    c->kind_ = z.kind() == fb::ShardKind::ReduceScatter ? Kind::ReduceScatter
               : z.kind() == fb::ShardKind::AllGather   ? Kind::AllGather
                                                        : Kind::RankShard;
    c->dtype_ = static_cast<dlc_dtype_t>(z.dtype());
    c->reduction_ = reductionOf(z.reduction());
    c->waitStep_ = z.wait_step();
    c->ranks_ = static_cast<int>(z.ranks());
    elements = z.elements();
  }
  const uint64_t ranks = c->kind_ == Kind::AllReduce ? 1 : c->ranks_;
  for (uint64_t whole : *elements) {
    c->wholeElements_.push_back(whole);
    c->shardElements_.push_back(whole / ranks + (whole % ranks != 0));
    c->shards_ += c->shardElements_.back();
  }
  if (!c->communicates()) {
    out = std::move(c);
    return nullptr;
  }
  // ModuleFile bounded (ranks + 1) x shards x element size to 63 bits.
  const uint64_t element = dlc_dtype_size(c->dtype_);
  uint64_t bytes = c->kind_ == Kind::AllReduce
                       ? c->shards_ * element
                       : (ranks + 1) * c->shards_ * element;
  DLC_RETURN_IF_ERROR(c->bucket_.allocate(device, bytes, "its bucket"));
  const Driver &driver = device.driver();
  DLC_RETURN_IF_ERROR(c->packed_.create(driver, false));
  DLC_RETURN_IF_ERROR(c->done_.create(driver, false));
  for (Event *timing :
       {&c->started_, &c->finished_, &c->joinBegin_, &c->joinEnd_})
    DLC_RETURN_IF_ERROR(timing->create(driver, true));
  out = std::move(c);
  return nullptr;
}

dlc_status_t CollectiveStep::copy(uint64_t to, uint64_t from, uint64_t bytes,
                                  CUstream stream) const {
  if (!bytes)
    return nullptr;
  // Device copies must not overlap; only a corrupt module asks for one.
  if (from < to + bytes && to < from + bytes)
    return makeStatus(DLC_INTERNAL, "copy between overlapping ranges");
  return check(driver_.cuMemcpyDtoDAsync(to, from, bytes, stream),
               "cuMemcpyDtoDAsync");
}

dlc_status_t CollectiveStep::zero(uint64_t to, uint64_t bytes,
                                  CUstream stream) const {
  if (!bytes)
    return nullptr;
  return check(driver_.cuMemsetD8Async(to, 0, bytes, stream),
               "cuMemsetD8Async");
}

dlc_status_t CollectiveStep::copyRankShards(const std::vector<uint64_t> &whole,
                                            uint64_t packed, uint64_t rank,
                                            bool pack, CUstream stream) const {
  const uint64_t element = dlc_dtype_size(dtype_);
  for (size_t i = 0, at = 0; i < whole.size();
       at += shardElements_[i++] * element) {
    auto [begin, end] = shardRange(wholeElements_[i], shardElements_[i], rank);
    uint64_t inWhole = whole[i] + begin * element;
    uint64_t bytes = (end - begin) * element;
    DLC_RETURN_IF_ERROR(pack ? copy(packed + at, inWhole, bytes, stream)
                             : copy(inWhole, packed + at, bytes, stream));
  }
  return nullptr;
}

dlc_status_t CollectiveStep::issue(const std::vector<uint64_t> &addresses,
                                   DeviceCommunicator *comm, int rank,
                                   CUstream compute, CUstream communication,
                                   bool profiling) {
  const size_t n = wholeElements_.size();
  const uint64_t element = dlc_dtype_size(dtype_);
  const std::vector<uint64_t> inputs(addresses.begin(), addresses.begin() + n);
  const std::vector<uint64_t> outputs(addresses.begin() + n, addresses.end());
  const uint64_t bucket = bucket_.address();

  if (kind_ == Kind::RankShard) {
    for (size_t i = 0; i < n; ++i) {
      auto [begin, end] = shardRange(wholeElements_[i], shardElements_[i],
                                     static_cast<uint64_t>(rank));
      DLC_RETURN_IF_ERROR(copy(outputs[i], inputs[i] + begin * element,
                               (end - begin) * element, compute));
      DLC_RETURN_IF_ERROR(zero(outputs[i] + (end - begin) * element,
                               (shardElements_[i] - (end - begin)) * element,
                               compute));
    }
    return nullptr;
  }

  // Pack on the compute stream: a reduce-scatter sends every rank's
  // shards, rank-major and padded with zeros; the others their inputs.
  const uint64_t allShards = ranks_ * shards_ * element;
  if (kind_ == Kind::ReduceScatter) {
    DLC_RETURN_IF_ERROR(zero(bucket, allShards, compute));
    for (int r = 0; r < ranks_; ++r)
      DLC_RETURN_IF_ERROR(copyRankShards(inputs, bucket + r * shards_ * element,
                                         r, true, compute));
  } else {
    for (size_t i = 0, at = 0; i < n; at += shardElements_[i++] * element)
      DLC_RETURN_IF_ERROR(
          copy(bucket + at, inputs[i], shardElements_[i] * element, compute));
  }
  DLC_RETURN_IF_ERROR(
      check(driver_.cuEventRecord(packed_.get(), compute), "cuEventRecord"));

  // The collective and the unpacking on the communication stream.
  DLC_RETURN_IF_ERROR(
      check(driver_.cuStreamWaitEvent(communication, packed_.get(), 0),
            "cuStreamWaitEvent"));
  if (profiling)
    DLC_RETURN_IF_ERROR(check(
        driver_.cuEventRecord(started_.get(), communication), "cuEventRecord"));
  switch (kind_) {
  case Kind::AllReduce:
    DLC_RETURN_IF_ERROR(comm->allReduce(reinterpret_cast<void *>(bucket),
                                        shards_, dtype_, reduction_,
                                        communication));
    for (size_t i = 0, at = 0; i < n; at += shardElements_[i++] * element)
      DLC_RETURN_IF_ERROR(copy(outputs[i], bucket + at,
                               shardElements_[i] * element, communication));
    break;
  case Kind::ReduceScatter: {
    const uint64_t mine = bucket + allShards;
    DLC_RETURN_IF_ERROR(comm->reduceScatter(
        reinterpret_cast<const void *>(bucket), reinterpret_cast<void *>(mine),
        shards_, dtype_, reduction_, communication));
    for (size_t i = 0, at = 0; i < n; at += shardElements_[i++] * element)
      DLC_RETURN_IF_ERROR(copy(outputs[i], mine + at,
                               shardElements_[i] * element, communication));
    break;
  }
  default: {
    const uint64_t every = bucket + shards_ * element;
    DLC_RETURN_IF_ERROR(comm->allGather(reinterpret_cast<const void *>(bucket),
                                        reinterpret_cast<void *>(every),
                                        shards_, dtype_, communication));
    for (int r = 0; r < ranks_; ++r)
      DLC_RETURN_IF_ERROR(copyRankShards(outputs, every + r * shards_ * element,
                                         r, false, communication));
    break;
  }
  }
  if (profiling)
    DLC_RETURN_IF_ERROR(
        check(driver_.cuEventRecord(finished_.get(), communication),
              "cuEventRecord"));
  return check(driver_.cuEventRecord(done_.get(), communication),
               "cuEventRecord");
}

dlc_status_t CollectiveStep::join(CUstream compute, bool profiling) {
  if (profiling)
    DLC_RETURN_IF_ERROR(check(driver_.cuEventRecord(joinBegin_.get(), compute),
                              "cuEventRecord"));
  DLC_RETURN_IF_ERROR(check(driver_.cuStreamWaitEvent(compute, done_.get(), 0),
                            "cuStreamWaitEvent"));
  if (profiling)
    DLC_RETURN_IF_ERROR(
        check(driver_.cuEventRecord(joinEnd_.get(), compute), "cuEventRecord"));
  return nullptr;
}

dlc_status_t CollectiveStep::elapsed(float &collectiveMs,
                                     float &exposedMs) const {
  DLC_RETURN_IF_ERROR(check(driver_.cuEventElapsedTime(
                                &collectiveMs, started_.get(), finished_.get()),
                            "cuEventElapsedTime"));
  return check(
      driver_.cuEventElapsedTime(&exposedMs, joinBegin_.get(), joinEnd_.get()),
      "cuEventElapsedTime");
}

} // namespace dlc::cuda
