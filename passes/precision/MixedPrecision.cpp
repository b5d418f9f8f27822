//===- MixedPrecision.cpp - Low-precision compute by a per-op policy ------===//
//
// Runs before autodiff, as PyTorch's autocast runs on the forward pass:
// the gradient rules then give the backward ops the forward's types (a low
// product's gradients are low products), and a cast's gradient is the cast
// back. Parameters stay float32 arguments (the master weights the
// optimizer updates); each use of one is cast on its own, so autodiff sums
// the gradients of a parameter used twice (a tied embedding and LM head)
// after their casts back, in float32.
//
//===----------------------------------------------------------------------===//
#include "passes/precision/MixedPrecision.h"

#include "ir/Dialect.h"
#include "passes/Passes.h"
#include "passes/fusion/Fusion.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCMIXEDPRECISION
#include "passes/Passes.h.inc"

OpPrecision defaultOpPrecision(Operation *op) {
  if (isa<MatmulOp, ConvOp, ConvGradInputOp, ConvGradFilterOp>(op))
    return OpPrecision::Low;
  if (isa<ReduceSumOp, ReduceProdOp, ReduceMaxOp, ReduceMinOp, CumSumOp,
          ExpOp, LogOp, PowOp, RsqrtOp, SqrtOp, ReciprocalOp, CrossEntropyOp,
          CrossEntropyGradOp, AttentionOp, AttentionGradOp>(op))
    return OpPrecision::Float32;
  return OpPrecision::Follow;
}

namespace {

/// float32 or the low type: the values the pass moves between.
bool isMovable(Type element, FloatType low) {
  return element.isF32() || element == low;
}

class Rewriter {
public:
  Rewriter(FloatType low, function_ref<OpPrecision(Operation *)> policy)
      : low_(low), policy_(policy) {}

  void run(func::FuncOp func) {
    Block &body = func.getBody().front();
    for (BlockArgument argument : body.getArguments())
      weak_.insert(argument);
    for (Operation &op : llvm::make_early_inc_range(body))
      visit(&op);
  }

private:
  Type elementOf(Value v) const { return getElementTypeOrSelf(v.getType()); }

  void visit(Operation *op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      return restoreResults(ret);
    // Constants and parameters read from globals (an inference import,
    // before dlc-functionalize) are parameters too.
    if (isa<ConstantOp, GlobalLoadOp>(op)) {
      weak_.insert(op->getResult(0));
      return;
    }
    // An op without results (a global's store) keeps the types it was
    // written with.
    if (op->getNumResults() == 0)
      return restoreOperands(op);
    // Casts convert whatever they are given; float64 stays as it is.
    if (isa<CastOp>(op) || op->getNumRegions() > 0 ||
        llvm::any_of(op->getOperandTypes(),
                     [](Type t) { return getElementTypeOrSelf(t).isF64(); }))
      return;
    SmallVector<unsigned> floats;
    for (OpOperand &operand : op->getOpOperands())
      if (isMovable(elementOf(operand.get()), low_))
        floats.push_back(operand.getOperandNumber());
    if (floats.empty())
      return;
    Type compute = computeType(op, floats);
    OpBuilder b(op);
    for (unsigned i : floats)
      if (elementOf(op->getOperand(i)) != compute)
        op->setOperand(i, castTo(b, op->getOperand(i), compute));
    for (OpResult result : op->getResults())
      if (isMovable(elementOf(result), low_) &&
          elementOf(result) != compute) {
        original_.try_emplace(result, elementOf(result));
        result.setType(cast<RankedTensorType>(result.getType())
                           .clone(compute));
      }
    // Views and copies of parameters and constants are still parameters.
    KernelRole role = kernelRoleOf(op);
    if ((role == KernelRole::View || role == KernelRole::Movement) &&
        llvm::all_of(floats,
                     [&](unsigned i) { return weak_.count(op->getOperand(i)); }))
      for (Value result : op->getResults())
        weak_.insert(result);
  }

  Type computeType(Operation *op, ArrayRef<unsigned> floats) const {
    switch (policy_(op)) {
    case OpPrecision::Low:
      return low_;
    case OpPrecision::Float32:
      return Float32Type::get(op->getContext());
    case OpPrecision::Follow:
      break;
    }
    // A parameter or constant pulls the op up only at full size (a
    // residual add of an embedding); broadcast ones (biases, scales,
    // scalars) are cast down.
    int64_t size =
        cast<ShapedType>(op->getResult(0).getType()).getNumElements();
    bool anyLow = false;
    for (unsigned i : floats) {
      Value v = op->getOperand(i);
      bool broadcast =
          cast<ShapedType>(v.getType()).getNumElements() < size;
      if (elementOf(v).isF32() && (!weak_.count(v) || !broadcast))
        return Float32Type::get(op->getContext());
      anyLow |= elementOf(v) == low_;
    }
    return anyLow ? Type(low_) : Type(Float32Type::get(op->getContext()));
  }

  /// `v` as `element`: once per value, or once per use for parameters and
  /// constants. A view of a parameter is cast at its source and viewed
  /// again (a cast commutes with moving elements), so every use casts the
  /// parameter itself: CSE merges those casts into one per parameter, and
  /// dlc-optimizer can produce it in the update.
  Value castTo(OpBuilder &b, Value v, Type element) {
    auto type = cast<RankedTensorType>(v.getType()).clone(element);
    Operation *view = v.getDefiningOp();
    if (weak_.count(v) && view &&
        isa<ReshapeOp, TransposeOp, BroadcastToOp, SliceOp>(view)) {
      Value source = castTo(b, view->getOperand(0), element);
      Operation *copy = b.clone(*view);
      copy->setOperand(0, source);
      copy->getResult(0).setType(type);
      return copy->getResult(0);
    }
    if (weak_.count(v))
      return CastOp::create(b, v.getLoc(), type, v);
    Value &cached = casts_[{v, element}];
    if (!cached) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(v);
      cached = CastOp::create(b, v.getLoc(), type, v);
    }
    return cached;
  }

  void restoreOperands(Operation *op) {
    OpBuilder b(op);
    for (OpOperand &operand : op->getOpOperands())
      if (Type element = original_.lookup(operand.get()))
        operand.set(castTo(b, operand.get(), element));
  }

  void restoreResults(func::ReturnOp ret) {
    auto func = ret->getParentOfType<func::FuncOp>();
    OpBuilder b(ret);
    for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
      if (ret.getOperand(i).getType() != type)
        ret.setOperand(i, castTo(b, ret.getOperand(i),
                                 getElementTypeOrSelf(type)));
  }

  FloatType low_;
  function_ref<OpPrecision(Operation *)> policy_;
  /// Arguments, constants and their views: cast per use, and never a
  /// reason to compute in float32.
  DenseSet<Value> weak_;
  DenseMap<std::pair<Value, Type>, Value> casts_;
  /// The element types of the values whose type the pass changed.
  DenseMap<Value, Type> original_;
};

struct DLCMixedPrecisionPass
    : impl::DLCMixedPrecisionBase<DLCMixedPrecisionPass> {
  using DLCMixedPrecisionBase::DLCMixedPrecisionBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType low = precision == LowPrecision::Bf16
                        ? FloatType(BFloat16Type::get(context))
                        : FloatType(Float16Type::get(context));
    llvm::StringSet<> lowOps, float32Ops;
    for (auto [list, set, option] :
         {std::tuple(&this->lowOps, &lowOps, "low-ops"),
          std::tuple(&this->float32Ops, &float32Ops, "fp32-ops")})
      for (const std::string &name : *list) {
        if (!RegisteredOperationName::lookup(name, context)) {
          getOperation().emitError()
              << "dlc-mixed-precision: " << option << " names '" << name
              << "', which is not an op";
          return signalPassFailure();
        }
        set->insert(name);
      }
    auto policy = [&](Operation *op) {
      StringRef name = op->getName().getStringRef();
      if (lowOps.contains(name))
        return OpPrecision::Low;
      if (float32Ops.contains(name))
        return OpPrecision::Float32;
      return defaultOpPrecision(op);
    };
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        applyMixedPrecision(func, low, policy);
  }
};

} // namespace

void applyMixedPrecision(func::FuncOp func, FloatType low,
                         function_ref<OpPrecision(Operation *)> policy) {
  Rewriter(low, policy).run(func);
}

} // namespace mlir::dlc
