//===- ModuleWriter.cpp - dlc IR to a .dlcm compiled module ---------------===//
//
// Walks each compiled function's top-level ops in order, which is the
// execution order of its plan:
//   dlc.fusion            -> a KernelStep running the fusion's kernel
//   dlc.matmul            -> a MatmulStep (a 2-D transpose feeding it only
//                            becomes the step's transposed flag: BLAS reads
//                            either layout); for CUDA, with the bias add
//                            (and ReLU) of the fusion that consumes it when
//                            that fusion is nothing else (cuBLASLt's
//                            epilogue: see epilogueOf)
//   conv / its gradients  -> a ConvStep
//   dlc.reshape           -> nothing (a view, BufferPlacement)
//   dlc.constant          -> a module constant
//   func.return           -> CopySteps for results that are not computed in
//                            place
// Identical kernels (same body and shapes, as the repeated blocks of a
// ResNet produce) are generated and compiled once. For CUDA, independent
// kernel steps then merge into groups that one kernel runs in one launch
// (HorizontalFusion.h), as a training step's per-parameter updates do.
//
//===----------------------------------------------------------------------===//

#include "codegen/ModuleWriter.h"
#include "codegen/AttentionKernels.h"
#include "codegen/HorizontalFusion.h"
#include "codegen/HostCompiler.h"
#include "codegen/Nvrtc.h"
#include "ir/Locations.h"
#include "ir/ShapeUtils.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"
#include "passes/fusion/Fusion.h"
#include "passes/memory/BufferPlacement.h"
#include "runtime/module/Format.h"
#include "runtime/module/dlcm_generated.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

#include <optional>

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

/// The buffers a matmul step reads: a transpose feeding only matmuls is a
/// view (BufferPlacement), read through the transposed flag.
struct MatmulOperands {
  Value lhs, rhs;
  bool lhsTransposed = false, rhsTransposed = false;
};

MatmulOperands matmulOperands(MatmulOp op) {
  MatmulOperands operands{op.getLhs(), op.getRhs()};
  if (auto fusion = operands.lhs.getDefiningOp<FusionOp>())
    if (Value source = transposedMatmulOperand(fusion)) {
      operands.lhs = source;
      operands.lhsTransposed = true;
    }
  if (auto fusion = operands.rhs.getDefiningOp<FusionOp>())
    if (Value source = transposedMatmulOperand(fusion)) {
      operands.rhs = source;
      operands.rhsTransposed = true;
    }
  return operands;
}

/// A fusion whose whole work a CUDA matmul step takes over (epilogueOf).
struct FoldedEpilogue {
  /// Null when the matmul's consumer stays a kernel of its own.
  FusionOp fusion;
  fb::MatmulEpilogue kind = fb::MatmulEpilogue::None;
  /// The fusion's result, which the step writes, and its bias operand.
  Value result, bias;
};

/// The name kernels are emitted under until added (Writer::addKernel), so
/// that identical kernels have identical sources.
constexpr char kPlaceholder[] = "DLC_KERNEL_NAME";

/// What a function's plan holds at a step before the step is written: the
/// step as written, or (for a kernel step, which horizontal fusion may
/// merge with others) the fusion whose kernel it runs, as emitted but not
/// yet named.
struct PlannedWork {
  flatbuffers::Offset<fb::Step> written;
  FusionOp fusion;
  EmittedKernel kernel;
};

/// The bytes `v` occupies, as a step's buffer size.
uint64_t bytesOf(Value v) {
  return static_cast<uint64_t>(BufferPlacement::byteSize(v));
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
  /// The index of the kernel whose source (emitted as kPlaceholder) is
  /// `source`, adding it under `header` (a comment saying where it comes
  /// from) when no kernel has that source yet.
  uint32_t addKernel(const std::string &source, const std::string &header);
  /// The kernel step running kernel `index` (as emitted: `kernel`) over
  /// `buffers`.
  flatbuffers::Offset<fb::Step> kernelStep(uint32_t index,
                                           const EmittedKernel &kernel,
                                           const StepBuffers &buffers,
                                           const std::string &location);
  /// Writes the step of `group` (horizontal fusion's) of the plan `work`.
  FailureOr<flatbuffers::Offset<fb::Step>>
  writeGroup(const StepGroup &group, llvm::ArrayRef<PlannedWork> work);
  FailureOr<flatbuffers::Offset<fb::TensorType>> tensorType(Operation *where,
                                                            Value v);
  /// For CUDA, the fusion consuming `op` whose bias add (and ReLU) the
  /// matmul step applies instead (see the definition for when).
  FailureOr<FoldedEpilogue> epilogueOf(MatmulOp op,
                                       const BufferPlacement &placement);
  /// The step of `op`, writing `epilogue.fusion`'s result with its
  /// epilogue applied when there is one, and its buffers (`buffers`).
  FailureOr<flatbuffers::Offset<fb::Step>>
  matmulStep(MatmulOp op, const BufferPlacement &placement,
             const FoldedEpilogue &epilogue, StepBuffers &buffers);
  FailureOr<flatbuffers::Offset<fb::Step>>
  convStep(Operation *op, const BufferPlacement &placement,
           StepBuffers &buffers);
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
                                       initial, copyOf));
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

uint32_t Writer::addKernel(const std::string &source,
                           const std::string &header) {
  auto [it, inserted] = kernelBySource.try_emplace(
      source, static_cast<uint32_t>(kernelNames.size()));
  if (!inserted)
    return it->second;
  std::string name = "dlc_kernel_" + std::to_string(kernelNames.size());
  std::string named = source;
  named.replace(named.find(kPlaceholder), sizeof(kPlaceholder) - 1, name);
  kernelNames.push_back(name);
  kernelSources.push_back(header + named);
  return it->second;
}

flatbuffers::Offset<fb::Step> Writer::kernelStep(uint32_t index,
                                                 const EmittedKernel &kernel,
                                                 const StepBuffers &buffers,
                                                 const std::string &location) {
  auto step = fb::CreateKernelStepDirect(
      fbb, index, &buffers.refs, kernel.iterations, kernel.grain,
      &buffers.bytes, buffers.outputs,
      static_cast<uint32_t>(kernel.threadsPerIteration));
  return fb::CreateStep(fbb, fb::StepKind::KernelStep, step.Union(),
                        fbb.CreateString(location));
}

FailureOr<flatbuffers::Offset<fb::Step>>
Writer::writeGroup(const StepGroup &group, ArrayRef<PlannedWork> work) {
  const PlannedWork &first = work[group.members.front()];
  FusionOp fusion = first.fusion;
  if (!fusion)
    return first.written;
  std::string location = describeLocation(fusion.getLoc());
  if (group.members.size() == 1)
    return kernelStep(addKernel(first.kernel.source, "// " + location + "\n"),
                      first.kernel, group.buffers, location);
  SmallVector<GroupMember> members;
  std::string header = "// " + std::to_string(group.members.size()) +
                       " kernels in one launch (HorizontalFusion.h):\n";
  for (auto [k, member] : llvm::enumerate(group.members)) {
    FusionOp memberFusion = work[member].fusion;
    members.push_back({memberFusion, group.slots[k]});
    header += "//   member " + std::to_string(k) + ": " +
              describeLocation(memberFusion.getLoc()) + "\n";
  }
  FailureOr<EmittedKernel> kernel =
      emitKernelGroup(members, group.buffers.refs.size(), kPlaceholder);
  if (failed(kernel))
    return failure();
  size_t others = group.members.size() - 1;
  return kernelStep(addKernel(kernel->source, header), *kernel, group.buffers,
                    location + " and " + std::to_string(others) +
                        (others == 1 ? " more kernel" : " more kernels"));
}

FailureOr<FoldedEpilogue> Writer::epilogueOf(MatmulOp op,
                                             const BufferPlacement &placement) {
  // cuBLASLt adds a bias vector of n elements to every row of every batch
  // (then applies ReLU) as it stores the product: the epilogue fusion's
  // kernel and its pass over the product disappear. markLibraryEpilogues
  // marked the matmuls whose only user is a fusion starting with such an
  // add (and a ReLU of it); the step takes the fusion over only when the
  // fusion computes nothing else. The matmul's own result buffer stays in
  // the memory plan, unwritten and unread (the fusion was its only user).
  // float32, bfloat16 and float16 products with a bias of their own type:
  // cuBLASLt's bias epilogues take those (llm.c trains GPT-2 with bfloat16
  // ones); a 16-bit sum is then rounded once, not after the product and
  // again after the add as the IR says, which is within its rounding.
  // float64 products keep their kernel until a GPU run shows that cuBLASLt
  // has algorithms with a bias epilogue for them (its heuristics failing
  // would leave the step without one).
  FoldedEpilogue none;
  auto mark = op->getAttrOfType<StringAttr>(kEpilogueAttr);
  Value product = op.getResult();
  Type element = getElementTypeOrSelf(product.getType());
  if (options.target != Target::Cuda || !mark || !product.hasOneUse() ||
      BufferPlacement::byteSize(product) == 0 ||
      !(element.isF32() || element.isBF16() || element.isF16()))
    return none;
  auto fusion = dyn_cast<FusionOp>(*product.getUsers().begin());
  if (!fusion || fusion->getBlock() != op->getBlock() ||
      fusion.getNumResults() != 1 ||
      fusion.getResult(0).getType() != product.getType())
    return none;
  Block &body = fusion.getBody().front();
  Value x = body.getArgument(product.getUses().begin()->getOperandNumber());
  auto add = x.hasOneUse() ? dyn_cast<AddOp>(*x.getUsers().begin()) : AddOp();
  if (!add)
    return none;
  auto biasArgument =
      dyn_cast<BlockArgument>(add.getLhs() == x ? add.getRhs() : add.getLhs());
  auto resultType = cast<RankedTensorType>(op.getType());
  int64_t n = resultType.getDimSize(resultType.getRank() - 1);
  if (!biasArgument || biasArgument == x)
    return none;
  auto biasType = cast<RankedTensorType>(biasArgument.getType());
  if (biasType.getElementType() != resultType.getElementType() ||
      biasType.getNumElements() != n ||
      (n != 1 && (biasType.getRank() == 0 ||
                  biasType.getDimSize(biasType.getRank() - 1) != n)))
    return none;
  // Nothing but the epilogue: the add alone, or the add and its ReLU
  // yielding the fusion's result. The mark says the sum has a ReLU user,
  // max(sum, 0) or select(sum <= 0, 0, sum); with no other op but the
  // select's compare (and splat constants), that user is the result.
  SmallVector<Operation *> computing;
  for (Operation &o : body.without_terminator())
    if (!isa<ConstantOp>(o))
      computing.push_back(&o);
  Operation *last = body.getTerminator()->getOperand(0).getDefiningOp();
  auto compares =
      llvm::count_if(computing, [](Operation *o) { return isa<CompareOp>(o); });
  fb::MatmulEpilogue kind;
  if (mark.getValue() == "bias" && last == add && computing.size() == 1)
    kind = fb::MatmulEpilogue::Bias;
  else if (mark.getValue() == "bias_relu" && last &&
           llvm::is_contained(add->getUsers(), last) &&
           ((isa<MaxOp>(last) && computing.size() == 2) ||
            (isa<SelectOp>(last) && computing.size() == 3 && compares == 1)))
    kind = fb::MatmulEpilogue::BiasRelu;
  else
    return none;
  // The step runs where the matmul is, writing the fusion's result early:
  // only steps that write nothing may come between (views), and the result
  // must not share memory with what the step reads (the planner lets it
  // reuse the matmul's operands, which die before the fusion).
  for (Operation *between = op->getNextNode(); between != fusion.getOperation();
       between = between->getNextNode()) {
    auto view = dyn_cast<FusionOp>(between);
    if (!isa<ReshapeOp, ConstantOp>(between) &&
        !(view && transposedMatmulOperand(view)))
      return none;
  }
  Value bias = fusion.getInputs()[biasArgument.getArgNumber()];
  MatmulOperands operands = matmulOperands(op);
  Value result = fusion.getResult(0);
  FailureOr<fb::BufferRef> resultRef = refOf(result, placement);
  if (failed(resultRef))
    return failure();
  for (Value read : {operands.lhs, operands.rhs, bias}) {
    FailureOr<fb::BufferRef> ref = refOf(read, placement);
    if (failed(ref))
      return failure();
    if (overlaps(*ref, bytesOf(read), *resultRef, bytesOf(result)))
      return none;
  }
  return FoldedEpilogue{fusion, kind, result, bias};
}

FailureOr<flatbuffers::Offset<fb::Step>>
Writer::matmulStep(MatmulOp op, const BufferPlacement &placement,
                   const FoldedEpilogue &epilogue, StepBuffers &buffers) {
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
  MatmulOperands operands = matmulOperands(op);
  FailureOr<fb::BufferRef> lhsRef = refOf(operands.lhs, placement);
  FailureOr<fb::BufferRef> rhsRef = refOf(operands.rhs, placement);
  Value result = epilogue.fusion ? epilogue.result : op.getResult();
  FailureOr<fb::BufferRef> resultRef = refOf(result, placement);
  FailureOr<fb::ElementType> element = elementTypeOf(op, op.getType());
  if (failed(lhsRef) || failed(rhsRef) || failed(resultRef) || failed(element))
    return failure();
  // bfloat16 and float16 products accumulate in float32 (cuBLASLt's
  // compute type, oneDNN's accumulator).
  if (*element != fb::ElementType::F32 && *element != fb::ElementType::F64 &&
      *element != fb::ElementType::BF16 && *element != fb::ElementType::F16)
    return op.emitOpError()
           << "on " << resultType.getElementType()
           << " has no compiled kernel (float32, float64, bfloat16, float16)";
  buffers = {
      {*lhsRef, *rhsRef}, {bytesOf(operands.lhs), bytesOf(operands.rhs)}, 1};
  std::optional<fb::BufferRef> biasRef;
  if (epilogue.fusion) {
    FailureOr<fb::BufferRef> ref = refOf(epilogue.bias, placement);
    if (failed(ref))
      return failure();
    biasRef = *ref;
    buffers.refs.push_back(*ref);
    buffers.bytes.push_back(bytesOf(epilogue.bias));
  }
  buffers.refs.push_back(*resultRef);
  buffers.bytes.push_back(bytesOf(result));
  auto step = fb::CreateMatmulStep(
      fbb, *element, &*lhsRef, &*rhsRef, &*resultRef, batch, m, n, k,
      *lhsStride, *rhsStride, operands.lhsTransposed, operands.rhsTransposed,
      epilogue.kind, biasRef ? &*biasRef : nullptr);
  return fb::CreateStep(fbb, fb::StepKind::MatmulStep, step.Union(),
                        fbb.CreateString(describeLocation(op.getLoc())));
}

FailureOr<flatbuffers::Offset<fb::Step>>
Writer::convStep(Operation *op, const BufferPlacement &placement,
                 StepBuffers &buffers) {
  fb::ConvKind kind;
  Value x, w, y;
  ArrayRef<int64_t> stride, padLow, padHigh, dilation;
  int64_t groups;
  if (auto conv = dyn_cast<ConvOp>(op)) {
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
  if (*element != fb::ElementType::F32 && *element != fb::ElementType::F64 &&
      *element != fb::ElementType::BF16 && *element != fb::ElementType::F16)
    return op->emitOpError() << "has no compiled kernel for its element type "
                                "(float32, float64, bfloat16, float16)";
  // The step writes one of x, w and y and reads the other two.
  Value values[] = {x, w, y};
  fb::BufferRef refs[] = {*xRef, *wRef, *yRef};
  size_t written = kind == fb::ConvKind::Forward        ? 2
                   : kind == fb::ConvKind::BackwardData ? 0
                                                        : 1;
  buffers = {{}, {}, 1};
  for (size_t i : {(written + 1) % 3, (written + 2) % 3, written}) {
    buffers.refs.push_back(refs[i]);
    buffers.bytes.push_back(bytesOf(values[i]));
  }
  // The step lists shapes channels-first; channels_last says how the
  // buffers hold them.
  bool channelsLast = op->hasAttr("channels_last");
  auto logicalShape = [&](Value v) {
    std::vector<int64_t> shape = shapeVector(v);
    if (!channelsLast)
      return shape;
    SmallVector<int64_t> first = channelsFirstShape(shape);
    return std::vector<int64_t>(first.begin(), first.end());
  };
  std::vector<int64_t> xShape = logicalShape(x), wShape = logicalShape(w),
                       yShape = logicalShape(y);
  std::vector<int64_t> strideV(stride.begin(), stride.end()),
      padLowV(padLow.begin(), padLow.end()),
      padHighV(padHigh.begin(), padHigh.end()),
      dilationV(dilation.begin(), dilation.end());
  auto step = fb::CreateConvStepDirect(
      fbb, kind, *element, &*xRef, &*wRef, &*yRef, &xShape, &wShape, &yShape,
      &strideV, &padLowV, &padHighV, &dilationV, groups, channelsLast);
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

  // The plan in IR order: each step as horizontal fusion sees it (`plan`)
  // and what it runs (`work`). For CUDA, kernels that may run in a group
  // have the class of their threads per iteration; the CPU's kernels run
  // alone, leaving the plan as it is.
  std::vector<StepSummary> plan;
  std::vector<PlannedWork> work;
  auto addWritten = [&](flatbuffers::Offset<fb::Step> step,
                        StepBuffers buffers) {
    plan.push_back({std::move(buffers), 0});
    work.push_back({step, FusionOp(), EmittedKernel()});
  };
  // A kernel's buffers: its operands then its results.
  auto kernelBuffers = [&](ValueRange operands,
                           ValueRange results) -> FailureOr<StepBuffers> {
    StepBuffers buffers{{}, {}, static_cast<unsigned>(results.size())};
    for (Value v : llvm::concat<Value>(operands, results)) {
      FailureOr<fb::BufferRef> ref = refOf(v, placement);
      if (failed(ref))
        return failure();
      buffers.refs.push_back(*ref);
      buffers.bytes.push_back(bytesOf(v));
    }
    return buffers;
  };
  // Fusions whose work a matmul step does (epilogueOf).
  llvm::DenseSet<Operation *> folded;
  // One op's plan steps; failure when it has no compiled path (its own
  // diagnostic says why).
  auto planOp = [&](Operation &op) -> LogicalResult {
    std::string location = describeLocation(op.getLoc());
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      if (transposedMatmulOperand(fusion) || folded.contains(fusion))
        return success();
      FailureOr<EmittedKernel> kernel =
          emitKernel(fusion, kPlaceholder, options.target);
      if (failed(kernel))
        return failure();
      FailureOr<StepBuffers> buffers =
          kernelBuffers(fusion.getInputs(), fusion.getResults());
      if (failed(buffers))
        return failure();
      unsigned groupClass =
          options.target == Target::Cuda && kernel->iterations > 0
              ? static_cast<unsigned>(kernel->threadsPerIteration)
              : 0;
      plan.push_back({std::move(*buffers), groupClass});
      work.push_back({{}, fusion, std::move(*kernel)});
    } else if (isa<MatmulOp, ConvOp, ConvGradInputOp, ConvGradFilterOp>(op) &&
               BufferPlacement::byteSize(op.getResult(0)) == 0) {
      // An empty result has nothing to compute.
      return success();
    } else if (auto matmul = dyn_cast<MatmulOp>(op)) {
      FailureOr<FoldedEpilogue> epilogue = epilogueOf(matmul, placement);
      if (failed(epilogue))
        return failure();
      StepBuffers buffers;
      FailureOr<flatbuffers::Offset<fb::Step>> step =
          matmulStep(matmul, placement, *epilogue, buffers);
      if (failed(step))
        return failure();
      addWritten(*step, std::move(buffers));
      if (epilogue->fusion)
        folded.insert(epilogue->fusion);
    } else if (isa<ConvOp, ConvGradInputOp, ConvGradFilterOp>(op)) {
      StepBuffers buffers;
      FailureOr<flatbuffers::Offset<fb::Step>> step =
          convStep(&op, placement, buffers);
      if (failed(step))
        return failure();
      addWritten(*step, std::move(buffers));
    } else if (isa<AttentionOp, AttentionGradOp>(op)) {
      // Hand-tiled kernels of their own (codegen/AttentionKernels.h), over
      // the op's operands then results; never in a horizontal group.
      FailureOr<EmittedKernel> kernel = emitAttentionKernel(&op, kPlaceholder);
      if (failed(kernel))
        return failure();
      FailureOr<StepBuffers> buffers =
          kernelBuffers(op.getOperands(), op.getResults());
      if (failed(buffers))
        return failure();
      auto step = kernelStep(addKernel(kernel->source, "// " + location + "\n"),
                             *kernel, *buffers, location);
      addWritten(step, std::move(*buffers));
    } else if (isa<ReshapeOp, ConstantOp>(op)) {
      return success();
    } else if (isa<func::ReturnOp>(op)) {
      for (auto [index, value] : llvm::enumerate(op.getOperands())) {
        if (!placement.needsCopy(index))
          continue;
        FailureOr<fb::BufferRef> source = refOf(value, placement);
        if (failed(source))
          return failure();
        fb::BufferRef destination(fb::BufferKind::Result,
                                  static_cast<uint32_t>(index), 0);
        auto step =
            fb::CreateCopyStep(fbb, &*source, &destination, bytesOf(value));
        addWritten(
            fb::CreateStep(fbb, fb::StepKind::CopyStep, step.Union(),
                           fbb.CreateString(location)),
            {{*source, destination}, {bytesOf(value), bytesOf(value)}, 1});
      }
    } else {
      return op.emitOpError()
             << "has no compiled kernel yet (it is not in a dlc.fusion and "
                "is no library op)";
    }
    return success();
  };
  // Every op without a compiled path is reported in one error, as autodiff
  // reports every op without a gradient rule: each op's diagnostic is
  // caught and listed.
  SmallVector<std::string> refused;
  {
    ScopedDiagnosticHandler catcher(func.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      refused.push_back(describeLocation(d.getLocation()) + ": " + d.str());
      return success();
    });
    for (Operation &op : block)
      if (failed(planOp(op)) && refused.empty())
        refused.push_back(describeLocation(op.getLoc()) + ": failed");
  }
  if (!refused.empty()) {
    InFlightDiagnostic diag = func.emitOpError()
                              << "has " << refused.size()
                              << (refused.size() == 1 ? " op" : " ops")
                              << " without a compiled path on "
                              << (options.target == Target::Cpu ? "the CPU"
                                                                : "CUDA")
                              << ": ";
    llvm::interleave(refused, diag, "; ");
    return failure();
  }
  std::vector<flatbuffers::Offset<fb::Step>> steps;
  for (const StepGroup &group : groupSteps(plan)) {
    FailureOr<flatbuffers::Offset<fb::Step>> step = writeGroup(group, work);
    if (failed(step))
      return failure();
    steps.push_back(*step);
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
    fbb.ForceVectorAlignment(cubin->size(), 1, ::dlc::kBufferAlignment);
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
      onnx.empty() ? nullptr : &onnx, options.embedParameters,
      options.target == Target::Cuda && options.cudaAllowTf32,
      options.target == Target::Cuda && options.cudaAllowNondeterministic);
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
