//===- ModuleWriter.cpp - dlc IR to a .dlcm compiled module ---------------===//
//
// Walks each compiled function's top-level ops in order, which is the
// execution order of its plan:
//   dlc.fusion            -> a KernelStep running the fusion's kernel
//   dlc.matmul            -> a MatmulStep (a 2-D transpose feeding it only
//                            becomes the step's transposed flag: BLAS reads
//                            either layout)
//   conv / its gradients  -> a ConvStep
//   dlc.reshape           -> nothing (a view, BufferPlacement)
//   dlc.constant          -> a module constant
//   func.return           -> CopySteps for results that are not computed in
//                            place
// Identical kernels (same body and shapes, as the repeated blocks of a
// ResNet produce) are generated and compiled once.
//
//===----------------------------------------------------------------------===//

#include "codegen/ModuleWriter.h"
#include "codegen/HostCompiler.h"
#include "codegen/Nvrtc.h"
#include "ir/Locations.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"
#include "passes/memory/BufferPlacement.h"
#include "runtime/module/Format.h"
#include "runtime/module/dlcm_generated.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::codegen;
namespace fb = ::dlc::fb;

namespace {

FailureOr<fb::ElementType> elementTypeOf(Operation *where, Type type) {
  FailureOr<::dlc::DType> dtype = dtypeOf(getElementTypeOrSelf(type));
  if (failed(dtype))
    return where->emitOpError() << "has a value of type " << type
                                << ", which compiled modules do not store";
  return static_cast<fb::ElementType>(static_cast<uint8_t>(*dtype));
}

std::vector<int64_t> shapeVector(Value v) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return {shape.begin(), shape.end()};
}

class Writer {
public:
  Writer(ModuleOp module, const ModuleWriterOptions &options)
      : module(module), options(options) {}

  FailureOr<std::string> run();
  /// Plans the functions and returns the kernel source only.
  FailureOr<std::string> source();

private:
  LogicalResult addGlobals();
  /// Globals, then every function's plan, generating its kernels.
  FailureOr<std::vector<flatbuffers::Offset<fb::Function>>> addFunctions();
  std::string kernelSource() const;
  FailureOr<flatbuffers::Offset<fb::Function>> addFunction(func::FuncOp func);
  FailureOr<fb::BufferRef> refOf(Value v, const BufferPlacement &placement);
  /// The index of `fusion`'s kernel, and the kernel as emitted.
  FailureOr<std::pair<uint32_t, EmittedKernel>> kernelFor(FusionOp fusion);
  FailureOr<flatbuffers::Offset<fb::TensorType>> tensorType(Operation *where,
                                                            Value v);
  FailureOr<flatbuffers::Offset<fb::Step>>
  matmulStep(MatmulOp op, const BufferPlacement &placement);
  FailureOr<flatbuffers::Offset<fb::Step>>
  convStep(Operation *op, const BufferPlacement &placement);
  /// Compiles `source` (kernelSource()) for the target.
  LogicalResult
  compileKernels(const std::string &source, std::vector<uint8_t> &sharedObject,
                 std::vector<flatbuffers::Offset<fb::CudaBinary>> &binaries,
                 std::string &ptx);

  ModuleOp module;
  const ModuleWriterOptions &options;
  flatbuffers::FlatBufferBuilder fbb{1 << 20};
  std::vector<flatbuffers::Offset<fb::Global>> globals;
  llvm::StringMap<int> globalIndex;
  std::string fingerprintText;
  std::vector<flatbuffers::Offset<fb::Constant>> constants;
  llvm::DenseMap<Value, uint32_t> constantIndex;
  /// Generated kernels: names, sources and a map from source (with a
  /// placeholder name) to index, for deduplication.
  std::vector<std::string> kernelNames;
  std::vector<std::string> kernelSources;
  std::map<std::string, uint32_t> kernelBySource;
};

LogicalResult Writer::addGlobals() {
  // A global's role is the one its function arguments give it.
  llvm::StringMap<std::string> roles;
  for (auto func : module.getOps<func::FuncOp>())
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      DictionaryAttr attrs = func.getArgAttrDict(i);
      StringRef role = roles::roleOf(attrs);
      if (roles::isGlobalRole(role))
        roles.try_emplace(roles::nameOf(attrs), role.str());
    }
  for (GlobalOp global : module.getOps<GlobalOp>()) {
    StringRef name = global.getSymName();
    auto type = cast<RankedTensorType>(global.getType());
    FailureOr<::dlc::DType> dtype = dtypeOf(type.getElementType());
    if (failed(dtype))
      return global.emitOpError() << "@" << name << " has type " << type
                                  << ", which compiled modules do not store";
    std::string role = roles.lookup(name);
    if (role.empty())
      role = roles::kState.str();
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> initial;
    // All-zero values (optimizer state) are left out: the runtime starts
    // globals without one at zero.
    auto splat = dyn_cast_or_null<DenseElementsAttr>(
        global.getInitialValue().value_or(nullptr));
    bool zero = splat && splat.isSplat() &&
                (isa<FloatType>(splat.getElementType())
                     ? splat.getSplatValue<APFloat>().isPosZero()
                     : splat.getSplatValue<APInt>().isZero());
    if (options.embedParameters && global.getInitialValue() && !zero) {
      FailureOr<::dlc::Tensor> value =
          tensorFromAttr(*global.getInitialValue());
      if (failed(value))
        return global.emitOpError()
               << "@" << name << " has an initial value that cannot be read";
      fbb.ForceVectorAlignment(value->byteSize(), 1, ::dlc::kBufferAlignment);
      initial = fbb.CreateVector(
          reinterpret_cast<const uint8_t *>(value->bytes()), value->byteSize());
    }
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    auto tensorType = fb::CreateTensorTypeDirect(
        fbb, static_cast<fb::ElementType>(static_cast<uint8_t>(*dtype)),
        &shape);
    globalIndex[name] = static_cast<int>(globals.size());
    globals.push_back(fb::CreateGlobal(fbb, fbb.CreateString(name.str()),
                                       fbb.CreateString(role), tensorType,
                                       initial));
    llvm::raw_string_ostream os(fingerprintText);
    os << name << '|' << role << '|' << ::dlc::dtypeName(*dtype) << '|';
    llvm::interleave(shape, os, ",");
    os << ';';
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

FailureOr<fb::BufferRef> Writer::refOf(Value v,
                                       const BufferPlacement &placement) {
  Value base = placement.base(v);
  const Placement &p = placement.of(base);
  switch (p.kind) {
  case Placement::Kind::Argument:
    return fb::BufferRef(fb::BufferKind::Argument, p.index, 0);
  case Placement::Kind::Result:
    return fb::BufferRef(fb::BufferKind::Result, p.index, 0);
  case Placement::Kind::Constant: {
    auto it = constantIndex.find(base);
    if (it != constantIndex.end())
      return fb::BufferRef(fb::BufferKind::Constant, it->second, 0);
    auto constant = base.getDefiningOp<ConstantOp>();
    FailureOr<::dlc::Tensor> value = tensorFromAttr(constant.getValue());
    if (failed(value))
      return constant.emitOpError() << "has a value that cannot be read";
    FailureOr<flatbuffers::Offset<fb::TensorType>> type =
        tensorType(constant, base);
    if (failed(type))
      return failure();
    fbb.ForceVectorAlignment(value->byteSize(), 1, ::dlc::kBufferAlignment);
    auto data = fbb.CreateVector(
        reinterpret_cast<const uint8_t *>(value->bytes()), value->byteSize());
    uint32_t index = static_cast<uint32_t>(constants.size());
    constants.push_back(fb::CreateConstant(fbb, *type, data));
    constantIndex[base] = index;
    return fb::BufferRef(fb::BufferKind::Constant, index, 0);
  }
  case Placement::Kind::Arena: {
    Operation *def = base.getDefiningOp();
    auto offsets = def->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttr);
    unsigned resultNumber = cast<OpResult>(base).getResultNumber();
    if (!offsets || offsets.size() <= static_cast<int64_t>(resultNumber) ||
        offsets[resultNumber] < 0)
      return def->emitOpError()
             << "has no arena offset; run dlc-plan-memory before codegen";
    return fb::BufferRef(fb::BufferKind::Arena, 0,
                         static_cast<uint64_t>(offsets[resultNumber]));
  }
  case Placement::Kind::View:
    break;
  }
  llvm_unreachable("views resolve to their base");
}

FailureOr<std::pair<uint32_t, EmittedKernel>>
Writer::kernelFor(FusionOp fusion) {
  static constexpr char kPlaceholder[] = "DLC_KERNEL_NAME";
  FailureOr<EmittedKernel> kernel =
      emitKernel(fusion, kPlaceholder, options.target);
  if (failed(kernel))
    return failure();
  auto [it, inserted] = kernelBySource.try_emplace(
      kernel->source, static_cast<uint32_t>(kernelNames.size()));
  if (!inserted)
    return std::make_pair(it->second, *kernel);
  std::string name = "dlc_kernel_" + std::to_string(kernelNames.size());
  std::string source = kernel->source;
  source.replace(source.find(kPlaceholder), sizeof(kPlaceholder) - 1, name);
  std::string header = "// " + describeLocation(fusion.getLoc()) + "\n";
  kernelNames.push_back(name);
  kernelSources.push_back(header + source);
  return std::make_pair(it->second, *kernel);
}

FailureOr<flatbuffers::Offset<fb::Step>>
Writer::matmulStep(MatmulOp op, const BufferPlacement &placement) {
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t m = lhsType.getDimSize(lhsType.getRank() - 2);
  int64_t k = lhsType.getDimSize(lhsType.getRank() - 1);
  int64_t n = rhsType.getDimSize(rhsType.getRank() - 1);
  int64_t batch = resultType.getNumElements() / std::max<int64_t>(1, m * n);
  auto batchStride = [&](RankedTensorType type,
                         int64_t matrix) -> FailureOr<int64_t> {
    int64_t count = type.getNumElements() / std::max<int64_t>(1, matrix);
    if (count == batch)
      return matrix;
    if (count == 1)
      return 0;
    return op.emitOpError()
           << "broadcasts only some batch dimensions of an operand; compiled "
              "matmuls take full or no batch dimensions";
  };
  if (k == 0)
    return op.emitOpError() << "contracts over an empty dimension; compiled "
                               "matmuls need k >= 1";
  FailureOr<int64_t> lhsStride = batchStride(lhsType, m * k);
  FailureOr<int64_t> rhsStride = batchStride(rhsType, k * n);
  if (failed(lhsStride) || failed(rhsStride))
    return failure();
  // A transpose feeding only matmuls is a view (BufferPlacement): read its
  // input with the transposed flag.
  Value lhs = op.getLhs(), rhs = op.getRhs();
  bool lhsTransposed = false, rhsTransposed = false;
  if (auto fusion = lhs.getDefiningOp<FusionOp>())
    if (Value source = transposedMatmulOperand(fusion)) {
      lhs = source;
      lhsTransposed = true;
    }
  if (auto fusion = rhs.getDefiningOp<FusionOp>())
    if (Value source = transposedMatmulOperand(fusion)) {
      rhs = source;
      rhsTransposed = true;
    }
  FailureOr<fb::BufferRef> lhsRef = refOf(lhs, placement);
  FailureOr<fb::BufferRef> rhsRef = refOf(rhs, placement);
  FailureOr<fb::BufferRef> resultRef = refOf(op.getResult(), placement);
  FailureOr<fb::ElementType> element = elementTypeOf(op, op.getType());
  if (failed(lhsRef) || failed(rhsRef) || failed(resultRef) || failed(element))
    return failure();
  if (*element != fb::ElementType::F32 && *element != fb::ElementType::F64)
    return op.emitOpError() << "on " << resultType.getElementType()
                            << " has no compiled kernel (float32/float64)";
  auto step = fb::CreateMatmulStep(fbb, *element, &*lhsRef, &*rhsRef,
                                   &*resultRef, batch, m, n, k, *lhsStride,
                                   *rhsStride, lhsTransposed, rhsTransposed);
  return fb::CreateStep(fbb, fb::StepKind::MatmulStep, step.Union(),
                        fbb.CreateString(describeLocation(op.getLoc())));
}

FailureOr<flatbuffers::Offset<fb::Step>>
Writer::convStep(Operation *op, const BufferPlacement &placement) {
  fb::ConvKind kind;
  Value x, w, y;
  ArrayRef<int64_t> stride, padLow, padHigh, dilation;
  int64_t groups;
  if (auto conv = dyn_cast<ConvOp>(op)) {
    if (llvm::any_of(conv.getInputDilation(), [](int64_t d) { return d != 1; }))
      return op->emitOpError() << "with an input dilation (a transposed "
                                  "convolution) has no compiled kernel yet";
    kind = fb::ConvKind::Forward;
    x = conv.getInput(), w = conv.getFilter(), y = conv.getResult();
    stride = conv.getStride(), padLow = conv.getPadLow();
    padHigh = conv.getPadHigh(), dilation = conv.getDilation();
    groups = static_cast<int64_t>(conv.getGroups());
  } else if (auto grad = dyn_cast<ConvGradInputOp>(op)) {
    kind = fb::ConvKind::BackwardData;
    x = grad.getResult(), w = grad.getFilter(), y = grad.getGradOutput();
    stride = grad.getStride(), padLow = grad.getPadLow();
    padHigh = grad.getPadHigh(), dilation = grad.getDilation();
    groups = static_cast<int64_t>(grad.getGroups());
  } else {
    auto filter = cast<ConvGradFilterOp>(op);
    kind = fb::ConvKind::BackwardFilter;
    x = filter.getInput(), w = filter.getResult(), y = filter.getGradOutput();
    stride = filter.getStride(), padLow = filter.getPadLow();
    padHigh = filter.getPadHigh(), dilation = filter.getDilation();
    groups = static_cast<int64_t>(filter.getGroups());
  }
  FailureOr<fb::BufferRef> xRef = refOf(x, placement);
  FailureOr<fb::BufferRef> wRef = refOf(w, placement);
  FailureOr<fb::BufferRef> yRef = refOf(y, placement);
  FailureOr<fb::ElementType> element =
      elementTypeOf(op, op->getResult(0).getType());
  if (failed(xRef) || failed(wRef) || failed(yRef) || failed(element))
    return failure();
  if (*element != fb::ElementType::F32 && *element != fb::ElementType::F64)
    return op->emitOpError() << "has no compiled kernel for its element type "
                                "(float32/float64)";
  std::vector<int64_t> xShape = shapeVector(x), wShape = shapeVector(w),
                       yShape = shapeVector(y);
  std::vector<int64_t> strideV(stride.begin(), stride.end()),
      padLowV(padLow.begin(), padLow.end()),
      padHighV(padHigh.begin(), padHigh.end()),
      dilationV(dilation.begin(), dilation.end());
  auto step = fb::CreateConvStepDirect(
      fbb, kind, *element, &*xRef, &*wRef, &*yRef, &xShape, &wShape, &yShape,
      &strideV, &padLowV, &padHighV, &dilationV, groups);
  return fb::CreateStep(fbb, fb::StepKind::ConvStep, step.Union(),
                        fbb.CreateString(describeLocation(op->getLoc())));
}

FailureOr<flatbuffers::Offset<fb::Function>>
Writer::addFunction(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError() << "has more than one block; compiled "
                                 "functions are single-block";
  if (!func->hasAttr(kArenaSizeAttr))
    return func.emitOpError()
           << "has no memory plan; run dlc-plan-memory before codegen";
  Block &block = func.getBody().front();
  for (Operation &op : block)
    if (isa<GlobalLoadOp, GlobalStoreOp>(op))
      return op.emitOpError() << "reads or writes a global; compiled "
                                 "functions take globals as arguments (run "
                                 "dlc-functionalize)";
  BufferPlacement placement(func);

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
    results.push_back(
        fb::CreateResultDirect(fbb, name.c_str(), role.c_str(), *type, global));
  }

  std::vector<flatbuffers::Offset<fb::Step>> steps;
  for (Operation &op : block) {
    std::string location = describeLocation(op.getLoc());
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      if (transposedMatmulOperand(fusion))
        continue;
      FailureOr<std::pair<uint32_t, EmittedKernel>> kernel = kernelFor(fusion);
      if (failed(kernel))
        return failure();
      std::vector<fb::BufferRef> buffers;
      std::vector<uint64_t> bytes;
      for (Value v :
           llvm::concat<Value>(fusion.getInputs(), fusion.getResults())) {
        FailureOr<fb::BufferRef> ref = refOf(v, placement);
        if (failed(ref))
          return failure();
        buffers.push_back(*ref);
        bytes.push_back(static_cast<uint64_t>(BufferPlacement::byteSize(v)));
      }
      auto step = fb::CreateKernelStepDirect(
          fbb, kernel->first, &buffers, kernel->second.iterations,
          kernel->second.grain, &bytes, fusion.getNumResults());
      steps.push_back(fb::CreateStep(fbb, fb::StepKind::KernelStep,
                                     step.Union(), fbb.CreateString(location)));
    } else if (isa<MatmulOp, ConvOp, ConvGradInputOp, ConvGradFilterOp>(op) &&
               BufferPlacement::byteSize(op.getResult(0)) == 0) {
      // An empty result has nothing to compute.
      continue;
    } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
      FailureOr<flatbuffers::Offset<fb::Step>> step =
          matmulStep(matmul, placement);
      if (failed(step))
        return failure();
      steps.push_back(*step);
    } else if (isa<ConvOp, ConvGradInputOp, ConvGradFilterOp>(op)) {
      FailureOr<flatbuffers::Offset<fb::Step>> step = convStep(&op, placement);
      if (failed(step))
        return failure();
      steps.push_back(*step);
    } else if (isa<ReshapeOp, ConstantOp>(op)) {
      continue;
    } else if (isa<func::ReturnOp>(op)) {
      for (auto [index, value] : llvm::enumerate(op.getOperands())) {
        if (!placement.needsCopy(index))
          continue;
        FailureOr<fb::BufferRef> source = refOf(value, placement);
        if (failed(source))
          return failure();
        fb::BufferRef destination(fb::BufferKind::Result,
                                  static_cast<uint32_t>(index), 0);
        auto step = fb::CreateCopyStep(
            fbb, &*source, &destination,
            static_cast<uint64_t>(BufferPlacement::byteSize(value)));
        steps.push_back(fb::CreateStep(fbb, fb::StepKind::CopyStep,
                                       step.Union(),
                                       fbb.CreateString(location)));
      }
    } else {
      return op.emitOpError()
             << "has no compiled kernel yet (it is not in a dlc.fusion and "
                "is no library op)";
    }
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
    std::vector<uint8_t> bytes(cubin->begin(), cubin->end());
    binaries.push_back(fb::CreateCudaBinaryDirect(fbb, arch.c_str(), &bytes));
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
  char fingerprint[17];
  std::snprintf(fingerprint, sizeof(fingerprint), "%016llx",
                static_cast<unsigned long long>(
                    llvm::xxh3_64bits(llvm::StringRef(fingerprintText))));
  std::vector<uint8_t> onnx(options.onnxModel.begin(), options.onnxModel.end());
  auto root = fb::CreateModuleDirect(
      fbb, ::dlc::kModuleFormatVersion, options.producer.c_str(),
      options.modelName.c_str(), options.target == Target::Cpu ? "cpu" : "cuda",
      fingerprint, &globals, &*functions, &constants, &kernels, source.c_str(),
      sharedObject.empty() ? nullptr : &sharedObject,
      binaries.empty() ? nullptr : &binaries,
      ptx.empty() ? nullptr : ptx.c_str(), options.trainingOptions.c_str(),
      onnx.empty() ? nullptr : &onnx, options.embedParameters);
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
