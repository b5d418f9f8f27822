//===- CudaSession.h - A module opened on a GPU -----------------*- C++ -*-===//
//
// Everything a module's plans touch lives in device memory from the
// device's caching allocator: the globals (two buffers for updated ones),
// the constants, each function's arena, its inputs (one buffer set per
// staging slot) and its outputs, and one library workspace. Addresses are
// therefore fixed for the session's life, except for which buffer of a
// global is current, so each function's whole plan is captured once into
// a CUDA graph per binding of its buffers (a few: which buffer of each
// global is current x which staging slot; GraphCache keeps at most eight)
// and replayed: one launch per step instead of hundreds of kernel launches.
//
// Two streams: inputs are copied from pinned host memory on a copy stream,
// and the step waits for that copy on the compute stream through an event,
// so inputs staged for the next call (dlc_session_stage_inputs) travel
// while the current call computes. Outputs come back through pinned memory
// at the end of the call, which then synchronizes.
//
// A data-parallel module's collectives (CollectiveStep.h) run on a third,
// communication stream over the device communicator (NCCL) that
// dlc_session_set_comm opens from the ranks' host communicator. A function
// with collectives is not captured: it runs step by step, and its call
// ends with the device communicator's bounded wait (a rank that never
// joins is an error naming the collective after the host communicator's
// timeout, not a hang).
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_CUDASESSION_H
#define DLC_RUNTIME_CUDA_CUDASESSION_H

#include "runtime/core/PlanStep.h"
#include "runtime/core/Session.h"
#include "runtime/cuda/Blas.h"
#include "runtime/cuda/CollectiveStep.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/DeviceCommunicator.h"
#include "runtime/cuda/DeviceResources.h"
#include "runtime/cuda/Dnn.h"
#include "runtime/cuda/GraphCache.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dlc::cuda {

class CudaSession final : public Session {
public:
  ~CudaSession() override;

  dlc_status_t readGlobal(size_t index, void *data) const override;
  dlc_status_t writeGlobal(size_t index, const void *data) override;

private:
  /// CudaDevice::createSession opens sessions (CudaSession.cpp).
  friend class CudaDevice;

  struct Step : PlanStep {
    /// KernelStep.
    CUfunction function = nullptr;
    int64_t iterations = 0;
    unsigned blocks = 0, threads = 0;
    /// MatmulStep (its bias is refs[3] when it has one) and ConvStep.
    std::unique_ptr<BlasMatmul> matmul;
    std::unique_ptr<DnnConv> conv;
    /// ConvStep: which of refs (x, w, y) it writes.
    size_t convOutput = 0;
    /// CopyStep: bytes; KernelStep: the bytes its buffers hold (for the
    /// achieved bandwidth a profile reports).
    uint64_t bytes = 0;
    /// AllReduceStep and ShardStep.
    std::unique_ptr<CollectiveStep> collective;
    /// Profiling: accumulated calls and milliseconds; for a collective, its
    /// milliseconds on the communication stream and those the compute
    /// stream waited for it.
    int64_t calls = 0;
    double milliseconds = 0;
    double collectiveMilliseconds = 0, exposedMilliseconds = 0;
  };
  /// One function's prepared plan and the buffers only it uses.
  struct Function {
    std::vector<Step> steps;
    DeviceBlock arena;
    /// The caller-facing inputs of each staging slot (one block holding
    /// them all at 256-byte-aligned offsets), their pinned host mirror,
    /// and the event marking their copy's end on the copy stream.
    std::vector<uint64_t> inputOffsets;
    uint64_t inputBytes = 0;
    std::array<DeviceBlock, kStagingSlots> inputs;
    std::array<PinnedBuffer, kStagingSlots> pinnedInputs;
    std::array<Event, kStagingSlots> inputsCopied;
    /// The caller-facing outputs, likewise (one set: a call synchronizes
    /// before returning).
    std::vector<uint64_t> outputOffsets;
    uint64_t outputBytes = 0;
    DeviceBlock outputs;
    PinnedBuffer pinnedOutputs;
    /// Captured graphs, by the bases they were captured with.
    GraphCache graphs;
    /// Whether the function ran once (the first call is not captured), and
    /// whether a capture failed: the plan then runs step by step.
    bool warm = false;
    bool captureFailed = false;
    /// Whether it has collectives (never captured), and those issued and
    /// not yet joined by the call being enqueued, oldest first.
    bool communicates = false;
    std::vector<size_t> inFlight;
  };

  explicit CudaSession(std::shared_ptr<const ModuleFile> module)
      : Session(std::move(module)) {}
  dlc_status_t prepare(const FunctionInfo &info, Function &function);
  /// Prepares what `step` (its PlanStep part filled in) runs for `fbStep`.
  dlc_status_t prepareStep(const fb::Step &fbStep, Step &step);
  dlc_status_t stageInputs(size_t index, int slot,
                           const dlc_tensor_t *inputs) override;
  dlc_status_t execute(size_t index, const dlc_tensor_t *inputs, int slot,
                       const dlc_tensor_t *outputs) override;
  dlc_status_t attachCommunicator(Communicator *comm) override;
  std::vector<ProfileLine> profile() const override;

  /// Enqueues every step of function `index` on the compute stream, bound
  /// to `bases`: its arguments', its results', then its arena's address.
  dlc_status_t enqueue(size_t index, const std::vector<uint64_t> &bases);
  dlc_status_t enqueueStep(Function &fn, size_t s, size_t numArguments,
                           const std::vector<uint64_t> &bases);
  /// Makes the compute stream wait for the collectives in flight that step
  /// `s` (the step count: all) must see complete.
  dlc_status_t joinDue(Function &fn, size_t s);
  /// Waits for the compute stream after a call: through the device
  /// communicator, bounded by its timeout, when `fn` has collectives.
  dlc_status_t synchronize(const Function &fn, const std::string &where);
  uint64_t resolve(const StepRef &ref, size_t numArguments,
                   const std::vector<uint64_t> &bases) const;
  /// Replays the function's graph for `bases`, capturing it first if it
  /// is new.
  dlc_status_t launch(size_t index, const std::vector<uint64_t> &bases);
  /// Enqueues step by step between timing events and adds their times to
  /// the profile.
  dlc_status_t enqueueProfiled(size_t index,
                               const std::vector<uint64_t> &bases);
  dlc_status_t check(CUresult result, const std::string &call) const {
    return device_->driver().check(result, call);
  }

  std::shared_ptr<CudaDevice> device_;
  /// Declared before the libraries' handles (cuDNN's holds the compute
  /// stream), so destroyed after them.
  Stream compute_, copy_, communication_;
  /// The ranks' device communicator, while a communicator is set and some
  /// function has collectives.
  std::unique_ptr<DeviceCommunicator> deviceComm_;
  /// The libraries, opened when a plan first needs them (a module without
  /// convolutions never needs cuDNN). Declared before the plans that
  /// reference them, so they are destroyed after.
  std::unique_ptr<Blas> blas_;
  std::unique_ptr<Dnn> dnn_;
  std::vector<std::array<DeviceBlock, 2>> globals_;
  std::vector<DeviceBlock> constants_;
  DeviceBlock workspace_;
  uint64_t workspaceBytes_ = 0;
  KernelModule kernels_;
  std::vector<Function> functions_;
  std::vector<Event> profileEvents_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_CUDASESSION_H
