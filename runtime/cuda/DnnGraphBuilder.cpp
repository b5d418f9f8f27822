//===- DnnGraphBuilder.cpp - Multi-node cuDNN operation graphs ------------===//
#include "runtime/cuda/DnnGraphBuilder.h"

#include "runtime/core/Status.h"

namespace dlc::cuda {

namespace {

const char *typeName(cudnnDataType_t type) {
  switch (type) {
  case CUDNN_DATA_FLOAT:
    return "float32";
  case CUDNN_DATA_HALF:
    return "float16";
  case CUDNN_DATA_BFLOAT16:
    return "bfloat16";
  case CUDNN_DATA_INT32:
    return "int32";
  case CUDNN_DATA_BOOLEAN:
    return "bool";
  case CUDNN_DATA_DOUBLE:
    return "float64";
  default:
    return "other";
  }
}

const char *kindName(DnnTensorKind kind) {
  switch (kind) {
  case DnnTensorKind::Buffer:
    return "";
  case DnnTensorKind::Virtual:
    return " virtual";
  case DnnTensorKind::ByValue:
    return " by-value";
  }
  return "";
}

} // namespace

DnnGraphPlan &DnnGraphPlan::operator=(DnnGraphPlan &&other) noexcept {
  if (this != &other) {
    clear();
    descriptors_ = std::move(other.descriptors_);
    names_ = std::move(other.names_);
    engine_ = other.engine_;
    workspaceBytes_ = other.workspaceBytes_;
  }
  return *this;
}

void DnnGraphPlan::clear() {
  while (!descriptors_.empty())
    descriptors_.pop_back();
}

DnnDescriptor &DnnGraphBuilder::own() { return owned_.emplace_back(dnn_); }

const char *DnnGraphBuilder::name(const std::string &text) {
  return names_.emplace_back(text).c_str();
}

dlc_status_t DnnGraphBuilder::tensor(const char *name, int64_t uid,
                                     cudnnDataType_t type,
                                     const std::vector<int64_t> &dims,
                                     const std::vector<int64_t> &strides,
                                     DnnTensorKind kind, Tensor &out) {
  if (uid < 0)
    uid = nextUid_++;
  // 16 bytes, what the fused engines' vector loads assume of every buffer
  // (and what cuDNN's frontend declares).
  constexpr int64_t kAlignment = 16;
  DnnDescriptor &descriptor = own();
  DLC_RETURN_IF_ERROR(makeDnnTensor(
      descriptor, this->name(std::string("tensor '") + name + "'"), uid, type,
      dims, strides, kAlignment, kind));
  out = tensors_.size();
  tensors_.push_back({&descriptor, std::string(name) + dnnShapeString(dims) +
                                       "/" + dnnShapeString(strides) + ":" +
                                       typeName(type) + kindName(kind) +
                                       " uid " + std::to_string(uid)});
  return nullptr;
}

dlc_status_t DnnGraphBuilder::add(DnnDescriptor &node, const char *kind,
                                  const char *name,
                                  std::initializer_list<Tensor> inputs,
                                  Tensor output) {
  DLC_RETURN_IF_ERROR(node.finalize());
  operations_.push_back(node.handle());
  account_ += std::string("  ") + kind + " '" + name + "': ";
  const char *separator = "";
  for (Tensor input : inputs) {
    account_ += separator + tensors_[input].text;
    separator = ", ";
  }
  account_ += " -> " + tensors_[output].text + "\n";
  return nullptr;
}

dlc_status_t DnnGraphBuilder::matmul(const char *name, Tensor a, Tensor b,
                                     Tensor c) {
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  DnnDescriptor &descriptor = own();
  DLC_RETURN_IF_ERROR(descriptor.create(
      CUDNN_BACKEND_MATMUL_DESCRIPTOR,
      this->name(std::string("matmul '") + name + "' (descriptor)")));
  DLC_RETURN_IF_ERROR(descriptor.set(DLC_ATTRIBUTE(CUDNN_ATTR_MATMUL_COMP_TYPE),
                                     CUDNN_TYPE_DATA_TYPE, 1, &compute));
  DLC_RETURN_IF_ERROR(descriptor.finalize());
  DnnDescriptor &node = own();
  DLC_RETURN_IF_ERROR(
      node.create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
                  this->name(std::string("matmul '") + name + "'")));
  DLC_RETURN_IF_ERROR(node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_MATMUL_ADESC),
                               *tensors_[a].descriptor));
  DLC_RETURN_IF_ERROR(node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_MATMUL_BDESC),
                               *tensors_[b].descriptor));
  DLC_RETURN_IF_ERROR(node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_MATMUL_CDESC),
                               *tensors_[c].descriptor));
  DLC_RETURN_IF_ERROR(
      node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_MATMUL_DESC), descriptor));
  return add(node, "matmul", name, {a, b}, c);
}

dlc_status_t DnnGraphBuilder::pointwise(const char *name,
                                        cudnnPointwiseMode_t mode,
                                        cudnnDataType_t precision,
                                        std::initializer_list<Tensor> inputs,
                                        Tensor y, int64_t axis) {
  DnnDescriptor &descriptor = own();
  DLC_RETURN_IF_ERROR(descriptor.create(
      CUDNN_BACKEND_POINTWISE_DESCRIPTOR,
      this->name(std::string("pointwise '") + name + "' (descriptor)")));
  DLC_RETURN_IF_ERROR(descriptor.set(DLC_ATTRIBUTE(CUDNN_ATTR_POINTWISE_MODE),
                                     CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
  DLC_RETURN_IF_ERROR(
      descriptor.set(DLC_ATTRIBUTE(CUDNN_ATTR_POINTWISE_MATH_PREC),
                     CUDNN_TYPE_DATA_TYPE, 1, &precision));
  if (mode == CUDNN_POINTWISE_GEN_INDEX)
    DLC_RETURN_IF_ERROR(descriptor.set(DLC_ATTRIBUTE(CUDNN_ATTR_POINTWISE_AXIS),
                                       CUDNN_TYPE_INT64, 1, &axis));
  DLC_RETURN_IF_ERROR(descriptor.finalize());
  DnnDescriptor &node = own();
  DLC_RETURN_IF_ERROR(
      node.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                  this->name(std::string("pointwise '") + name + "'")));
  DLC_RETURN_IF_ERROR(node.set(
      DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR), descriptor));
  // The operands in cuDNN's order: x, then b (binary modes and the value
  // BINARY_SELECT takes where the condition is false), then t (its
  // condition).
  const DnnAttribute ports[] = {
      DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_POINTWISE_XDESC),
      DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_POINTWISE_BDESC),
      DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_POINTWISE_TDESC)};
  size_t port = 0;
  for (Tensor input : inputs)
    DLC_RETURN_IF_ERROR(node.set(ports[port++], *tensors_[input].descriptor));
  DLC_RETURN_IF_ERROR(
      node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_POINTWISE_YDESC),
               *tensors_[y].descriptor));
  return add(node, "pointwise", name, inputs, y);
}

dlc_status_t DnnGraphBuilder::reduction(const char *name,
                                        cudnnReduceTensorOp_t op, Tensor x,
                                        Tensor y) {
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  DnnDescriptor &descriptor = own();
  DLC_RETURN_IF_ERROR(descriptor.create(
      CUDNN_BACKEND_REDUCTION_DESCRIPTOR,
      this->name(std::string("reduction '") + name + "' (descriptor)")));
  DLC_RETURN_IF_ERROR(
      descriptor.set(DLC_ATTRIBUTE(CUDNN_ATTR_REDUCTION_OPERATOR),
                     CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op));
  DLC_RETURN_IF_ERROR(
      descriptor.set(DLC_ATTRIBUTE(CUDNN_ATTR_REDUCTION_COMP_TYPE),
                     CUDNN_TYPE_DATA_TYPE, 1, &compute));
  DLC_RETURN_IF_ERROR(descriptor.finalize());
  DnnDescriptor &node = own();
  DLC_RETURN_IF_ERROR(
      node.create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
                  this->name(std::string("reduction '") + name + "'")));
  DLC_RETURN_IF_ERROR(
      node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_REDUCTION_XDESC),
               *tensors_[x].descriptor));
  DLC_RETURN_IF_ERROR(
      node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_REDUCTION_YDESC),
               *tensors_[y].descriptor));
  DLC_RETURN_IF_ERROR(
      node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_REDUCTION_DESC), descriptor));
  return add(node, "reduction", name, {x}, y);
}

dlc_status_t DnnGraphBuilder::reshape(const char *name, Tensor x, Tensor y) {
  DnnDescriptor &node = own();
  DLC_RETURN_IF_ERROR(
      node.create(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR,
                  this->name(std::string("reshape '") + name + "'")));
  DLC_RETURN_IF_ERROR(
      node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_RESHAPE_XDESC),
               *tensors_[x].descriptor));
  DLC_RETURN_IF_ERROR(
      node.set(DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_RESHAPE_YDESC),
               *tensors_[y].descriptor));
  return add(node, "reshape", name, {x}, y);
}

dlc_status_t DnnGraphBuilder::withAccount(dlc_status_t status,
                                          const std::string &step) const {
  if (!status)
    return nullptr;
  StatusOwner owner(status);
  return makeStatus(dlc_status_code(status), step + ": " +
                                                 dlc_status_message(status) +
                                                 "\nthe graph:\n" + account_);
}

dlc_status_t DnnGraphBuilder::plan(DnnGraphPlan &out) {
  DnnDescriptor &graph = own();
  DLC_RETURN_IF_ERROR(withAccount(makeDnnOperationGraph(graph, operations_),
                                  "finalizing the operation graph"));
  // Every configuration's refusal, in order: the one that should have
  // taken the graph says what it objects to.
  std::string refusals;
  const std::pair<cudnnBackendHeurMode_t, const char *> modes[] = {
      {CUDNN_HEUR_MODE_A, "CUDNN_HEUR_MODE_A"},
      {CUDNN_HEUR_MODE_FALLBACK, "CUDNN_HEUR_MODE_FALLBACK"}};
  for (const auto &[mode, modeName] : modes) {
    std::vector<DnnDescriptor> configs;
    std::string failure;
    DLC_RETURN_IF_ERROR(
        withAccount(queryDnnEngineConfigs(dnn_, graph, mode, configs, failure),
                    std::string("querying ") + modeName));
    if (configs.empty())
      refusals += std::string("\n  ") + modeName + ": " + failure;
    for (size_t i = 0; i < configs.size(); ++i) {
      DnnDescriptor plan(dnn_);
      int64_t workspace = 0;
      int64_t engine = dnnEngineIndex(dnn_, configs[i]);
      StatusOwner refused(makeDnnPlan(configs[i], plan, workspace));
      if (refused.get()) {
        refusals += std::string("\n  ") + modeName + " configuration " +
                    std::to_string(i) + " (engine " + std::to_string(engine) +
                    "): " + refused.get()->message;
        continue;
      }
      owned_.push_back(std::move(configs[i]));
      owned_.push_back(std::move(plan));
      out = DnnGraphPlan();
      out.descriptors_ = std::move(owned_);
      out.names_ = std::move(names_);
      out.engine_ = engine;
      out.workspaceBytes_ = static_cast<size_t>(workspace);
      return nullptr;
    }
  }
  return makeStatus(DLC_UNIMPLEMENTED, "no engine of cuDNN " +
                                           std::to_string(dnn_.version()) +
                                           " takes the graph:" + refusals +
                                           "\nthe graph:\n" + account_);
}

} // namespace dlc::cuda
