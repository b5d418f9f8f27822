//===- DnnGraphBuilder.h - Multi-node cuDNN operation graphs ----*- C++ -*-===//
//
// Builds a cuDNN backend operation graph of many nodes (matmuls, pointwise
// operations, reductions, reshapes) over named tensors, and plans it with
// the first engine configuration the heuristics suggest whose plan
// finalizes. Fused engines take a graph only when it is exactly the pattern
// they were written for, and cuDNN's refusal says little more than
// CUDNN_STATUS_NOT_SUPPORTED, so the builder keeps a printable account of
// every node and tensor (names, dims, strides, types, virtual or not) and
// puts it into every failure of the graph, the heuristics or the plans,
// beside each configuration's own refusal: what one run on a GPU needs to
// show to find the node that differs. Internal to runtime/cuda.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DNNGRAPHBUILDER_H
#define DLC_RUNTIME_CUDA_DNNGRAPHBUILDER_H

#include "runtime/cuda/DnnDescriptor.h"

#include <deque>
#include <initializer_list>
#include <string>
#include <vector>

namespace dlc::cuda {

/// A finalized execution plan and every descriptor it was built from,
/// destroyed in the reverse order of their creation (cuDNN does not
/// document whether a plan refers to them, so they live as long as it).
class DnnGraphPlan {
public:
  DnnGraphPlan() = default;
  DnnGraphPlan(DnnGraphPlan &&) = default;
  DnnGraphPlan &operator=(DnnGraphPlan &&other) noexcept;
  ~DnnGraphPlan() { clear(); }

  cudnnBackendDescriptor_t plan() const {
    return descriptors_.empty() ? nullptr : descriptors_.back().handle();
  }
  /// The engine's global index (-1 where cuDNN does not say).
  int64_t engine() const { return engine_; }
  size_t workspaceBytes() const { return workspaceBytes_; }

private:
  friend class DnnGraphBuilder;
  void clear();

  /// The descriptors' names (for messages), which outlive them.
  std::deque<std::string> names_;
  std::deque<DnnDescriptor> descriptors_;
  int64_t engine_ = -1;
  size_t workspaceBytes_ = 0;
};

/// One operation graph under construction. Tensors are referred to by the
/// index tensor() returns.
class DnnGraphBuilder {
public:
  using Tensor = size_t;

  explicit DnnGraphBuilder(const Dnn &dnn) : dnn_(dnn) {}

  /// A tensor named `name` (a string that outlives the builder). A
  /// negative `uid` takes the next free one above every buffer's
  /// (intermediates: no variant pack names them).
  dlc_status_t tensor(const char *name, int64_t uid, cudnnDataType_t type,
                      const std::vector<int64_t> &dims,
                      const std::vector<int64_t> &strides, DnnTensorKind kind,
                      Tensor &out);

  /// c = a @ b over the last two dimensions, batched over the others, in
  /// float32.
  dlc_status_t matmul(const char *name, Tensor a, Tensor b, Tensor c);
  /// y = mode(x[, b[, t]]) with broadcasting, computed in `precision`.
  /// `axis` is GEN_INDEX's (the dimension whose index it writes).
  dlc_status_t pointwise(const char *name, cudnnPointwiseMode_t mode,
                         cudnnDataType_t precision,
                         std::initializer_list<Tensor> inputs, Tensor y,
                         int64_t axis = -1);
  /// y = op of x over the dimensions where y has extent 1, in float32.
  dlc_status_t reduction(const char *name, cudnnReduceTensorOp_t op, Tensor x,
                         Tensor y);
  /// y views x's elements under y's dims and strides (a transpose when the
  /// strides say so), converted to y's type.
  dlc_status_t reshape(const char *name, Tensor x, Tensor y);

  /// Finalizes the graph and plans it with the first configuration of
  /// CUDNN_HEUR_MODE_A (then CUDNN_HEUR_MODE_FALLBACK) whose plan
  /// finalizes. No such configuration is DLC_UNIMPLEMENTED, with every
  /// configuration's refusal and the graph's account in the message.
  dlc_status_t plan(DnnGraphPlan &out);

  /// The nodes built so far, one per line, with their tensors.
  const std::string &account() const { return account_; }

private:
  struct Record {
    const DnnDescriptor *descriptor;
    std::string text;
  };
  /// A new descriptor owned by the builder.
  DnnDescriptor &own();
  /// The name of the node's descriptor besides the node's own
  /// ("pointwise 'exp' (descriptor)"), kept for as long as the descriptor.
  const char *name(const std::string &text);
  /// Finalizes `node` and adds it to the graph and to the account.
  dlc_status_t add(DnnDescriptor &node, const char *kind, const char *name,
                   std::initializer_list<Tensor> inputs, Tensor output);
  /// `status` with the account of the graph appended.
  dlc_status_t withAccount(dlc_status_t status, const std::string &step) const;

  const Dnn &dnn_;
  std::deque<DnnDescriptor> owned_;
  std::deque<std::string> names_;
  std::vector<Record> tensors_;
  std::vector<cudnnBackendDescriptor_t> operations_;
  int64_t nextUid_ = 1000;
  std::string account_;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DNNGRAPHBUILDER_H
