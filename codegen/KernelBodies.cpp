//===- KernelBodies.cpp - The statements of one iteration -----------------===//
//
// What one iteration of a fusion's kernel does: compute every result at
// its index and store it, element by element, as a group of W elements
// (the vector form), or as the scatter of a chunk of targets.
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

bool ScalarEmitter::useLinearSpace(FusionOp fusion) {
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
static LogicalResult checkResultShapes(FusionOp fusion) {
  ArrayRef<int64_t> shape = shapeOf(fusion.getResult(0));
  for (auto [k, result] : llvm::enumerate(fusion.getResults()))
    if (shapeOf(result) != shape)
      return fusion.emitOpError()
             << "result #" << k << " has shape [" << shapeOf(result)
             << "] unlike result #0; a fusion's results share one "
                "iteration space";
  return success();
}

LogicalResult ScalarEmitter::storeResults(FusionOp fusion,
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
                     linear(shape, index) + "] = " + storedForm(yielded, *v) +
                     ";");
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

FailureOr<std::string> ScalarEmitter::emitBody(FusionOp fusion) {
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

FailureOr<std::string> ScalarEmitter::emitVectorBody(FusionOp fusion,
                                                     int64_t width) {
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

FailureOr<std::string> ScalarEmitter::emitScatterBody(FusionOp fusion,
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
  size_t mark = scopeMark();
  if (!inside.empty())
    open("if (" + llvm::join(inside, " && ") + ")");
  Index u = outer;
  u[axis] = fresh("j");
  openLoop("for (int64_t " + u[axis] + " = 0; " + u[axis] + " < " +
           std::to_string(updateShape[axis]) + "; ++" + u[axis] + ")");
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
  }
  FailureOr<std::string> update = value(scatter.getUpdates(), u);
  if (failed(update))
    return failure();
  std::string slot = out + "[" + linear(dataShape, target) + "]";
  line(scatterStatement(scatter.getReduction(), slot, *update));
  closeTo(mark);
  return body;
}
