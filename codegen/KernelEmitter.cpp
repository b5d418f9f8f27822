//===- KernelEmitter.cpp - dlc.fusion to C++ and CUDA C++ kernels ---------===//
//
// The emitter walks a fusion's body by demand (see KernelEmitter.h). Each
// value computed at an index becomes one `const T vN = ...;` line, memoized
// by (value, index) within the current scope, so a value read twice at the
// same index is computed once, while one read at different indices (under
// a broadcast, in a window) is recomputed: the fusion pass's control
// function is what keeps that recomputation cheap. Conditional reads (pad,
// concat, pooling borders) and loop bodies open scopes, so nothing computed
// under a condition or inside a loop is reused outside it.
//
// Numerics follow the reference evaluator: floating reductions accumulate
// in double on the CPU (float on CUDA), max/min propagate NaN, max-pool
// gradients pick the first maximum in row-major window order, integer
// division by zero gives 0. Gradient routing (scatters with few updates a
// line, max-pool gradients) is computed as a gather: each result element
// collects what lands on it, in the order the evaluator adds it.
//
// CUDA kernels take three shapes beyond one thread per iteration:
//  - A warp or a block per iteration, for reductions long enough to split:
//    the threads fold strided shares of the reduced elements and meet in a
//    butterfly of warp shuffles, then (a block) in shared memory, in an
//    order fixed by the thread count alone (Schedule.h says how
//    many threads).
//  - W elements per iteration (16 bytes of the widest buffer), for
//    elementwise kernels in one linear space: a group of aligned buffers is
//    read and written whole, which NVVM's load/store vectorizer turns into
//    16-byte accesses (ld.global.v4, st.global.v4): a quarter of the memory
//    instructions for the same bytes.
//  - Several fusions' kernels in one (emitKernelGroup): the members'
//    iterations one after the other, each running its member's code, so
//    that many small independent kernels (an optimizer's per-parameter
//    updates) take one launch.
//
//===----------------------------------------------------------------------===//

#include "codegen/KernelEmitter.h"
#include "codegen/AttentionKernels.h"
#include "passes/fusion/Schedule.h"
#include "passes/fusion/Fusion.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::codegen;

namespace {

using Index = SmallVector<std::string, 4>;

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

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

bool isSimpleExpression(StringRef s) {
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
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

class Emitter {
public:
  /// `threads`: the CUDA threads running each iteration (a warp, 32, or a
  /// block, 64 to 1024), over which reductions outside every loop are
  /// split; 1 for a thread per iteration.
  Emitter(Target target, int64_t threads = 1)
      : target(target), threads(threads) {}

  /// The per-element statements computing every output of `fusion` at the
  /// index `i0..i{r-1}` of the first output and storing them.
  FailureOr<std::string> emitBody(FusionOp fusion);
  /// The statements of a linear-space fusion for the group of `width`
  /// elements starting at `it * width` (CUDA): whole and aligned groups
  /// through aligned pointers, unrolled; others element by element.
  FailureOr<std::string> emitVectorBody(FusionOp fusion, int64_t width);
  /// How many reductions were split over an iteration's threads.
  unsigned splitReductions() const { return split; }
  /// The statements of a max-pool gradient fusion for plane (i0, i1),
  /// walking the windows (the CPU's form: each window scanned once, where
  /// the gather scans every window an element is in).
  FailureOr<std::string> emitMaxPoolGradBody(FusionOp fusion, MaxPoolGradOp op);
  /// The statements of a scatter fusion too wide to gather
  /// (gathersScatter) at index `i0..`: the chunk of the axis's targets
  /// (when `chunks` > 1, chooseScatterChunks), then the data shape without
  /// the scatter axis.
  FailureOr<std::string> emitScatterBody(FusionOp fusion,
                                         ScatterElementsOp scatter,
                                         int64_t chunks);

  /// Makes the iteration space one-dimensional when `fusion` allows it
  /// (see linearSpace); returns whether it did.
  bool useLinearSpace(FusionOp fusion);

private:
  /// Computes every result of `fusion` at `index` and stores it (thread 0
  /// of an iteration's threads alone when there are several).
  LogicalResult storeResults(FusionOp fusion, ArrayRef<std::string> index);
  FailureOr<std::string> value(Value v, ArrayRef<std::string> index);
  FailureOr<std::string> compute(Operation *op, Value v,
                                 ArrayRef<std::string> index);
  FailureOr<std::string> elementwise(Operation *op,
                                     ArrayRef<std::string> index);
  FailureOr<std::string> reduction(Operation *op, ArrayRef<int64_t> axes,
                                   ArrayRef<std::string> index);
  /// Opens the loops over a window's taps for the window at `position`
  /// (one coordinate per spatial dimension) and a condition that the tap is
  /// inside `spatial` (not padding); appends the taps' input coordinates to
  /// `in`. Returns how many scopes to close.
  size_t openWindowTaps(ArrayRef<int64_t> window, ArrayRef<int64_t> stride,
                        ArrayRef<int64_t> padLow, ArrayRef<int64_t> dilation,
                        ArrayRef<std::string> position,
                        ArrayRef<int64_t> spatial, Index &in);
  FailureOr<std::string> pool(Operation *op, ArrayRef<int64_t> window,
                              ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padLow,
                              ArrayRef<int64_t> dilation,
                              ArrayRef<std::string> index);
  /// argmax or argmin at `index`: the position of the first best element
  /// along `axis` (the last with `selectLast`), a NaN being best, as the
  /// evaluator chooses.
  FailureOr<std::string> argReduce(Operation *op, int64_t axis, bool keepDims,
                                   bool selectLast,
                                   ArrayRef<std::string> index);
  /// A cumulative sum at `index`: the prefix (suffix with `reverse`) along
  /// the axis up to the element, itself excluded with `exclusive`, summed in
  /// the evaluator's order and rounded once.
  FailureOr<std::string> cumsum(CumSumOp op, ArrayRef<std::string> index);
  /// `v` (the values or the indices) of a top_k at `index`: the element of
  /// rank index[axis] in the evaluator's strict order (NaN first for the
  /// largest, last for the smallest; equal values by position), found by
  /// rank + 1 scans of the line, each for the successor of the last.
  FailureOr<std::string> topK(TopKOp op, Value v, ArrayRef<std::string> index);
  FailureOr<std::string> reshape(ReshapeOp op, ArrayRef<std::string> index);
  /// `v` (the output or the mask) of a dropout at `index`: the mask bit is
  /// Philox's draw for the element's row-major position, as the evaluator's.
  FailureOr<std::string> dropout(DropoutOp op, Value v,
                                 ArrayRef<std::string> index);
  FailureOr<std::string> pad(PadOp op, ArrayRef<std::string> index);
  FailureOr<std::string> concat(ConcatOp op, ArrayRef<std::string> index);
  FailureOr<std::string> gather(Operation *op, Value data, Value indices,
                                int64_t axis, bool elements,
                                ArrayRef<std::string> index);
  FailureOr<std::string> literal(ConstantOp op);
  /// A scatter's result at `index`, gathered: the data element, combined in
  /// update order with every update of the same line whose index lands on
  /// it (gathersScatter says when this form is used).
  FailureOr<std::string> scatterAsGather(ScatterElementsOp op,
                                         ArrayRef<std::string> index);
  /// A segment sum at `index`: the segment's rows in sorted order, from
  /// its first position (`starts`) while their id is the segment's.
  FailureOr<std::string> segmentSum(SegmentSumOp op,
                                    ArrayRef<std::string> index);
  /// A max-pool gradient at input position `index`, gathered: the sum, in
  /// row-major window order, of the output gradients of the windows that
  /// contain the position and chose it as their first maximum.
  FailureOr<std::string> maxPoolGradAsGather(MaxPoolGradOp op,
                                             ArrayRef<std::string> index);
  /// Scans the window at output `position` of a max pool over `op`'s input
  /// at plane (index[0], index[1]) and returns the name of the plane
  /// position of its first maximum (row-major taps; a greater or NaN value
  /// replaces the choice), -1 for a window that sees only padding.
  FailureOr<std::string> windowArgmax(MaxPoolGradOp op,
                                      ArrayRef<std::string> index,
                                      ArrayRef<std::string> position);

  /// The index of an operand of shape `from` read by a broadcasting op at
  /// `index` of its result.
  Index broadcastIndex(ArrayRef<int64_t> from,
                       ArrayRef<std::string> index) const;
  /// Row-major linear offset of `index` in `shape`.
  std::string linear(ArrayRef<int64_t> shape,
                     ArrayRef<std::string> index) const;
  /// A name holding `expression` (itself when already a name or literal).
  std::string let(StringRef type, StringRef expression);
  std::string fresh(StringRef prefix) {
    return (prefix + Twine(counter++)).str();
  }
  std::string accumulatorType(Type element) const;
  FailureOr<std::string> cType(Operation *op, Type type);

  void line(const Twine &text) {
    body.append(2 * depth, ' ');
    body += text.str();
    body += '\n';
  }
  void open(const Twine &text, bool loop = false) {
    line(text + " {");
    ++depth;
    scopes.push_back({memoLog.size(), loop});
    loopDepth += loop;
  }
  void openLoop(const Twine &text) { open(text, /*loop=*/true); }
  void close(StringRef suffix = "") {
    auto [mark, loop] = scopes.pop_back_val();
    while (memoLog.size() > mark) {
      memo.erase(memoLog.back());
      memoLog.pop_back();
    }
    loopDepth -= loop;
    --depth;
    line("}" + suffix);
  }

  /// The name of a thread's place among its iteration's threads.
  std::string laneName() const {
    return threads == 32 ? "warp_lane" : "block_lane";
  }

  Target target;
  int64_t threads;
  /// Reductions split over an iteration's threads so far.
  unsigned split = 0;
  /// In emitVectorBody's aligned path, the element of the group being
  /// computed: operands are read through the aligned pointers qK. -1
  /// elsewhere.
  int64_t vectorElement = -1;
  /// When every value of an elementwise fusion has the results' element
  /// count or a single element, the iteration space is one dimension of
  /// this many elements: no coordinates to compute, contiguous loops (the
  /// optimizer updates of 4-d convolution weights, say). -1 otherwise.
  int64_t linearSpace = -1;
  std::string body;
  unsigned depth = 0;
  unsigned counter = 0;
  llvm::DenseMap<Value, unsigned> parameterOf;
  std::map<std::pair<void *, std::string>, std::string> memo;
  SmallVector<std::pair<void *, std::string>> memoLog;
  /// Open scopes: where their memo entries start, and whether each is a
  /// loop.
  SmallVector<std::pair<size_t, bool>> scopes;
  unsigned loopDepth = 0;
};

std::string Emitter::linear(ArrayRef<int64_t> shape,
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

Index Emitter::broadcastIndex(ArrayRef<int64_t> from,
                              ArrayRef<std::string> index) const {
  if (linearSpace >= 0)
    return Index(index.begin(), index.end());
  Index result;
  size_t lead = index.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    result.push_back(from[d] == 1 ? "0" : index[lead + d]);
  return result;
}

std::string Emitter::let(StringRef type, StringRef expression) {
  if (isSimpleExpression(expression))
    return expression.str();
  std::string name = fresh("v");
  line("const " + type + " " + name + " = " + expression + ";");
  return name;
}

std::string Emitter::accumulatorType(Type element) const {
  if (element.isF32() || !lowPrecisionStorage(element).empty())
    return target == Target::Cpu ? "double" : "float";
  if (element.isF64())
    return "double";
  return cTypeOf(element);
}

FailureOr<std::string> Emitter::cType(Operation *op, Type type) {
  std::string c = cTypeOf(getElementTypeOrSelf(type));
  if (c.empty())
    return op->emitOpError()
           << "has element type " << getElementTypeOrSelf(type)
           << ", which generated kernels do not handle yet";
  return c;
}

FailureOr<std::string> Emitter::value(Value v, ArrayRef<std::string> index) {
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
    std::string load =
        vectorElement >= 0 && !isScalar(v)
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
      result = let("float", ("dlc_round_" + storage + "(" + *result + ")").str());
  }
  if (failed(result))
    return failure();
  memo[key] = *result;
  memoLog.push_back(key);
  return result;
}

FailureOr<std::string> Emitter::literal(ConstantOp op) {
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

FailureOr<std::string> Emitter::compute(Operation *op, Value v,
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
        if (failed(type) || failed(seed))
          return failure();
        return let(*type, "(" + *type + ")dlc_philox_uniform((uint64_t)" +
                              *seed + ", " + std::to_string(r.getStream()) +
                              "ULL, (uint64_t)(" +
                              linear(shapeOf(r.getResult()), index) + "))");
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

FailureOr<std::string> Emitter::elementwise(Operation *op,
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
  bool isFloat = isa<FloatType>(operandElement);
  auto call = [&](StringRef fn) {
    return (fn + "(" + llvm::join(args, ", ") + ")").str();
  };
  auto infix = [&](StringRef symbol) {
    return "(" + args[0] + " " + symbol.str() + " " + args[1] + ")";
  };
  auto floatOnly = [&](StringRef fn) -> FailureOr<std::string> {
    if (!isFloat)
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

FailureOr<std::string> Emitter::reshape(ReshapeOp op,
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

FailureOr<std::string> Emitter::dropout(DropoutOp op, Value v,
                                        ArrayRef<std::string> index) {
  double ratio = op.getRatio().convertToDouble();
  if (v == op.getMask()) {
    if (ratio == 0.0)
      return std::string("true");
    FailureOr<std::string> seed = value(op.getSeed(), Index());
    if (failed(seed))
      return failure();
    char literal[64];
    std::snprintf(literal, sizeof(literal), "%a", ratio);
    return let("bool", "dlc_dropout_keeps((uint64_t)" + *seed + ", " +
                           std::to_string(op.getStream()) + "ULL, (uint64_t)(" +
                           linear(shapeOf(op.getInput()), index) + "), " +
                           literal + ")");
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

FailureOr<std::string> Emitter::pad(PadOp op, ArrayRef<std::string> index) {
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

FailureOr<std::string> Emitter::concat(ConcatOp op,
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

FailureOr<std::string> Emitter::gather(Operation *op, Value data, Value indices,
                                       int64_t axis, bool elements,
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

FailureOr<std::string> Emitter::reduction(Operation *op, ArrayRef<int64_t> axes,
                                          ArrayRef<std::string> index) {
  Value input = op->getOperand(0);
  ArrayRef<int64_t> shape = shapeOf(input);
  Type element = getElementTypeOrSelf(input.getType());
  FailureOr<std::string> type = cType(op, element);
  if (failed(type))
    return failure();
  bool keepDims = op->hasAttr("keep_dims");
  std::string acc = fresh("a");
  // A maximum or minimum is exact in the element type; sums and products
  // accumulate wider.
  bool extremum = isa<ReduceMaxOp, ReduceMinOp>(op);
  std::string accType = extremum ? *type : accumulatorType(element);
  std::string init = "(" + accType + ")0";
  std::string combine;
  if (isa<ReduceSumOp>(op)) {
    combine = acc + " = " + acc + " + (" + accType + ")%s;";
  } else if (isa<ReduceProdOp>(op)) {
    init = "(" + accType + ")1";
    combine = acc + " = " + acc + " * (" + accType + ")%s;";
  } else {
    bool isMax = isa<ReduceMaxOp>(op);
    init = (isMax ? "dlc_lowest<" : "dlc_highest<") + accType + ">()";
    combine = acc + " = " + (isMax ? "dlc_max(" : "dlc_min(") + acc + ", (" +
              accType + ")%s);";
  }
  // With T threads an iteration, a reduction outside every loop of the body
  // is split over them: thread l folds the reduced elements l, l + T, ... in
  // row-major order over the reduced axes (neighbouring threads read
  // neighbouring elements when the innermost axis is reduced), then a
  // butterfly of warp shuffles combines a warp's partials, and in a block
  // the warps' totals meet in shared memory in warp order
  // (dlc_block_allreduce), so that every thread holds the result, which the
  // rest of the body (computed by every thread) reads. The order depends on
  // T alone.
  bool overLanes = threads > 1 && loopDepth == 0;
  // A sum whose innermost loop runs along the contiguous last dimension
  // keeps kLanes partial sums, so the loop carries no serial dependence and
  // vectorizes; the lanes are added pairwise at the end.
  constexpr int64_t kLanes = 8;
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  bool lanes = !overLanes && isa<ReduceSumOp>(op) && !shape.empty() &&
               llvm::is_contained(axes, last) && shape[last] % kLanes == 0;
  if (lanes) {
    line(accType + " " + acc + "[" + std::to_string(kLanes) + "] = {};");
    combine = acc + "[lane] = " + acc + "[lane] + (" + accType + ")%s;";
  } else {
    line(accType + " " + acc + " = " + init + ";");
  }
  Index in;
  size_t k = 0;
  unsigned opened = 0;
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= shape[axis];
  std::string flat;
  if (overLanes) {
    flat = fresh("r");
    openLoop("for (int64_t " + flat + " = " + laneName() + "; " + flat +
             " < " + std::to_string(count) + "; " + flat +
             " += " + std::to_string(threads) + ")");
    ++opened;
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (llvm::is_contained(axes, static_cast<int64_t>(d))) {
      if (overLanes) {
        // The coordinate along axis d of reduced element `flat`.
        int64_t stride = 1;
        for (int64_t axis : axes)
          stride *= axis > static_cast<int64_t>(d) ? shape[axis] : 1;
        std::string coordinate =
            stride == 1 ? flat
                        : "(" + flat + " / " + std::to_string(stride) + ")";
        if (static_cast<int64_t>(d) != axes.front())
          coordinate =
              "(" + coordinate + " % " + std::to_string(shape[d]) + ")";
        in.push_back(count == 0 || shape[d] == 1 ? std::string("0")
                                                 : let("int64_t", coordinate));
      } else if (lanes && static_cast<int64_t>(d) == last) {
        std::string loop = fresh("r");
        openLoop("for (int64_t " + loop + " = 0; " + loop + " < " +
                 std::to_string(shape[d]) + "; " + loop +
                 " += " + std::to_string(kLanes) + ")");
        openLoop("for (int64_t lane = 0; lane < " + std::to_string(kLanes) +
                 "; ++lane)");
        opened += 2;
        in.push_back(let("int64_t", loop + " + lane"));
      } else {
        std::string loop = fresh("r");
        openLoop("for (int64_t " + loop + " = 0; " + loop + " < " +
                 std::to_string(shape[d]) + "; ++" + loop + ")");
        ++opened;
        in.push_back(loop);
      }
      if (keepDims)
        ++k;
    } else {
      in.push_back(index[k++]);
    }
  }
  FailureOr<std::string> v = value(input, in);
  if (failed(v))
    return failure();
  std::string statement = combine;
  statement.replace(statement.find("%s"), 2, *v);
  line(statement);
  for (unsigned i = 0; i < opened; ++i)
    close();
  if (overLanes) {
    ++split;
    if (threads == 32) {
      std::string exchange = combine;
      exchange.replace(exchange.find("%s"), 2,
                       "dlc_shfl_xor(" + acc + ", offset)");
      open("for (int offset = 16; offset > 0; offset /= 2)");
      line(exchange);
      close();
    } else {
      std::string pair = isa<ReduceSumOp>(op)    ? "a + b"
                         : isa<ReduceProdOp>(op) ? "a * b"
                         : isa<ReduceMaxOp>(op)  ? "dlc_max(a, b)"
                                                 : "dlc_min(a, b)";
      line(llvm::formatv("{0} = dlc_block_allreduce<{1}>({0}, []({2} a, {2} "
                         "b) {{ return ({2})({3}); });",
                         acc, threads / 32, accType, pair)
               .str());
    }
  }
  if (lanes) {
    SmallVector<std::string> terms;
    for (int64_t l = 0; l < kLanes; ++l)
      terms.push_back(acc + "[" + std::to_string(l) + "]");
    while (terms.size() > 1) {
      SmallVector<std::string> pairs;
      for (size_t t = 0; t + 1 < terms.size(); t += 2)
        pairs.push_back("(" + terms[t] + " + " + terms[t + 1] + ")");
      terms = pairs;
    }
    return let(*type, heldAs(element, accType, terms.front(), *type));
  }
  return let(*type, heldAs(element, accType, acc, *type));
}

FailureOr<std::string> Emitter::argReduce(Operation *op, int64_t axis,
                                          bool keepDims, bool selectLast,
                                          ArrayRef<std::string> index) {
  Value input = op->getOperand(0);
  FailureOr<std::string> type =
      cType(op, getElementTypeOrSelf(input.getType()));
  if (failed(type))
    return failure();
  Index in(index.begin(), index.end());
  if (keepDims)
    in[axis] = "0";
  else
    in.insert(in.begin() + axis, "0");
  FailureOr<std::string> first = value(input, in);
  if (failed(first))
    return failure();
  std::string best = fresh("best"), at = fresh("at"), k = fresh("k");
  line(*type + " " + best + " = " + *first + ";");
  line("int64_t " + at + " = 0;");
  // A NaN is the answer once found (x != x is false for integers).
  openLoop("for (int64_t " + k + " = 1; " + k + " < " +
           std::to_string(shapeOf(input)[axis]) + " && " + best +
           " == " + best + "; ++" + k + ")");
  in[axis] = k;
  FailureOr<std::string> v = value(input, in);
  if (failed(v))
    return failure();
  std::string x = let(*type, *v);
  open("if (" + x + " != " + x + " || " + x +
       (isa<ArgMaxOp>(op) ? " > " : " < ") + best +
       (selectLast ? " || " + x + " == " + best : std::string()) + ")");
  line(best + " = " + x + ";");
  line(at + " = " + k + ";");
  close();
  close();
  return at;
}

FailureOr<std::string> Emitter::cumsum(CumSumOp op,
                                       ArrayRef<std::string> index) {
  Type element = op.getType().getElementType();
  FailureOr<std::string> type = cType(op, element);
  if (failed(type))
    return failure();
  // Integers add in 64 unsigned bits, wrapping as the evaluator's (signed
  // overflow would be undefined).
  std::string accType =
      isa<IntegerType>(element) ? "uint64_t" : accumulatorType(element);
  int64_t axis = static_cast<int64_t>(op.getAxis());
  std::string size = std::to_string(shapeOf(op.getInput())[axis]);
  std::string sum = fresh("sum"), k = fresh("k");
  line(accType + " " + sum + " = 0;");
  // The evaluator walks the line from its start (its end with `reverse`)
  // and stops at the element, or just before it with `exclusive`; floats
  // add in accumulatorType (double on the CPU, as the evaluator; float on
  // CUDA).
  std::string here = index[axis];
  if (op.getReverse())
    openLoop("for (int64_t " + k + " = " + size + " - 1; " + k +
             (op.getExclusive() ? " > " : " >= ") + here + "; --" + k + ")");
  else
    openLoop("for (int64_t " + k + " = 0; " + k +
             (op.getExclusive() ? " < " : " <= ") + here + "; ++" + k + ")");
  Index in(index.begin(), index.end());
  in[axis] = k;
  FailureOr<std::string> v = value(op.getInput(), in);
  if (failed(v))
    return failure();
  line(sum + " = " + sum + " + (" + accType + ")" + *v + ";");
  close();
  return let(*type, heldAs(element, accType, sum, *type));
}

FailureOr<std::string> Emitter::topK(TopKOp op, Value v,
                                     ArrayRef<std::string> index) {
  Value input = op.getInput();
  FailureOr<std::string> type =
      cType(op, op.getValues().getType().getElementType());
  if (failed(type))
    return failure();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  std::string size = std::to_string(shapeOf(input)[axis]);
  std::string largest = op.getLargest() ? "true" : "false";
  std::string value_ = fresh("top"), at = fresh("at"), rank = fresh("r"),
              next = fresh("next"), nextAt = fresh("nat"), m = fresh("m");
  line(*type + " " + value_ + " = (" + *type + ")0;");
  line("int64_t " + at + " = -1;");
  openLoop("for (int64_t " + rank + " = 0; " + rank + " <= " + index[axis] +
           "; ++" + rank + ")");
  line(*type + " " + next + " = (" + *type + ")0;");
  line("int64_t " + nextAt + " = -1;");
  openLoop("for (int64_t " + m + " = 0; " + m + " < " + size + "; ++" + m +
           ")");
  Index in(index.begin(), index.end());
  in[axis] = m;
  FailureOr<std::string> x = value(input, in);
  if (failed(x))
    return failure();
  // Among the elements after the last one taken, the first in the order.
  open("if ((" + at + " < 0 || dlc_topk_before(" + value_ + ", " + at + ", " +
       *x + ", " + m + ", " + largest + ")) && (" + nextAt +
       " < 0 || dlc_topk_before(" + *x + ", " + m + ", " + next + ", " +
       nextAt + ", " + largest + ")))");
  line(next + " = " + *x + ";");
  line(nextAt + " = " + m + ";");
  close();
  close();
  line(value_ + " = " + next + ";");
  line(at + " = " + nextAt + ";");
  close();
  // Both results come from one scan: the other is remembered for its reads.
  Value other = v == op.getValues() ? op.getIndices() : op.getValues();
  auto key = std::make_pair(other.getAsOpaquePointer(), joinIndex(index));
  memo[key] = other == op.getIndices() ? at : value_;
  memoLog.push_back(key);
  return v == op.getValues() ? value_ : at;
}

size_t Emitter::openWindowTaps(ArrayRef<int64_t> window,
                               ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> padLow,
                               ArrayRef<int64_t> dilation,
                               ArrayRef<std::string> position,
                               ArrayRef<int64_t> spatial, Index &in) {
  SmallVector<std::string> inside;
  for (size_t s = 0; s < window.size(); ++s) {
    std::string tap = fresh("w");
    openLoop("for (int64_t " + tap + " = 0; " + tap + " < " +
             std::to_string(window[s]) + "; ++" + tap + ")");
    std::string at =
        let("int64_t", "(" + position[s] + ") * " + std::to_string(stride[s]) +
                           " - " + std::to_string(padLow[s]) + " + " + tap +
                           " * " + std::to_string(dilation[s]));
    in.push_back(at);
    inside.push_back("(" + at + " >= 0 && " + at + " < " +
                     std::to_string(spatial[s]) + ")");
  }
  open("if (" + llvm::join(inside, " && ") + ")");
  return window.size() + 1;
}

FailureOr<std::string> Emitter::pool(Operation *op, ArrayRef<int64_t> window,
                                     ArrayRef<int64_t> stride,
                                     ArrayRef<int64_t> padLow,
                                     ArrayRef<int64_t> dilation,
                                     ArrayRef<std::string> index) {
  Value input = op->getOperand(0);
  ArrayRef<int64_t> shape = shapeOf(input);
  Type element = getElementTypeOrSelf(input.getType());
  FailureOr<std::string> type = cType(op, element);
  if (failed(type))
    return failure();
  bool isMax = isa<MaxPoolOp>(op);
  std::string accType = isMax ? *type : accumulatorType(element);
  std::string acc = fresh("a");
  line(accType + " " + acc + " = " +
       (isMax ? "dlc_lowest<" + accType + ">()" : "(" + accType + ")0") + ";");
  Index in{index[0], index[1]};
  size_t opened = openWindowTaps(window, stride, padLow, dilation,
                                 ArrayRef<std::string>(index).drop_front(2),
                                 shape.drop_front(2), in);
  // Padding never wins a maximum and adds nothing to a sum.
  FailureOr<std::string> v = value(input, in);
  if (failed(v))
    return failure();
  line(acc + " = " +
       (isMax ? "dlc_max(" + acc + ", (" + accType + ")" + *v + ")"
              : acc + " + (" + accType + ")" + *v) +
       ";");
  for (size_t i = 0; i < opened; ++i)
    close();
  return let(*type, heldAs(element, accType, acc, *type));
}

FailureOr<std::string> Emitter::windowArgmax(MaxPoolGradOp op,
                                             ArrayRef<std::string> index,
                                             ArrayRef<std::string> position) {
  ArrayRef<int64_t> spatial = shapeOf(op.getInput()).drop_front(2);
  FailureOr<std::string> type = cType(op, op.getType().getElementType());
  if (failed(type))
    return failure();
  std::string best = fresh("best"), chosen = fresh("chosen");
  line(*type + " " + best + " = (" + *type + ")0;");
  line("int64_t " + chosen + " = -1;");
  Index in{index[0], index[1]};
  size_t scanned = openWindowTaps(op.getWindow(), op.getStride(),
                                  op.getPadLow(), op.getDilation(), position,
                                  spatial, in);
  FailureOr<std::string> v = value(op.getInput(), in);
  if (failed(v))
    return failure();
  open("if (" + chosen + " < 0 || " + *v + " > " + best + " || " + *v +
       " != " + *v + ")");
  line(best + " = " + *v + ";");
  line(chosen + " = " +
       linear(spatial, ArrayRef<std::string>(in).drop_front(2)) + ";");
  close();
  for (size_t i = 0; i < scanned; ++i)
    close();
  return chosen;
}

FailureOr<std::string>
Emitter::maxPoolGradAsGather(MaxPoolGradOp op, ArrayRef<std::string> index) {
  // Each input position collects from the windows that contain it, so every
  // element is one independent iteration (no thread walks a plane) and the
  // sum runs in the windows' row-major order, as the evaluator's scatter
  // adds them. Window o covers o * stride - pad + t * dilation for taps
  // t < window: along each dimension the candidates o run from
  // ceil((x + pad - (window - 1) * dilation) / stride) to
  // floor((x + pad) / stride), clipped to the output, and a candidate holds
  // x when the distance is a whole number of dilations.
  ArrayRef<int64_t> xShape = shapeOf(op.getInput());
  ArrayRef<int64_t> yShape = shapeOf(op.getGradOutput());
  ArrayRef<int64_t> window = op.getWindow(), stride = op.getStride(),
                    padLow = op.getPadLow(), dilation = op.getDilation();
  Type element = op.getType().getElementType();
  FailureOr<std::string> type = cType(op, element);
  if (failed(type))
    return failure();
  ArrayRef<int64_t> spatial = xShape.drop_front(2);
  std::string accType = accumulatorType(element);
  std::string acc = fresh("a");
  line(accType + " " + acc + " = (" + accType + ")0;");
  Index outIndex{index[0], index[1]};
  SmallVector<std::string> holds;
  unsigned opened = 0;
  for (size_t s = 0; s < spatial.size(); ++s) {
    std::string shifted = let(
        "int64_t", "(int64_t)(" + index[2 + s] + ") + " +
                       std::to_string(padLow[s]));
    std::string first =
        let("int64_t",
            "dlc_max((int64_t)0, (" + shifted + " - " +
                std::to_string((window[s] - 1) * dilation[s] - stride[s] + 1) +
                ") / " + std::to_string(stride[s]) + ")");
    std::string last =
        let("int64_t", "dlc_min((int64_t)" + std::to_string(yShape[2 + s] - 1) +
                           ", " + shifted + " / " + std::to_string(stride[s]) +
                           ")");
    std::string o = fresh("o");
    openLoop("for (int64_t " + o + " = " + first + "; " + o + " <= " + last +
             "; ++" + o + ")");
    ++opened;
    outIndex.push_back(o);
    if (dilation[s] != 1)
      holds.push_back("(" + shifted + " - " + o + " * " +
                      std::to_string(stride[s]) + ") % " +
                      std::to_string(dilation[s]) + " == 0");
  }
  if (!holds.empty()) {
    open("if (" + llvm::join(holds, " && ") + ")");
    ++opened;
  }
  FailureOr<std::string> chosen =
      windowArgmax(op, index, ArrayRef<std::string>(outIndex).drop_front(2));
  if (failed(chosen))
    return failure();
  open("if (" + *chosen + " == " +
       linear(spatial, ArrayRef<std::string>(index).drop_front(2)) + ")");
  FailureOr<std::string> dy = value(op.getGradOutput(), outIndex);
  if (failed(dy))
    return failure();
  line(acc + " = " + acc + " + (" + accType + ")" + *dy + ";");
  close();
  for (unsigned i = 0; i < opened; ++i)
    close();
  return let(*type, heldAs(element, accType, acc, *type));
}

FailureOr<std::string> Emitter::emitMaxPoolGradBody(FusionOp fusion,
                                                    MaxPoolGradOp op) {
  // Plane (i0, i1) of dx: zero it, then route each window's dy to the
  // window's first maximum, windows in row-major order as the evaluator
  // sums them.
  ArrayRef<int64_t> xShape = shapeOf(op.getInput());
  ArrayRef<int64_t> yShape = shapeOf(op.getGradOutput());
  FailureOr<std::string> type = cType(op, op.getType().getElementType());
  if (failed(type))
    return failure();
  std::string out = "p" + std::to_string(fusion.getInputs().size());
  ArrayRef<int64_t> spatial = xShape.drop_front(2);
  int64_t planeSize = ShapedType::getNumElements(spatial);
  std::string plane =
      let("int64_t", "((i0) * " + std::to_string(xShape[1]) + " + i1) * " +
                         std::to_string(planeSize));
  openLoop("for (int64_t e = 0; e < " + std::to_string(planeSize) + "; ++e)");
  line(out + "[" + plane + " + e] = (" + *type + ")0;");
  close();
  Index outIndex{"i0", "i1"};
  unsigned opened = 0;
  for (size_t s = 0; s < spatial.size(); ++s) {
    std::string o = fresh("o");
    openLoop("for (int64_t " + o + " = 0; " + o + " < " +
             std::to_string(yShape[2 + s]) + "; ++" + o + ")");
    ++opened;
    outIndex.push_back(o);
  }
  FailureOr<std::string> chosen =
      windowArgmax(op, outIndex, ArrayRef<std::string>(outIndex).drop_front(2));
  if (failed(chosen))
    return failure();
  // A window that sees only padding routes nowhere.
  open("if (" + *chosen + " >= 0)");
  FailureOr<std::string> dy = value(op.getGradOutput(), outIndex);
  if (failed(dy))
    return failure();
  std::string slot = out + "[" + plane + " + " + *chosen + "]";
  line(slot + " = " + slot + " + " + *dy + ";");
  close();
  for (unsigned i = 0; i < opened; ++i)
    close();
  return body;
}

FailureOr<std::string>
Emitter::scatterAsGather(ScatterElementsOp op, ArrayRef<std::string> index) {
  ArrayRef<int64_t> dataShape = shapeOf(op.getData());
  ArrayRef<int64_t> updateShape = shapeOf(op.getUpdates());
  int64_t axis = static_cast<int64_t>(op.getAxis());
  Type element = op.getType().getElementType();
  FailureOr<std::string> type = cType(op, element);
  if (failed(type))
    return failure();
  FailureOr<std::string> original = value(op.getData(), index);
  if (failed(original))
    return failure();
  std::string result = fresh("s");
  line(*type + " " + result + " = " + *original + ";");
  SmallVector<std::string> inside;
  for (size_t d = 0; d < dataShape.size(); ++d)
    if (static_cast<int64_t>(d) != axis && updateShape[d] != dataShape[d])
      inside.push_back("(" + index[d] + " < " + std::to_string(updateShape[d]) +
                       ")");
  size_t opened = 0;
  if (!inside.empty()) {
    open("if (" + llvm::join(inside, " && ") + ")");
    ++opened;
  }
  Index u(index.begin(), index.end());
  u[axis] = fresh("j");
  openLoop("for (int64_t " + u[axis] + " = 0; " + u[axis] + " < " +
           std::to_string(updateShape[axis]) + "; ++" + u[axis] + ")");
  ++opened;
  FailureOr<std::string> raw = value(op.getIndices(), u);
  if (failed(raw))
    return failure();
  std::string n = std::to_string(dataShape[axis]);
  open("if (dlc_clamp_index(dlc_wrap_index((int64_t)" + *raw + ", " + n +
       "), " + n + ") == " + index[axis] + ")");
  ++opened;
  FailureOr<std::string> update = value(op.getUpdates(), u);
  if (failed(update))
    return failure();
  line(scatterStatement(op.getReduction(), result, *update));
  for (size_t i = 0; i < opened; ++i)
    close();
  return result;
}

FailureOr<std::string> Emitter::segmentSum(SegmentSumOp op,
                                           ArrayRef<std::string> index) {
  FailureOr<std::string> type = cType(op, op.getType().getElementType());
  FailureOr<std::string> start = value(op.getStarts(), {index[0]});
  if (failed(type) || failed(start))
    return failure();
  std::string rows = std::to_string(shapeOf(op.getData()).front());
  // Not "p": kernels name their buffers p0, p1, ...
  std::string result = fresh("s"), p = fresh("pos");
  line(*type + " " + result + " = 0;");
  // A start or an order entry outside the rows (IR that breaks the op's
  // contract) is clamped, as gathers clamp their indices: no read leaves
  // the buffers.
  openLoop("for (int64_t " + p + " = dlc_max((int64_t)" + *start +
           ", (int64_t)0); " + p + " < " + rows + "; ++" + p + ")");
  FailureOr<std::string> t = value(op.getOrder(), {p});
  if (failed(t))
    return failure();
  std::string row =
      let("int64_t", "dlc_clamp_index((int64_t)" + *t + ", " + rows + ")");
  FailureOr<std::string> id = value(op.getSegments(), {row});
  if (failed(id))
    return failure();
  line("if ((int64_t)" + *id + " != " + index[0] + ")");
  line("  break;");
  Index in(index.begin(), index.end());
  in[0] = row;
  FailureOr<std::string> update = value(op.getData(), in);
  if (failed(update))
    return failure();
  line(result + " += " + *update + ";");
  close();
  return result;
}

bool Emitter::useLinearSpace(FusionOp fusion) {
  int64_t total = ShapedType::getNumElements(shapeOf(fusion.getResult(0)));
  auto fits = [&](Value v) {
    int64_t n = ShapedType::getNumElements(shapeOf(v));
    return n == total || n == 1;
  };
  Block &block = fusion.getBody().front();
  if (!llvm::all_of(block.getArguments(), fits))
    return false;
  for (Operation &op : block.without_terminator()) {
    KernelRole role = kernelRoleOf(&op);
    if ((role != KernelRole::Elementwise && role != KernelRole::Inlined) ||
        !llvm::all_of(op.getResults(), fits))
      return false;
  }
  linearSpace = total;
  return true;
}

/// Fails unless every result of `fusion` has the first one's shape.
LogicalResult checkResultShapes(FusionOp fusion) {
  ArrayRef<int64_t> shape = shapeOf(fusion.getResult(0));
  for (auto [k, result] : llvm::enumerate(fusion.getResults()))
    if (shapeOf(result) != shape)
      return fusion.emitOpError()
             << "result #" << k << " has shape [" << shapeOf(result)
             << "] unlike result #0; a fusion's results share one "
                "iteration space";
  return success();
}

LogicalResult Emitter::storeResults(FusionOp fusion,
                                    ArrayRef<std::string> index) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  ArrayRef<int64_t> shape = shapeOf(fusion.getResult(0));
  unsigned firstOutput = fusion.getInputs().size();
  SmallVector<std::string> stores;
  for (auto [k, yielded] : llvm::enumerate(yield.getValues())) {
    FailureOr<std::string> v = value(yielded, index);
    if (failed(v))
      return failure();
    stores.push_back("p" + std::to_string(firstOutput + k) + "[" +
                     linear(shape, index) +
                     "] = " + storedForm(yielded, *v) + ";");
    if (threads == 1)
      line(stores.back());
  }
  if (threads > 1) {
    open("if (" + laneName() + " == 0)");
    for (const std::string &store : stores)
      line(store);
    close();
  }
  return success();
}

FailureOr<std::string> Emitter::emitBody(FusionOp fusion) {
  if (failed(checkResultShapes(fusion)))
    return failure();
  Index index;
  for (size_t d = 0;
       d < (linearSpace >= 0 ? 1 : shapeOf(fusion.getResult(0)).size()); ++d)
    index.push_back("i" + std::to_string(d));
  if (failed(storeResults(fusion, index)))
    return failure();
  return body;
}

FailureOr<std::string> Emitter::emitVectorBody(FusionOp fusion, int64_t width) {
  if (failed(checkResultShapes(fusion)))
    return failure();
  Block &block = fusion.getBody().front();
  auto yield = cast<YieldOp>(block.getTerminator());
  unsigned firstOutput = fusion.getInputs().size();
  std::string w = std::to_string(width);
  std::string total = std::to_string(linearSpace);
  line("const int64_t first = it * " + w + ";");
  open("if (aligned && first + " + w + " <= " + total + ")");
  // Aligned views of the group: the alignment they promise lets NVVM merge
  // the group's accesses into 16-byte ones.
  for (auto [k, v] : llvm::enumerate(
           llvm::concat<Value>(fusion.getInputs(), fusion.getResults()))) {
    if (isScalar(v))
      continue;
    std::string type = bufferTypeOf(v);
    if (k < firstOutput)
      type = "const " + type;
    line(llvm::formatv("{0} *__restrict q{1} = ({0} *)__builtin_assume_"
                       "aligned(p{1} + first, {2});",
                       type, k, width * elementBytes(v))
             .str());
  }
  // The group's element j is at `first + j` (dropout draws by position).
  Index at;
  for (int64_t j = 0; j < width; ++j)
    at.push_back(j == 0 ? "first" : "(first + " + std::to_string(j) + ")");
  // Every operand of the group is read before anything is computed and
  // every result stored after, so that neighbouring accesses are adjacent
  // (with no store between loads that may alias it) and merge.
  for (BlockArgument argument : block.getArguments()) {
    if (isScalar(argument) || argument.use_empty())
      continue;
    for (vectorElement = 0; vectorElement < width; ++vectorElement)
      if (failed(value(argument, at[vectorElement])))
        return failure();
  }
  SmallVector<SmallVector<std::string>> results(width);
  for (vectorElement = 0; vectorElement < width; ++vectorElement)
    for (Value yielded : yield.getValues()) {
      FailureOr<std::string> v = value(yielded, at[vectorElement]);
      if (failed(v))
        return failure();
      results[vectorElement].push_back(*v);
    }
  vectorElement = -1;
  for (unsigned k = 0; k < yield.getNumOperands(); ++k)
    for (int64_t j = 0; j < width; ++j)
      line("q" + std::to_string(firstOutput + k) + "[" + std::to_string(j) +
           "] = " + storedForm(yield.getOperand(k), results[j][k]) + ";");
  close();
  // A partial group (the tail), or unaligned buffers.
  open("else");
  line("const int64_t stop = dlc_min_index(first + " + w + ", " + total + ");");
  openLoop("for (int64_t i0 = first; i0 < stop; ++i0)");
  if (failed(storeResults(fusion, {"i0"})))
    return failure();
  close();
  close();
  return body;
}

FailureOr<std::string> Emitter::emitScatterBody(FusionOp fusion,
                                                ScatterElementsOp scatter,
                                                int64_t chunks) {
  ArrayRef<int64_t> dataShape = shapeOf(scatter.getData());
  ArrayRef<int64_t> updateShape = shapeOf(scatter.getUpdates());
  int64_t axis = static_cast<int64_t>(scatter.getAxis());
  Type element = scatter.getType().getElementType();
  if (failed(cType(scatter, element)))
    return failure();
  if (dataShape[axis] == 0 && ShapedType::getNumElements(updateShape) != 0)
    return scatter.emitOpError() << "scatters into an empty axis " << axis
                                 << "; no index can be in range";
  std::string out = "p" + std::to_string(fusion.getInputs().size());
  // With several chunks, i0 is the chunk; the next coordinates index the
  // data shape without the axis.
  unsigned first = chunks > 1 ? 1 : 0;
  Index outer;
  for (size_t d = 0, k = first; d < dataShape.size(); ++d)
    outer.push_back(
        static_cast<int64_t>(d) == axis ? "" : "i" + std::to_string(k++));
  int64_t length = dataShape[axis];
  int64_t chunkSize = (length + chunks - 1) / std::max<int64_t>(1, chunks);
  std::string lo = "0", hi = std::to_string(length);
  if (chunks > 1) {
    lo = let("int64_t", "i0 * " + std::to_string(chunkSize));
    hi = let("int64_t", "dlc_min_index(" + lo + " + " +
                            std::to_string(chunkSize) + ", (int64_t)" + hi +
                            ")");
  }
  Index at = outer;
  at[axis] = fresh("c");
  openLoop("for (int64_t " + at[axis] + " = " + lo + "; " + at[axis] + " < " +
           hi + "; ++" + at[axis] + ")");
  FailureOr<std::string> original = value(scatter.getData(), at);
  if (failed(original))
    return failure();
  line(out + "[" + linear(dataShape, at) + "] = " + *original + ";");
  close();
  SmallVector<std::string> inside;
  for (size_t d = 0; d < dataShape.size(); ++d)
    if (static_cast<int64_t>(d) != axis && updateShape[d] != dataShape[d])
      inside.push_back("(" + outer[d] + " < " + std::to_string(updateShape[d]) +
                       ")");
  size_t opened = 0;
  if (!inside.empty()) {
    open("if (" + llvm::join(inside, " && ") + ")");
    ++opened;
  }
  Index u = outer;
  u[axis] = fresh("j");
  openLoop("for (int64_t " + u[axis] + " = 0; " + u[axis] + " < " +
           std::to_string(updateShape[axis]) + "; ++" + u[axis] + ")");
  ++opened;
  FailureOr<std::string> raw = value(scatter.getIndices(), u);
  if (failed(raw))
    return failure();
  Index target = outer;
  std::string n = std::to_string(length);
  target[axis] = let("int64_t", "dlc_clamp_index(dlc_wrap_index((int64_t)" +
                                    *raw + ", " + n + "), " + n + ")");
  // A chunk applies only the updates that land in it, and reads no other.
  if (chunks > 1) {
    open("if (" + target[axis] + " >= " + lo + " && " + target[axis] + " < " +
         hi + ")");
    ++opened;
  }
  FailureOr<std::string> update = value(scatter.getUpdates(), u);
  if (failed(update))
    return failure();
  std::string slot = out + "[" + linear(dataShape, target) + "]";
  line(scatterStatement(scatter.getReduction(), slot, *update));
  for (size_t i = 0; i < opened; ++i)
    close();
  return body;
}

/// Declarations of i0..i{rank-1} from a linear position `flat` in `shape`.
std::string delinearize(ArrayRef<int64_t> shape, StringRef flat,
                        unsigned first = 0) {
  std::string text;
  int64_t stride = 1;
  SmallVector<std::string> lines;
  for (size_t d = shape.size(); d-- > 0;) {
    std::string coordinate =
        stride == 1 ? flat.str()
                    : "(" + flat.str() + " / " + std::to_string(stride) + ")";
    if (d != 0)
      coordinate = "(" + coordinate + " % " + std::to_string(shape[d]) + ")";
    lines.push_back("const int64_t i" + std::to_string(first + d) + " = " +
                    (shape[d] == 1 ? "0" : coordinate) + ";");
    stride *= shape[d];
  }
  for (const std::string &l : llvm::reverse(lines))
    text += l + "\n";
  return text;
}

/// The CUDA threads that run each of the `outputs` iterations of `fusion`
/// (Schedule.h): as many as its longest reduction's shape asks for.
int64_t reductionThreads(FusionOp fusion, int64_t outputs) {
  int64_t threads = 1;
  for (Operation &op : fusion.getBody().front()) {
    if (!isa<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp>(op))
      continue;
    ArrayRef<int64_t> shape = shapeOf(op.getOperand(0));
    ArrayRef<int64_t> axes =
        op.getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
    ReductionShape reduction;
    reduction.rows = outputs;
    reduction.rowLength = 1;
    for (int64_t axis : axes)
      reduction.rowLength *= shape[axis];
    reduction.elementBytes = elementBytes(op.getOperand(0));
    reduction.contiguous =
        !shape.empty() && !axes.empty() &&
        axes.back() == static_cast<int64_t>(shape.size()) - 1;
    threads = std::max(threads, chooseReductionThreads(reduction));
  }
  return threads;
}

/// The elements a CUDA iteration of linear-space `fusion` (of `total`
/// elements) handles: as many as fill 16 bytes of its widest non-scalar
/// buffer, or 1 when that is one or the space is smaller than a group.
int64_t vectorWidth(FusionOp fusion, int64_t total) {
  int64_t widest = 0;
  for (Value v : llvm::concat<Value>(fusion.getInputs(), fusion.getResults()))
    if (!isScalar(v))
      widest = std::max(widest, elementBytes(v));
  int64_t width = widest == 0 ? 1 : 16 / widest;
  return width > 1 && total >= width ? width : 1;
}

/// The declaration of `aligned`: whether every non-scalar buffer is aligned
/// to a group of `width` of its elements (emitVectorBody).
std::string alignmentCheck(FusionOp fusion, int64_t width) {
  SmallVector<std::string> terms;
  for (auto [k, v] : llvm::enumerate(
           llvm::concat<Value>(fusion.getInputs(), fusion.getResults())))
    if (!isScalar(v))
      terms.push_back(llvm::formatv("(uint64_t)p{0} % {1} == 0", k,
                                    width * elementBytes(v)));
  return "const bool aligned = " + llvm::join(terms, " &&\n    ") + ";\n";
}

/// Declarations `const T *__restrict pK = (const T *)b[S]; // shape` of
/// `fusion`'s operands then results, pK being the kernel's buffer slots[K]
/// (K itself in a kernel of its own; its place among a group's buffers).
/// The comment says how the kernel indexes the buffer: its shape, or, for
/// a kernel over a linear space (`linear`), its element count, which is
/// all such a kernel depends on (kernels of equal counts are one).
std::string parameters(FusionOp fusion, ArrayRef<unsigned> slots, bool linear) {
  auto shape = [&](Value v) {
    ArrayRef<int64_t> dims = shapeOf(v);
    if (linear) {
      int64_t n = ShapedType::getNumElements(dims);
      return std::to_string(n) + (n == 1 ? " element" : " elements");
    }
    std::string text = "[";
    llvm::raw_string_ostream os(text);
    llvm::interleaveComma(dims, os);
    return text + "]";
  };
  std::string text;
  unsigned k = 0;
  for (Value input : fusion.getInputs()) {
    text += llvm::formatv(
                "const {0} *__restrict p{1} = (const {0} *)b[{2}]; // {3}\n",
                bufferTypeOf(input), k, slots[k], shape(input))
                .str();
    ++k;
  }
  for (Value result : fusion.getResults()) {
    text += llvm::formatv("{0} *__restrict p{1} = ({0} *)b[{2}]; // {3}\n",
                          bufferTypeOf(result), k, slots[k], shape(result))
                .str();
    ++k;
  }
  return text;
}

/// The buffer slots of a fusion's kernel of its own: operand or result K is
/// the kernel's buffer K.
SmallVector<unsigned> ownSlots(FusionOp fusion) {
  return llvm::to_vector(
      llvm::seq<unsigned>(0, static_cast<unsigned>(fusion.getInputs().size() +
                                                   fusion.getNumResults())));
}

/// The grid-stride loop of a CUDA kernel over iterations `var` < n, by
/// threads, warps or blocks (`threads` an iteration). The warps' loop is
/// uniform across each warp's lanes (blockDim.x is a multiple of 32), so
/// full-mask shuffles are valid in it; the blocks' loop is uniform across
/// the block (blockDim.x is `threads`), so __syncthreads is.
std::string cudaLoop(int64_t threads, StringRef var) {
  if (threads > 32)
    return llvm::formatv("const int block_lane = threadIdx.x;\n"
                         "for (int64_t {0} = blockIdx.x; {0} < n; {0} += "
                         "gridDim.x) {{\n",
                         var)
        .str();
  if (threads == 32)
    return llvm::formatv(
               "const int warp_lane = threadIdx.x & 31;\n"
               "for (int64_t {0} = ((int64_t)blockIdx.x * blockDim.x + "
               "threadIdx.x) / 32;\n     {0} < n; {0} += (int64_t)gridDim.x * "
               "blockDim.x / 32) {{\n",
               var)
        .str();
  return llvm::formatv("for (int64_t {0} = (int64_t)blockIdx.x * blockDim.x + "
                       "threadIdx.x; {0} < n;\n     {0} += (int64_t)gridDim.x "
                       "* blockDim.x) {{\n",
                       var)
      .str();
}

/// A fusion's kernel before its wrapper: the statements of one iteration
/// and how iterations map to the fusion's elements.
struct KernelBody {
  /// The statements of iteration `it`: for CUDA elementwise groups
  /// (width > 1) from `it` itself, else from the coordinates i0.. of
  /// `space` that the wrapper declares.
  std::string statements;
  SmallVector<int64_t> space;
  /// Whether the body runs over the fusion's elements as one linear space
  /// (Emitter::useLinearSpace).
  bool linear = false;
  /// CUDA: elements per iteration (emitVectorBody), and the threads that
  /// run each iteration.
  int64_t width = 1;
  int64_t threads = 1;

  /// The iteration count of the CUDA kernel.
  int64_t cudaIterations() const {
    return (ShapedType::getNumElements(space) + width - 1) / width;
  }
};

/// Whether `scatter`'s result is computed element by element, each scanning
/// its line's updates (Emitter::scatterAsGather): when a line has at most
/// 16 updates, as the one-hot gradients of a class-index gather (one update
/// a line) have. That spreads the work over every result element, writes
/// each once and coalesced, and needs no ordering between threads; a wider
/// scatter would rescan every update for each element, and walks its
/// updates instead (on CUDA, embedding gradients are sorted segment sums
/// before they get here: dlc-sort-scatters).
bool gathersScatter(ScatterElementsOp scatter) {
  return shapeOf(scatter.getUpdates())[scatter.getAxis()] <=
         kMaxGatheredUpdates;
}

/// The body of `fusion`'s kernel for `target`, in the shape that suits it.
FailureOr<KernelBody> emitKernelBody(FusionOp fusion, Target target) {
  for (Value v : llvm::concat<Value>(fusion.getInputs(), fusion.getResults()))
    if (cTypeOf(getElementTypeOrSelf(v.getType())).empty())
      return fusion.emitOpError()
             << "has a value of type " << v.getType()
             << ", whose element type generated kernels do not handle yet";
  Emitter emitter(target);
  Block &block = fusion.getBody().front();
  // Ops that route values to data-dependent positions are alone in their
  // fusion (KernelRole::Scatter).
  auto scatter = llvm::find_if(block, [](Operation &op) {
    return kernelRoleOf(&op) == KernelRole::Scatter;
  });
  KernelBody kernel;
  SmallVector<int64_t> &space = kernel.space;
  FailureOr<std::string> body;
  if (scatter != block.end() &&
      (fusion.getNumResults() != 1 ||
       block.getTerminator()->getOperand(0) != scatter->getResult(0)))
    return fusion.emitOpError() << "holds a " << scatter->getName()
                                << " that is not its only result";
  // Most routing ops are gathered: every result element is an independent
  // iteration that collects what lands on it (scatterAsGather,
  // maxPoolGradAsGather) on the general path below. Scatters with too many
  // updates per line to scan for each element keep a kernel of their own
  // that walks the updates, and so do max-pool gradients on the CPU, whose
  // few threads gain nothing from the gather's rescans of every window an
  // element is in (9 to 16 times the taps for 3x3 windows).
  auto wide = dyn_cast_or_null<ScatterElementsOp>(
      scatter != block.end() ? &*scatter : nullptr);
  auto pool = dyn_cast_or_null<MaxPoolGradOp>(
      scatter != block.end() ? &*scatter : nullptr);
  // The bodies below read and write their buffers directly, as their own
  // C types.
  if (((pool && target == Target::Cpu) || (wide && !gathersScatter(wide))) &&
      hasLowPrecisionValues(fusion))
    return fusion.emitOpError()
           << "walks its updates with bfloat16 or float16 values, which "
              "generated kernels do not handle yet";
  if (pool && target == Target::Cpu) {
    space.assign(shapeOf(pool.getInput()).begin(),
                 shapeOf(pool.getInput()).begin() + 2);
    body = emitter.emitMaxPoolGradBody(fusion, pool);
  } else if (wide && !gathersScatter(wide)) {
    int64_t axis = static_cast<int64_t>(wide.getAxis());
    ArrayRef<int64_t> data = shapeOf(wide.getData());
    for (auto [d, size] : llvm::enumerate(data))
      if (static_cast<int64_t>(d) != axis)
        space.push_back(size);
    // A GPU needs more iterations than a scatter has lines; the CPU's few
    // threads do not, and would only walk the updates more often.
    int64_t chunks =
        target == Target::Cuda
            ? chooseScatterChunks(ShapedType::getNumElements(space),
                                  data[axis],
                                  shapeOf(wide.getUpdates())[axis])
            : 1;
    if (chunks > 1)
      space.insert(space.begin(), chunks);
    body = emitter.emitScatterBody(fusion, wide, chunks);
  } else if (emitter.useLinearSpace(fusion)) {
    kernel.linear = true;
    space.push_back(ShapedType::getNumElements(shapeOf(fusion.getResult(0))));
    if (target == Target::Cuda)
      kernel.width = vectorWidth(fusion, space.front());
    body = kernel.width > 1 ? emitter.emitVectorBody(fusion, kernel.width)
                            : emitter.emitBody(fusion);
  } else {
    space.assign(shapeOf(fusion.getResult(0)).begin(),
                 shapeOf(fusion.getResult(0)).end());
    if (target == Target::Cuda)
      kernel.threads =
          reductionThreads(fusion, ShapedType::getNumElements(space));
    if (kernel.threads > 1)
      emitter = Emitter(target, kernel.threads);
    body = emitter.emitBody(fusion);
    // Reductions nested in loops stay whole in each thread; a kernel without
    // one to split is better off with a thread per iteration.
    if (kernel.threads > 1 && succeeded(body) &&
        emitter.splitReductions() == 0) {
      kernel.threads = 1;
      emitter = Emitter(target);
      body = emitter.emitBody(fusion);
    }
  }
  if (failed(body))
    return failure();
  kernel.statements = std::move(*body);
  return kernel;
}

/// The code of one CUDA iteration `it` of `fusion`'s kernel `body` run in a
/// group, where its buffers are the group's `slots`: everything the kernel
/// of its own declares before its loop, then what it runs in it.
std::string groupMemberIteration(FusionOp fusion, const KernelBody &body,
                                 ArrayRef<unsigned> slots) {
  std::string text = parameters(fusion, slots, body.linear);
  if (body.width > 1)
    text += alignmentCheck(fusion, body.width);
  else
    text += delinearize(body.space, "it");
  return text + body.statements;
}

/// The dispatch of a group's iteration `group_it` to members [lo, hi),
/// whose first iterations are `starts` (`leaves`: each member's code, from
/// its own iteration `it`): a binary search, so log2(members) branches.
std::string dispatchIteration(ArrayRef<std::string> leaves,
                              ArrayRef<int64_t> starts, size_t lo, size_t hi) {
  if (hi - lo == 1)
    return leaves[lo];
  size_t mid = (lo + hi) / 2;
  return llvm::formatv("if (group_it < {0}LL) {{\n{1}} else {{\n{2}}\n",
                       starts[mid],
                       indent(dispatchIteration(leaves, starts, lo, mid), 2),
                       indent(dispatchIteration(leaves, starts, mid, hi), 2))
      .str();
}

} // namespace

std::string mlir::dlc::codegen::indent(StringRef text, unsigned spaces) {
  std::string result;
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef l : lines)
    result += std::string(spaces, ' ') + l.str() + "\n";
  return result;
}

std::string mlir::dlc::codegen::clampIterations(StringRef bound, int64_t iterations) {
  return llvm::formatv("// A corrupt plan cannot run past the compiled "
                       "shapes.\nif ({0} > {1}LL)\n  {0} = {1}LL;\n",
                       bound, iterations)
      .str();
}

std::string mlir::dlc::codegen::cudaSignature(StringRef name, size_t buffers, int64_t threads) {
  std::string bounds =
      threads > 32 ? llvm::formatv("__launch_bounds__({0}) ", threads).str()
                   : "";
  return llvm::formatv("extern \"C\" __global__ void {0}{1}(const "
                       "dlc_buffers<{2}> buffers, int64_t n) {{\n  void "
                       "*const *b = buffers.p;\n",
                       bounds, name, buffers)
      .str();
}

FailureOr<EmittedKernel>
mlir::dlc::codegen::emitKernel(FusionOp fusion, StringRef name, Target target) {
  FailureOr<KernelBody> body = emitKernelBody(fusion, target);
  if (failed(body))
    return failure();
  ArrayRef<int64_t> space = body->space;
  EmittedKernel kernel;
  int64_t total = ShapedType::getNumElements(space);
  std::string params =
      indent(parameters(fusion, ownSlots(fusion), body->linear), 2);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (target == Target::Cuda) {
    kernel.iterations = body->cudaIterations();
    kernel.threadsPerIteration = body->threads;
    os << cudaSignature(name,
                        fusion.getInputs().size() + fusion.getNumResults(),
                        body->threads)
       << params;
    if (body->width > 1)
      os << indent(alignmentCheck(fusion, body->width), 2);
    os << indent(clampIterations("n", kernel.iterations), 2)
       << indent(cudaLoop(body->threads, "it"), 2);
    if (body->width == 1)
      os << indent(delinearize(space, "it"), 4);
    os << indent(body->statements, 4) << "  }\n}\n";
    kernel.source = os.str();
    return kernel;
  }
  // CPU: an iteration is a row of the innermost dimension (or a chunk of
  // one, when rows are too few to keep every thread busy), a contiguous
  // stretch the host compiler vectorizes when the reads are contiguous. A
  // kernel with inner loops (reductions, pooling) or a short innermost
  // dimension iterates over single elements instead, so that few heavy
  // elements still spread over the threads.
  bool flat = space.empty() || space.back() < 16 ||
              llvm::any_of(fusion.getBody().front(), [](Operation &op) {
                return kernelRoleOf(&op) == KernelRole::Reducing;
              });
  int64_t inner = flat ? 1 : space.back();
  int64_t rows = inner == 0 ? 0 : total / inner;
  int64_t chunks = 1;
  if (rows < 64 && inner >= 2048)
    chunks = std::min<int64_t>((inner + 1023) / 1024,
                               (64 + rows - 1) / std::max<int64_t>(1, rows));
  int64_t chunkSize = (inner + chunks - 1) / chunks;
  kernel.iterations = rows * chunks;
  // An iteration touches its share of every buffer: a reduction's few
  // iterations each read many inputs, and should still be split.
  int64_t touched = 0;
  for (Value v : llvm::concat<Value>(fusion.getInputs(), fusion.getResults()))
    touched += ShapedType::getNumElements(shapeOf(v));
  int64_t perIteration = touched / std::max<int64_t>(1, kernel.iterations);
  kernel.grain =
      std::max<int64_t>(1, 2048 / std::max<int64_t>(1, perIteration));
  os << "extern \"C\" void " << name
     << "(void *const *b, int64_t begin, int64_t end) {\n"
     << params << indent(clampIterations("end", kernel.iterations), 2)
     << "  for (int64_t it = begin; it < end; ++it) {\n";
  if (flat) {
    os << indent(delinearize(space, "it"), 4) << indent(body->statements, 4);
  } else {
    ArrayRef<int64_t> outer = space.drop_back();
    std::string row =
        chunks == 1 ? "it" : "(it / " + std::to_string(chunks) + ")";
    if (!outer.empty()) {
      os << "    const int64_t row = " << row << ";\n";
      os << indent(delinearize(outer, "row"), 4);
    }
    std::string last = "i" + std::to_string(space.size() - 1);
    std::string begin = chunks == 1 ? "0"
                                    : "(it % " + std::to_string(chunks) +
                                          ") * " + std::to_string(chunkSize);
    std::string end = chunks == 1 ? std::to_string(inner)
                                  : "dlc_min_index((int64_t)" +
                                        std::to_string(inner) + ", " + begin +
                                        " + " + std::to_string(chunkSize) + ")";
    os << "    const int64_t stop = " << end << ";\n";
    os << "    for (int64_t " << last << " = " << begin << "; " << last
       << " < stop; ++" << last << ") {\n"
       << indent(body->statements, 6) << "    }\n";
  }
  os << "  }\n}\n";
  kernel.source = os.str();
  return kernel;
}

FailureOr<EmittedKernel>
mlir::dlc::codegen::emitKernelGroup(ArrayRef<GroupMember> members,
                                    size_t numBuffers, StringRef name) {
  assert(!members.empty() && "a group has members");
  // Member k runs the group's iterations [starts[k], starts[k + 1]) as its
  // own iterations from 0.
  SmallVector<int64_t> starts{0};
  SmallVector<std::string> leaves;
  int64_t threads = 1;
  for (auto [k, member] : llvm::enumerate(members)) {
    FailureOr<KernelBody> body = emitKernelBody(member.fusion, Target::Cuda);
    if (failed(body))
      return failure();
    assert((k == 0 || body->threads == threads) &&
           "a group's members run the same threads per iteration");
    threads = body->threads;
    int64_t first = starts.back();
    starts.push_back(first + body->cudaIterations());
    leaves.push_back(
        llvm::formatv("// Member {0}: iterations [{1}, {2}).\nconst int64_t "
                      "it = group_it{3};\n",
                      k, first, starts.back(),
                      first == 0 ? "" : " - " + std::to_string(first) + "LL")
            .str() +
        groupMemberIteration(member.fusion, *body, member.slots));
  }
  EmittedKernel kernel;
  kernel.iterations = starts.back();
  kernel.threadsPerIteration = threads;
  kernel.source =
      cudaSignature(name, numBuffers, threads) +
      indent(clampIterations("n", kernel.iterations), 2) +
      indent(cudaLoop(threads, "group_it"), 2) +
      indent(dispatchIteration(leaves, starts, 0, leaves.size()), 4) +
      "  }\n}\n";
  return kernel;
}

// kCpuPrelude, kCudaPrelude, kMath, kCommonHelpers, kLowPrecision: the
// header files of codegen/prelude/, embedded at build time.
#include "codegen/Preludes.inc"

StringRef mlir::dlc::codegen::kernelPrelude(Target target) {
  static const std::string cpu =
      std::string(kCpuPrelude) + kMath + kCommonHelpers + kLowPrecision;
  static const std::string cuda = std::string(kCudaPrelude) + kMath +
                                  kCommonHelpers + kLowPrecision +
                                  attentionDeviceCode().str();
  return target == Target::Cpu ? cpu : cuda;
}
