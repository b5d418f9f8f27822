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
//===----------------------------------------------------------------------===//
#include "ir/Dialect.h"
#include "ir/Roles.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

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

/// A column-then-row pair and what it splits.
struct Pair {
  MatmulOp column, row;
  Weight columnWeight, rowWeight;
  /// The loads of 1-D biases added in the hidden layer.
  SmallVector<GlobalLoadOp> biases;
  /// The ops between the matmuls, whose results become slices along the
  /// last dimension.
  SmallVector<Operation *> hidden;
  /// Why the pair stays replicated after all; empty while it is split.
  std::string dropped;

  /// Each global the pair splits, with the dimension.
  SmallVector<std::pair<GlobalLoadOp, int64_t>> splits() const {
    SmallVector<std::pair<GlobalLoadOp, int64_t>> result = {
        {columnWeight.load, columnWeight.globalDim(1)},
        {rowWeight.load, rowWeight.globalDim(0)}};
    for (GlobalLoadOp bias : biases)
      result.push_back({bias, 0});
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

/// `value` as a weight read only by the matmul, or why it is not one.
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
  if (!weight.load->hasOneUse()) {
    why = "its weight's load has other readers";
    return failure();
  }
  return weight;
}

/// Whether a pointwise op's operand `value`, outside the hidden layer of
/// `width` columns, is the same for every column of it: a scalar or a value
/// broadcast along the last dimension.
bool sameForEveryColumn(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && (type.getRank() == 0 || type.getShape().back() == 1);
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

    SmallVector<std::pair<func::FuncOp, SmallVector<Pair>>> pairsByFunction;
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
  SmallVector<Pair>
  findPairs(func::FuncOp func,
            llvm::DenseMap<Operation *, std::string> &replicated) {
    SmallVector<Pair> pairs;
    // The hidden layer is followed through the body's ops in order (region
    // ops, fusions, are isolated from above and come later).
    if (!func.getBody().hasOneBlock()) {
      func.walk([&](MatmulOp matmul) {
        replicated[matmul] = "its function has more than one block";
      });
      return pairs;
    }
    llvm::DenseSet<Operation *> claimed;
    for (Operation &op : func.getBody().front()) {
      auto column = dyn_cast<MatmulOp>(op);
      if (!column || claimed.contains(column))
        continue;
      std::string why;
      FailureOr<Pair> pair = pairAt(column, why);
      if (succeeded(pair) && claimed.contains(pair->row)) {
        why = "the matmul its hidden layer reaches is already split";
        pair = failure();
      }
      if (failed(pair)) {
        replicated[column] = why;
        continue;
      }
      claimed.insert(column);
      claimed.insert(pair->row);
      pairs.push_back(std::move(*pair));
    }
    return pairs;
  }

  /// The pair `column` starts, or why it starts none.
  FailureOr<Pair> pairAt(MatmulOp column, std::string &why) {
    Pair pair;
    pair.column = column;
    FailureOr<Weight> weight = weightOf(column.getRhs(), why);
    if (failed(weight))
      return failure();
    pair.columnWeight = *weight;
    auto resultType = cast<RankedTensorType>(column.getType());
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
    // In block order, every operand from the hidden layer is known before
    // its users.
    llvm::SetVector<Value> hidden;
    hidden.insert(column.getResult());
    for (Operation *op = column->getNextNode(); op; op = op->getNextNode()) {
      if (llvm::none_of(op->getOperands(),
                        [&](Value v) { return hidden.contains(v); }))
        continue;
      if (auto row = dyn_cast<MatmulOp>(op);
          row && !hidden.contains(row.getRhs())) {
        if (pair.row) {
          why = "its hidden layer reaches two matmuls";
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
      if (!op->hasTrait<OpProperty::Pointwise>()) {
        why = describe(op) + " reads its hidden layer and is not pointwise";
        return failure();
      }
      for (Value operand : op->getOperands()) {
        if (hidden.contains(operand) || sameForEveryColumn(operand))
          continue;
        auto bias = operand.getDefiningOp<GlobalLoadOp>();
        auto type = cast<RankedTensorType>(operand.getType());
        if (!bias || type.getRank() != 1 || type.getShape()[0] != width ||
            !bias->hasOneUse()) {
          why = describe(op) +
                " mixes a full-width value other than a 1-D bias global "
                "read once into its hidden layer";
          return failure();
        }
        pair.biases.push_back(bias);
      }
      for (Value result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || type.getRank() == 0 || type.getShape().back() != width) {
          why = describe(op) + " changes the hidden layer's width";
          return failure();
        }
        hidden.insert(result);
      }
      pair.hidden.push_back(op);
    }
    if (!pair.row) {
      why = "no second matmul reads its result through pointwise ops";
      return failure();
    }
    weight = weightOf(pair.row.getRhs(), why);
    if (failed(weight)) {
      why = "its partner " + describe(pair.row) + ": " + why;
      return failure();
    }
    pair.rowWeight = *weight;
    return pair;
  }

  /// Drops (keeps replicated) every pair that splits a global which
  /// something other than a split pair reads or writes, or which two pairs
  /// split differently, until none does: a global has one layout in every
  /// function.
  void dropInconsistentPairs(ModuleOp module, ArrayRef<Pair *> pairs) {
    llvm::DenseMap<StringAttr, int64_t> loads;
    llvm::DenseSet<StringAttr> written;
    module.walk([&](Operation *op) {
      if (auto load = dyn_cast<GlobalLoadOp>(op))
        ++loads[load.getGlobalAttr().getAttr()];
      if (auto store = dyn_cast<GlobalStoreOp>(op))
        written.insert(store.getGlobalAttr().getAttr());
    });
    for (bool changed = true; changed;) {
      changed = false;
      llvm::DenseMap<StringAttr, int64_t> claims;
      llvm::DenseMap<StringAttr, llvm::SmallSetVector<int64_t, 2>> dims;
      for (Pair *pair : pairs)
        if (pair->dropped.empty())
          for (auto [load, dim] : pair->splits()) {
            ++claims[load.getGlobalAttr().getAttr()];
            dims[load.getGlobalAttr().getAttr()].insert(dim);
          }
      for (Pair *pair : pairs) {
        if (!pair->dropped.empty())
          continue;
        for (auto [load, dim] : pair->splits()) {
          StringAttr name = load.getGlobalAttr().getAttr();
          std::string global = "@" + name.str();
          if (written.contains(name))
            pair->dropped = global + " is written (it is state)";
          else if (claims[name] != loads[name])
            pair->dropped =
                global + " is also read outside a split matmul pair";
          else if (dims[name].size() > 1)
            pair->dropped = global + " would be split along two dimensions";
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
    // A replicated value that enters the hidden layer (a learnable scale, a
    // gate) gets from each rank the gradient of its columns alone: through
    // dlc.tp_copy, whose gradient sums them over the group. Constants and
    // the split biases need none; non-float values have no gradient.
    llvm::DenseSet<Value> hidden = {pair.column.getResult()};
    for (Operation *op : pair.hidden)
      hidden.insert(op->result_begin(), op->result_end());
    for (Operation *op : pair.hidden)
      for (OpOperand &operand : op->getOpOperands()) {
        Value value = operand.get();
        auto load = value.getDefiningOp<GlobalLoadOp>();
        if (hidden.contains(value) || value.getDefiningOp<ConstantOp>() ||
            (load && llvm::is_contained(pair.biases, load)) ||
            !isa<FloatType>(getElementTypeOrSelf(value.getType())))
          continue;
        OpBuilder before(op);
        operand.set(TpCopyOp::create(before, op->getLoc(), value));
      }
    OpBuilder b(pair.column);
    Value input = pair.column.getLhs();
    pair.column.getLhsMutable().assign(
        TpCopyOp::create(b, pair.column.getLoc(), input));
    const int64_t last =
        cast<RankedTensorType>(pair.column.getType()).getRank() - 1;
    pair.column.getResult().setType(
        narrowed(pair.column.getType(), last, ranks));
    for (Operation *op : pair.hidden)
      for (Value result : op->getResults())
        result.setType(narrowed(
            result.getType(),
            cast<RankedTensorType>(result.getType()).getRank() - 1, ranks));
    // The weights' slices: the column matmul's operand by its dimension 1,
    // the row matmul's by its dimension 0.
    for (auto [weight, operandDim] : {std::pair(pair.columnWeight, int64_t{1}),
                                      std::pair(pair.rowWeight, int64_t{0})})
      if (weight.transpose)
        weight.transpose.getResult().setType(
            narrowed(weight.transpose.getType(), operandDim, ranks));
    b.setInsertionPointAfter(pair.row);
    auto reduced = TpReduceOp::create(b, pair.row.getLoc(), pair.row);
    pair.row.getResult().replaceAllUsesExcept(reduced, reduced);
  }

  /// Narrows the globals the split pairs read, and their loads.
  void splitGlobals(ModuleOp module, ArrayRef<Pair *> pairs) {
    llvm::MapVector<StringAttr, int64_t> dims;
    for (Pair *pair : pairs)
      if (pair->dropped.empty())
        for (auto [load, dim] : pair->splits())
          dims[load.getGlobalAttr().getAttr()] = dim;
    Builder b(module.getContext());
    for (auto [name, dim] : dims) {
      auto global = module.lookupSymbol<GlobalOp>(name);
      global.setType(narrowed(global.getType(), dim, ranks));
      global->setAttr(roles::kTpSplitAttr, b.getI64IntegerAttr(dim));
    }
    module.walk([&](GlobalLoadOp load) {
      auto it = dims.find(load.getGlobalAttr().getAttr());
      if (it != dims.end())
        load.getResult().setType(narrowed(load.getType(), it->second, ranks));
    });
  }

  void printReport(
      ArrayRef<std::pair<func::FuncOp, SmallVector<Pair>>> pairsByFunction,
      const llvm::DenseMap<Operation *, std::string> &replicated) {
    llvm::raw_ostream &os = llvm::errs();
    os << "tensor parallelism over " << ranks << " ranks\n";
    for (const auto &entry : pairsByFunction) {
      func::FuncOp func = entry.first;
      os << "@" << func.getSymName() << ":\n";
      llvm::DenseMap<Operation *, const Pair *> pairOf;
      for (const Pair &pair : entry.second) {
        pairOf[pair.column] = &pair;
        pairOf[pair.row] = &pair;
      }
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
        bool isColumn = pair.column == matmul;
        Weight weight = isColumn ? pair.columnWeight : pair.rowWeight;
        os << (isColumn ? "column-parallel" : "row-parallel") << ", @"
           << weight.load.getGlobal() << " split along dimension "
           << weight.globalDim(isColumn ? 1 : 0);
        if (isColumn)
          for (GlobalLoadOp bias : pair.biases)
            os << ", @" << bias.getGlobal() << " along dimension 0";
        os << "\n";
      });
    }
  }
};

} // namespace
} // namespace mlir::dlc
