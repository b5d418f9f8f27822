//===- Optimizer.cpp - train_step: gradients, then an optimizer update ----===//
//
// The update rules are torch.optim's single-tensor implementations written
// as dlc ops, step for step, so that a trajectory matches PyTorch's: same
// order of operations, same first-step special case for SGD momentum, same
// bias corrections for Adam.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCOPTIMIZER
#include "passes/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::grad;

namespace {

StringRef attrString(DictionaryAttr attrs, StringRef key) {
  auto value = attrs ? attrs.getAs<StringAttr>(key) : StringAttr();
  return value ? value.getValue() : "";
}

DictionaryAttr roleAttrs(MLIRContext *context, StringRef name,
                         StringRef role) {
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr("dlc.name", b.getStringAttr(name)),
       b.getNamedAttr("dlc.role", b.getStringAttr(role))});
}

/// Builds train_step's signature and body as it goes.
class TrainStepBuilder {
public:
  TrainStepBuilder(ModuleOp module, func::FuncOp func)
      : module_(module), func_(func), b_(module.getContext()) {}

  /// A new global `name` of `type` with every element `value` and an
  /// argument reading it. (b_ has no insertion point: ops it creates are
  /// detached until inserted.)
  Value addStateArgument(StringRef name, StringRef role, RankedTensorType type,
                         double value, Location loc) {
    Attribute element =
        isa<FloatType>(type.getElementType())
            ? Attribute(b_.getFloatAttr(type.getElementType(), value))
            : Attribute(b_.getIntegerAttr(type.getElementType(),
                                          static_cast<int64_t>(value)));
    auto global = GlobalOp::create(b_, loc, name, type,
                                   DenseElementsAttr::get(type, element));
    // Before train_step; renamed on a clash with a model global.
    SymbolTable(module_).insert(global, Block::iterator(func_));
    func_.insertArgument(func_.getNumArguments(), type,
                         roleAttrs(module_.getContext(),
                                   global.getSymName(), role),
                         loc);
    return func_.getArguments().back();
  }

  /// Returns `value` as the new value of the argument `arg`.
  void update(BlockArgument arg, Value value) {
    results_.push_back(value);
    resultAttrs_.push_back(func_.getArgAttrDict(arg.getArgNumber()));
  }
  void addResult(Value value, StringRef name, StringRef role) {
    results_.push_back(value);
    resultAttrs_.push_back(roleAttrs(module_.getContext(), name, role));
  }

  /// Ends the body with the results added so far.
  void finish(OpBuilder &body, Location loc) {
    func::ReturnOp::create(body, loc, results_);
    func_.setFunctionType(body.getFunctionType(
        func_.getBody().getArgumentTypes(), ValueRange(results_).getTypes()));
    func_.setAllResultAttrs(resultAttrs_);
  }

private:
  ModuleOp module_;
  func::FuncOp func_;
  OpBuilder b_;
  SmallVector<Value> results_;
  SmallVector<DictionaryAttr> resultAttrs_;
};

struct OptimizerPass : public mlir::dlc::impl::DLCOptimizerBase<OptimizerPass> {
  using DLCOptimizerBase::DLCOptimizerBase;

  void runOnOperation() override {
    if (failed(build()))
      signalPassFailure();
  }

  LogicalResult build();
  Value scheduleFactor(OpBuilder &b, Location loc, Value step);
};

/// The learning-rate factor at step count `step` (i64 scalar), in f64.
Value OptimizerPass::scheduleFactor(OpBuilder &b, Location loc, Value step) {
  Type f64 = b.getF64Type();
  Value s = castTo(b, loc, step, f64);
  auto c = [&](double v) { return scalar(b, loc, f64, v); };
  Value after = c(1.0);
  if (schedule != "constant") {
    // progress = (s - warmup) / (total - warmup) past the warmup, held at 1
    // after total-steps so that the rate stays 0 (HuggingFace's cosine
    // would rise again).
    double span = static_cast<double>(totalSteps - warmupSteps);
    Value progress =
        div(b, loc, sub(b, loc, s, c(static_cast<double>(warmupSteps))),
            c(span));
    progress = MinOp::create(b, loc, progress, c(1.0));
    if (schedule == "linear")
      after = sub(b, loc, c(1.0), progress);
    else
      after = mul(b, loc, c(0.5),
                  add(b, loc, c(1.0),
                      CosOp::create(b, loc, mul(b, loc, c(M_PI), progress))));
  }
  if (warmupSteps == 0)
    return after;
  Value warm = div(b, loc, s, c(static_cast<double>(warmupSteps)));
  Value inWarmup = CompareOp::create(b, loc, ComparePredicate::lt, s,
                                     c(static_cast<double>(warmupSteps)));
  return SelectOp::create(b, loc, inWarmup, warm, after);
}

LogicalResult OptimizerPass::build() {
  ModuleOp module = getOperation();
  auto emit = [&]() { return module.emitError() << "dlc-optimizer: "; };
  if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw")
    return emit() << "unknown optimizer '" << optimizer
                  << "'; the optimizers are: sgd, adam, adamw";
  if (schedule != "constant" && schedule != "linear" && schedule != "cosine")
    return emit() << "unknown schedule '" << schedule
                  << "'; the schedules are: constant, linear, cosine";
  // (A pass option streamed into a diagnostic prints as a char: read it.)
  int64_t warmup = warmupSteps, total = totalSteps;
  if (warmup < 0)
    return emit() << "warmup-steps " << warmup << " is negative";
  if (schedule != "constant" && total <= warmup)
    return emit() << "schedule " << schedule << " needs total-steps ("
                  << total << ") greater than warmup-steps (" << warmup
                  << ")";
  if (!(lr >= 0))
    return emit() << "lr " << lr << " is not a number >= 0";
  if (!(momentum >= 0))
    return emit() << "momentum " << momentum << " is negative";
  if (nesterov && (momentum <= 0 || dampening != 0))
    return emit() << "nesterov needs a positive momentum and zero dampening";
  double beta1 = 0.9, beta2 = 0.999;
  if (!betas.empty()) {
    if (betas.size() != 2)
      return emit() << "betas takes two values, beta1,beta2";
    beta1 = betas[0];
    beta2 = betas[1];
  }
  if (!(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1))
    return emit() << "betas " << beta1 << "," << beta2
                  << " must be in [0, 1)";
  if (!(eps >= 0))
    return emit() << "eps " << eps << " is negative";
  if (clipGradNorm < 0)
    return emit() << "clip-grad-norm " << clipGradNorm << " is negative";
  double decay = weightDecay >= 0 ? double(weightDecay)
                                  : (optimizer == "adamw" ? 0.01 : 0.0);

  auto source = module.lookupSymbol<func::FuncOp>(functionName);
  if (!source || source.isExternal())
    return emit() << "no function @" << functionName << " with a body";
  if (module.lookupSymbol("train_step"))
    return emit() << "the module already has a symbol @train_step";
  // Each gradient and state result updates the argument of its name: a
  // parameter for a gradient, of the same type.
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0; i < source.getNumArguments(); ++i)
    argIndex[attrString(source.getArgAttrDict(i), "dlc.name")] = i;
  for (unsigned i = 1; i < source.getNumResults(); ++i) {
    DictionaryAttr attrs = source.getResultAttrDict(i);
    StringRef role = attrString(attrs, "dlc.role");
    if (role != "gradient" && role != "state")
      continue;
    StringRef name = attrString(attrs, "dlc.name");
    auto it = name.empty() ? argIndex.end() : argIndex.find(name);
    Type type = source.getResultTypes()[i];
    if (it == argIndex.end() || !isa<RankedTensorType>(type) ||
        source.getArgumentTypes()[it->second] != type ||
        (role == "gradient" &&
         attrString(source.getArgAttrDict(it->second), "dlc.role") !=
             "param"))
      return emit() << "result " << i << " of @" << functionName << " ("
                    << role << " '" << name << "') matches no "
                    << (role == "gradient" ? "parameter" : "argument")
                    << " of the same name and type";
  }
  Location loc = source.getLoc();

  // train_step starts as a copy of the gradient function.
  IRMapping mapping;
  auto func = cast<func::FuncOp>(source->clone(mapping));
  func.setSymName("train_step");
  SymbolTable(module).insert(func, std::next(Block::iterator(source)));
  Block &block = func.getBody().front();
  Operation *terminator = block.getTerminator();
  SmallVector<Value> sourceResults(terminator->getOperands());
  terminator->erase();
  OpBuilder b = OpBuilder::atBlockEnd(&block);
  TrainStepBuilder step(module, func);

  llvm::StringMap<BlockArgument> argByName;
  for (BlockArgument arg : func.getArguments())
    argByName[attrString(func.getArgAttrDict(arg.getArgNumber()),
                         "dlc.name")] = arg;
  // Hyperparameters, metrics and the clipping norm are in the loss's type
  // (f32, or f64 for a float64 model, whose rate 0.1 must stay 0.1).
  Type real = typeOf(sourceResults.front()).getElementType();
  auto scalarType = [&](Type t) { return RankedTensorType::get({}, t); };
  Value stepArg =
      step.addStateArgument("dlc.step", "step", scalarType(b.getI64Type()), 0,
                            loc);
  Value lrArg =
      step.addStateArgument("dlc.lr", "hyperparameter", scalarType(real), lr,
                            loc);
  Value decayArg = step.addStateArgument("dlc.weight_decay", "hyperparameter",
                                         scalarType(real), decay, loc);

  // The loss, the gradients by parameter, and the state the model updates.
  Value loss;
  SmallVector<std::pair<BlockArgument, Value>> grads;
  SmallVector<std::pair<StringRef, Value>> states;
  for (auto [i, value] : llvm::enumerate(sourceResults)) {
    DictionaryAttr attrs = source.getResultAttrDict(i);
    StringRef role = attrString(attrs, "dlc.role");
    StringRef name = attrString(attrs, "dlc.name");
    if (i == 0)
      loss = value;
    else if (role == "gradient")
      grads.push_back({argByName.lookup(name), value});
    else if (role == "state")
      states.push_back({name, value});
  }
  if (grads.empty())
    return emit() << "@" << functionName << " returns no gradient";

  // This step's learning rate, in f64 for the schedule.
  Value lrStep = mul(b, loc, castTo(b, loc, lrArg, b.getF64Type()),
                     scheduleFactor(b, loc, stepArg));
  step.addResult(loss, "loss", "loss");
  step.addResult(castTo(b, loc, lrStep, real), "lr", "metric");

  if (clipGradNorm > 0) {
    // total = ||(||g_1||, ..., ||g_n||)||; g *= min(max / (total + 1e-6), 1).
    Value sumSquares;
    for (auto &[param, g] : grads) {
      Value g32 = castTo(b, loc, g, real);
      SmallVector<int64_t> all =
          llvm::to_vector(llvm::seq<int64_t>(0, typeOf(g).getRank()));
      Value sq = mul(b, loc, g32, g32);
      if (!all.empty())
        sq = ReduceSumOp::create(b, loc, sq, all, false);
      sumSquares = sumSquares ? add(b, loc, sumSquares, sq) : sq;
    }
    Value total = SqrtOp::create(b, loc, sumSquares);
    Value coef = div(b, loc, scalar(b, loc, real, clipGradNorm),
                     add(b, loc, total, scalar(b, loc, real, 1e-6)));
    coef = MinOp::create(b, loc, coef, scalar(b, loc, real, 1.0));
    for (auto &[param, g] : grads)
      g = mul(b, loc, g, castTo(b, loc, coef, typeOf(g).getElementType()));
    step.addResult(total, "grad_norm", "metric");
  }

  Value isFirst = CompareOp::create(b, loc, ComparePredicate::eq, stepArg,
                                    scalar(b, loc, b.getI64Type(), 0));
  // Adam's bias corrections in f64, as torch computes them on the host.
  Value t = castTo(b, loc,
                   add(b, loc, stepArg, scalar(b, loc, b.getI64Type(), 1)),
                   b.getF64Type());
  auto c64 = [&](double v) { return scalar(b, loc, b.getF64Type(), v); };
  for (auto &[param, g] : grads) {
    StringRef name = attrString(func.getArgAttrDict(param.getArgNumber()),
                                "dlc.name");
    RankedTensorType type = typeOf(param);
    Type element = type.getElementType();
    auto c = [&](double v) { return scalar(b, loc, element, v); };
    Value lrT = castTo(b, loc, lrStep, element);
    Value wd = castTo(b, loc, decayArg, element);
    Value p = param;
    if (optimizer == "sgd") {
      g = add(b, loc, g, mul(b, loc, p, wd));
      if (momentum != 0) {
        BlockArgument buf = cast<BlockArgument>(step.addStateArgument(
            ("optimizer." + name + ".momentum_buffer").str(),
            "optimizer_state", type, 0, loc));
        // The first step's buffer is the gradient itself.
        Value next = add(b, loc, mul(b, loc, buf, c(momentum)),
                         mul(b, loc, g, c(1 - dampening)));
        next = SelectOp::create(b, loc, isFirst, g, next);
        step.update(buf, next);
        g = nesterov ? add(b, loc, g, mul(b, loc, next, c(momentum))) : next;
      }
      step.update(param, sub(b, loc, p, mul(b, loc, g, lrT)));
      continue;
    }
    // adam, adamw
    if (optimizer == "adamw")
      p = mul(b, loc, p, sub(b, loc, c(1.0), mul(b, loc, lrT, wd)));
    else
      g = add(b, loc, g, mul(b, loc, p, wd));
    BlockArgument m = cast<BlockArgument>(step.addStateArgument(
        ("optimizer." + name + ".exp_avg").str(), "optimizer_state", type, 0,
        loc));
    BlockArgument v = cast<BlockArgument>(step.addStateArgument(
        ("optimizer." + name + ".exp_avg_sq").str(), "optimizer_state", type,
        0, loc));
    // m.lerp_(g, 1 - beta1); v = v * beta2 + (1 - beta2) g^2.
    Value mNext = add(b, loc, m, mul(b, loc, sub(b, loc, g, m), c(1 - beta1)));
    Value vNext = add(b, loc, mul(b, loc, v, c(beta2)),
                      mul(b, loc, mul(b, loc, g, g), c(1 - beta2)));
    step.update(m, mNext);
    step.update(v, vNext);
    Value bc1 = sub(b, loc, c64(1.0), PowOp::create(b, loc, c64(beta1), t));
    Value bc2 = sub(b, loc, c64(1.0), PowOp::create(b, loc, c64(beta2), t));
    Value stepSize = castTo(b, loc, div(b, loc, lrStep, bc1), element);
    Value bc2Sqrt = castTo(b, loc, SqrtOp::create(b, loc, bc2), element);
    Value denom = add(b, loc, div(b, loc, SqrtOp::create(b, loc, vNext), bc2Sqrt),
                      c(eps));
    step.update(param, sub(b, loc, p, mul(b, loc, div(b, loc, mNext, denom),
                                           stepSize)));
  }
  for (auto &[name, value] : states)
    step.update(argByName.lookup(name), value);
  step.update(cast<BlockArgument>(stepArg),
              add(b, loc, stepArg, scalar(b, loc, b.getI64Type(), 1)));
  step.finish(b, loc);
  return success();
}

} // namespace
