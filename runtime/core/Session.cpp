//===- Session.cpp - A module opened on a device --------------------------===//
//
// The session owns the globals, two buffers each for those a function
// updates (swapped only after a call succeeds), checks callers' tensors,
// runs the function's executor, and implements the C API's session calls
// (profiles included; checkpoints and export are SessionCheckpoint.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Session.h"

#include "runtime/core/Handles.h"
#include "runtime/core/Status.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace dlc {
namespace {

std::string describeTensor(const dlc_tensor_t &t) {
  std::string s = std::string(dtypeName(static_cast<DType>(t.dtype))) + "[";
  for (int32_t i = 0; i < t.rank; ++i)
    s += (i ? "," : "") + std::to_string(t.shape[i]);
  return s + "]";
}

} // namespace

dlc_status_t Session::create(std::shared_ptr<const ModuleFile> module,
                             std::shared_ptr<cpu::CpuDevice> device,
                             const std::string &deviceSpec,
                             std::unique_ptr<Session> &out) {
  const std::string &name = module->name();
  if (module->target() != "cpu")
    return module->target() == "cuda"
               ? makeStatus(DLC_INVALID_ARGUMENT,
                            name +
                                ": compiled for 'cuda', cannot run on "
                                "device '" +
                                deviceSpec + "'")
               : makeStatus(DLC_UNIMPLEMENTED,
                            name + ": target '" + module->target() +
                                "' is not built into this runtime");
  std::unique_ptr<Session> s(new Session());
  s->module_ = module;
  s->device_ = device;

  // Globals: a second buffer for each one some function updates.
  std::vector<bool> updated(module->globals().size(), false);
  for (const FunctionInfo &f : module->functions())
    for (const ValueInfo &r : f.results)
      if (r.global >= 0)
        updated[r.global] = true;
  s->globals_.resize(module->globals().size());
  for (size_t i = 0; i < s->globals_.size(); ++i) {
    const ValueInfo &info = module->globals()[i];
    Global &g = s->globals_[i];
    const auto *init = module->root().globals()->Get(i)->initial_value();
    size_t bytes = info.type.byteSize;
    if (!g.buffers[0].allocate(bytes, !init) ||
        (updated[i] && !g.buffers[1].allocate(bytes, false)))
      return makeStatus(DLC_RESOURCE_EXHAUSTED,
                        name + ": out of memory for global '" + info.name +
                            "' (" + info.type.describe() + ")");
    if (init && bytes)
      std::memcpy(g.buffers[0].data(), init->data(), bytes);
  }

  // Kernels: the shared object once, each symbol once.
  std::vector<cpu::KernelFunction> kernels;
  const auto *kernelList = module->root().kernels();
  if (kernelList && kernelList->size()) {
    const auto *so = module->root().cpu_shared_object();
    if (!so || !so->size())
      return makeStatus(DLC_DATA_LOSS, name + ": has " +
                                           std::to_string(kernelList->size()) +
                                           " kernels but no CPU shared object");
    DLC_RETURN_IF_ERROR(cpu::KernelLibrary::load(
        so->data(), so->size(), name + ": cpu_shared_object", s->kernels_));
    for (const fb::Kernel *k : *kernelList) {
      cpu::KernelFunction fn = nullptr;
      DLC_RETURN_IF_ERROR(s->kernels_->lookup(k->name()->str(), fn));
      kernels.push_back(fn);
    }
  }

  // Library calls made while preparing steps use the device's thread count:
  // oneDNN picks its blocking for the threads it will run on.
  cpu::LibraryThreads threads(device->numThreads());
  size_t scratch = 0;
  for (const FunctionInfo &f : module->functions()) {
    std::unique_ptr<cpu::FunctionExecutor> executor;
    DLC_RETURN_IF_ERROR(
        cpu::FunctionExecutor::create(*module, f, *device, kernels, executor));
    scratch = std::max(scratch, executor->scratchBytes());
    s->executors_.push_back(std::move(executor));
  }
  if (!s->scratch_.allocate(scratch, false))
    return makeStatus(DLC_RESOURCE_EXHAUSTED, name + ": out of memory for " +
                                                  std::to_string(scratch) +
                                                  " bytes of scratch memory");
  s->stream_ = dnnl::stream(device->engine());
  out = std::move(s);
  return nullptr;
}

const std::byte *Session::globalData(size_t index) const {
  const Global &g = globals_[index];
  return g.buffers[g.current].data();
}

std::byte *Session::globalData(size_t index) {
  Global &g = globals_[index];
  return g.buffers[g.current].data();
}

dlc_status_t Session::findGlobal(const std::string &name, size_t &index) const {
  int32_t i = module_->findGlobal(name);
  if (i < 0)
    return makeStatus(DLC_NOT_FOUND,
                      module_->name() + ": no global '" + name + "'");
  index = static_cast<size_t>(i);
  return nullptr;
}

int64_t Session::step() const {
  int32_t i = module_->findGlobal("dlc.step");
  for (size_t g = 0; i < 0 && g < module_->globals().size(); ++g)
    if (module_->globals()[g].role == "step")
      i = static_cast<int32_t>(g);
  if (i < 0)
    return callCount_;
  const ValueInfo &info = module_->globals()[i];
  if (info.type.numElements != 1)
    return callCount_;
  Tensor scalar(info.type.dtype, {});
  std::memcpy(scalar.bytes(), globalData(i), scalar.byteSize());
  return isFloat(info.type.dtype) ? static_cast<int64_t>(scalar.getDouble(0))
                                  : scalar.getInt(0);
}

dlc_status_t Session::checkTensor(const FunctionInfo &f, const ValueInfo &value,
                                  const char *what, size_t index,
                                  const dlc_tensor_t &tensor) const {
  std::string which = f.name + ": " + what + " " + std::to_string(index) +
                      " ('" + value.name + "')";
  if (static_cast<int>(tensor.dtype) < DLC_BOOL ||
      static_cast<int>(tensor.dtype) > DLC_F64)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      which + " has unknown dtype " +
                          std::to_string(static_cast<int>(tensor.dtype)) +
                          ", expected " + value.type.describe());
  if (tensor.rank < 0 || (tensor.rank > 0 && !tensor.shape))
    return makeStatus(DLC_INVALID_ARGUMENT,
                      which + " has rank " + std::to_string(tensor.rank) +
                          (tensor.rank > 0 ? " and no shape" : "") +
                          ", expected " + value.type.describe());
  bool same = static_cast<DType>(tensor.dtype) == value.type.dtype &&
              static_cast<size_t>(tensor.rank) == value.type.shape.size();
  for (int32_t i = 0; same && i < tensor.rank; ++i)
    same = tensor.shape[i] == value.type.shape[i];
  if (!same)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      which + " is " + describeTensor(tensor) + ", expected " +
                          value.type.describe());
  if (!tensor.data && value.type.byteSize)
    return makeStatus(DLC_INVALID_ARGUMENT, which + " has no data");
  return nullptr;
}

dlc_status_t Session::call(const std::string &function,
                           const dlc_tensor_t *inputs, size_t numInputs,
                           const dlc_tensor_t *outputs, size_t numOutputs) {
  const auto &functions = module_->functions();
  size_t fi = 0;
  while (fi < functions.size() && functions[fi].name != function)
    ++fi;
  if (fi == functions.size())
    return makeStatus(DLC_NOT_FOUND, module_->name() + ": no function '" +
                                         function + "' (the module has " +
                                         module_->functionNames() + ")");
  const FunctionInfo &f = functions[fi];
  if (numInputs != f.inputs.size() || numOutputs != f.outputs.size() ||
      (numInputs && !inputs) || (numOutputs && !outputs))
    return makeStatus(DLC_INVALID_ARGUMENT,
                      f.name + ": takes " + std::to_string(f.inputs.size()) +
                          " inputs and " + std::to_string(f.outputs.size()) +
                          " outputs, got " + std::to_string(numInputs) +
                          " and " + std::to_string(numOutputs));
  for (size_t i = 0; i < numInputs; ++i)
    DLC_RETURN_IF_ERROR(
        checkTensor(f, f.arguments[f.inputs[i]], "input", i, inputs[i]));
  for (size_t i = 0; i < numOutputs; ++i)
    DLC_RETURN_IF_ERROR(
        checkTensor(f, f.results[f.outputs[i]], "output", i, outputs[i]));
  // Outputs are written while the plan still reads its inputs (a returned
  // value is computed straight into its output), so no output may share
  // memory with an input or another output.
  auto range = [](const dlc_tensor_t &t, const ValueInfo &info) {
    auto *begin = static_cast<const std::byte *>(t.data);
    return std::make_pair(begin, begin + info.type.byteSize);
  };
  for (size_t o = 0; o < numOutputs; ++o) {
    auto [begin, end] = range(outputs[o], f.results[f.outputs[o]]);
    auto overlaps =
        [&](const std::pair<const std::byte *, const std::byte *> &r) {
          return begin < r.second && r.first < end;
        };
    for (size_t i = 0; i < numInputs; ++i)
      if (overlaps(range(inputs[i], f.arguments[f.inputs[i]])))
        return makeStatus(DLC_INVALID_ARGUMENT,
                          f.name + ": output " + std::to_string(o) +
                              " shares memory with input " + std::to_string(i));
    for (size_t p = 0; p < o; ++p)
      if (overlaps(range(outputs[p], f.results[f.outputs[p]])))
        return makeStatus(DLC_INVALID_ARGUMENT,
                          f.name + ": output " + std::to_string(o) +
                              " shares memory with output " +
                              std::to_string(p));
  }

  argumentBases_.assign(f.arguments.size(), nullptr);
  resultBases_.assign(f.results.size(), nullptr);
  for (size_t i = 0; i < numInputs; ++i)
    argumentBases_[f.inputs[i]] = static_cast<std::byte *>(inputs[i].data);
  for (size_t i = 0; i < numOutputs; ++i)
    resultBases_[f.outputs[i]] = static_cast<std::byte *>(outputs[i].data);
  bool updates = false;
  for (size_t a = 0; a < f.arguments.size(); ++a)
    if (f.arguments[a].global >= 0)
      argumentBases_[a] = globalData(f.arguments[a].global);
  for (size_t r = 0; r < f.results.size(); ++r) {
    if (f.results[r].global < 0)
      continue;
    Global &g = globals_[f.results[r].global];
    resultBases_[r] = g.buffers[1 - g.current].data();
    updates = true;
  }

  cpu::LibraryThreads threads(device_->numThreads());
  DLC_RETURN_IF_ERROR(executors_[fi]->run(
      argumentBases_.data(), resultBases_.data(), scratch_.data(), stream_));

  for (const ValueInfo &r : f.results)
    if (r.global >= 0)
      globals_[r.global].current ^= 1;
  if (updates)
    ++callCount_;
  return nullptr;
}

} // namespace dlc

using namespace dlc;

extern "C" {

dlc_status_t dlc_session_create(dlc_module_t *module, dlc_device_t *device,
                                dlc_session_t **out) {
  return guardStatus("dlc_session_create", [&]() -> dlc_status_t {
    if (!module || !device || !out)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_create: no module, device or output");
    *out = nullptr;
    std::unique_ptr<Session> session;
    DLC_RETURN_IF_ERROR(
        Session::create(module->file, device->cpu, device->spec, session));
    *out = new dlc_session_s{std::move(session)};
    return nullptr;
  });
}

void dlc_session_release(dlc_session_t *session) { delete session; }

dlc_status_t dlc_session_set_profiling(dlc_session_t *session,
                                       int32_t enabled) {
  return guardStatus("dlc_session_set_profiling", [&]() -> dlc_status_t {
    if (!session)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_set_profiling: no session");
    session->session->setProfiling(enabled != 0);
    return nullptr;
  });
}

dlc_status_t dlc_session_write_profile(dlc_session_t *session,
                                       const char *path) {
  return guardStatus("dlc_session_write_profile", [&]() -> dlc_status_t {
    if (!session || !path || !*path)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_write_profile: no session or path");
    return session->session->writeProfile(path);
  });
}

dlc_status_t dlc_session_call(dlc_session_t *session, const char *function,
                              const dlc_tensor_t *inputs, size_t num_inputs,
                              const dlc_tensor_t *outputs, size_t num_outputs) {
  return guardStatus("dlc_session_call", [&]() -> dlc_status_t {
    if (!session || !function)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_call: no session or function name");
    return session->session->call(function, inputs, num_inputs, outputs,
                                  num_outputs);
  });
}

namespace {

/// `text` as a JSON string.
std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

} // namespace

void Session::setProfiling(bool on) {
  for (auto &executor : executors_)
    executor->setProfiling(on);
}

dlc_status_t Session::writeProfile(const std::string &path) const {
  struct Line {
    std::string function;
    cpu::FunctionExecutor::StepProfile step;
  };
  std::vector<Line> lines;
  for (size_t f = 0; f < executors_.size(); ++f)
    for (auto &step : executors_[f]->profile())
      lines.push_back({module_->functions()[f].name, step});
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line &a, const Line &b) {
                     return a.step.seconds > b.step.seconds;
                   });
  std::string text;
  for (const Line &l : lines) {
    char numbers[96];
    std::snprintf(numbers, sizeof(numbers),
                  "\"calls\": %lld, \"ms\": %.4f, \"ms_per_call\": %.4f}\n",
                  static_cast<long long>(l.step.calls), l.step.seconds * 1e3,
                  l.step.seconds * 1e3 / static_cast<double>(l.step.calls));
    text += "{\"function\": " + jsonString(l.function) +
            ", \"kind\": " + jsonString(l.step.kind) +
            ", \"step\": " + jsonString(l.step.label) + ", " + numbers;
  }
  FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    return makeStatus(DLC_IO_ERROR,
                      path + ": cannot be written: " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok &= std::fclose(file) == 0;
  if (!ok)
    return makeStatus(DLC_IO_ERROR,
                      path + ": cannot be written: " + std::strerror(errno));
  return nullptr;
}

namespace {

/// The global `name` of `session` and a check that `bytes` is its size.
dlc_status_t globalFor(dlc_session_t *session, const char *name, size_t bytes,
                       const void *data, size_t &index) {
  if (!session || !name)
    return makeStatus(DLC_INVALID_ARGUMENT, "no session or global name");
  DLC_RETURN_IF_ERROR(session->session->findGlobal(name, index));
  const ValueInfo &info = session->session->module().globals()[index];
  if (bytes != info.type.byteSize)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "global '" + info.name + "' is " + info.type.describe() +
                          " (" + std::to_string(info.type.byteSize) +
                          " bytes), got " + std::to_string(bytes) + " bytes");
  if (!data && bytes)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "global '" + info.name + "': no data");
  return nullptr;
}

} // namespace

dlc_status_t dlc_session_get_global(dlc_session_t *session, const char *name,
                                    void *data, size_t bytes) {
  return guardStatus("dlc_session_get_global", [&]() -> dlc_status_t {
    size_t index = 0;
    DLC_RETURN_IF_ERROR(globalFor(session, name, bytes, data, index));
    if (bytes)
      std::memcpy(data, session->session->globalData(index), bytes);
    return nullptr;
  });
}

dlc_status_t dlc_session_set_global(dlc_session_t *session, const char *name,
                                    const void *data, size_t bytes) {
  return guardStatus("dlc_session_set_global", [&]() -> dlc_status_t {
    size_t index = 0;
    DLC_RETURN_IF_ERROR(globalFor(session, name, bytes, data, index));
    if (bytes)
      std::memcpy(session->session->globalData(index), data, bytes);
    return nullptr;
  });
}

} // extern "C"
