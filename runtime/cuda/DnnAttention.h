//===- DnnAttention.h - Fused attention on cuDNN's graph API ----*- C++ -*-===//
//
// dlc.attention and dlc.attention_grad on cuDNN's fused flash-attention
// engines. cuDNN has no "attention" call before 9.x's SDPA operations (which
// not every 9.x has): its engines recognize attention as an operation graph
// of matmuls, pointwise operations and reductions over virtual tensors, the
// graph cuDNN's C++ frontend builds for its SDPA nodes (cudnn-frontend,
// include/cudnn_frontend/node/scaled_dot_product_flash_attention.h, the
// composite forward and backward). We build the same graph through the
// backend C API, since the frontend is not packaged where dlc builds; a
// graph that differs from it in any data type, dimension or node is
// matched by no engine, so DnnAttention.cpp follows it node by node.
//
// Each direction is planned once, at create(), with the first engine
// configuration of CUDNN_HEUR_MODE_A whose plan finalizes (the fused
// engines are the only ones that take such a graph, so there is nothing
// to time). Running is one cudnnBackendExecute: no allocation, no host
// synchronization, so it may be captured into a CUDA graph.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DNNATTENTION_H
#define DLC_RUNTIME_CUDA_DNNATTENTION_H

#include "runtime/cuda/Dnn.h"
#include "runtime/cuda/DnnGraphBuilder.h"
#include "runtime/support/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dlc::cuda {

/// One attention: q [B,H,Tq,D], k and v [B,H,Tk,D], out [B,H,Tq,D], all
/// contiguous row-major in `dtype`; stats [B,H,Tq] float32, the
/// log-sum-exp of each row of scale * q @ k^T (after the mask): the `out`
/// and `lse` of dlc.attention.
struct DnnAttentionShape {
  int64_t batch = 0, heads = 0;
  int64_t queries = 0; ///< Tq
  int64_t keys = 0;    ///< Tk
  int64_t headDim = 0; ///< D, of q, k and v alike
  /// float16 or bfloat16: the fused engines take no other type.
  DType dtype = DType::BF16;
  float scale = 1;
  /// Query i sees keys j <= i (the mask's diagonal at the top left, as
  /// GPT-style models mask with Tq == Tk).
  bool causal = false;
  /// The backward writes dq directly from one pass per query block instead
  /// of accumulating it in float32 with atomics: the same results on every
  /// run, at some speed.
  bool deterministic = false;

  /// "bfloat16 B=2 H=3 Tq=128 Tk=128 D=64 causal scale=0.125", for messages.
  std::string describe() const;
};

/// The forward and backward plans of one attention shape. `dnn` must
/// outlive it; like the Dnn, one thread at a time may use it.
class DnnAttention {
public:
  /// Builds and plans both directions. A dimension below 1 is
  /// DLC_INVALID_ARGUMENT; another dtype, or a graph no engine of this cuDNN
  /// and GPU takes, DLC_UNIMPLEMENTED. Every message names the direction,
  /// the step, cuDNN's own account and, past the graph's finalization, the
  /// whole graph.
  static dlc_status_t create(Dnn &dnn, const DnnAttentionShape &shape,
                             std::unique_ptr<DnnAttention> &out);
  DnnAttention(const DnnAttention &) = delete;
  DnnAttention &operator=(const DnnAttention &) = delete;

  const DnnAttentionShape &shape() const { return shape_; }

  /// Bytes of workspace runForward() and runBackward() need (the larger of
  /// the two: one buffer serves both).
  size_t workspaceBytes() const;
  size_t forwardWorkspaceBytes() const { return forward_.workspaceBytes; }
  size_t backwardWorkspaceBytes() const { return backward_.workspaceBytes; }

  /// Which engines were planned: "forward: engine 8 (workspace 0 bytes);
  /// backward: engine 9 (...)", for logs.
  std::string describePlans() const;

  /// Enqueues out, stats = attention(q, k, v) on `stream`. Device pointers,
  /// 16-byte aligned; `workspace` holds workspaceBytes() (or is null when
  /// that is 0).
  dlc_status_t runForward(const void *q, const void *k, const void *v,
                          void *out, float *stats, void *workspace,
                          CUstream stream) const;

  /// Enqueues dq, dk, dv, the gradients for `dout` of the forward that
  /// returned `out` and `stats` from q, k and v, on `stream`. Nothing is
  /// accumulated into dq, dk or dv: they are overwritten.
  dlc_status_t runBackward(const void *q, const void *k, const void *v,
                           const void *out, const void *dout,
                           const float *stats, void *dq, void *dk, void *dv,
                           void *workspace, CUstream stream) const;

private:
  /// One direction's plan and its workspace: first `scratchBytes` of
  /// float32 tensors the graph keeps there (the backward's row sums of
  /// dout * out and its dq accumulator), then the engine's own.
  struct Plan {
    DnnGraphPlan graph;
    size_t scratchBytes = 0;
    size_t workspaceBytes = 0;
  };

  explicit DnnAttention(Dnn &dnn) : dnn_(dnn) {}
  /// `status` prefixed with "cuDNN attention DIRECTION (shape)", or null.
  dlc_status_t failure(dlc_status_t status, const char *direction) const;

  Dnn &dnn_;
  DnnAttentionShape shape_;
  Plan forward_, backward_;
  /// The by-value scalars' storage: cuDNN reads them from the host at
  /// every enqueue, so they live as long as the plans.
  float scale_ = 1, one_ = 1, maskValue_ = 0;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DNNATTENTION_H
