//===- dlc-run.cpp - Runs dlc programs ------------------------------------===//
//
//   dlc-run --interpret MODEL.(onnx|onnxtxt|mlir) --inputs IN.npz
//           --outputs OUT.npz [--batch-size N] [--dim NAME=N]...
//   dlc-run --interpret MODEL --random-inputs SEED --outputs OUT.npz
//           [--function NAME]
//   dlc-run --interpret MODEL.mlir --function F --inputs IN.npz
//           --gradcheck COTANGENTS.npz --outputs OUT.npz
//   dlc-run --interpret --train MODEL.(onnx|onnxtxt|mlir) [training options]
//           --batch-size B --data DATA.npz (--steps K | --epochs E)
//           [the runner's training options: --log, --checkpoint-dir, ...]
//   dlc-run MODULE.dlcm [runner options]
//
// A compiled module (.dlcm) is run by the runtime through the runner
// (tools/runner: its own options, see `dlc-run MODULE.dlcm --help`).
//
// --train trains with the runner's loop (tools/runner/Training.h) on the
// reference evaluator (EvaluatorEngine.h): the same data loading, sample
// order, progress, metrics log, evaluation, checkpoints and errors as a
// compiled module's run, with the runner's options (RunOptions.h). An ONNX
// model is compiled first with the training options, the same words
// dlc-compile takes; an .mlir module is one dlc-compile --train made, and
// takes only --lr and --weight-decay, which override its compiled-in
// values.
//
// When running one function of an .mlir module, arguments bound to a
// dlc.global (roles param, state, optimizer_state, step, hyperparameter)
// that --inputs does not give take the global's current value.
//
// --gradcheck writes, instead of F's results, what tests of gradient rules
// compare: F's results, the gradient of sum_i <cotangent_i, result_i> with
// respect to each float64 argument k by autodiff ("grad<k>") and by finite
// differences ("fd_grad<k>"). COTANGENTS.npz holds one array per float
// result, keyed by result name.
//
// With --interpret the program runs on the reference evaluator. Arrays are
// keyed by the model's input and output names (the `dlc.name` argument and
// result attributes). Every mismatch between the file and the model (a
// missing array, a wrong dtype or shape) is one error line listing what was
// expected; the output file is written only after a successful run. A
// function whose arguments or results are not statically shaped tensors of a
// dtype dlc stores (.mlir input can declare anything) is refused with one
// error line naming the value, before any input is read or made.
//
//===----------------------------------------------------------------------===//

#include "frontend/Importer.h"
#include "ir/Dialect.h"
#include "ir/Globals.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"
#include "passes/Passes.h"
#include "runtime/support/Npz.h"
#include "tools/common/Diagnostics.h"
#include "tools/common/IrFile.h"
#include "tools/common/ShapeOptions.h"
#include "tools/common/TrainingOptions.h"
#include "tools/dlc-run/EvaluatorEngine.h"
#include "tools/dlc-run/GradCheck.h"
#include "tools/dlc-run/RunOptions.h"
#include "tools/dlc-run/SimulatedRanks.h"
#include "tools/runner/Runner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <cstdio>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::dlc;
namespace runner = tools::runner;
namespace cl = llvm::cl;

static cl::OptionCategory runOptions("dlc-run options");
static cl::opt<bool> interpret("interpret",
                               cl::desc("Run on the reference evaluator"),
                               cl::cat(runOptions));
static cl::opt<std::string> modelFile(cl::Positional,
                                      cl::desc("<model.onnx|model.mlir>"),
                                      cl::Required, cl::cat(runOptions));
static cl::opt<std::string> inputsFile("inputs",
                                       cl::desc("Input arrays (.npz)"),
                                       cl::value_desc("file"),
                                       cl::cat(runOptions));
static cl::opt<uint64_t> randomInputs(
    "random-inputs",
    cl::desc("Instead of --inputs, feed seeded random inputs: floats in "
             "[-1, 1), integers in [0, 4), bools (for before/after tests of "
             "passes)"),
    cl::value_desc("seed"), cl::cat(runOptions));
static cl::opt<std::string> outputsFile("outputs",
                                        cl::desc("Where to write the outputs "
                                                 "(.npz)"),
                                        cl::value_desc("file"),
                                        cl::cat(runOptions));
static cl::opt<std::string> functionName("function",
                                         cl::desc("Function to run"),
                                         cl::init("forward"),
                                         cl::cat(runOptions));

static cl::opt<std::string> gradcheckFile(
    "gradcheck",
    cl::desc("Write autodiff and finite-difference gradients of the "
             "function for these result cotangents (.npz) instead of its "
             "results"),
    cl::value_desc("file"), cl::cat(runOptions));

static cl::opt<bool> train("train",
                           cl::desc("Train: run train_step with the runner's "
                                    "loop (its options below)"),
                           cl::cat(runOptions));
static cl::OptionCategory
    trainRunOptions("dlc-run --interpret --train options (the runner's)");

static constexpr const char *kTool = "dlc-run";

/// Prints one error line. Names in `message` come from the user's files
/// (array names, dlc.name attributes) and are escaped like diagnostics.
static int fail(const llvm::Twine &message) {
  llvm::errs() << kTool << ": error: " << tools::escapeForOneLine(message.str())
               << "\n";
  return 1;
}

/// Prints the message of `status` (which it frees) as fail does when it is
/// an error; returns the exit code, 0 for none.
static int failIfError(dlc_status_t status) {
  StatusOwner owner(status);
  return status ? fail(dlc_status_message(status)) : 0;
}

/// The name of argument or result `i`: its dlc.name, else "argI"/"resultI".
static std::string valueName(DictionaryAttr attrs, const char *prefix,
                             unsigned i) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>(mlir::dlc::roles::kNameAttr))
      return name.str();
  return prefix + std::to_string(i);
}

/// The type of an argument or result `checkSignature` accepted, in
/// Tensor::describe()'s notation with spaces ("float32[2, 3]").
static std::string describeType(RankedTensorType type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << dtypeName(*mlir::dlc::dtypeOf(type.getElementType())) << "[";
  llvm::interleaveComma(type.getShape(), os);
  os << "]";
  return s;
}

/// True if `type` is a tensor dlc-run can hold in an .npz array: ranked, of
/// static shape, with an element type dlc has storage for.
static bool isRunnableType(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() &&
         succeeded(mlir::dlc::dtypeOf(ranked.getElementType()));
}

/// Checks that every argument and result of `func` is a runnable tensor, so
/// that the rest of the tool may cast to RankedTensorType and dereference
/// dtypeOf. Reports the first offending value and fails otherwise.
static LogicalResult checkSignature(func::FuncOp func) {
  auto check = [&](Type type, const char *kind, const std::string &name) {
    if (isRunnableType(type))
      return success();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    fail("function '" + functionName + "': " + kind + " '" + name +
         "' has type " + text +
         "; dlc-run runs tensors of static shape "
         "with element type i1, i8 to i64, ui8 to ui64, f16, bf16, f32 or "
         "f64");
    return failure();
  };
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (failed(check(type, "argument",
                     valueName(func.getArgAttrDict(i), "arg", i))))
      return failure();
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (failed(check(type, "result",
                     valueName(func.getResultAttrDict(i), "result", i))))
      return failure();
  return success();
}

static FailureOr<OwningOpRef<ModuleOp>> loadModel(MLIRContext &context) {
  if (tools::isDlcIrFile(modelFile)) {
    if (!tools::checkNoImportOptions(kTool, modelFile))
      return failure();
    return tools::parseDlcIrFile(&context, modelFile);
  }
  mlir::dlc::ImportOptions options;
  if (!tools::applyShapeOptions(kTool, options))
    return failure();
  if (train)
    return tools::compileForTraining(&context, modelFile, options);
  FailureOr<OwningOpRef<ModuleOp>> module =
      mlir::dlc::importOnnxFile(&context, modelFile, options);
  auto precision = tools::mixedPrecisionOptions();
  if (failed(module) || !precision)
    return module;
  PassManager pm(&context);
  pm.addPass(mlir::dlc::createDLCMixedPrecision(*precision));
  if (failed(pm.run(**module)))
    return failure();
  return module;
}

/// One expected array of an .npz file: its name and type.
struct ExpectedArray {
  std::string name;
  RankedTensorType type;
  /// The value when the file has no such array, if any.
  const Tensor *fallback = nullptr;
};

/// Reads `file` and matches its arrays to `expected` by name, reporting
/// every mismatch at once. `given` (when set) tells which came from the
/// file rather than a fallback.
static FailureOr<SmallVector<Tensor>>
readArrays(const std::string &file, ArrayRef<ExpectedArray> expectedArrays,
           StringRef what, SmallVectorImpl<bool> *given = nullptr) {
  NamedTensors arrays;
  if (failIfError(readNpz(file, arrays)))
    return failure();
  SmallVector<Tensor> inputs;
  std::string problems, expected;
  llvm::StringSet<> used;
  for (const auto &[name, type, fallback] : expectedArrays) {
    auto it = llvm::find_if(arrays, [&](auto &a) { return a.first == name; });
    if (given)
      given->push_back(it != arrays.end());
    if (it == arrays.end() && fallback) {
      inputs.push_back(*fallback);
      continue;
    }
    expected +=
        (expected.empty() ? "" : ", ") + name + ": " + describeType(type);
    if (it == arrays.end()) {
      problems += "; missing array '" + name + "'";
      continue;
    }
    used.insert(name);
    FailureOr<DType> dtype = mlir::dlc::dtypeOf(type.getElementType());
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    if (*dtype == DType::BF16 && it->second.dtype() == DType::U16)
      it->second = bfloat16FromBits(it->second);
    if (it->second.dtype() != *dtype || it->second.shape() != shape)
      problems += "; array '" + name + "' is " + it->second.describe();
    inputs.push_back(it->second);
  }
  for (auto &[name, tensor] : arrays)
    if (!used.count(name))
      problems += "; unexpected array '" + name + "'";
  if (!problems.empty()) {
    fail(file + ": does not match the model's " + what + " (" + expected + ")" +
         problems);
    return failure();
  }
  return inputs;
}

/// Reads --inputs (`what`, for messages), one array per argument of `func`
/// (which passed checkSignature) of its type in `types`; arguments bound to a
/// global (by their dlc.role) may be left out and take its value in `globals`,
/// but a parameter's 16-bit copy left out is the rounding of the parameter's
/// value, as in a session.
static FailureOr<SmallVector<Tensor>>
readInputs(func::FuncOp func, ArrayRef<RankedTensorType> types,
           const std::string &what, const mlir::dlc::GlobalValues &globals) {
  SmallVector<ExpectedArray> expected;
  for (auto [i, type] : llvm::enumerate(types)) {
    DictionaryAttr attrs = func.getArgAttrDict(i);
    std::string name = valueName(attrs, "arg", i);
    StringRef role = mlir::dlc::roles::roleOf(attrs);
    auto global = globals.find(name);
    bool bound =
        mlir::dlc::roles::isGlobalRole(role) && global != globals.end();
    expected.push_back({name, type, bound ? &global->second : nullptr});
  }
  SmallVector<bool> given;
  FailureOr<SmallVector<Tensor>> inputs =
      readArrays(inputsFile, expected, what, &given);
  if (failed(inputs))
    return failure();
  auto module = func->getParentOfType<ModuleOp>();
  for (auto [i, copy] : llvm::enumerate(expected)) {
    auto global = module.lookupSymbol<mlir::dlc::GlobalOp>(copy.name);
    auto source = global ? global->getAttrOfType<FlatSymbolRefAttr>(
                               mlir::dlc::roles::kCopyOfAttr)
                         : FlatSymbolRefAttr();
    if (given[i] || !source)
      continue;
    auto it = llvm::find_if(expected, [&](const ExpectedArray &a) {
      return a.name == source.getValue();
    });
    if (it == expected.end())
      continue;
    const Tensor &value = (*inputs)[it - expected.begin()];
    Tensor &rounded = (*inputs)[i];
    // dlc-optimizer makes only such copies; a module written by hand may
    // not.
    if (value.dtype() != DType::F32 ||
        (rounded.dtype() != DType::F16 && rounded.dtype() != DType::BF16) ||
        value.shape() != rounded.shape()) {
      fail("'" + copy.name + "' (" + rounded.describe() +
           ") is not a 16-bit copy of its " +
           mlir::dlc::roles::kCopyOfAttr.str() + " '" +
           source.getValue().str() + "' (" + value.describe() + ")");
      return failure();
    }
    narrowFromFloat(rounded.dtype(), value.data<float>(), rounded.bytes(),
                    value.numElements());
  }
  return inputs;
}

/// Reads --gradcheck's cotangents, one per float result of `func`.
static FailureOr<SmallVector<Tensor>> readCotangents(func::FuncOp func) {
  SmallVector<ExpectedArray> expected;
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (isa<FloatType>(cast<RankedTensorType>(type).getElementType()))
      expected.push_back({valueName(func.getResultAttrDict(i), "result", i),
                          cast<RankedTensorType>(type)});
  return readArrays(gradcheckFile, expected, "float results");
}

/// Seeded random values of `types` (a function's arguments, which passed
/// checkSignature).
static SmallVector<Tensor> makeRandomInputs(ArrayRef<RankedTensorType> types,
                                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 3);
  SmallVector<Tensor> inputs;
  for (RankedTensorType type : types) {
    DType dtype = *mlir::dlc::dtypeOf(type.getElementType());
    Tensor tensor(dtype, std::vector<int64_t>(type.getShape().begin(),
                                              type.getShape().end()));
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      switch (dtype) {
      case DType::F32:
        tensor.data<float>()[i] = real(rng);
        break;
      case DType::F64:
        tensor.data<double>()[i] = real(rng);
        break;
      case DType::F16:
        tensor.data<Half>()[i] = Half::fromFloat(real(rng));
        break;
      case DType::BF16:
        tensor.data<BFloat16>()[i] = BFloat16::fromFloat(real(rng));
        break;
      case DType::Bool:
        tensor.data<bool>()[i] = small(rng) % 2;
        break;
      default: {
        // Integers: the low bytes of a small value, in any width.
        int64_t v = small(rng);
        std::memcpy(tensor.bytes() + i * dtypeSize(dtype), &v,
                    dtypeSize(dtype));
      }
      }
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

int main(int argc, char **argv) {
  // A compiled module runs on the runtime, through the runner, which has
  // its own options: it gets the command line before LLVM parses it.
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-' && runner::looksLikeModule(argv[i]))
      return runner::main(argc, argv, /*embeddingFile=*/nullptr);
  llvm::InitLLVM init(argc, argv);
  mlir::registerMLIRContextCLOptions();
  tools::registerShapeOptions();
  tools::registerTrainingOptions();
  tools::registerRunOptions(trainRunOptions);
  if (!tools::parseCommandLine(argc, argv, "dlc program runner\n", kTool,
                               {&runOptions, &trainRunOptions,
                                &tools::shapeOptionCategory(),
                                &tools::trainingOptionCategory()}))
    return 1;

  if (!interpret)
    return fail("only --interpret is available: compiled modules come with "
                "dlc-compile");
  if (train) {
    for (cl::Option *given : {static_cast<cl::Option *>(&inputsFile),
                              static_cast<cl::Option *>(&outputsFile),
                              static_cast<cl::Option *>(&randomInputs),
                              static_cast<cl::Option *>(&functionName),
                              static_cast<cl::Option *>(&gradcheckFile)})
      if (given->getNumOccurrences())
        return fail("--" + given->ArgStr +
                    " runs one function; it does not go with --train");
    // --lr and --weight-decay are run-time inputs too (they override what an
    // .mlir module was compiled with), checked by the runner as for a
    // compiled module.
    std::vector<std::string> hyperparameters;
    for (auto &[name, value] : tools::hyperparametersGiven()) {
      char digits[32];
      std::snprintf(digits, sizeof(digits), "%.17g", value);
      hyperparameters.push_back(
          (name == "dlc.lr" ? "--lr=" : "--weight-decay=") +
          std::string(digits));
    }
    runner::Options options;
    std::string error;
    if (!tools::parseRunOptions(hyperparameters, options, error))
      return fail(error);
    if (options.data.empty())
      return fail("--train needs --data");
    if (tools::isDlcIrFile(modelFile)) {
      llvm::SmallVector<std::string> given =
          tools::compileOnlyTrainingOptionsGiven();
      if (!given.empty())
        return fail(given.front() + " applies when compiling an ONNX model; " +
                    modelFile +
                    " is compiled already (only --lr and "
                    "--weight-decay, run-time inputs, may change)");
    }
    if (!tools::checkTrainingOptions(kTool))
      return 1;
    MLIRContext context;
    tools::DiagnosticPrinter printer(context, kTool);
    FailureOr<OwningOpRef<ModuleOp>> module = loadModel(context);
    if (failed(module))
      return 1;
    // What --export writes into, as dlc-compile keeps it in a module (dlc
    // IR has no ONNX model: the runner refuses --export then).
    std::string onnxModel;
    if (!options.exportPath.empty() && !tools::isDlcIrFile(modelFile)) {
      FailureOr<std::string> model = mlir::dlc::readOnnxWithoutInitializers(
          &context, modelFile, mlir::dlc::globalNames(**module));
      if (failed(model))
        return 1;
      onnxModel = std::move(*model);
    }
    return tools::trainOnEvaluator(**module, modelFile, onnxModel, options,
                                   kTool);
  }
  if (std::vector<std::string> given = tools::runOptionsGiven(); !given.empty())
    return fail(given.front() + " applies to --train");
  if (inputsFile.empty() == !randomInputs.getNumOccurrences() ||
      outputsFile.empty())
    return fail("--outputs and one of --inputs or --random-inputs are "
                "required");
  if (!tools::checkTrainingOptions(kTool))
    return 1;
  MLIRContext context;
  tools::DiagnosticPrinter printer(context, kTool);
  FailureOr<OwningOpRef<ModuleOp>> module = loadModel(context);
  if (failed(module))
    return 1;
  auto func = (*module)->lookupSymbol<func::FuncOp>(functionName);
  if (!func)
    return fail("the model has no function '" + functionName + "'");
  if (failed(checkSignature(func)))
    return 1;

  FailureOr<mlir::dlc::Evaluator> evaluator =
      mlir::dlc::Evaluator::create(**module);
  if (failed(evaluator))
    return 1;
  // A partitioned module takes the global batch's inputs and whole
  // parameters, runs every rank on its share and gives the global results.
  const int64_t ranks = evaluator->ranks();
  const mlir::dlc::RankGrid &grid = evaluator->grid();
  if (failed(tools::checkShards(func, grid)))
    return 1;
  SmallVector<RankedTensorType> types = tools::globalArgumentTypes(func, grid);
  SmallVector<Tensor> inputs;
  if (randomInputs.getNumOccurrences()) {
    inputs = makeRandomInputs(types, randomInputs);
  } else {
    FailureOr<SmallVector<Tensor>> read = readInputs(
        func, types,
        ranks == 1 ? std::string("inputs")
                   : "inputs at the global batch of " + grid.describe(),
        tools::wholeGlobals(**module, *evaluator));
    if (failed(read))
      return 1;
    inputs = std::move(*read);
  }

  if (!gradcheckFile.empty()) {
    if (ranks > 1)
      return fail("--gradcheck checks one rank's function; this module is "
                  "partitioned for " +
                  grid.describe());
    FailureOr<SmallVector<Tensor>> cotangents = readCotangents(func);
    if (failed(cotangents))
      return 1;
    FailureOr<NamedTensors> checked =
        tools::checkGradients(func, inputs, *cotangents);
    if (failed(checked))
      return 1;
    return failIfError(writeNpz(outputsFile, *checked));
  }

  SmallVector<Tensor> results;
  if (ranks == 1) {
    FailureOr<SmallVector<Tensor>> run = evaluator->run(func, inputs);
    if (failed(run))
      return 1;
    results = std::move(*run);
  } else {
    SmallVector<SmallVector<Tensor>> shares =
        tools::splitInputs(func, inputs, grid);
    FailureOr<SmallVector<SmallVector<Tensor>>> run = evaluator->runRanks(
        func, SmallVector<ArrayRef<Tensor>>(shares.begin(), shares.end()));
    if (failed(run))
      return 1;
    results = tools::combineResults(func, *run, grid);
  }

  NamedTensors outputs;
  for (auto [i, value] : llvm::enumerate(results))
    outputs.emplace_back(valueName(func.getResultAttrDict(i), "result", i),
                         value.dtype() == DType::BF16 ? bfloat16AsBits(value)
                                                      : std::move(value));
  return failIfError(writeNpz(outputsFile, outputs));
}
