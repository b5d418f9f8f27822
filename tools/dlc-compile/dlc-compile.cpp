//===- dlc-compile.cpp - ONNX models to training programs -----------------===//
//
//   dlc-compile MODEL.onnx [--train <training options>] [--batch-size N]
//               [--dim NAME=N]... [--target cpu|cuda] [--emit=KIND] -o OUT
//
// With --train the model becomes a module with @train_step and @forward (and
// the intermediate @forward_train, @loss and @loss_grad, kept for
// inspection); without it, the model is imported with inference semantics.
//
//   dlc-compile MODULE.mlir [--target cpu|cuda] [--emit=KIND] -o OUT
//
// compiles dlc IR as it is (what --emit=mlir, dlc-translate or dlc-opt
// wrote, or hand-written): its @forward and @train_step, their globals
// turned into arguments.
// What is written (--emit, by default from OUT's extension: .dlcm a module,
// anything else the IR):
//   mlir    the dlc IR after the training passes
//   fused   the IR of the compiled functions after fusion and memory planning
//   kernels the generated kernel source for the target
//   module  the compiled module (.dlcm) that dlc-run and the runtime run
//   exe     a training binary: the runner with the module embedded
// Errors are one line each, naming the node, the option or the file, with
// exit code 1; the output file is written only after success.
//
//===----------------------------------------------------------------------===//

#include "codegen/ModuleWriter.h"
#include "codegen/plan/Passes.h"
#include "frontend/Importer.h"
#include "ir/Globals.h"
#include "passes/Pipeline.h"
#include "passes/memory/BufferPlacement.h"
#include "tools/common/Diagnostics.h"
#include "tools/common/IrFile.h"
#include "tools/common/ShapeOptions.h"
#include "tools/common/TrainingOptions.h"
#include "tools/dlc-compile/Executable.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace tools = mlir::dlc::tools;
namespace cl = llvm::cl;

static cl::OptionCategory compileOptions("dlc-compile options");
static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.onnx|model.onnxtxt|"
                                               "module.mlir>"),
                                      cl::Required, cl::cat(compileOptions));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(compileOptions));
static cl::opt<bool> train("train",
                           cl::desc("Build a training program (train_step)"),
                           cl::cat(compileOptions));
enum class Emit { Auto, Mlir, Fused, Plan, Kernels, Module, Exe };
static cl::opt<Emit> emit(
    "emit",
    cl::desc("What to produce (default: a module for -o *.dlcm, "
             "else the IR)"),
    cl::values(
        clEnumValN(Emit::Mlir, "mlir", "The dlc IR after the training passes"),
        clEnumValN(Emit::Fused, "fused",
                   "The compiled functions after fusion and memory planning"),
        clEnumValN(Emit::Plan, "plan",
                   "The execution plan for --target: library calls, kernel "
                   "launches and copies, one per step of the module"),
        clEnumValN(Emit::Kernels, "kernels",
                   "The generated kernel source for --target"),
        clEnumValN(Emit::Module, "module", "A compiled module (.dlcm)"),
        clEnumValN(Emit::Exe, "exe",
                   "A training binary (the runner with the module)")),
    cl::init(Emit::Auto), cl::cat(compileOptions));
enum class TargetKind { Cpu, Cuda };
static cl::opt<TargetKind> target(
    "target", cl::desc("The device the module runs on"),
    cl::values(clEnumValN(TargetKind::Cpu, "cpu", "CPU threads (default)"),
               clEnumValN(TargetKind::Cuda, "cuda", "NVIDIA GPUs")),
    cl::init(TargetKind::Cpu), cl::cat(compileOptions));
static cl::opt<bool> reportMemory(
    "report-memory",
    cl::desc("Print each compiled function's memory plan (arena peak)"),
    cl::cat(compileOptions));
static cl::opt<std::string>
    hostCompiler("host-compiler",
                 cl::desc("C++ compiler for CPU kernels (default c++)"),
                 cl::init("c++"), cl::cat(compileOptions));
static cl::opt<std::string>
    hostCpu("host-cpu",
            cl::desc("-march of CPU kernels (default native: the module "
                     "then runs on CPUs with this machine's features)"),
            cl::init("native"), cl::cat(compileOptions));
static cl::list<std::string>
    cudaArch("cuda-arch",
             cl::desc("Architectures of CUDA cubins (default sm_80,sm_90a; "
                      "PTX is added for the first)"),
             cl::CommaSeparated, cl::cat(compileOptions));
static cl::opt<bool> embedParameters(
    "embed-parameters",
    cl::desc("Store the parameters' initial values in the module (default "
             "true; false: a run takes them from a checkpoint)"),
    cl::init(true), cl::cat(compileOptions));
static cl::opt<bool>
    tf32("tf32",
         cl::desc("--target cuda: float32 matmuls and convolutions may use "
                  "TF32 tensor cores (10-bit mantissa products, float32 "
                  "sums; default off); the same as --precision tf32"),
         cl::init(false), cl::cat(compileOptions));
enum class ConvLayout { Auto, ChannelsFirst, ChannelsLast };
static cl::opt<ConvLayout> convLayout(
    "conv-layout",
    cl::desc("How convolutions and the activations between them are stored "
             "(dlc-channels-last)"),
    cl::values(clEnumValN(ConvLayout::Auto, "auto",
                          "nhwc for --target cuda with tensor cores (--tf32, "
                          "--precision tf32, bf16 or fp16), nchw otherwise "
                          "(default)"),
               clEnumValN(ConvLayout::ChannelsFirst, "nchw",
                          "channels first, as the model is written"),
               clEnumValN(ConvLayout::ChannelsLast, "nhwc",
                          "channels last (NWC, NHWC, NDHWC)")),
    cl::init(ConvLayout::Auto), cl::cat(compileOptions));
static cl::opt<mlir::dlc::ConvEngine>
    convEngine("conv-engine",
               cl::desc("What runs the convolutions (dlc.plan.conv's engine; "
                        "a demand the target cannot meet is an error)"),
               mlir::dlc::codegen::convEngineValues(),
               cl::init(mlir::dlc::ConvEngine::automatic),
               cl::cat(compileOptions));
static cl::opt<bool> cudnnNondeterministic(
    "cudnn-nondeterministic",
    cl::desc("--target cuda: convolutions may take cuDNN engines that use "
             "atomics, whose results vary in the last bits from run to run "
             "(default off: bit-exact resume)"),
    cl::init(false), cl::cat(compileOptions));

namespace {

const char *kTool = "dlc-compile";

Emit effectiveEmit() {
  if (emit != Emit::Auto)
    return emit;
  return llvm::StringRef(outputFile).ends_with(".dlcm") ? Emit::Module
                                                        : Emit::Mlir;
}

/// Keeps only the functions a module runs: @train_step and @forward when
/// training, the model function otherwise. Returns their names.
std::vector<std::string> keepCompiledFunctions(ModuleOp module) {
  std::vector<std::string> kept;
  for (const char *name : {"forward", "train_step"})
    if (module.lookupSymbol<func::FuncOp>(name))
      kept.push_back(name);
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!llvm::is_contained(kept, func.getSymName().str()))
      func.erase();
  return kept;
}

/// Whether matmuls and convolutions may run on tensor cores: --tf32 or a
/// --precision other than fp32.
bool tensorCores() {
  return tf32 || tools::tf32Given() ||
         tools::mixedPrecisionOptions().has_value();
}

/// Fusion and memory planning (passes/Pipeline.h); for an inference
/// import, mixed precision first (the training pipeline has run it).
/// The execution pipeline for --target; `irInput`: the module was parsed
/// from dlc IR, whose functions may still read and write globals.
LogicalResult lowerForExecution(ModuleOp module, bool irInput) {
  PassManager pm(module.getContext());
  if (auto precision = tools::mixedPrecisionOptions(); precision && !train)
    pm.addPass(mlir::dlc::createDLCMixedPrecision(*precision));
  mlir::dlc::ExecutionPipelineOptions options;
  options.functionalize = !train || irInput;
  options.foldsEpilogues = target == TargetKind::Cuda;
  options.fusedAttention = target == TargetKind::Cuda;
  options.splitReductions = target == TargetKind::Cuda;
  options.sortScatters = target == TargetKind::Cuda;
  options.channelsLast = convLayout == ConvLayout::ChannelsLast ||
                         (convLayout == ConvLayout::Auto &&
                          target == TargetKind::Cuda && tensorCores());
  mlir::dlc::buildExecutionPipeline(pm, options);
  return pm.run(module);
}

std::string mebibytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f MiB",
                static_cast<double>(bytes) / (1 << 20));
  return text;
}

/// One line per function: the arena's peak beside what its intermediates
/// would take without reuse, and the argument and result buffers.
void printMemoryReport(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    auto arena = func->getAttrOfType<IntegerAttr>(mlir::dlc::kArenaSizeAttr);
    auto total =
        func->getAttrOfType<IntegerAttr>(mlir::dlc::kIntermediateBytesAttr);
    if (!arena || !total)
      continue;
    int64_t arguments = 0, results = 0;
    for (BlockArgument argument : func.getArguments())
      arguments += mlir::dlc::BufferPlacement::byteSize(argument);
    func.walk([&](func::ReturnOp op) {
      for (Value v : op.getOperands())
        results += mlir::dlc::BufferPlacement::byteSize(v);
    });
    llvm::outs() << func.getSymName() << ": arena " << mebibytes(arena.getInt())
                 << " peak (intermediates " << mebibytes(total.getInt())
                 << " without reuse), arguments " << mebibytes(arguments)
                 << ", results " << mebibytes(results) << "\n";
  }
}

/// The command line after the model, for the module's metadata.
std::string optionsText(int argc, char **argv) {
  std::string text;
  for (int i = 1; i < argc; ++i) {
    if (argv[i] == inputFile)
      continue;
    if (!text.empty())
      text += ' ';
    text += argv[i];
  }
  return text;
}

bool writeBytes(llvm::StringRef bytes, bool executable) {
  std::string error;
  auto file = mlir::openOutputFile(outputFile, &error);
  if (!file) {
    llvm::errs() << kTool << ": error: " << error << "\n";
    return false;
  }
  file->os() << bytes;
  file->os().flush();
  if (file->os().has_error()) {
    llvm::errs() << kTool << ": error: cannot write " << outputFile << ": "
                 << file->os().error().message() << "\n";
    file->os().clear_error();
    return false;
  }
  file->keep();
  if (executable)
    llvm::sys::fs::setPermissions(outputFile, llvm::sys::fs::all_read |
                                                  llvm::sys::fs::all_exe |
                                                  llvm::sys::fs::owner_write);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  tools::registerShapeOptions();
  tools::registerTrainingOptions();
  if (!tools::parseCommandLine(argc, argv, "dlc compiler\n", kTool,
                               {&compileOptions, &tools::shapeOptionCategory(),
                                &tools::trainingOptionCategory()}))
    return 1;

  // dlc IR is compiled as it is: the options that build a training program
  // or steer an import do not apply to it.
  bool irInput = tools::isDlcIrFile(inputFile);
  if (irInput) {
    llvm::SmallVector<std::string> given =
        tools::compileOnlyTrainingOptionsGiven();
    for (auto &[name, value] : tools::hyperparametersGiven())
      given.push_back(name == "dlc.lr" ? "--lr" : "--weight-decay");
    if (train)
      given.insert(given.begin(), "--train");
    if (!given.empty()) {
      llvm::errs() << kTool << ": error: " << given.front()
                   << " applies when compiling an ONNX model; " << inputFile
                   << " is dlc IR, whose @forward and @train_step compile as "
                      "they are (dlc-compile --train --emit=mlir writes a "
                      "training module)\n";
      return 1;
    }
    if (!tools::checkNoImportOptions(kTool, inputFile))
      return 1;
  }
  if (!train) {
    llvm::SmallVector<std::string> given =
        tools::compileOnlyTrainingOptionsGiven();
    for (auto &[name, value] : tools::hyperparametersGiven())
      given.push_back(name == "dlc.lr" ? "--lr" : "--weight-decay");
    if (!given.empty()) {
      llvm::errs() << kTool << ": error: " << given.front()
                   << " is a training option: add --train\n";
      return 1;
    }
  }
  if (!tools::checkTrainingOptions(kTool))
    return 1;
  Emit what = effectiveEmit();
  if (what == Emit::Exe && (outputFile == "-" || outputFile.empty())) {
    llvm::errs() << kTool << ": error: --emit=exe needs -o NAME\n";
    return 1;
  }
  // Transfers between stages run on CPU ranks only (runtime/cpu/Executor).
  if (train && tools::trainingPipelineOptions().pp > 1 &&
      target == TargetKind::Cuda) {
    llvm::errs() << kTool
                 << ": error: --pp with --target cuda is not built yet: "
                    "pipeline stages run on CPU ranks\n";
    return 1;
  }
  mlir::dlc::ImportOptions options;
  if (!tools::applyShapeOptions(kTool, options))
    return 1;
  MLIRContext context;
  tools::DiagnosticPrinter printer(context, kTool);
  auto load = [&]() -> FailureOr<OwningOpRef<ModuleOp>> {
    if (irInput)
      return tools::parseDlcIrFile(&context, inputFile);
    if (train)
      return tools::compileForTraining(&context, inputFile, options);
    options.mode = mlir::dlc::ImportMode::Inference;
    return mlir::dlc::importOnnxFile(&context, inputFile, options);
  };
  FailureOr<OwningOpRef<ModuleOp>> module = load();
  if (failed(module))
    return 1;
  if (what == Emit::Mlir) {
    if (reportMemory) {
      llvm::errs() << kTool << ": error: --report-memory needs a compiled "
                   << "output (--emit=fused, plan, kernels, module or exe)\n";
      return 1;
    }
    return tools::writeModule(**module, outputFile, kTool) ? 0 : 1;
  }

  std::vector<std::string> functions = keepCompiledFunctions(**module);
  if (functions.empty()) {
    llvm::errs() << kTool << ": error: " << inputFile
                 << " has no @forward or @train_step to compile\n";
    return 1;
  }
  if (failed(lowerForExecution(**module, irInput)))
    return 1;
  if (reportMemory)
    printMemoryReport(**module);
  if (what == Emit::Fused)
    return tools::writeModule(**module, outputFile, kTool) ? 0 : 1;
  mlir::dlc::codegen::Target codegenTarget =
      target == TargetKind::Cpu ? mlir::dlc::codegen::Target::Cpu
                                : mlir::dlc::codegen::Target::Cuda;
  {
    PassManager pm(&context);
    mlir::dlc::codegen::buildPlanPipeline(pm, codegenTarget, convEngine);
    if (failed(pm.run(**module)))
      return 1;
  }
  if (what == Emit::Plan)
    return tools::writeModule(**module, outputFile, kTool) ? 0 : 1;

  mlir::dlc::codegen::ModuleWriterOptions writerOptions;
  writerOptions.target = codegenTarget;
  writerOptions.functions = functions;
  writerOptions.modelName = llvm::sys::path::filename(inputFile).str();
  writerOptions.producer = "dlc-compile";
  writerOptions.trainingOptions = optionsText(argc, argv);
  writerOptions.embedParameters = embedParameters;
  writerOptions.cudaAllowTf32 = tf32 || tools::tf32Given();
  writerOptions.cudaAllowNondeterministic = cudnnNondeterministic;
  writerOptions.hostCompiler = hostCompiler;
  writerOptions.hostCpu = hostCpu;
  if (!cudaArch.empty())
    writerOptions.cudaArchitectures.assign(cudaArch.begin(), cudaArch.end());
  if (what == Emit::Kernels) {
    FailureOr<std::string> source =
        mlir::dlc::codegen::generateKernelSource(**module, writerOptions);
    return succeeded(source) && writeBytes(*source, false) ? 0 : 1;
  }
  // The model export starts from (none for dlc IR: such a module cannot
  // export ONNX).
  if (!irInput) {
    FailureOr<std::string> onnx = mlir::dlc::readOnnxWithoutInitializers(
        &context, inputFile, mlir::dlc::globalNames(**module));
    if (failed(onnx))
      return 1;
    writerOptions.onnxModel = std::move(*onnx);
  }
  FailureOr<std::string> bytes =
      mlir::dlc::codegen::writeModule(**module, writerOptions);
  if (failed(bytes))
    return 1;
  if (what == Emit::Module)
    return writeBytes(*bytes, false) ? 0 : 1;
  std::string error;
  std::optional<std::string> executable =
      tools::buildExecutable(argv[0], *bytes, error);
  if (!executable) {
    llvm::errs() << kTool << ": error: " << error << "\n";
    return 1;
  }
  return writeBytes(*executable, true) ? 0 : 1;
}
