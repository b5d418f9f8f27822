//===- Train.cpp - dlc-run --train: a training loop on the evaluator ------===//
//
// What the runtime's training loop does, on the reference evaluator: state
// (parameters, running statistics, optimizer state, step counter,
// hyperparameters, dropout seed) starts at the module's dlc.global initial
// values and is bound to train_step's arguments by name; each step's
// results replace the state of the same name. Batches are read from an .npz
// with one array per model input and label, samples on the first axis.
//
//===----------------------------------------------------------------------===//

#include "tools/dlc-run/Train.h"

#include "frontend/Importer.h"
#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"
#include "runtime/support/Float16.h"
#include "runtime/support/Npz.h"
#include "runtime/support/Shuffle.h"
#include "tools/common/Diagnostics.h"
#include "tools/common/TrainingOptions.h"
#include "tools/runner/Progress.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <unistd.h>

using namespace mlir;
namespace roles = mlir::dlc::roles;
using ::dlc::Tensor;

namespace {

/// One argument fed from the data file.
struct DataArgument {
  unsigned index;
  std::string name;
  RankedTensorType type;
  const Tensor *array = nullptr;
};

/// Rows `rows` of `array` (samples on the first axis) as one batch.
Tensor gatherRows(const Tensor &array, ArrayRef<int64_t> rows) {
  std::vector<int64_t> shape = array.shape();
  size_t rowBytes = array.byteSize() / static_cast<size_t>(shape[0]);
  shape[0] = static_cast<int64_t>(rows.size());
  Tensor batch(array.dtype(), shape);
  for (auto [i, row] : llvm::enumerate(rows))
    std::memcpy(batch.bytes() + i * rowBytes, array.bytes() + row * rowBytes,
                rowBytes);
  return batch;
}

/// A metric as a JSON number, with the digits that tell its type's values
/// apart (9 for float32 and narrower, 17 for float64).
std::string jsonNumber(const Tensor &metric) {
  double v = metric.getDouble(0);
  if (!std::isfinite(v))
    return "null"; // JSON has no NaN or infinity
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(metric.dtype() == ::dlc::DType::F64 ? "%.17g" : "%.9g", v);
  return s;
}

/// `s` as a JSON string: quoted, with quotes, backslashes and control
/// characters escaped (names come from the module's dlc.name attributes).
std::string jsonString(StringRef s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(llvm::json::fixUTF8(s));
  return out;
}

/// With a cross-entropy label (`dlc.num_classes`), checks every class index
/// of `array` up front: an index outside [0, classes) that is not the
/// ignore index would otherwise fail deep inside a step.
LogicalResult
checkClassIndices(DictionaryAttr attrs, const Tensor &array,
                  const std::string &file, StringRef name,
                  llvm::function_ref<int(const llvm::Twine &)> fail) {
  auto classes =
      attrs ? attrs.getAs<IntegerAttr>(roles::kNumClassesAttr) : IntegerAttr();
  auto ignore =
      attrs ? attrs.getAs<IntegerAttr>(roles::kIgnoreIndexAttr) : IntegerAttr();
  if (!classes || array.dtype() != ::dlc::DType::I64)
    return success();
  const int64_t *labels = array.data<int64_t>();
  for (int64_t i = 0; i < array.numElements(); ++i) {
    int64_t label = labels[i];
    if ((label >= 0 && label < classes.getInt()) ||
        (ignore && label == ignore.getInt()))
      continue;
    fail(file + ": array '" + name + "' holds class " + std::to_string(label) +
         " at element " + std::to_string(i) + ", outside [0, " +
         std::to_string(classes.getInt()) + ")" +
         (ignore
              ? " and not the ignore index " + std::to_string(ignore.getInt())
              : std::string()));
    return failure();
  }
  return success();
}

/// Whether `tensor` has `type`'s dtype and shape.
bool matchesType(const Tensor &tensor, RankedTensorType type) {
  FailureOr<::dlc::DType> dtype = mlir::dlc::dtypeOf(type.getElementType());
  return succeeded(dtype) && *dtype == tensor.dtype() &&
         tensor.shape() == std::vector<int64_t>(type.getShape().begin(),
                                                type.getShape().end());
}

/// `type` as Tensor::describe() writes it ("float32[2,3]").
std::string describeType(RankedTensorType type) {
  std::string s = ::dlc::dtypeName(*mlir::dlc::dtypeOf(type.getElementType()));
  s += "[";
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

/// Sets the one element of a float tensor to `value`.
LogicalResult setScalar(Tensor &tensor, double value) {
  if (tensor.numElements() != 1)
    return failure();
  switch (tensor.dtype()) {
  case ::dlc::DType::F64:
    tensor.data<double>()[0] = value;
    return success();
  case ::dlc::DType::F32:
    tensor.data<float>()[0] = static_cast<float>(value);
    return success();
  case ::dlc::DType::F16:
    tensor.data<::dlc::Half>()[0] =
        ::dlc::Half::fromFloat(static_cast<float>(value));
    return success();
  case ::dlc::DType::BF16:
    tensor.data<::dlc::BFloat16>()[0] =
        ::dlc::BFloat16::fromFloat(static_cast<float>(value));
    return success();
  default:
    return failure();
  }
}

/// Checks, before the first step, that train_step's loss is a float scalar
/// and its metrics numbers (a count such as skipped_steps is an integer),
/// and that each state result has the type of the state it replaces.
LogicalResult checkResults(func::FuncOp func,
                           const llvm::StringMap<Tensor> &state,
                           llvm::function_ref<int(const llvm::Twine &)> fail) {
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    DictionaryAttr attrs = func.getResultAttrDict(i);
    StringRef role = roles::roleOf(attrs), name = roles::nameOf(attrs);
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]);
    if (role == roles::kLoss || role == roles::kMetric) {
      bool number = type && (isa<FloatType>(type.getElementType()) ||
                             (role == roles::kMetric &&
                              type.getElementType().isSignlessInteger()));
      if (!number || !type.hasStaticShape() || type.getNumElements() != 1) {
        fail("train_step result '" + name + "' (" + role + ") is not a " +
             (role == roles::kLoss ? "one-element float tensor"
                                   : "one-element number tensor"));
        return failure();
      }
      continue;
    }
    if (!roles::isGlobalRole(role))
      continue;
    auto it = state.find(name);
    if (it == state.end() || !type || !type.hasStaticShape() ||
        !matchesType(it->second, type)) {
      fail("train_step result '" + name + "' (" + role +
           ") does not match a dlc.global of its type");
      return failure();
    }
  }
  return success();
}

} // namespace

namespace dlc::tools {

int runTrainingLoop(ModuleOp module, const TrainLoopOptions &options,
                    StringRef tool) {
  auto fail = [&](const llvm::Twine &message) {
    llvm::errs() << tool << ": error: " << escapeForOneLine(message.str())
                 << "\n";
    return 1;
  };
  auto func = module.lookupSymbol<func::FuncOp>("train_step");
  if (!func)
    return fail("the module has no train_step function (compile it with "
                "--train)");
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return fail("train_step has no one-block body to run");
  if (options.steps < 0)
    return fail("--steps must not be negative");
  FailureOr<mlir::dlc::Evaluator> evaluator =
      mlir::dlc::Evaluator::create(module);
  if (failed(evaluator))
    return 1;
  llvm::StringMap<Tensor> &state = evaluator->globals();
  // The dropout seed starts at --seed.
  if (auto it = state.find(mlir::dlc::kRngSeedGlobal); it != state.end()) {
    if (it->second.dtype() != ::dlc::DType::I64 ||
        it->second.numElements() != 1)
      return fail(std::string(mlir::dlc::kRngSeedGlobal) + " is " +
                  it->second.describe() + ", expected one int64");
    it->second.data<int64_t>()[0] = static_cast<int64_t>(options.seed);
  }
  // --lr and --weight-decay are run-time inputs: they override what the
  // module was compiled with.
  for (auto &[name, value] : hyperparametersGiven()) {
    std::string option = name == "dlc.lr" ? "--lr" : "--weight-decay";
    if (!(value >= 0 && std::isfinite(value)))
      return fail(option + " must be a finite number >= 0");
    auto it = state.find(name);
    if (it == state.end() || failed(setScalar(it->second, value)))
      return fail(option + ": the module has no float scalar " + name);
  }
  if (failed(checkResults(func, state, fail)))
    return 1;

  // Bind the arguments: state by name, data arrays by name.
  NamedTensors arrays;
  std::string error;
  if (!readNpz(options.dataFile, arrays, &error))
    return fail(error);
  std::vector<DataArgument> dataArgs;
  std::string available;
  for (auto &[name, array] : arrays)
    available +=
        (available.empty() ? "" : ", ") + name + " " + array.describe();
  int64_t samples = -1;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    DictionaryAttr attrs = func.getArgAttrDict(i);
    StringRef role = roles::roleOf(attrs), name = roles::nameOf(attrs);
    std::string what = "train_step argument #" + std::to_string(i) +
                       (name.empty() ? "" : " '" + name.str() + "'");
    auto type = dyn_cast<RankedTensorType>(func.getArgumentTypes()[i]);
    if (!type || !type.hasStaticShape() ||
        failed(mlir::dlc::dtypeOf(type.getElementType())))
      return fail(what +
                  " is not a statically shaped tensor of a dtype dlc stores");
    if (name.empty())
      return fail(what + " has no dlc.name");
    if (roles::isGlobalRole(role)) {
      auto it = state.find(name);
      if (it == state.end())
        return fail(what + " has no dlc.global");
      if (!matchesType(it->second, type))
        return fail(what + " is " + describeType(type) + " but its global is " +
                    it->second.describe());
      continue;
    }
    if (role != roles::kInput && role != roles::kLabel)
      return fail(what + " has role '" + role +
                  "', which is neither data (input, label) nor state");
    if (type.getRank() == 0)
      return fail(what + " is a scalar: data needs a first axis for the "
                         "samples of a batch");
    DataArgument arg{i, name.str(), type};
    auto it = llvm::find_if(arrays, [&](auto &a) { return a.first == name; });
    if (it == arrays.end())
      return fail(options.dataFile + ": has no array '" + name + "' for the " +
                  (role == roles::kLabel ? "label" : "model input") +
                  "; the arrays are: " + available);
    const Tensor &array = it->second;
    FailureOr<::dlc::DType> dtype = mlir::dlc::dtypeOf(type.getElementType());
    std::vector<int64_t> sampleShape(type.getShape().begin() + 1,
                                     type.getShape().end());
    if (array.rank() != type.getRank() ||
        array.dtype() != *dtype ||
        std::vector<int64_t>(array.shape().begin() + 1, array.shape().end()) !=
            sampleShape ||
        array.shape()[0] == 0) {
      std::string expected = std::string(::dlc::dtypeName(*dtype)) + "[N";
      for (int64_t d : sampleShape)
        expected += ", " + std::to_string(d);
      return fail(options.dataFile + ": array '" + name + "' is " +
                  array.describe() + ", expected " + expected +
                  "] (samples on the first axis, N >= 1)");
    }
    if (samples >= 0 && array.shape()[0] != samples)
      return fail(options.dataFile + ": array '" + name + "' has " +
                  std::to_string(array.shape()[0]) + " samples, others " +
                  std::to_string(samples));
    samples = array.shape()[0];
    if (failed(checkClassIndices(attrs, array, options.dataFile, name, fail)))
      return 1;
    arg.array = &array;
    dataArgs.push_back(arg);
  }
  if (dataArgs.empty())
    return fail("train_step takes no data");
  int64_t batch = dataArgs.front().type.getDimSize(0);
  for (const DataArgument &arg : dataArgs)
    if (arg.type.getDimSize(0) != batch)
      return fail("train_step's data arguments disagree on the batch: '" +
                  dataArgs.front().name + "' has " + std::to_string(batch) +
                  " samples, '" + arg.name + "' " +
                  std::to_string(arg.type.getDimSize(0)));
  if (samples < batch)
    return fail(options.dataFile + ": has " + std::to_string(samples) +
                " samples, fewer than one batch of " + std::to_string(batch));

  // The state is written after the last step: a folder it cannot be
  // written to is an error now, not after the training.
  if (!options.saveStateFile.empty()) {
    if (llvm::sys::fs::is_directory(options.saveStateFile))
      return fail(options.saveStateFile + ": is a directory");
    StringRef dir = llvm::sys::path::parent_path(options.saveStateFile);
    if (std::error_code ec = llvm::sys::fs::access(
            dir.empty() ? "." : dir, llvm::sys::fs::AccessMode::Write))
      return fail(options.saveStateFile +
                  ": cannot be written: " + ec.message());
  }
  std::unique_ptr<llvm::raw_fd_ostream> log;
  if (!options.logFile.empty()) {
    std::error_code ec;
    log = std::make_unique<llvm::raw_fd_ostream>(options.logFile, ec);
    if (ec)
      return fail(options.logFile + ": " + ec.message());
  }

  // Step k is batch k mod (n / B) of epoch k / (n / B): each epoch visits
  // its permutation (runtime/support/Shuffle.h) in whole batches and drops
  // the partial last one, as the runtime's data loader does, so compiled
  // and interpreted runs see the same batches.
  ::dlc::SampleOrder order(samples, options.shuffle, options.seed);
  int64_t batchesPerEpoch = samples / batch;
  // The runner's progress on stderr: the same lines as a compiled run's.
  // Redrawn in place only when the per-step lines on stdout do not share
  // its terminal.
  ::dlc::runner::Progress progress(
      stderr, ::isatty(STDERR_FILENO) && !::isatty(STDOUT_FILENO),
      /*firstStep=*/0, options.steps, batch);
  for (int64_t step = 0; step < options.steps; ++step) {
    const std::vector<int64_t> &permutation =
        order.permutation(step / batchesPerEpoch);
    int64_t first = (step % batchesPerEpoch) * batch;
    std::vector<int64_t> rows(permutation.begin() + first,
                              permutation.begin() + first + batch);
    SmallVector<Tensor> inputs(func.getNumArguments());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      DictionaryAttr attrs = func.getArgAttrDict(i);
      if (roles::isGlobalRole(roles::roleOf(attrs)))
        inputs[i] = state[roles::nameOf(attrs)];
    }
    for (const DataArgument &arg : dataArgs)
      inputs[arg.index] = gatherRows(*arg.array, rows);
    // An error in the data (an index out of range) is reported as one line
    // naming the step.
    std::string problem;
    FailureOr<SmallVector<Tensor>> results;
    {
      ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
        if (problem.empty() && d.getSeverity() == DiagnosticSeverity::Error) {
          std::string where = describeLocation(d.getLocation());
          problem = (where.empty() ? "" : where + ": ") + d.str();
        }
        return success();
      });
      results = evaluator->run(func, inputs);
    }
    if (failed(results)) {
      progress.interrupt();
      return fail("step " + std::to_string(step) + ": " + problem);
    }

    std::string line = "{\"step\": " + std::to_string(step);
    std::string text = "step " + std::to_string(step);
    double loss = std::nan("");
    for (auto [i, value] : llvm::enumerate(*results)) {
      DictionaryAttr attrs = func.getResultAttrDict(i);
      StringRef role = roles::roleOf(attrs), name = roles::nameOf(attrs);
      if (role == roles::kLoss || role == roles::kMetric) {
        if (role == roles::kLoss && std::isnan(loss))
          loss = value.getDouble(0);
        std::string number = jsonNumber(value);
        line += ", " + jsonString(name) + ": " + number;
        text += " " + escapeForOneLine(name) + " " + number;
      } else if (roles::isGlobalRole(role)) {
        state[name] = std::move(value);
      }
    }
    llvm::outs() << text << "\n";
    llvm::outs().flush();
    if (log) {
      *log << line << "}\n";
      log->flush();
    }
    progress.update(step + 1, loss);
  }
  progress.finish();

  if (!options.saveStateFile.empty()) {
    NamedTensors saved;
    for (auto &entry : state)
      saved.emplace_back(entry.getKey().str(),
                         entry.getValue().dtype() == ::dlc::DType::BF16
                             ? ::dlc::bfloat16AsBits(entry.getValue())
                             : entry.getValue());
    llvm::sort(saved, [](auto &a, auto &b) { return a.first < b.first; });
    if (!writeNpz(options.saveStateFile, saved, &error))
      return fail(error);
  }
  return 0;
}

} // namespace dlc::tools
