//===- ScalarEmitter.h - A fusion's values as C++ expressions --*- C++ -*-===//
//
// The part of the kernel emitter (KernelEmitter.h) that turns a fusion's
// body into statements, by demand. Each value computed at an index becomes
// one `const T vN = ...;` line, memoized by (value, index) within the
// current scope, so a value read twice at the same index is computed once,
// while one read at different indices (under a broadcast, in a window) is
// recomputed: the fusion pass's control function is what keeps that
// recomputation cheap. Conditional reads (pad, concat, pooling borders) and
// loop bodies open scopes, so nothing computed under a condition or inside
// a loop is reused outside it.
//
// Numerics follow the reference evaluator: floating reductions accumulate
// in double on the CPU (float on CUDA), max/min propagate NaN, max-pool
// gradients pick the first maximum in row-major window order, integer
// division by zero gives 0. Gradient routing (scatters with few updates a
// line, max-pool gradients) is computed as a gather: each result element
// collects what lands on it, in the order the evaluator adds it.
//
// The emitter's work is in three files: ScalarEmitter.cpp (element
// expressions: elementwise ops, movement, gathers), LoopExpressions.cpp
// (elements that take a loop: reductions, scans, windows, scatters as
// gathers) and KernelBodies.cpp (the statements of a whole iteration). This
// header is internal to codegen.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_SCALAREMITTER_H
#define DLC_CODEGEN_SCALAREMITTER_H

#include "codegen/KernelEmitter.h"
#include "ir/Dialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <string>

namespace mlir::dlc::codegen::kernels {

using Index = SmallVector<std::string, 4>;

ArrayRef<int64_t> shapeOf(Value v);

/// The C type of an element type, or "" when kernels do not handle it.
std::string cTypeOf(Type type);

std::string joinIndex(ArrayRef<std::string> index);

/// The C type a kernel accesses `v`'s buffer as. Bool buffers are read as
/// bytes: compilers vectorize selects on uint8_t loads but turn selects on
/// bool loads into branches.
std::string bufferTypeOf(Value v);

/// `expression` (a value of `v`'s type, held as its C type) as `v`'s
/// buffer stores it.
std::string storedForm(Value v, StringRef expression);

/// `expression`, of C type `from`, as the float a value of `element` is held
/// in. A double headed for bfloat16 or float16 is first narrowed to float
/// rounding to odd (dlc_narrow_to_odd), so that the later rounding to the
/// 16-bit type is the only one, as the evaluator's single rounding from
/// double; other conversions are plain casts.
std::string heldAs(Type element, StringRef from, StringRef expression,
                   StringRef type);

/// Whether a value of `fusion` is stored in a low-precision type.
bool hasLowPrecisionValues(FusionOp fusion);

/// The bytes of one element of `v`'s buffer.
int64_t elementBytes(Value v);

bool isScalar(Value v);

/// The statement that combines `update` into `slot` as a scatter with
/// `reduction` does.
std::string scatterStatement(ScatterReduction reduction, StringRef slot,
                             StringRef update);

class ScalarEmitter {
public:
  /// `threads`: the CUDA threads running each iteration (a warp, 32, or a
  /// block, 64 to 1024), over which reductions outside every loop are
  /// split; 1 for a thread per iteration.
  ScalarEmitter(Target target, int64_t threads = 1)
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
  FailureOr<std::string>
  emitScatterBody(FusionOp fusion, ScatterElementsOp scatter, int64_t chunks);

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
  /// `in`.
  void openWindowTaps(ArrayRef<int64_t> window, ArrayRef<int64_t> stride,
                      ArrayRef<int64_t> padLow, ArrayRef<int64_t> dilation,
                      ArrayRef<std::string> position, ArrayRef<int64_t> spatial,
                      Index &in);
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
  /// The Philox counter of a random draw's element at `index` of `shape`:
  /// its row-major position plus the draw's `offset` operand (if any).
  FailureOr<std::string> drawCounter(Value offset, ArrayRef<int64_t> shape,
                                     ArrayRef<std::string> index);
  /// `v` (the output or the mask) of a dropout at `index`: the mask bit is
  /// Philox's draw for the element's counter (drawCounter), as the
  /// evaluator's.
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
  /// The scopes open now: closeTo(scopeMark()) taken before a nest of
  /// open()s closes the whole nest, however many of them ran.
  size_t scopeMark() const { return scopes.size(); }
  void closeTo(size_t mark) {
    while (scopes.size() > mark)
      close();
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

} // namespace mlir::dlc::codegen::kernels

#endif // DLC_CODEGEN_SCALAREMITTER_H
