//===- EvaluatorEngine.cpp - dlc IR on the reference evaluator ------------===//
#include "tools/dlc-run/EvaluatorEngine.h"

#include "ir/Dialect.h"
#include "ir/Globals.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"
#include "runtime/support/Checkpoint.h"
#include "runtime/support/OnnxExport.h"
#include "tools/common/Diagnostics.h"
#include "tools/runner/Engine.h"
#include "tools/runner/Error.h"
#include "tools/runner/Runner.h"
#include "tools/runner/Training.h"
#include "tools/runner/Values.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstring>
#include <deque>
#include <map>
#include <tuple>

using namespace mlir;
namespace roles = mlir::dlc::roles;

namespace mlir::dlc::tools {
namespace {

/// The runtime's C++ API, whose value descriptions the engine hands out.
namespace rt = ::dlc::rt;
using runner::Error;
using runner::throwIfError;

class EvaluatorEngine final : public runner::Engine {
public:
  EvaluatorEngine(ModuleOp module, std::string name, std::string onnxModel);

  const std::string &name() const override { return name_; }
  bool hasFunction(const std::string &function) const override {
    return static_cast<bool>(module_.lookupSymbol<func::FuncOp>(function));
  }
  rt::Signature signature(const std::string &function) const override {
    const Function &f = lookup(function);
    return {f.inputs, f.outputs};
  }
  std::vector<dlc_value_info_t> globals() const override { return globals_; }
  void getGlobal(const std::string &name, void *data, size_t bytes) override;
  void setGlobal(const std::string &name, const void *data,
                 size_t bytes) override;
  void call(const std::string &function,
            const std::vector<dlc_tensor_t> &inputs,
            const std::vector<dlc_tensor_t> &outputs) override;
  void stage(const std::string &function,
             const std::vector<dlc_tensor_t> &inputs) override;
  void callStaged(const std::string &function,
                  const std::vector<dlc_tensor_t> &outputs) override;
  void saveCheckpoint(const std::string &directory,
                      const runner::Metadata &metadata) override;
  runner::Metadata loadCheckpoint(const std::string &path) override;
  bool parametersEmbedded() const override { return true; }
  bool keepsOnnxModel() const override { return !onnxModel_.empty(); }
  void exportOnnx(const std::string &path) override;
  void setProfiling(bool) override { noPlan(); }
  void writeProfile(const std::string &) override { noPlan(); }

private:
  [[noreturn]] static void noPlan() {
    throw Error("--profile times a compiled plan; the reference evaluator "
                "runs none");
  }

  /// A function as the C API shows it: the values a caller passes and gets
  /// back, with where each goes among the function's arguments and results.
  struct Function {
    std::string name;
    func::FuncOp op;
    std::vector<dlc_value_info_t> inputs, outputs;
    std::vector<unsigned> inputArguments, outputResults;
  };

  /// `function`, checked on first use. Throws for a function the C API
  /// could not describe.
  const Function &lookup(const std::string &function) const;
  /// `type` as a value description whose strings and shape live in this
  /// engine; throws naming `what` when dlc cannot store it.
  dlc_value_info_t describe(const std::string &what, StringRef name,
                            StringRef role, Type type) const;
  Tensor &global(const std::string &name, size_t bytes);
  /// The step a checkpoint is named by: the "step" global's value, or the
  /// number of calls that updated state, as the runtime counts.
  int64_t step();
  /// Copies of `inputs`, checked against `f`'s.
  std::vector<Tensor> copyInputs(const Function &f,
                                 const std::vector<dlc_tensor_t> &inputs);
  void run(const Function &f, std::vector<Tensor> inputs,
           const std::vector<dlc_tensor_t> &outputs);

  /// Mutable: looking a symbol up is not const in MLIR.
  mutable ModuleOp module_;
  std::string name_;
  mlir::dlc::Evaluator evaluator_;
  std::vector<dlc_value_info_t> globals_;
  std::string fingerprint_;
  /// Per global (as globals_), the index of the float32 global it is the
  /// 16-bit copy of (role weight_copy, dlc.copy_of), or -1.
  std::vector<int> copyOf_;
  /// The ONNX model trained, without the initializers that are globals
  /// (empty for dlc IR or when nothing is exported), as a compiled module
  /// keeps it.
  std::string onnxModel_;
  int64_t calls_ = 0;
  mutable std::map<std::string, Function> functions_;
  /// What the value descriptions point to.
  mutable std::deque<std::string> strings_;
  mutable std::deque<std::vector<int64_t>> shapes_;
  /// Per function, the inputs stage() handed over, oldest first.
  std::map<std::string, std::deque<std::vector<Tensor>>> staged_;
};

/// Runs `body`; when it fails, throws its first error diagnostic as one
/// line naming where (an uninitialized global, an index out of range).
void throwOnFailure(MLIRContext *context,
                    llvm::function_ref<LogicalResult()> body) {
  std::string problem;
  LogicalResult result = failure();
  {
    ScopedDiagnosticHandler capture(context, [&](Diagnostic &d) {
      if (problem.empty() && d.getSeverity() == DiagnosticSeverity::Error) {
        std::string where = describeLocation(d.getLocation());
        problem = (where.empty() ? "" : where + ": ") + d.str();
      }
      return success();
    });
    result = body();
  }
  if (failed(result))
    throw Error(problem.empty() ? "the evaluator failed" : problem);
}

mlir::dlc::Evaluator createEvaluator(ModuleOp module) {
  FailureOr<mlir::dlc::Evaluator> evaluator = failure();
  throwOnFailure(module.getContext(), [&] {
    evaluator = mlir::dlc::Evaluator::create(module);
    return LogicalResult(evaluator);
  });
  return std::move(*evaluator);
}

EvaluatorEngine::EvaluatorEngine(ModuleOp module, std::string name,
                                 std::string onnxModel)
    : module_(module), name_(std::move(name)),
      evaluator_(createEvaluator(module)),
      fingerprint_(mlir::dlc::globalsFingerprint(module)),
      onnxModel_(std::move(onnxModel)) {
  llvm::StringMap<std::string> roleOf = mlir::dlc::globalRoles(module);
  for (mlir::dlc::GlobalOp op : module.getOps<mlir::dlc::GlobalOp>()) {
    StringRef globalName = op.getSymName();
    dlc_value_info_t info = describe("global @" + globalName.str(), globalName,
                                     roleOf[globalName], op.getType());
    info.global = static_cast<int32_t>(globals_.size());
    globals_.push_back(info);
  }
  for (mlir::dlc::GlobalOp op : module.getOps<mlir::dlc::GlobalOp>()) {
    auto source = op->getAttrOfType<FlatSymbolRefAttr>(roles::kCopyOfAttr);
    auto isSource = [&](const dlc_value_info_t &g) {
      return source && source.getValue() == g.name;
    };
    auto it = llvm::find_if(globals_, isSource);
    copyOf_.push_back(it == globals_.end() ? -1 : it - globals_.begin());
  }
}

dlc_value_info_t EvaluatorEngine::describe(const std::string &what,
                                           StringRef name, StringRef role,
                                           Type type) const {
  auto ranked = dyn_cast<RankedTensorType>(type);
  FailureOr<DType> dtype = ranked ? mlir::dlc::dtypeOf(ranked.getElementType())
                                  : FailureOr<DType>(failure());
  if (!ranked || !ranked.hasStaticShape() || failed(dtype))
    throw Error(what + " is not a statically shaped tensor of a dtype dlc "
                       "stores");
  if (name.empty())
    throw Error(what + " has no dlc.name");
  dlc_value_info_t info{};
  info.name = strings_.emplace_back(name.str()).c_str();
  info.role = strings_.emplace_back(role.str()).c_str();
  info.dtype = static_cast<dlc_dtype_t>(*dtype);
  info.rank = static_cast<int32_t>(ranked.getRank());
  info.shape =
      shapes_.emplace_back(ranked.getShape().begin(), ranked.getShape().end())
          .data();
  info.global = -1;
  info.ignore_index = -100;
  return info;
}

const EvaluatorEngine::Function &
EvaluatorEngine::lookup(const std::string &function) const {
  if (auto it = functions_.find(function); it != functions_.end())
    return it->second;
  auto op = module_.lookupSymbol<func::FuncOp>(function);
  if (!op || op.isExternal())
    throw Error(name_ + ": has no " + function + " function with a body");
  Function f{function, op, {}, {}, {}, {}};
  auto globalIndex = [&](StringRef name) -> int32_t {
    for (const dlc_value_info_t &g : globals_)
      if (name == g.name)
        return g.global;
    return -1;
  };
  auto bindGlobal = [&](const std::string &what, const dlc_value_info_t &info) {
    int32_t g = globalIndex(info.name);
    if (g < 0)
      throw Error(what + " has no dlc.global");
    const dlc_value_info_t &global = globals_[g];
    if (global.dtype != info.dtype ||
        runner::shapeOf(global) != runner::shapeOf(info))
      throw Error(what + " is " + runner::describeType(info) +
                  " but its global is " + runner::describeType(global));
  };
  for (unsigned i = 0; i < op.getNumArguments(); ++i) {
    DictionaryAttr attrs = op.getArgAttrDict(i);
    StringRef role = roles::roleOf(attrs), name = roles::nameOf(attrs);
    std::string what = function + " argument #" + std::to_string(i) +
                       (name.empty() ? "" : " '" + name.str() + "'");
    dlc_value_info_t info =
        describe(what, name, role, op.getArgumentTypes()[i]);
    if (roles::isGlobalRole(role)) {
      bindGlobal(what, info);
      continue;
    }
    if (role != roles::kInput && role != roles::kLabel)
      throw Error(what + " has role '" + role.str() +
                  "', which is neither data (input, label) nor state");
    if (auto classes = attrs.getAs<IntegerAttr>(roles::kNumClassesAttr))
      info.num_classes = classes.getInt();
    if (auto ignore = attrs.getAs<IntegerAttr>(roles::kIgnoreIndexAttr))
      info.ignore_index = ignore.getInt();
    f.inputs.push_back(info);
    f.inputArguments.push_back(i);
  }
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    DictionaryAttr attrs = op.getResultAttrDict(i);
    StringRef role = roles::roleOf(attrs), name = roles::nameOf(attrs);
    std::string what = function + " result #" + std::to_string(i) +
                       (name.empty() ? "" : " '" + name.str() + "'");
    dlc_value_info_t info = describe(what, name, role, op.getResultTypes()[i]);
    if (roles::isGlobalRole(role)) {
      bindGlobal(what, info);
      continue;
    }
    f.outputs.push_back(info);
    f.outputResults.push_back(i);
  }
  return functions_.emplace(function, std::move(f)).first->second;
}

Tensor &EvaluatorEngine::global(const std::string &name, size_t bytes) {
  auto it = evaluator_.globals().find(name);
  if (it == evaluator_.globals().end())
    throw Error(name_ + ": has no global '" + name + "'");
  if (it->second.byteSize() != bytes)
    throw Error("global '" + name + "' is " + it->second.describe() + ", " +
                std::to_string(it->second.byteSize()) + " bytes, not " +
                std::to_string(bytes));
  return it->second;
}

void EvaluatorEngine::getGlobal(const std::string &name, void *data,
                                size_t bytes) {
  if (bytes)
    std::memcpy(data, global(name, bytes).bytes(), bytes);
}

void EvaluatorEngine::setGlobal(const std::string &name, const void *data,
                                size_t bytes) {
  // As a runtime session does (Session::setGlobal): a parameter's 16-bit
  // copies follow it, and a copy is not written on its own.
  auto isNamed = [&](const dlc_value_info_t &g) { return name == g.name; };
  int index = llvm::find_if(globals_, isNamed) - globals_.begin();
  if (index < static_cast<int>(globals_.size()) && copyOf_[index] >= 0)
    throw Error("global '" + name + "' is the " +
                dtypeName(runner::dtypeOf(globals_[index])) + " copy of '" +
                globals_[copyOf_[index]].name + "': set that one");
  if (bytes)
    std::memcpy(global(name, bytes).bytes(), data, bytes);
  for (size_t i = 0; i < globals_.size(); ++i)
    if (copyOf_[i] == index) {
      Tensor &copy = evaluator_.globals()[globals_[i].name];
      narrowFromFloat(copy.dtype(), static_cast<const float *>(data),
                      copy.bytes(), static_cast<size_t>(copy.numElements()));
    }
}

/// Checks a caller's `tensor` against `info`, what `function` takes or
/// gives as its `kind` ("input", "output").
void checkTensor(const dlc_tensor_t &tensor, const dlc_value_info_t &info,
                 const std::string &function, const char *kind) {
  std::vector<int64_t> shape(tensor.shape, tensor.shape + tensor.rank);
  if (tensor.dtype != info.dtype || shape != runner::shapeOf(info))
    throw Error(function + " " + kind + " '" + info.name + "' is " +
                runner::describeType(info) + ", given " +
                describeType(static_cast<DType>(tensor.dtype), shape));
}

std::vector<Tensor>
EvaluatorEngine::copyInputs(const Function &f,
                            const std::vector<dlc_tensor_t> &inputs) {
  const std::string &function = f.name;
  if (inputs.size() != f.inputs.size())
    throw Error(function + " takes " + std::to_string(f.inputs.size()) +
                " inputs, given " + std::to_string(inputs.size()));
  std::vector<Tensor> copies;
  for (auto [tensor, info] : llvm::zip_equal(inputs, f.inputs)) {
    checkTensor(tensor, info, function, "input");
    Tensor &copy =
        copies.emplace_back(runner::dtypeOf(info), runner::shapeOf(info));
    if (copy.byteSize())
      std::memcpy(copy.bytes(), tensor.data, copy.byteSize());
  }
  return copies;
}

void EvaluatorEngine::call(const std::string &function,
                           const std::vector<dlc_tensor_t> &inputs,
                           const std::vector<dlc_tensor_t> &outputs) {
  const Function &f = lookup(function);
  run(f, copyInputs(f, inputs), outputs);
}

void EvaluatorEngine::stage(const std::string &function,
                            const std::vector<dlc_tensor_t> &inputs) {
  staged_[function].push_back(copyInputs(lookup(function), inputs));
}

void EvaluatorEngine::callStaged(const std::string &function,
                                 const std::vector<dlc_tensor_t> &outputs) {
  auto it = staged_.find(function);
  if (it == staged_.end() || it->second.empty())
    throw Error(function + ": no inputs were staged");
  std::vector<Tensor> inputs = std::move(it->second.front());
  it->second.pop_front();
  run(lookup(function), std::move(inputs), outputs);
}

void EvaluatorEngine::run(const Function &f, std::vector<Tensor> inputs,
                          const std::vector<dlc_tensor_t> &outputs) {
  func::FuncOp op = f.op;
  const std::string &function = f.name;
  if (outputs.size() != f.outputs.size())
    throw Error(function + " has " + std::to_string(f.outputs.size()) +
                " outputs, given " + std::to_string(outputs.size()));
  for (auto [tensor, info] : llvm::zip_equal(outputs, f.outputs))
    checkTensor(tensor, info, function, "output");
  mlir::dlc::GlobalValues &state = evaluator_.globals();
  SmallVector<Tensor> arguments(op.getNumArguments());
  for (unsigned i = 0; i < op.getNumArguments(); ++i) {
    DictionaryAttr attrs = op.getArgAttrDict(i);
    if (roles::isGlobalRole(roles::roleOf(attrs)))
      arguments[i] = state[roles::nameOf(attrs)];
  }
  for (auto [k, argument] : llvm::enumerate(f.inputArguments))
    arguments[argument] = std::move(inputs[k]);
  FailureOr<SmallVector<Tensor>> results = failure();
  throwOnFailure(module_.getContext(), [&] {
    results = evaluator_.run(op, arguments);
    return LogicalResult(results);
  });
  bool updated = false;
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    DictionaryAttr attrs = op.getResultAttrDict(i);
    if (roles::isGlobalRole(roles::roleOf(attrs))) {
      state[roles::nameOf(attrs)] = std::move((*results)[i]);
      updated = true;
    }
  }
  for (auto [k, result] : llvm::enumerate(f.outputResults)) {
    const Tensor &value = (*results)[result];
    if (value.byteSize())
      std::memcpy(outputs[k].data, value.bytes(), value.byteSize());
  }
  calls_ += updated;
}

int64_t EvaluatorEngine::step() {
  // As the runtime's Session::step: "dlc.step", else the first global of
  // role "step", else the count of calls.
  auto named = llvm::find_if(
      globals_, [](auto &g) { return std::strcmp(g.name, "dlc.step") == 0; });
  if (named == globals_.end())
    named = llvm::find_if(
        globals_, [](auto &g) { return std::strcmp(g.role, "step") == 0; });
  if (named == globals_.end())
    return calls_;
  const Tensor &value = evaluator_.globals()[named->name];
  if (value.numElements() != 1)
    return calls_;
  return isFloat(value.dtype()) ? static_cast<int64_t>(value.getDouble(0))
                                : value.getInt(0);
}

void EvaluatorEngine::saveCheckpoint(const std::string &directory,
                                     const runner::Metadata &metadata) {
  CheckpointContents c;
  for (const dlc_value_info_t &g : globals_)
    c.tensors.emplace_back(g.name, evaluator_.globals()[g.name]);
  c.metadata = metadata;
  c.fingerprint = fingerprint_;
  c.step = step();
  throwIfError(writeCheckpoint(directory, c, /*keep=*/0));
}

void EvaluatorEngine::exportOnnx(const std::string &path) {
  NamedTensors initializers;
  for (const dlc_value_info_t &g : globals_)
    if (isExportedRole(g.role))
      initializers.emplace_back(g.name, evaluator_.globals()[g.name]);
  std::string bytes;
  throwIfError(appendOnnxInitializers(onnxModel_, initializers, bytes),
               name_ + ": cannot export its ONNX model: ");
  throwIfError(writeFileAtomically(path, bytes));
}

runner::Metadata EvaluatorEngine::loadCheckpoint(const std::string &path) {
  CheckpointContents c;
  throwIfError(readCheckpoint(path, c));
  std::vector<CheckpointSlot> slots;
  for (const dlc_value_info_t &g : globals_)
    slots.push_back({g.name, runner::dtypeOf(g), runner::shapeOf(g)});
  std::vector<const Tensor *> values;
  throwIfError(matchCheckpoint(c, path, name_, fingerprint_, slots, values));
  for (auto [g, value] : llvm::zip_equal(globals_, values))
    evaluator_.globals()[g.name] = *value;
  calls_ = c.step;
  return c.metadata;
}

} // namespace

int trainOnEvaluator(ModuleOp module, const std::string &name,
                     const std::string &onnxModel,
                     const runner::Options &options, const std::string &tool) {
  return runner::reportFailures(tool, [&] {
    if (options.commTimeout)
      throw runner::Error("--comm-timeout applies to a compiled module run "
                          "by mpirun; --interpret trains one process");
    for (auto [attr, kind, option] :
         {std::tuple(roles::kDataParallelAttr, "data", "--dp"),
          std::tuple(roles::kTensorParallelAttr, "tensor", "--tp")})
      if (auto ranks = module->getAttrOfType<IntegerAttr>(attr))
        throw runner::Error(name + ": partitioned for " +
                            std::to_string(ranks.getInt()) + " " + kind +
                            "-parallel ranks, and --interpret --train "
                            "trains one process: compile it (dlc-compile " +
                            option +
                            " N) and run it with mpirun -np N, or simulate "
                            "the ranks of one call with --function");
    if (auto stages =
            module->getAttrOfType<IntegerAttr>(roles::kPipelineStagesAttr))
      throw runner::Error(name + ": partitioned into " +
                          std::to_string(stages.getInt()) +
                          " pipeline stages, and --interpret --train trains "
                          "one process: simulate the stages of one call "
                          "with --function");
    EvaluatorEngine engine(module, name, onnxModel);
    runner::runTraining(engine, options, /*comm=*/nullptr);
  });
}

} // namespace mlir::dlc::tools
