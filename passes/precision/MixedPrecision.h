//===- MixedPrecision.h - Where each op computes under mixed precision ----===//
//
// The policy of dlc-mixed-precision, for programs that embed the pass with
// their own (PyTorch autocast's lists are the model): a control function
// says, per op, whether it computes in the low type (bfloat16 or float16),
// in float32, or in the type its operands bring.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_PRECISION_MIXEDPRECISION_H
#define DLC_PASSES_PRECISION_MIXEDPRECISION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"

namespace mlir::dlc {

enum class OpPrecision {
  /// Float operands are cast to the low type; float results are low.
  Low,
  /// Float operands are cast to float32; float results are float32.
  Float32,
  /// float32 when an operand is a float32 value the program computed or a
  /// full-size parameter or constant, else the low type when an operand is
  /// low, else float32. Parameters and constants (and views of them) that
  /// broadcast do not pull an op up: a bias added to a low product is cast
  /// down, as autocast's Linear casts its bias; a residual add of a
  /// float32 stream and a low branch is float32, as type promotion makes
  /// it in PyTorch.
  Follow,
};

/// The default lists: matmuls and convolutions (with their gradient ops)
/// low; reductions, exp, log, pow, rsqrt, sqrt, reciprocal, the
/// cross-entropy loss and attention (until its low form runs on cuDNN's
/// fused attention) float32; everything else follows.
OpPrecision defaultOpPrecision(Operation *op);

/// Rewrites `func` so that each op computes where `policy` says, `low`
/// being bf16 or f16: casts are inserted where an operand's type differs
/// (once per value; once per use for parameters and constants, so that
/// autodiff sums a parameter's gradients in float32), and the function's
/// results are cast back to its declared types. float64 ops are left alone.
void applyMixedPrecision(func::FuncOp func, FloatType low,
                         function_ref<OpPrecision(Operation *)> policy);

} // namespace mlir::dlc

#endif // DLC_PASSES_PRECISION_MIXEDPRECISION_H
