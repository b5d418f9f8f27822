//===- DnnDescriptor.h - cuDNN backend descriptors as values ----*- C++ -*-===//
//
// What every cuDNN graph dlc builds shares (convolutions in Dnn.cpp,
// attention in DnnAttention.cpp): an owned backend descriptor whose every
// call turns a failure into a status naming the descriptor and the
// attribute, tensors, the operation graph, and the heuristics' engine
// configurations and their plans. The backend API reports only a status
// code per call, so the names are what make a failure on a GPU we cannot
// reach readable: "cudnnBackendSetAttribute(tensor s, CUDNN_ATTR_TENSOR_
// STRIDES) failed: CUDNN_STATUS_BAD_PARAM (2000): <cuDNN's last error>".
// Internal to runtime/cuda.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DNNDESCRIPTOR_H
#define DLC_RUNTIME_CUDA_DNNDESCRIPTOR_H

#include "runtime/cuda/Dnn.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dlc::cuda {

/// A backend attribute and its name, for messages.
struct DnnAttribute {
  cudnnBackendAttributeName_t name;
  const char *text;
};
#define DLC_ATTRIBUTE(name)                                                    \
  ::dlc::cuda::DnnAttribute { name, #name }

/// An owned backend descriptor. `what` (a string that outlives it) names
/// it in messages.
class DnnDescriptor {
public:
  explicit DnnDescriptor(const Dnn &dnn) : dnn_(&dnn) {}
  DnnDescriptor(DnnDescriptor &&other) noexcept
      : dnn_(other.dnn_), what_(other.what_),
        handle_(std::exchange(other.handle_, nullptr)) {}
  DnnDescriptor &operator=(DnnDescriptor &&) = delete;
  ~DnnDescriptor() {
    if (handle_)
      dnn_->cudnnBackendDestroyDescriptor(handle_);
  }

  dlc_status_t create(cudnnBackendDescriptorType_t type, const char *what);
  dlc_status_t set(DnnAttribute attribute, cudnnBackendAttributeType_t type,
                   int64_t count, const void *values) const;
  /// Sets a descriptor-valued attribute.
  dlc_status_t set(DnnAttribute attribute, const DnnDescriptor &value) const;
  /// Sets a handle-valued attribute to the Dnn's handle (operation graphs
  /// and execution plans).
  dlc_status_t setHandle(DnnAttribute attribute) const;
  dlc_status_t get(DnnAttribute attribute, cudnnBackendAttributeType_t type,
                   int64_t requested, int64_t &count, void *values) const;
  dlc_status_t finalize() const;

  cudnnBackendDescriptor_t handle() const { return handle_; }
  cudnnBackendDescriptor_t release() { return std::exchange(handle_, nullptr); }
  const char *what() const { return what_; }

private:
  std::string call(const char *function, const char *attribute) const;

  const Dnn *dnn_;
  const char *what_ = "";
  cudnnBackendDescriptor_t handle_ = nullptr;
};

/// How a tensor's values reach cuDNN.
enum class DnnTensorKind {
  /// A device buffer bound by its uid in the variant pack.
  Buffer,
  /// An intermediate of the graph that no buffer holds (a fused engine
  /// keeps it in registers or shared memory).
  Virtual,
  /// A host scalar bound by its uid, read when the plan is enqueued.
  ByValue,
};

/// A finalized tensor of `dims` and `strides`.
dlc_status_t makeDnnTensor(DnnDescriptor &tensor, const char *what, int64_t uid,
                           cudnnDataType_t type,
                           const std::vector<int64_t> &dims,
                           const std::vector<int64_t> &strides,
                           int64_t alignment,
                           DnnTensorKind kind = DnnTensorKind::Buffer);

/// A finalized operation graph of `operations` (finalized nodes).
dlc_status_t
makeDnnOperationGraph(DnnDescriptor &graph,
                      const std::vector<cudnnBackendDescriptor_t> &operations);

/// The engine configurations the heuristics of `mode` suggest for `graph`,
/// best first. Heuristics that cannot finalize (no engine matches the
/// graph, in some cuDNN versions) leave `configs` empty and say why in
/// `failure`; only a failing query of a finalized one is an error.
dlc_status_t queryDnnEngineConfigs(const Dnn &dnn, const DnnDescriptor &graph,
                                   cudnnBackendHeurMode_t mode,
                                   std::vector<DnnDescriptor> &configs,
                                   std::string &failure);

/// Builds and finalizes the execution plan of `config` into `plan` and
/// reads its workspace size. The status of a plan that does not finalize
/// (an engine that does not support the graph on this GPU) is returned for
/// the caller to report or to move on to the next configuration.
dlc_status_t makeDnnPlan(const DnnDescriptor &config, DnnDescriptor &plan,
                         int64_t &workspaceBytes);

/// The global index of `config`'s engine, or -1 where cuDNN does not say;
/// for messages.
int64_t dnnEngineIndex(const Dnn &dnn, const DnnDescriptor &config);

/// "[2,3,128,64]".
std::string dnnShapeString(const std::vector<int64_t> &dims);

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DNNDESCRIPTOR_H
