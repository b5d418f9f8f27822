//===- LocalCommunicator.cpp - The communicator of a process alone --------===//
//
// Without a launcher a training binary is rank 0 of 1, and the same code
// that would all-reduce gradients over N ranks runs unchanged: with one
// rank every reduction is the identity (a mean divides by 1, exactly), a
// gather or scatter is a copy, and nothing ever waits, so no collective
// can time out.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Communicator.h"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace dlc {

namespace {

class LocalCommunicator final : public Communicator {
public:
  explicit LocalCommunicator(double timeout)
      : Communicator(/*rank=*/0, /*size=*/1, /*localRank=*/0, timeout) {}

  const char *kind() const override { return "local"; }

protected:
  dlc_status_t doAllReduce(void *, size_t, dlc_dtype_t,
                           dlc_reduce_op_t) override {
    return nullptr;
  }
  dlc_status_t doReduceScatter(const void *send, void *recv,
                               const size_t *counts, dlc_dtype_t dtype,
                               dlc_reduce_op_t) override {
    std::memcpy(recv, send, counts[0] * dlc_dtype_size(dtype));
    return nullptr;
  }
  dlc_status_t doAllGather(const void *send, void *recv, const size_t *counts,
                           dlc_dtype_t dtype) override {
    // In place, `send` is `recv` itself.
    if (send != recv)
      std::memcpy(recv, send, counts[0] * dlc_dtype_size(dtype));
    return nullptr;
  }
  dlc_status_t doBroadcast(void *, size_t, dlc_dtype_t, int) override {
    return nullptr;
  }
  dlc_status_t doBarrier() override { return nullptr; }
  dlc_status_t doSplit(int, int, int, int,
                       std::unique_ptr<Communicator> &out) override {
    out = std::make_unique<LocalCommunicator>(timeout());
    return nullptr;
  }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
  size_t maxCount() const override {
    return std::numeric_limits<size_t>::max() / sizeof(double);
  }
};

} // namespace

std::unique_ptr<Communicator> createLocalCommunicator(double timeout) {
  return std::make_unique<LocalCommunicator>(timeout);
}

} // namespace dlc
