//===- Optimizer.cpp - train_step: gradients, then an optimizer update ----===//
//
// The update rules are torch.optim's single-tensor implementations written
// as dlc ops, step for step, so that a trajectory matches PyTorch's: same
// order of operations, same first-step special case for SGD momentum, same
// bias corrections for Adam, and what PyTorch computes on the host in
// double (bias corrections, 1 - lr * weight_decay, the schedule) in f64.
// When the gradient function starts from a loss scale (dlc-autodiff's
// loss-scale), train_step is also torch.cuda.amp.GradScaler's unscale_,
// step and update.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "ir/Roles.h"
#include "ir/eval/Evaluator.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <map>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCOPTIMIZER
#include "passes/Passes.h.inc"

using namespace grad;

namespace {

/// The optimizer's settings once the options are checked.
struct Settings {
  double beta1 = 0.9, beta2 = 0.999, weightDecay = 0;
};

/// GradScaler's state in train_step: the scale the gradients came with, the
/// clean steps since the scale last changed, the steps skipped so far, and
/// whether this step's gradients hold an inf or NaN (an i1 scalar).
struct LossScaling {
  BlockArgument scale, growthTracker, skipped;
  Value foundInf;
};

constexpr StringLiteral kGrowthTrackerName = "dlc.loss_scale_growth_tracker";
constexpr StringLiteral kSkippedStepsName = "dlc.skipped_steps";

/// The name of parameter `param`'s copy in the 16-bit type `element`.
std::string copyName(StringRef param, Type element) {
  return (param + (element.isBF16() ? "@bf16" : "@fp16")).str();
}

/// The 16-bit float types mixed precision casts the float32 argument `arg`
/// to, in the order of its uses (none for other arguments: a copy's source
/// is a float32 master weight).
SmallVector<Type> lowPrecisionCastsOf(BlockArgument arg) {
  if (!getElementTypeOrSelf(arg.getType()).isF32())
    return {};
  SmallVector<Operation *> casts;
  for (Operation *user : arg.getUsers()) {
    if (!isa<CastOp>(user))
      continue;
    Type element = getElementTypeOrSelf(user->getResultTypes().front());
    if (element.isBF16() || element.isF16())
      casts.push_back(user);
  }
  llvm::sort(casts,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Type> types;
  for (Operation *cast : casts) {
    Type element = getElementTypeOrSelf(cast->getResultTypes().front());
    if (!llvm::is_contained(types, element))
      types.push_back(element);
  }
  return types;
}

/// What the gradient function returns, by role.
struct SourceResults {
  Value loss;
  /// (parameter argument number, gradient)
  SmallVector<std::pair<unsigned, Value>> grads;
  /// (state argument number, new value)
  SmallVector<std::pair<unsigned, Value>> states;
};

/// Builds train_step's signature and body as it goes.
class TrainStepBuilder {
public:
  TrainStepBuilder(ModuleOp module, func::FuncOp func)
      : module_(module), func_(func), b_(module.getContext()) {}

  /// A new global `name` of `type` with every element `value` (inserted
  /// before train_step; the caller checked the name is free) and an
  /// argument reading it. (b_ has no insertion point: ops it creates are
  /// detached until inserted.)
  /// With `shardOf`, the global holds this rank's ZeRO shard of a value of
  /// that type (kShardedAttr), its value its own. With `split`, it holds a
  /// tensor-parallel rank's slice along that dimension (kTpSplitAttr); with
  /// both, a shard of the rank's slice, `shardOf` being the slice's type.
  BlockArgument addStateArgument(StringRef name, StringRef role,
                                 RankedTensorType type, double value,
                                 Location loc, RankedTensorType shardOf = {},
                                 Attribute split = {}) {
    addGlobal(name, type, value, loc, split, shardOf);
    DictionaryAttr attrs = roles::attrs(module_.getContext(), name, role);
    NamedAttrList list(attrs);
    if (shardOf)
      list.set(roles::kShardedAttr, TypeAttr::get(shardOf));
    if (split)
      list.set(roles::kTpSplitAttr, split);
    attrs = list.getDictionary(module_.getContext());
    // Adding an argument to a func.func with a body cannot fail.
    (void)func_.insertArgument(func_.getNumArguments(), type, attrs, loc);
    return func_.getArguments().back();
  }

  /// Makes the existing argument `arg` (named `name`) read a new global of
  /// `type` with every element `value`, as optimizer state.
  void bindToNewGlobal(BlockArgument arg, StringRef name, RankedTensorType type,
                       double value, Location loc) {
    addGlobal(name, type, value, loc);
    func_.setArgAttrs(
        arg.getArgNumber(),
        roles::attrs(module_.getContext(), name, roles::kOptimizerState));
  }

  /// Returns `value` as the new value of the argument `arg`.
  void update(BlockArgument arg, Value value) {
    results_.push_back(value);
    resultAttrs_.push_back(func_.getArgAttrDict(arg.getArgNumber()));
  }
  /// The same for what an optimizer step changes: unchanged while
  /// `skipStep` (an i1 scalar) holds, when set. Returns the new value.
  Value updateUnlessSkipped(OpBuilder &b, Location loc, BlockArgument arg,
                            Value value) {
    if (skipStep)
      value = SelectOp::create(b, loc, skipStep, arg, value);
    update(arg, value);
    return value;
  }

  /// A new argument reading the 16-bit copy `name` of parameter `source`:
  /// a global of `type` with kCopyOfAttr naming the source, initially
  /// `initial` (none when the source has none), split as the source is
  /// (`split`, its kTpSplitAttr, or null).
  BlockArgument addCopyArgument(StringRef name, StringRef source,
                                RankedTensorType type, Attribute initial,
                                Attribute split, Location loc) {
    auto global = GlobalOp::create(b_, loc, name, type,
                                   cast_if_present<ElementsAttr>(initial));
    global->setAttr(roles::kCopyOfAttr,
                    FlatSymbolRefAttr::get(module_.getContext(), source));
    NamedAttrList attrs(
        roles::attrs(module_.getContext(), name, roles::kWeightCopy));
    if (split) {
      global->setAttr(roles::kTpSplitAttr, split);
      attrs.set(roles::kTpSplitAttr, split);
    }
    SymbolTable(module_).insert(global, Block::iterator(func_));
    (void)func_.insertArgument(func_.getNumArguments(), type,
                               attrs.getDictionary(module_.getContext()), loc);
    return func_.getArguments().back();
  }
  Value skipStep;
  void addResult(Value value, StringRef name, StringRef role) {
    results_.push_back(value);
    resultAttrs_.push_back(roles::attrs(module_.getContext(), name, role));
  }

  /// Ends the body with the results added so far, dropping what this
  /// optimizer did not need (Adam's bias corrections under SGD...).
  void finish(OpBuilder &body, Location loc) {
    func::ReturnOp::create(body, loc, results_);
    func_.setFunctionType(body.getFunctionType(
        func_.getBody().getArgumentTypes(), ValueRange(results_).getTypes()));
    func_.setAllResultAttrs(resultAttrs_);
    for (Operation &op :
         llvm::make_early_inc_range(llvm::reverse(func_.getBody().front())))
      if (isOpTriviallyDead(&op))
        op.erase();
  }

private:
  /// A global of `type`, every element `value`; with `split`, a
  /// tensor-parallel rank's slice of a whole of such elements; with
  /// `shardOf`, a ZeRO shard of a value of that type (a slice's with both).
  void addGlobal(StringRef name, RankedTensorType type, double value,
                 Location loc, Attribute split = {},
                 RankedTensorType shardOf = {}) {
    Attribute element =
        isa<FloatType>(type.getElementType())
            ? Attribute(b_.getFloatAttr(type.getElementType(), value))
            : Attribute(b_.getIntegerAttr(type.getElementType(),
                                          static_cast<int64_t>(value)));
    // A slice's initial value is every slice's; a shard's (of a slice too)
    // its own, every rank's alike.
    RankedTensorType initialType = type;
    if (split && !shardOf) {
      SmallVector<int64_t> shape(type.getShape());
      shape[roles::tpSplitFromAttr(split)->dim] *=
          module_->getAttrOfType<IntegerAttr>(roles::kTensorParallelAttr)
              .getInt();
      initialType = type.clone(shape);
    }
    auto global = GlobalOp::create(
        b_, loc, name, type, DenseElementsAttr::get(initialType, element));
    if (split)
      global->setAttr(roles::kTpSplitAttr, split);
    if (shardOf)
      global->setAttr(roles::kShardedAttr, TypeAttr::get(shardOf));
    SymbolTable(module_).insert(global, Block::iterator(func_));
  }

  ModuleOp module_;
  func::FuncOp func_;
  OpBuilder b_;
  SmallVector<Value> results_;
  SmallVector<DictionaryAttr> resultAttrs_;
};

struct OptimizerPass : public impl::DLCOptimizerBase<OptimizerPass> {
  using DLCOptimizerBase::DLCOptimizerBase;

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run();
  /// Sets shardRanks_ from the module's attributes: under ZeRO-1
  /// (`dlc.zero = 1`) its data-parallel ranks, at least 2.
  LogicalResult checkZero();
  /// The sum over the ranks of `value`, a scalar each rank computed from
  /// its shards (a norm's sum of squares, GradScaler's inf probe), as the
  /// next collective after those in the block `b` builds in.
  Value sumOverRanks(OpBuilder &b, Location loc, Value value);
  /// The sum of `terms`, scalars each computed from one parameter's
  /// gradient (a norm's sum of squares, GradScaler's inf probe), so that
  /// every rank sums the whole model's: over the tensor group for the
  /// tensor-parallel slices', over the pipeline stages for each stage's
  /// parameters (sumOverStages).
  Value sumOverParameters(OpBuilder &b, Location loc,
                          ArrayRef<std::pair<BlockArgument, Value>> terms);
  /// sumOverParameters within one stage's (or one replicated) set of terms.
  Value sumOverSlices(OpBuilder &b, Location loc,
                      ArrayRef<std::pair<BlockArgument, Value>> terms);
  /// The sum of each stage's partial sum (`partials`, by stage), the same
  /// on every stage: stage 0 receives the others' and adds them in stage
  /// order, then sends the total to each of them (dlc.pp_transfer). Stage
  /// 0 computes its gradients last in the 1F1B order, so the others' are
  /// there by then.
  Value sumOverStages(OpBuilder &b, Location loc,
                      const std::map<int64_t, Value> &partials);
  InFlightDiagnostic emitError() {
    return getOperation().emitError() << "dlc-optimizer: ";
  }
  FailureOr<Settings> checkOptions();
  LogicalResult checkSource(func::FuncOp source);
  LogicalResult checkNewNames(func::FuncOp source);
  SmallVector<std::string> stateNames(StringRef param) const;
  Value scheduleFactor(OpBuilder &b, Location loc, Value step);
  Value clipGradients(OpBuilder &b, Location loc, Type real,
                      SmallVectorImpl<std::pair<BlockArgument, Value>> &grads);
  LossScaling
  unscaleGradients(OpBuilder &b, Location loc, Type real,
                   TrainStepBuilder &step, BlockArgument scale,
                   SmallVectorImpl<std::pair<BlockArgument, Value>> &grads);
  void updateLossScale(OpBuilder &b, Location loc, TrainStepBuilder &step,
                       const LossScaling &scaling);
  LogicalResult
  addLowPrecisionCopies(OpBuilder &b, Location loc, TrainStepBuilder &step,
                        ArrayRef<std::pair<BlockArgument, Value>> updated);

  /// ZeRO-1's ranks, over which every gradient is a shard; 0 without it.
  int64_t shardRanks_ = 0;
  /// The pipeline stages (1: none), and the stage computing each
  /// parameter's gradient (absent: every stage, as for a constant zero).
  int64_t stages_ = 1;
  llvm::DenseMap<BlockArgument, int64_t> gradientStage_;
};

LogicalResult OptimizerPass::checkZero() {
  ModuleOp module = getOperation();
  Attribute zero = module->getAttr(roles::kZeroAttr);
  if (!zero)
    return success();
  auto stage = dyn_cast<IntegerAttr>(zero);
  auto ranks = module->getAttrOfType<IntegerAttr>(roles::kDataParallelAttr);
  if (!stage || stage.getInt() != 1 || !ranks || ranks.getInt() < 2)
    return emitError() << "a module with " << roles::kZeroAttr
                       << " must have it 1 (ZeRO stage 1) and "
                       << roles::kDataParallelAttr
                       << " an i64 of at least 2 ranks";
  shardRanks_ = ranks.getInt();
  return success();
}

/// The bucket number after every collective's in the block `b` builds in.
static int64_t nextBucket(OpBuilder &b) {
  int64_t next = 0;
  for (Operation &op : *b.getBlock())
    if (auto bucket = op.getAttrOfType<IntegerAttr>("bucket");
        bucket && isa<AllReduceOp, ReduceScatterOp, AllGatherOp>(op))
      next = std::max(next, bucket.getInt() + 1);
  return next;
}

Value OptimizerPass::sumOverRanks(OpBuilder &b, Location loc, Value value) {
  return AllReduceOp::create(b, loc, ValueRange{value}, RankReduction::sum,
                             nextBucket(b))
      .getResult(0);
}

/// A parameter argument's kTpSplitAttr, or null.
static Attribute tpSplitOf(BlockArgument param) {
  auto func = cast<func::FuncOp>(param.getOwner()->getParentOp());
  return func.getArgAttr(param.getArgNumber(), roles::kTpSplitAttr);
}

Value OptimizerPass::sumOverParameters(
    OpBuilder &b, Location loc,
    ArrayRef<std::pair<BlockArgument, Value>> terms) {
  if (stages_ < 2)
    return sumOverSlices(b, loc, terms);
  std::map<int64_t, SmallVector<std::pair<BlockArgument, Value>>> byStage;
  for (const auto &term : terms) {
    auto it = gradientStage_.find(term.first);
    byStage[it == gradientStage_.end() ? -1 : it->second].push_back(term);
  }
  std::map<int64_t, Value> partials;
  for (const auto &[stage, stageTerms] : byStage)
    if (stage >= 0)
      partials[stage] = sumOverSlices(b, loc, stageTerms);
  Value total = partials.empty() ? Value() : sumOverStages(b, loc, partials);
  // Terms every stage computes alike are added on every stage.
  if (auto it = byStage.find(-1); it != byStage.end()) {
    Value everywhere = sumOverSlices(b, loc, it->second);
    total = total ? add(b, loc, total, everywhere) : everywhere;
  }
  return total;
}

Value OptimizerPass::sumOverStages(OpBuilder &b, Location loc,
                                   const std::map<int64_t, Value> &partials) {
  Value total;
  for (const auto &[stage, partial] : partials) {
    Value here =
        stage == 0 ? partial : PpTransferOp::create(b, loc, partial, stage, 0);
    total = total ? add(b, loc, total, here) : here;
  }
  for (int64_t stage = 1; stage < stages_; ++stage)
    total = PpTransferOp::create(b, loc, total, 0, stage);
  return total;
}

Value OptimizerPass::sumOverSlices(
    OpBuilder &b, Location loc,
    ArrayRef<std::pair<BlockArgument, Value>> terms) {
  Value replicated, sliced;
  for (auto [param, term] : terms) {
    Value &sum = tpSplitOf(param) ? sliced : replicated;
    sum = sum ? add(b, loc, sum, term) : term;
  }
  if (!sliced)
    return replicated;
  sliced = TpReduceOp::create(b, loc, sliced);
  return replicated ? add(b, loc, replicated, sliced) : sliced;
}

FailureOr<Settings> OptimizerPass::checkOptions() {
  // (An int64_t pass option streamed into a diagnostic prints as a char.)
  int64_t warmup = warmupSteps, total = totalSteps;
  if (warmup < 0)
    return emitError() << "warmup-steps " << warmup << " is negative";
  if (schedule != LrSchedule::Constant && total <= warmup)
    return emitError() << "schedule " << spell(LrSchedule(schedule))
                       << " needs total-steps (" << total
                       << ") greater than warmup-steps (" << warmup << ")";
  // Written as !(x >= 0) so that NaN is refused too; infinities make every
  // loss NaN.
  auto finite = [](double x) { return x >= 0 && std::isfinite(x); };
  if (!finite(lr))
    return emitError() << "lr " << lr << " is not a number >= 0";
  if (!finite(momentum))
    return emitError() << "momentum " << momentum << " is not a number >= 0";
  if (!(dampening >= 0 && dampening <= 1))
    return emitError() << "dampening " << dampening << " is not in [0, 1]";
  if (nesterov && (momentum <= 0 || dampening != 0))
    return emitError()
           << "nesterov needs a positive momentum and zero dampening";
  Settings settings;
  if (!betas.empty()) {
    if (betas.size() != 2)
      return emitError() << "betas takes two values, beta1,beta2";
    settings.beta1 = betas[0];
    settings.beta2 = betas[1];
  }
  if (!(settings.beta1 >= 0 && settings.beta1 < 1 && settings.beta2 >= 0 &&
        settings.beta2 < 1))
    return emitError() << "betas " << settings.beta1 << "," << settings.beta2
                       << " must be in [0, 1)";
  if (!finite(eps))
    return emitError() << "eps " << eps << " is not a number >= 0";
  if (!(clipGradNorm >= 0))
    return emitError() << "clip-grad-norm " << clipGradNorm
                       << " is not a number >= 0";
  // A negative weight decay stands for the optimizer's default; NaN is an
  // error.
  if (std::isnan(weightDecay) || std::isinf(weightDecay))
    return emitError() << "weight-decay is not a number";
  settings.weightDecay = weightDecay >= 0
                             ? double(weightDecay)
                             : (optimizer == OptimizerKind::AdamW ? 0.01 : 0.0);
  // GradScaler's own checks, and a scale that is a number: a normal
  // float32 (it is stored as one) whose reciprocal is finite too.
  float scale = static_cast<float>(initScale);
  if (!(std::isnormal(scale) && scale > 0 && std::isfinite(1.0f / scale)))
    return emitError() << "init-scale " << initScale
                       << " is not a float32 number > 0 whose reciprocal is "
                          "finite";
  if (!(growthFactor > 1 && std::isfinite(growthFactor)))
    return emitError() << "growth-factor " << growthFactor
                       << " is not a finite number > 1";
  if (!(backoffFactor > 0 && backoffFactor < 1))
    return emitError() << "backoff-factor " << backoffFactor
                       << " is not in (0, 1)";
  int64_t interval = growthInterval;
  if (interval < 1)
    return emitError() << "growth-interval " << interval << " is not >= 1";
  return settings;
}

/// Checks the gradient function: a float scalar loss first, then results
/// that each update one argument of the same name and type (a parameter,
/// for a gradient; under ZeRO-1 a gradient is its parameter's shard), no
/// argument twice, and at least one gradient.
LogicalResult OptimizerPass::checkSource(func::FuncOp source) {
  auto lossType = source.getNumResults() > 0
                      ? dyn_cast<RankedTensorType>(source.getResultTypes()[0])
                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType()))
    return emitError() << "the first result of @" << functionName
                       << " must be the loss, a float scalar";
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0; i < source.getNumArguments(); ++i) {
    StringRef name = roles::nameOf(source.getArgAttrDict(i));
    if (!name.empty() && !argIndex.try_emplace(name, i).second)
      return emitError() << "@" << functionName << " has two arguments named '"
                         << name << "'";
  }
  unsigned numScales = 0;
  for (unsigned i = 0; i < source.getNumArguments(); ++i) {
    DictionaryAttr attrs = source.getArgAttrDict(i);
    if (roles::roleOf(attrs) != roles::kLossScale)
      continue;
    if (++numScales > 1 || roles::nameOf(attrs) != roles::kLossScaleName ||
        source.getArgumentTypes()[i] !=
            RankedTensorType::get({}, Float32Type::get(source.getContext())))
      return emitError() << "argument " << i << " of @" << functionName
                         << " (role " << roles::kLossScale
                         << ") must be the only one, an f32 scalar named '"
                         << roles::kLossScaleName << "'";
  }
  llvm::StringSet<> updated;
  unsigned numGradients = 0;
  for (unsigned i = 1; i < source.getNumResults(); ++i) {
    DictionaryAttr attrs = source.getResultAttrDict(i);
    StringRef role = roles::roleOf(attrs), name = roles::nameOf(attrs);
    if (role != roles::kGradient && role != roles::kState)
      continue;
    auto it = name.empty() ? argIndex.end() : argIndex.find(name);
    Type type = source.getResultTypes()[i];
    // Under ZeRO-1 every gradient is this rank's shard of its parameter's,
    // marked with the parameter's type (a [1] parameter's shard has its
    // type, and still only rank 0 holds the gradient).
    const bool sharded = shardRanks_ && role == roles::kGradient;
    auto matches = [&](Type argType) {
      if (!sharded)
        return argType == type;
      auto ranked = dyn_cast<RankedTensorType>(argType);
      return ranked && ranked == roles::shardedTypeOf(attrs) &&
             shardTypeOf(ranked, shardRanks_) == type;
    };
    if (it == argIndex.end() || !isa<RankedTensorType>(type) ||
        !matches(source.getArgumentTypes()[it->second]) ||
        (role == roles::kGradient &&
         roles::roleOf(source.getArgAttrDict(it->second)) != roles::kParam))
      return emitError() << "result " << i << " of @" << functionName << " ("
                         << role << " '" << name << "') matches no "
                         << (role == roles::kGradient ? "parameter"
                                                      : "argument")
                         << (sharded ? " whose ZeRO-1 shard it is (dlc.sharded "
                                       "naming the parameter's type)"
                                     : " of the same name and type");
    if (!updated.insert(name).second)
      return emitError() << "two results of @" << functionName << " update '"
                         << name << "'";
    numGradients += role == roles::kGradient;
  }
  if (numGradients == 0)
    return emitError() << "@" << functionName << " returns no gradient";
  // GradScaler unscales float32 gradients only ("Attempting to unscale
  // FP16 gradients"): a 16-bit one times 1/65536 loses its small values.
  if (numScales > 0)
    for (unsigned r = 1; r < source.getNumResults(); ++r) {
      Type element = getElementTypeOrSelf(source.getResultTypes()[r]);
      if (roles::roleOf(source.getResultAttrDict(r)) == roles::kGradient &&
          !element.isF32() && !element.isF64())
        return emitError() << "loss scaling needs float32 or float64 "
                              "parameters (master weights); '"
                           << roles::nameOf(source.getResultAttrDict(r))
                           << "' is " << element;
    }
  return success();
}

/// The optimizer state globals of parameter `param`.
SmallVector<std::string> OptimizerPass::stateNames(StringRef param) const {
  std::string prefix = ("optimizer." + param + ".").str();
  if (optimizer == OptimizerKind::Sgd)
    return momentum != 0 ? SmallVector<std::string>{prefix + "momentum_buffer"}
                         : SmallVector<std::string>{};
  return {prefix + "exp_avg", prefix + "exp_avg_sq"};
}

/// Checks that the globals train_step adds are not names the module uses.
LogicalResult OptimizerPass::checkNewNames(func::FuncOp source) {
  ModuleOp module = getOperation();
  SmallVector<std::string> names = {"train_step", "dlc.step", "dlc.lr",
                                    "dlc.weight_decay"};
  bool scaled = llvm::any_of(source.getArguments(), [&](BlockArgument arg) {
    return roles::roleOf(source.getArgAttrDict(arg.getArgNumber())) ==
           roles::kLossScale;
  });
  // Copies of the parameters that have a gradient (the others are not
  // updated, and keep their casts).
  if (lowPrecisionCopies)
    for (unsigned i = 0; i < source.getNumArguments(); ++i) {
      StringRef name = roles::nameOf(source.getArgAttrDict(i));
      bool trainable =
          llvm::any_of(llvm::seq(1u, source.getNumResults()), [&](unsigned r) {
            DictionaryAttr attrs = source.getResultAttrDict(r);
            return roles::roleOf(attrs) == roles::kGradient &&
                   roles::nameOf(attrs) == name;
          });
      if (trainable)
        for (Type element : lowPrecisionCastsOf(source.getArgument(i)))
          names.push_back(copyName(name, element));
    }
  if (scaled) {
    names.push_back(kGrowthTrackerName.str());
    names.push_back(kSkippedStepsName.str());
    // The scale's argument exists; its global does not yet.
    if (module.lookupSymbol(roles::kLossScaleName))
      return emitError() << "the module already has a symbol @\""
                         << roles::kLossScaleName
                         << "\", which train_step adds";
  }
  for (unsigned i = 1; i < source.getNumResults(); ++i)
    if (roles::roleOf(source.getResultAttrDict(i)) == roles::kGradient)
      llvm::append_range(
          names, stateNames(roles::nameOf(source.getResultAttrDict(i))));
  for (const std::string &name : names)
    if (module.lookupSymbol(name))
      return emitError() << "the module already has a symbol @\"" << name
                         << "\", which train_step adds";
  // train_step's arguments and results are bound by name.
  for (unsigned i = 0; i < source.getNumArguments(); ++i)
    if (llvm::is_contained(names, roles::nameOf(source.getArgAttrDict(i))))
      return emitError() << "@" << functionName << " has an argument named '"
                         << roles::nameOf(source.getArgAttrDict(i))
                         << "', which train_step adds";
  return success();
}

/// The learning-rate factor at step count `step` (i64 scalar), in f64.
Value OptimizerPass::scheduleFactor(OpBuilder &b, Location loc, Value step) {
  Type f64 = b.getF64Type();
  Value s = castTo(b, loc, step, f64);
  auto c = [&](double v) { return scalar(b, loc, f64, v); };
  double warmup = static_cast<double>(warmupSteps);
  double total = static_cast<double>(totalSteps);
  Value after = c(1.0);
  if (schedule == LrSchedule::Linear) {
    // (total - s) / (total - warmup), and 0 after total-steps.
    after =
        div(b, loc, sub(b, loc, c(total), MinOp::create(b, loc, s, c(total))),
            c(total - warmup));
  } else if (schedule == LrSchedule::Cosine) {
    // 0.5 (1 + cos(pi progress)), progress = (s - warmup) / (total -
    // warmup) held at 1 after total-steps (HuggingFace's would rise again).
    Value progress = div(b, loc, sub(b, loc, s, c(warmup)), c(total - warmup));
    progress = MinOp::create(b, loc, progress, c(1.0));
    after = mul(b, loc, c(0.5),
                add(b, loc, c(1.0),
                    CosOp::create(b, loc, mul(b, loc, c(M_PI), progress))));
  }
  if (warmupSteps == 0)
    return after;
  Value inWarmup =
      CompareOp::create(b, loc, ComparePredicate::lt, s, c(warmup));
  return SelectOp::create(b, loc, inWarmup, div(b, loc, s, c(warmup)), after);
}

/// torch.nn.utils.clip_grad_norm_: the 2-norm of all gradients together
/// (the norm of their norms), and every gradient scaled by
/// min(max_norm / (norm + 1e-6), 1). Returns the norm.
Value OptimizerPass::clipGradients(
    OpBuilder &b, Location loc, Type real,
    SmallVectorImpl<std::pair<BlockArgument, Value>> &grads) {
  SmallVector<std::pair<BlockArgument, Value>> squares;
  for (auto &[param, g] : grads) {
    Value gReal = castTo(b, loc, g, real);
    squares.push_back({param, sumAll(b, loc, mul(b, loc, gReal, gReal))});
  }
  Value sumSquares = sumOverParameters(b, loc, squares);
  // Shards' squares add up to the whole gradients' over the ranks (their
  // padding is 0).
  if (shardRanks_)
    sumSquares = sumOverRanks(b, loc, sumSquares);
  Value norm = SqrtOp::create(b, loc, sumSquares);
  Value coef = div(b, loc, scalar(b, loc, real, clipGradNorm),
                   add(b, loc, norm, scalar(b, loc, real, 1e-6)));
  coef = MinOp::create(b, loc, coef, scalar(b, loc, real, 1.0));
  for (auto &[param, g] : grads)
    g = mul(b, loc, g, castTo(b, loc, coef, typeOf(g).getElementType()));
  return norm;
}

/// GradScaler.unscale_: every gradient times 1 / scale (the reciprocal in
/// double, rounded to f32, as torch computes it), and found_inf from the
/// gradients as they came. A sum of g * 0 is 0 unless some element is inf
/// or NaN, so one read of each gradient, a reduction the fuser can share
/// with the clipping norm's, answers it exactly.
LossScaling OptimizerPass::unscaleGradients(
    OpBuilder &b, Location loc, Type real, TrainStepBuilder &step,
    BlockArgument scale,
    SmallVectorImpl<std::pair<BlockArgument, Value>> &grads) {
  LossScaling scaling;
  scaling.scale = scale;
  auto i64Scalar = RankedTensorType::get({}, b.getI64Type());
  step.bindToNewGlobal(scale, roles::kLossScaleName,
                       cast<RankedTensorType>(scale.getType()), initScale, loc);
  scaling.growthTracker = step.addStateArgument(
      kGrowthTrackerName, roles::kOptimizerState, i64Scalar, 0, loc);
  scaling.skipped = step.addStateArgument(
      kSkippedStepsName, roles::kOptimizerState, i64Scalar, 0, loc);
  Value inverse = castTo(b, loc,
                         div(b, loc, scalar(b, loc, b.getF64Type(), 1.0),
                             castTo(b, loc, scale, b.getF64Type())),
                         b.getF32Type());
  SmallVector<std::pair<BlockArgument, Value>> probes;
  for (auto &[param, g] : grads) {
    Type element = typeOf(g).getElementType();
    probes.push_back(
        {param,
         castTo(b, loc,
                sumAll(b, loc, mul(b, loc, g, scalar(b, loc, element, 0.0))),
                real)});
    g = mul(b, loc, g, castTo(b, loc, inverse, element));
  }
  Value nonFinite = sumOverParameters(b, loc, probes);
  // Every rank skips the step when any rank's shard holds an inf or NaN.
  if (shardRanks_)
    nonFinite = sumOverRanks(b, loc, nonFinite);
  // NaN != 0 holds, as IEEE unordered comparisons do.
  scaling.foundInf = CompareOp::create(b, loc, ComparePredicate::ne, nonFinite,
                                       scalar(b, loc, real, 0.0));
  return scaling;
}

/// GradScaler.update (torch._amp_update_scale_): after an inf/NaN the scale
/// times backoff-factor and the tracker back to 0; after growth-interval
/// clean steps in a row the scale times growth-factor (kept if that is not
/// finite) and the tracker back to 0. A skipped step counts in
/// dlc.skipped_steps.
void OptimizerPass::updateLossScale(OpBuilder &b, Location loc,
                                    TrainStepBuilder &step,
                                    const LossScaling &scaling) {
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i64 = b.getI64Type();
  auto i64c = [&](int64_t v) { return scalar(b, loc, i64, double(v)); };
  Value scale64 = castTo(b, loc, scaling.scale, f64);
  Value clean = add(b, loc, scaling.growthTracker, i64c(1));
  Value grow = CompareOp::create(b, loc, ComparePredicate::eq, clean,
                                 i64c(growthInterval));
  Value grown = castTo(
      b, loc, mul(b, loc, scale64, scalar(b, loc, f64, growthFactor)), f32);
  // |grown| < inf is false for inf and NaN.
  Value grownFinite = CompareOp::create(b, loc, ComparePredicate::lt,
                                        AbsOp::create(b, loc, grown),
                                        scalar(b, loc, f32, INFINITY));
  Value afterClean = SelectOp::create(
      b, loc, grow, SelectOp::create(b, loc, grownFinite, grown, scaling.scale),
      scaling.scale);
  Value backedOff = castTo(
      b, loc, mul(b, loc, scale64, scalar(b, loc, f64, backoffFactor)), f32);
  step.update(scaling.scale, SelectOp::create(b, loc, scaling.foundInf,
                                              backedOff, afterClean));
  step.update(scaling.growthTracker,
              SelectOp::create(b, loc, scaling.foundInf, i64c(0),
                               SelectOp::create(b, loc, grow, i64c(0), clean)));
  Value skippedNext =
      add(b, loc, scaling.skipped, castTo(b, loc, scaling.foundInf, i64));
  step.update(scaling.skipped, skippedNext);
  step.addResult(scaling.scale, "loss_scale", roles::kMetric);
  step.addResult(skippedNext, "skipped_steps", roles::kMetric);
}

/// Mixed precision casts a parameter to its 16-bit type at the start of
/// every step (one cast per parameter and type after CSE). Instead,
/// train_step reads a copy kept in that type, and writes the next one from
/// the updated parameter, in the update's own kernel: one read of the
/// float32 parameter per step fewer. The copy's initial value is the cast
/// of the parameter's.
LogicalResult OptimizerPass::addLowPrecisionCopies(
    OpBuilder &b, Location loc, TrainStepBuilder &step,
    ArrayRef<std::pair<BlockArgument, Value>> updated) {
  ModuleOp module = getOperation();
  auto func = cast<func::FuncOp>(b.getBlock()->getParentOp());
  for (auto [param, next] : updated) {
    StringRef name = roles::nameOf(func.getArgAttrDict(param.getArgNumber()));
    auto global = module.lookupSymbol<GlobalOp>(name);
    for (Type element : lowPrecisionCastsOf(param)) {
      RankedTensorType type = typeOf(param).clone(element);
      auto nextCopy = CastOp::create(b, loc, type, next);
      Attribute initial;
      if (global && global.getInitialValue()) {
        // The cast of the initial value (a tensor-parallel slice's whole),
        // by the evaluator, on ops that are never inserted.
        ElementsAttr source = *global.getInitialValue();
        auto castType = cast<RankedTensorType>(source.getType()).clone(element);
        OpBuilder detached(module.getContext());
        auto constant = ConstantOp::create(detached, loc, source);
        auto initialCast = CastOp::create(detached, loc, castType, constant);
        FailureOr<Tensor> value = tensorFromAttr(source);
        SmallVector<Tensor> casted;
        bool evaluated = succeeded(value) &&
                         succeeded(evaluateOp(initialCast, {*value}, casted));
        initialCast.erase();
        constant.erase();
        if (!evaluated)
          return emitError()
                 << "cannot read the initial value of @\"" << name << "\"";
        initial = attrFromTensor(casted.front(), castType);
      }
      BlockArgument copy = step.addCopyArgument(
          copyName(name, element), name, type, initial, tpSplitOf(param), loc);
      for (Operation *user : llvm::make_early_inc_range(param.getUsers()))
        if (isa<CastOp>(user) && user->getResult(0).getType() == type) {
          user->getResult(0).replaceAllUsesWith(copy);
          user->erase();
        }
      step.update(copy, nextCopy);
    }
  }
  return success();
}

LogicalResult OptimizerPass::run() {
  ModuleOp module = getOperation();
  FailureOr<Settings> settings = checkOptions();
  if (failed(settings))
    return failure();
  auto source = module.lookupSymbol<func::FuncOp>(functionName);
  if (!source || source.isExternal() || !source.getBody().hasOneBlock())
    return emitError() << "no function @" << functionName
                       << " with a one-block body";
  if (failed(checkZero()) || failed(checkSource(source)) ||
      failed(checkNewNames(source)))
    return failure();
  if (auto stages =
          module->getAttrOfType<IntegerAttr>(roles::kPipelineStagesAttr))
    stages_ = stages.getInt();
  // A slice's optimizer state starts as a whole of the module's tensor
  // ranks' slices.
  for (unsigned i = 0; i < source.getNumArguments(); ++i)
    if (source.getArgAttr(i, roles::kTpSplitAttr) &&
        !module->getAttrOfType<IntegerAttr>(roles::kTensorParallelAttr))
      return emitError() << "argument " << i << " of @" << functionName << " ('"
                         << roles::nameOf(source.getArgAttrDict(i))
                         << "') is a tensor-parallel slice ("
                         << roles::kTpSplitAttr << ") in a module without "
                         << roles::kTensorParallelAttr;
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
  BlockArgument scaleArg;
  for (BlockArgument arg : func.getArguments()) {
    DictionaryAttr attrs = func.getArgAttrDict(arg.getArgNumber());
    argByName[roles::nameOf(attrs)] = arg;
    if (roles::roleOf(attrs) == roles::kLossScale)
      scaleArg = arg;
  }
  Value loss = sourceResults.front();
  SmallVector<std::pair<BlockArgument, Value>> grads;
  SmallVector<std::pair<BlockArgument, Value>> states;
  // ZeRO-1: where each sharded gradient came from (its collective, and its
  // type), whose bucket the updated shards are gathered in.
  using ShardBucket = std::pair<Operation *, Type>;
  llvm::DenseMap<BlockArgument, ShardBucket> shardBucket;
  for (auto [i, value] : llvm::enumerate(sourceResults)) {
    DictionaryAttr attrs = source.getResultAttrDict(i);
    BlockArgument target = argByName.lookup(roles::nameOf(attrs));
    if (i > 0 && roles::roleOf(attrs) == roles::kGradient) {
      grads.push_back({target, value});
      // The stage holding the gradient: its producer's, or a transfer's
      // receiver.
      if (auto transfer = value.getDefiningOp<PpTransferOp>())
        gradientStage_[target] = transfer.getTo();
      else if (Operation *producer = value.getDefiningOp())
        if (auto stage =
                producer->getAttrOfType<IntegerAttr>(roles::kPipelineStageAttr))
          gradientStage_[target] = stage.getInt();
      if (shardRanks_)
        shardBucket[target] = {value.getDefiningOp(),
                               getElementTypeOrSelf(value.getType())};
    } else if (i > 0 && roles::roleOf(attrs) == roles::kState) {
      states.push_back({target, value});
    }
  }

  // Hyperparameters, metrics and the clipping norm are in the loss's type
  // (f32, or f64 for a float64 model, whose rate 0.1 must stay 0.1).
  Type real = typeOf(loss).getElementType();
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto scalarType = [](Type t) { return RankedTensorType::get({}, t); };
  BlockArgument stepArg =
      step.addStateArgument("dlc.step", roles::kStep, scalarType(i64), 0, loc);
  BlockArgument lrArg = step.addStateArgument("dlc.lr", roles::kHyperparameter,
                                              scalarType(real), lr, loc);
  BlockArgument decayArg =
      step.addStateArgument("dlc.weight_decay", roles::kHyperparameter,
                            scalarType(real), settings->weightDecay, loc);

  // This step's learning rate, in f64 for the schedule.
  Value lrStep =
      mul(b, loc, castTo(b, loc, lrArg, f64), scheduleFactor(b, loc, stepArg));
  Value decay = castTo(b, loc, decayArg, f64);
  step.addResult(loss, "loss", roles::kLoss);
  step.addResult(castTo(b, loc, lrStep, real), "lr", roles::kMetric);
  // The gradients are unscaled before clipping, as GradScaler's recipe
  // calls unscale_ before clip_grad_norm_.
  std::optional<LossScaling> scaling;
  if (scaleArg) {
    scaling = unscaleGradients(b, loc, real, step, scaleArg, grads);
    step.skipStep = scaling->foundInf;
  }
  if (clipGradNorm > 0)
    step.addResult(clipGradients(b, loc, real, grads), "grad_norm",
                   roles::kMetric);

  // dlc.step counts calls, as a schedule stepped every iteration does; the
  // optimizer's own count (torch's state["step"]) leaves out skipped steps.
  Value applied = scaling ? sub(b, loc, stepArg, scaling->skipped) : stepArg;
  auto c64 = [&](double v) { return scalar(b, loc, f64, v); };
  Value isFirst = CompareOp::create(b, loc, ComparePredicate::eq, applied,
                                    scalar(b, loc, i64, 0));
  // Adam's bias corrections 1 - beta^t for t = applied + 1.
  Value t = castTo(b, loc, add(b, loc, applied, scalar(b, loc, i64, 1)), f64);
  Value bc1 =
      sub(b, loc, c64(1.0), PowOp::create(b, loc, c64(settings->beta1), t));
  Value bc2 =
      sub(b, loc, c64(1.0), PowOp::create(b, loc, c64(settings->beta2), t));
  SmallVector<std::pair<BlockArgument, Value>> updatedParams;
  // ZeRO-1's updated shards, in their gradients' buckets, in order.
  llvm::MapVector<ShardBucket, SmallVector<std::pair<BlockArgument, Value>>>
      updatedShards;
  const int64_t ranks = shardRanks_;
  for (auto &[param, g] : grads) {
    StringRef name = roles::nameOf(func.getArgAttrDict(param.getArgNumber()));
    SmallVector<std::string> stateName = stateNames(name);
    // Under ZeRO-1 this rank updates its shard of the parameter, and its
    // optimizer state is that shard's alone.
    const bool sharded = shardBucket.count(param);
    // The parameter, or its shard, as the step found it (a skipped step
    // keeps it: AdamW's decay below must not reach it).
    Value current = param;
    if (sharded)
      current = RankShardOp::create(b, loc, param, ranks);
    Value p = current;
    RankedTensorType type = typeOf(p);
    Type element = type.getElementType();
    auto c = [&](double v) { return scalar(b, loc, element, v); };
    Value lrT = castTo(b, loc, lrStep, element);
    Value wd = castTo(b, loc, decayArg, element);
    auto addState = [&](StringRef stateName) {
      return step.addStateArgument(
          stateName, roles::kOptimizerState, type, 0, loc,
          sharded ? typeOf(param) : RankedTensorType(), tpSplitOf(param));
    };
    // The parameter's next value, or its shard's, gathered below.
    auto updateParam = [&](Value next) {
      if (!sharded) {
        updatedParams.push_back(
            {param, step.updateUnlessSkipped(b, loc, param, next)});
        return;
      }
      if (step.skipStep)
        next = SelectOp::create(b, loc, step.skipStep, current, next);
      updatedShards[shardBucket.lookup(param)].push_back({param, next});
    };
    if (optimizer == OptimizerKind::Sgd) {
      g = add(b, loc, g, mul(b, loc, p, wd));
      if (momentum != 0) {
        BlockArgument buf = addState(stateName[0]);
        // The first step's buffer is the gradient itself.
        Value next = add(b, loc, mul(b, loc, buf, c(momentum)),
                         mul(b, loc, g, c(1 - dampening)));
        next = SelectOp::create(b, loc, isFirst, g, next);
        step.updateUnlessSkipped(b, loc, buf, next);
        g = nesterov ? add(b, loc, g, mul(b, loc, next, c(momentum))) : next;
      }
      updateParam(sub(b, loc, p, mul(b, loc, g, lrT)));
      continue;
    }
    // adam: L2 added to the gradient; adamw: p *= 1 - lr * weight_decay.
    if (optimizer == OptimizerKind::AdamW)
      p = mul(b, loc, p,
              castTo(b, loc, sub(b, loc, c64(1.0), mul(b, loc, lrStep, decay)),
                     element));
    else
      g = add(b, loc, g, mul(b, loc, p, wd));
    BlockArgument m = addState(stateName[0]);
    BlockArgument v = addState(stateName[1]);
    // m.lerp_(g, w = 1 - beta1): m + w (g - m), or g - (g - m)(1 - w) for
    // w >= 0.5 (torch's two forms); v.mul_(beta2).addcmul_(g, g, 1 - beta2).
    double w = 1 - settings->beta1;
    Value mNext = w < 0.5
                      ? add(b, loc, m, mul(b, loc, c(w), sub(b, loc, g, m)))
                      : sub(b, loc, g,
                            mul(b, loc, sub(b, loc, g, m), c(settings->beta1)));
    Value vNext = add(b, loc, mul(b, loc, v, c(settings->beta2)),
                      mul(b, loc, mul(b, loc, c(1 - settings->beta2), g), g));
    step.updateUnlessSkipped(b, loc, m, mNext);
    step.updateUnlessSkipped(b, loc, v, vNext);
    // p.addcdiv_(m, sqrt(v) / sqrt(bc2) + eps, -lr / bc1)
    Value stepSize =
        castTo(b, loc, neg(b, loc, div(b, loc, lrStep, bc1)), element);
    Value bc2Sqrt = castTo(b, loc, SqrtOp::create(b, loc, bc2), element);
    Value denom = add(
        b, loc, div(b, loc, SqrtOp::create(b, loc, vNext), bc2Sqrt), c(eps));
    updateParam(
        add(b, loc, p, div(b, loc, mul(b, loc, stepSize, mNext), denom)));
  }
  // Every rank's updated shards make the whole parameters again, one
  // all-gather per gradient bucket and element type, numbered after every
  // collective before them.
  int64_t gatherBucket = nextBucket(b);
  for (auto &[bucket, shards] : updatedShards) {
    SmallVector<Value> inputs;
    SmallVector<Type> types;
    for (auto &[param, next] : shards) {
      inputs.push_back(next);
      types.push_back(param.getType());
    }
    auto gather =
        AllGatherOp::create(b, loc, types, inputs, ranks, gatherBucket++);
    for (auto [shard, whole] : llvm::zip(shards, gather.getResults())) {
      step.update(shard.first, whole);
      updatedParams.push_back({shard.first, whole});
    }
  }
  if (lowPrecisionCopies &&
      failed(addLowPrecisionCopies(b, loc, step, updatedParams)))
    return failure();
  // Model state (BatchNorm statistics) changes in the forward pass, which
  // a skipped step has run too.
  for (auto &[arg, value] : states)
    step.update(arg, value);
  if (scaling)
    updateLossScale(b, loc, step, *scaling);
  step.update(stepArg, add(b, loc, stepArg, scalar(b, loc, i64, 1)));
  step.finish(b, loc);
  return success();
}

} // namespace

} // namespace mlir::dlc
