//===- ScalarEmitter.cpp - A fusion's values as C++ expressions -----------===//
#include "codegen/ScalarEmitter.h"
#include "passes/fusion/Fusion.h"
#include "passes/fusion/Schedule.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::codegen;
using namespace mlir::dlc::codegen::kernels;

namespace {

/// The storage of a low-precision float type ("bf16" or "f16"), else "".
/// Kernels hold such values as float: they load them through
/// dlc_load_<storage>, round each op's result to the type with
/// dlc_round_<storage> (as the evaluator rounds each result it stores) and
/// store them through dlc_store_<storage>, 16-bit patterns in uint16_t
/// buffers.
StringRef lowPrecisionStorage(Type type) {
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  return "";
}

bool isSimpleExpression(StringRef s) {
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

} // namespace

namespace mlir::dlc::codegen::kernels {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The C type of an element type, or "" when kernels do not handle it.
std::string cTypeOf(Type type) {
  if (type.isF32() || !lowPrecisionStorage(type).empty())
    return "float";
  if (type.isF64())
    return "double";
  if (type.isInteger(1))
    return "bool";
  if (auto integer = dyn_cast<IntegerType>(type)) {
    unsigned width = integer.getWidth();
    if (width != 8 && width != 16 && width != 32 && width != 64)
      return "";
    return (integer.isUnsigned() ? "uint" : "int") + std::to_string(width) +
           "_t";
  }
  return "";
}

std::string joinIndex(ArrayRef<std::string> index) {
  return llvm::join(index, ",");
}

/// The C type a kernel accesses `v`'s buffer as. Bool buffers are read as
/// bytes: compilers vectorize selects on uint8_t loads but turn selects on
/// bool loads into branches.
std::string bufferTypeOf(Value v) {
  Type element = getElementTypeOrSelf(v.getType());
  if (!lowPrecisionStorage(element).empty())
    return "uint16_t";
  return element.isInteger(1) ? std::string("uint8_t") : cTypeOf(element);
}

/// `expression` (a value of `v`'s type, held as its C type) as `v`'s
/// buffer stores it.
std::string storedForm(Value v, StringRef expression) {
  StringRef storage = lowPrecisionStorage(getElementTypeOrSelf(v.getType()));
  if (storage.empty())
    return expression.str();
  return ("dlc_store_" + storage + "(" + expression + ")").str();
}

/// `expression`, of C type `from`, as the float a value of `element` is held
/// in. A double headed for bfloat16 or float16 is first narrowed to float
/// rounding to odd (dlc_narrow_to_odd), so that the later rounding to the
/// 16-bit type is the only one, as the evaluator's single rounding from
/// double; other conversions are plain casts.
std::string heldAs(Type element, StringRef from, StringRef expression,
                   StringRef type) {
  if (from == "double" && !lowPrecisionStorage(element).empty())
    return ("dlc_narrow_to_odd(" + expression + ")").str();
  return ("(" + type + ")" + expression).str();
}

/// Whether a value of `fusion` is stored in a low-precision type.
bool hasLowPrecisionValues(FusionOp fusion) {
  return llvm::any_of(
      llvm::concat<Value>(fusion.getInputs(), fusion.getResults()),
      [](Value v) {
        return !lowPrecisionStorage(getElementTypeOrSelf(v.getType())).empty();
      });
}

/// The bytes of one element of `v`'s buffer.
int64_t elementBytes(Value v) {
  Type element = getElementTypeOrSelf(v.getType());
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

bool isScalar(Value v) { return ShapedType::getNumElements(shapeOf(v)) == 1; }

/// The statement that combines `update` into `slot` as a scatter with
/// `reduction` does.
std::string scatterStatement(ScatterReduction reduction, StringRef slot,
                             StringRef update) {
  switch (reduction) {
  case ScatterReduction::none:
    return (slot + " = " + update + ";").str();
  case ScatterReduction::add:
    return (slot + " = " + slot + " + " + update + ";").str();
  case ScatterReduction::mul:
    return (slot + " = " + slot + " * " + update + ";").str();
  case ScatterReduction::max:
    return (slot + " = dlc_max(" + slot + ", " + update + ");").str();
  case ScatterReduction::min:
    return (slot + " = dlc_min(" + slot + ", " + update + ");").str();
  }
  llvm_unreachable("a verified scatter has one of five reductions");
}

} // namespace mlir::dlc::codegen::kernels

std::string ScalarEmitter::linear(ArrayRef<int64_t> shape,
                                  ArrayRef<std::string> index) const {
  if (linearSpace >= 0)
    return ShapedType::getNumElements(shape) == 1 ? "0" : index.front();
  std::string result;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1) {
      std::string term = stride == 1
                             ? index[d]
                             : "(" + index[d] + ") * " + std::to_string(stride);
      result = result.empty() ? term : term + " + " + result;
    }
    stride *= shape[d];
  }
  return result.empty() ? "0" : result;
}

Index ScalarEmitter::broadcastIndex(ArrayRef<int64_t> from,
                                    ArrayRef<std::string> index) const {
  if (linearSpace >= 0)
    return Index(index.begin(), index.end());
  Index result;
  size_t lead = index.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    result.push_back(from[d] == 1 ? "0" : index[lead + d]);
  return result;
}

std::string ScalarEmitter::let(StringRef type, StringRef expression) {
  if (isSimpleExpression(expression))
    return expression.str();
  std::string name = fresh("v");
  line("const " + type + " " + name + " = " + expression + ";");
  return name;
}

std::string ScalarEmitter::accumulatorType(Type element) const {
  if (element.isF32() || !lowPrecisionStorage(element).empty())
    return target == Target::Cpu ? "double" : "float";
  if (element.isF64())
    return "double";
  return cTypeOf(element);
}

FailureOr<std::string> ScalarEmitter::cType(Operation *op, Type type) {
  std::string c = cTypeOf(getElementTypeOrSelf(type));
  if (c.empty())
    return op->emitOpError()
           << "has element type " << getElementTypeOrSelf(type)
           << ", which generated kernels do not handle yet";
  return c;
}

FailureOr<std::string> ScalarEmitter::value(Value v,
                                            ArrayRef<std::string> index) {
  // In a linear space a single-element value is the same at every index:
  // computed once for all the elements of a vector group.
  Index single{"0"};
  if (linearSpace >= 0 && isScalar(v))
    index = single;
  auto key = std::make_pair(v.getAsOpaquePointer(), joinIndex(index));
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  FailureOr<std::string> result;
  Type element = getElementTypeOrSelf(v.getType());
  StringRef storage = lowPrecisionStorage(element);
  if (auto argument = dyn_cast<BlockArgument>(v)) {
    std::string type = cTypeOf(element);
    std::string k = std::to_string(argument.getArgNumber());
    std::string load = vectorElement >= 0 && !isScalar(v)
                           ? "q" + k + "[" + std::to_string(vectorElement) + "]"
                           : "p" + k + "[" + linear(shapeOf(v), index) + "]";
    if (!storage.empty())
      load = ("dlc_load_" + storage + "(" + load + ")").str();
    result = let(type, load);
  } else {
    Operation *op = v.getDefiningOp();
    result = compute(op, v, index);
    // What an op computes in float is rounded to its low-precision type;
    // views, moves and literals carry values of the type already.
    KernelRole role = kernelRoleOf(op);
    if (succeeded(result) && !storage.empty() && role != KernelRole::View &&
        role != KernelRole::Movement && role != KernelRole::Inlined)
      result =
          let("float", ("dlc_round_" + storage + "(" + *result + ")").str());
  }
  if (failed(result))
    return failure();
  memo[key] = *result;
  memoLog.push_back(key);
  return result;
}

FailureOr<std::string> ScalarEmitter::literal(ConstantOp op) {
  auto dense = cast<DenseElementsAttr>(op.getValue());
  Type element = dense.getElementType();
  if (element.isInteger(1))
    return std::string(dense.getSplatValue<bool>() ? "true" : "false");
  if (auto integer = dyn_cast<IntegerType>(element)) {
    FailureOr<std::string> type = cType(op, element);
    if (failed(type))
      return failure();
    APInt value = dense.getSplatValue<APInt>();
    std::string digits = integer.isUnsigned()
                             ? std::to_string(value.getZExtValue())
                             : std::to_string(value.getSExtValue());
    // INT64_MIN has no literal; spell it as an expression.
    if (integer.getWidth() == 64 && !integer.isUnsigned() &&
        value.isMinSignedValue())
      return std::string("(int64_t)(-9223372036854775807LL - 1)");
    std::string suffix = integer.getWidth() != 64 ? ""
                         : integer.isUnsigned()   ? "ULL"
                                                  : "LL";
    return "(" + *type + ")(" + digits + suffix + ")";
  }
  bool isF32 = element.isF32() || !lowPrecisionStorage(element).empty();
  if (!isF32 && !element.isF64())
    return cType(op, element);
  double value = dense.getSplatValue<APFloat>().convertToDouble();
  if (!std::isfinite(value)) {
    if (std::isnan(value))
      return std::string(isF32 ? "dlc_nan_f32()" : "dlc_nan_f64()");
    return std::string(value > 0 ? "" : "-") +
           (isF32 ? "dlc_inf_f32()" : "dlc_inf_f64()");
  }
  // Hexadecimal literals are exact.
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%a", value);
  return (isF32 ? "float(" : "double(") + std::string(buffer) + ")";
}

FailureOr<std::string> ScalarEmitter::compute(Operation *op, Value v,
                                              ArrayRef<std::string> index) {
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    if (kernelRoleOf(op) != KernelRole::Inlined)
      return op->emitOpError() << "is a non-splat constant inside a fusion; "
                                  "it must be a fusion operand";
    return literal(constant);
  }
  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
      .Case<TransposeOp>([&](TransposeOp t) -> FailureOr<std::string> {
        Index in(index.size());
        for (auto [d, p] : llvm::enumerate(t.getPermutation()))
          in[p] = index[d];
        return value(t.getInput(), in);
      })
      .Case<BroadcastToOp>([&](BroadcastToOp b) {
        return value(b.getInput(),
                     broadcastIndex(shapeOf(b.getInput()), index));
      })
      .Case<SliceOp>([&](SliceOp s) -> FailureOr<std::string> {
        Index in;
        for (auto [d, offset, stride] :
             llvm::enumerate(s.getOffsets(), s.getStrides())) {
          if (offset == 0 && stride == 1)
            in.push_back(index[d]);
          else
            in.push_back(let("int64_t", "(int64_t)" + std::to_string(offset) +
                                            " + (" + index[d] + ") * " +
                                            std::to_string(stride)));
        }
        return value(s.getInput(), in);
      })
      .Case<ReshapeOp>([&](ReshapeOp r) { return reshape(r, index); })
      .Case<PadOp>([&](PadOp p) { return pad(p, index); })
      .Case<ConcatOp>([&](ConcatOp c) { return concat(c, index); })
      .Case<GatherOp>([&](GatherOp g) {
        return gather(g, g.getData(), g.getIndices(),
                      static_cast<int64_t>(g.getAxis()), false, index);
      })
      .Case<GatherElementsOp>([&](GatherElementsOp g) {
        return gather(g, g.getData(), g.getIndices(),
                      static_cast<int64_t>(g.getAxis()), true, index);
      })
      .Case<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp>(
          [&](auto r) -> FailureOr<std::string> {
            SmallVector<int64_t> axes(r.getAxes());
            return reduction(r, axes, index);
          })
      .Case<ArgMaxOp, ArgMinOp>([&](auto r) {
        return argReduce(r, static_cast<int64_t>(r.getAxis()), r.getKeepDims(),
                         r.getSelectLastIndex(), index);
      })
      .Case<CumSumOp>([&](CumSumOp c) { return cumsum(c, index); })
      .Case<TopKOp>([&](TopKOp t) { return topK(t, v, index); })
      .Case<DropoutOp>([&](DropoutOp d) { return dropout(d, v, index); })
      .Case<RandomUniformOp>([&](RandomUniformOp r) -> FailureOr<std::string> {
        // Drawn in double and rounded once, as the evaluator draws it.
        FailureOr<std::string> type = cType(r, r.getType().getElementType());
        FailureOr<std::string> seed = value(r.getSeed(), Index());
        FailureOr<std::string> counter =
            drawCounter(r.getOffset(), shapeOf(r.getResult()), index);
        if (failed(type) || failed(seed) || failed(counter))
          return failure();
        return let(*type, "(" + *type + ")dlc_philox_uniform((uint64_t)" +
                              *seed + ", " + std::to_string(r.getStream()) +
                              "ULL, " + *counter + ")");
      })
      .Case<ScatterElementsOp>(
          [&](ScatterElementsOp s) { return scatterAsGather(s, index); })
      .Case<SegmentSumOp>([&](SegmentSumOp s) { return segmentSum(s, index); })
      .Case<MaxPoolGradOp>(
          [&](MaxPoolGradOp m) { return maxPoolGradAsGather(m, index); })
      .Case<MaxPoolOp, SumPoolOp>([&](auto p) {
        return pool(p, p.getWindow(), p.getStride(), p.getPadLow(),
                    p.getDilation(), index);
      })
      .Default([&](Operation *other) -> FailureOr<std::string> {
        if (kernelRoleOf(other) == KernelRole::Elementwise)
          return elementwise(other, index);
        return other->emitOpError()
               << "has no generated kernel yet (supported in fusions: "
                  "elementwise, data movement, gather, reductions, pooling)";
      });
}

FailureOr<std::string> ScalarEmitter::elementwise(Operation *op,
                                                  ArrayRef<std::string> index) {
  SmallVector<std::string> args;
  for (Value operand : op->getOperands()) {
    FailureOr<std::string> arg =
        value(operand, broadcastIndex(shapeOf(operand), index));
    if (failed(arg))
      return failure();
    args.push_back(*arg);
  }
  Type resultElement = getElementTypeOrSelf(op->getResult(0).getType());
  Type operandElement = getElementTypeOrSelf(op->getOperand(0).getType());
  FailureOr<std::string> type = cType(op, resultElement);
  if (failed(type) || failed(cType(op, operandElement)))
    return failure();
  bool floating = isa<FloatType>(operandElement);
  auto call = [&](StringRef fn) {
    return (fn + "(" + llvm::join(args, ", ") + ")").str();
  };
  auto infix = [&](StringRef symbol) {
    return "(" + args[0] + " " + symbol.str() + " " + args[1] + ")";
  };
  auto floatOnly = [&](StringRef fn) -> FailureOr<std::string> {
    if (!floating)
      return op->emitOpError() << "on integers has no generated kernel";
    return call(fn);
  };
  FailureOr<std::string> expression =
      llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
          .Case<NegOp>([&](auto) { return call("dlc_neg"); })
          .Case<AbsOp>([&](auto) { return call("dlc_abs"); })
          .Case<SignOp>([&](auto) { return call("dlc_sign"); })
          .Case<ExpOp>([&](auto) { return floatOnly("dlc_exp"); })
          .Case<LogOp>([&](auto) { return floatOnly("dlc_log"); })
          .Case<SqrtOp>([&](auto) { return floatOnly("dlc_sqrt"); })
          .Case<RsqrtOp>([&](auto) { return floatOnly("dlc_rsqrt"); })
          .Case<ReciprocalOp>([&](auto) { return floatOnly("dlc_reciprocal"); })
          .Case<CeilOp>([&](auto) { return floatOnly("dlc_ceil"); })
          .Case<FloorOp>([&](auto) { return floatOnly("dlc_floor"); })
          .Case<RoundOp>([&](auto) { return floatOnly("dlc_round"); })
          .Case<ErfOp>([&](auto) { return floatOnly("dlc_erf"); })
          .Case<SinOp>([&](auto) { return floatOnly("dlc_sin"); })
          .Case<CosOp>([&](auto) { return floatOnly("dlc_cos"); })
          .Case<TanhOp>([&](auto) { return floatOnly("dlc_tanh"); })
          .Case<TanOp>([&](auto) { return floatOnly("dlc_tan"); })
          .Case<AsinOp>([&](auto) { return floatOnly("dlc_asin"); })
          .Case<AcosOp>([&](auto) { return floatOnly("dlc_acos"); })
          .Case<AtanOp>([&](auto) { return floatOnly("dlc_atan"); })
          .Case<SinhOp>([&](auto) { return floatOnly("dlc_sinh"); })
          .Case<CoshOp>([&](auto) { return floatOnly("dlc_cosh"); })
          .Case<AsinhOp>([&](auto) { return floatOnly("dlc_asinh"); })
          .Case<AcoshOp>([&](auto) { return floatOnly("dlc_acosh"); })
          .Case<AtanhOp>([&](auto) { return floatOnly("dlc_atanh"); })
          .Case<SigmoidOp>([&](auto) { return floatOnly("dlc_sigmoid"); })
          .Case<NotOp>([&](auto) { return "(!" + args[0] + ")"; })
          .Case<AddOp>([&](auto) { return infix("+"); })
          .Case<SubOp>([&](auto) { return infix("-"); })
          .Case<MulOp>([&](auto) { return infix("*"); })
          .Case<DivOp>([&](auto) { return call("dlc_div"); })
          .Case<RemOp>([&](auto) { return call("dlc_rem"); })
          .Case<PowOp>([&](auto) { return floatOnly("dlc_pow"); })
          .Case<MaxOp>([&](auto) { return call("dlc_max"); })
          .Case<MinOp>([&](auto) { return call("dlc_min"); })
          .Case<AndOp>([&](auto) { return infix("&&"); })
          .Case<OrOp>([&](auto) { return infix("||"); })
          .Case<XorOp>([&](auto) { return infix("!="); })
          .Case<CompareOp>([&](CompareOp c) {
            switch (c.getPredicate()) {
            case ComparePredicate::eq:
              return infix("==");
            case ComparePredicate::ne:
              return infix("!=");
            case ComparePredicate::lt:
              return infix("<");
            case ComparePredicate::le:
              return infix("<=");
            case ComparePredicate::gt:
              return infix(">");
            case ComparePredicate::ge:
              return infix(">=");
            }
            llvm_unreachable("all predicates handled");
          })
          .Case<SelectOp>([&](auto) {
            return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")";
          })
          .Case<CastOp>([&](auto) -> std::string {
            // ONNX Cast: anything to bool is `!= 0`; bool converts as 0/1.
            if (resultElement.isInteger(1))
              return "(" + args[0] + " != 0)";
            // Wide integers and doubles reach a 16-bit float through
            // double, rounded once.
            bool wide = operandElement.isF64() ||
                        (operandElement.isInteger() &&
                         operandElement.getIntOrFloatBitWidth() > 16);
            if (wide && !lowPrecisionStorage(resultElement).empty())
              return heldAs(resultElement, "double",
                            "((double)" + args[0] + ")", *type);
            return "(" + *type + ")(" + args[0] + ")";
          })
          .Default([&](Operation *) -> FailureOr<std::string> {
            return op->emitOpError() << "has no generated kernel yet";
          });
  if (failed(expression))
    return failure();
  std::string name = fresh("v");
  line("const " + *type + " " + name + " = " + *expression + ";");
  return name;
}

FailureOr<std::string> ScalarEmitter::reshape(ReshapeOp op,
                                              ArrayRef<std::string> index) {
  ArrayRef<int64_t> from = shapeOf(op.getInput());
  if (from.empty() || ShapedType::getNumElements(from) == 1)
    return value(op.getInput(), Index(from.size(), "0"));
  std::string flat = let("int64_t", linear(shapeOf(op.getResult()), index));
  Index in(from.size());
  int64_t stride = 1;
  for (size_t d = from.size(); d-- > 0;) {
    std::string coordinate =
        stride == 1 ? flat : "(" + flat + " / " + std::to_string(stride) + ")";
    if (d != 0)
      coordinate = "(" + coordinate + " % " + std::to_string(from[d]) + ")";
    in[d] = from[d] == 1 ? "0" : let("int64_t", coordinate);
    stride *= from[d];
  }
  return value(op.getInput(), in);
}

FailureOr<std::string> ScalarEmitter::drawCounter(Value offset,
                                                  ArrayRef<int64_t> shape,
                                                  ArrayRef<std::string> index) {
  std::string counter = "(uint64_t)(" + linear(shape, index) + ")";
  if (!offset)
    return counter;
  FailureOr<std::string> start = value(offset, Index());
  if (failed(start))
    return failure();
  // Unsigned, so that the sum wraps as the evaluator's does.
  return "((uint64_t)" + *start + " + " + counter + ")";
}

FailureOr<std::string> ScalarEmitter::dropout(DropoutOp op, Value v,
                                              ArrayRef<std::string> index) {
  double ratio = op.getRatio().convertToDouble();
  if (v == op.getMask()) {
    if (ratio == 0.0)
      return std::string("true");
    FailureOr<std::string> seed = value(op.getSeed(), Index());
    FailureOr<std::string> counter =
        drawCounter(op.getOffset(), shapeOf(op.getInput()), index);
    if (failed(seed) || failed(counter))
      return failure();
    char literal[64];
    std::snprintf(literal, sizeof(literal), "%a", ratio);
    return let("bool", "dlc_dropout_keeps((uint64_t)" + *seed + ", " +
                           std::to_string(op.getStream()) + "ULL, " + *counter +
                           ", " + literal + ")");
  }
  FailureOr<std::string> type =
      cType(op, op.getOutput().getType().getElementType());
  FailureOr<std::string> keep = value(op.getMask(), index);
  FailureOr<std::string> x = value(op.getInput(), index);
  if (failed(type) || failed(keep) || failed(x))
    return failure();
  if (ratio == 0.0)
    return *x;
  // Scaled in double and rounded once, as the evaluator computes it.
  char scale[64];
  std::snprintf(scale, sizeof(scale), "%a", 1.0 / (1.0 - ratio));
  std::string name = fresh("v");
  line("const " + *type + " " + name + " = " + *keep + " ? (" + *type +
       ")((double)" + *x + " * " + scale + ") : (" + *type + ")0;");
  return name;
}

FailureOr<std::string> ScalarEmitter::pad(PadOp op,
                                          ArrayRef<std::string> index) {
  ArrayRef<int64_t> from = shapeOf(op.getInput());
  FailureOr<std::string> type = cType(op, op.getType().getElementType());
  if (failed(type))
    return failure();
  Index in;
  SmallVector<std::string> inside;
  for (auto [d, low] : llvm::enumerate(op.getLow())) {
    std::string shifted =
        low == 0
            ? index[d]
            : let("int64_t", "(" + index[d] + ") - " + std::to_string(low));
    std::string n = std::to_string(from[d]);
    switch (op.getMode()) {
    case PadMode::constant:
      in.push_back(shifted);
      if (op.getLow()[d] != 0 || op.getHigh()[d] != 0)
        inside.push_back("(" + shifted + " >= 0 && " + shifted + " < " + n +
                         ")");
      break;
    case PadMode::edge:
      in.push_back(
          let("int64_t", "dlc_clamp_index(" + shifted + ", " + n + ")"));
      break;
    case PadMode::reflect:
      in.push_back(
          let("int64_t", "dlc_reflect_index(" + shifted + ", " + n + ")"));
      break;
    }
  }
  if (inside.empty())
    return value(op.getInput(), in);
  std::string padValue = "(" + *type + ")0";
  if (op.getValue()) {
    FailureOr<std::string> v = value(op.getValue(), Index());
    if (failed(v))
      return failure();
    padValue = *v;
  }
  std::string name = fresh("v");
  line(*type + " " + name + " = " + padValue + ";");
  open("if (" + llvm::join(inside, " && ") + ")");
  FailureOr<std::string> v = value(op.getInput(), in);
  if (failed(v))
    return failure();
  line(name + " = " + *v + ";");
  close();
  return name;
}

FailureOr<std::string> ScalarEmitter::concat(ConcatOp op,
                                             ArrayRef<std::string> index) {
  FailureOr<std::string> type = cType(op, op.getType().getElementType());
  if (failed(type))
    return failure();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  std::string name = fresh("v");
  line(*type + " " + name + ";");
  int64_t offset = 0;
  auto inputs = op.getInputs();
  for (auto [k, input] : llvm::enumerate(inputs)) {
    int64_t size = shapeOf(input)[axis];
    std::string condition =
        "(" + index[axis] + ") < " + std::to_string(offset + size);
    if (k == 0)
      open("if (" + condition + ")");
    else if (k + 1 < inputs.size())
      open("else if (" + condition + ")");
    else
      open("else");
    Index in(index.begin(), index.end());
    if (offset != 0)
      in[axis] =
          let("int64_t", "(" + index[axis] + ") - " + std::to_string(offset));
    FailureOr<std::string> v = value(input, in);
    if (failed(v))
      return failure();
    line(name + " = " + *v + ";");
    close();
    offset += size;
  }
  return name;
}

FailureOr<std::string> ScalarEmitter::gather(Operation *op, Value data,
                                             Value indices, int64_t axis,
                                             bool elements,
                                             ArrayRef<std::string> index) {
  ArrayRef<int64_t> dataShape = shapeOf(data);
  int64_t indexRank = static_cast<int64_t>(shapeOf(indices).size());
  Index at, in;
  if (elements) {
    at.assign(index.begin(), index.end());
  } else {
    at.assign(index.begin() + axis, index.begin() + axis + indexRank);
  }
  if (dataShape[axis] == 0 && ShapedType::getNumElements(shapeOf(indices)))
    return op->emitOpError() << "gathers from an empty axis " << axis
                             << "; no index can be in range";
  FailureOr<std::string> raw = value(indices, at);
  if (failed(raw))
    return failure();
  // Negative indices count from the end; out-of-range ones are clamped so a
  // bad label can never read outside the buffer (the runners validate
  // labels before a step).
  std::string position =
      let("int64_t", "dlc_clamp_index(dlc_wrap_index((int64_t)" + *raw + ", " +
                         std::to_string(dataShape[axis]) + "), " +
                         std::to_string(dataShape[axis]) + ")");
  if (elements) {
    in.assign(index.begin(), index.end());
    in[axis] = position;
  } else {
    in.assign(index.begin(), index.begin() + axis);
    in.push_back(position);
    in.append(index.begin() + axis + indexRank, index.end());
  }
  return value(data, in);
}
