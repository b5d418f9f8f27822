//===- Ops.cpp - dlc op verifiers, type inference and folders -------------===//
//
// Every op's static shape rule lives here, once: builders infer result types
// from it and the verifier checks parsed IR against it. Generic constant
// folding is not here but in ConstantFolding.cpp, which runs the reference
// evaluator so folding and evaluation can never disagree.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "ir/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dlc;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Formats a shape as "[2, 3]" for diagnostics.
std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// Infers the NumPy broadcast of `operands` with `elementType`.
LogicalResult inferBroadcast(std::optional<Location> loc, ValueRange operands,
                             Type elementType,
                             SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    ArrayRef<int64_t> next = tensorType(v).getShape();
    std::optional<SmallVector<int64_t>> b = broadcastShapes(shape, next);
    if (!b)
      return emitOptionalError(loc, "operand shapes ", shapeString(shape),
                               " and ", shapeString(next),
                               " are not broadcast-compatible");
    shape = *b;
  }
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

/// Checks that `indices` (gather_elements, scatter_elements) is no larger
/// than `data` outside `axis`, so every index position exists in `data`.
LogicalResult checkIndicesFit(std::optional<Location> loc,
                              RankedTensorType data, RankedTensorType indices,
                              int64_t axis) {
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && indices.getDimSize(d) > data.getDimSize(d))
      return emitOptionalError(loc, "indices dimension ", d, " (",
                               indices.getDimSize(d), ") exceeds the data's (",
                               data.getDimSize(d), ")");
  return success();
}

/// Checks that `axis` is in [0, rank).
LogicalResult checkAxis(std::optional<Location> loc, int64_t axis,
                        int64_t rank) {
  if (axis < 0 || axis >= rank)
    return emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                             rank);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

#include "ir/DLCOpsDialect.cpp.inc"

void DLCDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/DLCOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/PlanOps.cpp.inc"
      >();
  registerConstantFolding();
}

std::optional<MatmulEpilogue> mlir::dlc::epilogueMark(Operation *op) {
  auto mark = op->getAttrOfType<StringAttr>(kEpilogueAttr);
  return mark ? symbolizeMatmulEpilogue(mark.getValue()) : std::nullopt;
}

void mlir::dlc::setEpilogueMark(Operation *op, MatmulEpilogue epilogue) {
  op->setAttr(
      kEpilogueAttr,
      StringAttr::get(op->getContext(), stringifyMatmulEpilogue(epilogue)));
}

/// The names of an enum's cases 0..`last`, for messages: "a, b or c".
template <typename Enum, typename Stringify>
static std::string caseNames(uint32_t last, Stringify stringify) {
  std::string names;
  for (uint32_t i = 0, n = last; i <= n; ++i)
    names += (i == 0   ? ""
              : i == n ? " or "
                       : ", ") +
             stringify(static_cast<Enum>(i)).str();
  return names;
}

LogicalResult DLCDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attribute) {
  if (attribute.getName() != kEpilogueAttr)
    return success();
  auto name = dyn_cast<StringAttr>(attribute.getValue());
  std::optional<MatmulEpilogue> epilogue =
      name ? symbolizeMatmulEpilogue(name.getValue()) : std::nullopt;
  if (!epilogue || *epilogue == MatmulEpilogue::none)
    return op->emitOpError()
           << "has " << kEpilogueAttr << " = " << attribute.getValue()
           << "; an epilogue mark is \"bias\" or \"bias_relu\"";
  if (!isa<MatmulOp, ConvOp, PlanMatmulOp, PlanConvOp>(op))
    return op->emitOpError() << "has " << kEpilogueAttr
                             << ", which marks matmuls and convolutions only";
  return success();
}

/// Checks the dlc.* attributes of a function's argument or result `what`
/// ("argument #0").
static LogicalResult verifyValueAttribute(Operation *op, const Twine &what,
                                          NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  if (name == roles::kRoleAttr) {
    auto role = dyn_cast<StringAttr>(value);
    if (!role || !symbolizeRole(role.getValue()))
      return op->emitOpError()
             << what << " has " << name << " = " << value
             << "; a role is one of "
             << caseNames<Role>(getMaxEnumValForRole(),
                                [](Role r) { return stringifyRole(r); });
    return success();
  }
  if (name == roles::kNameAttr && !isa<StringAttr>(value))
    return op->emitOpError()
           << what << " has " << name << " = " << value << ", not a string";
  if ((name == roles::kNumClassesAttr || name == roles::kIgnoreIndexAttr) &&
      !isa<IntegerAttr>(value))
    return op->emitOpError()
           << what << " has " << name << " = " << value << ", not an integer";
  return success();
}

LogicalResult DLCDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                   unsigned index,
                                                   NamedAttribute attribute) {
  return verifyValueAttribute(op, "argument #" + Twine(index), attribute);
}

LogicalResult
DLCDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned index,
                                        NamedAttribute attribute) {
  return verifyValueAttribute(op, "result #" + Twine(index), attribute);
}

Operation *DLCDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

//===----------------------------------------------------------------------===//
// Constants and globals
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult GlobalOp::verify() {
  std::optional<ElementsAttr> init = getInitialValue();
  Type whole = getType();
  auto module = (*this)->getParentOfType<ModuleOp>();
  if (auto sharded = (*this)->getAttrOfType<TypeAttr>(roles::kShardedAttr)) {
    auto ranks =
        module ? module->getAttrOfType<IntegerAttr>(roles::kDataParallelAttr)
               : IntegerAttr();
    auto type = dyn_cast<RankedTensorType>(sharded.getValue());
    if (!ranks || ranks.getInt() < 2 || !type || !type.hasStaticShape() ||
        shardTypeOf(type, ranks.getInt()) != getType())
      return emitOpError() << "is marked " << roles::kShardedAttr << " = "
                           << sharded
                           << " but is not its ZeRO shard over the module's "
                              "data-parallel ranks";
  }
  // A tensor-parallel rank's slice starts as its part of the whole value. A
  // ZeRO shard of such a slice (dlc.sharded, the slice's type) is split
  // along the slice's dimension, and starts as its own initial value, the
  // same on every rank.
  if (Attribute attr = (*this)->getAttr(roles::kTpSplitAttr)) {
    std::optional<roles::TpSplit> split = roles::tpSplitFromAttr(attr);
    auto ranks =
        module ? module->getAttrOfType<IntegerAttr>(roles::kTensorParallelAttr)
               : IntegerAttr();
    auto sharded = (*this)->getAttrOfType<TypeAttr>(roles::kShardedAttr);
    auto type =
        dyn_cast<RankedTensorType>(sharded ? sharded.getValue() : getType());
    const char *what =
        sharded ? "the sharded value's type " : "the global's type ";
    if (!split || !type || !type.hasStaticShape() || split->dim < 0 ||
        split->dim >= type.getRank())
      return emitOpError() << roles::kTpSplitAttr << " = " << attr
                           << " must be a dimension of " << what
                           << (type ? Type(type) : getType())
                           << " (or [dimension, blocks])";
    if (split->groups < 1 || type.getDimSize(split->dim) % split->groups)
      return emitOpError() << roles::kTpSplitAttr << " = " << attr
                           << ": dimension " << split->dim << " of " << type
                           << " is not " << split->groups << " equal blocks";
    if (!ranks || ranks.getInt() < 1)
      return emitOpError() << "is split (" << roles::kTpSplitAttr
                           << ") in a module without "
                           << roles::kTensorParallelAttr;
    if (!sharded) {
      SmallVector<int64_t> shape(type.getShape());
      shape[split->dim] *= ranks.getInt();
      whole = type.clone(shape);
    }
  }
  if (init && init->getType() != whole)
    return emitOpError() << "initial value type " << init->getType()
                         << " does not match the global's "
                         << (whole == getType() ? "type " : "whole type ")
                         << whole;
  return success();
}

/// Checks that `op` names an existing dlc.global of type `type`.
static LogicalResult verifyGlobalUse(Operation *op,
                                     SymbolTableCollection &symbolTable,
                                     FlatSymbolRefAttr name, Type type) {
  auto global = symbolTable.lookupNearestSymbolFrom<GlobalOp>(op, name);
  if (!global)
    return op->emitOpError() << "refers to an unknown global " << name;
  if (global.getType() != type)
    return op->emitOpError()
           << "type " << type << " does not match the global's type "
           << global.getType();
  return success();
}

LogicalResult
GlobalLoadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGlobalUse(*this, symbolTable, getGlobalAttr(), getType());
}

LogicalResult
GlobalStoreOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyGlobalUse(*this, symbolTable, getGlobalAttr(),
                         getValue().getType());
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define DLC_BROADCAST_BINARY_INFERENCE(OP)                                     \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, OP::Adaptor adaptor,         \
      SmallVectorImpl<Type> &inferred) {                                       \
    return inferBroadcast(loc, {adaptor.getLhs(), adaptor.getRhs()},           \
                          tensorType(adaptor.getLhs()).getElementType(),       \
                          inferred);                                           \
  }
DLC_BROADCAST_BINARY_INFERENCE(AddOp)
DLC_BROADCAST_BINARY_INFERENCE(SubOp)
DLC_BROADCAST_BINARY_INFERENCE(MulOp)
DLC_BROADCAST_BINARY_INFERENCE(DivOp)
DLC_BROADCAST_BINARY_INFERENCE(RemOp)
DLC_BROADCAST_BINARY_INFERENCE(PowOp)
DLC_BROADCAST_BINARY_INFERENCE(MaxOp)
DLC_BROADCAST_BINARY_INFERENCE(MinOp)
DLC_BROADCAST_BINARY_INFERENCE(AndOp)
DLC_BROADCAST_BINARY_INFERENCE(OrOp)
DLC_BROADCAST_BINARY_INFERENCE(XorOp)
#undef DLC_BROADCAST_BINARY_INFERENCE

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferBroadcast(loc, {adaptor.getLhs(), adaptor.getRhs()},
                        IntegerType::get(context, 1), inferred);
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  return inferBroadcast(
      loc, {adaptor.getCondition(), adaptor.getOnTrue(), adaptor.getOnFalse()},
      tensorType(adaptor.getOnTrue()).getElementType(), inferred);
}

/// Whether `attr` is a splat constant equal to `value`; for floats, also of
/// the given sign (so that -0 and +0 differ).
static bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  if (isa<FloatType>(splat.getElementType())) {
    APFloat x = splat.getSplatValue<APFloat>();
    return x.convertToDouble() == value &&
           x.isNegative() == std::signbit(value);
  }
  if (isa<IntegerType>(splat.getElementType()))
    return splat.getSplatValue<APInt>().getSExtValue() ==
           static_cast<int64_t>(value);
  return false;
}

/// `operand` if it can stand for `result` (same type, so no broadcast).
static OpFoldResult identityFold(Value operand, Value result) {
  return operand.getType() == result.getType() ? OpFoldResult(operand)
                                               : OpFoldResult();
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // Integers: x + 0; floats: only x + -0 is exact for every x.
  double zero = isa<FloatType>(getType().getElementType()) ? -0.0 : 0.0;
  if (isSplatOf(adaptor.getRhs(), zero))
    return identityFold(getLhs(), getResult());
  if (isSplatOf(adaptor.getLhs(), zero))
    return identityFold(getRhs(), getResult());
  return {};
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return isSplatOf(adaptor.getRhs(), 0.0) ? identityFold(getLhs(), getResult())
                                          : OpFoldResult();
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1.0))
    return identityFold(getLhs(), getResult());
  if (isSplatOf(adaptor.getLhs(), 1.0))
    return identityFold(getRhs(), getResult());
  return {};
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return isSplatOf(adaptor.getRhs(), 1.0) ? identityFold(getLhs(), getResult())
                                          : OpFoldResult();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  int64_t in = tensorType(getInput()).getNumElements();
  int64_t out = getType().getNumElements();
  if (in != out)
    return emitOpError() << "cannot reshape " << in << " elements into " << out;
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) is one reshape of x.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != type.getRank())
    return emitOptionalError(loc, "permutation has ", perm.size(),
                             " entries for rank ", type.getRank());
  llvm::SmallBitVector seen(perm.size());
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= type.getRank() || seen.test(p))
      return emitOptionalError(loc, "permutation ", shapeString(perm),
                               " is not a permutation of 0..",
                               type.getRank() - 1);
    seen.set(p);
    shape.push_back(type.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  auto isIdentity = [](ArrayRef<int64_t> perm) {
    return llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()));
  };
  if (isIdentity(getPermutation()))
    return getInput();
  // A transpose of a transpose is one transpose: result dimension d is the
  // inner input's dimension inner[outer[d]].
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t d : getPermutation())
      composed.push_back(inner.getPermutation()[d]);
    if (isIdentity(composed))
      return inner.getInput();
    setPermutation(composed);
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

namespace {

/// transpose(matmul(a, b)) with the last two dimensions swapped is
/// matmul(transpose(b), transpose(a)): the product is written in the
/// layout its reader wants, and backends fold operand transposes into the
/// matmul call (cuBLASLt's and BLAS's transpose flags) where a transposed
/// result would be read with a stride by the next kernel. GPT-2's tied
/// embedding gets its LM-head gradient this way: x^T @ g, transposed into
/// the embedding's layout, becomes g^T @ x.
struct TransposedMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse())
      return failure();
    ArrayRef<int64_t> perm = op.getPermutation();
    int64_t rank = static_cast<int64_t>(perm.size());
    if (rank < 2)
      return failure();
    for (int64_t d = 0; d + 2 < rank; ++d)
      if (perm[d] != d)
        return failure();
    if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
      return failure();
    auto swapped = [&](Value v) -> Value {
      int64_t r = cast<RankedTensorType>(v.getType()).getRank();
      auto order = llvm::to_vector(llvm::seq<int64_t>(0, r));
      std::swap(order[r - 2], order[r - 1]);
      return TransposeOp::create(rewriter, op.getLoc(), v, order);
    };
    Value lhs = swapped(matmul.getRhs());
    Value rhs = swapped(matmul.getLhs());
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), lhs, rhs);
    return success();
  }
};

} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<TransposedMatmul>(context);
}

LogicalResult BroadcastToOp::verify() {
  ArrayRef<int64_t> from = tensorType(getInput()).getShape();
  if (!isBroadcastableTo(from, getType().getShape()))
    return emitOpError() << "cannot broadcast " << shapeString(from) << " to "
                         << shapeString(getType().getShape());
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "needs at least one input");
  RankedTensorType first = tensorType(inputs.front());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : inputs) {
    RankedTensorType t = tensorType(v);
    if (t.getRank() != first.getRank())
      return emitOptionalError(loc, "inputs have different ranks (",
                               first.getRank(), " and ", t.getRank(), ")");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != axis && t.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(
            loc, "input shapes ", shapeString(first.getShape()), " and ",
            shapeString(t.getShape()), " differ outside axis ", axis);
    shape[axis] += t.getDimSize(axis);
    if (shape[axis] > kMaxTensorElements)
      return emitOptionalError(loc, "concatenated size along axis ", axis,
                               " exceeds ", kMaxTensorElements);
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorType(adaptor.getInput());
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(offsets.size()) != rank ||
      static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOptionalError(loc, "offsets, sizes and strides need ", rank,
                             " entries each");
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] == 0)
      return emitOptionalError(loc, "stride of dimension ", d, " is zero");
    if (sizes[d] < 0)
      return emitOptionalError(loc, "size of dimension ", d, " is negative");
    if (sizes[d] == 0)
      continue;
    std::optional<int64_t> last =
        llvm::checkedMulAdd(sizes[d] - 1, strides[d], offsets[d]);
    int64_t dim = type.getDimSize(d);
    if (offsets[d] < 0 || offsets[d] >= dim || !last || *last < 0 ||
        *last >= dim)
      return emitOptionalError(loc, "slice of dimension ", d,
                               " reads outside [0, ", dim, ")");
  }
  inferred.push_back(RankedTensorType::get(sizes, type.getElementType()));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  bool identity =
      getInput().getType() == getType() &&
      llvm::all_of(getOffsets(), [](int64_t o) { return o == 0; }) &&
      llvm::all_of(getStrides(), [](int64_t s) { return s == 1; });
  return identity ? OpFoldResult(getInput()) : OpFoldResult();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorType(adaptor.getInput());
  ArrayRef<int64_t> low = adaptor.getLow(), high = adaptor.getHigh();
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(low.size()) != rank ||
      static_cast<int64_t>(high.size()) != rank)
    return emitOptionalError(loc, "low and high need ", rank, " entries each");
  if (adaptor.getValue() && adaptor.getMode() != PadMode::constant)
    return emitOptionalError(loc, "a padding value needs mode constant, not ",
                             stringifyPadMode(adaptor.getMode()));
  if (Value value = adaptor.getValue()) {
    RankedTensorType valueType = tensorType(value);
    if (valueType.getRank() != 0 ||
        valueType.getElementType() != type.getElementType())
      return emitOptionalError(loc, "padding value must be a scalar tensor of ",
                               type.getElementType());
  }
  PadMode mode = adaptor.getMode();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = type.getDimSize(d);
    if (low[d] < 0 || high[d] < 0)
      return emitOptionalError(loc, "padding of dimension ", d, " is negative");
    bool pads = low[d] > 0 || high[d] > 0;
    if (mode == PadMode::reflect && pads && (low[d] >= dim || high[d] >= dim))
      return emitOptionalError(loc, "reflect padding of dimension ", d,
                               " must be smaller than its size ", dim);
    if (mode == PadMode::edge && pads && dim == 0)
      return emitOptionalError(loc, "edge padding of empty dimension ", d);
    if (low[d] > kMaxTensorElements || high[d] > kMaxTensorElements)
      return emitOptionalError(loc, "padding of dimension ", d, " exceeds ",
                               kMaxTensorElements);
    shape.push_back(dim + low[d] + high[d]);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType data = tensorType(adaptor.getData());
  RankedTensorType indices = tensorType(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, data.getRank())))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  inferred.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult
GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &inferred) {
  RankedTensorType data = tensorType(adaptor.getData());
  RankedTensorType indices = tensorType(adaptor.getIndices());
  if (data.getRank() != indices.getRank())
    return emitOptionalError(loc, "data and indices ranks differ (",
                             data.getRank(), " vs ", indices.getRank(), ")");
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis(loc, axis, data.getRank())) ||
      failed(checkIndicesFit(loc, data, indices, axis)))
    return failure();
  inferred.push_back(
      RankedTensorType::get(indices.getShape(), data.getElementType()));
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  RankedTensorType data = tensorType(getData());
  RankedTensorType indices = tensorType(getIndices());
  ArrayRef<int64_t> updates = tensorType(getUpdates()).getShape();
  if (indices.getShape() != updates)
    return emitOpError() << "indices shape " << shapeString(indices.getShape())
                         << " and updates shape " << shapeString(updates)
                         << " differ";
  if (data.getRank() != indices.getRank())
    return emitOpError() << "data and indices ranks differ (" << data.getRank()
                         << " vs " << indices.getRank() << ")";
  int64_t axis = getAxis();
  if (failed(checkAxis(getLoc(), axis, data.getRank())))
    return failure();
  if (getReduction() != ScatterReduction::none &&
      data.getElementType().isInteger(1))
    return emitOpError() << "cannot reduce bool elements with "
                         << stringifyScatterReduction(getReduction());
  return checkIndicesFit(getLoc(), data, indices, axis);
}

LogicalResult SegmentSumOp::verify() {
  ArrayRef<int64_t> data = tensorType(getData()).getShape();
  ArrayRef<int64_t> segments = tensorType(getSegments()).getShape();
  ArrayRef<int64_t> order = tensorType(getOrder()).getShape();
  ArrayRef<int64_t> result = tensorType(getResult()).getShape();
  if (segments.size() != 1 || order != segments)
    return emitOpError() << "segments " << shapeString(segments)
                         << " and order " << shapeString(order)
                         << " must be the same one-dimensional shape";
  if (data.empty() || data.front() != segments.front())
    return emitOpError() << "data " << shapeString(data) << " must have "
                         << segments.front() << " rows, one a segment id";
  if (result.size() != data.size() || result.drop_front() != data.drop_front())
    return emitOpError() << "result " << shapeString(result)
                         << " must be data " << shapeString(data)
                         << " with another number of rows";
  ArrayRef<int64_t> starts = tensorType(getStarts()).getShape();
  if (starts.size() != 1 || starts.front() != result.front())
    return emitOpError() << "starts " << shapeString(starts)
                         << " must hold one position for each of the "
                         << result.front() << " segments";
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

namespace {
LogicalResult inferReduce(std::optional<Location> loc, RankedTensorType type,
                          ArrayRef<int64_t> axes, bool keepDims,
                          SmallVectorImpl<Type> &inferred) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (failed(checkAxis(loc, axes[i], type.getRank())))
      return failure();
    if (i > 0 && axes[i] <= axes[i - 1])
      return emitOptionalError(loc, "axes ", shapeString(axes),
                               " must be sorted and unique");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(type.getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}
} // namespace

#define DLC_REDUCE_INFERENCE(OP)                                               \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, OP::Adaptor adaptor,         \
      SmallVectorImpl<Type> &inferred) {                                       \
    return inferReduce(loc, tensorType(adaptor.getInput()), adaptor.getAxes(), \
                       adaptor.getKeepDims(), inferred);                       \
  }
DLC_REDUCE_INFERENCE(ReduceSumOp)
DLC_REDUCE_INFERENCE(ReduceProdOp)
DLC_REDUCE_INFERENCE(ReduceMaxOp)
DLC_REDUCE_INFERENCE(ReduceMinOp)
#undef DLC_REDUCE_INFERENCE

#define DLC_ARG_REDUCE_INFERENCE(OP)                                           \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *context, std::optional<Location> loc, OP::Adaptor adaptor,  \
      SmallVectorImpl<Type> &inferred) {                                       \
    RankedTensorType type = tensorType(adaptor.getInput());                    \
    if (failed(checkAxis(loc, adaptor.getAxis(), type.getRank())))             \
      return failure();                                                        \
    if (type.getDimSize(adaptor.getAxis()) == 0)                               \
      return emitOptionalError(loc, "axis ", adaptor.getAxis(),                \
                               " is empty: there is no index to return");      \
    SmallVector<Type> reduced;                                                 \
    if (failed(inferReduce(loc, type,                                          \
                           {static_cast<int64_t>(adaptor.getAxis())},          \
                           adaptor.getKeepDims(), reduced)))                   \
      return failure();                                                        \
    inferred.push_back(                                                        \
        RankedTensorType::get(cast<RankedTensorType>(reduced[0]).getShape(),   \
                              IntegerType::get(context, 64)));                 \
    return success();                                                          \
  }
DLC_ARG_REDUCE_INFERENCE(ArgMaxOp)
DLC_ARG_REDUCE_INFERENCE(ArgMinOp)
#undef DLC_ARG_REDUCE_INFERENCE

LogicalResult CumSumOp::verify() {
  return checkAxis(getLoc(), getAxis(), getType().getRank());
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  RankedTensorType type = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis(), k = adaptor.getK();
  if (failed(checkAxis(loc, axis, type.getRank())))
    return failure();
  int64_t dim = type.getDimSize(axis);
  if (k < 0 || k > dim)
    return emitOptionalError(loc, "k ", k, " is out of range [0, ", dim,
                             "] for axis ", axis, " of ",
                             shapeString(type.getShape()));
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = k;
  inferred.push_back(RankedTensorType::get(shape, type.getElementType()));
  inferred.push_back(
      RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  RankedTensorType lhs = tensorType(adaptor.getLhs());
  RankedTensorType rhs = tensorType(adaptor.getRhs());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(loc, "operands must have rank 2 or more");
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  int64_t k = a.back(), k2 = b[b.size() - 2];
  if (k != k2)
    return emitOptionalError(loc, "contraction sizes differ: lhs ",
                             shapeString(a), ", rhs ", shapeString(b));
  std::optional<SmallVector<int64_t>> batch =
      broadcastShapes(a.drop_back(2), b.drop_back(2));
  if (!batch)
    return emitOptionalError(loc, "batch dimensions of ", shapeString(a),
                             " and ", shapeString(b),
                             " are not broadcast-compatible");
  SmallVector<int64_t> shape = *batch;
  shape.push_back(a[a.size() - 2]);
  shape.push_back(b.back());
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

namespace {
/// Checks that each per-spatial-dimension attribute has `spatial` entries,
/// and that padding is non-negative and every other entry positive.
LogicalResult
checkSpatialAttrs(std::optional<Location> loc, int64_t spatial,
                  ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> attrs) {
  for (auto [name, values] : attrs) {
    if (static_cast<int64_t>(values.size()) != spatial)
      return emitOptionalError(loc, name, " has ", values.size(),
                               " entries for ", spatial, " spatial dimensions");
    bool isPadding = name.starts_with("pad");
    for (int64_t v : values)
      if (isPadding ? v < 0 : v <= 0)
        return emitOptionalError(loc, name, " ", shapeString(values),
                                 " must be ",
                                 isPadding ? "non-negative" : "positive");
  }
  return success();
}
} // namespace

/// The result type of a convolution of `input` by `filter`, shared by
/// dlc.conv and its gradient ops' verifiers.
static FailureOr<RankedTensorType>
inferConvType(std::optional<Location> loc, RankedTensorType input,
              RankedTensorType filter, ArrayRef<int64_t> stride,
              ArrayRef<int64_t> padLow, ArrayRef<int64_t> padHigh,
              ArrayRef<int64_t> dilation, int64_t groups) {
  if (input.getRank() < 3 || filter.getRank() != input.getRank())
    return emitOptionalError(loc, "input and filter must have the same rank, "
                                  "3 or more");
  int64_t spatial = input.getRank() - 2;
  if (failed(checkSpatialAttrs(loc, spatial,
                               {{"stride", stride},
                                {"pad_low", padLow},
                                {"pad_high", padHigh},
                                {"dilation", dilation}})))
    return failure();
  int64_t channels = input.getDimSize(1), outChannels = filter.getDimSize(0);
  if (groups <= 0 || channels % groups != 0 || outChannels % groups != 0)
    return emitOptionalError(loc, "groups ", groups,
                             " must divide input channels ", channels,
                             " and output channels ", outChannels);
  if (filter.getDimSize(1) != channels / groups)
    return emitOptionalError(loc, "filter has ", filter.getDimSize(1),
                             " input channels per group, expected ",
                             channels / groups);
  SmallVector<int64_t> shape = {input.getDimSize(0), outChannels};
  for (int64_t d = 0; d < spatial; ++d) {
    std::optional<int64_t> size =
        windowOutputSize(input.getDimSize(d + 2), filter.getDimSize(d + 2),
                         stride[d], padLow[d], padHigh[d], dilation[d]);
    if (!size)
      return emitOptionalError(loc, "filter does not fit spatial dimension ", d,
                               " (or the padded size exceeds ",
                               kMaxTensorElements, ")");
    shape.push_back(*size);
  }
  return RankedTensorType::get(shape, input.getElementType());
}

/// `type` in the other channel layout: [N, s..., C] -> [N, C, s...]
/// (`toChannelsFirst`) or back. Only when `channelsLast` is set and the rank
/// has spatial dimensions; inferConvType rejects the others.
static RankedTensorType relayout(RankedTensorType type, bool channelsLast,
                                 bool toChannelsFirst) {
  if (!channelsLast || type.getRank() < 3)
    return type;
  SmallVector<int64_t> permutation = channelsLastPermutation(type.getRank());
  if (toChannelsFirst)
    permutation = invertPermutation(permutation);
  return RankedTensorType::get(permuteShape(type.getShape(), permutation),
                               type.getElementType());
}

FailureOr<RankedTensorType> mlir::dlc::inferConvTypeIn(
    bool channelsLast, std::optional<Location> loc, RankedTensorType input,
    RankedTensorType filter, ArrayRef<int64_t> stride, ArrayRef<int64_t> padLow,
    ArrayRef<int64_t> padHigh, ArrayRef<int64_t> dilation, int64_t groups) {
  FailureOr<RankedTensorType> type =
      inferConvType(loc, relayout(input, channelsLast, true),
                    relayout(filter, channelsLast, true), stride, padLow,
                    padHigh, dilation, groups);
  if (failed(type))
    return failure();
  return relayout(*type, channelsLast, false);
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type = inferConvTypeIn(
      adaptor.getChannelsLast(), loc, tensorType(adaptor.getInput()),
      tensorType(adaptor.getFilter()), adaptor.getStride(), adaptor.getPadLow(),
      adaptor.getPadHigh(), adaptor.getDilation(), adaptor.getGroups());
  if (failed(type))
    return failure();
  inferred.push_back(*type);
  return success();
}

/// Checks that a gradient op's `gradOutput` has the type of the forward
/// op's result, `expected`.
static LogicalResult checkGradOutput(Operation *op, RankedTensorType gradOutput,
                                     RankedTensorType expected) {
  if (gradOutput != expected)
    return op->emitOpError()
           << "grad_output type " << gradOutput
           << " differs from the forward result type " << expected;
  return success();
}

LogicalResult ConvGradInputOp::verify() {
  FailureOr<RankedTensorType> forward =
      inferConvTypeIn(getChannelsLast(), getLoc(), tensorType(getResult()),
                      tensorType(getFilter()), getStride(), getPadLow(),
                      getPadHigh(), getDilation(), getGroups());
  if (failed(forward))
    return failure();
  return checkGradOutput(*this, tensorType(getGradOutput()), *forward);
}

LogicalResult ConvGradFilterOp::verify() {
  FailureOr<RankedTensorType> forward =
      inferConvTypeIn(getChannelsLast(), getLoc(), tensorType(getInput()),
                      tensorType(getResult()), getStride(), getPadLow(),
                      getPadHigh(), getDilation(), getGroups());
  if (failed(forward))
    return failure();
  return checkGradOutput(*this, tensorType(getGradOutput()), *forward);
}

namespace {
/// The result type of pooling `input` over windows, shared by the pooling
/// ops and dlc.max_pool_grad's verifier.
FailureOr<RankedTensorType>
inferPoolType(std::optional<Location> loc, RankedTensorType input,
              ArrayRef<int64_t> window, ArrayRef<int64_t> stride,
              ArrayRef<int64_t> padLow, ArrayRef<int64_t> padHigh,
              ArrayRef<int64_t> dilation) {
  if (input.getRank() < 3)
    return emitOptionalError(loc, "input must have rank 3 or more");
  int64_t spatial = input.getRank() - 2;
  if (failed(checkSpatialAttrs(loc, spatial,
                               {{"window", window},
                                {"stride", stride},
                                {"pad_low", padLow},
                                {"pad_high", padHigh},
                                {"dilation", dilation}})))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  for (int64_t d = 0; d < spatial; ++d) {
    std::optional<int64_t> size =
        windowOutputSize(input.getDimSize(d + 2), window[d], stride[d],
                         padLow[d], padHigh[d], dilation[d]);
    if (!size)
      return emitOptionalError(loc, "window does not fit spatial dimension ", d,
                               " (or the padded size exceeds ",
                               kMaxTensorElements, ")");
    shape.push_back(*size);
  }
  return RankedTensorType::get(shape, input.getElementType());
}

template <typename PoolOp>
LogicalResult inferPool(std::optional<Location> loc,
                        typename PoolOp::Adaptor adaptor,
                        SmallVectorImpl<Type> &inferred) {
  FailureOr<RankedTensorType> type =
      inferPoolType(loc, tensorType(adaptor.getInput()), adaptor.getWindow(),
                    adaptor.getStride(), adaptor.getPadLow(),
                    adaptor.getPadHigh(), adaptor.getDilation());
  if (failed(type))
    return failure();
  inferred.push_back(*type);
  return success();
}
} // namespace

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferPool<MaxPoolOp>(loc, adaptor, inferred);
}

LogicalResult SumPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferPool<SumPoolOp>(loc, adaptor, inferred);
}

//===----------------------------------------------------------------------===//
// Randomness
//===----------------------------------------------------------------------===//

/// A random draw's seed and counter offset are scalars.
static LogicalResult verifyDrawScalars(Operation *op, Value seed,
                                       Value offset) {
  if (cast<RankedTensorType>(seed.getType()).getRank() != 0)
    return op->emitOpError() << "seed must be a scalar, got " << seed.getType();
  if (offset && cast<RankedTensorType>(offset.getType()).getRank() != 0)
    return op->emitOpError()
           << "offset must be a scalar, got " << offset.getType();
  return success();
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return emitOpError() << "ratio " << ratio << " is outside [0, 1)";
  if (failed(verifyDrawScalars(*this, getSeed(), getOffset())))
    return failure();
  if (getMask().getType().getShape() != getOutput().getType().getShape())
    return emitOpError() << "mask shape "
                         << shapeString(getMask().getType().getShape())
                         << " differs from the output shape "
                         << shapeString(getOutput().getType().getShape());
  return success();
}

LogicalResult RandomUniformOp::verify() {
  return verifyDrawScalars(*this, getSeed(), getOffset());
}

LogicalResult MaxPoolGradOp::verify() {
  FailureOr<RankedTensorType> forward =
      inferPoolType(getLoc(), tensorType(getInput()), getWindow(), getStride(),
                    getPadLow(), getPadHigh(), getDilation());
  if (failed(forward))
    return failure();
  return checkGradOutput(*this, tensorType(getGradOutput()), *forward);
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Checks the operands an attention op and its gradient share: q
/// [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv] with equal leading
/// dimensions and one element type, a bias broadcastable to the scores
/// [..., Tq, Tk], a positive scale. Sets `out` and `lse` to the types of the
/// forward's results.
static LogicalResult checkAttention(Operation *op, Value q, Value k, Value v,
                                    Value bias, double scale,
                                    RankedTensorType &out,
                                    RankedTensorType &lse) {
  RankedTensorType qt = tensorType(q), kt = tensorType(k), vt = tensorType(v);
  Type element = qt.getElementType();
  if (kt.getElementType() != element || vt.getElementType() != element ||
      (bias && tensorType(bias).getElementType() != element))
    return op->emitOpError() << "expects q, k, v and bias of one element "
                                "type, got "
                             << qt << ", " << kt << ", " << vt
                             << (bias ? ", " : "")
                             << (bias ? tensorType(bias) : Type());
  int64_t rank = qt.getRank();
  if (rank < 2 || kt.getRank() != rank || vt.getRank() != rank)
    return op->emitOpError() << "expects q, k and v of one rank of at least "
                                "2, got "
                             << qt << ", " << kt << ", " << vt;
  ArrayRef<int64_t> qs = qt.getShape(), ks = kt.getShape(), vs = vt.getShape();
  if (qs.drop_back(2) != ks.drop_back(2) || qs.drop_back(2) != vs.drop_back(2))
    return op->emitOpError() << "expects q, k and v with the same leading "
                                "dimensions, got "
                             << qt << ", " << kt << ", " << vt;
  if (qs.back() != ks.back())
    return op->emitOpError() << "expects q and k with the same last "
                                "dimension, got "
                             << qs.back() << " and " << ks.back();
  if (ks[rank - 2] != vs[rank - 2])
    return op->emitOpError() << "expects k and v with the same number of keys, "
                                "got "
                             << ks[rank - 2] << " and " << vs[rank - 2];
  SmallVector<int64_t> scores(qs.drop_back());
  scores.push_back(ks[rank - 2]);
  if (bias) {
    ArrayRef<int64_t> bs = tensorType(bias).getShape();
    bool fits = static_cast<int64_t>(bs.size()) <= rank;
    for (size_t d = 0; fits && d < bs.size(); ++d) {
      int64_t target = scores[rank - bs.size() + d];
      fits = bs[d] == 1 || bs[d] == target;
    }
    if (!fits)
      return op->emitOpError()
             << "expects a bias broadcastable to the scores [" << scores
             << "], got " << tensorType(bias);
  }
  if (!(scale > 0) || !std::isfinite(scale))
    return op->emitOpError() << "expects a positive finite scale, got "
                             << scale;
  SmallVector<int64_t> outShape(qs.drop_back());
  outShape.push_back(vs.back());
  out = RankedTensorType::get(outShape, element);
  lse = RankedTensorType::get(qs.drop_back(), element);
  return success();
}

/// Fails unless `value`, result or operand `what` of `op`, has type `want`.
static LogicalResult checkType(Operation *op, Value value, StringRef what,
                               RankedTensorType want) {
  if (value.getType() != want)
    return op->emitOpError() << "expects " << what << " of type " << want
                             << ", got " << value.getType();
  return success();
}

/// An attention op's or its gradient's verifier: the shared operands, and
/// `out` and `lse` of the forward's types (results of the forward, operands
/// of the gradient).
template <typename OpT> static LogicalResult verifyAttention(OpT op) {
  RankedTensorType out, lse;
  if (failed(checkAttention(op, op.getQ(), op.getK(), op.getV(), op.getBias(),
                            op.getScale().convertToDouble(), out, lse)) ||
      failed(checkType(op, op.getOut(), "out", out)) ||
      failed(checkType(op, op.getLse(), "lse", lse)))
    return failure();
  return success();
}

LogicalResult AttentionOp::verify() { return verifyAttention(*this); }

LogicalResult AttentionGradOp::verify() { return verifyAttention(*this); }

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

/// The checks dlc.cross_entropy and its gradient share: logits [..., C]
/// with C > 0, labels [...], a label smoothing in [0, 1], and `rows` (the
/// type of the loss, the log-sum-exp and the loss's gradient) [...] of the
/// logits' element type.
template <typename OpT> static LogicalResult verifyCrossEntropy(OpT op) {
  RankedTensorType logits = tensorType(op.getLogits());
  RankedTensorType labels = tensorType(op.getLabels());
  if (logits.getRank() < 1 || logits.getShape().back() == 0 ||
      logits.getShape().drop_back() != labels.getShape())
    return op.emitOpError() << "expects logits [..., C] with C > 0 and labels "
                               "[...], got "
                            << logits << " and " << labels;
  double smoothing = op.getLabelSmoothing().convertToDouble();
  if (!(smoothing >= 0 && smoothing <= 1))
    return op.emitOpError() << "expects a label smoothing in [0, 1], got "
                            << smoothing;
  auto rows = RankedTensorType::get(labels.getShape(),
                                    logits.getElementType());
  return checkType(op, op.getLse(), "lse", rows);
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(verifyCrossEntropy(*this)))
    return failure();
  return checkType(*this, getLoss(), "loss", tensorType(getLse()));
}

LogicalResult CrossEntropyGradOp::verify() { return verifyCrossEntropy(*this); }

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            AllReduceOp::Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  for (Value input : adaptor.getInputs())
    inferred.push_back(input.getType());
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "reduces no values";
  return success();
}

//===----------------------------------------------------------------------===//
// ZeRO-1's collectives: ReduceScatterOp, AllGatherOp, RankShardOp
//===----------------------------------------------------------------------===//

RankedTensorType mlir::dlc::shardTypeOf(RankedTensorType type, int64_t ranks) {
  return RankedTensorType::get(
      {static_cast<int64_t>(llvm::divideCeil(type.getNumElements(), ranks))},
      type.getElementType());
}

/// The shard type of an operand of `type` over `ranks` ranks, for result
/// type inference. Inference runs before the verifier has refused a
/// dynamic or non-tensor operand or fewer than 2 ranks: those keep `type`,
/// and the verifier reports them.
static Type inferShardType(Type type, int64_t ranks) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape() || ranks < 2)
    return type;
  return shardTypeOf(ranked, ranks);
}

/// The check dlc.reduce_scatter and dlc.all_gather share: a bucket of one
/// element type.
static LogicalResult verifyShardedBucket(Operation *op) {
  if (op->getNumOperands() == 0)
    return op->emitOpError() << "moves no values";
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  for (Value v : op->getOperands())
    if (getElementTypeOrSelf(v.getType()) != element)
      return op->emitOpError() << "mixes element types (" << element << " and "
                               << getElementTypeOrSelf(v.getType())
                               << "); one collective moves one type";
  return success();
}

/// A tensor group's slices of a value (`tensor`) are whole blocks: a
/// rank's slice of a split value has no padding.
static LogicalResult verifyEvenSlices(Operation *op, bool tensor,
                                      RankedTensorType whole, int64_t ranks) {
  if (!tensor || whole.getNumElements() % ranks == 0)
    return success();
  return op->emitOpError() << "slices " << whole << " over " << ranks
                           << " tensor-parallel ranks, which do not divide "
                              "its elements";
}

LogicalResult
ReduceScatterOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                  ReduceScatterOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  for (Value input : adaptor.getInputs())
    inferred.push_back(inferShardType(input.getType(), adaptor.getRanks()));
  return success();
}

LogicalResult ReduceScatterOp::verify() { return verifyShardedBucket(*this); }

LogicalResult AllGatherOp::verify() {
  if (getInputs().size() != getResults().size())
    return emitOpError() << "gathers " << getInputs().size() << " shards into "
                         << getResults().size() << " values";
  if (failed(verifyShardedBucket(*this)))
    return failure();
  for (auto [i, shard, whole] :
       llvm::enumerate(getInputs().getTypes(), getResults().getTypes())) {
    RankedTensorType expected =
        shardTypeOf(cast<RankedTensorType>(whole), getRanks());
    if (shard != expected)
      return emitOpError() << "gathers shard #" << i << " of " << shard
                           << " into " << whole << ", whose shard over "
                           << getRanks() << " ranks is " << expected;
    if (failed(verifyEvenSlices(*this, getTensor(),
                                cast<RankedTensorType>(whole), getRanks())))
      return failure();
  }
  return success();
}

LogicalResult PpTransferOp::verify() {
  auto module = (*this)->getParentOfType<ModuleOp>();
  auto stages =
      module ? module->getAttrOfType<IntegerAttr>(roles::kPipelineStagesAttr)
             : IntegerAttr();
  if (!stages)
    return emitOpError() << "is outside a module partitioned into pipeline "
                            "stages (dlc.pipeline_stages)";
  for (int64_t stage : {getFrom(), getTo()})
    if (stage < 0 || stage >= stages.getInt())
      return emitOpError() << "names stage " << stage << " of a module of "
                           << stages.getInt() << " pipeline stages";
  if (getFrom() == getTo())
    return emitOpError() << "sends a value from stage " << getFrom()
                         << " to itself";
  return success();
}

LogicalResult RankShardOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            RankShardOp::Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  inferred.push_back(
      inferShardType(adaptor.getInput().getType(), adaptor.getRanks()));
  return success();
}

LogicalResult RankShardOp::verify() {
  auto type = cast<RankedTensorType>(getInput().getType());
  if (!getTensor() && !isa<FloatType>(type.getElementType()))
    return emitOpError() << "shards " << type
                         << " among data-parallel ranks, which hold float "
                            "state only (integers are sliced with `tensor`)";
  return verifyEvenSlices(*this, getTensor(), type, getRanks());
}

#define GET_OP_CLASSES
#include "ir/DLCEnums.cpp.inc"
#include "ir/DLCOps.cpp.inc"
#include "ir/GradientOpInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// FusionOp
//===----------------------------------------------------------------------===//

void FusionOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value input : inputs)
    block->addArgument(input.getType(), input.getLoc());
}

LogicalResult FusionOp::verify() {
  if (getNumResults() == 0)
    return emitOpError() << "has no results; a fusion computes at least one "
                            "value";
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size()
                         << " inputs but its body takes "
                         << block.getNumArguments() << " arguments";
  for (auto [i, input, argument] :
       llvm::enumerate(getInputs(), block.getArguments()))
    if (input.getType() != argument.getType())
      return emitOpError() << "input #" << i << " has type " << input.getType()
                           << " but body argument #" << i << " has type "
                           << argument.getType();
  auto yield = block.empty() ? YieldOp() : dyn_cast<YieldOp>(block.back());
  if (!yield)
    return emitOpError() << "body must end with dlc.yield";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values of types (" << yield.getValues().getTypes()
                         << ") but has results of types (" << getResultTypes()
                         << ")";
  for (Operation &op : block.without_terminator())
    if (!isa<DLCDialect>(op.getDialect()) || op.getNumRegions() != 0 ||
        isa<GlobalLoadOp, GlobalStoreOp>(op))
      return op.emitOpError() << "cannot be inside a dlc.fusion";
  return success();
}
