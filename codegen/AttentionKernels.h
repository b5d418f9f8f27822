//===- AttentionKernels.h - Fused attention kernels for CUDA ----*- C++ -*-===//
//
// dlc.attention and dlc.attention_grad as tiled CUDA kernels that never
// store the Tq x Tk scores (FlashAttention's scheme, in float32 on the
// CUDA cores). A block owns a tile of rows and streams the other side's
// rows through shared memory:
//  - forward: a tile of queries against streamed key/value tiles, with an
//    online softmax (running maximum and sum a row), writing the output and
//    each row's log-sum-exp;
//  - gradient: one launch of two independent halves. A block of the first
//    owns a tile of keys and streams the query tiles that can see them,
//    accumulating dK and dV; a block of the second owns a tile of queries
//    and streams key tiles, accumulating dQ. Each recomputes the
//    probabilities from the log-sum-exp, so every gradient element is
//    summed by one thread in a fixed order: no atomics, and the same bits
//    on every run.
// A constant causal bias (0 on and below the diagonal, -inf above: what
// nanoGPT's masked_fill exports) becomes the rule j <= i, so no bias is
// read and the tiles above the diagonal are skipped; any other bias is read
// per score with its broadcast strides.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_CODEGEN_ATTENTIONKERNELS_H
#define DLC_CODEGEN_ATTENTIONKERNELS_H

#include "codegen/KernelEmitter.h"

namespace mlir::dlc::codegen {

/// A fused attention kernel's tiles: a block of 2 * ownedRows threads owns
/// `ownedRows` rows (4 a thread row of 8 threads) and streams `streamRows`
/// rows at a time; its static shared memory stays within 48 KiB.
struct AttentionTiles {
  int64_t ownedRows = 0;
  int64_t streamRows = 0;
  int64_t threads() const { return 2 * ownedRows; }
};

/// The largest tiles whose shared memory fits for head sizes `d` (q, k)
/// and `dv` (v), for the forward or the gradient kernel.
AttentionTiles chooseAttentionTiles(int64_t d, int64_t dv, bool gradient);

/// Emits the CUDA kernel `name` of `op`, a dlc.attention or
/// dlc.attention_grad that hasFusedAttentionKernel takes, over the op's
/// operands then results. Its iterations are blocks of
/// AttentionTiles::threads() threads.
FailureOr<EmittedKernel> emitAttentionKernel(Operation *op,
                                             llvm::StringRef name);

/// The device templates the kernels instantiate, for the CUDA prelude.
llvm::StringRef attentionDeviceCode();

} // namespace mlir::dlc::codegen

#endif // DLC_CODEGEN_ATTENTIONKERNELS_H
