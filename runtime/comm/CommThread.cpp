//===- CommThread.cpp - Collectives beside the computation ----------------===//
#include "runtime/comm/CommThread.h"

#include "runtime/core/Status.h"

namespace dlc {

CommThread::CommThread() : thread_([this] { loop(); }) {}

CommThread::~CommThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_one();
  thread_.join();
  for (auto &[ticket, done] : done_)
    dlc_status_free(done.status);
}

uint64_t CommThread::enqueue(Job job) {
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ticket = next_++;
    jobs_.emplace_back(ticket, std::move(job));
  }
  queued_.notify_one();
  return ticket;
}

CommThread::Done CommThread::wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_.count(ticket) != 0; });
  auto it = done_.find(ticket);
  Done done = it->second;
  done_.erase(it);
  return done;
}

void CommThread::setProgress(std::function<bool()> progress) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    progress_ = std::move(progress);
    progressing_ = true;
    ++progressSet_;
  }
  queued_.notify_one();
}

void CommThread::stopProgress() {
  std::unique_lock<std::mutex> lock(mutex_);
  progress_ = nullptr;
  progressing_ = false;
  finished_.wait(lock, [&] { return !inProgress_; });
}

void CommThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    auto ready = [&] { return stopping_ || !jobs_.empty(); };
    queued_.wait(lock, [&] { return ready() || progressing_; });
    if (!ready()) {
      // Transfers in flight, no job: move them along, then wait a little.
      std::function<bool()> progress = progress_;
      const uint64_t set = progressSet_;
      inProgress_ = true;
      lock.unlock();
      bool more = progress();
      lock.lock();
      inProgress_ = false;
      finished_.notify_all();
      progressing_ = progress_ && (more || progressSet_ != set);
      if (progressing_)
        queued_.wait_for(lock, kProgressInterval, ready);
      continue;
    }
    if (jobs_.empty())
      return;
    auto [ticket, job] = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    auto start = std::chrono::steady_clock::now();
    dlc_status_t status = guardStatus("a collective", job);
    std::chrono::duration<double> ran =
        std::chrono::steady_clock::now() - start;
    lock.lock();
    done_[ticket] = Done{status, ran.count()};
    finished_.notify_all();
  }
}

} // namespace dlc
