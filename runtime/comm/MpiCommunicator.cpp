//===- MpiCommunicator.cpp - Collectives over MPI, with a deadline --------===//
//
// The communicator of CPU ranks started by mpirun or srun (and, later, the
// bootstrap of NCCL's). MPI is linked, not opened at run time: Open MPI's
// handles (MPI_FLOAT, MPI_COMM_WORLD) are addresses of its own globals,
// which dlopen would make us look up one by one, and its plugins expect
// libmpi loaded globally. Linking is optional instead (runtime/
// CMakeLists.txt, DLC_MPI): a build without Open MPI's development files
// has NoMpi.cpp in place of this file.
//
// Timeouts. A blocking MPI collective waits forever for a rank that never
// comes, so every collective here is MPI's nonblocking one, polled with
// MPI_Test until it completes or `timeout` seconds pass. MPI cannot cancel
// a collective, so on a timeout the communicator is left broken: its
// requests stay pending (MPI may still write into the failed call's
// buffers until the process exits) and it is never freed.
//
// Who had not joined is not something MPI knows: a collective's messages
// flow along its algorithm's tree or ring, and a rank sees only its
// neighbours. So a rank that times out asks every other rank, on a second
// communicator kept for this, which collective it is in: a rank waiting in
// any collective of this communicator answers with that collective's
// number while it polls. Ranks that answer with the same number joined;
// ranks that answer with another are elsewhere in the sequence; ranks that
// do not answer within a second are computing, stopped or dead (or timed
// out earlier and returned, which a rank cannot tell from the rest).
//
// MPI initialization belongs to whoever did it first. If the host program
// has initialized MPI, communicators use it and never finalize it; it must
// provide MPI_THREAD_SERIALIZED or more. If not, the first communicator
// initializes it (MPI_THREAD_SERIALIZED: a communicator is used by one
// thread at a time, not always the same one; the level is process-wide, so
// the host's own MPI calls and other communicators must not run at the same
// time either), and releasing the last one finalizes it, after which MPI
// cannot be initialized again in this process. MPI_Finalize belongs on the
// thread that initialized MPI, so releasing the last communicator on
// another thread leaves MPI initialized (the next release on that thread,
// or the host's own MPI_Finalize there, ends it). After a timeout, or an
// MPI error while a collective was pending, MPI is not finalized:
// MPI_Finalize waits for every rank, including the one that stopped
// answering; the process exits without it and the launcher ends the other
// ranks.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"

#include "runtime/core/Status.h"
#include "runtime/support/Float16.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

namespace dlc {

namespace {

using Clock = std::chrono::steady_clock;

/// An MPI error code as a status: DLC_UNAVAILABLE (a peer or the network
/// failed, or MPI refused) naming what failed (the MPI call, or the
/// collective) and MPI's own text.
dlc_status_t mpiStatus(int code, const std::string &what) {
  if (code == MPI_SUCCESS)
    return nullptr;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = 0;
  return makeStatus(DLC_UNAVAILABLE,
                    what + " failed: " + std::string(text, length));
}

/// The one conversion of MPI's errors at the boundary: returns from the
/// enclosing function with the failed call's status.
#define DLC_MPI_RETURN_IF_ERROR(call)                                          \
  DLC_RETURN_IF_ERROR(mpiStatus((call), #call))

/// Who initialized MPI in this process, and how many communicators use it.
struct MpiProcess {
  std::mutex mutex;
  int users = 0;
  /// Whether a communicator initialized MPI (and so finalizes it).
  bool owned = false;
  /// The thread that initialized MPI, the only one that may finalize it.
  std::thread::id initThread;
  /// Whether any communicator left an MPI operation pending (then nobody
  /// finalizes).
  bool broken = false;
};

MpiProcess &mpiProcess() {
  static MpiProcess process;
  return process;
}

/// MPI's name for a thread level.
std::string threadLevelName(int level) {
  if (level == MPI_THREAD_SINGLE)
    return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED)
    return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED)
    return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE)
    return "MPI_THREAD_MULTIPLE";
  return "thread level " + std::to_string(level);
}

dlc_status_t acquireMpi() {
  MpiProcess &p = mpiProcess();
  std::lock_guard<std::mutex> lock(p.mutex);
  int finalized = 0;
  DLC_MPI_RETURN_IF_ERROR(MPI_Finalized(&finalized));
  if (finalized)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      "MPI communicator: MPI has been finalized in this "
                      "process and cannot be initialized again (keep one "
                      "communicator open for the whole run)");
  int initialized = 0;
  DLC_MPI_RETURN_IF_ERROR(MPI_Initialized(&initialized));
  // MPI's thread levels are ordered: SINGLE < FUNNELED < SERIALIZED <
  // MULTIPLE. Below SERIALIZED, calls from whichever thread the host uses a
  // communicator on would be undefined.
  int provided = 0;
  if (!initialized) {
    DLC_MPI_RETURN_IF_ERROR(
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
    if (provided < MPI_THREAD_SERIALIZED) {
      // Of no use to dlc, and nobody else asked for it.
      MPI_Finalize();
      return makeStatus(DLC_FAILED_PRECONDITION,
                        "MPI communicator: this MPI provides only " +
                            threadLevelName(provided) +
                            " (dlc needs MPI_THREAD_SERIALIZED or more)");
    }
    p.owned = true;
    p.initThread = std::this_thread::get_id();
  } else if (!p.owned) {
    DLC_MPI_RETURN_IF_ERROR(MPI_Query_thread(&provided));
    if (provided < MPI_THREAD_SERIALIZED)
      return makeStatus(
          DLC_FAILED_PRECONDITION,
          "MPI communicator: the host program initialized MPI with " +
              threadLevelName(provided) +
              " (dlc needs MPI_THREAD_SERIALIZED or more: initialize MPI "
              "with MPI_Init_thread)");
  }
  ++p.users;
  return nullptr;
}

void releaseMpi(bool broken) {
  MpiProcess &p = mpiProcess();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.broken = p.broken || broken;
  if (--p.users > 0 || !p.owned || p.broken)
    return;
  // MPI_Finalize belongs on the thread that initialized MPI (MPI's "main
  // thread"); on any other MPI stays initialized and owned, for the next
  // communicator or the host to end there.
  if (std::this_thread::get_id() != p.initThread)
    return;
  MPI_Finalize();
  p.owned = false;
}

/// Gives MPI back when a communicator fails to open, unless dismissed (the
/// communicator then owns the use).
struct MpiUse {
  ~MpiUse() {
    if (!dismissed)
      releaseMpi(broken);
  }
  /// Whether an MPI operation is still pending (then MPI is not
  /// finalized).
  bool broken = false;
  bool dismissed = false;
};

/// MPI's type for a dtype's elements when only their bytes move.
MPI_Datatype bitsType(dlc_dtype_t dtype) {
  switch (dlc_dtype_size(dtype)) {
  case 1:
    return MPI_UINT8_T;
  case 2:
    return MPI_UINT16_T;
  case 4:
    return MPI_UINT32_T;
  default:
    return MPI_UINT64_T;
  }
}

/// `seconds` as messages print it ("2", "0.5").
std::string formatSeconds(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

/// "ranks 1, 3" / "rank 2".
std::string rankList(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

/// Timeouts longer than this (about 31 years) wait forever: steady_clock
/// counts 64-bit nanoseconds, so now() plus ~292 years overflows.
constexpr double kForeverSeconds = 1e9;

/// The time `seconds` from now; the end of time for an infinite timeout or
/// one past kForeverSeconds.
Clock::time_point deadlineAfter(double seconds) {
  if (!(seconds < kForeverSeconds))
    return Clock::time_point::max();
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

/// Polls at full speed this many times before sleeping between polls: a
/// collective of a healthy job usually ends within microseconds of the last
/// rank's arrival.
constexpr int kSpinPolls = 1000;
/// Then sleeps this long between polls, so that a rank waiting on a slow
/// one leaves its core to the others; not longer, because Open MPI
/// progresses a nonblocking collective only inside MPI calls (it has no
/// progress thread by default): while this rank sleeps, the messages it
/// should forward along the collective's tree or ring wait too, and so do
/// the ranks downstream. 50 us (about 100 with Linux's default timer slack)
/// keeps that delay small against a step of training.
constexpr std::chrono::microseconds kPollSleep(50);

enum class Poll { Done, TimedOut, Failed };

/// Tests `count` requests until all complete, `deadline` passes or MPI
/// fails (its error code in `code`), calling `idle()` after each test that
/// found them incomplete.
template <typename Idle>
Poll poll(MPI_Request *requests, int count, Clock::time_point deadline,
          int &code, Idle idle) {
  for (int polls = 0;; ++polls) {
    int done = 0;
    code = MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS)
      return Poll::Failed;
    if (done)
      return Poll::Done;
    idle();
    if (Clock::now() >= deadline)
      return Poll::TimedOut;
    if (polls > kSpinPolls)
      std::this_thread::sleep_for(kPollSleep);
  }
}

template <typename T>
void widenTo(const void *source, float *target, size_t count) {
  const T *s = static_cast<const T *>(source);
  for (size_t i = 0; i < count; ++i)
    target[i] = static_cast<float>(s[i]);
}

/// 16-bit elements to float32 (exact).
void widen(const void *source, float *target, size_t count, dlc_dtype_t dtype) {
  if (dtype == DLC_BF16)
    widenTo<BFloat16>(source, target, count);
  else
    widenTo<Half>(source, target, count);
}

/// float32 sums (divided by `divisor` for a mean) to 16-bit elements,
/// rounded once, to nearest even.
void narrow(const float *source, void *target, size_t count, dlc_dtype_t dtype,
            float divisor) {
  for (size_t i = 0; i < count; ++i) {
    float value = source[i] / divisor;
    if (dtype == DLC_BF16)
      static_cast<BFloat16 *>(target)[i] = BFloat16(value);
    else
      static_cast<Half *>(target)[i] = Half(value);
  }
}

/// Divides `count` elements in place (a sum into a mean).
template <typename T> void divide(void *data, size_t count, T divisor) {
  T *values = static_cast<T *>(data);
  for (size_t i = 0; i < count; ++i)
    values[i] /= divisor;
}

/// Tags on the control communicator.
constexpr int kQueryTag = 1;
constexpr int kReplyTag = 2;
/// How long a rank that timed out waits for the others to say where they
/// are.
constexpr double kAskSeconds = 1.0;

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(MPI_Comm comm, MPI_Comm control, int rank, int size,
                  int localRank, double timeout)
      : Communicator(rank, size, localRank, timeout), comm_(comm),
        control_(control) {}

  ~MpiCommunicator() override {
    // Replies and queries still in flight: their buffers must outlive them.
    bool pending = false;
    for (Message &m : messages_) {
      int done = 0;
      MPI_Test(&m.request, &done, MPI_STATUS_IGNORE);
      if (!done) {
        MPI_Request_free(&m.request);
        pending = true;
      }
    }
    // Moving a deque or vector keeps its elements where they are; what MPI
    // may still read or write is freed with the process.
    if (pending)
      new std::deque<Message>(std::move(messages_));
    // Transfers a failure left pending write or read their buffers (an
    // executor's arena) until the process ends.
    broken_ |= !sends_.empty() || !recvs_.empty();
    if (!broken_) {
      MPI_Comm_free(&comm_);
      MPI_Comm_free(&control_);
    } else {
      // The failed collective's requests are still pending.
      new std::vector<float>(std::move(wide_));
      new std::vector<float>(std::move(wideRecv_));
      new std::vector<int>(std::move(countsInt_));
      new std::vector<int>(std::move(offsets_));
    }
    releaseMpi(broken_);
  }

  const char *kind() const override { return "mpi"; }

protected:
  dlc_status_t doAllReduce(void *data, size_t count, dlc_dtype_t dtype,
                           dlc_reduce_op_t op) override;
  dlc_status_t doReduceScatter(const void *send, void *recv,
                               const size_t *counts, dlc_dtype_t dtype,
                               dlc_reduce_op_t op) override;
  dlc_status_t doAllGather(const void *send, void *recv, const size_t *counts,
                           dlc_dtype_t dtype) override;
  dlc_status_t doBroadcast(void *data, size_t count, dlc_dtype_t dtype,
                           int root) override;
  dlc_status_t doBarrier() override;
  dlc_status_t doSend(const void *data, size_t count, dlc_dtype_t dtype,
                      int peer) override;
  dlc_status_t doRecv(void *data, size_t count, dlc_dtype_t dtype,
                      int peer) override;
  dlc_status_t doStartSend(const void *data, size_t count, dlc_dtype_t dtype,
                           int peer) override;
  dlc_status_t doWaitSends() override;
  dlc_status_t doStartRecv(void *data, size_t count, dlc_dtype_t dtype,
                           int peer, uint64_t &id) override;
  dlc_status_t doWaitRecv(uint64_t id) override;

public:
  bool progressTransfers() override {
    // A test that fails may free its request: the error is kept for the
    // next waitSends() or waitRecv() to report.
    if (failed() || progressError_ != MPI_SUCCESS)
      return false;
    int done = 0;
    if (!sends_.empty()) {
      progressError_ = MPI_Testall(static_cast<int>(sends_.size()),
                                   sends_.data(), &done, MPI_STATUSES_IGNORE);
      if (progressError_ == MPI_SUCCESS && done)
        sends_.clear();
    }
    bool pending = !sends_.empty();
    for (auto &[id, recv] : recvs_)
      if (progressError_ == MPI_SUCCESS && recv.first != MPI_REQUEST_NULL) {
        progressError_ = MPI_Test(&recv.first, &done, MPI_STATUS_IGNORE);
        pending |= !done;
      }
    return pending && progressError_ == MPI_SUCCESS;
  }

protected:
  dlc_status_t doSplit(int color, int key, int rank, int size,
                       std::unique_ptr<Communicator> &out) override;
  [[noreturn]] void abort(int code) override {
    // MPI_Abort ends every process of MPI_COMM_WORLD through the launcher;
    // it should not return, but exit if an implementation lets it.
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }
  size_t maxCount() const override { return INT_MAX; }

private:
  /// A small message sent without waiting, and its buffer.
  struct Message {
    int64_t value = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  /// A sum or mean over all ranks of `sendCount` elements of `send` (NULL:
  /// in place in `recv`) into `recvCount` of `recv`, which `start` begins
  /// (MPI_Iallreduce or MPI_Ireduce_scatter) on buffers of MPI_FLOAT or
  /// MPI_DOUBLE: 16-bit data goes through float32 buffers.
  template <typename Start>
  dlc_status_t reduce(const std::string &what, const void *send,
                      size_t sendCount, void *recv, size_t recvCount,
                      dlc_dtype_t dtype, dlc_reduce_op_t op, Start start);
  /// Waits for `count` requests of the collective `what` ("all_reduce of 8
  /// float32 elements") until the deadline; on a timeout asks the other
  /// ranks where they are. Any failure (a timeout, an MPI error, a C++
  /// exception) leaves the requests pending, and the communicator failed
  /// and broken.
  dlc_status_t wait(MPI_Request *requests, int count, const std::string &what);
  /// The body of wait(), which may throw.
  dlc_status_t waitOrThrow(MPI_Request *requests, int count,
                           const std::string &what);
  /// Starts collective number ++sequence_, which queries then name.
  void begin() { current_ = ++sequence_; }
  /// Answers every query waiting on the control communicator with the
  /// collective this rank is in.
  void answerQueries();
  /// After a timeout: asks every other rank which collective it is in and
  /// describes who had not joined.
  std::string askWhoIsMissing();
  /// `counts` as int (each at most maxCount(), checked before) and their
  /// offsets, into countsInt_ and offsets_.
  void setCounts(const size_t *counts);

  MPI_Comm comm_;
  /// Carries the queries of a rank that timed out, apart from collectives.
  MPI_Comm control_;
  /// Collectives started on this communicator.
  int64_t sequence_ = 0;
  /// The collective in progress (its number), 0 between collectives.
  int64_t current_ = 0;
  std::deque<Message> messages_;
  /// A 16-bit reduction's float32 buffers (send and receive).
  std::vector<float> wide_, wideRecv_;
  /// Per-rank counts and offsets as MPI takes them; members, as MPI may
  /// read them until the collective completes.
  std::vector<int> countsInt_, offsets_;
  /// The sends startSend() started that waitSends() has not waited for.
  std::vector<MPI_Request> sends_;
  /// The receives startRecv() started, by id, and what each describes.
  std::map<uint64_t, std::pair<MPI_Request, std::string>> recvs_;
  uint64_t nextRecv_ = 0;
  /// An MPI error progressTransfers() met, reported by the next wait.
  int progressError_ = MPI_SUCCESS;
  /// The error of a transfer whose test failed, which makes the
  /// communicator broken (its other transfers may still be pending).
  dlc_status_t progressFailure(const std::string &what) {
    broken_ = true;
    return mpiStatus(progressError_, what);
  }
  /// Whether a collective's requests may still be pending (after a failed
  /// wait): then the handles and buffers MPI may still use are never freed
  /// and MPI is not finalized. A communicator failed by a rank-local
  /// rejection, or by an MPI call that started nothing, is not broken.
  bool broken_ = false;
};

void MpiCommunicator::answerQueries() {
  for (;;) {
    int flag = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, control_, &flag, &status) !=
            MPI_SUCCESS ||
        !flag)
      break;
    int64_t asked = 0;
    if (MPI_Recv(&asked, 1, MPI_INT64_T, status.MPI_SOURCE, kQueryTag, control_,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
      break;
    Message &reply = messages_.emplace_back();
    reply.value = current_;
    MPI_Isend(&reply.value, 1, MPI_INT64_T, status.MPI_SOURCE, kReplyTag,
              control_, &reply.request);
  }
  while (!messages_.empty()) {
    int done = 0;
    MPI_Test(&messages_.front().request, &done, MPI_STATUS_IGNORE);
    if (!done)
      break;
    messages_.pop_front();
  }
}

std::string MpiCommunicator::askWhoIsMissing() {
  std::vector<int64_t> answers(size(), -1);
  std::vector<MPI_Request> receives(size(), MPI_REQUEST_NULL);
  std::vector<bool> answered(size(), false);
  answered[rank()] = true;
  answers[rank()] = current_;
  for (int r = 0; r < size(); ++r) {
    if (r == rank())
      continue;
    MPI_Irecv(&answers[r], 1, MPI_INT64_T, r, kReplyTag, control_,
              &receives[r]);
    Message &query = messages_.emplace_back();
    query.value = current_;
    MPI_Isend(&query.value, 1, MPI_INT64_T, r, kQueryTag, control_,
              &query.request);
  }
  Clock::time_point until =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(std::min(kAskSeconds, timeout())));
  for (;;) {
    bool all = true;
    for (int r = 0; r < size(); ++r) {
      if (answered[r])
        continue;
      int done = 0;
      MPI_Test(&receives[r], &done, MPI_STATUS_IGNORE);
      answered[r] = done;
      all = all && done;
    }
    answerQueries();
    if (all || Clock::now() >= until)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (int r = 0; r < size(); ++r) {
    if (answered[r])
      continue;
    MPI_Status status;
    MPI_Cancel(&receives[r]);
    MPI_Wait(&receives[r], &status);
    int cancelled = 0;
    MPI_Test_cancelled(&status, &cancelled);
    answered[r] = !cancelled;
  }

  std::vector<int> joined, silent;
  std::string elsewhere;
  for (int r = 0; r < size(); ++r) {
    if (r == rank())
      continue;
    if (!answered[r])
      silent.push_back(r);
    else if (answers[r] == current_)
      joined.push_back(r);
    else
      elsewhere += "; rank " + std::to_string(r) + " was in collective " +
                   std::to_string(answers[r]);
  }
  std::string text;
  if (!silent.empty())
    text += "; " + rankList(silent) +
            " did not join or answer (computing, stopped or failed)";
  text += elsewhere;
  if (!joined.empty())
    text += "; " + rankList(joined) + " had joined";
  return text;
}

dlc_status_t MpiCommunicator::wait(MPI_Request *requests, int count,
                                   const std::string &what) {
  dlc_status_t status = guardStatus(
      what.c_str(), [&] { return waitOrThrow(requests, count, what); });
  if (!status) {
    current_ = 0;
    return nullptr;
  }
  broken_ = true;
  return status;
}

dlc_status_t MpiCommunicator::waitOrThrow(MPI_Request *requests, int count,
                                          const std::string &what) {
  int code = MPI_SUCCESS;
  switch (poll(requests, count, deadlineAfter(timeout()), code,
               [&] { answerQueries(); })) {
  case Poll::Done:
    return nullptr;
  case Poll::Failed:
    return mpiStatus(code, what);
  case Poll::TimedOut:
    break;
  }
  std::string who = askWhoIsMissing();
  return makeStatus(DLC_DEADLINE_EXCEEDED,
                    what + " (collective " + std::to_string(current_) +
                        " of this communicator) timed out after " +
                        formatSeconds(timeout()) + " s on rank " +
                        std::to_string(rank()) + " of " +
                        std::to_string(size()) + who);
}

/// "all_reduce of 8 float32 elements".
static std::string describe(const char *collective, size_t count,
                            dlc_dtype_t dtype) {
  return std::string(collective) + " of " + std::to_string(count) + " " +
         dlc_dtype_name(dtype) + " elements";
}

void MpiCommunicator::setCounts(const size_t *counts) {
  countsInt_.resize(size());
  offsets_.resize(size());
  int offset = 0;
  for (int r = 0; r < size(); ++r) {
    countsInt_[r] = static_cast<int>(counts[r]);
    offsets_[r] = offset;
    offset += countsInt_[r];
  }
}

template <typename Start>
dlc_status_t MpiCommunicator::reduce(const std::string &what, const void *send,
                                     size_t sendCount, void *recv,
                                     size_t recvCount, dlc_dtype_t dtype,
                                     dlc_reduce_op_t op, Start start) {
  bool mean = op == DLC_REDUCE_MEAN;
  MPI_Request request;
  begin();
  if (dtype == DLC_F32 || dtype == DLC_F64) {
    MPI_Datatype type = dtype == DLC_F32 ? MPI_FLOAT : MPI_DOUBLE;
    DLC_RETURN_IF_ERROR(mpiStatus(
        start(send ? send : MPI_IN_PLACE, recv, type, &request), what));
    DLC_RETURN_IF_ERROR(wait(&request, 1, what));
    if (mean && dtype == DLC_F32)
      divide<float>(recv, recvCount, static_cast<float>(size()));
    else if (mean)
      divide<double>(recv, recvCount, size());
    return nullptr;
  }
  wide_.resize(sendCount);
  widen(send ? send : recv, wide_.data(), sendCount, dtype);
  float *wideRecv = wide_.data();
  if (send) {
    wideRecv_.resize(std::max<size_t>(recvCount, 1));
    wideRecv = wideRecv_.data();
  }
  DLC_RETURN_IF_ERROR(mpiStatus(
      start(send ? wide_.data() : MPI_IN_PLACE, wideRecv, MPI_FLOAT, &request),
      what));
  DLC_RETURN_IF_ERROR(wait(&request, 1, what));
  narrow(wideRecv, recv, recvCount, dtype,
         mean ? static_cast<float>(size()) : 1.0f);
  return nullptr;
}

dlc_status_t MpiCommunicator::doAllReduce(void *data, size_t count,
                                          dlc_dtype_t dtype,
                                          dlc_reduce_op_t op) {
  int n = static_cast<int>(count);
  return reduce(describe("all_reduce", count, dtype), nullptr, count, data,
                count, dtype, op,
                [&](const void *send, void *recv, MPI_Datatype type,
                    MPI_Request *request) {
                  return MPI_Iallreduce(send, recv, n, type, MPI_SUM, comm_,
                                        request);
                });
}

dlc_status_t MpiCommunicator::doReduceScatter(const void *send, void *recv,
                                              const size_t *counts,
                                              dlc_dtype_t dtype,
                                              dlc_reduce_op_t op) {
  setCounts(counts);
  size_t total = static_cast<size_t>(offsets_.back()) + counts[size() - 1];
  return reduce(describe("reduce_scatter", total, dtype), send, total, recv,
                counts[rank()], dtype, op,
                [&](const void *send, void *recv, MPI_Datatype type,
                    MPI_Request *request) {
                  return MPI_Ireduce_scatter(send, recv, countsInt_.data(),
                                             type, MPI_SUM, comm_, request);
                });
}

dlc_status_t MpiCommunicator::doAllGather(const void *send, void *recv,
                                          const size_t *counts,
                                          dlc_dtype_t dtype) {
  setCounts(counts);
  size_t total = static_cast<size_t>(offsets_.back()) + counts[size() - 1];
  std::string what = describe("all_gather", total, dtype);
  MPI_Datatype type = bitsType(dtype);
  const char *ownBlock =
      static_cast<const char *>(recv) +
      static_cast<size_t>(offsets_[rank()]) * dlc_dtype_size(dtype);
  const void *sendBuffer = send == ownBlock ? MPI_IN_PLACE : send;
  MPI_Request request;
  begin();
  DLC_RETURN_IF_ERROR(
      mpiStatus(MPI_Iallgatherv(sendBuffer, countsInt_[rank()], type, recv,
                                countsInt_.data(), offsets_.data(), type, comm_,
                                &request),
                what));
  return wait(&request, 1, what);
}

dlc_status_t MpiCommunicator::doBroadcast(void *data, size_t count,
                                          dlc_dtype_t dtype, int root) {
  std::string what = describe("broadcast", count, dtype) + " from rank " +
                     std::to_string(root);
  MPI_Request request;
  begin();
  DLC_RETURN_IF_ERROR(
      mpiStatus(MPI_Ibcast(data, static_cast<int>(count), bitsType(dtype), root,
                           comm_, &request),
                what));
  return wait(&request, 1, what);
}

/// The tag of send() and recv() on the collectives' communicator (whose
/// collectives use none).
constexpr int kTransferTag = 3;

dlc_status_t MpiCommunicator::doSend(const void *data, size_t count,
                                     dlc_dtype_t dtype, int peer) {
  std::string what =
      describe("send", count, dtype) + " to rank " + std::to_string(peer);
  MPI_Request request;
  DLC_RETURN_IF_ERROR(
      mpiStatus(MPI_Isend(data, static_cast<int>(count), bitsType(dtype), peer,
                          kTransferTag, comm_, &request),
                what));
  return wait(&request, 1, what);
}

dlc_status_t MpiCommunicator::doStartSend(const void *data, size_t count,
                                          dlc_dtype_t dtype, int peer) {
  MPI_Request request;
  DLC_RETURN_IF_ERROR(mpiStatus(
      MPI_Isend(data, static_cast<int>(count), bitsType(dtype), peer,
                kTransferTag, comm_, &request),
      describe("send", count, dtype) + " to rank " + std::to_string(peer)));
  sends_.push_back(request);
  return nullptr;
}

dlc_status_t MpiCommunicator::doStartRecv(void *data, size_t count,
                                          dlc_dtype_t dtype, int peer,
                                          uint64_t &id) {
  std::string what =
      describe("recv", count, dtype) + " from rank " + std::to_string(peer);
  MPI_Request request = MPI_REQUEST_NULL;
  if (count)
    DLC_RETURN_IF_ERROR(mpiStatus(MPI_Irecv(data, static_cast<int>(count),
                                            bitsType(dtype), peer,
                                            kTransferTag, comm_, &request),
                                  what));
  id = nextRecv_++;
  recvs_.emplace(id, std::make_pair(request, std::move(what)));
  return nullptr;
}

dlc_status_t MpiCommunicator::doWaitRecv(uint64_t id) {
  auto it = recvs_.find(id);
  if (it == recvs_.end())
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "recv: no receive " + std::to_string(id) +
                          " is in flight");
  if (progressError_ != MPI_SUCCESS)
    return progressFailure(it->second.second);
  DLC_RETURN_IF_ERROR(wait(&it->second.first, 1, it->second.second));
  recvs_.erase(it);
  return nullptr;
}

dlc_status_t MpiCommunicator::doWaitSends() {
  if (progressError_ != MPI_SUCCESS)
    return progressFailure("the sends to other ranks");
  if (sends_.empty())
    return nullptr;
  DLC_RETURN_IF_ERROR(wait(sends_.data(), static_cast<int>(sends_.size()),
                           std::to_string(sends_.size()) +
                               " sends to other ranks"));
  sends_.clear();
  return nullptr;
}

dlc_status_t MpiCommunicator::doRecv(void *data, size_t count,
                                     dlc_dtype_t dtype, int peer) {
  std::string what =
      describe("recv", count, dtype) + " from rank " + std::to_string(peer);
  MPI_Request request;
  DLC_RETURN_IF_ERROR(
      mpiStatus(MPI_Irecv(data, static_cast<int>(count), bitsType(dtype), peer,
                          kTransferTag, comm_, &request),
                what));
  return wait(&request, 1, what);
}

dlc_status_t MpiCommunicator::doBarrier() {
  MPI_Request request;
  begin();
  DLC_RETURN_IF_ERROR(mpiStatus(MPI_Ibarrier(comm_, &request), "barrier"));
  return wait(&request, 1, "barrier");
}

dlc_status_t MpiCommunicator::doSplit(int color, int key, int rank, int size,
                                      std::unique_ptr<Communicator> &out) {
  DLC_RETURN_IF_ERROR(acquireMpi());
  MpiUse use;
  // Blocking (MPI has no split that is not): every rank gathered the
  // colors just before, so all are on their way here, unless one timed out
  // as the gathering ended (Communicator.h). The control communicator
  // splits alike, for the new one's queries after a timeout.
  MPI_Comm comm = MPI_COMM_NULL, control = MPI_COMM_NULL;
  int mpiRank = 0, mpiSize = 0;
  const char *call = "MPI_Comm_split";
  int code = MPI_Comm_split(comm_, color, key, &comm);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_split(control_, color, key, &control);
  if (code == MPI_SUCCESS) {
    call = "MPI_Comm_rank";
    code = MPI_Comm_rank(comm, &mpiRank);
  }
  if (code == MPI_SUCCESS) {
    call = "MPI_Comm_size";
    code = MPI_Comm_size(comm, &mpiSize);
  }
  dlc_status_t status = nullptr;
  if (code != MPI_SUCCESS)
    status = mpiStatus(code, call);
  else if (mpiRank != rank || mpiSize != size)
    status =
        makeStatus(DLC_INTERNAL,
                   "split: MPI made rank " + std::to_string(mpiRank) + " of " +
                       std::to_string(mpiSize) + ", the gathered colors rank " +
                       std::to_string(rank) + " of " + std::to_string(size));
  if (status) {
    for (MPI_Comm *made : {&comm, &control})
      if (*made != MPI_COMM_NULL)
        MPI_Comm_free(made);
    return status;
  }
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(control, MPI_ERRORS_RETURN);
  out = std::make_unique<MpiCommunicator>(comm, control, rank, size,
                                          localRank(), timeout());
  use.dismissed = true;
  return nullptr;
}

} // namespace

namespace {

/// What MPI_Comm_idup writes after it returns: on the heap, so that when
/// opening times out the pending duplications write into memory that is
/// never freed rather than into a dead stack frame.
struct Duplicates {
  MPI_Comm comm = MPI_COMM_NULL, control = MPI_COMM_NULL;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

/// Makes errors on MPI_COMM_WORLD (the duplications and the tests of their
/// requests) come back as codes, rather than aborting the job, while a
/// communicator opens; the duplicates inherit MPI_ERRORS_RETURN. The
/// host's handler comes back after.
class WorldErrorsReturn {
public:
  WorldErrorsReturn() {
    if (MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved_) != MPI_SUCCESS)
      saved_ = MPI_ERRHANDLER_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~WorldErrorsReturn() {
    if (saved_ == MPI_ERRHANDLER_NULL)
      return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved_);
    MPI_Errhandler_free(&saved_);
  }
  WorldErrorsReturn(const WorldErrorsReturn &) = delete;
  WorldErrorsReturn &operator=(const WorldErrorsReturn &) = delete;

private:
  MPI_Errhandler saved_;
};

} // namespace

dlc_status_t createMpiCommunicator(const LaunchInfo &launch, double timeout,
                                   std::unique_ptr<Communicator> &out) {
  auto dup = std::make_unique<Duplicates>();
  DLC_RETURN_IF_ERROR(acquireMpi());
  // From here on a failure gives MPI back (and, if it was the last user
  // and this opened it, finalizes it unless a duplication is pending).
  MpiUse use;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Clock::time_point deadline = deadlineAfter(timeout);
  WorldErrorsReturn errorsReturn;
  // Duplicates of MPI_COMM_WORLD keep our collectives apart from the host
  // program's; made without blocking, so a rank that never opens its
  // communicator makes the others fail after `timeout` instead of hanging.
  int code = MPI_Comm_idup(MPI_COMM_WORLD, &dup->comm, &dup->requests[0]);
  if (code != MPI_SUCCESS)
    return mpiStatus(code, "MPI_Comm_idup");
  int idupCode =
      MPI_Comm_idup(MPI_COMM_WORLD, &dup->control, &dup->requests[1]);
  // If the second failed, the first still completes (MPI cannot cancel or
  // free a collective's request): wait for it as for both, then free it.
  int started = idupCode == MPI_SUCCESS ? 2 : 1;
  Poll result = poll(dup->requests, started, deadline, code, [] {});
  if (result != Poll::Done) {
    // The pending duplications may still write into *dup, and finalizing
    // would wait for them.
    dup.release();
    use.broken = true;
    if (result == Poll::Failed)
      return mpiStatus(code, "opening the MPI communicator");
    return makeStatus(DLC_DEADLINE_EXCEEDED,
                      "opening the MPI communicator timed out after " +
                          formatSeconds(timeout) + " s on rank " +
                          std::to_string(rank) + " of " + std::to_string(size) +
                          " (some rank has not opened its communicator)");
  }
  if (idupCode != MPI_SUCCESS) {
    MPI_Comm_free(&dup->comm);
    return mpiStatus(idupCode, "MPI_Comm_idup");
  }
  // Inherited from MPI_COMM_WORLD during the duplication; set again so that
  // it holds whatever the MPI copies.
  MPI_Comm_set_errhandler(dup->comm, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(dup->control, MPI_ERRORS_RETURN);

  // MPI's count of the ranks sharing this machine's memory. The split is a
  // blocking collective, so every rank makes it, whatever its launcher
  // says; the launcher's local rank wins where it counts the same ranks.
  MPI_Comm node = MPI_COMM_NULL;
  int nodeRank = 0;
  code = MPI_Comm_split_type(dup->comm, MPI_COMM_TYPE_SHARED, rank,
                             MPI_INFO_NULL, &node);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_rank(node, &nodeRank);
  if (node != MPI_COMM_NULL)
    MPI_Comm_free(&node);
  if (code != MPI_SUCCESS) {
    MPI_Comm_free(&dup->comm);
    MPI_Comm_free(&dup->control);
    return mpiStatus(code, "MPI_Comm_split_type");
  }
  int localRank = launch.size == size && launch.localRank >= 0
                      ? launch.localRank
                      : nodeRank;
  out = std::make_unique<MpiCommunicator>(dup->comm, dup->control, rank, size,
                                          localRank, timeout);
  use.dismissed = true;
  return nullptr;
}

} // namespace dlc
