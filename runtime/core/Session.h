//===- Session.h - A module opened on a device ------------------*- C++ -*-===//
//
// A session owns the module's globals and runs its functions; each device
// (cpu/CpuSession, cuda/CudaSession) keeps the buffers where its kernels
// read them, and this base class holds what is the same everywhere: the
// checks of a caller's tensors, and which buffer of each global is current.
// Globals that some function updates have two buffers (ping-pong): a call
// binds the arguments that read global g to its current buffer and the
// results that update g to the other one, and only once every step has
// succeeded are the two swapped. A failed call therefore leaves every
// global as it was, and no plan ever reads and writes one buffer in the
// same call.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_SESSION_H
#define DLC_RUNTIME_CORE_SESSION_H

#include "dlc/runtime.h"
#include "runtime/comm/Communicator.h"
#include "runtime/module/ModuleFile.h"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace dlc {

class Session {
public:
  virtual ~Session() = default;

  const ModuleFile &module() const { return *module_; }

  /// dlc_session_call: checks the caller's tensors, then runs the function
  /// and makes the globals it updated current. No `inputs` (NULL, 0) means
  /// the oldest inputs stage() handed over.
  dlc_status_t call(const std::string &function, const dlc_tensor_t *inputs,
                    size_t numInputs, const dlc_tensor_t *outputs,
                    size_t numOutputs);

  /// dlc_session_stage_inputs: checks the inputs of a later call and hands
  /// them to the device now, into one of kStagingSlots slots per function.
  dlc_status_t stage(const std::string &function, const dlc_tensor_t *inputs,
                     size_t numInputs);
  static constexpr int kStagingSlots = 2;

  /// Copies the current value of global `index` (its bytes, type in
  /// module()) out of or into the session.
  virtual dlc_status_t readGlobal(size_t index, void *data) const = 0;
  virtual dlc_status_t writeGlobal(size_t index, const void *data) = 0;

  /// writeGlobal, then the 16-bit copies the module keeps of global
  /// `index` (rounded from `data`). A copy itself is not written: it is
  /// DLC_INVALID_ARGUMENT, naming its source.
  dlc_status_t setGlobal(size_t index, const void *data);
  /// Rounds every 16-bit copy from the current value of its source (when
  /// the session opens, after a checkpoint is restored).
  dlc_status_t refreshCopies();

  /// The global named `name`, or a DLC_NOT_FOUND status naming it.
  dlc_status_t findGlobal(const std::string &name, size_t &index) const;

  /// The training step a checkpoint records: the value of the global
  /// "dlc.step" (or else of the global whose role is "step") if the module
  /// has one, else the number of calls so far that updated a global.
  int64_t step() const;
  /// After a checkpoint is restored without a "dlc.step" global, counting
  /// calls resumes from its step.
  void setCallCount(int64_t count) { callCount_ = count; }

  /// dlc_session_set_profiling and dlc_session_write_profile: while
  /// profiling is on, the device times each step it runs.
  void setProfiling(bool on) { profiling_ = on; }
  /// dlc_session_collective_wait: the seconds the last call waited for its
  /// collectives, where the device measures it.
  virtual dlc_status_t lastCollectiveWait(double &seconds) const;
  dlc_status_t writeProfile(const std::string &path) const;

  /// dlc_session_set_comm: the communicator of the job's ranks, borrowed
  /// (null detaches it). Its size must be the module's data-parallel times
  /// tensor-parallel ranks times pipeline stages; a function with
  /// collectives refuses to run without one. A tensor-parallel module's
  /// session splits it into the rank's replicas and its tensor group (a
  /// collective of all the ranks), and sets each split global to the rank's
  /// slice of its initial value; a pipelined module's into the rank's
  /// stage's replicas and its stage group.
  dlc_status_t setCommunicator(Communicator *comm);
  /// The data-parallel replicas' communicator (the one set, without tensor
  /// parallelism), or null: a sharded module's checkpoints are saved and
  /// restored by all ranks through it.
  Communicator *communicator() const { return communicator_; }
  /// The rank's tensor group's communicator, or null without tensor
  /// parallelism.
  Communicator *tensorCommunicator() const { return tensorCommunicator_; }
  /// In a module of pipeline stages: the communicator of the ranks that
  /// share this rank's data-parallel (and tensor) rank, one per stage,
  /// ranked by stage, and this rank's stage; null and -1 otherwise.
  Communicator *stageCommunicator() const { return stageCommunicator_; }
  int pipelineStage() const { return stage_; }
  /// This rank in the communicator set (the job), 0 without one: what
  /// messages about other ranks name.
  int jobRank() const { return jobRank_; }

  /// dlc_session_gather_stages: in a module of pipeline stages, the ranks
  /// of each stage update only the globals of their stage. This collective
  /// of every rank copies each such global from the first stage holding it
  /// to every other rank, so that each holds the whole model (for a
  /// checkpoint, an export, a function without stages). Nothing to do
  /// without stages or when no call has updated a global since the last.
  dlc_status_t gatherStages();
  /// DLC_FAILED_PRECONDITION when global `index` is another stage's and
  /// the stages have not been gathered since it changed (`what`: "reading",
  /// "saving").
  dlc_status_t checkGathered(size_t index, const char *what) const;

protected:
  explicit Session(std::shared_ptr<const ModuleFile> module);

  /// Called by setCommunicator with the checked communicator (or null)
  /// before the session keeps it; a device that runs collectives through
  /// a communicator of its own (CUDA's NCCL) opens it here. A failure
  /// leaves the session without a communicator.
  virtual dlc_status_t attachCommunicator(Communicator *) { return nullptr; }

  /// Copies the checked `inputs` of function `index` into staging slot
  /// `slot` (which no pending call uses), for a later execute().
  virtual dlc_status_t stageInputs(size_t index, int slot,
                                   const dlc_tensor_t *inputs) = 0;

  /// Runs function `index` and writes the caller's checked `outputs` (in
  /// the function's caller-facing order). Its inputs are the caller's
  /// `inputs`, with `slot` a free staging slot the device may copy them
  /// through, or, when `inputs` is NULL, those stageInputs() put in
  /// `slot`. Arguments reading global g use its buffer current(g), results
  /// updating it buffer 1 - current(g).
  virtual dlc_status_t execute(size_t index, const dlc_tensor_t *inputs,
                               int slot, const dlc_tensor_t *outputs) = 0;

  /// Whether global `index` is updated by some function (and so has two
  /// buffers), and which of them is current.
  bool hasTwoBuffers(size_t index) const { return updated_[index]; }
  int current(size_t index) const { return current_[index]; }

  bool profiling() const { return profiling_; }
  /// One step's accumulated time while profiling.
  struct ProfileLine {
    std::string function;
    std::string kind;
    std::string label;
    int64_t calls = 0;
    double seconds = 0;
    /// The bytes a kernel step's buffers hold, where the device reports
    /// them (its achieved bandwidth is bytes x calls / seconds), else 0.
    uint64_t bytes = 0;
    /// More JSON members of the step's line (`"name": value, ...`), or
    /// empty: a convolution's engine choice.
    std::string detail;
  };
  virtual std::vector<ProfileLine> profile() const = 0;

  std::shared_ptr<const ModuleFile> module_;

private:
  /// Writes the 16-bit global `copy` rounded from its source's `value`.
  dlc_status_t writeCopy(const ValueInfo &copy, const float *value);

  dlc_status_t findFunction(const std::string &function, size_t &index) const;
  /// Whether `f`'s plan has a collective or a transfer.
  static bool hasCollectives(const FunctionInfo &f);
  /// Whether some step of `f`'s plan runs on one pipeline stage only.
  static bool runsInStages(const FunctionInfo &f);
  /// Copies each of `f`'s `outputs` a pipeline stage computed (the loss)
  /// from that stage's rank to the others of this rank's stage group.
  dlc_status_t shareStageOutputs(const FunctionInfo &f,
                                 const dlc_tensor_t *outputs);
  /// Sets each tensor-parallel global to slice `tensorRank` of its initial
  /// value.
  dlc_status_t takeTensorSlices(int tensorRank);
  /// A staging slot of `function` that holds no pending inputs, or -1.
  int freeSlot(size_t function) const;
  dlc_status_t checkTensor(const FunctionInfo &f, const ValueInfo &value,
                           const char *what, size_t index,
                           const dlc_tensor_t &tensor) const;

  /// Per function, the slots holding staged inputs, oldest first.
  std::vector<std::deque<int>> staged_;
  std::vector<bool> updated_;
  std::vector<int> current_;
  int64_t callCount_ = 0;
  bool profiling_ = false;
  Communicator *communicator_ = nullptr;
  Communicator *tensorCommunicator_ = nullptr;
  Communicator *stageCommunicator_ = nullptr;
  int stage_ = -1;
  int jobRank_ = 0;
  /// Whether a call ran in stages and updated globals after the last
  /// gatherStages().
  bool stagesDiverged_ = false;
  /// The replicas', the tensor group's and the stage group's, split from
  /// the one set.
  std::unique_ptr<Communicator> ownedComms_[3];
};

} // namespace dlc

/// The object behind dlc_session_t.
struct dlc_session_s {
  std::unique_ptr<dlc::Session> session;
};

#endif // DLC_RUNTIME_CORE_SESSION_H
