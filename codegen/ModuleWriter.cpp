//===- ModuleWriter.cpp - The execution plan to a .dlcm compiled module ---===//
//
// Serializes each compiled function's execution plan (codegen/plan, ir/
// PlanOps.td) one top-level op to one step, in order:
//   dlc.plan.launch       -> a KernelStep running the launch's kernel,
//                            generated (and compiled) once per kernel name
//   dlc.plan.matmul       -> a MatmulStep (transposed flags, epilogue, bias)
//   dlc.plan.conv         -> a ConvStep (kind, engine)
//   dlc.plan.copy         -> a CopyStep into its result's buffer
//   dlc.plan.all_reduce   -> an AllReduceStep over the bucket's buffers
//   dlc.reduce_scatter, dlc.all_gather, dlc.rank_shard
//                         -> a ShardStep over the bucket's buffers (ZeRO-1)
//   dlc.pp_transfer       -> a TransferStep between two pipeline stages
//   dlc.reshape           -> nothing (a view, BufferPlacement)
//   dlc.constant          -> a module constant, once read by a step
// Library calls with an empty result compute nothing and are left out.
// In a module of pipeline stages, each step names the stage that runs it
// and each result the stage that holds it (passes/parallel/
// StagePlacement.h).
// Every decision (which kernels share a launch, which epilogues a library
// applies, which kernels are one) was taken by a pass on the plan; this
// file takes none.
//
//===----------------------------------------------------------------------===//

#include "codegen/ModuleWriter.h"
#include "codegen/HostCompiler.h"
#include "codegen/Nvrtc.h"
#include "codegen/plan/PlanBuffers.h"
#include "codegen/plan/PlanKernels.h"
#include "ir/Globals.h"
#include "ir/Locations.h"
#include "ir/Roles.h"
#include "ir/ShapeUtils.h"
#include "ir/eval/Evaluator.h"
#include "passes/parallel/StagePlacement.h"
#include "runtime/module/Format.h"
#include "runtime/module/dlcm_generated.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <array>
#include <functional>
#include <optional>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::codegen;

namespace {

FailureOr<fb::ElementType> elementTypeOf(Operation *where, Type type) {
  FailureOr<DType> dtype = dtypeOf(getElementTypeOrSelf(type));
  if (failed(dtype))
    return where->emitOpError() << "has a value of type " << type
                                << ", which compiled modules do not store";
  return static_cast<fb::ElementType>(static_cast<uint8_t>(*dtype));
}

std::vector<int64_t> shapeVector(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return {shape.begin(), shape.end()};
}

fb::ConvKind convKindOf(ConvKind kind) {
  switch (kind) {
  case ConvKind::forward:
    return fb::ConvKind::Forward;
  case ConvKind::backward_data:
    return fb::ConvKind::BackwardData;
  case ConvKind::backward_filter:
    return fb::ConvKind::BackwardFilter;
  }
  llvm_unreachable("a ConvKind");
}

fb::ConvEngine convEngineOf(ConvEngine engine) {
  switch (engine) {
  case ConvEngine::automatic:
    return fb::ConvEngine::Auto;
  case ConvEngine::library:
    return fb::ConvEngine::Library;
  case ConvEngine::direct:
    return fb::ConvEngine::Direct;
  }
  llvm_unreachable("a ConvEngine");
}

class Writer {
public:
  Writer(ModuleOp module, const ModuleWriterOptions &options)
      : module(module), options(options) {
    if (auto attr =
            module->getAttrOfType<IntegerAttr>(roles::kTensorParallelAttr))
      tensorRanks = attr.getInt();
    pipelineStages = StagePlacement::stagesOf(module);
  }

  FailureOr<std::string> run();
  /// Plans the functions and returns the kernel source only.
  FailureOr<std::string> source();

private:
  LogicalResult addGlobals();
  /// Globals, then every function's plan, generating its kernels.
  FailureOr<std::vector<flatbuffers::Offset<fb::Function>>> addFunctions();
  std::string kernelSource() const;
  FailureOr<flatbuffers::Offset<fb::Function>> addFunction(func::FuncOp func);
  /// The module constant holding `constant`'s value, added when first
  /// read.
  FailureOr<uint32_t> constantNumber(ConstantOp constant);
  /// The index of `launch`'s kernel, generating its source when it is the
  /// first launch of that kernel.
  FailureOr<uint32_t> kernelIndex(LaunchOp launch);
  FailureOr<flatbuffers::Offset<fb::TensorType>> tensorType(Operation *where,
                                                            Value v);
  /// The step of plan op `op`, whose buffers are `buffers`; an all-reduce
  /// completes before step `waitStep`.
  FailureOr<flatbuffers::Offset<fb::Step>> step(Operation *op,
                                                PlanBuffers &plan,
                                                const StepBuffers &buffers,
                                                uint32_t waitStep);
  /// A step of `kind` on `body` at `location`, run by the ranks of stage
  /// `stepStage` (-1: every rank).
  flatbuffers::Offset<fb::Step>
  makeStep(fb::StepKind kind, flatbuffers::Offset<void> body,
           flatbuffers::Offset<flatbuffers::String> location) {
    return fb::CreateStep(fbb, kind, body, location, stepStage);
  }
  /// A ZeRO-1 op's ShardStep.
  FailureOr<flatbuffers::Offset<fb::Step>>
  shardStep(Operation *op, const StepBuffers &buffers, uint32_t waitStep);
  FailureOr<flatbuffers::Offset<fb::Step>> matmulStep(PlanMatmulOp op,
                                                      PlanBuffers &plan);
  FailureOr<flatbuffers::Offset<fb::Step>> convStep(PlanConvOp op,
                                                    PlanBuffers &plan);
  /// Compiles `source` (kernelSource()) for the target.
  LogicalResult
  compileKernels(const std::string &source, std::vector<uint8_t> &sharedObject,
                 std::vector<flatbuffers::Offset<fb::CudaBinary>> &binaries,
                 std::string &ptx);

  ModuleOp module;
  const ModuleWriterOptions &options;
  /// The module's tensor-parallel ranks (dlc-tensor-parallel), or 1.
  int64_t tensorRanks = 1;
  /// The module's pipeline stages (dlc-pipeline-partition), or 1, and the
  /// stage of the step being written.
  int64_t pipelineStages = 1;
  int32_t stepStage = -1;
  flatbuffers::FlatBufferBuilder fbb{1 << 20};
  std::vector<flatbuffers::Offset<fb::Global>> globals;
  llvm::StringMap<int> globalIndex;
  std::vector<flatbuffers::Offset<fb::Constant>> constants;
  llvm::DenseMap<Operation *, uint32_t> constantIndex;
  /// Generated kernels in order of first launch: names (dlc-name-kernels')
  /// and sources, and each name's index.
  std::vector<std::string> kernelNames;
  std::vector<std::string> kernelSources;
  /// Each kernel's schedule (iterations, grain, threads).
  std::vector<std::array<int64_t, 3>> kernelSchedules;
  llvm::StringMap<uint32_t> kernelByName;
};

LogicalResult Writer::addGlobals() {
  llvm::StringMap<std::string> roleOf = globalRoles(module);
  for (GlobalOp global : module.getOps<GlobalOp>()) {
    StringRef name = global.getSymName();
    auto type = cast<RankedTensorType>(global.getType());
    FailureOr<DType> dtype = dtypeOf(type.getElementType());
    if (failed(dtype))
      return global.emitOpError() << "@" << name << " has type " << type
                                  << ", which compiled modules do not store";
    const std::string &role = roleOf[name];
    // A 16-bit copy of a parameter takes no bytes of its own: the runtime
    // derives it from its source, which comes first in the module.
    int copyOf = -1;
    if (auto source =
            global->getAttrOfType<FlatSymbolRefAttr>(roles::kCopyOfAttr)) {
      auto it = globalIndex.find(source.getValue());
      if (it == globalIndex.end())
        return global.emitOpError()
               << "@" << name << " is a copy of " << source
               << ", which is not a global declared before it";
      copyOf = it->second;
    }
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> initial;
    // All-zero values (optimizer state) are left out: the runtime starts
    // globals without one at zero.
    auto splat = dyn_cast_or_null<DenseElementsAttr>(
        global.getInitialValue().value_or(nullptr));
    bool zero = splat && splat.isSplat() &&
                (isa<FloatType>(splat.getElementType())
                     ? splat.getSplatValue<APFloat>().isPosZero()
                     : splat.getSplatValue<APInt>().isZero());
    // --embed-parameters=false leaves out the parameters (the weights, most
    // of a model's bytes) but keeps the small state a run cannot do
    // without: hyperparameters, BatchNorm statistics, the step counter.
    bool separable = role == roles::kParam;
    if ((options.embedParameters || !separable) && copyOf < 0 &&
        global.getInitialValue() && !zero) {
      FailureOr<Tensor> value = tensorFromAttr(*global.getInitialValue());
      if (failed(value))
        return global.emitOpError()
               << "@" << name << " has an initial value that cannot be read";
      // A tensor-parallel global's value is the whole: the ranks' slices,
      // one after another, so that a rank copies its own (a ZeRO shard's,
      // of a slice too, is its own).
      std::optional<roles::TpSplit> split =
          roles::tpSplitIn(global->getAttrDictionary());
      if (split && !global->hasAttr(roles::kShardedAttr)) {
        std::vector<Tensor> slices;
        for (int64_t t = 0; t < tensorRanks; ++t)
          slices.push_back(
              sliceOf(*value, split->dim, t, tensorRanks, split->groups));
        *value = joinSlices(slices, 0);
      }
      fbb.ForceVectorAlignment(value->byteSize(), 1, kBufferAlignment);
      initial = fbb.CreateVector(
          reinterpret_cast<const uint8_t *>(value->bytes()), value->byteSize());
    }
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    auto tensorType = fb::CreateTensorTypeDirect(
        fbb, static_cast<fb::ElementType>(static_cast<uint8_t>(*dtype)),
        &shape);
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> wholeShape;
    if (RankedTensorType whole =
            roles::shardedTypeOf(global->getAttrDictionary())) {
      if (!whole.hasStaticShape())
        return global.emitOpError() << "@" << name << " is a shard of " << whole
                                    << ", whose shape is not static";
      wholeShape =
          fbb.CreateVector(whole.getShape().data(), whole.getShape().size());
    }
    globalIndex[name] = static_cast<int>(globals.size());
    std::optional<roles::TpSplit> split =
        roles::tpSplitIn(global->getAttrDictionary());
    globals.push_back(fb::CreateGlobal(
        fbb, fbb.CreateString(name.str()), fbb.CreateString(role), tensorType,
        initial, copyOf, global->hasAttr(roles::kShardedAttr), wholeShape,
        split ? split->dim : -1, split ? split->groups : 1));
  }
  return success();
}

FailureOr<flatbuffers::Offset<fb::TensorType>>
Writer::tensorType(Operation *where, Value v) {
  FailureOr<fb::ElementType> element = elementTypeOf(where, v.getType());
  if (failed(element))
    return failure();
  std::vector<int64_t> shape = shapeVector(v);
  return fb::CreateTensorTypeDirect(fbb, *element, &shape);
}

FailureOr<uint32_t> Writer::constantNumber(ConstantOp constant) {
  auto it = constantIndex.find(constant);
  if (it != constantIndex.end())
    return it->second;
  FailureOr<Tensor> value = tensorFromAttr(constant.getValue());
  if (failed(value))
    return constant.emitOpError() << "has a value that cannot be read";
  FailureOr<flatbuffers::Offset<fb::TensorType>> type =
      tensorType(constant, constant.getResult());
  if (failed(type))
    return failure();
  fbb.ForceVectorAlignment(value->byteSize(), 1, kBufferAlignment);
  auto data = fbb.CreateVector(
      reinterpret_cast<const uint8_t *>(value->bytes()), value->byteSize());
  uint32_t index = static_cast<uint32_t>(constants.size());
  constants.push_back(fb::CreateConstant(fbb, *type, data));
  constantIndex[constant] = index;
  return index;
}

FailureOr<uint32_t> Writer::kernelIndex(LaunchOp launch) {
  std::optional<StringRef> name = launch.getKernel();
  if (!name)
    return launch.emitOpError()
           << "has no kernel name; run dlc-name-kernels before writing the "
              "module";
  auto [it, inserted] = kernelByName.try_emplace(
      *name, static_cast<uint32_t>(kernelNames.size()));
  // The plan's schedule is the emitter's: a plan edited by hand cannot
  // launch a kernel over other iterations than it was generated for. The
  // kernel is generated from its first launch; later launches of the name
  // must have its schedule (dlc-name-kernels gives one name to launches of
  // the same source, hence the same schedule).
  std::array<int64_t, 3> schedule = {launch.getIterationsAttr().getInt(),
                                     launch.getGrainAttr().getInt(),
                                     launch.getThreadsAttr().getInt()};
  auto mismatch = [&](const std::array<int64_t, 3> &expected) {
    return launch.emitOpError()
           << "has schedule iterations " << schedule[0] << ", grain "
           << schedule[1] << ", threads " << schedule[2] << "; kernel " << *name
           << " runs " << expected[0] << ", " << expected[1] << ", "
           << expected[2];
  };
  if (!inserted) {
    const std::array<int64_t, 3> &expected = kernelSchedules[it->second];
    if (schedule != expected)
      return mismatch(expected);
    return it->second;
  }
  FailureOr<EmittedKernel> kernel =
      emitLaunchKernel(launch, *name, options.target);
  if (failed(kernel))
    return failure();
  std::array<int64_t, 3> emitted = {kernel->iterations, kernel->grain,
                                    kernel->threadsPerIteration};
  if (schedule != emitted)
    return mismatch(emitted);
  kernelNames.push_back(name->str());
  kernelSources.push_back(launchHeader(launch) + kernel->source);
  kernelSchedules.push_back(emitted);
  return it->second;
}

FailureOr<flatbuffers::Offset<fb::Step>> Writer::matmulStep(PlanMatmulOp op,
                                                            PlanBuffers &plan) {
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t m = resultType.getDimSize(resultType.getRank() - 2);
  int64_t n = resultType.getDimSize(resultType.getRank() - 1);
  int64_t k = op.getLhsTransposed() ? lhsType.getDimSize(lhsType.getRank() - 2)
                                    : lhsType.getDimSize(lhsType.getRank() - 1);
  int64_t batch = resultType.getNumElements() / std::max<int64_t>(1, m * n);
  // The verifier admits all or none of the batch dimensions.
  auto batchStride = [&](RankedTensorType type, int64_t matrix) -> int64_t {
    return type.getNumElements() / std::max<int64_t>(1, matrix) == batch
               ? matrix
               : 0;
  };
  FailureOr<fb::BufferRef> lhsRef = plan.refOf(op.getLhs());
  FailureOr<fb::BufferRef> rhsRef = plan.refOf(op.getRhs());
  FailureOr<fb::BufferRef> resultRef = plan.refOf(op.getResult());
  FailureOr<fb::ElementType> element = elementTypeOf(op, op.getType());
  if (failed(lhsRef) || failed(rhsRef) || failed(resultRef) || failed(element))
    return failure();
  std::optional<fb::BufferRef> biasRef;
  if (Value bias = op.getBias()) {
    FailureOr<fb::BufferRef> ref = plan.refOf(bias);
    if (failed(ref))
      return failure();
    biasRef = *ref;
  }
  fb::MatmulEpilogue epilogue = op.getEpilogue() == MatmulEpilogue::bias_relu
                                    ? fb::MatmulEpilogue::BiasRelu
                                : op.getEpilogue() == MatmulEpilogue::bias
                                    ? fb::MatmulEpilogue::Bias
                                    : fb::MatmulEpilogue::None;
  auto step = fb::CreateMatmulStep(
      fbb, *element, &*lhsRef, &*rhsRef, &*resultRef, batch, m, n, k,
      batchStride(lhsType, m * k), batchStride(rhsType, k * n),
      op.getLhsTransposed(), op.getRhsTransposed(), epilogue,
      biasRef ? &*biasRef : nullptr);
  return makeStep(fb::StepKind::MatmulStep, step.Union(),
                  fbb.CreateString(describeLocation(op.getLoc())));
}

FailureOr<flatbuffers::Offset<fb::Step>> Writer::convStep(PlanConvOp op,
                                                          PlanBuffers &plan) {
  Value x = op.getX(), w = op.getW(), y = op.getY();
  FailureOr<fb::BufferRef> xRef = plan.refOf(x);
  FailureOr<fb::BufferRef> wRef = plan.refOf(w);
  FailureOr<fb::BufferRef> yRef = plan.refOf(y);
  FailureOr<fb::ElementType> element = elementTypeOf(op, op.getType());
  if (failed(xRef) || failed(wRef) || failed(yRef) || failed(element))
    return failure();
  // The step lists shapes channels-first; channels_last says how the
  // buffers hold them.
  bool channelsLast = op.getChannelsLast();
  auto logicalShape = [&](Value v) {
    std::vector<int64_t> shape = shapeVector(v);
    if (!channelsLast)
      return shape;
    SmallVector<int64_t> first = channelsFirstShape(shape);
    return std::vector<int64_t>(first.begin(), first.end());
  };
  std::vector<int64_t> xShape = logicalShape(x), wShape = logicalShape(w),
                       yShape = logicalShape(y);
  std::vector<int64_t> stride(op.getStride()), padLow(op.getPadLow()),
      padHigh(op.getPadHigh()), dilation(op.getDilation());
  auto step = fb::CreateConvStepDirect(
      fbb, convKindOf(op.getKind()), *element, &*xRef, &*wRef, &*yRef, &xShape,
      &wShape, &yShape, &stride, &padLow, &padHigh, &dilation,
      static_cast<int64_t>(op.getGroups()), channelsLast,
      convEngineOf(op.getEngine()));
  return makeStep(fb::StepKind::ConvStep, step.Union(),
                  fbb.CreateString(describeLocation(op.getLoc())));
}

FailureOr<flatbuffers::Offset<fb::Step>>
Writer::shardStep(Operation *op, const StepBuffers &buffers,
                  uint32_t waitStep) {
  FailureOr<fb::ElementType> element =
      elementTypeOf(op, op->getOperand(0).getType());
  if (failed(element))
    return failure();
  fb::ShardKind kind = fb::ShardKind::RankShard;
  fb::RankReduction reduction = fb::RankReduction::Mean;
  int64_t ranks = 0, bucket = 0;
  bool tensor = false;
  // The whole values: the inputs, or an all-gather's results.
  ValueRange whole = op->getOperands();
  if (auto scatter = dyn_cast<ReduceScatterOp>(op)) {
    kind = fb::ShardKind::ReduceScatter;
    reduction = scatter.getReduction() == RankReduction::mean
                    ? fb::RankReduction::Mean
                    : fb::RankReduction::Sum;
    ranks = scatter.getRanks();
    bucket = scatter.getBucket();
  } else if (auto gather = dyn_cast<AllGatherOp>(op)) {
    kind = fb::ShardKind::AllGather;
    ranks = gather.getRanks();
    bucket = gather.getBucket();
    whole = gather.getResults();
    tensor = gather.getTensor();
  } else {
    auto shard = cast<RankShardOp>(op);
    ranks = shard.getRanks();
    tensor = shard.getTensor();
  }
  std::vector<uint64_t> elements;
  for (Value v : whole)
    elements.push_back(cast<RankedTensorType>(v.getType()).getNumElements());
  auto step = fb::CreateShardStepDirect(
      fbb, kind, reduction, *element, static_cast<uint32_t>(bucket),
      static_cast<uint32_t>(ranks), &buffers.refs, &elements, waitStep, tensor);
  return makeStep(fb::StepKind::ShardStep, step.Union(),
                  fbb.CreateString(describeLocation(op->getLoc())));
}

FailureOr<flatbuffers::Offset<fb::Step>>
Writer::step(Operation *op, PlanBuffers &plan, const StepBuffers &buffers,
             uint32_t waitStep) {
  if (auto matmul = dyn_cast<PlanMatmulOp>(op))
    return matmulStep(matmul, plan);
  if (auto conv = dyn_cast<PlanConvOp>(op))
    return convStep(conv, plan);
  std::string location = describeLocation(op->getLoc());
  if (auto copy = dyn_cast<PlanCopyOp>(op)) {
    auto step = fb::CreateCopyStep(fbb, &buffers.refs[0], &buffers.refs[1],
                                   buffers.bytes[0]);
    return makeStep(fb::StepKind::CopyStep, step.Union(),
                    fbb.CreateString(location));
  }
  if (auto reduce = dyn_cast<PlanAllReduceOp>(op)) {
    FailureOr<fb::ElementType> element =
        elementTypeOf(op, reduce.getInputs().front().getType());
    if (failed(element))
      return failure();
    std::vector<uint64_t> elements;
    for (Value input : reduce.getInputs())
      elements.push_back(
          cast<RankedTensorType>(input.getType()).getNumElements());
    auto step = fb::CreateAllReduceStepDirect(
        fbb,
        reduce.getReduction() == RankReduction::mean ? fb::RankReduction::Mean
                                                     : fb::RankReduction::Sum,
        *element, static_cast<uint32_t>(reduce.getBucket()), &buffers.refs,
        &elements, waitStep, reduce.getTensor());
    return makeStep(fb::StepKind::AllReduceStep, step.Union(),
                    fbb.CreateString(location));
  }
  if (isa<ReduceScatterOp, AllGatherOp, RankShardOp>(op))
    return shardStep(op, buffers, waitStep);
  if (auto transfer = dyn_cast<PpTransferOp>(op)) {
    auto step = fb::CreateTransferStep(
        fbb, static_cast<uint32_t>(transfer.getFrom()),
        static_cast<uint32_t>(transfer.getTo()), &buffers.refs[0],
        &buffers.refs[1], buffers.bytes[0], waitStep);
    return makeStep(fb::StepKind::TransferStep, step.Union(),
                    fbb.CreateString(location));
  }
  auto launch = cast<LaunchOp>(op);
  FailureOr<uint32_t> kernel = kernelIndex(launch);
  if (failed(kernel))
    return failure();
  auto step = fb::CreateKernelStepDirect(
      fbb, *kernel, &buffers.refs, launch.getIterations(), launch.getGrain(),
      &buffers.bytes, buffers.outputs,
      static_cast<uint32_t>(launch.getThreads()));
  return makeStep(fb::StepKind::KernelStep, step.Union(),
                  fbb.CreateString(launchLocation(launch)));
}

FailureOr<flatbuffers::Offset<fb::Function>>
Writer::addFunction(func::FuncOp func) {
  // dlc-lower-to-plan has checked the function (one block, a memory plan).
  Block &block = func.getBody().front();
  PlanBuffers plan(
      func, [&](ConstantOp constant) { return constantNumber(constant); });

  // In a module of pipeline stages, which stages run each step and hold
  // each result.
  std::optional<StagePlacement> placement;
  if (pipelineStages > 1) {
    FailureOr<StagePlacement> placed =
        StagePlacement::compute(func, pipelineStages);
    if (failed(placed))
      return failure();
    placement = std::move(*placed);
  }
  // The stage of a step run by `stages`, or of a result they hold: -1 for
  // every stage (and a transfer's two), else the first.
  auto stageOf = [&](StagePlacement::Stages stages) -> int32_t {
    if (!placement || stages == placement->all())
      return -1;
    return static_cast<int32_t>(StagePlacement::first(stages));
  };

  // A value's role (its default when unattributed) and the global it
  // reads or updates.
  auto describe = [&](DictionaryAttr attrs, StringRef defaultRole,
                      std::string &role, int &global) -> LogicalResult {
    role = roles::roleOf(attrs).str();
    if (role.empty())
      role = defaultRole.str();
    global = -1;
    if (!roles::isGlobalRole(role))
      return success();
    auto it = globalIndex.find(roles::nameOf(attrs));
    if (it == globalIndex.end())
      return func.emitOpError()
             << "has a " << role << " '" << roles::nameOf(attrs)
             << "' that is no dlc.global";
    global = it->second;
    return success();
  };
  std::vector<flatbuffers::Offset<fb::Argument>> arguments;
  for (BlockArgument argument : block.getArguments()) {
    DictionaryAttr attrs = func.getArgAttrDict(argument.getArgNumber());
    std::string role;
    int global;
    FailureOr<flatbuffers::Offset<fb::TensorType>> type =
        tensorType(func, argument);
    if (failed(describe(attrs, roles::kInput, role, global)) || failed(type))
      return failure();
    int64_t numClasses = 0, ignoreIndex = -100;
    if (auto classes = attrs ? attrs.getAs<IntegerAttr>(roles::kNumClassesAttr)
                             : IntegerAttr())
      numClasses = classes.getInt();
    if (auto ignore = attrs ? attrs.getAs<IntegerAttr>(roles::kIgnoreIndexAttr)
                            : IntegerAttr())
      ignoreIndex = ignore.getInt();
    arguments.push_back(fb::CreateArgumentDirect(
        fbb, roles::nameOf(attrs).str().c_str(), role.c_str(), *type, global,
        numClasses, ignoreIndex));
  }
  Operation *terminator = block.getTerminator();
  std::vector<flatbuffers::Offset<fb::Result>> results;
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    DictionaryAttr attrs = func.getResultAttrDict(index);
    std::string role;
    int global;
    FailureOr<flatbuffers::Offset<fb::TensorType>> type =
        tensorType(func, value);
    if (failed(describe(attrs, roles::kOutput, role, global)) || failed(type))
      return failure();
    std::string name = roles::nameOf(attrs).str();
    if (name.empty())
      name = "output" + std::to_string(index);
    results.push_back(fb::CreateResultDirect(
        fbb, name.c_str(), role.c_str(), *type, global,
        placement ? stageOf(placement->holds(value)) : -1));
  }

  // The steps with their buffers first, then each all-reduce's wait (the
  // first step that reads one of its outputs, directly or through views),
  // then the steps in order.
  SmallVector<std::pair<Operation *, StepBuffers>> planned;
  for (Operation &op : block) {
    if (isa<ReshapeOp, ConstantOp>(op))
      continue;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (unsigned index = 0; index < ret.getNumOperands(); ++index)
        if (plan.placement().needsCopy(index))
          return ret.emitOpError()
                 << "returns operand #" << index
                 << " without the dlc.plan.copy its result needs; run "
                    "dlc-lower-to-plan before writing the module";
      continue;
    }
    FailureOr<std::optional<StepBuffers>> buffers = plan.stepBuffers(&op);
    if (failed(buffers))
      return failure();
    if (!*buffers) {
      if (isa<PlanMatmulOp, PlanConvOp>(op))
        continue;
      return op.emitOpError()
             << "is no execution-plan op; run dlc-plan-pipeline (codegen/"
                "plan) before writing the module";
    }
    planned.emplace_back(&op, std::move(**buffers));
  }
  llvm::DenseMap<Value, Operation *> reducedBy;
  std::function<void(Value, Operation *)> markReduced = [&](Value value,
                                                            Operation *reduce) {
    reducedBy[value] = reduce;
    for (Operation *user : value.getUsers())
      if (auto view = dyn_cast<ReshapeOp>(user))
        markReduced(view.getResult(), reduce);
  };
  llvm::DenseMap<Operation *, uint32_t> waits;
  for (auto [index, entry] : llvm::enumerate(planned)) {
    Operation *op = entry.first;
    for (Value operand : op->getOperands())
      if (auto it = reducedBy.find(operand); it != reducedBy.end())
        waits.try_emplace(it->second, static_cast<uint32_t>(index));
    if (isa<PlanAllReduceOp, ReduceScatterOp, AllGatherOp, PpTransferOp>(op))
      for (Value result : op->getResults())
        markReduced(result, op);
  }
  std::vector<flatbuffers::Offset<fb::Step>> steps;
  for (auto &[op, buffers] : planned) {
    stepStage =
        placement && !isa<PpTransferOp>(op) ? stageOf(placement->runs(op)) : -1;
    auto wait = waits.find(op);
    FailureOr<flatbuffers::Offset<fb::Step>> written =
        step(op, plan, buffers,
             wait != waits.end() ? wait->second
                                 : static_cast<uint32_t>(planned.size()));
    if (failed(written))
      return failure();
    steps.push_back(*written);
  }
  auto arenaSize = func->getAttrOfType<IntegerAttr>(kArenaSizeAttr).getInt();
  return fb::CreateFunctionDirect(fbb, func.getSymName().str().c_str(),
                                  &arguments, &results,
                                  static_cast<uint64_t>(arenaSize), &steps);
}

LogicalResult Writer::compileKernels(
    const std::string &source, std::vector<uint8_t> &sharedObject,
    std::vector<flatbuffers::Offset<fb::CudaBinary>> &binaries,
    std::string &ptx) {
  std::string error;
  if (options.target == Target::Cpu) {
    std::optional<std::string> object = compileSharedObject(
        source, options.hostCompiler, options.hostCpu, error);
    if (!object)
      return module.emitError() << error;
    sharedObject.assign(object->begin(), object->end());
    return success();
  }
  for (const std::string &arch : options.cudaArchitectures) {
    std::optional<std::string> cubin = compileCuda(source, arch, false, error);
    if (!cubin)
      return module.emitError() << error;
    // The driver loads the ELF image in place: aligned like every other
    // blob of the module (dlcm.fbs).
    auto name = fbb.CreateString(arch);
    fbb.ForceVectorAlignment(cubin->size(), 1, kBufferAlignment);
    auto bytes = fbb.CreateVector(
        reinterpret_cast<const uint8_t *>(cubin->data()), cubin->size());
    binaries.push_back(fb::CreateCudaBinary(fbb, name, bytes));
  }
  if (!options.cudaArchitectures.empty()) {
    std::string virtualArch = options.cudaArchitectures.front();
    virtualArch.replace(0, 3, "compute_");
    if (!virtualArch.empty() && virtualArch.back() == 'a')
      virtualArch.pop_back();
    std::optional<std::string> text =
        compileCuda(source, virtualArch, true, error);
    if (!text)
      return module.emitError() << error;
    ptx = *text;
  }
  return success();
}

FailureOr<std::vector<flatbuffers::Offset<fb::Function>>>
Writer::addFunctions() {
  FailureOr<Target> target = planTarget(module, "writing a module");
  if (failed(target))
    return failure();
  if (*target != options.target)
    return module.emitError()
           << "has an execution plan for another target than the module's";
  if (failed(addGlobals()))
    return failure();
  std::vector<flatbuffers::Offset<fb::Function>> functions;
  for (const std::string &name : options.functions) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func)
      return module.emitError() << "has no function @" << name << " to compile";
    FailureOr<flatbuffers::Offset<fb::Function>> function = addFunction(func);
    if (failed(function))
      return failure();
    functions.push_back(*function);
  }
  return functions;
}

std::string Writer::kernelSource() const {
  std::string source = kernelPrelude(options.target).str();
  for (const std::string &kernel : kernelSources)
    source += "\n" + kernel;
  return source;
}

FailureOr<std::string> Writer::source() {
  if (failed(addFunctions()))
    return failure();
  return kernelSource();
}

FailureOr<std::string> Writer::run() {
  FailureOr<std::vector<flatbuffers::Offset<fb::Function>>> functions =
      addFunctions();
  if (failed(functions))
    return failure();
  std::string source = kernelSource();
  std::vector<uint8_t> sharedObject;
  std::vector<flatbuffers::Offset<fb::CudaBinary>> binaries;
  std::string ptx;
  if (failed(compileKernels(source, sharedObject, binaries, ptx)))
    return failure();

  std::vector<flatbuffers::Offset<fb::Kernel>> kernels;
  for (const std::string &name : kernelNames)
    kernels.push_back(fb::CreateKernelDirect(fbb, name.c_str()));
  std::string fingerprint = globalsFingerprint(module);
  std::vector<uint8_t> onnx(options.onnxModel.begin(), options.onnxModel.end());
  uint32_t ranks = 1;
  if (auto attr = module->getAttrOfType<IntegerAttr>(roles::kDataParallelAttr))
    ranks = static_cast<uint32_t>(attr.getInt());
  auto root = fb::CreateModuleDirect(
      fbb, kModuleFormatVersion, options.producer.c_str(),
      options.modelName.c_str(), options.target == Target::Cpu ? "cpu" : "cuda",
      fingerprint.c_str(), &globals, &*functions, &constants, &kernels,
      source.c_str(), sharedObject.empty() ? nullptr : &sharedObject,
      binaries.empty() ? nullptr : &binaries,
      ptx.empty() ? nullptr : ptx.c_str(), options.trainingOptions.c_str(),
      onnx.empty() ? nullptr : &onnx, options.embedParameters,
      options.target == Target::Cuda && options.cudaAllowTf32,
      options.target == Target::Cuda && options.cudaAllowNondeterministic,
      ranks, static_cast<uint32_t>(tensorRanks),
      static_cast<uint32_t>(pipelineStages));
  fb::FinishModuleBuffer(fbb, root);
  return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

} // namespace

FailureOr<std::string>
mlir::dlc::codegen::writeModule(ModuleOp module,
                                const ModuleWriterOptions &options) {
  return Writer(module, options).run();
}

FailureOr<std::string>
mlir::dlc::codegen::generateKernelSource(ModuleOp module,
                                         const ModuleWriterOptions &options) {
  return Writer(module, options).source();
}
