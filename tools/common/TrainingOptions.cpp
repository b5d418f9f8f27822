//===- TrainingOptions.cpp - The training options dlc-compile and dlc-run share

#include "tools/common/TrainingOptions.h"

#include "ir/Dialect.h"
#include "ir/Roles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

/// The training pipeline's options (passes/Pipeline.h), the same objects
/// registered as the tool's top-level flags as well: a tool's --loss is the
/// pipeline's loss=.
struct Options {
  cl::OptionCategory category{"Training options"};
  mlir::dlc::TrainingPipelineOptions pipeline;

  Options() {
    cl::SubCommand &topLevel = cl::SubCommand::getTopLevel();
    for (cl::Option *option : pipeline.all()) {
      option->addCategory(category);
      // (cl's own registration would refuse a second option of a name.)
      if (!topLevel.OptionsMap.try_emplace(option->ArgStr, option).second)
        llvm::report_fatal_error("training option --" + option->ArgStr +
                                 " is registered twice");
    }
  }
};

Options &options() {
  static Options instance;
  return instance;
}

} // namespace

namespace mlir::dlc::tools {

void registerTrainingOptions() { (void)options(); }

const cl::OptionCategory &trainingOptionCategory() {
  return options().category;
}

const mlir::dlc::TrainingPipelineOptions &trainingPipelineOptions() {
  return options().pipeline;
}

std::optional<mlir::dlc::DLCMixedPrecisionOptions> mixedPrecisionOptions() {
  return options().pipeline.mixedPrecision();
}

bool tf32Given() {
  return options().pipeline.precision == mlir::dlc::Precision::Tf32;
}

bool precisionGiven() {
  return options().pipeline.precision.getNumOccurrences() > 0;
}

bool checkTrainingOptions(llvm::StringRef tool) {
  std::optional<std::string> error = options().pipeline.error();
  if (error)
    llvm::errs() << tool << ": error: " << *error << "\n";
  return !error;
}

llvm::SmallVector<std::string> compileOnlyTrainingOptionsGiven() {
  const mlir::dlc::TrainingPipelineOptions &o = options().pipeline;
  llvm::SmallVector<std::string> given;
  // --lr and --weight-decay are run-time inputs too, --precision a
  // choice of the compiled kernels (checked by the callers).
  for (cl::Option *option : o.given())
    if (option != &o.lr && option != &o.weightDecay && option != &o.precision)
      given.push_back(("--" + option->ArgStr).str());
  return given;
}

llvm::SmallVector<std::pair<std::string, double>> hyperparametersGiven() {
  const mlir::dlc::TrainingPipelineOptions &o = options().pipeline;
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
  // --batch-size is the global batch; with --dp N every rank's program
  // takes its B / N samples.
  mlir::dlc::ImportOptions rankOptions = options;
  if (int64_t ranks = trainingPipelineOptions().dp; ranks > 1) {
    if (!options.batchSize)
      return emitError(UnknownLoc::get(context))
             << "--dp " << ranks
             << " needs --batch-size, the global batch the ranks share";
    if (*options.batchSize % ranks)
      return emitError(UnknownLoc::get(context))
             << "--batch-size " << *options.batchSize
             << " is not divisible by --dp " << ranks
             << ": every rank takes the same share of the global batch";
    rankOptions.batchSize = *options.batchSize / ranks;
    if (trainingPipelineOptions().syncBatchnorm)
      rankOptions.syncBatchNormRanks = ranks;
  }
  // With --pp, the program computes one micro-batch of the rank's share,
  // which the step repeats.
  if (int64_t stages = trainingPipelineOptions().pp; stages > 1) {
    int64_t micro = trainingPipelineOptions().microbatches;
    if (!options.batchSize)
      return emitError(UnknownLoc::get(context))
             << "--pp " << stages
             << " needs --batch-size, the batch its micro-batches share";
    if (*rankOptions.batchSize % micro)
      return emitError(UnknownLoc::get(context))
             << "--batch-size " << *options.batchSize
             << (rankOptions.batchSize != options.batchSize
                     ? " (" + std::to_string(*rankOptions.batchSize) +
                           " a rank)"
                     : std::string())
             << " is not divisible by --microbatches " << micro
             << ": every micro-batch takes the same share of the batch";
    rankOptions.batchSize = *rankOptions.batchSize / micro;
  }
  FailureOr<OwningOpRef<ModuleOp>> module =
      importForTraining(context, path, rankOptions);
  if (failed(module))
    return failure();
  // --batch-size binds symbolic leading dimensions only: a model whose
  // batch is fixed would have each rank (or micro-batch) take the whole of
  // it.
  const bool pipelined = trainingPipelineOptions().pp > 1;
  if (rankOptions.batchSize != options.batchSize)
    if (auto train = (*module)->lookupSymbol<func::FuncOp>("forward_train"))
      for (BlockArgument argument : train.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(argument.getType());
        if (type && type.getRank() > 0 &&
            type.getDimSize(0) != *rankOptions.batchSize)
          return emitError(UnknownLoc::get(context))
                 << (pipelined ? "--pp " : "--dp ")
                 << static_cast<int64_t>(pipelined
                                             ? trainingPipelineOptions().pp
                                             : trainingPipelineOptions().dp)
                 << ": input '"
                 << mlir::dlc::roles::nameOf(
                        train.getArgAttrDict(argument.getArgNumber()))
                 << "' has the fixed leading dimension " << type.getDimSize(0)
                 << ", not a batch --batch-size " << *options.batchSize
                 << " binds (every " << (pipelined ? "micro-batch" : "rank")
                 << " takes " << *rankOptions.batchSize << " samples)";
      }
  auto pm = PassManager::on<ModuleOp>(context);
  mlir::dlc::buildTrainingPipeline(pm, trainingPipelineOptions());
  if (failed(pm.run(**module)))
    return failure();
  return std::move(*module);
}

} // namespace mlir::dlc::tools
