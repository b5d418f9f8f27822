//===- Decompose.h - Lowering composite ops to basic ones ------*- C++ -*-===//
//
// dlc.attention, dlc.cross_entropy and their gradients are single ops up to
// autodiff, so that their gradients recompute what they need from a value a
// row instead of keeping full-size intermediates alive. Backends without a
// fused kernel for them run them as the matmuls, reductions and
// elementwise ops these patterns build; fusion then makes each row's
// reductions and the elementwise work around them a few kernels.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_DECOMPOSE_DECOMPOSE_H
#define DLC_PASSES_DECOMPOSE_DECOMPOSE_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::dlc {

/// Adds the patterns that lower dlc.attention, dlc.attention_grad,
/// dlc.cross_entropy and dlc.cross_entropy_grad.
void populateDecomposePatterns(RewritePatternSet &patterns);

} // namespace mlir::dlc

#endif // DLC_PASSES_DECOMPOSE_DECOMPOSE_H
