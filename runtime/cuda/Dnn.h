//===- Dnn.h - ConvStep on cuDNN's graph API --------------------*- C++ -*-===//
//
// Convolutions run on cuDNN through its backend (graph) API, the one that
// takes every convolution dlc emits (N-d, grouped, asymmetric padding,
// dilation) in each direction and that cuDNN 9 develops; the legacy
// cudnnConvolution* calls are deprecated. Each step becomes an operation
// graph of one convolution node whose execution plan is chosen and
// finalized once, when a session opens, so that running it is one
// cudnnBackendExecute that may be captured into a CUDA graph. The engine is
// chosen by measurement, as PyTorch's cudnn.benchmark does: the candidates
// the heuristics list are timed once per shape and the fastest the step's
// numerics allow is kept (DLC_CUDNN_ENGINES names a file that keeps the
// choices across processes, so that a resumed run takes the same engines).
// The library is opened with dlopen (DynamicLibrary.h): a machine without
// it still runs dlc on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_DNN_H
#define DLC_RUNTIME_CUDA_DNN_H

#include "dlc/runtime.h"
#include "runtime/cuda/Driver.h"
#include "runtime/cuda/DynamicLibrary.h"
#include "runtime/module/dlcm_generated.h"

#include <cuda.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dlc::cuda {

/// The cuDNN entry points dlc calls, as members of Dnn named like the API.
#define DLC_CUDNN_FUNCTIONS(X)                                                 \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnGetErrorString)                                                       \
  X(cudnnGetLastErrorString)                                                   \
  X(cudnnBackendCreateDescriptor)                                              \
  X(cudnnBackendDestroyDescriptor)                                             \
  X(cudnnBackendSetAttribute)                                                  \
  X(cudnnBackendGetAttribute)                                                  \
  X(cudnnBackendFinalize)                                                      \
  X(cudnnBackendExecute)                                                       \
  X(cudnnGetVersion)

class DnnDescriptor;

/// cuDNN, loaded, with one handle. One thread at a time may use it (and the
/// convolutions planned on it: run() sets the handle's stream), which the
/// device's executor guarantees.
class Dnn {
public:
  /// Loads libcudnn and creates a handle. A missing library or symbol is
  /// DLC_UNAVAILABLE, as is a failing cudnnCreate (no usable GPU).
  static dlc_status_t open(std::unique_ptr<Dnn> &out);
  ~Dnn();
  Dnn(const Dnn &) = delete;
  Dnn &operator=(const Dnn &) = delete;

  /// cuDNN's version (cudnnGetVersion: 90100 for 9.1.0).
  size_t version() const { return this->cudnnGetVersion(); }

  /// Enqueues the finalized convolution `plan` on `stream` over the
  /// buffers of its x, w and y tensors and `workspace`.
  dlc_status_t execute(cudnnBackendDescriptor_t plan, void *x, void *w,
                       void *y, void *workspace, CUstream stream) const;
  /// Enqueues the finalized `plan` on `stream`, binding each of the `count`
  /// tensor `uids` to the pointer at the same index (a device buffer, or a
  /// host scalar for a by-value tensor) and `workspace`.
  dlc_status_t execute(cudnnBackendDescriptor_t plan, int64_t count,
                       const int64_t *uids, void *const *pointers,
                       void *workspace, CUstream stream) const;

private:
  friend class DnnConv;
  friend class DnnAttention;
  /// An owned backend descriptor whose calls report failures as statuses
  /// (DnnDescriptor.h).
  friend class DnnDescriptor;

  Dnn() = default;

  /// The engine chosen before for the convolution `key` (an index into its
  /// candidates), or -1.
  int chosenEngine(const std::string &key) const;
  /// Remembers `engine` for `key`, appending it to DLC_CUDNN_ENGINES's
  /// file when that is set (a file that cannot be written is skipped: the
  /// choice is then measured again in the next process).
  void rememberEngine(const std::string &key, int engine);

  /// "CUDNN_STATUS_BAD_PARAM (2000)", then cuDNN's own account of the last
  /// failure on this thread when it has one.
  std::string describe(cudnnStatus_t status) const;
  /// A status for `status` returned by `call`, or null on success.
  dlc_status_t check(cudnnStatus_t status, const std::string &call) const;

  DynamicLibrary library_;
  cudnnHandle_t handle_ = nullptr;
  /// Engines chosen by measurement, by convolution; loaded from
  /// DLC_CUDNN_ENGINES's file (lines "INDEX KEY") when it is set.
  std::map<std::string, int> engines_;
  std::string enginesFile_;

  DLC_CUDNN_FUNCTIONS(DLC_DECLARE_LIBRARY_FUNCTION)
};

/// What a convolution's plan may use, and how its engine is chosen.
struct DnnConvOptions {
  /// float32 may run on TF32 tensor cores (dlcm.fbs cuda_allow_tf32).
  bool allowTf32 = false;
  /// Engines cuDNN marks nondeterministic may be taken (dlcm.fbs
  /// cuda_allow_nondeterministic).
  bool allowNondeterministic = false;
  size_t maxWorkspaceBytes = 0;
  /// Where candidates are timed (the session's device and stream); with no
  /// driver, the heuristics' first acceptable engine is taken unmeasured.
  const Driver *driver = nullptr;
  CUstream stream = nullptr;
  /// The GPU's name: part of what a remembered choice is kept under.
  std::string deviceName;
};

/// How a convolution's engine was chosen, for profiles: the candidates
/// (configurations whose plan finalized within the workspace limit, the
/// nondeterministic ones included), the one taken, and the measured
/// milliseconds of the taken one and of the fastest of all (which may be
/// nondeterministic: the difference is what determinism costs). -1 where
/// nothing was measured.
struct DnnEngineChoice {
  int candidates = 0;
  int chosen = 0;
  double chosenMs = -1;
  double fastestMs = -1;
};

/// One ConvStep (checked by ModuleFile), planned once: an operation graph
/// of its one CONVOLUTION_FORWARD, _BACKWARD_DATA or _BACKWARD_FILTER node
/// and the execution plan of the engine configuration chosen among those
/// CUDNN_HEUR_MODE_A (or, when it has none, CUDNN_HEUR_MODE_FALLBACK)
/// suggests whose plan finalizes within the workspace limit and the
/// numerics asked for. `dnn` must outlive it.
class DnnConv {
public:
  /// Plans `step`. float16 and bfloat16 compute in float32, float32 in
  /// float32, or on TF32 tensor cores as well when `options.allowTf32`,
  /// float64 in float64; no engine that converts inputs down or reduces in
  /// less than the compute type is taken, nor a nondeterministic one unless
  /// allowed. With a driver, every candidate runs on scratch buffers of the
  /// step's sizes and the fastest allowed one is kept (once per shape: the
  /// Dnn remembers it). Another dtype, a convolution of more than 3 spatial
  /// dimensions, or a step no engine takes within the workspace limit is
  /// DLC_UNIMPLEMENTED.
  static dlc_status_t create(Dnn &dnn, const fb::ConvStep &step,
                             const DnnConvOptions &options,
                             std::unique_ptr<DnnConv> &out);
  ~DnnConv();
  DnnConv(const DnnConv &) = delete;
  DnnConv &operator=(const DnnConv &) = delete;

  /// Bytes of workspace run() needs (at most the limit create() was given).
  size_t workspaceBytes() const { return workspaceBytes_; }

  const DnnEngineChoice &engineChoice() const { return choice_; }

  /// A step with an empty operand writes zeros (a sum of nothing), which
  /// cuDNN does not compute: the output's bytes, for the caller to clear
  /// (cuMemsetD8Async) instead of calling run(). 0 for every other step.
  size_t zeroFillBytes() const { return zeroFillBytes_; }

  /// Enqueues the step on `stream`. x, w and y are device pointers to the
  /// step's buffers in its field order, as the CPU's ConvKernel::run takes
  /// them; the kind says which one is written: Forward y from x and w,
  /// BackwardData x (dx) from y (dy) and w, BackwardFilter w (dw) from x
  /// and y (dy). No host synchronization and no device allocation, so it
  /// may be captured into a CUDA graph (run a step once before capturing
  /// it: some engines load their kernels on first use). Enqueues nothing
  /// for a step with an empty output or a zero fill. A pointer less aligned
  /// than the plan assumed is DLC_INTERNAL.
  dlc_status_t run(void *x, void *w, void *y, void *workspace,
                   CUstream stream) const;

private:
  explicit DnnConv(Dnn &dnn) : dnn_(dnn) {}

  Dnn &dnn_;
  /// The finalized execution plan, or null when there is nothing to run.
  cudnnBackendDescriptor_t plan_ = nullptr;
  /// Every descriptor the plan was built from (tensors, convolution, node,
  /// graph, engine configuration), then the plan: kept as long as the plan
  /// lives, since cuDNN does not document whether a plan refers to them,
  /// and destroyed in reverse order.
  std::vector<cudnnBackendDescriptor_t> descriptors_;
  size_t workspaceBytes_ = 0;
  size_t zeroFillBytes_ = 0;
  DnnEngineChoice choice_;
  /// The alignment of x, w and y the plan was chosen for.
  uint64_t xAlignment_ = 0, wAlignment_ = 0, yAlignment_ = 0;
};

} // namespace dlc::cuda

#endif // DLC_RUNTIME_CUDA_DNN_H
