//===- Communicator.cpp - Launch detection and checked collectives --------===//
//
// What every communicator shares: the launcher's environment, the checks
// of a collective's arguments (so each implementation sees valid ones) and
// the choice of implementation for dlc_comm_open's kind.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"

#include "runtime/core/Status.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace dlc {

namespace {

/// The value of environment variable `name` as a non-negative int, or -1
/// when unset or not a number.
int intFromEnvironment(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno || *end || value < 0 || value > INT32_MAX)
    return -1;
  return static_cast<int>(value);
}

/// Slurm's tasks per node of this job step (SLURM_STEP_TASKS_PER_NODE):
/// "4", or "4(x2)" when every node has 4; -1 when unset or when nodes differ
/// ("4,3"), which would need this node's index.
int slurmTasksPerNode() {
  const char *text = std::getenv("SLURM_STEP_TASKS_PER_NODE");
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno || end == text || value < 1 || value > INT32_MAX)
    return -1;
  if (*end == '(') {
    char *repeat = nullptr;
    if (end[1] != 'x' || std::strtol(end + 2, &repeat, 10) < 1 ||
        std::string(repeat) != ")")
      return -1;
  } else if (*end) {
    return -1;
  }
  return static_cast<int>(value);
}

/// True when [a, a + aBytes) and [b, b + bBytes) share a byte.
bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && x < y + bBytes && y < x + aBytes;
}

} // namespace

std::string dtypeName(dlc_dtype_t dtype) {
  if (dlc_dtype_size(dtype) == 0)
    return "unknown dtype " + std::to_string(static_cast<int>(dtype));
  return dlc_dtype_name(dtype);
}

LaunchInfo detectLaunch() {
  struct Variables {
    const char *launcher, *size, *rank, *localRank, *localSize;
  };
  static const Variables kLaunchers[] = {
      {"Open MPI", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
       "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"PMI", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
      {"Slurm", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID",
       nullptr},
  };
  for (const Variables &v : kLaunchers) {
    int size = intFromEnvironment(v.size);
    int rank = intFromEnvironment(v.rank);
    if (size < 1 || rank < 0 || rank >= size)
      continue;
    int localSize =
        v.localSize ? intFromEnvironment(v.localSize) : slurmTasksPerNode();
    return LaunchInfo{v.launcher, rank, size, intFromEnvironment(v.localRank),
                      localSize >= 1 && localSize <= size ? localSize : -1};
  }
  return LaunchInfo{};
}

bool isReducibleDtype(dlc_dtype_t dtype) {
  return dtype == DLC_F32 || dtype == DLC_F64 || dtype == DLC_BF16 ||
         dtype == DLC_F16;
}

dlc_status_t Communicator::fail(dlc_status_t status) {
  if (status && failure_.empty())
    failure_ = dlc_status_message(status);
  return status;
}

dlc_status_t Communicator::checkUsable(const char *collective) const {
  if (failure_.empty())
    return nullptr;
  return makeStatus(DLC_FAILED_PRECONDITION,
                    std::string(collective) +
                        ": the communicator failed earlier (" + failure_ + ")");
}

dlc_status_t checkReduction(const char *collective, dlc_dtype_t dtype,
                            dlc_reduce_op_t op) {
  if (!isReducibleDtype(dtype))
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string(collective) + ": " + dtypeName(dtype) +
                          " cannot be reduced (expected float32, float64, "
                          "bfloat16 or float16)");
  if (op != DLC_REDUCE_SUM && op != DLC_REDUCE_MEAN)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string(collective) + ": unknown reduce op " +
                          std::to_string(static_cast<int>(op)) +
                          " (expected DLC_REDUCE_SUM or DLC_REDUCE_MEAN)");
  return nullptr;
}

/// The rank-independent check of a collective's element count (every rank
/// passes the same).
static dlc_status_t checkCount(const char *collective, size_t count,
                               size_t maxCount) {
  if (count > maxCount)
    return makeStatus(DLC_UNIMPLEMENTED,
                      std::string(collective) + ": " + std::to_string(count) +
                          " elements (at most " + std::to_string(maxCount) +
                          " in one collective)");
  return nullptr;
}

dlc_status_t checkPointer(const char *collective, const char *name,
                          const void *data, size_t count) {
  if (!data && count)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string(collective) + ": no " + name + " for " +
                          std::to_string(count) + " elements");
  return nullptr;
}

dlc_status_t Communicator::checkTotal(const char *collective,
                                      const size_t *counts,
                                      size_t &total) const {
  total = 0;
  for (int r = 0; r < size_; ++r) {
    if (counts[r] > maxCount() - total)
      return makeStatus(DLC_UNIMPLEMENTED,
                        std::string(collective) + ": more than " +
                            std::to_string(maxCount()) +
                            " elements in all (at most that many in one "
                            "collective)");
    total += counts[r];
  }
  return nullptr;
}

dlc_status_t Communicator::checkBuffers(const char *collective,
                                        const void *send, const void *recv,
                                        const size_t *counts, size_t total,
                                        dlc_dtype_t dtype, bool gather) const {
  size_t offset = 0;
  for (int r = 0; r < rank_; ++r)
    offset += counts[r];
  size_t width = dlc_dtype_size(dtype);
  // reduce_scatter reads `total` elements and writes this rank's block;
  // all_gather the reverse.
  size_t sendCount = gather ? counts[rank_] : total;
  size_t recvCount = gather ? total : counts[rank_];
  DLC_RETURN_IF_ERROR(checkPointer(collective, "send buffer", send, sendCount));
  DLC_RETURN_IF_ERROR(
      checkPointer(collective, "receive buffer", recv, recvCount));
  const char *ownBlock =
      static_cast<const char *>(gather ? recv : send) + offset * width;
  if (gather && send == ownBlock)
    return nullptr;
  if (overlaps(send, sendCount * width, recv, recvCount * width))
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string(collective) +
                          ": the send and receive buffers overlap" +
                          (gather ? " (in place, send must be this "
                                    "rank's block of receive)"
                                  : ""));
  return nullptr;
}

template <typename Body>
dlc_status_t Communicator::run(const char *collective, Body body) {
  return fail(guardStatus(collective, body));
}

dlc_status_t Communicator::allReduce(void *data, size_t count,
                                     dlc_dtype_t dtype, dlc_reduce_op_t op) {
  DLC_RETURN_IF_ERROR(checkUsable("all_reduce"));
  DLC_RETURN_IF_ERROR(checkReduction("all_reduce", dtype, op));
  DLC_RETURN_IF_ERROR(checkCount("all_reduce", count, maxCount()));
  DLC_RETURN_IF_ERROR(fail(checkPointer("all_reduce", "data", data, count)));
  if (count == 0)
    return nullptr;
  return run("all_reduce", [&] { return doAllReduce(data, count, dtype, op); });
}

dlc_status_t Communicator::reduceScatter(const void *send, void *recv,
                                         const size_t *counts,
                                         dlc_dtype_t dtype,
                                         dlc_reduce_op_t op) {
  DLC_RETURN_IF_ERROR(checkUsable("reduce_scatter"));
  DLC_RETURN_IF_ERROR(checkReduction("reduce_scatter", dtype, op));
  if (!counts)
    return fail(makeStatus(DLC_INVALID_ARGUMENT, "reduce_scatter: no counts"));
  size_t total = 0;
  DLC_RETURN_IF_ERROR(checkTotal("reduce_scatter", counts, total));
  DLC_RETURN_IF_ERROR(fail(checkBuffers("reduce_scatter", send, recv, counts,
                                        total, dtype, /*gather=*/false)));
  if (total == 0)
    return nullptr;
  return run("reduce_scatter",
             [&] { return doReduceScatter(send, recv, counts, dtype, op); });
}

dlc_status_t Communicator::allGather(const void *send, void *recv,
                                     const size_t *counts, dlc_dtype_t dtype) {
  DLC_RETURN_IF_ERROR(checkUsable("all_gather"));
  if (dlc_dtype_size(dtype) == 0)
    return makeStatus(DLC_INVALID_ARGUMENT, "all_gather: " + dtypeName(dtype));
  if (!counts)
    return fail(makeStatus(DLC_INVALID_ARGUMENT, "all_gather: no counts"));
  size_t total = 0;
  DLC_RETURN_IF_ERROR(checkTotal("all_gather", counts, total));
  DLC_RETURN_IF_ERROR(fail(checkBuffers("all_gather", send, recv, counts, total,
                                        dtype, /*gather=*/true)));
  if (total == 0)
    return nullptr;
  return run("all_gather",
             [&] { return doAllGather(send, recv, counts, dtype); });
}

dlc_status_t Communicator::broadcast(void *data, size_t count,
                                     dlc_dtype_t dtype, int root) {
  DLC_RETURN_IF_ERROR(checkUsable("broadcast"));
  if (dlc_dtype_size(dtype) == 0)
    return makeStatus(DLC_INVALID_ARGUMENT, "broadcast: " + dtypeName(dtype));
  if (root < 0 || root >= size())
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "broadcast: root " + std::to_string(root) +
                          " out of range (" + std::to_string(size()) +
                          " ranks)");
  DLC_RETURN_IF_ERROR(checkCount("broadcast", count, maxCount()));
  DLC_RETURN_IF_ERROR(fail(checkPointer("broadcast", "data", data, count)));
  if (count == 0)
    return nullptr;
  return run("broadcast",
             [&] { return doBroadcast(data, count, dtype, root); });
}

/// The checks send() and recv() share: a known dtype, a count within
/// `maxCount`, another rank as `peer`, a buffer.
static dlc_status_t checkTransfer(const char *transfer, const void *data,
                                  size_t count, dlc_dtype_t dtype, int peer,
                                  int rank, int size, size_t maxCount) {
  if (dlc_dtype_size(dtype) == 0)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string(transfer) + ": " + dtypeName(dtype));
  DLC_RETURN_IF_ERROR(checkCount(transfer, count, maxCount));
  if (peer < 0 || peer >= size || peer == rank)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      std::string(transfer) + ": peer " + std::to_string(peer) +
                          " is not another of the " + std::to_string(size) +
                          " ranks (this is rank " + std::to_string(rank) + ")");
  return checkPointer(transfer, "data", data, count);
}

dlc_status_t Communicator::send(const void *data, size_t count,
                                dlc_dtype_t dtype, int peer) {
  DLC_RETURN_IF_ERROR(checkUsable("send"));
  DLC_RETURN_IF_ERROR(fail(checkTransfer("send", data, count, dtype, peer,
                                         rank_, size_, maxCount())));
  if (count == 0)
    return nullptr;
  return run("send", [&] { return doSend(data, count, dtype, peer); });
}

dlc_status_t Communicator::startSend(const void *data, size_t count,
                                     dlc_dtype_t dtype, int peer) {
  DLC_RETURN_IF_ERROR(checkUsable("send"));
  DLC_RETURN_IF_ERROR(fail(checkTransfer("send", data, count, dtype, peer,
                                         rank_, size_, maxCount())));
  if (count == 0)
    return nullptr;
  return run("send", [&] { return doStartSend(data, count, dtype, peer); });
}

dlc_status_t Communicator::startRecv(void *data, size_t count,
                                     dlc_dtype_t dtype, int peer,
                                     uint64_t &id) {
  DLC_RETURN_IF_ERROR(checkUsable("recv"));
  DLC_RETURN_IF_ERROR(fail(checkTransfer("recv", data, count, dtype, peer,
                                         rank_, size_, maxCount())));
  return run("recv",
             [&] { return doStartRecv(data, count, dtype, peer, id); });
}

dlc_status_t Communicator::waitRecv(uint64_t id) {
  DLC_RETURN_IF_ERROR(checkUsable("recv"));
  return run("recv", [&] { return doWaitRecv(id); });
}

dlc_status_t Communicator::waitSends() {
  DLC_RETURN_IF_ERROR(checkUsable("send"));
  return run("send", [&] { return doWaitSends(); });
}

dlc_status_t Communicator::recv(void *data, size_t count, dlc_dtype_t dtype,
                                int peer) {
  DLC_RETURN_IF_ERROR(checkUsable("recv"));
  DLC_RETURN_IF_ERROR(fail(checkTransfer("recv", data, count, dtype, peer,
                                         rank_, size_, maxCount())));
  if (count == 0)
    return nullptr;
  return run("recv", [&] { return doRecv(data, count, dtype, peer); });
}

dlc_status_t Communicator::doSend(const void *, size_t, dlc_dtype_t, int) {
  return makeStatus(DLC_UNIMPLEMENTED,
                    std::string("send: a ") + kind() +
                        " communicator has no point-to-point transfers");
}

dlc_status_t Communicator::doRecv(void *, size_t, dlc_dtype_t, int) {
  return makeStatus(DLC_UNIMPLEMENTED,
                    std::string("recv: a ") + kind() +
                        " communicator has no point-to-point transfers");
}

dlc_status_t Communicator::barrier() {
  DLC_RETURN_IF_ERROR(checkUsable("barrier"));
  return run("barrier", [&] { return doBarrier(); });
}

dlc_status_t Communicator::split(int color, int key,
                                 std::unique_ptr<Communicator> &out) {
  DLC_RETURN_IF_ERROR(checkUsable("split"));
  // Colors differ by rank, so a bad one is a rank-local rejection.
  if (color < 0)
    return fail(makeStatus(DLC_INVALID_ARGUMENT,
                           "split: color " + std::to_string(color) +
                               " on rank " + std::to_string(rank_) +
                               " (expected 0 or more)"));
  std::vector<int64_t> mine = {color, key}, all(2 * size_t(size_));
  std::vector<size_t> counts(size_, 2);
  DLC_RETURN_IF_ERROR(
      allGather(mine.data(), all.data(), counts.data(), DLC_I64));
  int rank = 0, size = 0;
  for (int r = 0; r < size_; ++r) {
    if (all[2 * r] != color)
      continue;
    ++size;
    if (all[2 * r + 1] < key || (all[2 * r + 1] == key && r < rank_))
      ++rank;
  }
  return run("split", [&] { return doSplit(color, key, rank, size, out); });
}

dlc_status_t openCommunicator(const std::string &kind, double timeout,
                              std::unique_ptr<Communicator> &out) {
  if (!(timeout > 0))
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "communicator timeout " + std::to_string(timeout) +
                          " s (expected a positive number of seconds)");
  LaunchInfo launch = detectLaunch();
  if (kind == "local" || (kind == "auto" && launch.size == 1)) {
    out = createLocalCommunicator(timeout);
    return nullptr;
  }
  if (kind == "mpi" || kind == "auto")
    return createMpiCommunicator(launch, timeout, out);
  return makeStatus(DLC_INVALID_ARGUMENT,
                    "unknown communicator '" + kind +
                        "' (expected \"auto\", \"mpi\" or \"local\")");
}

} // namespace dlc
