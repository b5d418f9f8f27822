//===- Training.cpp - The training loop over train_step -------------------===//
#include "tools/runner/Training.h"

#include "runtime/comm/RankLayout.h"
#include "runtime/support/DataLoader.h"
#include "runtime/support/Npz.h"
#include "runtime/support/Shuffle.h"
#include "tools/runner/Error.h"
#include "tools/runner/Evaluation.h"
#include "tools/runner/Json.h"
#include "tools/runner/MetricsLog.h"
#include "tools/runner/Progress.h"
#include "tools/runner/SeededInit.h"
#include "tools/runner/TensorBoard.h"
#include "tools/runner/Values.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace dlc::runner {
namespace {

// Checkpoint metadata the runner writes and reads back on --resume.
constexpr const char *kStepsKey = "runner.steps";
constexpr const char *kTargetKey = "runner.target_steps";
constexpr const char *kPositionKey = "runner.data_position";
constexpr const char *kSamplesKey = "runner.data_samples";
constexpr const char *kSeedKey = "runner.seed";
constexpr const char *kShuffleKey = "runner.shuffle";
constexpr const char *kEveryKey = "runner.checkpoint_every";

/// The dropout seed global: starts at --seed, as in dlc-run --train.
constexpr const char *kRngSeedGlobal = "dlc.rng_seed";

/// Where a run starts: fresh, or where a checkpoint left off.
struct RunState {
  bool resumed = false;
  int64_t stepsDone = 0;
  int64_t position = 0;
  uint64_t seed = 0;
  bool shuffle = true;
  /// The resumed run's sample count, target and checkpoint interval.
  int64_t samples = 0;
  int64_t target = -1;
  int64_t checkpointEvery = 0;
};

/// Whether `path` ends with `suffix`.
bool endsWith(const std::string &path, const std::string &suffix) {
  return path.size() >= suffix.size() &&
         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Whether --data names a token file rather than arrays: a .bin file, or
/// any file but an .npz or .npy with --seq-len.
bool isTokenFile(const Options &options) {
  const std::string &path = options.data;
  bool arrays = endsWith(path, ".npz") || endsWith(path, ".npy");
  if (arrays && (options.seqLen || !options.tokenDtype.empty()))
    throw Error(std::string(options.seqLen ? "--seq-len" : "--token-dtype") +
                " applies to token files; " + path + " holds arrays");
  return !arrays && (options.seqLen || endsWith(path, ".bin"));
}

/// The id width --token-dtype names (uint16 when left out).
DType tokenDtype(const Options &options) {
  if (options.tokenDtype.empty() || options.tokenDtype == "uint16")
    return DType::U16;
  if (options.tokenDtype == "uint32")
    return DType::U32;
  throw Error("--token-dtype must be uint16 or uint32, not '" +
              options.tokenDtype + "'");
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// Fails now, not after the training, when `path` cannot be created.
void checkWritable(const std::string &path, const std::string &option) {
  if (isDirectory(path))
    throw Error(option + " " + path + ": is a directory");
  std::string dir = directoryOf(path);
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(option + " " + path +
                ": cannot be written: " + std::strerror(errno));
}

class Trainer {
public:
  Trainer(Engine &engine, const Options &options, rt::Comm *comm)
      : engine_(engine), options_(options), comm_(comm),
        rank_(comm ? comm->rank() : 0), ranks_(comm ? comm->size() : 1),
        layout_{(comm ? comm->size() : 1) / engine.tensorParallelRanks() /
                    engine.pipelineStages(),
                engine.tensorParallelRanks(), engine.pipelineStages()},
        replica_(layout_.replica(rank_)), replicas_(layout_.replicas) {
    // The session's groups (RankLayout): the replicas of this rank's stage
    // and tensor rank share out the batch; its tensor group joins its
    // slices.
    if (comm && (layout_.tensorRanks > 1 || layout_.stages > 1))
      replicasComm_.emplace(comm->split(layout_.replicaColor(rank_), rank_));
    if (comm && layout_.tensorRanks > 1)
      tensorComm_.emplace(comm->split(layout_.tensorColor(rank_), rank_));
  }

  void run();

private:
  void bindArguments();
  void restoreOrStart();
  void openData();
  void chooseTargetAndCheckpoints();
  /// Checks the labels of the batch of step `step` and stages it.
  void checkLabels(const Batch &batch, int64_t step);
  void stage(const Batch &batch, int64_t step);
  /// Runs train_step on the oldest staged batch and logs it.
  void step();
  /// --rank-times: every rank's busy and idle milliseconds of a step that
  /// took `seconds` here, [busy, idle] per rank in rank order.
  std::vector<double> rankTimes(double seconds);
  void saveCheckpoint();
  void evaluate();
  /// --save-state: every global, by name, in one .npz written by rank 0,
  /// sharded ones gathered whole from every rank.
  void saveState();
  /// The whole value of shape `shape` of which every replica holds `shard`.
  Tensor gatherWhole(const Tensor &shard, const std::vector<int64_t> &shape);
  /// The whole value of which every rank of the tensor group holds `slice`
  /// along dimension `dim`, in `groups` blocks.
  Tensor joinTensorSlices(const Tensor &slice, int32_t dim, int32_t groups);
  /// The replicas' communicator: the job's without tensor parallelism.
  rt::Comm *replicasComm() { return replicasComm_ ? &*replicasComm_ : comm_; }
  /// Prints `line` to `out`, after ending a live progress line (rank 0
  /// alone speaks for a data-parallel job).
  void say(const std::string &line, std::FILE *out);
  /// Runs `body` on rank 0 alone (a checkpoint, an export), then tells
  /// every rank whether it succeeded, so that all fail together.
  void onRankZero(const std::string &what, const std::function<void()> &body);

  Engine &engine_;
  const Options &options_;
  /// A data-parallel module's ranks (null: one process). Every rank draws
  /// the same global batches and trains on its share of the rows; rank 0
  /// logs, saves and exports.
  rt::Comm *comm_;
  int rank_;
  int ranks_;
  /// Where this rank sits (RankLayout): the ranks of a replica (its tensor
  /// ranks, its stages) train on the same rows, so the batch is shared out
  /// among the replicas.
  RankLayout layout_;
  int replica_;
  int replicas_;
  std::optional<rt::Comm> replicasComm_;
  std::optional<rt::Comm> tensorComm_;
  rt::Signature signature_;

  /// The train_step inputs fed from the data file: all of them.
  std::vector<dlc_value_info_t> data_;
  /// The global batch the data is read in, and this rank's share of it
  /// (train_step's batch).
  int64_t batchSize_ = 0;
  int64_t rankBatch_ = 0;
  /// This rank's rows of each staged array: their shapes.
  std::vector<std::vector<int64_t>> rankShapes_;
  /// train_step's outputs; the loss and metrics are logged.
  std::vector<Tensor> outputs_;
  std::vector<size_t> logged_;
  int64_t lossIndex_ = -1;

  RunState state_;
  std::unique_ptr<DataLoader> loader_;
  int64_t target_ = 0;
  std::string checkpointDir_;
  int64_t checkpointEvery_ = 0;
  std::unique_ptr<Evaluation> evaluation_;
  std::unique_ptr<MetricsLog> log_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::unique_ptr<Progress> progress_;
  /// What a step trains on, for throughput: samples, or tokens (a token
  /// file's sequences).
  int64_t itemsPerStep_ = 0;
  std::string unit_ = "samples";
  /// When the last step (or a checkpoint) ended: a step's throughput is
  /// measured from there.
  Progress::Clock::time_point lastStepEnd_;
};

void Trainer::run() {
  if (!engine_.hasFunction("train_step"))
    throw Error(engine_.name() + ": has no train_step function (compile the "
                                 "model with dlc-compile --train)");
  signature_ = engine_.signature("train_step");
  bindArguments();
  // Sharded state is saved whole: its shape must be known before a
  // checkpoint is read or a step runs.
  if (!options_.saveState.empty())
    for (size_t i = 0, n = engine_.globals().size(); i < n; ++i)
      engine_.wholeShape(i);
  restoreOrStart();
  openData();
  chooseTargetAndCheckpoints();
  if (!options_.evalData.empty())
    evaluation_ = std::make_unique<Evaluation>(engine_, options_.evalData);
  if (!options_.exportPath.empty()) {
    if (!engine_.keepsOnnxModel())
      throw Error("--export: " + engine_.name() +
                  " keeps no ONNX model to write the trained parameters into");
    checkWritable(options_.exportPath, "--export");
  }
  if (!options_.saveState.empty())
    checkWritable(options_.saveState, "--save-state");
  if (!options_.log.empty() && rank_ == 0)
    log_ = std::make_unique<MetricsLog>(options_.log);
  if (!options_.tensorboard.empty() && rank_ == 0)
    tensorboard_ = std::make_unique<TensorBoardWriter>(options_.tensorboard);
  if (!options_.profile.empty()) {
    checkWritable(options_.profile, "--profile");
    engine_.setProfiling(true);
  }

  throwIfError(loader_->seek(state_.position), options_.data + ": ");
  if (state_.stepsDone > target_ && rank_ == 0)
    std::fprintf(stderr,
                 "%lld steps are done already, more than the %lld "
                 "asked for: no step to run\n",
                 static_cast<long long>(state_.stepsDone),
                 static_cast<long long>(target_));
  int64_t first = std::min(state_.stepsDone, target_);
  if (rank_ == 0)
    progress_ = std::make_unique<Progress>(
        stderr, ::isatty(STDERR_FILENO), first, target_, itemsPerStep_, unit_);
  lastStepEnd_ = Progress::Clock::now();
  // The batch of step k + 1 is staged before step k is called, so that on a
  // GPU its copy travels while step k computes. Before a checkpoint nothing
  // is staged ahead, so that the data position it records is exact.
  int64_t staged = 0;
  auto stageNext = [&] {
    const Batch *batch = nullptr;
    throwIfError(loader_->next(batch));
    stage(*batch, state_.stepsDone + staged);
    ++staged;
  };
  while (state_.stepsDone < target_) {
    if (!staged)
      stageNext();
    int64_t next = state_.stepsDone + 1;
    bool checkpointDue =
        checkpointEvery_ && next % checkpointEvery_ == 0 && next < target_;
    // A bad next batch is reported after the step before it has run, as
    // without staging ahead.
    std::optional<Error> nextFailed;
    if (next < target_ && !checkpointDue) {
      try {
        stageNext();
      } catch (const Error &e) {
        nextFailed = e;
      }
    }
    step();
    --staged;
    if (nextFailed)
      throw *nextFailed;
    if (checkpointDue) {
      Progress::Clock::time_point paused = Progress::Clock::now();
      saveCheckpoint();
      evaluate();
      if (progress_)
        progress_->exclude(Progress::Clock::now() - paused);
      lastStepEnd_ = Progress::Clock::now();
    }
  }
  if (progress_)
    progress_->finish();
  if (!checkpointDir_.empty() && state_.stepsDone > first)
    saveCheckpoint();
  evaluate();
  // Each rank's own plan timings, to a file of its own.
  if (!options_.profile.empty())
    engine_.writeProfile(ranks_ > 1 ? options_.profile + ".rank" +
                                          std::to_string(rank_)
                                    : options_.profile);
  if (!options_.exportPath.empty()) {
    engine_.gatherStages();
    // Split parameters are gathered by every rank, together.
    if (layout_.tensorRanks > 1)
      engine_.exportOnnx(options_.exportPath);
    else
      onRankZero("--export", [&] { engine_.exportOnnx(options_.exportPath); });
  }
  if (!options_.saveState.empty())
    saveState();
}

void Trainer::bindArguments() {
  for (size_t i = 0; i < signature_.inputs.size(); ++i) {
    const dlc_value_info_t &in = signature_.inputs[i];
    std::string role = in.role, what = "train_step input '" +
                                       std::string(in.name) + "' (" +
                                       describeType(in) + ")";
    if (role != "input" && role != "label")
      throw Error(what + " has role '" + role +
                  "'; the runner feeds only model inputs and labels");
    if (in.rank == 0)
      throw Error(what + " is a scalar: data needs a first axis for the "
                         "samples of a batch");
    if (data_.empty())
      rankBatch_ = in.shape[0];
    else if (in.shape[0] != rankBatch_)
      throw Error(what + " disagrees with '" + data_.front().name +
                  "' on the batch size (" + std::to_string(rankBatch_) + ")");
    data_.push_back(in);
    rankShapes_.push_back(shapeOf(in));
  }
  if (data_.empty())
    throw Error("train_step takes no data");
  batchSize_ = rankBatch_ * replicas_;
  for (size_t i = 0; i < signature_.outputs.size(); ++i) {
    const dlc_value_info_t &out = signature_.outputs[i];
    outputs_.push_back(makeTensor(out));
    std::string role = out.role;
    if (role != "loss" && role != "metric")
      continue;
    // The log's numbers: the loss is a float, a metric may count (an
    // integer, as skipped_steps).
    DType dtype = outputs_.back().dtype();
    bool number = isFloat(dtype) || (role == "metric" && dtype != DType::Bool);
    if (outputs_.back().numElements() != 1 || !number)
      throw Error("train_step output '" + std::string(out.name) + "' (" + role +
                  ") is " + describeType(out) + ", not a one-element " +
                  (role == "loss" ? "float tensor" : "number tensor"));
    if (role == "loss" && lossIndex_ < 0)
      lossIndex_ = static_cast<int64_t>(i);
    logged_.push_back(i);
  }
}

void Trainer::restoreOrStart() {
  if (options_.resume.empty() && !options_.initSeed &&
      !engine_.parametersEmbedded())
    throw Error(engine_.name() +
                " holds no initial parameters (it was compiled "
                "with --embed-parameters=false): start from a "
                "checkpoint with --resume (or from seeded "
                "random ones with --init-seed S)");
  if (options_.resume.empty()) {
    if (options_.initSeed)
      initializeParameters(engine_, *options_.initSeed,
                           layout_.tensorRank(rank_));
    state_.seed = options_.seed.value_or(0);
    state_.shuffle = !options_.noShuffle;
    dlc_value_info_t info;
    if (findGlobal(engine_, kRngSeedGlobal, info)) {
      Tensor seed = makeTensor(info);
      if (seed.dtype() != DType::I64 || seed.numElements() != 1)
        throw Error(std::string("the module's global '") + kRngSeedGlobal +
                    "' is " + describeType(info) + ", expected int64[]");
      seed.data<int64_t>()[0] = static_cast<int64_t>(state_.seed);
      engine_.setGlobal(kRngSeedGlobal, seed.bytes(), seed.byteSize());
    }
  } else {
    const std::string &from = options_.resume;
    Metadata metadata = engine_.loadCheckpoint(from);
    auto value = [&](const char *key) {
      auto it = metadata.find(key);
      if (it == metadata.end())
        throw Error("--resume " + from + ": the checkpoint has no '" + key +
                    "' (it was not written by a dlc training run)");
      return it->second;
    };
    state_.resumed = true;
    state_.stepsDone = value(kStepsKey);
    state_.position = value(kPositionKey);
    state_.seed = static_cast<uint64_t>(value(kSeedKey));
    state_.shuffle = value(kShuffleKey) != 0;
    state_.samples = value(kSamplesKey);
    state_.target = value(kTargetKey);
    state_.checkpointEvery = value(kEveryKey);
    if (state_.stepsDone < 0 || state_.position < 0 || state_.target < 0 ||
        state_.checkpointEvery < 0)
      throw Error("--resume " + from +
                  ": the checkpoint's run metadata is invalid");
    // The data order is part of the run: changing it would not resume it.
    if (options_.seed && *options_.seed != state_.seed)
      throw Error("--seed " + std::to_string(*options_.seed) +
                  " differs from the seed " + std::to_string(state_.seed) +
                  " of the run in " + from +
                  "; a resumed run keeps its data order (leave --seed out)");
    if (options_.noShuffle && state_.shuffle)
      throw Error("--no-shuffle: the run in " + from +
                  " shuffled its data; a resumed run keeps its data order");
  }
  // Run-time settings override the module's, or the checkpoint's, values.
  if (options_.lr)
    setScalarGlobal(engine_, "dlc.lr", *options_.lr, "--lr");
  if (options_.weightDecay)
    setScalarGlobal(engine_, "dlc.weight_decay", *options_.weightDecay,
                    "--weight-decay");
}

void Trainer::openData() {
  std::vector<ArraySpec> specs;
  for (const dlc_value_info_t &in : data_)
    specs.push_back({in.name, dtypeOf(in),
                     std::vector<int64_t>(in.shape + 1, in.shape + in.rank)});
  if (isTokenFile(options_)) {
    // One input of [T] token ids and its label, the next tokens, told
    // apart by their roles.
    bool roles = data_.size() == 2 &&
                 std::string(data_[0].role) != std::string(data_[1].role) &&
                 (std::string(data_[0].role) == "label" ||
                  std::string(data_[1].role) == "label");
    if (!roles || specs[0].sampleShape.size() != 1)
      throw Error(options_.data +
                  ": a token file feeds a model with one "
                  "input of token ids [B, T] and its label; "
                  "train_step takes " +
                  std::to_string(specs.size()) + " data arrays");
    size_t labelIndex = std::string(data_[0].role) == "label" ? 0 : 1;
    int64_t length = specs[0].sampleShape[0];
    if (options_.seqLen && *options_.seqLen != length)
      throw Error("--seq-len " + std::to_string(*options_.seqLen) +
                  " differs from the sequence length " +
                  std::to_string(length) + " the module was compiled for ('" +
                  specs[1 - labelIndex].name + "' [" +
                  std::to_string(rankBatch_) + ", " + std::to_string(length) +
                  "])");
    throwIfError(DataLoader::openTokens(
        options_.data, tokenDtype(options_), specs, labelIndex, batchSize_,
        state_.shuffle, state_.seed, /*prefetchDepth=*/2, loader_));
    itemsPerStep_ = batchSize_ * length;
    unit_ = "tokens";
  } else {
    itemsPerStep_ = batchSize_;
    throwIfError(DataLoader::open(options_.data, specs, batchSize_,
                                  state_.shuffle, state_.seed,
                                  /*prefetchDepth=*/2, loader_));
  }
  if (state_.resumed && loader_->numSamples() != state_.samples)
    throw Error(
        options_.data + ": has " + std::to_string(loader_->numSamples()) +
        " samples, but the run in " + options_.resume + " trained on " +
        std::to_string(state_.samples) + "; resuming needs the same data");
}

void Trainer::chooseTargetAndCheckpoints() {
  if (options_.steps && options_.epochs)
    throw Error("--steps and --epochs both say how long to train; give one");
  if (options_.steps) {
    target_ = *options_.steps;
  } else if (options_.epochs) {
    int64_t perEpoch = loader_->batchesPerEpoch();
    if (*options_.epochs > std::numeric_limits<int64_t>::max() / perEpoch)
      throw Error("--epochs " + std::to_string(*options_.epochs) +
                  " is more steps than can be counted");
    target_ = *options_.epochs * perEpoch;
  } else if (state_.resumed) {
    target_ = state_.target;
  } else {
    throw Error("training needs --steps N or --epochs E");
  }

  if (options_.checkpointEvery && options_.checkpointDir.empty() &&
      !(state_.resumed && isDirectory(options_.resume)))
    throw Error("--checkpoint-every needs --checkpoint-dir");
  // A resumed run saves as often as before unless told otherwise.
  checkpointDir_ = checkpointDirectory(options_);
  checkpointEvery_ = options_.checkpointEvery.value_or(
      state_.resumed && !checkpointDir_.empty() ? state_.checkpointEvery : 0);
}

void Trainer::checkLabels(const Batch &batch, int64_t step) {
  for (size_t a = 0; a < data_.size(); ++a) {
    const dlc_value_info_t &in = data_[a];
    if (in.num_classes <= 0)
      continue;
    const BatchArray &array = batch.arrays[a];
    int64_t elements = 1;
    for (int64_t d : array.shape)
      elements *= d;
    int64_t perSample = elements / batchSize_;
    for (int64_t e = 0; e < elements; ++e) {
      int64_t label = 0;
      if (!loadInteger(array.data, array.dtype, e, label))
        break;
      if ((label >= 0 && label < in.num_classes) || label == in.ignore_index)
        continue;
      // The sample's index in the file, as the loader chose it.
      SampleOrder order(loader_->numSamples(), state_.shuffle, state_.seed);
      int64_t perEpoch = loader_->batchesPerEpoch();
      int64_t sample = order.permutation(
          batch.position /
          perEpoch)[(batch.position % perEpoch) * batchSize_ + e / perSample];
      throw Error(
          options_.data + ": array '" + in.name + "' holds class " +
          std::to_string(label) + " at sample " + std::to_string(sample) +
          (perSample > 1 ? ", element " + std::to_string(e % perSample)
                         : std::string()) +
          ", outside [0, " + std::to_string(in.num_classes) +
          ") and not the ignore index " + std::to_string(in.ignore_index) +
          " (step " + std::to_string(step) + ")");
    }
  }
}

void Trainer::stage(const Batch &batch, int64_t step) {
  // Every rank checks the whole global batch, so that a bad label stops
  // all of them alike.
  checkLabels(batch, step);
  std::vector<dlc_tensor_t> inputs;
  for (size_t a = 0; a < batch.arrays.size(); ++a) {
    // This replica's rows: [replica * b, (replica + 1) * b) of the global
    // batch.
    dlc_tensor_t rows = view(batch.arrays[a]);
    rows.shape = rankShapes_[a].data();
    rows.data = static_cast<std::byte *>(rows.data) +
                batch.arrays[a].bytes / replicas_ * replica_;
    inputs.push_back(rows);
  }
  try {
    engine_.stage("train_step", inputs);
  } catch (const std::runtime_error &e) {
    throw Error("step " + std::to_string(step) + ": " + e.what());
  }
}

void Trainer::step() {
  std::vector<dlc_tensor_t> outputs;
  for (Tensor &t : outputs_)
    outputs.push_back(view(t));
  Progress::Clock::time_point started = Progress::Clock::now();
  try {
    engine_.callStaged("train_step", outputs);
  } catch (const std::runtime_error &e) {
    throw Error("step " + std::to_string(state_.stepsDone) + ": " + e.what());
  }
  // --rank-times: each rank's busy and idle milliseconds, in rank order.
  std::vector<double> times;
  if (options_.rankTimes)
    times = rankTimes(
        std::chrono::duration<double>(Progress::Clock::now() - started)
            .count());
  // The logged loss and metrics: each rank's, averaged over the ranks (as
  // their mean over the global batch, for the means over equal shares
  // that losses are).
  std::vector<double> values;
  for (size_t i : logged_)
    values.push_back(outputs_[i].getDouble(0));
  if (comm_) {
    try {
      comm_->allReduce(values.data(), values.size(), DLC_F64, DLC_REDUCE_MEAN);
    } catch (const std::runtime_error &e) {
      throw Error("step " + std::to_string(state_.stepsDone) +
                  ": averaging the logged values over the ranks: " + e.what());
    }
  }
  ++state_.stepsDone;
  if (rank_ != 0)
    return;
  std::string line = "{\"step\": " + std::to_string(state_.stepsDone - 1);
  for (size_t k = 0; k < logged_.size(); ++k)
    line += ", " + jsonString(signature_.outputs[logged_[k]].name) + ": " +
            jsonNumber(values[k], outputs_[logged_[k]].dtype() == DType::F64);
  if (!times.empty())
    for (auto [key, first] :
         {std::pair("busy_ms", 0), std::pair("idle_ms", 1)}) {
      line += std::string(", \"") + key + "\": [";
      for (size_t r = first; r < times.size(); r += 2)
        line += (r > 1 ? ", " : "") + jsonNumber(times[r], false);
      line += "]";
    }
  if (log_)
    log_->append(line + "}");
  if (tensorboard_) {
    Progress::Clock::time_point now = Progress::Clock::now();
    double seconds = std::chrono::duration<double>(now - lastStepEnd_).count();
    lastStepEnd_ = now;
    for (size_t k = 0; k < logged_.size(); ++k)
      tensorboard_->scalar(std::string("train/") +
                               signature_.outputs[logged_[k]].name,
                           state_.stepsDone - 1, values[k]);
    if (seconds > 0)
      tensorboard_->scalar("train/" + unit_ + "_per_second",
                           state_.stepsDone - 1,
                           static_cast<double>(itemsPerStep_) / seconds);
  }
  double loss = std::nan("");
  for (size_t k = 0; k < logged_.size(); ++k)
    if (static_cast<int64_t>(logged_[k]) == lossIndex_)
      loss = values[k];
  progress_->update(state_.stepsDone, loss);
}

std::vector<double> Trainer::rankTimes(double seconds) {
  std::optional<double> wait = engine_.collectiveWait();
  if (!wait)
    throw Error("--rank-times: " + engine_.name() +
                " does not measure its calls' waits for collectives (a "
                "CUDA module's run on a stream of their own)");
  double own[2] = {1e3 * (seconds - *wait), 1e3 * *wait};
  std::vector<double> all(2 * static_cast<size_t>(ranks_));
  if (!comm_) {
    std::copy(own, own + 2, all.begin());
    return all;
  }
  std::vector<size_t> counts(ranks_, 2);
  comm_->allGather(own, all.data(), counts.data(), DLC_F64);
  return all;
}

void Trainer::saveCheckpoint() {
  Metadata metadata = {{kStepsKey, state_.stepsDone},
                       {kTargetKey, target_},
                       {kPositionKey, loader_->position()},
                       {kSamplesKey, loader_->numSamples()},
                       {kSeedKey, static_cast<int64_t>(state_.seed)},
                       {kShuffleKey, state_.shuffle ? 1 : 0},
                       {kEveryKey, checkpointEvery_}};
  // The parameters and optimizer state are the same on every rank (each
  // stage's gathered from it first): rank 0 writes them once. Sharded
  // optimizer state (written by stage 0's replicas in a pipeline) and split
  // parameters are saved by every rank together, and a failure on any rank
  // fails them all.
  engine_.gatherStages();
  if (engine_.checkpointsCollective())
    engine_.saveCheckpoint(checkpointDir_, metadata);
  else
    onRankZero("the checkpoint in " + checkpointDir_,
               [&] { engine_.saveCheckpoint(checkpointDir_, metadata); });
  say("saved a checkpoint at step " + std::to_string(state_.stepsDone) +
          " in " + checkpointDir_,
      stderr);
}

void Trainer::evaluate() {
  if (!evaluation_)
    return;
  // The replicas share the batches out and sum their counts (float64:
  // exact).
  EvaluationResult result = evaluation_->run(engine_, replica_, replicas_);
  if (comm_) {
    double counts[2] = {static_cast<double>(result.samples),
                        static_cast<double>(result.correct)};
    try {
      replicasComm()->allReduce(counts, 2, DLC_F64, DLC_REDUCE_SUM);
    } catch (const std::runtime_error &e) {
      throw Error("eval " + evaluation_->path() + " at step " +
                  std::to_string(state_.stepsDone) +
                  ": summing the ranks' counts: " + e.what());
    }
    result.samples = static_cast<int64_t>(counts[0]);
    result.correct = static_cast<int64_t>(counts[1]);
  }
  if (rank_ != 0)
    return;
  std::string accuracy = jsonNumber(result.accuracy(), true);
  if (log_)
    log_->append("{\"eval\": " + jsonString(evaluation_->path()) +
                 ", \"step\": " + std::to_string(state_.stepsDone) +
                 ", \"accuracy\": " + accuracy +
                 ", \"samples\": " + std::to_string(result.samples) + "}");
  if (tensorboard_)
    tensorboard_->scalar("eval/accuracy", state_.stepsDone, result.accuracy());
  say("eval " + evaluation_->path() + " at step " +
          std::to_string(state_.stepsDone) + ": accuracy " + accuracy + " (" +
          std::to_string(result.correct) + " of " +
          std::to_string(result.samples) + " samples)",
      stdout);
}

void Trainer::saveState() {
  engine_.gatherStages();
  NamedTensors state;
  const std::vector<dlc_value_info_t> globals = engine_.globals();
  for (size_t i = 0; i < globals.size(); ++i) {
    const dlc_value_info_t &info = globals[i];
    std::optional<std::vector<int64_t>> whole = engine_.wholeShape(i);
    const int32_t split = engine_.tpSplit(i);
    // The other ranks only lend rank 0 their shards and slices.
    if (rank_ != 0 && !whole && split < 0)
      continue;
    Tensor t = makeTensor(info);
    engine_.getGlobal(info.name, t.bytes(), t.byteSize());
    if (whole)
      t = gatherWhole(t, *whole);
    if (split >= 0)
      t = joinTensorSlices(t, split, engine_.tpSplitGroups(i));
    if (rank_ != 0)
      continue;
    // NumPy has no bfloat16: its bits, as uint16, under the same name.
    state.emplace_back(info.name, t.dtype() == DType::BF16 ? bfloat16AsBits(t)
                                                           : std::move(t));
  }
  std::sort(state.begin(), state.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  onRankZero("--save-state", [&] {
    throwIfError(writeNpz(options_.saveState, state), "--save-state ");
  });
}

Tensor Trainer::gatherWhole(const Tensor &shard,
                            const std::vector<int64_t> &shape) {
  // Every rank's shard in rank order is the whole value, flattened and
  // padded with zeros to ranks x shard elements.
  std::vector<size_t> counts(replicas_, shard.numElements());
  Tensor all(shard.dtype(), {replicas_ * shard.numElements()});
  replicasComm()->allGather(shard.bytes(), all.bytes(), counts.data(),
                            static_cast<dlc_dtype_t>(shard.dtype()));
  Tensor whole(shard.dtype(), shape);
  std::memcpy(whole.bytes(), all.bytes(), whole.byteSize());
  return whole;
}

Tensor Trainer::joinTensorSlices(const Tensor &slice, int32_t dim,
                                 int32_t groups) {
  const int ranks = layout_.tensorRanks;
  std::vector<size_t> counts(ranks, slice.numElements());
  Tensor all(slice.dtype(), {ranks * slice.numElements()});
  tensorComm_->allGather(slice.bytes(), all.bytes(), counts.data(),
                         static_cast<dlc_dtype_t>(slice.dtype()));
  std::vector<Tensor> slices(ranks, Tensor(slice.dtype(), slice.shape()));
  for (int t = 0; t < ranks; ++t)
    std::memcpy(slices[t].bytes(), all.bytes() + t * slice.byteSize(),
                slice.byteSize());
  return joinSlices(slices, dim, groups);
}

void Trainer::onRankZero(const std::string &what,
                         const std::function<void()> &body) {
  if (!comm_) {
    body();
    return;
  }
  std::optional<Error> failed;
  if (rank_ == 0) {
    try {
      body();
    } catch (const std::runtime_error &e) {
      failed = Error(e.what());
    }
  }
  float failures = failed ? 1.0f : 0.0f;
  comm_->allReduce(&failures, 1, DLC_F32, DLC_REDUCE_SUM);
  if (failed)
    throw *failed;
  if (failures != 0)
    throw Error("rank 0 failed to write " + what);
}

void Trainer::say(const std::string &line, std::FILE *out) {
  if (rank_ != 0)
    return;
  if (progress_)
    progress_->interrupt();
  std::fprintf(out, "%s\n", line.c_str());
  std::fflush(out);
}

} // namespace

void runTraining(Engine &engine, const Options &options, rt::Comm *comm) {
  Trainer(engine, options, comm).run();
}

std::string checkpointDirectory(const Options &options) {
  if (!options.checkpointDir.empty() || options.resume.empty() ||
      !isDirectory(options.resume))
    return options.checkpointDir;
  return options.resume;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "."
         : slash == 0               ? "/"
                                    : path.substr(0, slash);
}

} // namespace dlc::runner
