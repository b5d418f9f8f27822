//===- BootstrapCommunicator.h - A host communicator for NCCL tests -*- C++
//-*-===//
//
// NCCL's bootstrap asks one thing of the host communicator: a broadcast of
// rank 0's unique id. The NCCL tests play one rank of a job with a host
// communicator whose broadcast the test defines and whose other
// collectives are never called (they fail if they are).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_TEST_BOOTSTRAPCOMMUNICATOR_H
#define DLC_RUNTIME_TEST_BOOTSTRAPCOMMUNICATOR_H

#include "runtime/comm/Communicator.h"
#include "runtime/core/Status.h"

#include <cstdint>
#include <cstdlib>

namespace dlc::test {

class BootstrapCommunicator : public Communicator {
public:
  BootstrapCommunicator(int rank, int size, double timeout)
      : Communicator(rank, size, /*localRank=*/rank, timeout) {}
  [[noreturn]] void abort(int code) override { std::_Exit(code); }

protected:
  dlc_status_t doAllReduce(void *, size_t, dlc_dtype_t,
                           dlc_reduce_op_t) override {
    return unused();
  }
  dlc_status_t doReduceScatter(const void *, void *, const size_t *,
                               dlc_dtype_t, dlc_reduce_op_t) override {
    return unused();
  }
  dlc_status_t doAllGather(const void *, void *, const size_t *,
                           dlc_dtype_t) override {
    return unused();
  }
  dlc_status_t doBarrier() override { return unused(); }
  dlc_status_t doSplit(int, int, int, int,
                       std::unique_ptr<Communicator> &) override {
    return unused();
  }
  size_t maxCount() const override { return SIZE_MAX; }

private:
  static dlc_status_t unused() {
    return makeStatus(DLC_INTERNAL, "not part of NCCL's bootstrap");
  }
};

} // namespace dlc::test

#endif // DLC_RUNTIME_TEST_BOOTSTRAPCOMMUNICATOR_H
