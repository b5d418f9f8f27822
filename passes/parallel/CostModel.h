//===- CostModel.h - What an op costs, for partitioning -------------------===//
//
// A static estimate of each dlc op's work, the pipeline partitioner's
// (DESIGN.md decision 9) measure of a stage: the floating-point operations
// it does and the bytes it reads and writes. Their roofline (whichever
// bound is higher at a machine's FLOPs per byte) stands for its time; the
// bytes of its results stand for the activation memory it adds.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_PARALLEL_COSTMODEL_H
#define DLC_PASSES_PARALLEL_COSTMODEL_H

#include "mlir/IR/Operation.h"

namespace mlir::dlc {

struct OpCost {
  /// Floating-point operations, a multiply-add counting two.
  double flops = 0;
  /// Bytes of the operands read (of a gather's or slice's table, the part
  /// it takes) and the results written.
  double bytes = 0;

  /// The roofline in FLOP units: flops, or the bytes at `flopsPerByte`
  /// (the machine's matrix rate over its memory bandwidth) when moving them
  /// takes longer.
  double roofline(double flopsPerByte) const {
    return std::max(flops, bytes * flopsPerByte);
  }
};

/// The bytes of a ranked tensor of static shape; 0 for other types.
double bytesOf(Type type);

/// The forward work of `op`: matmuls, convolutions and attention by their
/// multiply-adds, pooling by its windows, everything else one operation per
/// element it reads or writes (the larger), views (dlc.reshape) and
/// constants nothing.
OpCost costOf(Operation *op);

} // namespace mlir::dlc

#endif // DLC_PASSES_PARALLEL_COSTMODEL_H
