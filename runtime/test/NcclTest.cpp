//===- NcclTest.cpp - The NCCL communicator, faked and on a GPU -----------===//
//
// NcclFake*: no GPU and no NCCL. The communicator is opened over a table of
// fake NCCL functions and fake driver calls that record what they receive
// and answer what a test sets, so that the bootstrap (who asks for the
// unique id, what initialization receives), the conversion of every NCCL
// error, the timeouts and the argument checks are checked exactly.
//
// GpuNccl: one rank on "cuda:0" (two ranks cannot share one GPU under
// NCCL), bootstrapped over the `local` host communicator. With one rank
// every collective is the identity or a copy, so results are compared bit
// for bit with their inputs (a mean divides by 1). Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Nccl.h"
#include "runtime/comm/Communicator.h"
#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/support/Float16.h"
#include "runtime/test/BootstrapCommunicator.h"
#include "runtime/test/GpuTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>

using namespace dlc;
using namespace dlc::cuda;
using dlc::test::BootstrapCommunicator;
using dlc::test::Buffer;
using dlc::test::Gpu;
using dlc::test::messageOf;

namespace {

/// What the fakes received and what they answer.
struct FakeState {
  int uniqueIdCalls = 0;
  int initCalls = 0, initRanks = -1, initRank = -1, initBlocking = -1;
  ncclUniqueId initId{};
  int aborts = 0, destroys = 0;
  /// Answers: of initialization, of ncclCommGetAsyncError, of each
  /// collective's enqueue, of cuStreamQuery.
  ncclResult_t initResult = ncclSuccess;
  ncclResult_t asyncState = ncclSuccess;
  ncclResult_t collectiveResult = ncclSuccess;
  CUresult streamQuery = CUDA_SUCCESS;
  CUcontext current = nullptr;
  /// The last collective enqueued.
  int collectives = 0;
  std::string call;
  const void *send = nullptr;
  void *recv = nullptr;
  size_t count = 0;
  ncclDataType_t type = ncclInt8;
  ncclRedOp_t op = ncclMax;
  int root = -1;
  cudaStream_t stream = nullptr;
};
FakeState fake;

int commObject;
ncclComm_t fakeComm() { return reinterpret_cast<ncclComm_t>(&commObject); }
int contextObject, streamObject;
CUcontext fakeContext() { return reinterpret_cast<CUcontext>(&contextObject); }
CUstream fakeStream() { return reinterpret_cast<CUstream>(&streamObject); }

/// The id rank 0's NCCL makes, and the one a broadcast from another rank 0
/// delivers.
unsigned char idByte(int i) { return static_cast<unsigned char>(i * 3 + 1); }
unsigned char broadcastByte(int i) {
  return static_cast<unsigned char>(200 - i);
}

ncclResult_t record(const char *call, const void *send, void *recv,
                    size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
                    cudaStream_t stream) {
  ++fake.collectives;
  fake.call = call;
  fake.send = send;
  fake.recv = recv;
  fake.count = count;
  fake.type = type;
  fake.op = op;
  fake.root = root;
  fake.stream = stream;
  return fake.collectiveResult;
}

std::shared_ptr<const Nccl> fakeNccl() {
  auto nccl = std::make_shared<Nccl>();
  nccl->ncclGetVersion = [](int *version) {
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
  };
  nccl->ncclGetErrorString = [](ncclResult_t) { return "fake text"; };
  nccl->ncclGetLastError = [](ncclComm_t) { return "fake last error"; };
  nccl->ncclGetUniqueId = [](ncclUniqueId *id) {
    ++fake.uniqueIdCalls;
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
      id->internal[i] = static_cast<char>(idByte(i));
    return ncclSuccess;
  };
  nccl->ncclCommInitRankConfig = [](ncclComm_t *comm, int ranks,
                                    ncclUniqueId id, int rank,
                                    ncclConfig_t *config) {
    ++fake.initCalls;
    fake.initRanks = ranks;
    fake.initRank = rank;
    fake.initId = id;
    fake.initBlocking = config->blocking;
    *comm = fakeComm();
    return fake.initResult;
  };
  nccl->ncclCommGetAsyncError = [](ncclComm_t comm, ncclResult_t *state) {
    EXPECT_EQ(comm, fakeComm());
    *state = fake.asyncState;
    return ncclSuccess;
  };
  nccl->ncclCommAbort = [](ncclComm_t) {
    ++fake.aborts;
    return ncclSuccess;
  };
  nccl->ncclCommDestroy = [](ncclComm_t) {
    ++fake.destroys;
    return ncclSuccess;
  };
  nccl->ncclAllReduce = [](const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t,
                           cudaStream_t stream) {
    return record("ncclAllReduce", send, recv, count, type, op, -1, stream);
  };
  nccl->ncclReduceScatter = [](const void *send, void *recv, size_t count,
                               ncclDataType_t type, ncclRedOp_t op, ncclComm_t,
                               cudaStream_t stream) {
    return record("ncclReduceScatter", send, recv, count, type, op, -1, stream);
  };
  nccl->ncclAllGather = [](const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclComm_t,
                           cudaStream_t stream) {
    return record("ncclAllGather", send, recv, count, type, ncclMax, -1,
                  stream);
  };
  nccl->ncclBroadcast = [](const void *send, void *recv, size_t count,
                           ncclDataType_t type, int root, ncclComm_t,
                           cudaStream_t stream) {
    return record("ncclBroadcast", send, recv, count, type, ncclMax, root,
                  stream);
  };
  return nccl;
}

NcclDriverCalls fakeDriver() {
  NcclDriverCalls calls;
  calls.cuCtxSetCurrent = [](CUcontext context) {
    fake.current = context;
    return CUDA_SUCCESS;
  };
  calls.cuStreamQuery = [](CUstream stream) {
    EXPECT_EQ(stream, fakeStream());
    return fake.streamQuery;
  };
  calls.check = [](CUresult result, const std::string &call) -> dlc_status_t {
    if (result == CUDA_SUCCESS)
      return nullptr;
    return makeStatus(DLC_INTERNAL,
                      call + ": CUresult " + std::to_string(result));
  };
  return calls;
}

/// Rank 1 of 2, whose broadcast delivers broadcastByte(i) as rank 0's id;
/// it takes part in nothing else.
class SecondRank : public BootstrapCommunicator {
public:
  SecondRank() : BootstrapCommunicator(/*rank=*/1, /*size=*/2, 5) {}
  const char *kind() const override { return "second rank"; }
  int broadcasts = 0;

protected:
  dlc_status_t doBroadcast(void *data, size_t count, dlc_dtype_t dtype,
                           int root) override {
    ++broadcasts;
    EXPECT_EQ(count, size_t(NCCL_UNIQUE_ID_BYTES));
    EXPECT_EQ(dtype, DLC_U8);
    EXPECT_EQ(root, 0);
    for (size_t i = 0; i < count; ++i)
      static_cast<unsigned char *>(data)[i] = broadcastByte(int(i));
    return nullptr;
  }
};

class NcclFake : public ::testing::Test {
protected:
  void SetUp() override { fake = FakeState(); }

  /// Opens over the one-rank local communicator with `timeout` seconds.
  dlc_status_t open(double timeout = 5) {
    host_ = createLocalCommunicator(timeout);
    return NcclCommunicator::open(*host_, fakeNccl(), fakeDriver(),
                                  fakeContext(), comm_);
  }

  std::unique_ptr<Communicator> host_;
  std::unique_ptr<NcclCommunicator> comm_;
};

TEST_F(NcclFake, RankZeroMakesTheIdAndInitializes) {
  ASSERT_EQ(messageOf(open()), "");
  EXPECT_EQ(fake.uniqueIdCalls, 1);
  EXPECT_EQ(fake.initCalls, 1);
  EXPECT_EQ(fake.initRanks, 1);
  EXPECT_EQ(fake.initRank, 0);
  EXPECT_EQ(fake.initBlocking, 0) << "init must be non-blocking";
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
    ASSERT_EQ(static_cast<unsigned char>(fake.initId.internal[i]), idByte(i))
        << "byte " << i;
  EXPECT_EQ(fake.current, fakeContext());
  EXPECT_EQ(comm_->rank(), 0);
  EXPECT_EQ(comm_->size(), 1);
  comm_.reset();
  EXPECT_EQ(fake.destroys, 1);
  EXPECT_EQ(fake.aborts, 0);
}

// Over more than one rank a mean is NCCL's average.
TEST_F(NcclFake, MeanOverRanksIsNcclsAverage) {
  SecondRank host;
  std::unique_ptr<NcclCommunicator> comm;
  ASSERT_EQ(messageOf(NcclCommunicator::open(host, fakeNccl(), fakeDriver(),
                                             fakeContext(), comm)),
            "");
  float a[8], b[16];
  ASSERT_EQ(
      messageOf(comm->allReduce(a, 8, DLC_F32, DLC_REDUCE_MEAN, fakeStream())),
      "");
  EXPECT_EQ(fake.op, ncclAvg);
  ASSERT_EQ(messageOf(comm->reduceScatter(b, a, 8, DLC_BF16, DLC_REDUCE_MEAN,
                                          fakeStream())),
            "");
  EXPECT_EQ(fake.op, ncclAvg);
  ASSERT_EQ(
      messageOf(comm->allReduce(a, 8, DLC_F32, DLC_REDUCE_SUM, fakeStream())),
      "");
  EXPECT_EQ(fake.op, ncclSum);
}

TEST_F(NcclFake, OtherRanksTakeRankZerosId) {
  SecondRank host;
  std::unique_ptr<NcclCommunicator> comm;
  ASSERT_EQ(messageOf(NcclCommunicator::open(host, fakeNccl(), fakeDriver(),
                                             fakeContext(), comm)),
            "");
  EXPECT_EQ(fake.uniqueIdCalls, 0);
  EXPECT_EQ(host.broadcasts, 1);
  EXPECT_EQ(fake.initRanks, 2);
  EXPECT_EQ(fake.initRank, 1);
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i)
    ASSERT_EQ(static_cast<unsigned char>(fake.initId.internal[i]),
              broadcastByte(i))
        << "byte " << i;
}

TEST_F(NcclFake, InitErrorNamesTheCallAndNcclsText) {
  fake.initResult = ncclSystemError;
  dlc_status_t status = open();
  EXPECT_EQ(dlc_status_code(status), DLC_UNAVAILABLE);
  EXPECT_EQ(messageOf(status), "ncclCommInitRankConfig: fake text "
                               "(ncclResult_t 2): fake last error");
  EXPECT_EQ(comm_, nullptr);
  EXPECT_EQ(fake.aborts, 1) << "a failed initialization is aborted";
}

TEST_F(NcclFake, AsynchronousInitErrorIsReported) {
  fake.initResult = ncclInProgress;
  fake.asyncState = ncclRemoteError;
  dlc_status_t status = open();
  EXPECT_EQ(dlc_status_code(status), DLC_UNAVAILABLE);
  EXPECT_EQ(messageOf(status),
            "ncclCommInitRankConfig on rank 0 of 1: fake text "
            "(ncclResult_t 6): fake last error");
  EXPECT_EQ(fake.aborts, 1);
}

TEST_F(NcclFake, InitTimesOut) {
  fake.initResult = ncclInProgress;
  fake.asyncState = ncclInProgress;
  dlc_status_t status = open(0.05);
  EXPECT_EQ(dlc_status_code(status), DLC_DEADLINE_EXCEEDED);
  EXPECT_EQ(messageOf(status),
            "ncclCommInitRankConfig timed out after 0.05 s on rank 0 of 1; "
            "the NCCL communicator was aborted");
  EXPECT_EQ(comm_, nullptr);
  EXPECT_EQ(fake.aborts, 1);
  EXPECT_EQ(fake.destroys, 0);
}

TEST_F(NcclFake, CollectivesReachNcclWithTheirTypes) {
  ASSERT_EQ(messageOf(open()), "");
  float a[8], b[32];
  CUstream s = fakeStream();
  struct Case {
    dlc_dtype_t dtype;
    ncclDataType_t type;
  } cases[] = {{DLC_F32, ncclFloat32},
               {DLC_F64, ncclFloat64},
               {DLC_BF16, ncclBfloat16},
               {DLC_F16, ncclFloat16}};
  for (const Case &c : cases) {
    SCOPED_TRACE(dlc_dtype_name(c.dtype));
    ASSERT_EQ(messageOf(comm_->allReduce(a, 8, c.dtype, DLC_REDUCE_SUM, s)),
              "");
    EXPECT_EQ(fake.call, "ncclAllReduce");
    EXPECT_EQ(fake.send, a);
    EXPECT_EQ(fake.recv, a);
    EXPECT_EQ(fake.count, 8u);
    EXPECT_EQ(fake.type, c.type);
    EXPECT_EQ(fake.op, ncclSum);
    EXPECT_EQ(fake.stream, s);
    // One rank's mean is its sum (ncclAvg over one rank dropped a
    // reduce-scatter's tail on NCCL 2.28.9).
    ASSERT_EQ(messageOf(comm_->allReduce(a, 8, c.dtype, DLC_REDUCE_MEAN, s)),
              "");
    EXPECT_EQ(fake.op, ncclSum);
    ASSERT_EQ(
        messageOf(comm_->reduceScatter(b, a, 4, c.dtype, DLC_REDUCE_MEAN, s)),
        "");
    EXPECT_EQ(fake.call, "ncclReduceScatter");
    EXPECT_EQ(fake.send, b);
    EXPECT_EQ(fake.recv, a);
    EXPECT_EQ(fake.count, 4u) << "NCCL takes the count of one block";
    EXPECT_EQ(fake.type, c.type);
    EXPECT_EQ(fake.op, ncclSum);
  }
  // Moves bytes: the count is in bytes, whatever the dtype.
  ASSERT_EQ(messageOf(comm_->allGather(a, b, 3, DLC_F64, s)), "");
  EXPECT_EQ(fake.call, "ncclAllGather");
  EXPECT_EQ(fake.send, a);
  EXPECT_EQ(fake.recv, b);
  EXPECT_EQ(fake.count, 24u);
  EXPECT_EQ(fake.type, ncclUint8);
  ASSERT_EQ(messageOf(comm_->broadcast(a, 5, DLC_I32, 0, s)), "");
  EXPECT_EQ(fake.call, "ncclBroadcast");
  EXPECT_EQ(fake.send, a);
  EXPECT_EQ(fake.recv, a);
  EXPECT_EQ(fake.count, 20u);
  EXPECT_EQ(fake.type, ncclUint8);
  EXPECT_EQ(fake.root, 0);
  ASSERT_EQ(messageOf(comm_->synchronize(s)), "");
  EXPECT_EQ(fake.collectives, 14);
  EXPECT_EQ(fake.aborts, 0);
}

TEST_F(NcclFake, EnqueueInProgressIsWaitedFor) {
  ASSERT_EQ(messageOf(open()), "");
  fake.collectiveResult = ncclInProgress;
  uint16_t data[8] = {};
  EXPECT_EQ(messageOf(comm_->allReduce(data, 8, DLC_BF16, DLC_REDUCE_SUM,
                                       fakeStream())),
            "");
}

TEST_F(NcclFake, EnqueueThatNeverEndsTimesOut) {
  ASSERT_EQ(messageOf(open(0.05)), "");
  fake.collectiveResult = ncclInProgress;
  fake.asyncState = ncclInProgress;
  uint16_t data[8] = {};
  dlc_status_t status =
      comm_->allReduce(data, 8, DLC_BF16, DLC_REDUCE_SUM, fakeStream());
  EXPECT_EQ(dlc_status_code(status), DLC_DEADLINE_EXCEEDED);
  EXPECT_EQ(messageOf(status),
            "all_reduce of 8 bfloat16 elements timed out after 0.05 s on "
            "rank 0 of 1; the NCCL communicator was aborted");
  EXPECT_EQ(fake.aborts, 1);
}

TEST_F(NcclFake, CollectiveTimeoutFailsTheCommunicator) {
  ASSERT_EQ(messageOf(open(0.05)), "");
  std::vector<float> data(1000);
  ASSERT_EQ(messageOf(comm_->allReduce(data.data(), 1000, DLC_F32,
                                       DLC_REDUCE_SUM, fakeStream())),
            "");
  fake.streamQuery = CUDA_ERROR_NOT_READY;
  dlc_status_t status = comm_->synchronize(fakeStream());
  EXPECT_EQ(dlc_status_code(status), DLC_DEADLINE_EXCEEDED);
  EXPECT_EQ(messageOf(status),
            "all_reduce of 1000 float32 elements timed out after 0.05 s on "
            "rank 0 of 1; the NCCL communicator was aborted");
  EXPECT_EQ(fake.aborts, 1);
  fake.streamQuery = CUDA_SUCCESS;
  status = comm_->allReduce(data.data(), 1000, DLC_F32, DLC_REDUCE_SUM,
                            fakeStream());
  EXPECT_EQ(dlc_status_code(status), DLC_FAILED_PRECONDITION);
  EXPECT_EQ(messageOf(status),
            "all_reduce: the NCCL communicator failed earlier (all_reduce of "
            "1000 float32 elements timed out after 0.05 s on rank 0 of 1; the "
            "NCCL communicator was aborted)");
  EXPECT_EQ(dlc_status_code(comm_->synchronize(fakeStream())),
            DLC_FAILED_PRECONDITION);
  EXPECT_EQ(fake.collectives, 1);
  comm_.reset();
  EXPECT_EQ(fake.destroys, 0) << "an aborted communicator is not destroyed";
}

TEST_F(NcclFake, EnqueueErrorFailsTheCommunicator) {
  ASSERT_EQ(messageOf(open()), "");
  fake.collectiveResult = ncclInvalidUsage;
  float data[4] = {};
  dlc_status_t status = comm_->broadcast(data, 4, DLC_F32, 0, fakeStream());
  EXPECT_EQ(dlc_status_code(status), DLC_INTERNAL);
  EXPECT_EQ(messageOf(status),
            "ncclBroadcast: fake text (ncclResult_t 5): fake last error");
  EXPECT_EQ(fake.aborts, 1);
  EXPECT_EQ(
      dlc_status_code(comm_->allGather(data, data, 4, DLC_F32, fakeStream())),
      DLC_FAILED_PRECONDITION);
}

TEST_F(NcclFake, AsynchronousErrorFailsSynchronize) {
  ASSERT_EQ(messageOf(open()), "");
  float data[4] = {};
  ASSERT_EQ(messageOf(comm_->allReduce(data, 4, DLC_F32, DLC_REDUCE_SUM,
                                       fakeStream())),
            "");
  fake.streamQuery = CUDA_ERROR_NOT_READY;
  fake.asyncState = ncclRemoteError;
  dlc_status_t status = comm_->synchronize(fakeStream());
  EXPECT_EQ(dlc_status_code(status), DLC_UNAVAILABLE);
  EXPECT_EQ(messageOf(status),
            "all_reduce of 4 float32 elements on rank 0 of 1: fake text "
            "(ncclResult_t 6): fake last error");
  EXPECT_EQ(fake.aborts, 1);
}

TEST_F(NcclFake, RejectionsEveryRankMakesKeepItUsable) {
  ASSERT_EQ(messageOf(open()), "");
  int32_t ints[4] = {};
  float data[4] = {};
  CUstream s = fakeStream();
  dlc_status_t status = comm_->allReduce(ints, 4, DLC_I32, DLC_REDUCE_SUM, s);
  EXPECT_EQ(dlc_status_code(status), DLC_INVALID_ARGUMENT);
  EXPECT_EQ(messageOf(status), "all_reduce: int32 cannot be reduced (expected "
                               "float32, float64, bfloat16 or float16)");
  status = comm_->reduceScatter(data, data, 4, DLC_F32,
                                static_cast<dlc_reduce_op_t>(7), s);
  EXPECT_EQ(dlc_status_code(status), DLC_INVALID_ARGUMENT);
  status = comm_->allGather(data, data, 4, static_cast<dlc_dtype_t>(99), s);
  EXPECT_EQ(dlc_status_code(status), DLC_INVALID_ARGUMENT);
  EXPECT_EQ(messageOf(status), "all_gather: unknown dtype 99");
  status = comm_->broadcast(data, 4, DLC_F32, 1, s);
  EXPECT_EQ(dlc_status_code(status), DLC_INVALID_ARGUMENT);
  EXPECT_EQ(messageOf(status), "broadcast: root 1 is not a rank (0 to 0)");
  EXPECT_EQ(fake.collectives, 0);
  EXPECT_EQ(messageOf(comm_->allReduce(data, 4, DLC_F32, DLC_REDUCE_SUM, s)),
            "");
  EXPECT_EQ(fake.aborts, 0);
}

TEST_F(NcclFake, NullBufferFailsTheCommunicator) {
  ASSERT_EQ(messageOf(open()), "");
  float data[4] = {};
  CUstream s = fakeStream();
  dlc_status_t status =
      comm_->reduceScatter(data, nullptr, 4, DLC_F32, DLC_REDUCE_SUM, s);
  EXPECT_EQ(dlc_status_code(status), DLC_INVALID_ARGUMENT);
  EXPECT_EQ(messageOf(status),
            "reduce_scatter: no receive buffer for 4 elements");
  EXPECT_EQ(fake.aborts, 1);
  EXPECT_EQ(fake.collectives, 0);
  EXPECT_EQ(
      dlc_status_code(comm_->allReduce(data, 4, DLC_F32, DLC_REDUCE_SUM, s)),
      DLC_FAILED_PRECONDITION);
}

TEST(NcclLibrary, MissingLibraryIsUnavailable) {
  std::shared_ptr<const Nccl> nccl;
  dlc_status_t status = Nccl::open(nccl, "libnccl-absent.so.2");
  EXPECT_EQ(dlc_status_code(status), DLC_UNAVAILABLE);
  std::string message = messageOf(status);
  EXPECT_NE(message.find("NCCL cannot be loaded (libnccl-absent.so.2"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("GPU collectives need NCCL 2's libnccl.so.2: "
                         "install NCCL"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("LD_LIBRARY_PATH"), std::string::npos) << message;
  EXPECT_EQ(nccl, nullptr);
}

/// `count` random normal values of `dtype` (float32 or bfloat16), as bytes.
std::vector<uint8_t> randomValues(dlc_dtype_t dtype, size_t count,
                                  unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0, 1);
  std::vector<uint8_t> bytes(count * dlc_dtype_size(dtype));
  for (size_t i = 0; i < count; ++i) {
    float value = normal(random);
    if (dtype == DLC_BF16) {
      uint16_t bits = BFloat16(value).bits;
      std::memcpy(&bytes[i * 2], &bits, 2);
    } else {
      std::memcpy(&bytes[i * 4], &value, 4);
    }
  }
  return bytes;
}

TEST(GpuNccl, OneRankCollectivesAreExact) {
  Gpu gpu;
  std::string why;
  if (!gpu.open(why))
    GTEST_SKIP() << why;
  std::shared_ptr<const Nccl> nccl;
  ASSERT_EQ(messageOf(Nccl::open(nccl)), "");
  int version = 0;
  ASSERT_EQ(nccl->ncclGetVersion(&version), ncclSuccess);
  std::cout << "NCCL " << ncclVersionText(version) << "\n";

  std::unique_ptr<Communicator> host = createLocalCommunicator(60);
  std::unique_ptr<NcclCommunicator> comm;
  ASSERT_EQ(messageOf(NcclCommunicator::open(*host, nccl,
                                             NcclDriverCalls::of(gpu.driver()),
                                             gpu.context(), comm)),
            "");
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  CUstream stream = gpu.stream();
  // Odd, so no collective runs on whole vectors only.
  const size_t count = (1 << 20) + 3;
  for (dlc_dtype_t dtype : {DLC_F32, DLC_BF16}) {
    SCOPED_TRACE(dlc_dtype_name(dtype));
    const size_t bytes = count * dlc_dtype_size(dtype);
    std::vector<uint8_t> input = randomValues(dtype, count, 7);
    std::vector<uint8_t> result(bytes);
    Buffer data(gpu, bytes), other(gpu, bytes);
    // Every output starts as 0xff bytes (NaNs), so a collective that
    // writes nothing fails.
    auto check = [&](const Buffer &out, const std::string &what) {
      ASSERT_EQ(messageOf(comm->synchronize(stream)), "") << what;
      std::fill(result.begin(), result.end(), 0);
      out.download(result.data());
      ASSERT_EQ(messageOf(comm->synchronize(stream)), "") << what;
      auto [got, want] =
          std::mismatch(result.begin(), result.end(), input.begin());
      size_t at = static_cast<size_t>(got - result.begin());
      EXPECT_EQ(got, result.end())
          << what << " changed the values: first at byte " << at << " of "
          << bytes << " (" << int(*got) << " instead of " << int(*want) << "), "
          << std::count_if(result.begin(), result.end(),
                           [](uint8_t b) { return b == 0xff; })
          << " bytes still 0xff";
    };
    for (dlc_reduce_op_t op : {DLC_REDUCE_SUM, DLC_REDUCE_MEAN}) {
      data.upload(input.data());
      ASSERT_EQ(
          messageOf(comm->allReduce(data.get(), count, dtype, op, stream)), "");
      check(data, op == DLC_REDUCE_SUM ? "all_reduce sum" : "all_reduce mean");
      other.clear(0xff);
      ASSERT_EQ(messageOf(comm->reduceScatter(data.get(), other.get(), count,
                                              dtype, op, stream)),
                "");
      check(other, op == DLC_REDUCE_SUM ? "reduce_scatter sum"
                                        : "reduce_scatter mean");
    }
    other.clear(0xff);
    ASSERT_EQ(messageOf(comm->allGather(data.get(), other.get(), count, dtype,
                                        stream)),
              "");
    check(other, "all_gather");
    ASSERT_EQ(messageOf(comm->broadcast(data.get(), count, dtype, 0, stream)),
              "");
    check(data, "broadcast");
  }
}

} // namespace
