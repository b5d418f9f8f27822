//===- Attention.h - Forming dlc.attention --------------------*- C++ -*-===//
//
// dlc-fuse-attention recognizes the attention exporters emit (a matmul of q
// and k^T, a scale, a mask by masked_fill/Where or an additive bias, the
// softmax the importer decomposes, a matmul with v) and replaces it by one
// dlc.attention, before autodiff, so that the gradient is the op's own
// (dlc.attention_grad, which recomputes the probabilities from the row's
// log-sum-exp instead of keeping them from forward to backward).
// dlc-decompose (passes/decompose) lowers both ops for the backends that
// have no fused attention kernel.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_ATTENTION_ATTENTION_H
#define DLC_PASSES_ATTENTION_ATTENTION_H

#include "ir/Dialect.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::dlc {

/// Adds the pattern that forms dlc.attention. It applies where the
/// softmax's probabilities have no other use than the matmul with v and the
/// bias depends on constants alone (it has no gradient).
void populateFuseAttentionPatterns(RewritePatternSet &patterns);

} // namespace mlir::dlc

#endif // DLC_PASSES_ATTENTION_ATTENTION_H
