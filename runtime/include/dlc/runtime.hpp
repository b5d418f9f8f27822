//===- dlc/runtime.hpp - A thin C++ wrapper over the C API ------*- C++ -*-===//
//
// Header-only RAII classes over <dlc/runtime.h>: each owns one handle and
// releases it, and every failing call throws dlc::rt::Error carrying the
// status's code and message. Nothing here adds behavior to the C API.
//
//   dlc::rt::Module module = dlc::rt::Module::loadFile("mlp.dlcm");
//   dlc::rt::Session session(module, dlc::rt::Device("cpu"));
//   session.call("train_step", {x, labels}, {loss});
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_HPP
#define DLC_RUNTIME_HPP

#include <dlc/runtime.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlc::rt {

/// A failed call: the status's code and message.
class Error : public std::runtime_error {
public:
  Error(dlc_status_code_t code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  dlc_status_code_t code() const { return code_; }

private:
  dlc_status_code_t code_;
};

/// Throws an Error for a non-NULL status (which it frees).
inline void check(dlc_status_t status) {
  if (!status)
    return;
  dlc_status_code_t code = dlc_status_code(status);
  std::string message = dlc_status_message(status);
  dlc_status_free(status);
  throw Error(code, message);
}

/// A function's caller-facing signature.
struct Signature {
  std::vector<dlc_value_info_t> inputs;
  std::vector<dlc_value_info_t> outputs;
};

/// A loaded module (dlc_module_t).
class Module {
public:
  static Module loadFile(const std::string &path) {
    dlc_module_t *m = nullptr;
    check(dlc_module_load_file(path.c_str(), &m));
    return Module(m);
  }
  static Module loadMemory(const void *data, size_t size,
                           const std::string &name) {
    dlc_module_t *m = nullptr;
    check(dlc_module_load_memory(data, size, name.c_str(), &m));
    return Module(m);
  }

  std::string target() const { return dlc_module_target(get()); }
  std::string modelName() const { return dlc_module_model_name(get()); }
  int32_t dataParallelRanks() const {
    return dlc_module_data_parallel_ranks(get());
  }
  int32_t tensorParallelRanks() const {
    return dlc_module_tensor_parallel_ranks(get());
  }
  int32_t pipelineStages() const { return dlc_module_pipeline_stages(get()); }
  /// Every rank of a job: the data-parallel times the tensor-parallel ranks
  /// times the pipeline stages.
  int32_t ranks() const {
    return dataParallelRanks() * tensorParallelRanks() * pipelineStages();
  }
  int32_t shardedGlobals() const { return dlc_module_sharded_globals(get()); }

  size_t globalCount() const { return dlc_module_global_count(get()); }
  dlc_value_info_t global(size_t index) const {
    dlc_value_info_t info;
    check(dlc_module_global_info(get(), index, &info));
    return info;
  }

  int32_t globalTpSplit(size_t index) const {
    return dlc_module_global_tp_split(get(), index);
  }
  int32_t globalTpSplitGroups(size_t index) const {
    return dlc_module_global_tp_split_groups(get(), index);
  }

  size_t functionCount() const { return dlc_module_function_count(get()); }
  std::string functionName(size_t index) const {
    return dlc_module_function_name(get(), index);
  }
  Signature signature(const std::string &function) const {
    size_t numInputs = 0, numOutputs = 0;
    check(dlc_module_function_signature(get(), function.c_str(), &numInputs,
                                        &numOutputs));
    Signature s;
    s.inputs.resize(numInputs);
    s.outputs.resize(numOutputs);
    for (size_t i = 0; i < numInputs; ++i)
      check(
          dlc_module_function_input(get(), function.c_str(), i, &s.inputs[i]));
    for (size_t i = 0; i < numOutputs; ++i)
      check(dlc_module_function_output(get(), function.c_str(), i,
                                       &s.outputs[i]));
    return s;
  }

  dlc_module_t *get() const { return handle_.get(); }

private:
  explicit Module(dlc_module_t *m) : handle_(m, &dlc_module_release) {}
  std::unique_ptr<dlc_module_t, void (*)(dlc_module_t *)> handle_;
};

/// A device (dlc_device_t): "cpu" or "cuda:N".
class Device {
public:
  explicit Device(const std::string &spec, int32_t numThreads = 0)
      : handle_(nullptr, &dlc_device_release) {
    dlc_device_t *d = nullptr;
    check(dlc_device_create(spec.c_str(), numThreads, &d));
    handle_.reset(d);
  }
  dlc_device_t *get() const { return handle_.get(); }

private:
  std::unique_ptr<dlc_device_t, void (*)(dlc_device_t *)> handle_;
};

/// Integer metadata saved with a checkpoint (dlc_metadata_t).
class Metadata {
public:
  Metadata() : handle_(nullptr, &dlc_metadata_release) {
    dlc_metadata_t *m = nullptr;
    check(dlc_metadata_create(&m));
    handle_.reset(m);
  }
  /// Takes ownership of `m`.
  explicit Metadata(dlc_metadata_t *m) : handle_(m, &dlc_metadata_release) {}

  void set(const std::string &key, int64_t value) {
    check(dlc_metadata_set(get(), key.c_str(), value));
  }
  /// Throws an Error (DLC_NOT_FOUND) when the key is absent.
  int64_t value(const std::string &key) const {
    int64_t value = 0;
    check(dlc_metadata_get(get(), key.c_str(), &value));
    return value;
  }
  bool has(const std::string &key) const {
    int64_t value = 0;
    dlc_status_t s = dlc_metadata_get(get(), key.c_str(), &value);
    dlc_status_free(s);
    return s == nullptr;
  }
  /// Every key and value, in byte order of the keys.
  std::map<std::string, int64_t> entries() const {
    std::map<std::string, int64_t> out;
    for (size_t i = 0; i < dlc_metadata_count(get()); ++i) {
      const char *key = nullptr;
      int64_t value = 0;
      check(dlc_metadata_entry(get(), i, &key, &value));
      out.emplace(key, value);
    }
    return out;
  }
  dlc_metadata_t *get() const { return handle_.get(); }

private:
  std::unique_ptr<dlc_metadata_t, void (*)(dlc_metadata_t *)> handle_;
};

/// A module opened on a device (dlc_session_t); it keeps both alive.
class Session {
public:
  Session(const Module &module, const Device &device)
      : handle_(nullptr, &dlc_session_release) {
    dlc_session_t *s = nullptr;
    check(dlc_session_create(module.get(), device.get(), &s));
    handle_.reset(s);
  }

  void call(const std::string &function,
            const std::vector<dlc_tensor_t> &inputs,
            const std::vector<dlc_tensor_t> &outputs) {
    check(dlc_session_call(get(), function.c_str(), inputs.data(),
                           inputs.size(), outputs.data(), outputs.size()));
  }
  /// Runs `function` on the oldest inputs stage() handed over.
  void callStaged(const std::string &function,
                  const std::vector<dlc_tensor_t> &outputs) {
    check(dlc_session_call(get(), function.c_str(), nullptr, 0, outputs.data(),
                           outputs.size()));
  }
  /// Hands the inputs of a later call of `function` over now (copied to
  /// the device beside the computation in flight).
  void stage(const std::string &function,
             const std::vector<dlc_tensor_t> &inputs) {
    check(dlc_session_stage_inputs(get(), function.c_str(), inputs.data(),
                                   inputs.size()));
  }

  void getGlobal(const std::string &name, void *data, size_t bytes) {
    check(dlc_session_get_global(get(), name.c_str(), data, bytes));
  }
  void setGlobal(const std::string &name, const void *data, size_t bytes) {
    check(dlc_session_set_global(get(), name.c_str(), data, bytes));
  }

  void saveCheckpoint(const std::string &directory,
                      const Metadata *metadata = nullptr, int32_t keep = 0) {
    check(dlc_session_save_checkpoint(
        get(), directory.c_str(), metadata ? metadata->get() : nullptr, keep));
  }
  /// Restores a checkpoint and returns its metadata.
  Metadata loadCheckpoint(const std::string &directory) {
    dlc_metadata_t *m = nullptr;
    check(dlc_session_load_checkpoint(get(), directory.c_str(), &m));
    return Metadata(m);
  }
  void setProfiling(bool enabled) {
    check(dlc_session_set_profiling(get(), enabled ? 1 : 0));
  }
  void writeProfile(const std::string &path) {
    check(dlc_session_write_profile(get(), path.c_str()));
  }
  double collectiveWait() const {
    double seconds = 0;
    check(dlc_session_collective_wait(get(), &seconds));
    return seconds;
  }
  void gatherStages() { check(dlc_session_gather_stages(get())); }
  void exportOnnx(const std::string &path) {
    check(dlc_session_export_onnx(get(), path.c_str()));
  }
  /// The communicator of the module's all-reduces (borrowed; null
  /// detaches it).
  void setComm(dlc_comm_t *comm) { check(dlc_session_set_comm(get(), comm)); }

  dlc_session_t *get() const { return handle_.get(); }

private:
  std::unique_ptr<dlc_session_t, void (*)(dlc_session_t *)> handle_;
};

/// A communicator between the ranks of a job (dlc_comm_t): "auto", "mpi"
/// or "local".
class Comm {
public:
  explicit Comm(const std::string &kind = "auto", double timeoutSeconds = 300)
      : handle_(nullptr, &dlc_comm_release) {
    dlc_comm_t *c = nullptr;
    check(dlc_comm_open(kind.c_str(), timeoutSeconds, &c));
    handle_.reset(c);
  }

  std::string kind() const { return dlc_comm_kind(get()); }
  int32_t rank() const { return dlc_comm_rank(get()); }
  int32_t size() const { return dlc_comm_size(get()); }
  int32_t localRank() const { return dlc_comm_local_rank(get()); }

  void allReduce(void *data, size_t count, dlc_dtype_t dtype,
                 dlc_reduce_op_t op = DLC_REDUCE_SUM) {
    check(dlc_comm_all_reduce(get(), data, count, dtype, op));
  }
  /// `counts` has one entry per rank.
  void reduceScatter(const void *send, void *recv, const size_t *counts,
                     dlc_dtype_t dtype, dlc_reduce_op_t op = DLC_REDUCE_SUM) {
    check(dlc_comm_reduce_scatter(get(), send, recv, counts, dtype, op));
  }
  /// `counts` has one entry per rank.
  void allGather(const void *send, void *recv, const size_t *counts,
                 dlc_dtype_t dtype) {
    check(dlc_comm_all_gather(get(), send, recv, counts, dtype));
  }
  void broadcast(void *data, size_t count, dlc_dtype_t dtype,
                 int32_t root = 0) {
    check(dlc_comm_broadcast(get(), data, count, dtype, root));
  }
  void barrier() { check(dlc_comm_barrier(get())); }
  void send(const void *data, size_t count, dlc_dtype_t dtype, int32_t peer) {
    check(dlc_comm_send(get(), data, count, dtype, peer));
  }
  void recv(void *data, size_t count, dlc_dtype_t dtype, int32_t peer) {
    check(dlc_comm_recv(get(), data, count, dtype, peer));
  }
  /// The ranks of this one passing the same `color`, ranked by `key`.
  Comm split(int32_t color, int32_t key = 0) {
    dlc_comm_t *part = nullptr;
    check(dlc_comm_split(get(), color, key, &part));
    return Comm(part);
  }
  [[noreturn]] void abort(int32_t code) {
    dlc_comm_abort(get(), code);
    std::abort();
  }

  dlc_comm_t *get() const { return handle_.get(); }

private:
  explicit Comm(dlc_comm_t *owned) : handle_(owned, &dlc_comm_release) {}

  std::unique_ptr<dlc_comm_t, void (*)(dlc_comm_t *)> handle_;
};

} // namespace dlc::rt

#endif // DLC_RUNTIME_HPP
