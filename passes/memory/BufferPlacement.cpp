//===- BufferPlacement.cpp - Where each value of a function lives ---------===//
//
// The classification BufferPlacement.h states, computed in one walk of the
// function's block; the returned values are placed last, since only then is
// it known which of them are computed in the function (arena values) and
// which are arguments, constants or returned twice (copies).
//
//===----------------------------------------------------------------------===//

#include "passes/memory/BufferPlacement.h"
#include "ir/Dialect.h"

using namespace mlir;
using namespace mlir::dlc;

int64_t BufferPlacement::byteSize(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t bits = type.getElementTypeBitWidth();
  // i1 is stored as one byte, as NumPy's bool.
  return type.getNumElements() * std::max<int64_t>(1, bits / 8);
}

Value mlir::dlc::transposedMatmulOperand(FusionOp fusion) {
  if (fusion.getNumResults() != 1 || fusion.getInputs().size() != 1 ||
      fusion->use_empty() ||
      !llvm::all_of(fusion->getUsers(), [](Operation *user) {
        return isa<MatmulOp, PlanMatmulOp>(user);
      }))
    return {};
  Block &body = fusion.getBody().front();
  if (body.getOperations().size() != 2)
    return {};
  auto transpose = dyn_cast<TransposeOp>(body.front());
  if (!transpose || transpose.getInput() != body.getArgument(0))
    return {};
  ArrayRef<int64_t> perm = transpose.getPermutation();
  size_t rank = perm.size();
  if (rank < 2)
    return {};
  for (size_t d = 0; d + 2 < rank; ++d)
    if (perm[d] != static_cast<int64_t>(d))
      return {};
  if (perm[rank - 2] != static_cast<int64_t>(rank - 1) ||
      perm[rank - 1] != static_cast<int64_t>(rank - 2))
    return {};
  return fusion.getInputs()[0];
}

Value BufferPlacement::base(Value value) const {
  const Placement &p = placements.at(value);
  return p.kind == Placement::Kind::View ? p.base : value;
}

BufferPlacement::BufferPlacement(func::FuncOp func) {
  Block &block = func.getBody().front();
  for (BlockArgument argument : block.getArguments())
    placements[argument] = {
        Placement::Kind::Argument, argument.getArgNumber(), {}};
  for (Operation &op : block.without_terminator()) {
    for (Value result : op.getResults()) {
      if (isa<ConstantOp>(op)) {
        placements[result] = {Placement::Kind::Constant, 0, {}};
      } else if (auto reshape = dyn_cast<ReshapeOp>(op)) {
        placements[result] = {Placement::Kind::View, 0,
                              base(reshape.getInput())};
      } else if (auto transfer = dyn_cast<PpTransferOp>(op);
                 transfer && placements.at(base(transfer.getInput())).kind ==
                                 Placement::Kind::Arena) {
        placements[result] = {Placement::Kind::View, 0,
                              base(transfer.getInput())};
      } else if (Value source = isa<FusionOp>(op) ? transposedMatmulOperand(
                                                        cast<FusionOp>(op))
                                                  : Value()) {
        placements[result] = {Placement::Kind::View, 0, base(source)};
      } else {
        placements[result] = {Placement::Kind::Arena, 0, {}};
      }
    }
  }
  // A returned value is computed straight into its result when it has an
  // arena placement nothing else returned first.
  Operation *terminator = block.getTerminator();
  for (auto [index, operand] : llvm::enumerate(terminator->getOperands())) {
    Placement &owner = placements[base(operand)];
    if (owner.kind != Placement::Kind::Arena) {
      copiedResults.insert(index);
      continue;
    }
    owner = {Placement::Kind::Result, static_cast<unsigned>(index), {}};
  }
}
