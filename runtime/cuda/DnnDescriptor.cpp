//===- DnnDescriptor.cpp - cuDNN backend descriptors as values ------------===//
#include "runtime/cuda/DnnDescriptor.h"

#include "runtime/core/Status.h"

namespace dlc::cuda {

namespace {

// cuDNN 9.19 deprecates the handle attributes of operation graphs and
// execution plans in favor of a device-properties descriptor, which only
// cuDNN 9.8 and later have; libcudnn.so.9 may be any 9.x, and every 9.x
// takes the handle.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
const DnnAttribute kGraphHandle =
    DLC_ATTRIBUTE(CUDNN_ATTR_OPERATIONGRAPH_HANDLE);
const DnnAttribute kPlanHandle =
    DLC_ATTRIBUTE(CUDNN_ATTR_EXECUTION_PLAN_HANDLE);
#pragma GCC diagnostic pop

} // namespace

dlc_status_t DnnDescriptor::create(cudnnBackendDescriptorType_t type,
                                   const char *what) {
  what_ = what;
  return dnn_->check(dnn_->cudnnBackendCreateDescriptor(type, &handle_),
                     std::string("cudnnBackendCreateDescriptor(") + what + ")");
}

dlc_status_t DnnDescriptor::set(DnnAttribute attribute,
                                cudnnBackendAttributeType_t type, int64_t count,
                                const void *values) const {
  return dnn_->check(dnn_->cudnnBackendSetAttribute(handle_, attribute.name,
                                                    type, count, values),
                     call("cudnnBackendSetAttribute", attribute.text));
}

dlc_status_t DnnDescriptor::set(DnnAttribute attribute,
                                const DnnDescriptor &value) const {
  cudnnBackendDescriptor_t handle = value.handle_;
  return set(attribute, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &handle);
}

dlc_status_t DnnDescriptor::setHandle(DnnAttribute attribute) const {
  return set(attribute, CUDNN_TYPE_HANDLE, 1, &dnn_->handle_);
}

dlc_status_t DnnDescriptor::get(DnnAttribute attribute,
                                cudnnBackendAttributeType_t type,
                                int64_t requested, int64_t &count,
                                void *values) const {
  return dnn_->check(dnn_->cudnnBackendGetAttribute(handle_, attribute.name,
                                                    type, requested, &count,
                                                    values),
                     call("cudnnBackendGetAttribute", attribute.text));
}

dlc_status_t DnnDescriptor::finalize() const {
  return dnn_->check(dnn_->cudnnBackendFinalize(handle_),
                     call("cudnnBackendFinalize", nullptr));
}

std::string DnnDescriptor::call(const char *function,
                                const char *attribute) const {
  return std::string(function) + "(" + what_ +
         (attribute ? std::string(", ") + attribute : "") + ")";
}

dlc_status_t makeDnnTensor(DnnDescriptor &tensor, const char *what, int64_t uid,
                           cudnnDataType_t type,
                           const std::vector<int64_t> &dims,
                           const std::vector<int64_t> &strides,
                           int64_t alignment, DnnTensorKind kind) {
  auto rank = static_cast<int64_t>(dims.size());
  DLC_RETURN_IF_ERROR(tensor.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what));
  DLC_RETURN_IF_ERROR(tensor.set(DLC_ATTRIBUTE(CUDNN_ATTR_TENSOR_DATA_TYPE),
                                 CUDNN_TYPE_DATA_TYPE, 1, &type));
  DLC_RETURN_IF_ERROR(tensor.set(DLC_ATTRIBUTE(CUDNN_ATTR_TENSOR_DIMENSIONS),
                                 CUDNN_TYPE_INT64, rank, dims.data()));
  DLC_RETURN_IF_ERROR(tensor.set(DLC_ATTRIBUTE(CUDNN_ATTR_TENSOR_STRIDES),
                                 CUDNN_TYPE_INT64, rank, strides.data()));
  DLC_RETURN_IF_ERROR(tensor.set(DLC_ATTRIBUTE(CUDNN_ATTR_TENSOR_UNIQUE_ID),
                                 CUDNN_TYPE_INT64, 1, &uid));
  DLC_RETURN_IF_ERROR(
      tensor.set(DLC_ATTRIBUTE(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT),
                 CUDNN_TYPE_INT64, 1, &alignment));
  bool yes = true;
  if (kind == DnnTensorKind::Virtual)
    DLC_RETURN_IF_ERROR(tensor.set(DLC_ATTRIBUTE(CUDNN_ATTR_TENSOR_IS_VIRTUAL),
                                   CUDNN_TYPE_BOOLEAN, 1, &yes));
  if (kind == DnnTensorKind::ByValue)
    DLC_RETURN_IF_ERROR(tensor.set(DLC_ATTRIBUTE(CUDNN_ATTR_TENSOR_IS_BY_VALUE),
                                   CUDNN_TYPE_BOOLEAN, 1, &yes));
  return tensor.finalize();
}

dlc_status_t
makeDnnOperationGraph(DnnDescriptor &graph,
                      const std::vector<cudnnBackendDescriptor_t> &operations) {
  DLC_RETURN_IF_ERROR(
      graph.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph"));
  DLC_RETURN_IF_ERROR(graph.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATIONGRAPH_OPS),
                                CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                static_cast<int64_t>(operations.size()),
                                operations.data()));
  DLC_RETURN_IF_ERROR(graph.setHandle(kGraphHandle));
  return graph.finalize();
}

dlc_status_t queryDnnEngineConfigs(const Dnn &dnn, const DnnDescriptor &graph,
                                   cudnnBackendHeurMode_t mode,
                                   std::vector<DnnDescriptor> &configs,
                                   std::string &failure) {
  configs.clear();
  DnnDescriptor heuristics(dnn);
  DLC_RETURN_IF_ERROR(heuristics.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
                                        "engine heuristics"));
  DLC_RETURN_IF_ERROR(heuristics.set(
      DLC_ATTRIBUTE(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH), graph));
  DLC_RETURN_IF_ERROR(heuristics.set(DLC_ATTRIBUTE(CUDNN_ATTR_ENGINEHEUR_MODE),
                                     CUDNN_TYPE_HEUR_MODE, 1, &mode));
  StatusOwner finalized(heuristics.finalize());
  if (finalized.get()) {
    failure = finalized.get()->message;
    return nullptr;
  }
  DnnAttribute results = DLC_ATTRIBUTE(CUDNN_ATTR_ENGINEHEUR_RESULTS);
  int64_t count = 0;
  DLC_RETURN_IF_ERROR(heuristics.get(results, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                     count, nullptr));
  std::vector<cudnnBackendDescriptor_t> handles;
  configs.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(dnn);
    DLC_RETURN_IF_ERROR(configs.back().create(
        CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine configuration"));
    handles.push_back(configs.back().handle());
  }
  // The second call may fill fewer configurations than the first
  // counted: only those it returns are initialized (reading another's
  // engine is CUDNN_STATUS_NOT_INITIALIZED, met on an H200 for float32
  // convolutions).
  if (count > 0)
    DLC_RETURN_IF_ERROR(heuristics.get(results, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                       count, count, handles.data()));
  while (static_cast<int64_t>(configs.size()) > count)
    configs.pop_back();
  if (count == 0)
    failure = "the heuristics suggested no engine";
  return nullptr;
}

dlc_status_t makeDnnPlan(const DnnDescriptor &config, DnnDescriptor &plan,
                         int64_t &workspaceBytes) {
  DLC_RETURN_IF_ERROR(
      plan.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan"));
  DLC_RETURN_IF_ERROR(plan.setHandle(kPlanHandle));
  DLC_RETURN_IF_ERROR(
      plan.set(DLC_ATTRIBUTE(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG), config));
  DLC_RETURN_IF_ERROR(plan.finalize());
  int64_t returned = 0;
  workspaceBytes = 0;
  return plan.get(DLC_ATTRIBUTE(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE),
                  CUDNN_TYPE_INT64, 1, returned, &workspaceBytes);
}

int64_t dnnEngineIndex(const Dnn &dnn, const DnnDescriptor &config) {
  DnnDescriptor engine(dnn);
  StatusOwner created(engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine"));
  if (created.get())
    return -1;
  cudnnBackendDescriptor_t handle = engine.handle();
  int64_t count = 0, index = -1;
  StatusOwner got(config.get(DLC_ATTRIBUTE(CUDNN_ATTR_ENGINECFG_ENGINE),
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, count, &handle));
  if (got.get())
    return -1;
  StatusOwner read(engine.get(DLC_ATTRIBUTE(CUDNN_ATTR_ENGINE_GLOBAL_INDEX),
                              CUDNN_TYPE_INT64, 1, count, &index));
  return read.get() ? -1 : index;
}

std::string dnnShapeString(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

} // namespace dlc::cuda
