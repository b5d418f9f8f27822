//===- Dnn.cpp - ConvStep on cuDNN's graph API ----------------------------===//
#include "runtime/cuda/Dnn.h"

#include "runtime/cuda/DnnDescriptor.h"

#include "runtime/core/Status.h"
#include "runtime/cpu/ConvGeometry.h"
#include "runtime/cuda/LibraryLayout.h"
#include "runtime/support/Tensor.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <type_traits>
#include <utility>
#include <vector>

namespace dlc::cuda {

// cuDNN takes the runtime API's stream type, the driver's under another
// name.
static_assert(std::is_same_v<CUstream, cudaStream_t>,
              "CUstream and cudaStream_t are both CUstream_st *");

namespace {

/// The tensors' unique ids, one per buffer of the step.
constexpr int64_t kXUid = 1, kWUid = 2, kYUid = 3;

dlc_status_code_t codeOf(cudnnStatus_t status) {
  switch (status) {
  case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
  case CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED:
    return DLC_RESOURCE_EXHAUSTED;
  default:
    break;
  }
  // cuDNN 9 groups its statuses by thousands (a sublibrary that cannot be
  // loaded is in the NOT_INITIALIZED category).
  switch (CUDNN_STATUS_CATEGORY(status)) {
  case CUDNN_STATUS_CATEGORY(CUDNN_STATUS_NOT_INITIALIZED):
    return DLC_UNAVAILABLE;
  case CUDNN_STATUS_CATEGORY(CUDNN_STATUS_NOT_SUPPORTED):
    return DLC_UNIMPLEMENTED;
  default:
    return DLC_INTERNAL;
  }
}

/// The cuDNN types of a convolution of `dtype`.
bool dnnTypes(DType dtype, cudnnDataType_t &data, cudnnDataType_t &compute) {
  switch (dtype) {
  case DType::F32:
    data = compute = CUDNN_DATA_FLOAT;
    return true;
  case DType::F16:
    data = CUDNN_DATA_HALF;
    compute = CUDNN_DATA_FLOAT;
    return true;
  case DType::BF16:
    data = CUDNN_DATA_BFLOAT16;
    compute = CUDNN_DATA_FLOAT;
    return true;
  case DType::F64:
    data = compute = CUDNN_DATA_DOUBLE;
    return true;
  default:
    return false;
  }
}

/// The operation node of a convolution kind and its attributes; the
/// tensors are named by the buffer they bind (x, w, y).
struct Node {
  cudnnBackendDescriptorType_t type;
  const char *what;
  DnnAttribute x, w, y, conv, alpha, beta;
};

Node nodeOf(fb::ConvKind kind) {
  switch (kind) {
  case fb::ConvKind::Forward:
    return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
            "convolution forward",
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA)};
  case fb::ConvKind::BackwardData:
    return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
            "convolution backward data",
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA),
            DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA)};
  case fb::ConvKind::BackwardFilter:
    break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          "convolution backward filter",
          DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X),
          DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW),
          DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY),
          DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC),
          DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA),
          DLC_ATTRIBUTE(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA)};
}

bool aligned(const void *p, uint64_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

/// A finalized cross-correlation descriptor.
dlc_status_t makeConvolution(DnnDescriptor &conv, const DnnConvLayout &layout,
                             cudnnDataType_t compute) {
  auto spatial = static_cast<int64_t>(layout.stride.size());
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  DLC_RETURN_IF_ERROR(
      conv.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "convolution"));
  DLC_RETURN_IF_ERROR(conv.set(DLC_ATTRIBUTE(CUDNN_ATTR_CONVOLUTION_COMP_TYPE),
                               CUDNN_TYPE_DATA_TYPE, 1, &compute));
  DLC_RETURN_IF_ERROR(conv.set(DLC_ATTRIBUTE(CUDNN_ATTR_CONVOLUTION_CONV_MODE),
                               CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  DLC_RETURN_IF_ERROR(
      conv.set(DLC_ATTRIBUTE(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS),
               CUDNN_TYPE_INT64, 1, &spatial));
  DLC_RETURN_IF_ERROR(
      conv.set(DLC_ATTRIBUTE(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS),
               CUDNN_TYPE_INT64, spatial, layout.padLow.data()));
  DLC_RETURN_IF_ERROR(
      conv.set(DLC_ATTRIBUTE(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS),
               CUDNN_TYPE_INT64, spatial, layout.padHigh.data()));
  DLC_RETURN_IF_ERROR(conv.set(DLC_ATTRIBUTE(CUDNN_ATTR_CONVOLUTION_DILATIONS),
                               CUDNN_TYPE_INT64, spatial,
                               layout.dilation.data()));
  DLC_RETURN_IF_ERROR(
      conv.set(DLC_ATTRIBUTE(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES),
               CUDNN_TYPE_INT64, spatial, layout.stride.data()));
  return conv.finalize();
}

/// Sets `refusal` to why the numerics of `config`'s engine do not give
/// what the step asks for, or leaves it empty; `nondeterministic` to
/// whether the engine uses atomics (results that vary between runs, so a
/// resumed run would differ from an uninterrupted one: DESIGN.md decision
/// 10), which the caller allows or not.
dlc_status_t checkNumerics(const Dnn &dnn, const DnnDescriptor &config,
                           bool refuseTensorCores, std::string &refusal,
                           bool &nondeterministic) {
  DnnDescriptor engine(dnn);
  DLC_RETURN_IF_ERROR(engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine"));
  cudnnBackendDescriptor_t engineHandle = engine.handle();
  int64_t count = 0;
  DLC_RETURN_IF_ERROR(config.get(DLC_ATTRIBUTE(CUDNN_ATTR_ENGINECFG_ENGINE),
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, count,
                                 &engineHandle));
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  DLC_RETURN_IF_ERROR(
      engine.get(DLC_ATTRIBUTE(CUDNN_ATTR_ENGINE_NUMERICAL_NOTE),
                 CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                 count, notes));
  nondeterministic = false;
  for (int64_t i = 0; i < count; ++i) {
    switch (notes[i]) {
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
      refusal = "an engine converts its inputs to a narrower type";
      return nullptr;
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      refusal = "an engine reduces in less than the compute type";
      return nullptr;
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
      nondeterministic = true;
      break;
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
      if (refuseTensorCores) {
        refusal = "an engine uses TF32 tensor cores, which were not allowed";
        return nullptr;
      }
      break;
    default:
      break;
    }
  }
  return nullptr;
}

/// A configuration whose plan finalized within the workspace limit.
struct Candidate {
  DnnDescriptor config, plan;
  size_t workspace = 0;
  bool nondeterministic = false;
  /// The fastest of the timed runs, or -1 (not timed, or it failed).
  double ms = -1;
};

/// Device memory for a measurement, freed when it goes.
class Scratch {
public:
  explicit Scratch(const Driver &driver) : driver_(driver) {}
  ~Scratch() {
    if (address_)
      driver_.cuMemFree(address_);
  }
  dlc_status_t allocate(size_t bytes) {
    return driver_.check(driver_.cuMemAlloc(&address_, std::max<size_t>(bytes, 1)),
                         "cuMemAlloc (convolution engine measurement)");
  }
  void *pointer() const { return reinterpret_cast<void *>(address_); }

private:
  const Driver &driver_;
  CUdeviceptr address_ = 0;
};

/// Times every candidate on scratch buffers of `bytes` (x, w, y) filled
/// with 0x3c bytes (each float 0.0115, each half 1.06: normal numbers, so
/// no engine runs on zeros or denormals; an engine's speed does not depend
/// on the values otherwise): one run that loads its kernels, then the
/// fastest of kRuns. A candidate that fails to run keeps ms == -1. Scratch
/// memory that cannot be allocated leaves every candidate unmeasured.
dlc_status_t measure(const Dnn &dnn, std::vector<Candidate> &candidates,
                     const size_t (&bytes)[3], const Driver &driver,
                     CUstream stream) {
  constexpr int kRuns = 3;
  size_t workspace = 0;
  for (const Candidate &c : candidates)
    workspace = std::max(workspace, c.workspace);
  Scratch x(driver), w(driver), y(driver), space(driver);
  Scratch *operands[] = {&x, &w, &y};
  for (int i = 0; i < 4; ++i) {
    StatusOwner failure(i < 3 ? operands[i]->allocate(bytes[i])
                              : space.allocate(workspace));
    if (failure.get())
      return nullptr;
  }
  for (int i = 0; i < 3; ++i)
    DLC_RETURN_IF_ERROR(driver.check(
        driver.cuMemsetD8Async(
            reinterpret_cast<CUdeviceptr>(operands[i]->pointer()), 0x3c,
            bytes[i], stream),
        "cuMemsetD8Async (convolution engine measurement)"));
  CUevent start = nullptr, stop = nullptr;
  DLC_RETURN_IF_ERROR(driver.check(driver.cuEventCreate(&start, 0),
                                   "cuEventCreate"));
  dlc_status_t status = driver.check(driver.cuEventCreate(&stop, 0),
                                     "cuEventCreate");
  for (Candidate &c : candidates) {
    if (status)
      break;
    auto run = [&] {
      return dnn.execute(c.plan.handle(), x.pointer(), w.pointer(),
                         y.pointer(), space.pointer(), stream);
    };
    // An engine that fails here is left out, not an error: the heuristics
    // may list engines this GPU cannot run.
    StatusOwner warmup(run());
    if (warmup.get() ||
        (status = driver.check(driver.cuStreamSynchronize(stream),
                               "cuStreamSynchronize")))
      continue;
    for (int i = 0; i < kRuns && !status; ++i) {
      float ms = 0;
      if ((status = driver.check(driver.cuEventRecord(start, stream),
                                 "cuEventRecord")))
        break;
      StatusOwner failure(run());
      if (failure.get()) {
        c.ms = -1; // an engine that fails a run is not chosen
        break;
      }
      if ((status = driver.check(driver.cuEventRecord(stop, stream),
                                 "cuEventRecord")) ||
          (status = driver.check(driver.cuEventSynchronize(stop),
                                 "cuEventSynchronize")) ||
          (status = driver.check(driver.cuEventElapsedTime(&ms, start, stop),
                                 "cuEventElapsedTime")))
        break;
      c.ms = c.ms < 0 ? ms : std::min<double>(c.ms, ms);
    }
  }
  // The scratch buffers are freed on return: nothing may still use them.
  StatusOwner drained(driver.check(driver.cuStreamSynchronize(stream),
                                   "cuStreamSynchronize"));
  if (stop)
    driver.cuEventDestroy(stop);
  driver.cuEventDestroy(start);
  return status;
}

/// What identifies a convolution's engine choice: the GPU, cuDNN's version
/// and the workspace limit, then its kind, types, tensor layouts and
/// alignments, geometry and options.
std::string engineKey(const Dnn &dnn, fb::ConvKind kind, DType dtype,
                      const DnnConvLayout &layout, const uint64_t (&align)[3],
                      const DnnConvOptions &options) {
  // The candidates depend on the GPU, cuDNN's version and the workspace
  // limit: a choice remembered under another of them is not reused.
  std::string key = options.deviceName + "/cudnn" +
                    std::to_string(dnn.version()) + "/workspace" +
                    std::to_string(options.maxWorkspaceBytes) + "/" +
                    std::string(fb::EnumNameConvKind(kind)) + "/" +
                    dtypeName(dtype) + "/tf32=" +
                    (options.allowTf32 ? "1" : "0") + "/nondeterministic=" +
                    (options.allowNondeterministic ? "1" : "0");
  const std::pair<const char *, const std::vector<int64_t> *> parts[] = {
      {"x", &layout.xDims},        {"xs", &layout.xStrides},
      {"w", &layout.wDims},        {"ws", &layout.wStrides},
      {"y", &layout.yDims},        {"ys", &layout.yStrides},
      {"stride", &layout.stride},  {"pad", &layout.padLow},
      {"padhigh", &layout.padHigh}, {"dilation", &layout.dilation}};
  for (const auto &[name, values] : parts)
    key += std::string("/") + name + dnnShapeString(*values);
  for (uint64_t a : align)
    key += "/align" + std::to_string(a);
  return key;
}

} // namespace

dlc_status_t Dnn::open(std::unique_ptr<Dnn> &out) {
  std::unique_ptr<Dnn> dnn(new Dnn());
  DynamicLibrary &lib = dnn->library_;
  DLC_RETURN_IF_ERROR(lib.open("cuDNN", {"libcudnn.so.9"}));
#define DLC_BIND_CUDNN_FUNCTION(name)                                          \
  DLC_RETURN_IF_ERROR(lib.bind(dnn->name, DLC_SYMBOL_NAME(name)));
  DLC_CUDNN_FUNCTIONS(DLC_BIND_CUDNN_FUNCTION)
#undef DLC_BIND_CUDNN_FUNCTION
  cudnnStatus_t status = dnn->cudnnCreate(&dnn->handle_);
  if (status != CUDNN_STATUS_SUCCESS) {
    dnn->handle_ = nullptr;
    // Whatever cuDNN says, a handle it cannot create means no usable GPU
    // here, which callers treat as "no CUDA device".
    return makeStatus(DLC_UNAVAILABLE,
                      "cudnnCreate failed: " + dnn->describe(status));
  }
  if (const char *path = std::getenv("DLC_CUDNN_ENGINES")) {
    dnn->enginesFile_ = path;
    // Lines "INDEX KEY"; a line that does not parse is ignored (that
    // convolution is measured again).
    std::ifstream file(path);
    std::string line;
    while (std::getline(file, line)) {
      size_t space = line.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == line.size())
        continue;
      char *end = nullptr;
      long index = std::strtol(line.c_str(), &end, 10);
      if (end == line.c_str() + space && index >= 0 && index < 1024)
        dnn->engines_[line.substr(space + 1)] = static_cast<int>(index);
    }
  }
  out = std::move(dnn);
  return nullptr;
}

int Dnn::chosenEngine(const std::string &key) const {
  auto it = engines_.find(key);
  return it == engines_.end() ? -1 : it->second;
}

void Dnn::rememberEngine(const std::string &key, int engine) {
  engines_[key] = engine;
  if (enginesFile_.empty())
    return;
  std::ofstream file(enginesFile_, std::ios::app);
  file << engine << ' ' << key << '\n';
}

Dnn::~Dnn() {
  if (handle_)
    this->cudnnDestroy(handle_);
}

std::string Dnn::describe(cudnnStatus_t status) const {
  std::string text = std::string(this->cudnnGetErrorString(status)) + " (" +
                     std::to_string(static_cast<int>(status)) + ")";
  char detail[512] = {};
  this->cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0])
    text += std::string(": ") + detail;
  return text;
}

dlc_status_t Dnn::check(cudnnStatus_t status, const std::string &call) const {
  if (status == CUDNN_STATUS_SUCCESS)
    return nullptr;
  return makeStatus(codeOf(status), call + " failed: " + describe(status));
}

DnnConv::~DnnConv() {
  for (auto it = descriptors_.rbegin(); it != descriptors_.rend(); ++it)
    dnn_.cudnnBackendDestroyDescriptor(*it);
}

dlc_status_t DnnConv::create(Dnn &dnn, const fb::ConvStep &step,
                             const DnnConvOptions &options,
                             std::unique_ptr<DnnConv> &out) {
  std::unique_ptr<DnnConv> conv(new DnnConv(dnn));
  cpu::ConvGeometry g = cpu::ConvGeometry::fromStep(step);
  DType dtype = static_cast<DType>(step.dtype());
  fb::ConvKind kind = step.kind();
  if (g.xElements() == 0 || g.wElements() == 0 || g.yElements() == 0) {
    conv->zeroFillBytes_ = g.outputElements(kind) * dtypeSize(dtype);
    out = std::move(conv);
    return nullptr;
  }
  cudnnDataType_t dataType, computeType;
  if (!dnnTypes(dtype, dataType, computeType))
    return makeStatus(DLC_UNIMPLEMENTED, std::string("convolution of ") +
                                             dtypeName(dtype) +
                                             " is not supported on CUDA");
  if (g.spatialRank() > 3)
    return makeStatus(DLC_UNIMPLEMENTED,
                      "a convolution of " + std::to_string(g.spatialRank()) +
                          " spatial dimensions (cuDNN takes 1 to 3)");
  DnnConvLayout layout = dnnConvLayout(g);
  conv->xAlignment_ = bufferAlignment({step.x()->offset()});
  conv->wAlignment_ = bufferAlignment({step.w()->offset()});
  conv->yAlignment_ = bufferAlignment({step.y()->offset()});

  // The graph: x, w, y and one node, the same tensors in every direction.
  DnnDescriptor x(dnn), w(dnn), y(dnn), convolution(dnn), node(dnn), graph(dnn);
  DLC_RETURN_IF_ERROR(makeDnnTensor(x, "tensor x", kXUid, dataType,
                                    layout.xDims, layout.xStrides,
                                    static_cast<int64_t>(conv->xAlignment_)));
  DLC_RETURN_IF_ERROR(makeDnnTensor(w, "tensor w", kWUid, dataType,
                                    layout.wDims, layout.wStrides,
                                    static_cast<int64_t>(conv->wAlignment_)));
  DLC_RETURN_IF_ERROR(makeDnnTensor(y, "tensor y", kYUid, dataType,
                                    layout.yDims, layout.yStrides,
                                    static_cast<int64_t>(conv->yAlignment_)));
  DLC_RETURN_IF_ERROR(makeConvolution(convolution, layout, computeType));
  Node attributes = nodeOf(kind);
  DLC_RETURN_IF_ERROR(node.create(attributes.type, attributes.what));
  DLC_RETURN_IF_ERROR(node.set(attributes.x, x));
  DLC_RETURN_IF_ERROR(node.set(attributes.w, w));
  DLC_RETURN_IF_ERROR(node.set(attributes.y, y));
  DLC_RETURN_IF_ERROR(node.set(attributes.conv, convolution));
  // y = 1 * conv(...) + 0 * y, the scalars in the compute type's width.
  float oneF = 1, zeroF = 0;
  double oneD = 1, zeroD = 0;
  bool doubleScale = computeType == CUDNN_DATA_DOUBLE;
  cudnnBackendAttributeType_t scaleType =
      doubleScale ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  DLC_RETURN_IF_ERROR(
      node.set(attributes.alpha, scaleType, 1,
               doubleScale ? static_cast<const void *>(&oneD) : &oneF));
  DLC_RETURN_IF_ERROR(
      node.set(attributes.beta, scaleType, 1,
               doubleScale ? static_cast<const void *>(&zeroD) : &zeroF));
  DLC_RETURN_IF_ERROR(node.finalize());
  DLC_RETURN_IF_ERROR(makeDnnOperationGraph(graph, {node.handle()}));

  // The candidates: the heuristics' configurations in their order of
  // preference whose numerics are acceptable, whose plan finalizes (an
  // engine may not support the shape or this GPU) and whose workspace
  // fits; the fallback list only when mode A has none.
  constexpr size_t kMaxCandidates = 12;
  bool refuseTensorCores = dtype == DType::F32 && !options.allowTf32;
  std::string reason = "the heuristics suggested no engine";
  std::vector<Candidate> candidates;
  auto allowed = [&](const Candidate &c) {
    return !c.nondeterministic || options.allowNondeterministic;
  };
  auto allowedCount = [&] {
    return static_cast<size_t>(
        std::count_if(candidates.begin(), candidates.end(), allowed));
  };
  for (cudnnBackendHeurMode_t mode :
       {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    if (allowedCount() > 0)
      break;
    std::vector<DnnDescriptor> configs;
    DLC_RETURN_IF_ERROR(
        queryDnnEngineConfigs(dnn, graph, mode, configs, reason));
    auto count = static_cast<int64_t>(configs.size());
    // Nondeterministic candidates are timed too (what determinism costs),
    // but only allowed ones count towards the limit.
    for (int64_t i = 0; i < count && allowedCount() < kMaxCandidates; ++i) {
      std::string refusal;
      bool nondeterministic = false;
      DLC_RETURN_IF_ERROR(checkNumerics(dnn, configs[i], refuseTensorCores,
                                        refusal, nondeterministic));
      if (!refusal.empty()) {
        reason = refusal;
        continue;
      }
      DnnDescriptor plan(dnn);
      int64_t workspace = 0;
      StatusOwner planFailure(makeDnnPlan(configs[i], plan, workspace));
      if (planFailure.get()) {
        reason = planFailure.get()->message;
        continue;
      }
      if (static_cast<uint64_t>(workspace) > options.maxWorkspaceBytes) {
        reason = "an engine needs " + std::to_string(workspace) +
                 " bytes of workspace";
        continue;
      }
      candidates.push_back({std::move(configs[i]), std::move(plan),
                            static_cast<size_t>(workspace), nondeterministic});
    }
  }
  auto first = std::find_if(candidates.begin(), candidates.end(), allowed);
  if (first == candidates.end())
    return makeStatus(
        DLC_UNIMPLEMENTED,
        std::string("cuDNN has no engine for this ") + dtypeName(dtype) + " " +
            attributes.what + " (x " + dnnShapeString(layout.xDims) + ", w " +
            dnnShapeString(layout.wDims) + ", y " +
            dnnShapeString(layout.yDims) + ") within " +
            std::to_string(options.maxWorkspaceBytes) +
            " bytes of workspace; last: " +
            (candidates.empty() ? reason : "an engine is nondeterministic"));

  // The engine: the one chosen for this shape before, else the fastest
  // allowed candidate measured now, else the heuristics' first.
  DnnEngineChoice &choice = conv->choice_;
  choice.candidates = static_cast<int>(candidates.size());
  choice.chosen = static_cast<int>(first - candidates.begin());
  uint64_t alignments[] = {conv->xAlignment_, conv->wAlignment_,
                           conv->yAlignment_};
  std::string key = engineKey(dnn, kind, dtype, layout, alignments, options);
  int remembered = dnn.chosenEngine(key);
  if (remembered >= 0 && remembered < choice.candidates &&
      allowed(candidates[remembered])) {
    choice.chosen = remembered;
  } else if (options.driver && candidates.size() > 1) {
    size_t elementBytes = dtypeSize(dtype);
    const size_t bytes[] = {g.xElements() * elementBytes,
                            g.wElements() * elementBytes,
                            g.yElements() * elementBytes};
    DLC_RETURN_IF_ERROR(
        measure(dnn, candidates, bytes, *options.driver, options.stream));
    for (size_t i = 0; i < candidates.size(); ++i) {
      double ms = candidates[i].ms;
      if (ms < 0)
        continue;
      if (choice.fastestMs < 0 || ms < choice.fastestMs)
        choice.fastestMs = ms;
      if (allowed(candidates[i]) &&
          (choice.chosenMs < 0 || ms < choice.chosenMs)) {
        choice.chosenMs = ms;
        choice.chosen = static_cast<int>(i);
      }
    }
    // Only a measured choice is kept: an unmeasured one (no scratch memory,
    // every candidate failed) is measured again next time.
    if (choice.chosenMs >= 0)
      dnn.rememberEngine(key, choice.chosen);
  }

  Candidate &chosen = candidates[choice.chosen];
  conv->descriptors_.reserve(8);
  for (DnnDescriptor *used : {&x, &w, &y, &convolution, &node, &graph,
                              &chosen.config, &chosen.plan})
    conv->descriptors_.push_back(used->release());
  conv->plan_ = conv->descriptors_.back();
  conv->workspaceBytes_ = chosen.workspace;
  out = std::move(conv);
  return nullptr;
}

dlc_status_t DnnConv::run(void *x, void *w, void *y, void *workspace,
                          CUstream stream) const {
  if (!plan_)
    return nullptr;
  struct Operand {
    const char *name;
    const void *pointer;
    uint64_t alignment;
  } operands[] = {
      {"x", x, xAlignment_}, {"w", w, wAlignment_}, {"y", y, yAlignment_}};
  for (const Operand &operand : operands)
    if (!aligned(operand.pointer, operand.alignment))
      return makeStatus(DLC_INTERNAL,
                        std::string("convolution ") + operand.name +
                            " is not " + std::to_string(operand.alignment) +
                            "-byte aligned as its cuDNN plan assumes");
  return dnn_.execute(plan_, x, w, y, workspace, stream);
}

dlc_status_t Dnn::execute(cudnnBackendDescriptor_t plan, void *x, void *w,
                          void *y, void *workspace, CUstream stream) const {
  const int64_t uids[] = {kXUid, kWUid, kYUid};
  void *const pointers[] = {x, w, y};
  return execute(plan, 3, uids, pointers, workspace, stream);
}

dlc_status_t Dnn::execute(cudnnBackendDescriptor_t plan, int64_t count,
                          const int64_t *uids, void *const *pointers,
                          void *workspace, CUstream stream) const {
  // A variant pack per call: a few host allocations, no device work, and
  // nothing a captured graph keeps (cudnnBackendExecute reads the pointers
  // while it enqueues).
  DnnDescriptor pack(*this);
  DLC_RETURN_IF_ERROR(
      pack.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack"));
  DLC_RETURN_IF_ERROR(
      pack.set(DLC_ATTRIBUTE(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS),
               CUDNN_TYPE_INT64, count, uids));
  DLC_RETURN_IF_ERROR(
      pack.set(DLC_ATTRIBUTE(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS),
               CUDNN_TYPE_VOID_PTR, count, pointers));
  DLC_RETURN_IF_ERROR(pack.set(DLC_ATTRIBUTE(CUDNN_ATTR_VARIANT_PACK_WORKSPACE),
                               CUDNN_TYPE_VOID_PTR, 1, &workspace));
  DLC_RETURN_IF_ERROR(pack.finalize());
  DLC_RETURN_IF_ERROR(
      check(this->cudnnSetStream(handle_, stream), "cudnnSetStream"));
  return check(this->cudnnBackendExecute(handle_, plan, pack.handle()),
               "cudnnBackendExecute");
}

} // namespace dlc::cuda
