//===- LoopExpressions.cpp - Elements computed by loops -------------------===//
//
// Reductions (split over an iteration's CUDA threads when long enough),
// arg reductions, cumulative sums, top-k, pooling windows, and gradient
// routing computed as gathers (scatters, segment sums, max-pool gradients):
// each element of their results is a loop over its inputs.
//
//===----------------------------------------------------------------------===//
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

FailureOr<std::string> ScalarEmitter::reduction(Operation *op,
                                                ArrayRef<int64_t> axes,
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
  size_t mark = scopeMark();
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= shape[axis];
  std::string flat;
  if (overLanes) {
    flat = fresh("r");
    openLoop("for (int64_t " + flat + " = " + laneName() + "; " + flat + " < " +
             std::to_string(count) + "; " + flat +
             " += " + std::to_string(threads) + ")");
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
        in.push_back(let("int64_t", loop + " + lane"));
      } else {
        std::string loop = fresh("r");
        openLoop("for (int64_t " + loop + " = 0; " + loop + " < " +
                 std::to_string(shape[d]) + "; ++" + loop + ")");
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
  closeTo(mark);
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

FailureOr<std::string> ScalarEmitter::argReduce(Operation *op, int64_t axis,
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

FailureOr<std::string> ScalarEmitter::cumsum(CumSumOp op,
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

FailureOr<std::string> ScalarEmitter::topK(TopKOp op, Value v,
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

void ScalarEmitter::openWindowTaps(ArrayRef<int64_t> window,
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
}

FailureOr<std::string>
ScalarEmitter::pool(Operation *op, ArrayRef<int64_t> window,
                    ArrayRef<int64_t> stride, ArrayRef<int64_t> padLow,
                    ArrayRef<int64_t> dilation, ArrayRef<std::string> index) {
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
  size_t mark = scopeMark();
  openWindowTaps(window, stride, padLow, dilation,
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
  closeTo(mark);
  return let(*type, heldAs(element, accType, acc, *type));
}

FailureOr<std::string>
ScalarEmitter::windowArgmax(MaxPoolGradOp op, ArrayRef<std::string> index,
                            ArrayRef<std::string> position) {
  ArrayRef<int64_t> spatial = shapeOf(op.getInput()).drop_front(2);
  FailureOr<std::string> type = cType(op, op.getType().getElementType());
  if (failed(type))
    return failure();
  std::string best = fresh("best"), chosen = fresh("chosen");
  line(*type + " " + best + " = (" + *type + ")0;");
  line("int64_t " + chosen + " = -1;");
  Index in{index[0], index[1]};
  size_t mark = scopeMark();
  openWindowTaps(op.getWindow(), op.getStride(), op.getPadLow(),
                 op.getDilation(), position, spatial, in);
  FailureOr<std::string> v = value(op.getInput(), in);
  if (failed(v))
    return failure();
  open("if (" + chosen + " < 0 || " + *v + " > " + best + " || " + *v +
       " != " + *v + ")");
  line(best + " = " + *v + ";");
  line(chosen + " = " +
       linear(spatial, ArrayRef<std::string>(in).drop_front(2)) + ";");
  closeTo(mark);
  return chosen;
}

FailureOr<std::string>
ScalarEmitter::maxPoolGradAsGather(MaxPoolGradOp op,
                                   ArrayRef<std::string> index) {
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
  size_t mark = scopeMark();
  // Each input position collects from the windows that contain it, so every
  // element is one independent iteration (no thread walks a plane) and the
  // sum runs in the windows' row-major order, as the evaluator's scatter
  // adds them. Window o covers o * stride - pad + t * dilation for taps
  // t < window: along each dimension the candidates o run from
  // ceil((x + pad - (window - 1) * dilation) / stride) to
  // floor((x + pad) / stride), clipped to the output, and a candidate holds
  // x when the distance is a whole number of dilations.
  for (size_t s = 0; s < spatial.size(); ++s) {
    std::string shifted = let("int64_t", "(int64_t)(" + index[2 + s] + ") + " +
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
    outIndex.push_back(o);
    if (dilation[s] != 1)
      holds.push_back("(" + shifted + " - " + o + " * " +
                      std::to_string(stride[s]) + ") % " +
                      std::to_string(dilation[s]) + " == 0");
  }
  if (!holds.empty())
    open("if (" + llvm::join(holds, " && ") + ")");
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
  closeTo(mark);
  return let(*type, heldAs(element, accType, acc, *type));
}

FailureOr<std::string> ScalarEmitter::emitMaxPoolGradBody(FusionOp fusion,
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
  size_t mark = scopeMark();
  for (size_t s = 0; s < spatial.size(); ++s) {
    std::string o = fresh("o");
    openLoop("for (int64_t " + o + " = 0; " + o + " < " +
             std::to_string(yShape[2 + s]) + "; ++" + o + ")");
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
  closeTo(mark);
  return body;
}

FailureOr<std::string>
ScalarEmitter::scatterAsGather(ScatterElementsOp op,
                               ArrayRef<std::string> index) {
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
  size_t mark = scopeMark();
  if (!inside.empty())
    open("if (" + llvm::join(inside, " && ") + ")");
  Index u(index.begin(), index.end());
  u[axis] = fresh("j");
  openLoop("for (int64_t " + u[axis] + " = 0; " + u[axis] + " < " +
           std::to_string(updateShape[axis]) + "; ++" + u[axis] + ")");
  FailureOr<std::string> raw = value(op.getIndices(), u);
  if (failed(raw))
    return failure();
  std::string n = std::to_string(dataShape[axis]);
  open("if (dlc_clamp_index(dlc_wrap_index((int64_t)" + *raw + ", " + n +
       "), " + n + ") == " + index[axis] + ")");
  FailureOr<std::string> update = value(op.getUpdates(), u);
  if (failed(update))
    return failure();
  line(scatterStatement(op.getReduction(), result, *update));
  closeTo(mark);
  return result;
}

FailureOr<std::string> ScalarEmitter::segmentSum(SegmentSumOp op,
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
