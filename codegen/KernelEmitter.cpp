//===- KernelEmitter.cpp - dlc.fusion to C++ and CUDA C++ kernels ---------===//
//
// A kernel is a loop over a fusion's iterations whose body ScalarEmitter.h
// writes. This file chooses the loop's form for the target, the buffer
// parameters and the signature, and builds horizontal groups.
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
  /// (ScalarEmitter::useLinearSpace).
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
/// its line's updates (ScalarEmitter::scatterAsGather): when a line has at most
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
  ScalarEmitter emitter(target);
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
  auto pool = dyn_cast_or_null<MaxPoolGradOp>(scatter != block.end() ? &*scatter
                                                                     : nullptr);
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
            ? chooseScatterChunks(ShapedType::getNumElements(space), data[axis],
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
      emitter = ScalarEmitter(target, kernel.threads);
    body = emitter.emitBody(fusion);
    // Reductions nested in loops stay whole in each thread; a kernel without
    // one to split is better off with a thread per iteration.
    if (kernel.threads > 1 && succeeded(body) &&
        emitter.splitReductions() == 0) {
      kernel.threads = 1;
      emitter = ScalarEmitter(target);
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

std::string mlir::dlc::codegen::clampIterations(StringRef bound,
                                                int64_t iterations) {
  return llvm::formatv("// A corrupt plan cannot run past the compiled "
                       "shapes.\nif ({0} > {1}LL)\n  {0} = {1}LL;\n",
                       bound, iterations)
      .str();
}

std::string mlir::dlc::codegen::cudaSignature(StringRef name, size_t buffers,
                                              int64_t threads) {
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
