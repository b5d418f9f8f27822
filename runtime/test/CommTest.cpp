//===- CommTest.cpp - Communicators through the C API, on 1 to N ranks ----===//
//
// One binary for every launch: without a launcher it tests the one-rank
// communicator, under `mpirun -np N` the MPI one (runtime/test/
// CMakeLists.txt registers both). Every expected value is computed from
// rank() and size(), and the data are small integers, which every dtype
// holds exactly, as it does their sums over four ranks and the means
// (a multiple of 0.5 for 2 and 4 ranks): results are compared exactly.
//
// Who initializes MPI is the launch's choice: with --host-mpi main()
// initializes and finalizes it, as a host program that uses MPI itself
// would, and dlc must leave it initialized; without it dlc initializes MPI
// at the first communicator and finalizes it with the last, which main()
// checks after the tests.
//
//===----------------------------------------------------------------------===//
#include "dlc/runtime.hpp"
#include "runtime/comm/Communicator.h"
#include "runtime/support/Float16.h"

#include <gtest/gtest.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#ifdef DLC_TEST_HAVE_MPI
#include <mpi.h>
#endif

using namespace dlc;

namespace {

/// Generous: the collectives here take milliseconds, and a test of the
/// timeout uses its own.
constexpr double kTimeout = 30;

/// Expects `status` to have `code` and a message containing `text`, and
/// frees it.
void expectStatus(dlc_status_t status, dlc_status_code_t code,
                  const std::string &text) {
  EXPECT_EQ(dlc_status_code(status), code) << dlc_status_message(status);
  EXPECT_NE(std::string(dlc_status_message(status)).find(text),
            std::string::npos)
      << "message: " << dlc_status_message(status) << "\nexpected: " << text;
  dlc_status_free(status);
}

void expectOk(dlc_status_t status) {
  EXPECT_EQ(status, nullptr) << dlc_status_message(status);
  dlc_status_free(status);
}

/// A communicator for one test: "auto", so MPI under a launcher.
struct CommHandle {
  explicit CommHandle(double timeout = kTimeout) {
    dlc_status_t status = dlc_comm_open("auto", timeout, &comm);
    EXPECT_EQ(status, nullptr) << dlc_status_message(status);
    dlc_status_free(status);
  }
  ~CommHandle() { dlc_comm_release(comm); }
  int rank() const { return dlc_comm_rank(comm); }
  int size() const { return dlc_comm_size(comm); }
  dlc_comm_t *comm = nullptr;
};

/// The element types reductions take, as C++ types.
template <typename T> constexpr dlc_dtype_t dtypeOf();
template <> constexpr dlc_dtype_t dtypeOf<float>() { return DLC_F32; }
template <> constexpr dlc_dtype_t dtypeOf<double>() { return DLC_F64; }
template <> constexpr dlc_dtype_t dtypeOf<BFloat16>() { return DLC_BF16; }
template <> constexpr dlc_dtype_t dtypeOf<Half>() { return DLC_F16; }

template <typename T> T make(double v) { return T(static_cast<float>(v)); }
template <> double make<double>(double v) { return v; }
template <typename T> double value(T v) { return static_cast<float>(v); }
template <> double value<double>(double v) { return v; }
template <> int64_t make<int64_t>(double v) { return static_cast<int64_t>(v); }
template <> double value<int64_t>(int64_t v) { return static_cast<double>(v); }

/// Rank r's element i: small integers that differ per rank.
double input(size_t i, int rank) { return static_cast<double>(i % 7 + rank); }
/// Their sum over `size` ranks, divided by `size` for a mean.
double reduced(size_t i, int size, dlc_reduce_op_t op) {
  double sum = size * static_cast<double>(i % 7) + size * (size - 1) / 2.0;
  return op == DLC_REDUCE_MEAN ? sum / size : sum;
}

template <typename T> class CommReduceTest : public ::testing::Test {};
using ReducibleTypes = ::testing::Types<float, double, BFloat16, Half>;
TYPED_TEST_SUITE(CommReduceTest, ReducibleTypes);

TYPED_TEST(CommReduceTest, AllReduceSumAndMean) {
  CommHandle c;
  // 0 and 1 elements, a count no rank count divides, one over many of
  // MPI's segments.
  for (size_t count :
       {size_t(0), size_t(1), size_t(7), size_t(1001), size_t(100003)}) {
    for (dlc_reduce_op_t op : {DLC_REDUCE_SUM, DLC_REDUCE_MEAN}) {
      std::vector<TypeParam> data(count);
      for (size_t i = 0; i < count; ++i)
        data[i] = make<TypeParam>(input(i, c.rank()));
      expectOk(dlc_comm_all_reduce(c.comm, count ? data.data() : nullptr, count,
                                   dtypeOf<TypeParam>(), op));
      for (size_t i = 0; i < count; ++i)
        ASSERT_EQ(value(data[i]), reduced(i, c.size(), op))
            << "element " << i << " of " << count << ", op " << op;
    }
  }
}

TYPED_TEST(CommReduceTest, ReduceScatterUnevenCounts) {
  CommHandle c;
  int n = c.size();
  // Uneven blocks, one of them empty where there are several ranks; and
  // all empty.
  std::vector<std::vector<size_t>> layouts = {
      std::vector<size_t>(n, 0), std::vector<size_t>(n, 5), {}};
  for (int r = 0; r < n; ++r)
    layouts[2].push_back(r == 1 ? 0 : 3 * r + 2);
  for (const std::vector<size_t> &counts : layouts) {
    size_t total = 0, offset = 0;
    for (int r = 0; r < n; ++r) {
      if (r == c.rank())
        offset = total;
      total += counts[r];
    }
    for (dlc_reduce_op_t op : {DLC_REDUCE_SUM, DLC_REDUCE_MEAN}) {
      std::vector<TypeParam> send(total);
      for (size_t i = 0; i < total; ++i)
        send[i] = make<TypeParam>(input(i, c.rank()));
      std::vector<TypeParam> recv(counts[c.rank()] + 1, make<TypeParam>(-1));
      expectOk(dlc_comm_reduce_scatter(c.comm, send.data(), recv.data(),
                                       counts.data(), dtypeOf<TypeParam>(),
                                       op));
      for (size_t i = 0; i < counts[c.rank()]; ++i)
        ASSERT_EQ(value(recv[i]), reduced(offset + i, n, op))
            << "element " << i << " of rank " << c.rank() << "'s block";
      EXPECT_EQ(value(recv.back()), -1) << "wrote past its block";
    }
  }
}

/// all_gather of `dtype` elements of type T, separate buffers and in place.
template <typename T> void checkAllGather(dlc_dtype_t dtype) {
  CommHandle c;
  int n = c.size();
  std::vector<size_t> counts;
  size_t total = 0, offset = 0;
  for (int r = 0; r < n; ++r) {
    counts.push_back(r == 1 ? 0 : r + 2);
    if (r == c.rank())
      offset = total;
    total += counts.back();
  }
  auto expected = [&](int r, size_t i) { return 10.0 * r + i; };
  for (bool inPlace : {false, true}) {
    std::vector<T> recv(total, make<T>(-1));
    std::vector<T> send(counts[c.rank()]);
    for (size_t i = 0; i < send.size(); ++i)
      send[i] = make<T>(expected(c.rank(), i));
    if (inPlace)
      std::copy(send.begin(), send.end(), recv.begin() + offset);
    const T *source = inPlace ? recv.data() + offset : send.data();
    expectOk(
        dlc_comm_all_gather(c.comm, source, recv.data(), counts.data(), dtype));
    size_t k = 0;
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < counts[r]; ++i, ++k)
        ASSERT_EQ(value(recv[k]), expected(r, i))
            << "rank " << r << "'s element " << i
            << (inPlace ? " (in place)" : "");
  }
}

TYPED_TEST(CommReduceTest, AllGather) {
  checkAllGather<TypeParam>(dtypeOf<TypeParam>());
}

/// Broadcast from the last rank of `count` elements.
template <typename T> void checkBroadcast(dlc_dtype_t dtype, size_t count) {
  CommHandle c;
  int root = c.size() - 1;
  std::vector<T> data(count);
  for (size_t i = 0; i < count; ++i)
    data[i] = make<T>(c.rank() == root ? 3.0 * (i % 50) + 1 : -1);
  expectOk(dlc_comm_broadcast(c.comm, count ? data.data() : nullptr, count,
                              dtype, root));
  for (size_t i = 0; i < count; ++i)
    ASSERT_EQ(value(data[i]), 3.0 * (i % 50) + 1) << "element " << i;
}

TYPED_TEST(CommReduceTest, Broadcast) {
  for (size_t count : {size_t(0), size_t(1), size_t(1000)})
    checkBroadcast<TypeParam>(dtypeOf<TypeParam>(), count);
}

// Integers are never reduced, but their bytes move (a step counter, token
// ids).
TEST(CommTest, MovesIntegers) {
  checkAllGather<int64_t>(DLC_I64);
  checkBroadcast<int64_t>(DLC_I64, 100);
}

TEST(CommTest, BarrierAndShape) {
  CommHandle c;
  expectOk(dlc_comm_barrier(c.comm));
  LaunchInfo launch = detectLaunch();
  EXPECT_EQ(c.size(), launch.size);
  EXPECT_EQ(c.rank(), launch.rank);
  // One machine: the local rank is the rank.
  EXPECT_EQ(dlc_comm_local_rank(c.comm), c.rank());
  EXPECT_STREQ(dlc_comm_kind(c.comm), launch.size > 1 ? "mpi" : "local");
}

TEST(CommTest, CppWrapper) {
  rt::Comm comm("auto", kTimeout);
  std::vector<float> data(3, 1.0f);
  comm.allReduce(data.data(), data.size(), DLC_F32, DLC_REDUCE_MEAN);
  EXPECT_EQ(data[0], 1.0f);
  comm.barrier();
  try {
    comm.broadcast(data.data(), data.size(), DLC_F32, comm.size());
    FAIL() << "a root out of range was accepted";
  } catch (const rt::Error &e) {
    EXPECT_EQ(e.code(), DLC_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos);
  }
}

// Pipeline stages hand values down the ranks and back: rank r receives
// from r - 1, adds its own part and sends on to r + 1, then the same in
// reverse. Two messages of different sizes keep their order, and a value
// over MPI's eager limit (a rendezvous) arrives whole.
TEST(CommTest, SendsDownTheRanksAndBack) {
  CommHandle c;
  const int rank = c.rank(), size = c.size();
  for (size_t count : {size_t(1), size_t(300000)}) {
    std::vector<float> value(count, 0.0f), tag(2, 0.0f);
    if (rank > 0) {
      expectOk(dlc_comm_recv(c.comm, value.data(), count, DLC_F32, rank - 1));
      expectOk(dlc_comm_recv(c.comm, tag.data(), 2, DLC_F32, rank - 1));
    }
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(value[i], rank * (rank - 1) / 2.0f + i % 7 * rank)
          << "element " << i << " of " << count;
    EXPECT_EQ(tag[0], rank > 0 ? rank - 1 : 0);
    for (size_t i = 0; i < count; ++i)
      value[i] += rank + i % 7;
    tag = {static_cast<float>(rank), 1.0f};
    if (rank + 1 < size) {
      expectOk(dlc_comm_send(c.comm, value.data(), count, DLC_F32, rank + 1));
      expectOk(dlc_comm_send(c.comm, tag.data(), 2, DLC_F32, rank + 1));
      // And back: the last rank's sum reaches every rank.
      expectOk(dlc_comm_recv(c.comm, value.data(), count, DLC_F32, rank + 1));
    }
    if (rank > 0)
      expectOk(dlc_comm_send(c.comm, value.data(), count, DLC_F32, rank - 1));
    const float last = size - 1;
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(value[i], last * (last + 1) / 2 + i % 7 * size)
          << "element " << i << " of " << count << " on the way back";
  }
}

// A peer that is no other rank fails the communicator (rank-local, as a
// NULL buffer): the matching transfer on the peer would never come.
TEST(CommTest, TransfersRejectBadPeers) {
  for (int32_t peer : {-1, 0, 1 << 20}) {
    CommHandle c;
    if (peer == 0)
      peer = c.rank();
    float x = 0;
    expectStatus(dlc_comm_send(c.comm, &x, 1, DLC_F32, peer),
                 DLC_INVALID_ARGUMENT,
                 "send: peer " + std::to_string(peer) +
                     " is not another of the " + std::to_string(c.size()) +
                     " ranks (this is rank " + std::to_string(c.rank()) + ")");
    expectStatus(dlc_comm_recv(c.comm, &x, 1, DLC_F32, peer),
                 DLC_FAILED_PRECONDITION, "recv");
  }
  CommHandle c;
  float x = 0;
  expectStatus(dlc_comm_recv(c.comm, &x, 1, static_cast<dlc_dtype_t>(99),
                             (c.rank() + 1) % c.size()),
               DLC_INVALID_ARGUMENT, "recv: unknown dtype 99");
}

TEST(CommTest, SplitsIntoGroups) {
  CommHandle c;
  // Two groups by parity, each ranked in reverse (by key -rank): rank r of
  // the world is rank (members after it of its parity) of its group.
  int color = c.rank() % 2;
  dlc_comm_t *group = nullptr;
  expectOk(dlc_comm_split(c.comm, color, -c.rank(), &group));
  ASSERT_NE(group, nullptr);
  int members = 0, after = 0;
  for (int r = 0; r < c.size(); ++r)
    if (r % 2 == color) {
      ++members;
      after += r > c.rank();
    }
  EXPECT_EQ(dlc_comm_size(group), members);
  EXPECT_EQ(dlc_comm_rank(group), after);
  EXPECT_EQ(dlc_comm_local_rank(group), dlc_comm_local_rank(c.comm));
  EXPECT_STREQ(dlc_comm_kind(group), dlc_comm_kind(c.comm));
  // A group's collectives reach its members alone.
  double sum = c.rank() + 1, expected = 0;
  for (int r = color; r < c.size(); r += 2)
    expected += r + 1;
  expectOk(dlc_comm_all_reduce(group, &sum, 1, DLC_F64, DLC_REDUCE_SUM));
  EXPECT_EQ(sum, expected);
  // The world still works once the group is gone.
  expectOk(dlc_comm_barrier(c.comm));
  dlc_comm_release(group);
  double world = 1;
  expectOk(dlc_comm_all_reduce(c.comm, &world, 1, DLC_F64, DLC_REDUCE_SUM));
  EXPECT_EQ(world, c.size());
}

TEST(CommTest, SplitsAgainAndThroughTheWrapper) {
  rt::Comm comm("auto", kTimeout);
  // One color: the same ranks, in the same order; then each alone.
  rt::Comm all = comm.split(7, 0);
  EXPECT_EQ(all.size(), comm.size());
  EXPECT_EQ(all.rank(), comm.rank());
  rt::Comm alone = all.split(all.rank());
  EXPECT_EQ(alone.size(), 1);
  EXPECT_EQ(alone.rank(), 0);
  float data = 3;
  alone.allReduce(&data, 1, DLC_F32, DLC_REDUCE_SUM);
  EXPECT_EQ(data, 3.0f);
}

TEST(CommTest, AGroupOutlivesItsParent) {
  dlc_comm_t *parent = nullptr, *group = nullptr;
  expectOk(dlc_comm_open("auto", kTimeout, &parent));
  expectOk(dlc_comm_split(parent, 0, 0, &group));
  dlc_comm_release(parent);
  double one = 1;
  expectOk(dlc_comm_all_reduce(group, &one, 1, DLC_F64, DLC_REDUCE_SUM));
  EXPECT_EQ(one, dlc_comm_size(group));
  dlc_comm_release(group);
}

TEST(CommTest, SplitRejectsBadArguments) {
  dlc_comm_t *out = reinterpret_cast<dlc_comm_t *>(&out);
  expectStatus(dlc_comm_split(nullptr, 0, 0, &out), DLC_INVALID_ARGUMENT,
               "dlc_comm_split: no communicator");
  CommHandle c;
  // Without an output every rank still splits, and the communicator stays
  // usable.
  expectStatus(dlc_comm_split(c.comm, 0, 0, nullptr), DLC_INVALID_ARGUMENT,
               "dlc_comm_split: no output (the split was made and released)");
  expectOk(dlc_comm_barrier(c.comm));
  // Every rank passes the bad color here; one rank alone would leave the
  // others to time out in the split's gathering.
  expectStatus(dlc_comm_split(c.comm, -1, 0, &out), DLC_INVALID_ARGUMENT,
               "split: color -1 on rank " + std::to_string(c.rank()) +
                   " (expected 0 or more)");
  EXPECT_EQ(out, nullptr);
  // A color differs by rank, so a bad one fails the communicator.
  expectStatus(dlc_comm_barrier(c.comm), DLC_FAILED_PRECONDITION,
               "the communicator failed earlier");
}

TEST(CommTest, OpenRejectsBadArguments) {
  dlc_comm_t *comm = reinterpret_cast<dlc_comm_t *>(1);
  expectStatus(dlc_comm_open(nullptr, kTimeout, &comm), DLC_INVALID_ARGUMENT,
               "dlc_comm_open: no communicator kind or output");
  expectStatus(dlc_comm_open("local", kTimeout, nullptr), DLC_INVALID_ARGUMENT,
               "dlc_comm_open: no communicator kind or output");
  expectStatus(dlc_comm_open("nccl", kTimeout, &comm), DLC_INVALID_ARGUMENT,
               "unknown communicator 'nccl' (expected \"auto\", \"mpi\" or "
               "\"local\")");
  EXPECT_EQ(comm, nullptr);
#ifndef DLC_TEST_HAVE_MPI
  expectStatus(dlc_comm_open("mpi", kTimeout, &comm), DLC_UNAVAILABLE,
               "MPI communicator: this build of dlc has no MPI");
#endif
  for (double timeout : {0.0, -1.0, std::nan("")})
    expectStatus(dlc_comm_open("local", timeout, &comm), DLC_INVALID_ARGUMENT,
                 "(expected a positive number of seconds)");
  // Handles that are NULL.
  EXPECT_STREQ(dlc_comm_kind(nullptr), "");
  EXPECT_EQ(dlc_comm_rank(nullptr), 0);
  EXPECT_EQ(dlc_comm_size(nullptr), 0);
  EXPECT_EQ(dlc_comm_local_rank(nullptr), 0);
  dlc_comm_release(nullptr);
  float x = 0;
  size_t one = 1;
  expectStatus(dlc_comm_all_reduce(nullptr, &x, 1, DLC_F32, DLC_REDUCE_SUM),
               DLC_INVALID_ARGUMENT, "dlc_comm_all_reduce: no communicator");
  expectStatus(
      dlc_comm_reduce_scatter(nullptr, &x, &x, &one, DLC_F32, DLC_REDUCE_SUM),
      DLC_INVALID_ARGUMENT, "dlc_comm_reduce_scatter: no communicator");
  expectStatus(dlc_comm_all_gather(nullptr, &x, &x, &one, DLC_F32),
               DLC_INVALID_ARGUMENT, "dlc_comm_all_gather: no communicator");
  expectStatus(dlc_comm_broadcast(nullptr, &x, 1, DLC_F32, 0),
               DLC_INVALID_ARGUMENT, "dlc_comm_broadcast: no communicator");
  expectStatus(dlc_comm_barrier(nullptr), DLC_INVALID_ARGUMENT,
               "dlc_comm_barrier: no communicator");
}

// Rank-independent checks (dtype, op, root, counts) reject a call the
// same way on every rank before any rank communicates, so a rejected call
// leaves the communicator usable.
TEST(CommTest, CollectivesRejectBadArguments) {
  CommHandle c;
  int n = c.size();
  std::vector<float> data(64);
  std::vector<size_t> counts(n, 2);
  int32_t i32 = 0;
  expectStatus(dlc_comm_all_reduce(c.comm, &i32, 1, DLC_I32, DLC_REDUCE_SUM),
               DLC_INVALID_ARGUMENT,
               "all_reduce: int32 cannot be reduced (expected float32, "
               "float64, bfloat16 or float16)");
  expectStatus(dlc_comm_all_reduce(c.comm, data.data(), 1, DLC_F32,
                                   static_cast<dlc_reduce_op_t>(7)),
               DLC_INVALID_ARGUMENT,
               "all_reduce: unknown reduce op 7 (expected DLC_REDUCE_SUM or "
               "DLC_REDUCE_MEAN)");
  expectOk(dlc_comm_all_reduce(c.comm, nullptr, 0, DLC_F32, DLC_REDUCE_SUM));
  expectStatus(dlc_comm_broadcast(c.comm, data.data(), 1,
                                  static_cast<dlc_dtype_t>(99), 0),
               DLC_INVALID_ARGUMENT, "broadcast: unknown dtype 99");
  expectStatus(dlc_comm_broadcast(c.comm, data.data(), 1, DLC_F32, n),
               DLC_INVALID_ARGUMENT,
               "broadcast: root " + std::to_string(n) + " out of range (" +
                   std::to_string(n) + " ranks)");
  expectStatus(dlc_comm_broadcast(c.comm, data.data(), 1, DLC_F32, -1),
               DLC_INVALID_ARGUMENT, "broadcast: root -1 out of range");
  expectStatus(dlc_comm_reduce_scatter(c.comm, data.data(), data.data() + 32,
                                       counts.data(), DLC_I8, DLC_REDUCE_SUM),
               DLC_INVALID_ARGUMENT, "reduce_scatter: int8 cannot be reduced");
  // The checks of a count come before those of its buffer: a NULL buffer
  // for too many elements is still only too many.
  if (std::string(dlc_comm_kind(c.comm)) == "mpi") {
    expectStatus(dlc_comm_all_reduce(c.comm, nullptr, size_t(INT_MAX) + 1,
                                     DLC_F32, DLC_REDUCE_SUM),
                 DLC_UNIMPLEMENTED,
                 "all_reduce: 2147483648 elements (at most 2147483647 in one "
                 "collective)");
    std::vector<size_t> huge(n, size_t(INT_MAX) / n + 1);
    expectStatus(
        dlc_comm_all_gather(c.comm, nullptr, nullptr, huge.data(), DLC_F32),
        DLC_UNIMPLEMENTED, "all_gather: more than 2147483647 elements in all");
  }
  // Still usable.
  data[0] = 1;
  expectOk(
      dlc_comm_all_reduce(c.comm, data.data(), 1, DLC_F32, DLC_REDUCE_SUM));
  EXPECT_EQ(data[0], n);
}

// Rank-local checks (this rank's pointers) reject a call on this rank
// alone, which then skips a collective the others may enter: the
// communicator is failed, as after a timeout, so that this rank cannot pair
// its next collective with the others' current one. Every rank makes the
// same mistake here, so none is left waiting; each case opens its own
// communicator.
TEST(CommTest, RankLocalRejectionsFailTheCommunicator) {
  std::vector<float> data(64);
  struct Case {
    std::string message;
    std::function<dlc_status_t(dlc_comm_t *, const size_t *, int)> call;
  };
  std::vector<Case> cases = {
      {"all_reduce: no data for 4 elements",
       [&](dlc_comm_t *comm, const size_t *, int) {
         return dlc_comm_all_reduce(comm, nullptr, 4, DLC_F32, DLC_REDUCE_SUM);
       }},
      {"broadcast: no data for 3 elements",
       [&](dlc_comm_t *comm, const size_t *, int) {
         return dlc_comm_broadcast(comm, nullptr, 3, DLC_F32, 0);
       }},
      {"reduce_scatter: no counts",
       [&](dlc_comm_t *comm, const size_t *, int) {
         return dlc_comm_reduce_scatter(comm, data.data(), data.data() + 32,
                                        nullptr, DLC_F32, DLC_REDUCE_SUM);
       }},
      {"reduce_scatter: the send and receive buffers overlap",
       [&](dlc_comm_t *comm, const size_t *counts, int) {
         return dlc_comm_reduce_scatter(comm, data.data(), data.data() + 1,
                                        counts, DLC_F32, DLC_REDUCE_SUM);
       }},
      {"reduce_scatter: no send buffer for ",
       [&](dlc_comm_t *comm, const size_t *counts, int) {
         return dlc_comm_reduce_scatter(comm, nullptr, data.data(), counts,
                                        DLC_F32, DLC_REDUCE_SUM);
       }},
      // Not this rank's block: overlapping, not in place.
      {"all_gather: the send and receive buffers overlap (in place, send "
       "must be this rank's block of receive)",
       [&](dlc_comm_t *comm, const size_t *counts, int rank) {
         return dlc_comm_all_gather(comm, data.data() + 2 * rank + 1,
                                    data.data(), counts, DLC_F32);
       }},
      {"all_gather: no receive buffer for ",
       [&](dlc_comm_t *comm, const size_t *counts, int) {
         return dlc_comm_all_gather(comm, data.data(), nullptr, counts,
                                    DLC_F32);
       }},
  };
  for (const Case &test : cases) {
    CommHandle c;
    std::vector<size_t> counts(c.size(), 2);
    expectStatus(test.call(c.comm, counts.data(), c.rank()),
                 DLC_INVALID_ARGUMENT, test.message);
    expectStatus(dlc_comm_barrier(c.comm), DLC_FAILED_PRECONDITION,
                 "barrier: the communicator failed earlier (" + test.message);
  }
}

// A timeout past what steady_clock can add to now() (about 292 years)
// waits forever rather than overflowing into one already past.
TEST(CommTest, HugeTimeoutWaitsForever) {
  CommHandle c(1e12);
  ASSERT_NE(c.comm, nullptr);
  std::vector<float> data(5, 1.0f);
  expectOk(dlc_comm_all_reduce(c.comm, data.data(), data.size(), DLC_F32,
                               DLC_REDUCE_SUM));
  EXPECT_EQ(data[4], c.size());
  expectOk(dlc_comm_barrier(c.comm));
}

/// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

TEST(CommTest, DetectsLaunchers) {
  if (detectLaunch().size > 1)
    GTEST_SKIP() << "launched: the launcher's variables are set";
  // Whatever a one-rank launch (srun -n 1) set.
  ScopedEnv noSteps("SLURM_STEP_NUM_TASKS", nullptr),
      noProcId("SLURM_PROCID", nullptr), noNtasks("SLURM_NTASKS", nullptr),
      noOmpi("OMPI_COMM_WORLD_SIZE", nullptr), noPmi("PMI_SIZE", nullptr),
      noTasksPerNode("SLURM_STEP_TASKS_PER_NODE", nullptr),
      noOmpiLocalSize("OMPI_COMM_WORLD_LOCAL_SIZE", nullptr),
      noPmiLocalSize("MPI_LOCALNRANKS", nullptr);
  EXPECT_EQ(detectLaunch().launcher, "");
  {
    // A batch script that sbatch started, without srun: one process.
    ScopedEnv tasks("SLURM_NTASKS", "8"), rank("SLURM_PROCID", "0"),
        local("SLURM_LOCALID", "0");
    EXPECT_EQ(detectLaunch().launcher, "");
    EXPECT_EQ(detectLaunch().size, 1);
  }
  {
    ScopedEnv size("SLURM_STEP_NUM_TASKS", "8"), rank("SLURM_PROCID", "5"),
        local("SLURM_LOCALID", "1");
    LaunchInfo l = detectLaunch();
    EXPECT_EQ(l.launcher, "Slurm");
    EXPECT_EQ(l.size, 8);
    EXPECT_EQ(l.rank, 5);
    EXPECT_EQ(l.localRank, 1);
    EXPECT_EQ(l.localSize, -1);
    {
      ScopedEnv perNode("SLURM_STEP_TASKS_PER_NODE", "4(x2)");
      EXPECT_EQ(detectLaunch().localSize, 4);
      // Nodes with different counts: this node's is not known.
      ScopedEnv uneven("SLURM_STEP_TASKS_PER_NODE", "4,3(x2)");
      EXPECT_EQ(detectLaunch().localSize, -1);
      ScopedEnv garbled("SLURM_STEP_TASKS_PER_NODE", "4(x2");
      EXPECT_EQ(detectLaunch().localSize, -1);
      ScopedEnv one("SLURM_STEP_TASKS_PER_NODE", "8");
      EXPECT_EQ(detectLaunch().localSize, 8);
      // More than the job's ranks is no count.
      ScopedEnv tooMany("SLURM_STEP_TASKS_PER_NODE", "9");
      EXPECT_EQ(detectLaunch().localSize, -1);
    }
    // Open MPI's come first; a rank past the size is no launch.
    ScopedEnv ompiSize("OMPI_COMM_WORLD_SIZE", "2"),
        ompiRank("OMPI_COMM_WORLD_RANK", "2");
    EXPECT_EQ(detectLaunch().launcher, "Slurm");
    ScopedEnv ompiRank1("OMPI_COMM_WORLD_RANK", "1");
    l = detectLaunch();
    EXPECT_EQ(l.launcher, "Open MPI");
    EXPECT_EQ(l.rank, 1);
    EXPECT_EQ(l.localRank, -1);
    ScopedEnv ompiLocalSize("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
    EXPECT_EQ(detectLaunch().localSize, 2);
  }
  {
    ScopedEnv size("PMI_SIZE", "4"), rank("PMI_RANK", "3"),
        local("MPI_LOCALRANKID", "1"), localSize("MPI_LOCALNRANKS", "2");
    LaunchInfo l = detectLaunch();
    EXPECT_EQ(l.launcher, "PMI");
    EXPECT_EQ(l.localRank, 1);
    EXPECT_EQ(l.localSize, 2);
  }
  {
    ScopedEnv size("PMI_SIZE", "4x"), rank("PMI_RANK", "0");
    EXPECT_EQ(detectLaunch().launcher, "");
  }
}

// The last rank never enters the collective; the others must fail within
// the timeout plus the second spent asking who is missing (with slack for
// 4 ranks sharing 2 cores), name the
// collective, its size and the missing rank, and refuse later calls.
// Registered on its own (runtime/test/CMakeLists.txt) with the host owning
// MPI, so that every rank, the one that skipped included, finalizes MPI
// and exits 0.
TEST(CommTimeoutTest, RankThatSkipsACollective) {
  constexpr double kShort = 2;
  CommHandle c(kShort);
  int n = c.size();
  if (n == 1)
    GTEST_SKIP() << "one rank: nothing to wait for";
  int skipper = n - 1;
  if (c.rank() == skipper)
    return;
  std::vector<float> data(1000, 1.0f);
  auto start = std::chrono::steady_clock::now();
  dlc_status_t status = dlc_comm_all_reduce(c.comm, data.data(), data.size(),
                                            DLC_F32, DLC_REDUCE_SUM);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_GE(seconds, kShort);
  EXPECT_LE(seconds, kShort + 1 + 2);
  std::string joined;
  for (int r = 0; r < skipper; ++r)
    if (r != c.rank())
      joined += (joined.empty() ? "" : ", ") + std::to_string(r);
  std::string expected =
      "all_reduce of 1000 float32 elements (collective 1 of this "
      "communicator) timed out after 2 s on rank " +
      std::to_string(c.rank()) + " of " + std::to_string(n) + "; rank " +
      std::to_string(skipper) +
      " did not join or answer (computing, stopped or failed)";
  if (n > 2)
    expected +=
        "; " + std::string(n > 3 ? "ranks " : "rank ") + joined + " had joined";
  EXPECT_EQ(dlc_status_code(status), DLC_DEADLINE_EXCEEDED);
  EXPECT_EQ(dlc_status_message(status), expected);
  dlc_status_free(status);
  expectStatus(dlc_comm_barrier(c.comm), DLC_FAILED_PRECONDITION,
               "barrier: the communicator failed earlier (all_reduce of 1000 "
               "float32 elements");
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  bool hostMpi = false, hostMpiSingle = false;
  for (int i = 1; i < argc; ++i) {
    hostMpi = hostMpi || std::strcmp(argv[i], "--host-mpi") == 0;
    hostMpiSingle =
        hostMpiSingle || std::strcmp(argv[i], "--host-mpi-single") == 0;
  }
#ifdef DLC_TEST_HAVE_MPI
  if (hostMpiSingle) {
    // A host that initialized MPI without thread support (MPI_Init):
    // dlc refuses it, naming the level, and leaves it to the host.
    MPI_Init(&argc, &argv);
    dlc_comm_t *comm = nullptr;
    dlc_status_t status = dlc_comm_open("mpi", kTimeout, &comm);
    std::string expected = "MPI communicator: the host program initialized "
                           "MPI with MPI_THREAD_SINGLE (dlc needs "
                           "MPI_THREAD_SERIALIZED or more";
    bool refused = dlc_status_code(status) == DLC_FAILED_PRECONDITION &&
                   std::string(dlc_status_message(status)).find(expected) == 0;
    if (!refused)
      std::fprintf(stderr, "opening under MPI_Init: %s\nexpected: %s\n",
                   dlc_status_message(status), expected.c_str());
    dlc_status_free(status);
    MPI_Finalize();
    return refused ? 0 : 1;
  }
  if (hostMpi) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  }
#else
  if (hostMpi) {
    std::fprintf(stderr, "--host-mpi: this build has no MPI\n");
    return 1;
  }
#endif
  // One communicator open through all tests, so that MPI, when dlc
  // initializes it, stays initialized until the last test ends.
  dlc_comm_t *keeper = nullptr;
  dlc_status_t status = dlc_comm_open("auto", kTimeout, &keeper);
  if (status) {
    std::fprintf(stderr, "%s\n", dlc_status_message(status));
    return 1;
  }
  bool usesMpi = std::string(dlc_comm_kind(keeper)) == "mpi";
  int result = RUN_ALL_TESTS();
#ifdef DLC_TEST_HAVE_MPI
  int finalized = 0;
  if (usesMpi && !hostMpi) {
    // The last communicator released on a thread other than the one that
    // initialized MPI leaves it initialized (only that thread may finalize
    // it)...
    std::thread([&] { dlc_comm_release(keeper); }).join();
    MPI_Finalized(&finalized);
    if (finalized) {
      std::fprintf(stderr, "dlc finalized MPI on another thread\n");
      return 1;
    }
    // ...and the next, released on this thread, finalizes it.
    status = dlc_comm_open("mpi", kTimeout, &keeper);
    if (status) {
      std::fprintf(stderr, "reopening: %s\n", dlc_status_message(status));
      return 1;
    }
  }
#endif
  dlc_comm_release(keeper);
#ifdef DLC_TEST_HAVE_MPI
  MPI_Finalized(&finalized);
  if (hostMpi) {
    // dlc must not have finalized what it did not initialize.
    if (finalized) {
      std::fprintf(stderr, "dlc finalized the host's MPI\n");
      return 1;
    }
    MPI_Finalize();
  } else if (usesMpi) {
    // dlc initialized MPI, so the last communicator finalized it, for good.
    dlc_comm_t *again = nullptr;
    status = dlc_comm_open("mpi", kTimeout, &again);
    if (!finalized || dlc_status_code(status) != DLC_FAILED_PRECONDITION) {
      std::fprintf(stderr, "MPI %s finalized; reopening: %s\n",
                   finalized ? "was" : "was not", dlc_status_message(status));
      return 1;
    }
    dlc_status_free(status);
  }
#endif
  (void)usesMpi;
  return result;
}
