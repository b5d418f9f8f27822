//===- TrainingOptions.cpp - The training options dlc-compile and dlc-run share

#include "tools/common/TrainingOptions.h"

#include "ir/Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

struct Options {
  cl::OptionCategory category{"Training options"};
  cl::opt<std::string> loss{
      "loss",
      cl::desc("cross_entropy, mse, l1, bce_with_logits, or model "
               "(the output is the loss)"),
      cl::init("cross_entropy"), cl::cat(category)};
  cl::opt<std::string> lossOutput{
      "loss-output",
      cl::desc("The model output the loss is computed from "
               "(default: the only output)"),
      cl::value_desc("name"), cl::cat(category)};
  cl::opt<std::string> labelInput{
      "label-input", cl::desc("The name of the label input (default labels)"),
      cl::init("labels"), cl::value_desc("name"), cl::cat(category)};
  cl::opt<int64_t> ignoreIndex{
      "ignore-index",
      cl::desc("cross_entropy: label value to ignore (default -100)"),
      cl::init(-100), cl::cat(category)};
  cl::opt<double> labelSmoothing{
      "label-smoothing", cl::desc("cross_entropy: label smoothing in [0, 1]"),
      cl::init(0.0), cl::cat(category)};
  cl::opt<std::string> augment{
      "augment",
      cl::desc("Random augmentation of image inputs [N, C, H, W] in each "
               "training step: comma-separated hflip, vflip, crop:P, "
               "rotate:D, normalize:MEAN/STD (dlc-augment)"),
      cl::value_desc("list"), cl::cat(category)};
  cl::opt<std::string> optimizer{"optimizer", cl::desc("sgd, adam or adamw"),
                                 cl::init("sgd"), cl::cat(category)};
  cl::opt<double> lr{"lr", cl::desc("Learning rate (default 1e-3)"),
                     cl::init(1e-3), cl::cat(category)};
  cl::opt<double> momentum{"momentum", cl::desc("sgd: momentum"), cl::init(0.0),
                           cl::cat(category)};
  cl::opt<double> dampening{"dampening", cl::desc("sgd: dampening"),
                            cl::init(0.0), cl::cat(category)};
  cl::opt<bool> nesterov{"nesterov", cl::desc("sgd: Nesterov momentum"),
                         cl::cat(category)};
  cl::opt<double> weightDecay{
      "weight-decay",
      cl::desc("Weight decay (default 0; 0.01 for adamw, decoupled)"),
      cl::init(-1.0), cl::cat(category)};
  cl::list<double> betas{"betas",
                         cl::desc("adam, adamw: B1,B2 (default 0.9,0.999)"),
                         cl::CommaSeparated, cl::cat(category)};
  cl::opt<double> eps{"eps", cl::desc("adam, adamw: epsilon (default 1e-8)"),
                      cl::init(1e-8), cl::cat(category)};
  cl::opt<double> clipGradNorm{
      "clip-grad-norm",
      cl::desc("Clip the gradients' global 2-norm to this (default off)"),
      cl::init(0.0), cl::cat(category)};
  cl::opt<std::string> schedule{
      "lr-schedule", cl::desc("constant, linear or cosine (after warmup)"),
      cl::init("constant"), cl::cat(category)};
  cl::opt<int64_t> warmupSteps{"warmup-steps",
                               cl::desc("Steps of linear warmup from 0"),
                               cl::init(0), cl::cat(category)};
  cl::opt<int64_t> totalSteps{
      "total-steps",
      cl::desc("linear, cosine: the step at which the rate reaches 0"),
      cl::init(0), cl::cat(category)};
  cl::opt<std::string> precision{
      "precision",
      cl::desc("fp32 (default); tf32: --target cuda's float32 matmuls and "
               "convolutions on TF32 tensor cores; bf16 or fp16: mixed "
               "precision (dlc-mixed-precision: matmuls and convolutions "
               "in the low type, float32 master weights)"),
      cl::init("fp32"), cl::cat(category)};
  cl::opt<std::string> lossScaling{
      "loss-scaling",
      cl::desc("dynamic: GradScaler's dynamic loss scaling (the default with "
               "--precision fp16); none (the default otherwise)"),
      cl::cat(category)};
  cl::opt<double> lossScaleInit{
      "loss-scale-init", cl::desc("The first loss scale (default 65536)"),
      cl::init(65536.0), cl::cat(category)};
  cl::opt<double> lossScaleGrowthFactor{
      "loss-scale-growth-factor",
      cl::desc("The scale's factor after --loss-scale-growth-interval clean "
               "steps (default 2)"),
      cl::init(2.0), cl::cat(category)};
  cl::opt<double> lossScaleBackoffFactor{
      "loss-scale-backoff-factor",
      cl::desc("The scale's factor after a step with an inf or NaN gradient, "
               "which is skipped (default 0.5)"),
      cl::init(0.5), cl::cat(category)};
  cl::opt<int64_t> lossScaleGrowthInterval{
      "loss-scale-growth-interval",
      cl::desc("Clean steps in a row before the scale grows (default 2000)"),
      cl::init(2000), cl::cat(category)};
  cl::opt<std::string> freeze{
      "freeze",
      cl::desc("Keep the parameters whose whole name matches this "
               "regular expression fixed"),
      cl::value_desc("regex"), cl::cat(category)};
};

Options &options() {
  static Options instance;
  return instance;
}

} // namespace

namespace dlc::tools {

void registerTrainingOptions() { (void)options(); }

const cl::OptionCategory &trainingOptionCategory() {
  return options().category;
}

mlir::dlc::TrainingPipelineOptions trainingPipelineOptions() {
  Options &o = options();
  mlir::dlc::TrainingPipelineOptions result;
  result.augment.transforms = o.augment;
  result.loss.loss = o.loss;
  result.loss.output = o.lossOutput;
  result.loss.label = o.labelInput;
  result.loss.ignoreIndex = o.ignoreIndex;
  result.loss.labelSmoothing = o.labelSmoothing;
  result.autodiff.freeze = o.freeze;
  result.optimizer.optimizer = o.optimizer;
  result.optimizer.lr = o.lr;
  result.optimizer.momentum = o.momentum;
  result.optimizer.dampening = o.dampening;
  result.optimizer.nesterov = o.nesterov;
  result.optimizer.weightDecay = o.weightDecay;
  result.optimizer.betas.assign(o.betas.begin(), o.betas.end());
  result.optimizer.eps = o.eps;
  result.optimizer.clipGradNorm = o.clipGradNorm;
  result.optimizer.schedule = o.schedule;
  result.optimizer.warmupSteps = o.warmupSteps;
  result.optimizer.totalSteps = o.totalSteps;
  result.mixedPrecision = mixedPrecisionOptions();
  result.autodiff.lossScale = dynamicLossScaling();
  result.optimizer.initScale = o.lossScaleInit;
  result.optimizer.growthFactor = o.lossScaleGrowthFactor;
  result.optimizer.backoffFactor = o.lossScaleBackoffFactor;
  result.optimizer.growthInterval = o.lossScaleGrowthInterval;
  return result;
}

bool dynamicLossScaling() {
  Options &o = options();
  return o.lossScaling.empty() ? o.precision == "fp16"
                               : o.lossScaling == "dynamic";
}

std::optional<mlir::dlc::DLCMixedPrecisionOptions> mixedPrecisionOptions() {
  Options &o = options();
  if (o.precision != "bf16" && o.precision != "fp16")
    return std::nullopt;
  mlir::dlc::DLCMixedPrecisionOptions result;
  result.precision = o.precision;
  return result;
}

bool tf32Given() { return options().precision == "tf32"; }

bool precisionGiven() { return options().precision.getNumOccurrences() > 0; }

bool checkPrecision(llvm::StringRef tool) {
  const std::string &precision = options().precision;
  if (precision == "fp32" || precision == "tf32" || precision == "bf16" ||
      precision == "fp16")
    return true;
  llvm::errs() << tool << ": error: --precision must be fp32, tf32, bf16 or "
               << "fp16, not '" << precision << "'\n";
  return false;
}

bool checkTrainingOptions(llvm::StringRef tool) {
  Options &o = options();
  auto fail = [&](const llvm::Twine &message) {
    llvm::errs() << tool << ": error: " << message << "\n";
    return false;
  };
  if (!checkPrecision(tool))
    return false;
  if (o.weightDecay.getNumOccurrences() && !(o.weightDecay >= 0))
    return fail("--weight-decay must be a number >= 0");
  // An option the chosen loss, optimizer or schedule does not read is a
  // mistake worth reporting, not something to ignore silently.
  auto given = [](cl::Option &option) { return option.getNumOccurrences(); };
  bool sgd = o.optimizer == "sgd";
  if (o.loss != "cross_entropy")
    for (cl::Option *option : {static_cast<cl::Option *>(&o.ignoreIndex),
                               static_cast<cl::Option *>(&o.labelSmoothing)})
      if (given(*option))
        return fail("--" + option->ArgStr + " applies to --loss cross_entropy");
  if (o.loss == "model" && given(o.labelInput))
    return fail("--label-input does not apply to --loss model (no label)");
  if (!sgd)
    for (cl::Option *option : {static_cast<cl::Option *>(&o.momentum),
                               static_cast<cl::Option *>(&o.dampening),
                               static_cast<cl::Option *>(&o.nesterov)})
      if (given(*option))
        return fail("--" + option->ArgStr + " applies to --optimizer sgd");
  if (sgd && (o.betas.getNumOccurrences() || given(o.eps)))
    return fail(llvm::Twine(o.betas.getNumOccurrences() ? "--betas" : "--eps") +
                " applies to --optimizer adam and adamw");
  if (o.schedule == "constant" && given(o.totalSteps))
    return fail("--total-steps applies to --lr-schedule linear and cosine");
  if (given(o.lossScaling) && o.lossScaling != "dynamic" &&
      o.lossScaling != "none")
    return fail("--loss-scaling must be dynamic or none, not '" +
                o.lossScaling + "'");
  if (!dynamicLossScaling())
    for (cl::Option *option :
         {static_cast<cl::Option *>(&o.lossScaleInit),
          static_cast<cl::Option *>(&o.lossScaleGrowthFactor),
          static_cast<cl::Option *>(&o.lossScaleBackoffFactor),
          static_cast<cl::Option *>(&o.lossScaleGrowthInterval)})
      if (given(*option))
        return fail("--" + option->ArgStr +
                    " applies to dynamic loss scaling (--precision fp16 or "
                    "--loss-scaling dynamic)");
  // GradScaler's own checks, and a scale that is a number.
  float scale = static_cast<float>(o.lossScaleInit);
  if (!(std::isnormal(scale) && scale > 0 && std::isfinite(1.0f / scale)))
    return fail("--loss-scale-init must be a float32 number > 0 whose "
                "reciprocal is finite");
  if (!(o.lossScaleGrowthFactor > 1 && std::isfinite(o.lossScaleGrowthFactor)))
    return fail("--loss-scale-growth-factor must be a finite number > 1");
  if (!(o.lossScaleBackoffFactor > 0 && o.lossScaleBackoffFactor < 1))
    return fail("--loss-scale-backoff-factor must be in (0, 1)");
  if (o.lossScaleGrowthInterval < 1)
    return fail("--loss-scale-growth-interval must be >= 1");
  return true;
}

llvm::SmallVector<std::string> compileOnlyTrainingOptionsGiven() {
  Options &o = options();
  llvm::SmallVector<std::string> given;
  // (cl::list overloads operator&, hence addressof.)
  cl::Option *compileOnly[] = {&o.loss,
                               &o.lossOutput,
                               &o.labelInput,
                               &o.ignoreIndex,
                               &o.labelSmoothing,
                               &o.augment,
                               &o.optimizer,
                               &o.momentum,
                               &o.dampening,
                               &o.nesterov,
                               std::addressof(o.betas),
                               &o.eps,
                               &o.clipGradNorm,
                               &o.schedule,
                               &o.warmupSteps,
                               &o.totalSteps,
                               &o.lossScaling,
                               &o.lossScaleInit,
                               &o.lossScaleGrowthFactor,
                               &o.lossScaleBackoffFactor,
                               &o.lossScaleGrowthInterval,
                               &o.freeze};
  for (cl::Option *option : compileOnly)
    if (option->getNumOccurrences())
      given.push_back(("--" + option->ArgStr).str());
  return given;
}

llvm::SmallVector<std::pair<std::string, double>> hyperparametersGiven() {
  Options &o = options();
  llvm::SmallVector<std::pair<std::string, double>> given;
  if (o.lr.getNumOccurrences())
    given.push_back({"dlc.lr", o.lr});
  if (o.weightDecay.getNumOccurrences())
    given.push_back({"dlc.weight_decay", o.weightDecay});
  return given;
}

FailureOr<OwningOpRef<ModuleOp>>
importForTraining(MLIRContext *context, llvm::StringRef path,
                  const mlir::dlc::ImportOptions &options) {
  mlir::dlc::ImportOptions inference = options, training = options;
  inference.mode = mlir::dlc::ImportMode::Inference;
  inference.functionName = "forward";
  training.mode = mlir::dlc::ImportMode::Training;
  training.functionName = "forward_train";
  FailureOr<OwningOpRef<ModuleOp>> module =
      mlir::dlc::importOnnxFile(context, path, inference);
  if (failed(module))
    return failure();
  FailureOr<OwningOpRef<ModuleOp>> trainModule =
      mlir::dlc::importOnnxFile(context, path, training);
  if (failed(trainModule))
    return failure();
  // Both imports declare the same parameters; the training one may add
  // globals (the dropout seed) and brings its function.
  SymbolTable symbols(**module);
  for (Operation &op :
       llvm::make_early_inc_range((*trainModule)->getBody()->getOperations()))
    if (!isa<mlir::dlc::GlobalOp>(op) ||
        !symbols.lookup(cast<mlir::dlc::GlobalOp>(op).getSymName())) {
      op.remove();
      symbols.insert(&op);
    }
  return std::move(*module);
}

FailureOr<OwningOpRef<ModuleOp>>
compileForTraining(MLIRContext *context, llvm::StringRef path,
                   const mlir::dlc::ImportOptions &options) {
  FailureOr<OwningOpRef<ModuleOp>> module =
      importForTraining(context, path, options);
  if (failed(module))
    return failure();
  auto pm = PassManager::on<ModuleOp>(context);
  mlir::dlc::buildTrainingPipeline(pm, trainingPipelineOptions());
  if (failed(pm.run(**module)))
    return failure();
  return std::move(*module);
}

} // namespace dlc::tools
