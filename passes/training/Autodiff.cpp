//===- Autodiff.cpp - Reverse-mode differentiation of dlc IR --------------===//
//
// Functions are single blocks of tensor ops, so reverse mode is one backward
// walk: find the ops whose results both depend on a differentiated value and
// reach an output ("active" ops), check that each has a gradient rule, then
// visit them last to first, asking each for its vector-Jacobian product and
// summing what reaches every value (fan-out).
//
//===----------------------------------------------------------------------===//

#include "passes/training/Autodiff.h"

#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "ir/Locations.h"
#include "ir/Roles.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Regex.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCAUTODIFF
#include "passes/Passes.h.inc"

namespace {

bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Whether a gradient can flow from `op`'s operand `index` to its results.
/// Ops without a rule count as differentiable, so that they are reported.
bool flowsThrough(Operation *op, unsigned index) {
  if (!isFloatTensor(op->getOperand(index)))
    return false;
  if (auto rule = dyn_cast<GradientOpInterface>(op))
    return rule.isDifferentiableOperand(index);
  return true;
}

/// "node 'conv1' (Conv) [dlc.conv]", or the op name and location for ops
/// that did not come from an ONNX node.
std::string describeOp(Operation *op) {
  std::string where = describeLocation(op->getLoc());
  std::string name = op->getName().getStringRef().str();
  return where.empty() ? name : where + " [" + name + "]";
}

} // namespace

FailureOr<SmallVector<Value>> buildGradients(OpBuilder &builder, Block &block,
                                             ArrayRef<Value> outputs,
                                             ArrayRef<Value> cotangents,
                                             ArrayRef<Value> wrt,
                                             Location errorLoc) {
  // Values that depend on `wrt` through differentiable operands.
  llvm::DenseSet<Value> varied(wrt.begin(), wrt.end());
  for (Operation &op : block) {
    bool depends = false;
    for (auto [i, operand] : llvm::enumerate(op.getOperands()))
      depends = depends || (varied.contains(operand) && flowsThrough(&op, i));
    if (depends)
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          varied.insert(result);
  }
  // Values an output depends on.
  llvm::DenseSet<Value> useful(outputs.begin(), outputs.end());
  for (Operation &op : llvm::reverse(block))
    if (llvm::any_of(op.getResults(),
                     [&](Value r) { return useful.contains(r); }))
      useful.insert(op.operand_begin(), op.operand_end());

  auto isActive = [&](Value v) {
    return varied.contains(v) && useful.contains(v);
  };
  SmallVector<Operation *> active;
  SmallVector<std::string> missing;
  for (Operation &op : block) {
    if (!llvm::any_of(op.getResults(), isActive))
      continue;
    auto rule = dyn_cast<GradientOpInterface>(&op);
    if (!rule || !rule.hasGradientRule())
      missing.push_back(describeOp(&op));
    active.push_back(&op);
  }
  if (!missing.empty()) {
    InFlightDiagnostic diag = emitError(errorLoc)
                              << "no gradient rule for " << missing.size()
                              << (missing.size() == 1 ? " op" : " ops")
                              << " on the path to the loss: ";
    llvm::interleave(missing, diag, "; ");
    return failure();
  }

  llvm::DenseMap<Value, Value> grads;
  auto accumulate = [&](Value value, Value grad) {
    Value &slot = grads[value];
    slot = slot ? grad::add(builder, grad.getLoc(), slot, grad) : grad;
  };
  for (auto [output, cotangent] : llvm::zip(outputs, cotangents))
    if (isActive(output))
      accumulate(output, cotangent);

  for (Operation *op : llvm::reverse(active)) {
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(isActive(result) ? grads.lookup(result) : Value());
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    Operation *before = block.empty() ? nullptr : &block.back();
    SmallVector<Value> operandGrads(op->getNumOperands());
    if (failed(cast<GradientOpInterface>(op).buildGradient(builder, resultGrads,
                                                           operandGrads)))
      return failure();
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!grad || !isActive(operand))
        continue;
      if (grad.getType() != operand.getType())
        return op->emitOpError()
               << "gradient rule produced " << grad.getType()
               << " for an operand of type " << operand.getType();
      accumulate(operand, grad);
    }
    // An op's backward runs on its pipeline stage (dlc-pipeline-partition),
    // with the activations it keeps. Constants have no stage: every stage
    // has its own (and canonicalization merges them across stages).
    if (Attribute stage = op->getAttr(roles::kPipelineStageAttr))
      for (Operation *added = before ? before->getNextNode() : &block.front();
           added; added = added->getNextNode())
        if (!added->hasTrait<OpTrait::ConstantLike>())
          added->setAttr(roles::kPipelineStageAttr, stage);
  }

  SmallVector<Value> result;
  for (Value v : wrt)
    result.push_back(grads.lookup(v));
  return result;
}

namespace {

/// A copy of `func` named `name`, inserted after it, without its
/// terminator; `results` receives the copy's values of the returned ones.
/// Fails (with an error) if `func` has no body or `name` is taken.
FailureOr<func::FuncOp> cloneWithoutReturn(func::FuncOp func, StringRef name,
                                           SmallVectorImpl<Value> &results) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError() << "dlc-autodiff: @" << func.getSymName()
                            << " is not a function with one block";
  if (SymbolTable::lookupNearestSymbolFrom(
          func, StringAttr::get(func.getContext(), name)))
    return func.emitError() << "dlc-autodiff: the module already has a "
                               "symbol @"
                            << name;
  IRMapping mapping;
  auto copy = cast<func::FuncOp>(func->clone(mapping));
  copy.setSymName(name);
  SymbolTable(func->getParentOfType<ModuleOp>())
      .insert(copy, std::next(Block::iterator(func)));
  for (Value v : func.getBody().front().getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  copy.getBody().front().getTerminator()->erase();
  return copy;
}

/// Ends `func` by returning `results`, sets its type to match, and drops
/// what the gradient rules built that nothing uses (the gradients of
/// operands that need none, such as a matmul's data input).
void finish(func::FuncOp func, ValueRange results, Location loc) {
  Block &block = func.getBody().front();
  OpBuilder builder = OpBuilder::atBlockEnd(&block);
  func::ReturnOp::create(builder, loc, results);
  func.setFunctionType(builder.getFunctionType(
      func.getBody().getArgumentTypes(), ValueRange(results).getTypes()));
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isOpTriviallyDead(&op))
      op.erase();
}

} // namespace

FailureOr<func::FuncOp> buildVJPFunction(func::FuncOp func) {
  SmallVector<Value> clonedOutputs;
  FailureOr<func::FuncOp> clone = cloneWithoutReturn(
      func, (func.getSymName() + "_vjp").str(), clonedOutputs);
  if (failed(clone))
    return failure();
  func::FuncOp vjp = *clone;
  Block &block = vjp.getBody().front();
  SmallVector<Value> floatOutputs, cotangents, wrt;
  for (Value out : clonedOutputs)
    if (isFloatTensor(out)) {
      floatOutputs.push_back(out);
      if (failed(vjp.insertArgument(vjp.getNumArguments(), out.getType(), {},
                                    out.getLoc()))) {
        vjp.erase();
        return func.emitError() << "dlc-autodiff: cannot add an argument to @"
                                << func.getSymName() << "_vjp";
      }
      cotangents.push_back(vjp.getArguments().back());
    }
  for (BlockArgument arg :
       vjp.getArguments().take_front(func.getNumArguments()))
    if (isFloatTensor(arg))
      wrt.push_back(arg);
  OpBuilder builder = OpBuilder::atBlockEnd(&block);
  FailureOr<SmallVector<Value>> grads = buildGradients(
      builder, block, floatOutputs, cotangents, wrt, func.getLoc());
  if (failed(grads)) {
    vjp.erase();
    return failure();
  }
  SmallVector<Value> results(clonedOutputs);
  for (auto [arg, g] : llvm::zip(wrt, *grads))
    results.push_back(
        g ? g : grad::splat(builder, arg.getLoc(), grad::typeOf(arg), 0.0));
  finish(vjp, results, func.getLoc());
  // The results keep their attributes; the gradients have none.
  SmallVector<DictionaryAttr> resultAttrs;
  func.getAllResultAttrs(resultAttrs);
  resultAttrs.resize(results.size(), DictionaryAttr::get(func.getContext()));
  vjp.setAllResultAttrs(resultAttrs);
  return vjp;
}

namespace {

struct AutodiffPass : public impl::DLCAutodiffBase<AutodiffPass> {
  using DLCAutodiffBase::DLCAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (vjp && lossScale) {
      module.emitError() << "dlc-autodiff: loss-scale applies to a loss "
                            "gradient, not to vjp";
      return signalPassFailure();
    }
    auto func = module.lookupSymbol<func::FuncOp>(functionName);
    if (!func || func.isExternal()) {
      module.emitError() << "dlc-autodiff: no function @" << functionName
                         << " with a body";
      return signalPassFailure();
    }
    if (vjp ? failed(buildVJPFunction(func)) : failed(buildLossGradient(func)))
      signalPassFailure();
  }

  LogicalResult buildLossGradient(func::FuncOp func);
};

LogicalResult AutodiffPass::buildLossGradient(func::FuncOp func) {
  Operation *terminator = func.getBody().front().getTerminator();
  auto lossType =
      terminator->getNumOperands() == 0
          ? RankedTensorType()
          : dyn_cast<RankedTensorType>(terminator->getOperand(0).getType());
  if (!lossType || !isa<FloatType>(lossType.getElementType()) ||
      lossType.getRank() != 0)
    return func.emitError()
           << "dlc-autodiff: the first result of @" << func.getSymName()
           << " must be the loss, a float scalar";

  llvm::Regex frozen("^(" + freeze + ")$");
  std::string regexError;
  if (!freeze.empty() && !frozen.isValid(regexError))
    return func.emitError()
           << "dlc-autodiff: freeze '" << freeze
           << "' is not a valid regular expression: " << regexError;

  // The trainable parameters, and the names the freeze pattern matched.
  SmallVector<unsigned> params;
  SmallVector<StringRef> allParams;
  bool matchedAny = false;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto role = func.getArgAttrOfType<StringAttr>(i, roles::kRoleAttr);
    auto name = func.getArgAttrOfType<StringAttr>(i, roles::kNameAttr);
    if (!role || role.getValue() != roles::kParam || !name ||
        !isFloatTensor(arg))
      continue;
    allParams.push_back(name.getValue());
    if (!freeze.empty() && frozen.match(name.getValue())) {
      matchedAny = true;
      continue;
    }
    params.push_back(i);
  }
  if (!freeze.empty() && !matchedAny) {
    InFlightDiagnostic diag = func.emitError()
                              << "dlc-autodiff: freeze '" << freeze
                              << "' matches no parameter; the parameters are: ";
    llvm::interleaveComma(allParams, diag);
    return failure();
  }

  SmallVector<Value> results;
  FailureOr<func::FuncOp> clone =
      cloneWithoutReturn(func, (func.getSymName() + "_grad").str(), results);
  if (failed(clone))
    return failure();
  func::FuncOp gradFunc = *clone;
  Block &block = gradFunc.getBody().front();
  OpBuilder builder = OpBuilder::atBlockEnd(&block);
  Value loss = results.front();

  // Parameters the loss does not depend on are not trainable: they get no
  // gradient result (PyTorch leaves their .grad None).
  SmallVector<Value> wrt;
  for (unsigned i : params)
    wrt.push_back(gradFunc.getArgument(i));
  // The loss gradient starts from 1, or under loss scaling from the scale
  // (GradScaler's scale(loss).backward()), an f32 argument of its own.
  Value seed = grad::splat(builder, func.getLoc(), grad::typeOf(loss), 1.0);
  if (lossScale) {
    // The scale (2^16 at first) is beyond float16's range.
    Type lossElement = lossType.getElementType();
    if (!lossElement.isF32() && !lossElement.isF64()) {
      gradFunc.erase();
      return func.emitError()
             << "dlc-autodiff: loss-scale needs a float32 or float64 loss; @"
             << func.getSymName() << " returns " << lossElement;
    }
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (roles::nameOf(func.getArgAttrDict(i)) == roles::kLossScaleName) {
        gradFunc.erase();
        return func.emitError()
               << "dlc-autodiff: @" << func.getSymName()
               << " already has an argument named '" << roles::kLossScaleName
               << "', which loss-scale adds";
      }
    auto scaleType = RankedTensorType::get({}, builder.getF32Type());
    // Adding an argument to a func.func with a body cannot fail.
    (void)gradFunc.insertArgument(gradFunc.getNumArguments(), scaleType,
                                  roles::attrs(builder.getContext(),
                                               roles::kLossScaleName,
                                               roles::kLossScale),
                                  func.getLoc());
    seed = grad::castTo(builder, func.getLoc(), gradFunc.getArguments().back(),
                        grad::typeOf(loss).getElementType());
  }
  FailureOr<SmallVector<Value>> grads =
      buildGradients(builder, block, {loss}, {seed}, wrt, func.getLoc());
  if (failed(grads)) {
    gradFunc.erase();
    return failure();
  }
  SmallVector<Attribute> resultAttrs;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    resultAttrs.push_back(func.getResultAttrDict(i)
                              ? Attribute(func.getResultAttrDict(i))
                              : builder.getDictionaryAttr({}));
  unsigned trainable = 0;
  for (auto [i, g] : llvm::zip(params, *grads)) {
    if (!g)
      continue; // the loss does not depend on this parameter
    results.push_back(g);
    NamedAttrList attrs(roles::attrs(builder.getContext(),
                                     roles::nameOf(func.getArgAttrDict(i)),
                                     roles::kGradient));
    // A tensor-parallel slice's gradient is the same slice of the whole's.
    if (Attribute split = func.getArgAttr(i, roles::kTpSplitAttr))
      attrs.set(roles::kTpSplitAttr, split);
    resultAttrs.push_back(attrs.getDictionary(builder.getContext()));
    ++trainable;
  }
  if (trainable == 0) {
    gradFunc.erase();
    return func.emitError()
           << "dlc-autodiff: @" << func.getSymName()
           << " has no trainable parameter (no float argument with role "
              "'param' that the loss depends on)";
  }
  finish(gradFunc, results, func.getLoc());
  gradFunc.setAllResultAttrs(resultAttrs);
  return success();
}

} // namespace

} // namespace mlir::dlc
