//===- SessionEngine.h - A compiled module on the runtime -------*- C++ -*-===//
#ifndef DLC_TOOLS_RUNNER_SESSIONENGINE_H
#define DLC_TOOLS_RUNNER_SESSIONENGINE_H

#include "tools/runner/Engine.h"
#include "tools/runner/LoadedModule.h"

namespace dlc::runner {

/// `module` in a session on `device`: the C API's calls, one to one.
class SessionEngine final : public Engine {
public:
  SessionEngine(const LoadedModule &module, const rt::Device &device)
      : module_(module), session_(module.module, device) {}

  const std::string &name() const override { return module_.name; }
  bool hasFunction(const std::string &function) const override;
  rt::Signature signature(const std::string &function) const override {
    return module_.module.signature(function);
  }
  std::vector<dlc_value_info_t> globals() const override;
  std::optional<std::vector<int64_t>> wholeShape(size_t index) const override;
  void getGlobal(const std::string &name, void *data, size_t bytes) override {
    session_.getGlobal(name, data, bytes);
  }
  void setGlobal(const std::string &name, const void *data,
                 size_t bytes) override {
    session_.setGlobal(name, data, bytes);
  }
  void call(const std::string &function,
            const std::vector<dlc_tensor_t> &inputs,
            const std::vector<dlc_tensor_t> &outputs) override {
    session_.call(function, inputs, outputs);
  }
  void stage(const std::string &function,
             const std::vector<dlc_tensor_t> &inputs) override {
    session_.stage(function, inputs);
  }
  void callStaged(const std::string &function,
                  const std::vector<dlc_tensor_t> &outputs) override {
    session_.callStaged(function, outputs);
  }
  void saveCheckpoint(const std::string &directory,
                      const Metadata &metadata) override;
  Metadata loadCheckpoint(const std::string &path) override {
    return session_.loadCheckpoint(path).entries();
  }
  int32_t tensorParallelRanks() const override {
    return module_.module.tensorParallelRanks();
  }
  int32_t tpSplit(size_t index) const override {
    return module_.module.globalTpSplit(index);
  }
  int32_t tpSplitGroups(size_t index) const override {
    return module_.module.globalTpSplitGroups(index);
  }
  int32_t pipelineStages() const override {
    return module_.module.pipelineStages();
  }
  void gatherStages() override { session_.gatherStages(); }
  bool checkpointsCollective() const override {
    return module_.module.shardedGlobals() > 0 ||
           module_.module.tensorParallelRanks() > 1;
  }
  bool parametersEmbedded() const override {
    return module_.parametersEmbedded;
  }
  bool keepsOnnxModel() const override { return module_.keepsOnnxModel; }
  void exportOnnx(const std::string &path) override {
    session_.exportOnnx(path);
  }
  void setProfiling(bool enabled) override { session_.setProfiling(enabled); }
  void writeProfile(const std::string &path) override {
    session_.writeProfile(path);
  }
  std::optional<double> collectiveWait() const override {
    double seconds = 0;
    dlc_status_t status = dlc_session_collective_wait(session_.get(), &seconds);
    if (dlc_status_code(status) == DLC_UNAVAILABLE) {
      dlc_status_free(status);
      return std::nullopt;
    }
    rt::check(status);
    return seconds;
  }
  /// The communicator of a data-parallel module's all-reduces.
  void setComm(rt::Comm &comm) { session_.setComm(comm.get()); }

private:
  const LoadedModule &module_;
  rt::Session session_;
};

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_SESSIONENGINE_H
