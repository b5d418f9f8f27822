//===- Loss.cpp - The loss function of a model ----------------------------===//
//
// Builds @loss from the model function: the losses are compositions of dlc
// ops written as PyTorch defines them, so that autodiff differentiates them
// like any model op and the trajectories match torch.nn's losses.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "ir/Roles.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCADDLOSS
#include "passes/Passes.h.inc"

using namespace grad;

namespace {

bool isState(func::FuncOp func, unsigned result) {
  return roles::roleOf(func.getResultAttrDict(result)) == roles::kState;
}

/// Sum over every axis, divided by `count` (a scalar of the same type).
Value meanOver(OpBuilder &b, Location loc, Value v, Value count) {
  return div(b, loc, sumAll(b, loc, v), count);
}

/// The mean of every element of `v`.
Value mean(OpBuilder &b, Location loc, Value v) {
  RankedTensorType type = typeOf(v);
  return meanOver(b, loc, v,
                  scalar(b, loc, type.getElementType(),
                         static_cast<double>(type.getNumElements())));
}

/// The mean of per-position losses over the positions `valid` counts (the
/// labels not ignored); the count is marked, so that pipelined steps divide
/// every micro-batch by the whole batch's.
Value meanOverCounted(OpBuilder &b, Location loc, Value perPosition,
                      Value valid) {
  Value count = sumAll(
      b, loc, castTo(b, loc, valid, typeOf(perPosition).getElementType()));
  count.getDefiningOp()->setAttr(roles::kLossCountAttr, b.getUnitAttr());
  return meanOver(b, loc, perPosition, count);
}

/// torch.nn.CrossEntropyLoss over the last axis of `logits`: the mean of
/// dlc.cross_entropy's per-position losses over the positions whose label
/// is not ignored (whose gradient then recomputes the softmax from the
/// logits and one log-sum-exp a row).
Value crossEntropy(OpBuilder &b, Location loc, Value logits, Value labels,
                   int64_t ignoreIndex, double smoothing) {
  Type element = typeOf(logits).getElementType();
  auto rows = RankedTensorType::get(typeOf(labels).getShape(), element);
  auto perPosition = CrossEntropyOp::create(
      b, loc, rows, rows, logits, labels, b.getI64IntegerAttr(ignoreIndex),
      b.getF64FloatAttr(smoothing));
  Value valid = differsFrom(b, loc, labels, static_cast<double>(ignoreIndex));
  return meanOverCounted(b, loc, perPosition.getLoss(), valid);
}

/// crossEntropy() over logits split by their classes over `ranks`
/// tensor-parallel ranks (dlc-tensor-parallel's class head; Megatron-LM's
/// vocabulary-parallel cross-entropy): `logits` holds this rank's
/// consecutive slice of the classes, and no rank gathers the others'. Each
/// rank sums the exponentials of its slice, shifted by the largest logit
/// of the row on any rank, and the group sums those (the log-sum-exp), and
/// the label's logit comes from the rank whose slice holds it. Two
/// all-reduces of one value a row (three with label smoothing), and one
/// all-gather of the shifts.
Value splitCrossEntropy(OpBuilder &b, Location loc, Value logits, Value labels,
                        int64_t ranks, int64_t ignoreIndex, double smoothing) {
  RankedTensorType type = typeOf(logits);
  Type element = type.getElementType();
  const int64_t last = type.getRank() - 1, slice = type.getShape().back();
  RankedTensorType labelType = typeOf(labels);
  SmallVector<int64_t> keep(labelType.getShape());
  keep.push_back(1);
  const int64_t rows = labelType.getNumElements();

  // The shift: the ranks' row maxima, gathered. Any value near the maximum
  // keeps exp from overflowing and cancels out of the loss, so no gradient
  // flows through it.
  Value localMax = StopGradientOp::create(
      b, loc, ReduceMaxOp::create(b, loc, logits, {last}, true));
  auto everyRank = RankedTensorType::get({ranks, rows}, element);
  Value maxima =
      AllGatherOp::create(b, loc, TypeRange{everyRank},
                          ValueRange{reshape(b, loc, localMax, {rows})}, ranks,
                          /*bucket=*/0, /*tensor=*/true)
          .getResult(0);
  Value shift =
      reshape(b, loc, ReduceMaxOp::create(b, loc, maxima, {0}, false), keep);
  Value sumExp = TpReduceOp::create(
      b, loc,
      ReduceSumOp::create(b, loc,
                          ExpOp::create(b, loc, sub(b, loc, logits, shift)),
                          {last}, true));
  Value lse = add(b, loc, shift, LogOp::create(b, loc, sumExp));

  // The label's class within this rank's slice, where it is in the slice:
  // an ignored label reads class 0 (its loss is zeroed below), and the
  // others are clamped to the classes as dlc.cross_entropy clamps them.
  Value valid = differsFrom(b, loc, labels, static_cast<double>(ignoreIndex));
  Value counted = SelectOp::create(
      b, loc, valid, labels, scalar(b, loc, labelType.getElementType(), 0));
  auto [mine, safe] = indexInRankSlice(
      b, loc, boundedIndex(b, loc, counted, slice * ranks), slice, ranks);
  Value picked = GatherElementsOp::create(b, loc, logits,
                                          reshape(b, loc, safe, keep), last);
  Value target = TpReduceOp::create(
      b, loc, selectOrZero(b, loc, reshape(b, loc, mine, keep), picked));

  Value loss =
      sub(b, loc, lse,
          smoothing == 0
              ? target
              : mul(b, loc, target, scalar(b, loc, element, 1 - smoothing)));
  if (smoothing > 0) {
    Value sum = TpReduceOp::create(
        b, loc, ReduceSumOp::create(b, loc, logits, {last}, true));
    Value mean =
        div(b, loc, sum,
            scalar(b, loc, element, static_cast<double>(slice * ranks)));
    loss = sub(b, loc, loss,
               mul(b, loc, mean, scalar(b, loc, element, smoothing)));
  }
  return meanOverCounted(
      b, loc,
      selectOrZero(b, loc, valid, reshape(b, loc, loss, labelType.getShape())),
      valid);
}

/// torch.nn.BCEWithLogitsLoss: max(x, 0) - x * t + log(1 + exp(-|x|)).
Value bceWithLogits(OpBuilder &b, Location loc, Value x, Value t) {
  Type element = typeOf(x).getElementType();
  Value zero = scalar(b, loc, element, 0.0), one = scalar(b, loc, element, 1.0);
  Value softplus = LogOp::create(
      b, loc,
      add(b, loc, one,
          ExpOp::create(b, loc, neg(b, loc, AbsOp::create(b, loc, x)))));
  Value linear = sub(b, loc, MaxOp::create(b, loc, x, zero), mul(b, loc, x, t));
  return mean(b, loc, add(b, loc, linear, softplus));
}

struct AddLossPass : public impl::DLCAddLossBase<AddLossPass> {
  using DLCAddLossBase::DLCAddLossBase;

  void runOnOperation() override {
    if (failed(addLoss()))
      signalPassFailure();
  }

  LogicalResult addLoss();
};

LogicalResult AddLossPass::addLoss() {
  ModuleOp module = getOperation();
  auto emit = [&]() { return module.emitError() << "dlc-add-loss: "; };
  auto model = module.lookupSymbol<func::FuncOp>(functionName);
  if (!model || model.isExternal())
    return emit() << "no function @" << functionName << " with a body";
  if (!model.getBody().hasOneBlock())
    return emit() << "@" << functionName << " has more than one block";
  if (module.lookupSymbol("loss"))
    return emit() << "the module already has a symbol @loss";
  if (!(labelSmoothing >= 0 && labelSmoothing <= 1))
    return emit() << "label-smoothing " << labelSmoothing
                  << " is outside [0, 1]";

  // The output the loss is computed from.
  SmallVector<unsigned> outputs;
  SmallVector<std::string> outputNames;
  for (unsigned i = 0; i < model.getNumResults(); ++i)
    if (!isState(model, i)) {
      outputs.push_back(i);
      std::string name = roles::nameOf(model.getResultAttrDict(i)).str();
      outputNames.push_back(name.empty() ? "result" + std::to_string(i) : name);
    }
  std::optional<unsigned> chosen;
  if (output.empty() && outputs.size() == 1)
    chosen = outputs.front();
  for (auto [i, name] : llvm::zip(outputs, outputNames))
    if (!output.empty() && name == output)
      chosen = i;
  if (!chosen) {
    InFlightDiagnostic diag =
        output.empty()
            ? emit() << "the model has " << outputs.size()
                     << " outputs; name the one the loss is computed from"
            : emit() << "the model has no output '" << output << "'";
    diag << "; the outputs are: ";
    llvm::interleaveComma(outputNames, diag);
    return failure();
  }
  for (unsigned i = 0; i < model.getNumArguments(); ++i)
    if (loss != LossKind::Model &&
        roles::nameOf(model.getArgAttrDict(i)) == label)
      return emit() << "the label name '" << label
                    << "' is already an input of the model";

  Value out = model.getBody().front().getTerminator()->getOperand(*chosen);
  auto outType = dyn_cast<RankedTensorType>(out.getType());
  if (!outType || !outType.hasStaticShape() ||
      !isa<FloatType>(outType.getElementType()))
    return emit() << "output '"
                  << outputNames[llvm::find(outputs, *chosen) - outputs.begin()]
                  << "' is " << out.getType()
                  << ", not a statically shaped float tensor";

  // Class scores dlc-tensor-parallel left split over the tensor ranks.
  int64_t classRanks = 1;
  if (auto split = roles::tpSplitIn(model.getResultAttrDict(*chosen))) {
    auto ranks = module->getAttrOfType<IntegerAttr>(roles::kTensorParallelAttr);
    if (loss != LossKind::CrossEntropy || !ranks ||
        split->dim != outType.getRank() - 1 || split->groups != 1)
      return emit()
             << "output '"
             << outputNames[llvm::find(outputs, *chosen) - outputs.begin()]
             << "' is split over tensor-parallel ranks (dlc.tp_split); "
                "only cross_entropy over its last axis reads it so";
    classRanks = ranks.getInt();
  }

  // The label's type.
  RankedTensorType labelType;
  if (loss == LossKind::CrossEntropy) {
    if (outType.getRank() < 1)
      return emit() << "cross_entropy needs class scores on the last axis; "
                       "the output is a scalar";
    if (outType.getShape().back() == 0)
      return emit() << "cross_entropy needs at least one class; the output "
                       "is "
                    << outType;
    labelType = RankedTensorType::get(outType.getShape().drop_back(),
                                      IntegerType::get(&getContext(), 64));
  } else if (loss != LossKind::Model) {
    labelType = outType;
  } else if (outType.getNumElements() != 1) {
    return emit() << "loss=model needs a one-element output; the output is "
                  << outType;
  }

  // @loss: a copy of the model function with the label argument.
  OpBuilder b(model);
  b.setInsertionPointAfter(model);
  IRMapping mapping;
  auto lossFunc = cast<func::FuncOp>(model->clone(mapping));
  lossFunc.setSymName("loss");
  SymbolTable(module).insert(lossFunc, std::next(Block::iterator(model)));
  Block &block = lossFunc.getBody().front();
  Operation *terminator = block.getTerminator();
  Location loc = terminator->getLoc();
  if (labelType) {
    NamedAttrList attrs;
    attrs.set(roles::kNameAttr, b.getStringAttr(label));
    attrs.set(roles::kRoleAttr, b.getStringAttr(roles::kLabel));
    if (loss == LossKind::CrossEntropy) {
      // What a data loader needs to reject bad class indices up front.
      attrs.set(roles::kNumClassesAttr,
                b.getI64IntegerAttr(outType.getShape().back() * classRanks));
      attrs.set(roles::kIgnoreIndexAttr, b.getI64IntegerAttr(ignoreIndex));
    }
    if (failed(lossFunc.insertArgument(lossFunc.getNumArguments(), labelType,
                                       attrs.getDictionary(&getContext()),
                                       loc)))
      return emit() << "cannot add the label argument to @loss";
  }
  Value labelValue = labelType ? lossFunc.getArguments().back() : Value();

  b.setInsertionPoint(terminator);
  Value prediction = terminator->getOperand(*chosen);
  Value value;
  switch (loss) {
  case LossKind::CrossEntropy:
    value = classRanks > 1
                ? splitCrossEntropy(b, loc, prediction, labelValue, classRanks,
                                    ignoreIndex, labelSmoothing)
                : crossEntropy(b, loc, prediction, labelValue, ignoreIndex,
                               labelSmoothing);
    break;
  case LossKind::Mse: {
    Value diff = sub(b, loc, prediction, labelValue);
    value = mean(b, loc, mul(b, loc, diff, diff));
    break;
  }
  case LossKind::L1:
    value = mean(b, loc,
                 AbsOp::create(b, loc, sub(b, loc, prediction, labelValue)));
    break;
  case LossKind::BceWithLogits:
    value = bceWithLogits(b, loc, prediction, labelValue);
    break;
  case LossKind::Model:
    value = reshape(b, loc, prediction, {});
    break;
  }

  // Results: the loss, then the model's state.
  SmallVector<Value> results = {value};
  SmallVector<DictionaryAttr> attrs;
  attrs.push_back(roles::attrs(&getContext(), "loss", roles::kLoss));
  for (unsigned i = 0; i < model.getNumResults(); ++i)
    if (isState(model, i)) {
      results.push_back(terminator->getOperand(i));
      attrs.push_back(model.getResultAttrDict(i));
    }
  func::ReturnOp::create(b, loc, results);
  terminator->erase();
  lossFunc.setFunctionType(b.getFunctionType(block.getArgumentTypes(),
                                             ValueRange(results).getTypes()));
  lossFunc.setAllResultAttrs(attrs);
  return success();
}

} // namespace

} // namespace mlir::dlc
