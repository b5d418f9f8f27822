//===- CostModel.cpp - What an op costs, for partitioning -----------------===//

#include "passes/parallel/CostModel.h"

#include "ir/Dialect.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::dlc {

namespace {

double elementsOf(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  return ranked && ranked.hasStaticShape()
             ? static_cast<double>(ranked.getNumElements())
             : 0;
}

/// 2 x (result elements) x (filter elements per output channel): the
/// multiply-adds of a convolution, and of each of its gradients, whose
/// `outputs` are the convolution's output (or its gradient).
double convolutionFlops(Value outputs, Value filter) {
  auto type = cast<RankedTensorType>(filter.getType());
  if (type.getDimSize(0) <= 0)
    return 0;
  double perChannel = elementsOf(type) / static_cast<double>(type.getDimSize(0));
  return 2 * elementsOf(outputs.getType()) * perChannel;
}

/// 2 x B x H x Tq x Tk x `width`: the multiply-adds of attention's score
/// and value matmuls, each of `width` = a head's width in total.
double attentionFlops(Value q, Value k, double width) {
  auto queries = cast<RankedTensorType>(q.getType());
  auto keys = cast<RankedTensorType>(k.getType());
  if (queries.getShape().back() <= 0)
    return 0;
  double rows = elementsOf(queries) / static_cast<double>(queries.getShape().back());
  return 2 * rows * static_cast<double>(keys.getDimSize(keys.getRank() - 2)) *
         width;
}

double lastDim(Value v) {
  return static_cast<double>(
      cast<RankedTensorType>(v.getType()).getShape().back());
}

} // namespace

double bytesOf(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return 0;
  return elementsOf(ranked) *
         static_cast<double>((ranked.getElementTypeBitWidth() + 7) / 8);
}

OpCost costOf(Operation *op) {
  OpCost cost;
  if (isa<ConstantOp, ReshapeOp>(op))
    return cost;
  double largest = 0;
  for (Value operand : op->getOperands()) {
    // A gather or slice reads the rows it takes, not the whole table: as
    // many bytes as it writes.
    if (isa<GatherOp, SliceOp>(op) && operand == op->getOperand(0)) {
      cost.bytes += bytesOf(op->getResult(0).getType());
      continue;
    }
    cost.bytes += bytesOf(operand.getType());
    largest = std::max(largest, elementsOf(operand.getType()));
  }
  for (Value result : op->getResults()) {
    cost.bytes += bytesOf(result.getType());
    largest = std::max(largest, elementsOf(result.getType()));
  }
  cost.flops =
      llvm::TypeSwitch<Operation *, double>(op)
          .Case([](MatmulOp matmul) {
            return 2 * elementsOf(matmul.getType()) * lastDim(matmul.getLhs());
          })
          .Case([](ConvOp conv) {
            return convolutionFlops(conv.getResult(), conv.getFilter());
          })
          .Case([](ConvGradInputOp grad) {
            return convolutionFlops(grad.getGradOutput(), grad.getFilter());
          })
          .Case([](ConvGradFilterOp grad) {
            return convolutionFlops(grad.getGradOutput(), grad.getResult());
          })
          .Case([](AttentionOp attention) {
            return attentionFlops(attention.getQ(), attention.getK(),
                                  lastDim(attention.getQ()) +
                                      lastDim(attention.getV()));
          })
          // The scores recomputed, then dV, dP, dQ and dK.
          .Case([](AttentionGradOp grad) {
            return attentionFlops(grad.getQ(), grad.getK(),
                                  3 * lastDim(grad.getQ()) +
                                      2 * lastDim(grad.getV()));
          })
          .Case<MaxPoolOp, SumPoolOp>([](auto pool) {
            double window = 1;
            for (int64_t size : pool.getWindow())
              window *= static_cast<double>(size);
            return elementsOf(pool.getType()) * window;
          })
          .Default([&](Operation *) { return largest; });
  return cost;
}

} // namespace mlir::dlc
