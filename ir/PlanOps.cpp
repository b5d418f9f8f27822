//===- PlanOps.cpp - Verifiers of the execution-plan ops ------------------===//
//
// A plan op is serialized as it stands (codegen/ModuleWriter.cpp), so each
// verifier checks what the step it becomes relies on: a launch's body and
// buffers in the kernel ABI's order, a matmul's shapes as the library call
// reads them.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::dlc;

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

SmallVector<FusionOp> LaunchOp::getMembers() {
  return llvm::to_vector(getBody().front().getOps<FusionOp>());
}

Operation *LaunchOp::getAttention() {
  for (Operation &op : getBody().front())
    if (isa<AttentionOp, AttentionGradOp>(op))
      return &op;
  return nullptr;
}

LogicalResult LaunchOp::verify() {
  // Signed: the attributes are i64, their accessors unsigned.
  int64_t iterations = getIterationsAttr().getInt();
  int64_t grain = getGrainAttr().getInt(), threads = getThreadsAttr().getInt();
  if (iterations < 0 || grain < 1 || threads < 1)
    return emitOpError() << "has schedule iterations " << iterations
                         << ", grain " << grain << ", threads " << threads
                         << "; expected iterations >= 0, grain and threads "
                            ">= 1";
  Block &block = getBody().front();
  if (block.getArgumentTypes() != getInputs().getTypes())
    return emitOpError() << "has block arguments of types other than its "
                            "operands'";
  // (Before MLIR's own check that the block ends in a terminator.)
  auto yield =
      dyn_cast_or_null<PlanYieldOp>(block.empty() ? nullptr : &block.back());
  if (!yield || yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "must end in a dlc.plan.yield of its results' "
                            "types";
  // A view of an argument lets a group's member read a buffer it shares
  // with another member in its own shape.
  auto isArgumentView = [](Value v) {
    if (!v.getDefiningOp<ReshapeOp>())
      return false;
    while (auto view = v.getDefiningOp<ReshapeOp>())
      v = view.getInput();
    return isa<BlockArgument>(v);
  };
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator()) {
    if (isa<ReshapeOp>(op) && isArgumentView(op.getResult(0)))
      continue;
    if (!isa<FusionOp, AttentionOp, AttentionGradOp>(op))
      return op.emitOpError() << "cannot run in a dlc.plan.launch (a launch "
                                 "runs fusions or one fused attention op, "
                                 "which may read views of its arguments)";
    ops.push_back(&op);
  }
  if (ops.empty())
    return emitOpError() << "runs no kernel";
  // The kernel's buffers are the launch's operands then its results: a
  // single op takes the arguments and yields its results in order.
  auto takesArgumentsInOrder = [&](Operation *op) {
    return op->getOperands() == ValueRange(block.getArguments()) &&
           yield.getValues() == ValueRange(op->getResults());
  };
  if (ops.size() == 1 && !takesArgumentsInOrder(ops.front()))
    return emitOpError() << "must pass its arguments to its kernel's op in "
                            "order and yield that op's results in order";
  if (ops.size() > 1) {
    if (!llvm::all_of(ops, [](Operation *op) { return isa<FusionOp>(op); }))
      return emitOpError() << "runs a fused attention op beside others; "
                              "attention kernels launch alone";
    // Members read only the launch's buffers and yield each result once,
    // in member order (the group kernel's outputs).
    SmallVector<Value> results;
    for (Operation *op : ops) {
      if (!llvm::all_of(op->getOperands(), [&](Value v) {
            return isa<BlockArgument>(v) || isArgumentView(v);
          }))
        return op->emitOpError() << "in a horizontal group reads a value "
                                    "other than the launch's arguments";
      llvm::append_range(results, op->getResults());
    }
    if (yield.getValues() != ValueRange(results))
      return emitOpError() << "must yield its members' results in member "
                              "order";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PlanMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult PlanMatmulOp::verify() {
  auto lhs = cast<RankedTensorType>(getLhs().getType());
  auto rhs = cast<RankedTensorType>(getRhs().getType());
  auto result = cast<RankedTensorType>(getType());
  Type element = result.getElementType();
  if (lhs.getElementType() != element || rhs.getElementType() != element)
    return emitOpError() << "has operands of an element type other than its "
                            "result's";
  if (lhs.getRank() < 2 || rhs.getRank() < 2 || result.getRank() < 2)
    return emitOpError() << "needs operands and a result of rank 2 or more";
  // Rows and columns as the library reads them.
  auto matrix = [](RankedTensorType type, bool transposed) {
    int64_t rows = type.getDimSize(type.getRank() - 2);
    int64_t columns = type.getDimSize(type.getRank() - 1);
    return transposed ? std::make_pair(columns, rows)
                      : std::make_pair(rows, columns);
  };
  auto [m, k] = matrix(lhs, getLhsTransposed());
  auto [k2, n] = matrix(rhs, getRhsTransposed());
  int64_t rank = result.getRank();
  if (k != k2 || result.getDimSize(rank - 2) != m ||
      result.getDimSize(rank - 1) != n)
    return emitOpError() << "multiplies [" << m << ", " << k << "] by [" << k2
                         << ", " << n << "] into " << result << "; expected a ["
                         << m << ", " << n
                         << "] product of equal inner dimensions";
  // An operand's batch dimensions, no more than the result's, are the
  // result's (missing leading ones read as 1) or all 1: a library call
  // reads a full batch or one matrix.
  ArrayRef<int64_t> batch = result.getShape().drop_back(2);
  for (auto [name, type] :
       {std::make_pair("lhs", lhs), std::make_pair("rhs", rhs)}) {
    ArrayRef<int64_t> own = type.getShape().drop_back(2);
    bool single = llvm::all_of(own, [](int64_t d) { return d == 1; });
    bool full = own.size() <= batch.size() &&
                own == batch.take_back(own.size()) &&
                llvm::all_of(batch.drop_back(own.size()),
                             [](int64_t d) { return d == 1; });
    if (own.size() > batch.size() || (!single && !full))
      return emitOpError() << "has a " << name << " of type " << type
                           << " for a result of type " << result
                           << "; a library matmul takes all or none of the "
                              "batch dimensions";
  }
  bool hasBias = static_cast<bool>(getBias());
  if (hasBias != (getEpilogue() != MatmulEpilogue::none))
    return emitOpError() << "has epilogue "
                         << stringifyMatmulEpilogue(getEpilogue())
                         << (hasBias ? " and a bias" : " and no bias")
                         << "; a bias goes with the bias epilogues only";
  if (hasBias) {
    auto bias = cast<RankedTensorType>(getBias().getType());
    if (bias.getElementType() != element || bias.getNumElements() != n ||
        (n != 1 && bias.getDimSize(bias.getRank() - 1) != n))
      return emitOpError() << "has bias " << bias << "; expected " << n
                           << " elements of " << element
                           << " along the last dimension";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PlanConvOp
//===----------------------------------------------------------------------===//

Value PlanConvOp::getX() {
  return getKind() == ConvKind::backward_data ? getResult() : getLhs();
}

Value PlanConvOp::getW() {
  switch (getKind()) {
  case ConvKind::forward:
  case ConvKind::backward_data:
    return getRhs();
  case ConvKind::backward_filter:
    return getResult();
  }
  llvm_unreachable("a ConvKind");
}

Value PlanConvOp::getY() {
  switch (getKind()) {
  case ConvKind::forward:
    return getResult();
  case ConvKind::backward_data:
    return getLhs();
  case ConvKind::backward_filter:
    return getRhs();
  }
  llvm_unreachable("a ConvKind");
}

LogicalResult PlanConvOp::verify() {
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  Type element = typeOf(getResult()).getElementType();
  if (typeOf(getLhs()).getElementType() != element ||
      typeOf(getRhs()).getElementType() != element)
    return emitOpError() << "has operands of an element type other than its "
                            "result's";
  FailureOr<RankedTensorType> y =
      inferConvTypeIn(getChannelsLast(), getLoc(), typeOf(getX()),
                      typeOf(getW()), getStride(), getPadLow(), getPadHigh(),
                      getDilation(), static_cast<int64_t>(getGroups()));
  if (failed(y))
    return failure();
  if (typeOf(getY()) != *y)
    return emitOpError() << "convolves x " << getX().getType() << " by w "
                         << getW().getType() << " into " << *y << ", not y "
                         << getY().getType() << " ("
                         << stringifyConvKind(getKind()) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// PlanAllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult
PlanAllReduceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                  PlanAllReduceOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  for (Value input : adaptor.getInputs())
    inferred.push_back(input.getType());
  return success();
}

LogicalResult PlanAllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "reduces no values";
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  Type element = typeOf(getInputs().front()).getElementType();
  for (Value input : getInputs())
    if (typeOf(input).getElementType() != element)
      return emitOpError() << "mixes element types (" << element << " and "
                           << typeOf(input).getElementType()
                           << "); one collective reduces one type";
  return success();
}

#define GET_OP_CLASSES
#include "ir/PlanOps.cpp.inc"
