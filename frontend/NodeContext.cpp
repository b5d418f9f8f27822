//===- NodeContext.cpp - What an ONNX op rule sees while importing a node -===//

#include "frontend/NodeContext.h"
#include "frontend/TensorProto.h"
#include "ir/ShapeUtils.h"
#include "ir/eval/Evaluator.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::dlc;
using mlir::dlc::DType;
using mlir::dlc::Tensor;

NodeContext::NodeContext(OpBuilder &builder, const onnx::NodeProto &node,
                         SmallVector<Value> inputs, int sinceVersion,
                         Location loc, FunctionState *function)
    : builder_(builder), node_(node), inputs_(std::move(inputs)),
      outputs_(node.output_size()), version_(sinceVersion), loc_(loc),
      function_(function) {}

Value NodeContext::input(size_t i) {
  if (!hasInput(i)) {
    error() << "input " << i << " is required but missing";
    return {};
  }
  return inputs_[i];
}

RankedTensorType NodeContext::inputType(size_t i) {
  Value v = input(i);
  return v ? mlir::cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

Type NodeContext::inputElementType(size_t i) {
  RankedTensorType t = inputType(i);
  return t ? t.getElementType() : Type();
}

bool NodeContext::wantsOutput(size_t i) const {
  return static_cast<int>(i) < node_.output_size() && !node_.output(i).empty();
}

void NodeContext::setOutput(size_t i, Value value) {
  if (i < outputs_.size())
    outputs_[i] = value;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

const onnx::AttributeProto *
NodeContext::typedAttr(StringRef name,
                       onnx::AttributeProto::AttributeType type) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || a->type() == type)
    return a;
  auto typeName = [](onnx::AttributeProto::AttributeType t) {
    return onnx::AttributeProto::AttributeType_IsValid(t)
               ? onnx::AttributeProto::AttributeType_Name(t)
               : "type " + std::to_string(static_cast<int>(t));
  };
  error() << "attribute '" << name << "' must be " << typeName(type)
          << ", got " << typeName(a->type());
  return nullptr;
}

int64_t NodeContext::intAttr(StringRef name, int64_t defaultValue) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INT);
  return a ? a->i() : defaultValue;
}

float NodeContext::floatAttr(StringRef name, float defaultValue) {
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : defaultValue;
}

std::string NodeContext::stringAttr(StringRef name, StringRef defaultValue) {
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : defaultValue.str();
}

std::vector<int64_t> NodeContext::intsAttr(StringRef name) {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INTS);
  if (!a)
    return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> NodeContext::floatsAttr(StringRef name) {
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::FLOATS);
  if (!a)
    return {};
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::vector<std::string> NodeContext::stringsAttr(StringRef name) {
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::STRINGS);
  if (!a)
    return {};
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

std::optional<Tensor> NodeContext::tensorAttr(StringRef name) {
  if (!hasAttr(name)) {
    error() << "attribute '" << name << "' is missing";
    return std::nullopt;
  }
  const onnx::AttributeProto *a =
      typedAttr(name, onnx::AttributeProto::TENSOR);
  if (!a)
    return std::nullopt;
  std::string message;
  std::optional<Tensor> t = tensorFromProto(a->t(), /*modelDir=*/"", message);
  if (!t)
    error() << "attribute '" << name << "': " << message;
  return t;
}

std::optional<Tensor> NodeContext::constantValue(size_t i) {
  if (!hasInput(i))
    return std::nullopt;
  ElementsAttr attr;
  if (!matchPattern(inputs_[i], m_Constant(&attr)))
    return std::nullopt;
  FailureOr<Tensor> t = tensorFromAttr(attr);
  if (mlir::failed(t))
    return std::nullopt;
  return std::move(*t);
}

std::optional<Tensor> NodeContext::requireConstant(size_t i, StringRef what) {
  if (!hasInput(i)) {
    error() << "input " << i << " (" << what << ") is required but missing";
    return std::nullopt;
  }
  if (std::optional<Tensor> t = constantValue(i))
    return t;
  // Float initializers are imported as parameters, but one that decides a
  // shape or an attribute-like value (Resize's scales, Dropout's ratio) is
  // read at import and never trained: take its initial value.
  if (auto load = inputs_[i].getDefiningOp<GlobalLoadOp>())
    if (auto global = SymbolTable::lookupNearestSymbolFrom<GlobalOp>(
            load, load.getGlobalAttr()))
      if (std::optional<ElementsAttr> initial = global.getInitialValue())
        if (FailureOr<Tensor> t = tensorFromAttr(*initial); mlir::succeeded(t))
          return std::move(*t);
  error() << "input " << i << " (" << what
          << ") must be a constant: dlc needs static shapes";
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
NodeContext::requireConstantInts(size_t i, StringRef what) {
  std::optional<Tensor> t = requireConstant(i, what);
  if (!t)
    return std::nullopt;
  if (isFloat(t->dtype()) || t->dtype() == DType::Bool) {
    error() << "input " << i << " (" << what << ") must hold integers";
    return std::nullopt;
  }
  std::vector<int64_t> values(t->numElements());
  for (int64_t k = 0; k < t->numElements(); ++k)
    values[k] = t->getInt(k);
  return values;
}

InFlightDiagnostic NodeContext::error() {
  InFlightDiagnostic diag = emitError(loc_);
  // One message per node: after the first, errors are built and dropped.
  if (failed_)
    diag.abandon();
  failed_ = true;
  return diag;
}

std::optional<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                                  StringRef what) {
  if (axis < -rank || axis >= rank) {
    error() << what << " " << axis << " is out of range for rank " << rank;
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

bool NodeContext::checkOperands(ValueRange operands) {
  if (failed_)
    return false;
  return llvm::all_of(operands, [](Value v) { return static_cast<bool>(v); });
}

Value NodeContext::constant(const Tensor &value) {
  if (failed_)
    return {};
  std::vector<int64_t> shape = value.shape();
  auto type = RankedTensorType::get(
      shape, elementTypeOf(context(), value.dtype()));
  return ConstantOp::create(builder_, loc_, attrFromTensor(value, type));
}

Value NodeContext::scalar(Type elementType, double value) {
  if (!elementType)
    return {};
  FailureOr<DType> dtype = dtypeOf(elementType);
  if (mlir::failed(dtype)) {
    error() << "unsupported element type " << elementType;
    return {};
  }
  Tensor t(DType::F64, {});
  t.data<double>()[0] = value;
  Value v = constant(t);
  return cast(v, elementType);
}

Value NodeContext::i64Constant(ArrayRef<int64_t> values) {
  Tensor t(DType::I64, {static_cast<int64_t>(values.size())});
  llvm::copy(values, t.data<int64_t>());
  return constant(t);
}

Value NodeContext::cast(Value x, Type elementType) {
  // A null element type comes from a missing input (inputElementType).
  if (!x || !elementType)
    return {};
  auto type = mlir::cast<RankedTensorType>(x.getType());
  return buildTyped<CastOp>(type.clone(elementType), {x});
}

Value NodeContext::reshape(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  auto type = mlir::cast<RankedTensorType>(x.getType());
  std::optional<int64_t> count = checkedNumElements(shape);
  if (!count) {
    error() << "cannot reshape " << type << " into shape [" << shape
            << "]: a dimension is negative or the element count exceeds "
            << kMaxTensorElements;
    return {};
  }
  if (*count != type.getNumElements()) {
    error() << "cannot reshape " << type << " into "
            << RankedTensorType::get(shape, type.getElementType());
    return {};
  }
  return buildTyped<ReshapeOp>(type.clone(shape), {x});
}

Value NodeContext::transpose(Value x, ArrayRef<int64_t> permutation) {
  return build<TransposeOp>({x}, {namedI64s("permutation", permutation)});
}

Value NodeContext::broadcastTo(Value x, ArrayRef<int64_t> shape) {
  if (!x)
    return {};
  auto type = mlir::cast<RankedTensorType>(x.getType());
  if (!isBroadcastableTo(type.getShape(), shape)) {
    error() << "cannot broadcast " << type << " to shape ["
            << llvm::make_range(shape.begin(), shape.end()) << "]";
    return {};
  }
  return buildTyped<BroadcastToOp>(type.clone(shape), {x});
}

Value NodeContext::compare(ComparePredicate predicate, Value lhs, Value rhs) {
  return build<CompareOp>(
      {lhs, rhs},
      {named("predicate", ComparePredicateAttr::get(context(), predicate))});
}

Value NodeContext::select(Value condition, Value onTrue, Value onFalse) {
  return build<SelectOp>({condition, onTrue, onFalse});
}

Value NodeContext::slice(Value x, ArrayRef<int64_t> offsets,
                         ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  return build<SliceOp>({x}, {namedI64s("offsets", offsets),
                              namedI64s("sizes", sizes),
                              namedI64s("strides", strides)});
}

Value NodeContext::mean(Value x, ArrayRef<int64_t> axes, bool keepDims) {
  if (!x)
    return {};
  auto type = mlir::cast<RankedTensorType>(x.getType());
  int64_t count = 1;
  for (int64_t a : axes)
    count *= type.getDimSize(a);
  Value sum = reduce<ReduceSumOp>(x, axes, keepDims);
  return build<DivOp>(
      {sum, scalar(type.getElementType(), static_cast<double>(count))});
}

std::optional<SmallVector<int64_t>>
NodeContext::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank,
                           StringRef what) {
  SmallVector<int64_t> normalized;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      error() << what << " [" << axes << "] has " << axis
              << ", out of range for rank " << rank;
      return std::nullopt;
    }
    int64_t a = axis < 0 ? axis + rank : axis;
    if (llvm::is_contained(normalized, a)) {
      error() << what << " [" << axes << "] repeats axis " << a;
      return std::nullopt;
    }
    normalized.push_back(a);
  }
  return normalized;
}

std::optional<std::vector<int64_t>>
NodeContext::intsAttrOrInput(StringRef name, size_t index) {
  if (hasAttr(name))
    return intsAttr(name);
  if (hasInput(index))
    return requireConstantInts(index, name);
  return std::vector<int64_t>{};
}

Value NodeContext::softmax(Value x, int64_t axis) {
  Value shifted =
      build<SubOp>({x, reduce<ReduceMaxOp>(x, {axis}, /*keepDims=*/true)});
  Value e = unary<ExpOp>(shifted);
  return build<DivOp>({e, reduce<ReduceSumOp>(e, {axis}, /*keepDims=*/true)});
}

Value NodeContext::logSoftmax(Value x, int64_t axis) {
  Value shifted =
      build<SubOp>({x, reduce<ReduceMaxOp>(x, {axis}, /*keepDims=*/true)});
  Value sum = reduce<ReduceSumOp>(unary<ExpOp>(shifted), {axis},
                                  /*keepDims=*/true);
  return build<SubOp>({shifted, unary<LogOp>(sum)});
}

Value NodeContext::rngSeed() {
  if (!function_) {
    error() << "needs the random seed, which only a function import has";
    return {};
  }
  if (function_->rngSeed)
    return function_->rngSeed;
  Operation *func = builder_.getInsertionBlock()->getParentOp();
  auto module = func->getParentOfType<ModuleOp>();
  if (Operation *existing = module.lookupSymbol(kRngSeedGlobal)) {
    error() << "needs the global @\"" << kRngSeedGlobal
            << "\" for its random seed, but the model already has a "
            << (isa<GlobalOp>(existing) ? "parameter" : "symbol")
            << " of that name";
    return {};
  }
  auto type = RankedTensorType::get({}, builder_.getI64Type());
  {
    // Declared beside the parameters, before the function.
    OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPoint(func);
    // Not an ONNX initializer: located at the model file itself.
    GlobalOp::create(builder_, module.getLoc(), kRngSeedGlobal, type,
                     mlir::cast<ElementsAttr>(
                         DenseElementsAttr::get(type, int64_t(0))));
  }
  function_->rngSeed =
      GlobalLoadOp::create(builder_, loc_, type, kRngSeedGlobal);
  return function_->rngSeed;
}

int64_t NodeContext::nextDropoutStream() {
  return function_ ? function_->nextDropoutStream++ : 0;
}

GlobalOp NodeContext::globalOf(Value v) {
  auto load = v ? v.getDefiningOp<GlobalLoadOp>() : GlobalLoadOp();
  if (!load)
    return {};
  return SymbolTable::lookupNearestSymbolFrom<GlobalOp>(load,
                                                        load.getGlobalAttr());
}
