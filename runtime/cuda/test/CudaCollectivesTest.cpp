//===- CudaCollectivesTest.cpp - Data-parallel steps on "cuda:0" ----------===//
//
// Plans with all-reduce and ZeRO shard steps, run by a CUDA session over
// the ranks' device communicator.
//
// On a GPU (label gpu) the job is one rank, on NCCL (two ranks cannot share
// a GPU), and every collective is the identity. Against the fake driver
// (label runtime) the tests play rank 0 and rank 1 of 2 on the fake NCCL
// (fake_driver/FakeNccl.cpp), whose rules make the other rank's data, so
// that each sum, shard and gather has a known result that a wrong offset,
// block or count would change; there the tests also check which stream ran
// what, and that the compute stream waited for the collectives (the fake
// runs each stream's work as late as the waits allow, so a missing wait
// reads stale data).
//
//===----------------------------------------------------------------------===//
#include "TestKernelsPtx.h"
#include "runtime/cuda/test/CudaTestUtil.h"
#include "runtime/test/BootstrapCommunicator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace dlc;
using namespace dlc::test;

namespace {

/// A host communicator in which this process plays rank `rank` of `size`
/// for the fake NCCL: the bootstrap's broadcast of the unique id leaves it
/// as it is (every rank holds the same).
class FakeRanks final : public BootstrapCommunicator {
public:
  FakeRanks(int rank, int size) : BootstrapCommunicator(rank, size, 30) {}
  const char *kind() const override { return "fake ranks"; }

protected:
  dlc_status_t doBroadcast(void *, size_t, dlc_dtype_t, int) override {
    return nullptr;
  }
};

using CommPtr = std::unique_ptr<dlc_comm_t, void (*)(dlc_comm_t *)>;

/// The job a test runs as: rank `rank` of 2 against the fake driver (its
/// NCCL's rules make the other rank's data), one rank on a GPU.
struct Job {
  int ranks = 1, rank = 0;
  CommPtr comm{nullptr, &dlc_comm_release};

  explicit Job(int fakeRank = 1) {
    std::unique_ptr<Communicator> host;
    if (fakeDriver()) {
      ranks = 2;
      rank = fakeRank;
      host = std::make_unique<FakeRanks>(rank, ranks);
    } else {
      host = createLocalCommunicator(30);
    }
    comm.reset(new dlc_comm_s{std::move(host)});
  }
};

/// The ranks a test plays: both of 2 against the fake, the one on a GPU.
std::vector<int> playedRanks() {
  return fakeDriver() ? std::vector<int>{0, 1} : std::vector<int>{0};
}

/// Hands `session` the job's communicator.
Outcome attach(dlc_session_t *session, const Job &job) {
  return outcome(dlc_session_set_comm(session, job.comm.get()));
}

/// Opens `m` on cuda:0 and hands the session the job's communicator; false
/// with `why` (the test skips) without a GPU, or on DLC_UNAVAILABLE where
/// there may be no NCCL (a GPU machine without it, a build without
/// nccl.h), never against the fake's.
bool openAttached(const ModuleBuilder &m, const Job &job, Opened &s,
                  std::string &why) {
  if (!open(m, s, why))
    return false;
  Outcome attached = attach(s.session.get(), job);
  bool fakeNccl = false;
#if DLC_HAVE_NCCL
  fakeNccl = fakeDriver() != nullptr;
#endif
  if (!fakeNccl && attached.code == DLC_UNAVAILABLE) {
    why = attached.message;
    return false;
  }
  EXPECT_EQ(attached.message, "");
  return attached.ok();
}

/// Rank `rank`'s shard of `v` over `ranks` ranks: ceil(n / ranks) elements
/// from rank x that, zero-padded past the end.
std::vector<float> shardOf(const std::vector<float> &v, int ranks, int rank) {
  size_t shard = (v.size() + ranks - 1) / ranks;
  std::vector<float> out(shard, 0.0f);
  for (size_t i = 0; i < shard && rank * shard + i < v.size(); ++i)
    out[i] = v[rank * shard + i];
  return out;
}

std::vector<float> scaled(std::vector<float> v, float factor) {
  for (float &x : v)
    x *= factor;
  return v;
}

/// Distinct values, exact in float32 through the sums below.
std::vector<float> values(size_t n, float first) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = first + 0.5f * static_cast<float>(i);
  return v;
}

constexpr int64_t kX = 5, kY = 3;

/// sum(x: f32[5], y: f32[3]) -> (rx, ry), and mean(...) alike:
///   g = x + x; all-reduce {g, y} into {r, ry}; g = x (overwritten after
///   the packing); rx = r + x.
/// So rx = ranks * 2x + x and ry = ranks * y for the sum, 3x and y for the
/// mean.
ModuleBuilder allReducer(int ranks) {
  ModuleBuilder m;
  m.target("cuda");
  m.cudaPtx(kTestKernelsPtx);
  m.dataParallelRanks(ranks);
  uint32_t add = m.kernel("test_add_f32");
  for (auto [name, reduction] : {std::pair{"sum", fb::RankReduction::Sum},
                                 std::pair{"mean", fb::RankReduction::Mean}}) {
    FunctionBuilder &f = m.function(name);
    uint32_t x = f.argument("x", "input", DType::F32, {kX});
    uint32_t y = f.argument("y", "input", DType::F32, {kY});
    uint32_t rx = f.result("rx", "output", DType::F32, {kX});
    uint32_t ry = f.result("ry", "output", DType::F32, {kY});
    f.arenaSize(512);
    f.kernel(add, {argument(x), argument(x), arena(0)}, kX, "node 'g'");
    f.steps().back().bufferBytes = {kX * 4, kX * 4, kX * 4};
    f.allReduce({arena(0), argument(y)}, {arena(256), result(ry)}, {kX, kY},
                reduction, /*waitStep=*/3, "gradient bucket 0");
    f.copy(argument(x), arena(0), kX * 4, "node 'reuse'");
    f.kernel(add, {arena(256), argument(x), result(rx)}, kX, "node 'rx'");
    f.steps().back().bufferBytes = {kX * 4, kX * 4, kX * 4};
  }
  return m;
}

TEST(GpuCollectives, AllReduceOverlapsTheStepsAfterIt) {
  Job job;
  Opened s;
  std::string why;
  if (!openAttached(allReducer(job.ranks), job, s, why))
    GTEST_SKIP() << why;
  std::vector<float> x = values(kX, 1.0f), y = values(kY, -2.0f);
  for (const char *function : {"sum", "mean"}) {
    float factor = function == std::string("sum") ? job.ranks : 1;
    Work work;
    takeTrace();
    for (int call = 1; call <= 3; ++call) {
      HostTensor<float> in0(DLC_F32, {kX}), in1(DLC_F32, {kY}),
          out0(DLC_F32, {kX}), out1(DLC_F32, {kY});
      in0.data = x;
      in1.data = y;
      dlc_tensor_t in[] = {in0.view(), in1.view()},
                   out[] = {out0.view(), out1.view()};
      ASSERT_EQ(
          outcome(dlc_session_call(s.session.get(), function, in, 2, out, 2))
              .message,
          "");
      std::vector<float> expected = x;
      for (size_t i = 0; i < expected.size(); ++i)
        expected[i] = factor * 2 * x[i] + x[i];
      EXPECT_EQ(out0.data, expected) << function << " call " << call;
      EXPECT_EQ(out1.data, scaled(y, factor)) << function << " call " << call;
    }
    // Never captured: every call launches its two kernels.
    if (std::optional<std::string> done = work.next())
      EXPECT_EQ(*done, "6 launches, 0 captures, 0 graph launches, "
                       "6 kernel runs");
    // The last call: inputs on the copy stream (A); the first kernel and
    // the packing on the compute stream (B); the collective and the
    // unpacking on the communication stream (C) once the packing is done;
    // B's copy over the packed input; the kernel reading the result only
    // after B waited for C. (The fake runs each stream when something waits
    // for it, and the call's end waits for C first: so C reduces before
    // B's copy runs, and this order cannot show a collective that read the
    // input in place of its bucket.)
    if (std::optional<std::vector<std::string>> trace = takeTrace()) {
      std::vector<std::string> last(trace->end() - 16, trace->end());
      EXPECT_EQ(last, (std::vector<std::string>{
                          "A HtoD", "A record", "B wait A",
                          "B kernel test_add_f32", "B DtoD", "B DtoD",
                          "B record", "C wait B", "C nccl all_reduce",
                          "C DtoD", "C DtoD", "C record", "B DtoD",
                          "B wait C", "B kernel test_add_f32", "B DtoH"}))
          << function;
    }
  }
}

/// zero(g: f32[5], h: f32[3], p: f32[5]) -> (G, H, ps): reduce-scatter
/// {g, h} (sum) into this rank's shards, all-gather them back into {G, H},
/// and this rank's shard of p into ps.
ModuleBuilder sharder(int ranks) {
  ModuleBuilder m;
  m.target("cuda");
  m.cudaPtx(kTestKernelsPtx);
  m.dataParallelRanks(ranks);
  FunctionBuilder &f = m.function("zero");
  const int64_t gShard = (kX + ranks - 1) / ranks;
  uint32_t g = f.argument("g", "input", DType::F32, {kX});
  uint32_t h = f.argument("h", "input", DType::F32, {kY});
  uint32_t p = f.argument("p", "input", DType::F32, {kX});
  uint32_t wholeG = f.result("G", "output", DType::F32, {kX});
  uint32_t wholeH = f.result("H", "output", DType::F32, {kY});
  uint32_t ps = f.result("ps", "output", DType::F32, {gShard});
  f.arenaSize(512);
  const auto sum = fb::RankReduction::Sum;
  f.shard(fb::ShardKind::ReduceScatter, {argument(g), argument(h)},
          {arena(0), arena(256)}, {kX, kY}, ranks, sum, /*waitStep=*/1,
          "reduce-scatter bucket 0");
  f.shard(fb::ShardKind::AllGather, {arena(0), arena(256)},
          {result(wholeG), result(wholeH)}, {kX, kY}, ranks, sum,
          /*waitStep=*/3, "all-gather bucket 0");
  f.shard(fb::ShardKind::RankShard, {argument(p)}, {result(ps)}, {kX}, ranks,
          sum, 0, "rank shard");
  return m;
}

/// What the zero function leaves in G (or H) for value `v` on rank `rank`
/// of `ranks`, by the fake NCCL's rules (fake_driver/FakeNccl.cpp); one
/// rank's collectives are the identity, as on a GPU. The reduce-scatter
/// gives the sum over q of (q + 1) times this rank's shard q of v (rank q's
/// shard for this rank); the all-gather's block q is that with every byte
/// XOR-ed with (q - rank), cut at the value's end.
std::vector<uint8_t> zeroResult(const std::vector<float> &v, int ranks,
                                int rank) {
  std::vector<float> mine = shardOf(v, ranks, 0);
  for (int q = 1; q < ranks; ++q) {
    std::vector<float> shard = shardOf(v, ranks, q);
    for (size_t i = 0; i < mine.size(); ++i)
      mine[i] += (q + 1) * shard[i];
  }
  const auto *bytes = reinterpret_cast<const uint8_t *>(mine.data());
  const size_t shardBytes = mine.size() * sizeof(float);
  std::vector<uint8_t> whole;
  for (int q = 0; q < ranks; ++q)
    for (size_t i = 0; i < shardBytes; ++i)
      whole.push_back(bytes[i] ^ static_cast<uint8_t>(q - rank));
  whole.resize(v.size() * sizeof(float));
  return whole;
}

std::vector<uint8_t> bytesOf(const std::vector<float> &v) {
  const auto *bytes = reinterpret_cast<const uint8_t *>(v.data());
  return std::vector<uint8_t>(bytes, bytes + v.size() * sizeof(float));
}

TEST(GpuCollectives, ZeroShardsAsTheCpuLaysThemOut) {
  for (int played : playedRanks()) {
    Job job(played);
    std::optional<uint64_t> before;
    if (std::optional<dlc_fake_counters_t> counters = fakeCounters())
      before = counters->liveObjects;
    {
      Opened s;
      std::string why;
      if (!openAttached(sharder(job.ranks), job, s, why))
        GTEST_SKIP() << why;
      std::vector<float> g = values(kX, 1.0f), h = values(kY, 10.0f),
                         p = values(kX, -3.0f);
      const int64_t gShard = (kX + job.ranks - 1) / job.ranks;
      for (int call = 1; call <= 2; ++call) {
        HostTensor<float> g0(DLC_F32, {kX}), h0(DLC_F32, {kY}),
            p0(DLC_F32, {kX}), G(DLC_F32, {kX}), H(DLC_F32, {kY}),
            ps(DLC_F32, {gShard});
        g0.data = g;
        h0.data = h;
        p0.data = p;
        dlc_tensor_t in[] = {g0.view(), h0.view(), p0.view()},
                     out[] = {G.view(), H.view(), ps.view()};
        ASSERT_EQ(
            outcome(dlc_session_call(s.session.get(), "zero", in, 3, out, 3))
                .message,
            "");
        EXPECT_EQ(bytesOf(G.data), zeroResult(g, job.ranks, job.rank))
            << "rank " << job.rank << " call " << call;
        EXPECT_EQ(bytesOf(H.data), zeroResult(h, job.ranks, job.rank))
            << "rank " << job.rank << " call " << call;
        EXPECT_EQ(ps.data, shardOf(p, job.ranks, job.rank))
            << "rank " << job.rank << " call " << call;
      }
    }
    // The buckets, events and streams are given back.
    if (before)
      EXPECT_EQ(fakeCounters()->liveObjects, *before);
  }
}

TEST(GpuCollectives, ProfilesShowTheCollectivesAndTheirWait) {
  Job job;
  Opened s;
  std::string why;
  if (!openAttached(allReducer(job.ranks), job, s, why))
    GTEST_SKIP() << why;
  ASSERT_TRUE(outcome(dlc_session_set_profiling(s.session.get(), 1)).ok());
  HostTensor<float> x(DLC_F32, {kX}, 1.0f), y(DLC_F32, {kY}, 2.0f),
      rx(DLC_F32, {kX}), ry(DLC_F32, {kY});
  dlc_tensor_t in[] = {x.view(), y.view()}, out[] = {rx.view(), ry.view()};
  for (int call = 1; call <= 2; ++call)
    ASSERT_EQ(outcome(dlc_session_call(s.session.get(), "mean", in, 2, out, 2))
                  .message,
              "");
  EXPECT_EQ(rx.data, std::vector<float>(kX, 3.0f));
  std::string path = ::testing::TempDir() + "dlc_gpu_collective_profile_" +
                     std::to_string(::getpid());
  ASSERT_TRUE(
      outcome(dlc_session_write_profile(s.session.get(), path.c_str())).ok());
  std::ifstream file(path);
  int lines = 0, collectives = 0;
  for (std::string line; std::getline(file, line); ++lines) {
    EXPECT_NE(line.find("\"calls\": 2,"), std::string::npos) << line;
    if (line.find("AllReduceStep") != std::string::npos) {
      ++collectives;
      EXPECT_NE(line.find("\"collective_ms\": "), std::string::npos) << line;
      EXPECT_NE(line.find("\"exposed_ms\": "), std::string::npos) << line;
      EXPECT_EQ(line.find("\"collective_ms\": 0.0000,"), std::string::npos)
          << line;
    }
  }
  EXPECT_EQ(lines, 4);
  EXPECT_EQ(collectives, 1);
  std::remove(path.c_str());
}

TEST(GpuCollectives, CollectivesNeedTheRanksCommunicator) {
  Job job;
  Opened s;
  std::string why;
  if (!openAttached(allReducer(job.ranks), job, s, why))
    GTEST_SKIP() << why;
  HostTensor<float> x(DLC_F32, {kX}, 1.0f), y(DLC_F32, {kY}, 2.0f),
      rx(DLC_F32, {kX}), ry(DLC_F32, {kY});
  dlc_tensor_t in[] = {x.view(), y.view()}, out[] = {rx.view(), ry.view()};
  // Detached: the device communicator goes with it, and the call is
  // refused; attached again, it is opened again.
  ASSERT_TRUE(outcome(dlc_session_set_comm(s.session.get(), nullptr)).ok());
  Outcome o = outcome(dlc_session_call(s.session.get(), "sum", in, 2, out, 2));
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);
  EXPECT_NE(o.message.find("the session has no communicator"),
            std::string::npos)
      << o.message;
  ASSERT_EQ(attach(s.session.get(), job).message, "");
  ASSERT_EQ(
      outcome(dlc_session_call(s.session.get(), "sum", in, 2, out, 2)).message,
      "");
  EXPECT_EQ(ry.data, std::vector<float>(kY, 2.0f * job.ranks));
}

} // namespace
