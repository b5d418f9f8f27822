//===- Rematerialize.cpp - Recomputing cheap values instead of keeping them ===//
//
// A training step computes many elementwise intermediates in the forward
// pass (a tanh-GELU's cube, its tanh, LayerNorm's centred input) that its
// gradient reads hundreds of ops later: kept, each is a buffer alive across
// the whole backward pass. Most are a few elementwise ops away from values
// that stay alive there anyway (the GELU's input, which its gradient reads
// too). This pass clones such a chain right before each distant use, so the
// original dies early and the clone is fused into the distant consumer's
// kernel (passes/fusion): no buffer, no extra pass over memory, a little
// recomputed arithmetic. PyTorch's autograd makes the same trade by hand in
// its GELU and LayerNorm backward kernels.
//
// A use is distant when it comes at least `min-distance` ops after the
// value's definition. A chain is cloned only where every value it starts
// from is alive at the distant use already (a function argument, a
// constant, or a value with a use at or after it), so rematerializing never
// lengthens another value's life, and only through elementwise ops and
// views, at most `max-chain` of them per use.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "passes/Passes.h"
#include "passes/fusion/Fusion.h"
#include "passes/memory/BufferPlacement.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCREMATERIALIZE
#include "passes/Passes.h.inc"

namespace {

bool isRecomputable(Operation *op) {
  KernelRole role = kernelRoleOf(op);
  return op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         (role == KernelRole::Elementwise || role == KernelRole::View ||
          role == KernelRole::Inlined);
}

class Rematerializer {
public:
  Rematerializer(Block &block, int64_t minBytes, int64_t minDistance,
                 unsigned maxChain)
      : block(block), minBytes(minBytes), minDistance(minDistance),
        maxChain(maxChain) {}

  /// Returns how many ops were given a clone.
  unsigned run() {
    unsigned rewritten = 0;
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    number();
    for (Operation *op : ops) {
      // Only elementwise results take arena memory (constants and views
      // have storage of their own); a returned value lives in its result
      // buffer, outside the arena.
      if (kernelRoleOf(op) != KernelRole::Elementwise || !isRecomputable(op) ||
          BufferPlacement::byteSize(op->getResult(0)) < minBytes ||
          llvm::any_of(op->getUsers(), [](Operation *user) {
            return user->hasTrait<OpTrait::IsTerminator>();
          }))
        continue;
      // Distant users, latest first: each clone may end the original's
      // life earlier, which the next one's liveness check then sees.
      Value value = op->getResult(0);
      llvm::SetVector<Operation *> distant;
      for (Operation *user : value.getUsers())
        if (position[user] - position[op] >= minDistance)
          distant.insert(user);
      SmallVector<Operation *> users = distant.takeVector();
      llvm::sort(users, [&](Operation *a, Operation *b) {
        return position[a] > position[b];
      });
      for (Operation *user : users)
        if (rematerializeAt(value, user)) {
          ++rewritten;
          number();
        }
    }
    eraseDead();
    return rewritten;
  }

private:
  /// Erases the recomputable ops whose every use went to clones, last
  /// first, so that a chain goes with its end.
  void eraseDead() {
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (op.use_empty() && isRecomputable(&op))
        op.erase();
  }

  void number() {
    position.clear();
    int64_t i = 0;
    for (Operation &op : block)
      position[&op] = i++;
  }

  /// Whether `v` is alive at `at` without help: an argument, or a value
  /// that `at` or a later op reads.
  bool aliveAt(Value v, Operation *at) {
    if (isa<BlockArgument>(v))
      return true;
    return llvm::any_of(v.getUsers(), [&](Operation *user) {
      return position[user] >= position[at];
    });
  }

  /// Collects into `chain`, operands before users, the ops that recompute
  /// `v` at `user` from values alive there (`v` itself counts as such unless it is the `root` being
  /// recomputed); fails past `maxChain` ops or at a value that is neither
  /// alive nor recomputable.
  bool plan(Value v, Operation *user, bool root,
            llvm::SetVector<Operation *> &chain) {
    Operation *def = v.getDefiningOp();
    if (def && isa<ConstantOp>(def))
      return true;
    if (!root && aliveAt(v, user))
      return true;
    if (def && chain.contains(def))
      return true;
    if (!def || !isRecomputable(def) || chain.size() >= maxChain)
      return false;
    for (Value operand : def->getOperands())
      if (!plan(operand, user, /*root=*/false, chain))
        return false;
    chain.insert(def);
    return true;
  }

  /// Clones the chain computing `value` before `user` and makes every
  /// operand of `user` that reads `value` read the clone.
  bool rematerializeAt(Value value, Operation *user) {
    llvm::SetVector<Operation *> chain;
    if (!plan(value, user, /*root=*/true, chain))
      return false;
    OpBuilder builder(user);
    IRMapping mapping;
    for (Operation *op : chain)
      builder.clone(*op, mapping);
    user->replaceUsesOfWith(value, mapping.lookup(value));
    return true;
  }

  Block &block;
  int64_t minBytes, minDistance;
  unsigned maxChain;
  llvm::DenseMap<Operation *, int64_t> position;
};

struct RematerializePass
    : public impl::DLCRematerializeBase<RematerializePass> {
  using DLCRematerializeBase::DLCRematerializeBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock())
        Rematerializer(func.getBody().front(), minBytes, minDistance, maxChain)
            .run();
  }
};

} // namespace

} // namespace mlir::dlc
