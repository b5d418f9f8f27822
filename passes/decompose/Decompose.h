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

/// The largest head size (q and k's last dimension, and v's) of the fused
/// attention kernels (codegen/AttentionKernels.h): their tiles of q, k and
/// v rows live in a block's 48 KiB of static shared memory.
constexpr int64_t kFusedAttentionMaxHeadSize = 128;

/// Whether the fused attention kernels take `op` (a dlc.attention or
/// dlc.attention_grad): float32 operands and head sizes up to
/// kFusedAttentionMaxHeadSize.
bool hasFusedAttentionKernel(Operation *op);

/// Adds the patterns that lower dlc.attention, dlc.attention_grad,
/// dlc.cross_entropy and dlc.cross_entropy_grad; with `keepAttention`, the
/// attention ops a fused kernel takes stay whole.
void populateDecomposePatterns(RewritePatternSet &patterns,
                               bool keepAttention = false);

} // namespace mlir::dlc

#endif // DLC_PASSES_DECOMPOSE_DECOMPOSE_H
