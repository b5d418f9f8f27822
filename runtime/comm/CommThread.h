//===- CommThread.h - Collectives beside the computation --------*- C++ -*-===//
//
// A data-parallel step issues each gradient bucket's all-reduce as soon as
// backward has produced the bucket and goes on with backward while it
// travels (DESIGN.md decision 9): the collectives run, in the order they
// were issued, on a thread of their own, and the step waits for one only
// before the first step that reads its outputs. On the CPU that thread is
// the "communication stream". MPI is initialized MPI_THREAD_SERIALIZED, so
// while jobs are queued no other thread may call the communicator; an
// executor waits for all of its jobs before its call returns.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_COMM_COMMTHREAD_H
#define DLC_RUNTIME_COMM_COMMTHREAD_H

#include "dlc/runtime.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace dlc {

class CommThread {
public:
  using Job = std::function<dlc_status_t()>;

  CommThread();
  /// Runs the jobs still queued, then joins the thread.
  ~CommThread();
  CommThread(const CommThread &) = delete;
  CommThread &operator=(const CommThread &) = delete;

  /// Queues `job` behind the others and returns its ticket.
  uint64_t enqueue(Job job);

  /// What wait() reports of a finished job.
  struct Done {
    /// The job's status (owned by the caller now).
    dlc_status_t status = nullptr;
    /// How long the job ran on the thread.
    double seconds = 0;
  };
  /// Blocks until job `ticket` has run; each ticket is waited for once.
  Done wait(uint64_t ticket);

  /// Between jobs, while `progress` returns true (transfers still in
  /// flight), the thread calls it every kProgressInterval instead of
  /// sleeping until the next job: Open MPI moves a started send's data only
  /// inside MPI calls of the sending rank (it has no progress thread by
  /// default), so a send left alone while the rank computes would reach its
  /// receiver only at the rank's next transfer. Setting a new one asks for
  /// at least one more call. stopProgress() returns once no call of it runs
  /// or will run, so that the caller may use the communicator itself.
  void setProgress(std::function<bool()> progress);
  void stopProgress();
  static constexpr std::chrono::microseconds kProgressInterval{50};

private:
  void loop();

  std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable finished_;
  std::deque<std::pair<uint64_t, Job>> jobs_;
  std::map<uint64_t, Done> done_;
  uint64_t next_ = 0;
  bool stopping_ = false;
  std::function<bool()> progress_;
  bool progressing_ = false;
  /// Bumped by setProgress, so that a call that found nothing left does not
  /// switch off progress set while it ran.
  uint64_t progressSet_ = 0;
  bool inProgress_ = false;
  std::thread thread_;
};

} // namespace dlc

#endif // DLC_RUNTIME_COMM_COMMTHREAD_H
