//===- TensorParallel.cpp - MLP blocks split over tensor-parallel ranks ---===//
//
// Tensor parallelism as the compiler sees it (DESIGN.md decision 9), after
// Megatron-LM (Shoeybi et al. 2019): in a matmul pair X W1 -> pointwise ->
// H W2, each of T ranks keeps W1's columns and W2's rows of one slice, so
// it computes its columns of the hidden layer on its own and a partial sum
// of the output; one all-reduce per pair gives every rank the output. The
// pair is marked by two conjugate ops, dlc.tp_copy at the input and
// dlc.tp_reduce at the output, each the other's gradient, so that the
// backward pass dlc-autodiff derives from the forward gets its all-reduce
// (on the input's gradient) with no pass of its own.
//
// Everything outside the pairs is replicated: every rank computes it on the
// same values. A replicated value read inside a hidden layer enters it
// through dlc.tp_copy too, so that its gradient sums every rank's columns.
//
// Attention splits by heads the same way: the hidden layer of a QKV
// projection and the output projection is cut into Q, K and V (dlc.slice),
// reshaped into heads and transposed, attended and merged back; each value
// is split along the dimension its heads are in, so each rank attends its
// own heads. A fused projection's weight (GPT-2's c_attn) is then split in
// 3 blocks: a rank holds its heads' rows of Q, of K and of V.
//
// A class head (the LM head: a matmul whose output columns, the classes,
// the function returns through a bias) splits by its columns alone, with
// no partner: each rank computes the logits of its slice of the
// vocabulary. The function a cross-entropy loss is built from returns them
// so (dlc.tp_split on the result; dlc-add-loss reduces the softmax over the
// ranks), and every other function joins them (dlc.all_gather among the
// tensor ranks), so that it returns what one device does.
//
// An embedding (dlc.gather of a table's rows by ids the step computes or
// takes) splits by its rows, the vocabulary: each rank gathers the rows it
// holds, zeros where another rank holds the id, and dlc.tp_reduce sums the
// ranks' rows (Megatron-LM's vocabulary-parallel embedding).
//
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "ir/Roles.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCTENSORPARALLEL
#include "passes/Passes.h.inc"

namespace {

/// A matmul's weight: a 2-D global's load, read directly or transposed.
struct Weight {
  GlobalLoadOp load;
  /// Null when the load is the matmul's operand.
  TransposeOp transpose;

  /// The global's dimension that is the operand's dimension `d`.
  int64_t globalDim(int64_t d) const { return transpose ? 1 - d : d; }
};

/// How a value of a pair's hidden layer is split over the ranks: along
/// `dim`, and, until the column matmul's output is cut into blocks (Q, K
/// and V), in the pair's blocks.
struct Layout {
  int64_t dim;
  bool grouped;

  bool operator==(const Layout &other) const {
    return dim == other.dim && grouped == other.grouped;
  }
};

/// A column-then-row pair, a class head (a column matmul with no partner,
/// whose output the function returns) or an embedding (no matmul, a gather
/// of a table's rows), and what it splits.
struct Pair {
  /// An embedding's gather and its table's load; null otherwise.
  GatherOp gather;
  GlobalLoadOp table;
  /// The column matmuls, first in block order first, each with its weight:
  /// one, or the separate Q, K and V projections of one input.
  SmallVector<std::pair<MatmulOp, Weight>, 3> columns;
  /// Null for a class head.
  MatmulOp row;
  Weight rowWeight;
  /// A class head's result index in its function.
  unsigned returned = 0;
  /// The loads of 1-D biases added in the hidden layer, each with whether
  /// it is added before the blocks are cut.
  SmallVector<std::pair<GlobalLoadOp, bool>> biases;
  /// The ops between the matmuls, whose results become slices, and each
  /// hidden value's layout.
  SmallVector<Operation *> hidden;
  llvm::DenseMap<Value, Layout> layouts;
  /// The attentions whose bias differs between heads: each rank reads its
  /// heads' block of it.
  SmallVector<AttentionOp> headBiases;
  /// The blocks the column matmul's output is cut into (3 for a fused
  /// QKV projection), 1 when it is not, and whether an op already read it
  /// uncut (so it stays 1).
  int64_t groups = 1;
  bool uncut = false;

  /// Whether a value of layout `in` may be read as split along its
  /// dimension alone: after the cut, or when nothing cuts it.
  bool plain(const Layout &in) {
    if (!in.grouped)
      return true;
    uncut = true;
    return groups == 1;
  }
  /// Why the pair stays replicated after all; empty while it is split.
  std::string dropped;

  /// Each global the pair splits, and how.
  SmallVector<std::pair<GlobalLoadOp, roles::TpSplit>> splits() const {
    SmallVector<std::pair<GlobalLoadOp, roles::TpSplit>> result;
    if (gather)
      result.push_back({table, {0, 1}});
    for (const auto &[column, weight] : columns)
      result.push_back({weight.load, {weight.globalDim(1), groups}});
    if (row)
      result.push_back({rowWeight.load, {rowWeight.globalDim(0), 1}});
    for (auto [bias, grouped] : biases)
      result.push_back({bias, {0, grouped ? groups : 1}});
    return result;
  }
};

std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " at " << op->getLoc();
  return text;
}

RankedTensorType narrowed(Type type, int64_t dim, int64_t ranks) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[dim] /= ranks;
  return ranked.clone(shape);
}

/// `value` as a matmul's weight, or why it is not one. Its load may have
/// other readers (a tied embedding): the global is split only if each of
/// them splits it alike (dropInconsistentPairs).
FailureOr<Weight> weightOf(Value value, std::string &why) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Weight weight;
  if (auto transpose = value.getDefiningOp<TransposeOp>()) {
    if (transpose.getPermutation() != ArrayRef<int64_t>{1, 0} ||
        !transpose->hasOneUse()) {
      why = "its weight is a transpose that is not W^T read once";
      return failure();
    }
    weight.transpose = transpose;
    value = transpose.getInput();
  }
  weight.load = value.getDefiningOp<GlobalLoadOp>();
  if (!weight.load || !type || type.getRank() != 2 || !type.hasStaticShape()) {
    why = "its right operand is not a 2-D dlc.global (or its transpose)";
    return failure();
  }
  return weight;
}

/// Whether `value`, broadcast (aligned to the right) against a result of
/// rank `rank`, is the same along that result's dimension `dim`: it lacks
/// the dimension or has it of size 1.
bool sameAlong(Value value, int64_t dim, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return false;
  const int64_t aligned = dim - (rank - type.getRank());
  return aligned < 0 || type.getDimSize(aligned) == 1;
}

int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

/// The matmul whose result `value` is, through transposes, reshapes and
/// pointwise ops with one operand that is neither a global nor a constant
/// (a bias, a scale), or null.
MatmulOp projectionOf(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto matmul = dyn_cast<MatmulOp>(op))
      return matmul;
    if (isa<TransposeOp, ReshapeOp>(op)) {
      value = op->getOperand(0);
      continue;
    }
    if (!op->hasTrait<OpProperty::Pointwise>())
      return {};
    Value next;
    for (Value operand : op->getOperands()) {
      if (operand.getDefiningOp<GlobalLoadOp>() ||
          operand.getDefiningOp<ConstantOp>())
        continue;
      if (next)
        return {};
      next = operand;
    }
    if (!next)
      return {};
    value = next;
  }
  return {};
}

class TensorParallelPass
    : public impl::DLCTensorParallelBase<TensorParallelPass> {
public:
  using DLCTensorParallelBase::DLCTensorParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ranks < 1) {
      module.emitError()
          << "dlc-tensor-parallel: ranks must be at least 1, got "
          << static_cast<int64_t>(ranks);
      return signalPassFailure();
    }
    if (auto done =
            module->getAttrOfType<IntegerAttr>(roles::kTensorParallelAttr)) {
      module.emitError() << "dlc-tensor-parallel: the module is already "
                            "partitioned for "
                         << done.getInt() << " tensor-parallel ranks";
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>())
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        if (roles::isGlobalRole(roles::roleOf(func.getArgAttrDict(i)))) {
          func.emitOpError()
              << "takes global '" << roles::nameOf(func.getArgAttrDict(i))
              << "' as an argument: dlc-tensor-parallel runs before "
                 "dlc-functionalize, on dlc.global_load";
          return signalPassFailure();
        }
    if (ranks == 1)
      return;

    SmallVector<std::pair<func::FuncOp, std::vector<Pair>>> pairsByFunction;
    llvm::DenseMap<Operation *, std::string> replicated;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        pairsByFunction.push_back({func, findPairs(func, replicated)});
    SmallVector<Pair *> pairs;
    for (auto &entry : pairsByFunction)
      for (Pair &pair : entry.second)
        pairs.push_back(&pair);
    dropInconsistentPairs(module, pairs);

    if (report)
      printReport(pairsByFunction, replicated);
    for (Pair *pair : pairs)
      if (pair->dropped.empty())
        split(*pair);
    splitGlobals(module, pairs);
    Builder builder(module.getContext());
    module->setAttr(roles::kTensorParallelAttr,
                    builder.getI64IntegerAttr(ranks));
  }

private:
  /// The pairs in `func`'s body, in order, each matmul in at most one; the
  /// reason why each other matmul is not in one goes to `replicated`.
  std::vector<Pair>
  findPairs(func::FuncOp func,
            llvm::DenseMap<Operation *, std::string> &replicated) {
    std::vector<Pair> pairs;
    // The hidden layer is followed through the body's ops in order (region
    // ops, fusions, are isolated from above and come later).
    if (!func.getBody().hasOneBlock()) {
      func.walk([&](MatmulOp matmul) {
        replicated[matmul] = "its function has more than one block";
      });
      return pairs;
    }
    // Separate Q, K and V projections of one input meet at an attention:
    // the first of them in block order leads them as one pair.
    Block &body = func.getBody().front();
    llvm::DenseMap<Operation *, SmallVector<MatmulOp, 2>> siblings;
    for (auto attention : body.getOps<AttentionOp>()) {
      SmallVector<MatmulOp, 3> projections;
      for (Value operand :
           {attention.getQ(), attention.getK(), attention.getV()})
        if (MatmulOp projection = projectionOf(operand);
            projection && !llvm::is_contained(projections, projection))
          projections.push_back(projection);
      if (projections.size() < 2 || llvm::any_of(projections, [&](MatmulOp p) {
            return p.getLhs() != projections.front().getLhs();
          }))
        continue;
      llvm::sort(projections,
                 [](MatmulOp a, MatmulOp b) { return a->isBeforeInBlock(b); });
      siblings[projections.front()].assign(projections.begin() + 1,
                                           projections.end());
    }
    llvm::DenseSet<Operation *> claimed;
    for (Operation &op : body) {
      if (auto gather = dyn_cast<GatherOp>(op);
          gather && gather.getData().getDefiningOp<GlobalLoadOp>()) {
        std::string why;
        if (FailureOr<Pair> embedding = embeddingAt(gather, why);
            succeeded(embedding))
          pairs.push_back(std::move(*embedding));
        else
          replicated[gather] = why;
        continue;
      }
      auto column = dyn_cast<MatmulOp>(op);
      if (!column || claimed.contains(column))
        continue;
      std::string why;
      FailureOr<Pair> pair = pairAt(column, siblings.lookup(column), why);
      // The reason a head is not one matters less than why no pair is.
      std::string notHead;
      if (failed(pair)) {
        pair = headAt(column, notHead);
        if (succeeded(pair) && classFunction.empty()) {
          why = "it is a class head, which is split for a cross-entropy "
                "loss alone";
          pair = failure();
        }
      }
      if (succeeded(pair) && (claimed.contains(pair->row) ||
                              llvm::any_of(pair->columns, [&](const auto &c) {
                                return claimed.contains(c.first);
                              }))) {
        why = "a matmul of its pair is already split";
        pair = failure();
      }
      if (failed(pair)) {
        replicated[column] = why;
        continue;
      }
      for (const auto &[matmul, weight] : pair->columns)
        claimed.insert(matmul);
      if (pair->row)
        claimed.insert(pair->row);
      pairs.push_back(std::move(*pair));
    }
    return pairs;
  }

  /// The pair `column` starts, with the other projections of its input
  /// that its attention reads (`siblings`), or why it starts none.
  FailureOr<Pair> pairAt(MatmulOp column, ArrayRef<MatmulOp> siblings,
                         std::string &why) {
    Pair pair;
    SmallVector<MatmulOp, 3> columns = {column};
    columns.append(siblings.begin(), siblings.end());
    for (MatmulOp matmul : columns) {
      FailureOr<Weight> weight = weightOf(matmul.getRhs(), why);
      if (failed(weight)) {
        if (matmul != column)
          why = "its sibling projection " + describe(matmul) + ": " + why;
        return failure();
      }
      pair.columns.push_back({matmul, *weight});
      auto resultType = cast<RankedTensorType>(matmul.getType());
      if (!isa<FloatType>(resultType.getElementType())) {
        why = "it multiplies integers, which the collectives do not sum";
        return failure();
      }
      const int64_t width = resultType.getShape().back();
      if (ShapedType::isDynamic(width) || width % ranks != 0) {
        why = "its " + std::to_string(width) +
              " output columns do not divide over " + std::to_string(ranks) +
              " ranks";
        return failure();
      }
      pair.layouts[matmul.getResult()] = {resultType.getRank() - 1, true};
    }
    // Separate projections are not cut into blocks.
    pair.uncut = !siblings.empty();
    // In block order, every operand from the hidden layer is known before
    // its users.
    for (Operation *op = column->getNextNode(); op; op = op->getNextNode()) {
      if (llvm::none_of(op->getOperands(),
                        [&](Value v) { return pair.layouts.count(v); }))
        continue;
      if (auto row = dyn_cast<MatmulOp>(op);
          row && !pair.layouts.count(row.getRhs())) {
        if (pair.row) {
          why = "its hidden layer reaches two matmuls";
          return failure();
        }
        Layout in = pair.layouts.lookup(row.getLhs());
        if (in.dim != rankOf(row.getLhs()) - 1 || !pair.plain(in)) {
          why = describe(row) +
                " reads its hidden layer split along "
                "dimension " +
                std::to_string(in.dim) + ", not by its columns";
          return failure();
        }
        pair.row = row;
        continue;
      }
      if (op->hasTrait<OpTrait::ReturnLike>()) {
        why = "the function returns its hidden layer";
        return failure();
      }
      if (isa<DropoutOp>(op)) {
        why = "a random draw (" + describe(op) +
              ") reads its hidden layer, whose slices would need each "
              "rank's own counters";
        return failure();
      }
      FailureOr<Layout> layout = hiddenLayout(op, pair, why);
      if (failed(layout))
        return failure();
      for (Value result : op->getResults())
        pair.layouts[result] = *layout;
      pair.hidden.push_back(op);
    }
    if (!pair.row) {
      why = "no second matmul reads its result through pointwise ops";
      return failure();
    }
    FailureOr<Weight> weight = weightOf(pair.row.getRhs(), why);
    if (failed(weight)) {
      why = "its partner " + describe(pair.row) + ": " + why;
      return failure();
    }
    pair.rowWeight = *weight;
    return pair;
  }

  /// The embedding `gather` is, or why it is not one: rows of a 2-D
  /// float table global, by ids that are not constants (a
  /// position embedding's every rank would read alike, and splitting it
  /// would only add an all-reduce).
  FailureOr<Pair> embeddingAt(GatherOp gather, std::string &why) {
    auto table = gather.getData().getDefiningOp<GlobalLoadOp>();
    auto type = cast<RankedTensorType>(table.getType());
    if (gather.getAxis() != 0 || type.getRank() != 2 ||
        !isa<FloatType>(type.getElementType())) {
      why = "it gathers other than the rows of a 2-D float table";
      return failure();
    }
    if (gather.getIndices().getDefiningOp<ConstantOp>()) {
      why = "its ids are constants (a position embedding): every rank reads "
            "the same rows";
      return failure();
    }
    if (type.getDimSize(0) % ranks != 0) {
      why = "its " + std::to_string(type.getDimSize(0)) +
            " rows do not divide over " + std::to_string(ranks) + " ranks";
      return failure();
    }
    Pair pair;
    pair.gather = gather;
    pair.table = table;
    return pair;
  }

  /// The class head `column` is, or why it is not one: the function
  /// returns its output columns through pointwise ops alone (a bias add),
  /// each value read once.
  FailureOr<Pair> headAt(MatmulOp column, std::string &why) {
    Pair pair;
    FailureOr<Weight> weight = weightOf(column.getRhs(), why);
    if (failed(weight))
      return failure();
    pair.columns.push_back({column, *weight});
    auto type = cast<RankedTensorType>(column.getType());
    if (!isa<FloatType>(type.getElementType()) ||
        type.getShape().back() % ranks != 0) {
      why = "its classes are not float columns that divide over the ranks";
      return failure();
    }
    Value value = column.getResult();
    pair.layouts[value] = {type.getRank() - 1, false};
    while (value.hasOneUse()) {
      OpOperand &use = *value.use_begin();
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp>(user)) {
        // Class scores: float, which the loss and the all-gather take.
        if (!isa<FloatType>(getElementTypeOrSelf(value.getType())))
          break;
        pair.returned = use.getOperandNumber();
        return pair;
      }
      if (!user->hasTrait<OpProperty::Pointwise>() ||
          user->getNumResults() != 1)
        break;
      FailureOr<Layout> layout = hiddenLayout(user, pair, why);
      if (failed(layout))
        return failure();
      value = user->getResult(0);
      pair.layouts[value] = *layout;
      pair.hidden.push_back(user);
    }
    why = "the function does not return its output alone through pointwise "
          "ops";
    return failure();
  }

  /// The layout of `op`'s results in `pair`'s hidden layer (its operands'
  /// are known), or why `op` cannot be split so: a pointwise op keeps its
  /// operands' layout; dlc.slice cuts the column output into blocks (Q, K,
  /// V); dlc.reshape splits the last dimension into heads and merges them
  /// back, dlc.transpose moves them, and dlc.attention attends each rank's
  /// heads.
  FailureOr<Layout> hiddenLayout(Operation *op, Pair &pair, std::string &why) {
    auto layoutOf = [&](Value v) { return pair.layouts.lookup(v); };
    if (auto slice = dyn_cast<SliceOp>(op)) {
      Layout in = layoutOf(slice.getInput());
      ArrayRef<int64_t> shape =
          cast<RankedTensorType>(slice.getInput().getType()).getShape();
      const int64_t size = slice.getSizes()[in.dim];
      bool block =
          in.grouped && size > 0 && shape[in.dim] % size == 0 &&
          slice.getOffsets()[in.dim] % size == 0 &&
          llvm::all_of(slice.getStrides(), [](int64_t s) { return s == 1; });
      for (int64_t d = 0; block && d < static_cast<int64_t>(shape.size()); ++d)
        block = d == in.dim ||
                (slice.getOffsets()[d] == 0 && slice.getSizes()[d] == shape[d]);
      if (!block) {
        why = describe(op) + " reads its hidden layer and is not a cut of "
                             "its columns into equal blocks";
        return failure();
      }
      const int64_t groups = shape[in.dim] / size;
      // A slice of the whole width reads it uncut.
      if ((groups == 1 && !pair.plain(in)) ||
          (pair.groups != 1 && pair.groups != groups) ||
          (pair.uncut && groups != 1) || size % ranks) {
        why = describe(op) + " cuts its columns into blocks of " +
              std::to_string(size) + ", which do not divide over " +
              std::to_string(ranks) + " ranks as its other blocks do";
        return failure();
      }
      pair.groups = groups;
      return Layout{in.dim, false};
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      Layout in = layoutOf(reshape.getInput());
      ArrayRef<int64_t> from =
          cast<RankedTensorType>(reshape.getInput().getType()).getShape();
      ArrayRef<int64_t> to = reshape.getType().getShape();
      const int64_t rank = static_cast<int64_t>(from.size());
      // [..., H D] -> [..., H, D], split along H; and back.
      if (in.dim == rank - 1 && static_cast<int64_t>(to.size()) == rank + 1 &&
          from.drop_back() == to.drop_back(2) &&
          to[rank - 1] * to[rank] == from.back() && to[rank - 1] % ranks == 0 &&
          pair.plain(in))
        return Layout{rank - 1, false};
      if (rank >= 2 && in.dim == rank - 2 && pair.plain(in) &&
          static_cast<int64_t>(to.size()) == rank - 1 &&
          from.drop_back(2) == to.drop_back() &&
          from[rank - 2] * from[rank - 1] == to.back())
        return Layout{rank - 2, false};
      why = describe(op) + " reshapes its hidden layer other than into "
                           "heads and back";
      return failure();
    }
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      Layout in = layoutOf(transpose.getInput());
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      const auto *it = llvm::find(permutation, in.dim);
      return Layout{it - permutation.begin(), in.grouped};
    }
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      Layout in = layoutOf(attention.getQ());
      const int64_t rank = rankOf(attention.getQ());
      bool heads = pair.layouts.count(attention.getQ()) && in.dim < rank - 2 &&
                   pair.plain(in);
      for (Value operand : {attention.getK(), attention.getV()})
        heads &= pair.layouts.count(operand) && layoutOf(operand) == in;
      if (!heads) {
        why = describe(op) + " does not read Q, K and V of its hidden layer "
                             "split by the same heads";
        return failure();
      }
      // A bias that differs between heads (ALiBi's slopes) is sliced by
      // them: each rank takes its heads' block, contiguous when no
      // dimension before the heads' has more than one entry.
      if (Value bias = attention.getBias();
          bias && !sameAlong(bias, in.dim, rank)) {
        auto type = cast<RankedTensorType>(bias.getType());
        const int64_t heads = in.dim - (rank - type.getRank());
        if (pair.layouts.count(bias) || !type.hasStaticShape() ||
            llvm::any_of(type.getShape().take_front(heads),
                         [](int64_t size) { return size != 1; })) {
          why = describe(op) + " adds a bias that differs between its heads "
                               "and is not one block per head";
          return failure();
        }
        pair.headBiases.push_back(attention);
      }
      return in;
    }
    if (!op->hasTrait<OpProperty::Pointwise>()) {
      why = describe(op) + " reads its hidden layer and is not pointwise";
      return failure();
    }
    std::optional<Layout> layout;
    for (Value operand : op->getOperands())
      if (pair.layouts.count(operand)) {
        if (layout && !(*layout == layoutOf(operand))) {
          why = describe(op) + " mixes values of its hidden layer split "
                               "differently";
          return failure();
        }
        layout = layoutOf(operand);
      }
    const int64_t rank = rankOf(op->getResult(0));
    for (Value operand : op->getOperands()) {
      if (pair.layouts.count(operand)) {
        if (rankOf(operand) == rank)
          continue;
        why = describe(op) + " broadcasts its hidden layer";
        return failure();
      }
      if (sameAlong(operand, layout->dim, rank))
        continue;
      auto bias = operand.getDefiningOp<GlobalLoadOp>();
      auto type = cast<RankedTensorType>(operand.getType());
      if (!bias || type.getRank() != 1 || layout->dim != rank - 1 ||
          type.getShape()[0] !=
              cast<RankedTensorType>(op->getResult(0).getType())
                  .getDimSize(layout->dim)) {
        why = describe(op) + " mixes a full-width value other than a 1-D "
                             "bias global into its hidden layer";
        return failure();
      }
      pair.biases.push_back({bias, layout->grouped});
    }
    return *layout;
  }

  /// Drops (keeps replicated) every pair that splits a global which
  /// something other than a split pair reads or writes, or which two pairs
  /// split differently, until none does: a global has one layout in every
  /// function. Each split claims one read of a load (a tied embedding's
  /// table, read by the embedding and the class head, is two).
  void dropInconsistentPairs(ModuleOp module, ArrayRef<Pair *> pairs) {
    llvm::DenseMap<StringAttr, int64_t> loads;
    llvm::DenseSet<StringAttr> written;
    module.walk([&](Operation *op) {
      if (auto load = dyn_cast<GlobalLoadOp>(op))
        loads[load.getGlobalAttr().getAttr()] +=
            std::distance(load->use_begin(), load->use_end());
      if (auto store = dyn_cast<GlobalStoreOp>(op))
        written.insert(store.getGlobalAttr().getAttr());
    });
    for (bool changed = true; changed;) {
      changed = false;
      llvm::DenseMap<StringAttr, int64_t> claims;
      llvm::DenseMap<StringAttr,
                     llvm::SmallSetVector<std::pair<int64_t, int64_t>, 2>>
          dims;
      for (Pair *pair : pairs)
        if (pair->dropped.empty())
          for (auto [load, split] : pair->splits()) {
            ++claims[load.getGlobalAttr().getAttr()];
            dims[load.getGlobalAttr().getAttr()].insert(
                {split.dim, split.groups});
          }
      for (Pair *pair : pairs) {
        if (!pair->dropped.empty())
          continue;
        for (auto [load, split] : pair->splits()) {
          StringAttr name = load.getGlobalAttr().getAttr();
          std::string global = "@" + name.str();
          if (written.contains(name))
            pair->dropped = global + " is written (it is state)";
          else if (claims[name] != loads[name])
            pair->dropped =
                global +
                " is also read outside a split pair, head or embedding";
          else if (dims[name].size() > 1)
            pair->dropped = global + " would be split in two ways";
          else
            continue;
          changed = true;
          break;
        }
      }
    }
  }

  /// Rewrites a pair: the input through dlc.tp_copy, the hidden layer
  /// narrowed to the rank's columns, the output through dlc.tp_reduce.
  void split(Pair &pair) {
    if (pair.gather)
      return splitEmbedding(pair);
    // A replicated value that enters the hidden layer (a learnable scale, a
    // gate) gets from each rank the gradient of its columns alone: through
    // dlc.tp_copy, whose gradient sums them over the group. Constants and
    // the split biases need none; non-float values have no gradient.
    // An attention's bias (a mask) carries no gradient.
    for (Operation *op : pair.hidden)
      for (OpOperand &operand : op->getOpOperands()) {
        Value value = operand.get();
        auto load = value.getDefiningOp<GlobalLoadOp>();
        auto attention = dyn_cast<AttentionOp>(op);
        if (pair.layouts.count(value) || value.getDefiningOp<ConstantOp>() ||
            (load &&
             llvm::is_contained(llvm::make_first_range(pair.biases), load)) ||
            (attention && value == attention.getBias()) ||
            !isa<FloatType>(getElementTypeOrSelf(value.getType())))
          continue;
        OpBuilder before(op);
        operand.set(TpCopyOp::create(before, op->getLoc(), value));
      }
    // One dlc.tp_copy of the input for every projection of it.
    MatmulOp first = pair.columns.front().first;
    OpBuilder b(first);
    Value input = TpCopyOp::create(b, first.getLoc(), first.getLhs());
    for (auto &[column, weight] : pair.columns) {
      column.getLhsMutable().assign(input);
      column.getResult().setType(
          narrowed(column.getType(), rankOf(column.getResult()) - 1, ranks));
      if (weight.transpose)
        weight.transpose.getResult().setType(
            narrowed(weight.transpose.getType(), 1, ranks));
    }
    for (Operation *op : pair.hidden) {
      for (Value result : op->getResults())
        result.setType(
            narrowed(result.getType(), pair.layouts.lookup(result).dim, ranks));
      // A block's slice: the rank's columns of it, after those of the
      // blocks before it.
      if (auto slice = dyn_cast<SliceOp>(op)) {
        const int64_t dim = pair.layouts.lookup(slice.getInput()).dim;
        SmallVector<int64_t> offsets(slice.getOffsets());
        SmallVector<int64_t> sizes(slice.getSizes());
        offsets[dim] /= ranks;
        sizes[dim] /= ranks;
        slice.setOffsets(offsets);
        slice.setSizes(sizes);
      }
    }
    if (!pair.row)
      return splitHead(pair);
    // A per-head bias: the rank's heads' block, the rank_shard among the
    // tensor ranks of a value every rank holds whole.
    for (AttentionOp attention : pair.headBiases) {
      Value bias = attention.getBias();
      auto type = cast<RankedTensorType>(bias.getType());
      const int64_t heads = pair.layouts.lookup(attention.getQ()).dim -
                            (rankOf(attention.getQ()) - type.getRank());
      OpBuilder before(attention);
      Value block = RankShardOp::create(before, attention.getLoc(), bias, ranks,
                                        /*tensor=*/true);
      attention.getBiasMutable().assign(
          grad::reshape(before, attention.getLoc(), block,
                        narrowed(type, heads, ranks).getShape()));
    }
    // The row matmul's weight operand by its dimension 0 (the columns' by
    // their dimension 1, above).
    if (pair.rowWeight.transpose)
      pair.rowWeight.transpose.getResult().setType(
          narrowed(pair.rowWeight.transpose.getType(), 0, ranks));
    b.setInsertionPointAfter(pair.row);
    auto reduced = TpReduceOp::create(b, pair.row.getLoc(), pair.row);
    pair.row.getResult().replaceAllUsesExcept(reduced, reduced);
  }

  /// An embedding: the rank's rows gathered where it holds the id, zeros
  /// elsewhere, summed over the ranks.
  void splitEmbedding(Pair &pair) {
    GatherOp gather = pair.gather;
    OpBuilder b(gather);
    Location loc = gather.getLoc();
    const int64_t rows =
        cast<RankedTensorType>(pair.table.getType()).getDimSize(0);
    // Negative ids count from the end and the others are clamped, as the
    // compiled gathers do (the evaluator refuses ids outside the table).
    Value ids = grad::boundedIndex(b, loc, gather.getIndices(), rows);
    auto [mine, local] =
        grad::indexInRankSlice(b, loc, ids, rows / ranks, ranks);
    gather.getIndicesMutable().assign(local);
    b.setInsertionPointAfter(gather);
    SmallVector<int64_t> keep(grad::typeOf(mine).getShape());
    keep.push_back(1);
    Value own = grad::selectOrZero(b, loc, grad::reshape(b, loc, mine, keep),
                                   gather.getResult());
    auto reduced = TpReduceOp::create(b, loc, own);
    gather.getResult().replaceAllUsesExcept(reduced, own.getDefiningOp());
  }

  /// A class head's returned logits: split, as the class function's
  /// result, or joined from every rank's slice.
  void splitHead(Pair &pair) {
    MatmulOp column = pair.columns.front().first;
    auto func = column->getParentOfType<func::FuncOp>();
    Operation *terminator = func.getBody().front().getTerminator();
    Value logits = terminator->getOperand(pair.returned);
    const int64_t last = rankOf(logits) - 1;
    if (func.getSymName() == classFunction) {
      func.setResultAttr(
          pair.returned, roles::kTpSplitAttr,
          roles::tpSplitAttr(func.getContext(), {last, /*groups=*/1}));
      func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                     terminator->getOperandTypes()));
      return;
    }
    // All-gather joins the ranks' flat blocks, [T, rows, V / T]; one
    // transpose puts each row's classes together, in rank order.
    OpBuilder b(terminator);
    Location loc = column.getLoc();
    auto type = cast<RankedTensorType>(logits.getType());
    const int64_t slice = type.getShape().back();
    const int64_t rows = type.getNumElements() / slice;
    Value joined =
        AllGatherOp::create(
            b, loc,
            TypeRange{RankedTensorType::get({ranks, rows, slice},
                                            type.getElementType())},
            ValueRange{grad::reshape(b, loc, logits, {type.getNumElements()})},
            ranks, /*bucket=*/0, /*tensor=*/true)
            .getResult(0);
    SmallVector<int64_t> whole(type.getShape());
    whole.back() *= ranks;
    terminator->setOperand(
        pair.returned,
        grad::reshape(b, loc, TransposeOp::create(b, loc, joined, {1, 0, 2}),
                      whole));
  }

  /// Narrows the globals the split pairs read, and their loads.
  void splitGlobals(ModuleOp module, ArrayRef<Pair *> pairs) {
    llvm::MapVector<StringAttr, roles::TpSplit> splits;
    for (Pair *pair : pairs)
      if (pair->dropped.empty())
        for (auto [load, split] : pair->splits())
          splits[load.getGlobalAttr().getAttr()] = split;
    for (auto [name, split] : splits) {
      auto global = module.lookupSymbol<GlobalOp>(name);
      global.setType(narrowed(global.getType(), split.dim, ranks));
      global->setAttr(roles::kTpSplitAttr,
                      roles::tpSplitAttr(module.getContext(), split));
    }
    module.walk([&](GlobalLoadOp load) {
      auto it = splits.find(load.getGlobalAttr().getAttr());
      if (it != splits.end())
        load.getResult().setType(
            narrowed(load.getType(), it->second.dim, ranks));
    });
  }

  void printReport(
      ArrayRef<std::pair<func::FuncOp, std::vector<Pair>>> pairsByFunction,
      const llvm::DenseMap<Operation *, std::string> &replicated) {
    llvm::raw_ostream &os = llvm::errs();
    os << "tensor parallelism over " << ranks << " ranks\n";
    for (const auto &entry : pairsByFunction) {
      func::FuncOp func = entry.first;
      os << "@" << func.getSymName() << ":\n";
      llvm::DenseMap<Operation *, const Pair *> pairOf;
      for (const Pair &pair : entry.second) {
        for (const auto &[column, weight] : pair.columns)
          pairOf[column] = &pair;
        if (pair.row)
          pairOf[pair.row] = &pair;
      }
      func.walk([&](GatherOp gather) {
        auto it = llvm::find_if(entry.second, [&](const Pair &pair) {
          return pair.gather == gather;
        });
        if (it == entry.second.end() && !replicated.count(gather))
          return;
        os << "  " << describe(gather) << ": ";
        if (it == entry.second.end() || !it->dropped.empty())
          os << "replicated: "
             << (it == entry.second.end() ? replicated.lookup(gather)
                                          : it->dropped)
             << "\n";
        else
          os << "split by rows (the vocabulary), @"
             << GlobalLoadOp(it->table).getGlobal() << " along dimension 0\n";
      });
      func.walk([&](MatmulOp matmul) {
        os << "  " << describe(matmul) << ": ";
        auto it = pairOf.find(matmul);
        if (it == pairOf.end()) {
          os << "replicated: " << replicated.lookup(matmul) << "\n";
          return;
        }
        const Pair &pair = *it->second;
        if (!pair.dropped.empty()) {
          os << "replicated: " << pair.dropped << "\n";
          return;
        }
        const auto *column = llvm::find_if(
            pair.columns, [&](const auto &c) { return c.first == matmul; });
        const bool isColumn = column != pair.columns.end();
        Weight weight = isColumn ? column->second : pair.rowWeight;
        const bool heads = llvm::any_of(
            pair.hidden, [](Operation *op) { return isa<AttentionOp>(op); });
        os << (isColumn ? "column-parallel" : "row-parallel")
           << (heads ? " by attention heads" : "")
           << (pair.row ? ""
               : func.getSymName() == classFunction
                   ? " by classes, the loss reducing over the ranks"
                   : " by classes, gathered")
           << ", @" << weight.load.getGlobal() << " split along dimension "
           << weight.globalDim(isColumn ? 1 : 0);
        auto blocks = [&](bool grouped) {
          if (grouped && pair.groups > 1)
            os << " in " << pair.groups << " blocks";
        };
        blocks(isColumn);
        // The biases are listed with the first column.
        if (column == pair.columns.begin())
          for (auto [bias, grouped] : pair.biases) {
            os << ", @" << bias.getGlobal() << " along dimension 0";
            blocks(grouped);
          }
        os << "\n";
      });
    }
  }
};

} // namespace
} // namespace mlir::dlc
