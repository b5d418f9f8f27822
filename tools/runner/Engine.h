//===- Engine.h - What the runner's modes run on ----------------*- C++ -*-===//
//
// Training, evaluation and inference call a program's functions through
// this interface, so that one loop serves two engines: a runtime session of
// a compiled module (SessionEngine: dlc-run MODULE.dlcm, training binaries)
// and the reference evaluator on dlc IR (tools/dlc-run's EvaluatorEngine:
// dlc-run --interpret --train). An engine binds the program's globals
// itself, as the C API does: a signature lists only what a caller passes
// (model inputs, labels) and gets back (outputs, loss, metrics), and a call
// updates the globals its function writes.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_ENGINE_H
#define DLC_TOOLS_RUNNER_ENGINE_H

#include <dlc/runtime.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dlc::runner {

/// Integer metadata saved with a checkpoint (the data position, the seed).
using Metadata = std::map<std::string, int64_t>;

class Engine {
public:
  virtual ~Engine() = default;

  /// The program in messages: its file, or the training binary.
  virtual const std::string &name() const = 0;
  virtual bool hasFunction(const std::string &function) const = 0;
  /// `function`'s caller-facing inputs and outputs. The strings and shapes
  /// live as long as the engine.
  virtual rt::Signature signature(const std::string &function) const = 0;
  /// Every global, in the program's order.
  virtual std::vector<dlc_value_info_t> globals() const = 0;
  /// The shape of global `index`'s whole value when each rank of a
  /// data-parallel job holds its own shard of it (dlc-compile --zero 1; with
  /// --tp, the tensor rank's slice), else nullopt; throws where the program
  /// does not record it.
  virtual std::optional<std::vector<int64_t>> wholeShape(size_t) const {
    return std::nullopt;
  }
  /// The ranks of each tensor-parallel group (dlc-compile --tp), the
  /// dimension along which each of them holds a slice of global `index`
  /// (-1: whole), and the blocks along it each split so.
  virtual int32_t tensorParallelRanks() const { return 1; }
  virtual int32_t tpSplit(size_t) const { return -1; }
  virtual int32_t tpSplitGroups(size_t) const { return 1; }
  /// The pipeline stages (dlc-compile --pp), and the collective of every
  /// rank after which each holds every global's value, not only its
  /// stage's (before reading globals for a checkpoint or an export).
  virtual int32_t pipelineStages() const { return 1; }
  virtual void gatherStages() {}
  virtual void getGlobal(const std::string &name, void *data, size_t bytes) = 0;
  virtual void setGlobal(const std::string &name, const void *data,
                         size_t bytes) = 0;

  /// Runs `function`. Throws (rt::Error or runner::Error) naming the cause.
  virtual void call(const std::string &function,
                    const std::vector<dlc_tensor_t> &inputs,
                    const std::vector<dlc_tensor_t> &outputs) = 0;
  /// Hands the inputs of a later call over now (a GPU session copies them
  /// beside the computation in flight); callStaged() runs on the oldest.
  virtual void stage(const std::string &function,
                     const std::vector<dlc_tensor_t> &inputs) = 0;
  virtual void callStaged(const std::string &function,
                          const std::vector<dlc_tensor_t> &outputs) = 0;

  /// Checkpoints in runtime/support/Checkpoint.h's format, identified by
  /// the model's fingerprint (ir/Globals.h), whichever engine wrote them.
  virtual void saveCheckpoint(const std::string &directory,
                              const Metadata &metadata) = 0;
  virtual Metadata loadCheckpoint(const std::string &path) = 0;
  /// Whether every rank of a job saves a checkpoint together (a module
  /// sharding its optimizer state, dlc-compile --zero 1, each rank writing
  /// its part; or splitting parameters, --tp, the ranks gathering the
  /// slices and shards), rather than rank 0 alone.
  virtual bool checkpointsCollective() const { return false; }

  /// False for a module compiled with --embed-parameters=false: training
  /// starts from a checkpoint or seeded random parameters.
  virtual bool parametersEmbedded() const = 0;
  /// Whether exportOnnx() has a model to write the parameters into.
  virtual bool keepsOnnxModel() const = 0;
  virtual void exportOnnx(const std::string &path) = 0;
  /// Per-step timings of the compiled plan (--profile).
  virtual void setProfiling(bool enabled) = 0;
  virtual void writeProfile(const std::string &path) = 0;
  /// The seconds the last call waited for its collectives, or nullopt
  /// where the program does not measure it.
  virtual std::optional<double> collectiveWait() const { return std::nullopt; }
};

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_ENGINE_H
