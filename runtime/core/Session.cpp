//===- Session.cpp - A module opened on a device --------------------------===//
//
// What every device's session shares: the checks of a caller's tensors,
// which buffer of each global is current (swapped only after a call
// succeeds), the step count, profiles as JSON lines, and the C API's session
// calls, which dispatch to the device (checkpoints and export are
// SessionCheckpoint.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Session.h"

#include "runtime/comm/RankLayout.h"
#include "runtime/core/Devices.h"
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

Session::Session(std::shared_ptr<const ModuleFile> module)
    : module_(std::move(module)) {
  staged_.resize(module_->functions().size());
  updated_.assign(module_->globals().size(), false);
  current_.assign(module_->globals().size(), 0);
  for (const FunctionInfo &f : module_->functions())
    for (const ValueInfo &r : f.results)
      if (r.global >= 0)
        updated_[r.global] = true;
}

dlc_status_t Session::findGlobal(const std::string &name, size_t &index) const {
  int32_t i = module_->findGlobal(name);
  if (i < 0)
    return makeStatus(DLC_NOT_FOUND,
                      module_->name() + ": no global '" + name + "'");
  index = static_cast<size_t>(i);
  return nullptr;
}

dlc_status_t Session::setGlobal(size_t index, const void *data) {
  const std::vector<ValueInfo> &globals = module_->globals();
  if (globals[index].copyOf >= 0)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "global '" + globals[index].name + "' is the session's " +
                          dtypeName(globals[index].type.dtype) + " copy of '" +
                          globals[globals[index].copyOf].name +
                          "': set that one");
  DLC_RETURN_IF_ERROR(writeGlobal(index, data));
  for (const ValueInfo &copy : globals)
    if (copy.copyOf == static_cast<int32_t>(index))
      DLC_RETURN_IF_ERROR(writeCopy(copy, static_cast<const float *>(data)));
  return nullptr;
}

dlc_status_t Session::refreshCopies() {
  std::vector<float> source;
  for (const ValueInfo &copy : module_->globals()) {
    if (copy.copyOf < 0)
      continue;
    source.resize(copy.type.numElements);
    DLC_RETURN_IF_ERROR(readGlobal(copy.copyOf, source.data()));
    DLC_RETURN_IF_ERROR(writeCopy(copy, source.data()));
  }
  return nullptr;
}

dlc_status_t Session::writeCopy(const ValueInfo &copy, const float *value) {
  std::vector<uint16_t> narrow(copy.type.numElements);
  narrowFromFloat(copy.type.dtype, value, narrow.data(), narrow.size());
  return writeGlobal(copy.global, narrow.data());
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
  dlc_status_t status = readGlobal(static_cast<size_t>(i), scalar.bytes());
  if (status) {
    // Only a device failure can stop this read; the caller sees that
    // failure on its next call.
    dlc_status_free(status);
    return callCount_;
  }
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

dlc_status_t Session::findFunction(const std::string &function,
                                   size_t &index) const {
  const auto &functions = module_->functions();
  index = 0;
  while (index < functions.size() && functions[index].name != function)
    ++index;
  if (index == functions.size())
    return makeStatus(DLC_NOT_FOUND, module_->name() + ": no function '" +
                                         function + "' (the module has " +
                                         module_->functionNames() + ")");
  return nullptr;
}

dlc_status_t Session::stage(const std::string &function,
                            const dlc_tensor_t *inputs, size_t numInputs) {
  size_t fi = 0;
  DLC_RETURN_IF_ERROR(findFunction(function, fi));
  const FunctionInfo &f = module_->functions()[fi];
  if (f.inputs.empty())
    return makeStatus(DLC_INVALID_ARGUMENT,
                      f.name + ": takes no inputs; there is nothing to stage");
  if (numInputs != f.inputs.size() || (numInputs && !inputs))
    return makeStatus(DLC_INVALID_ARGUMENT,
                      f.name + ": takes " + std::to_string(f.inputs.size()) +
                          " inputs, " + std::to_string(numInputs) +
                          " were staged");
  for (size_t i = 0; i < numInputs; ++i)
    DLC_RETURN_IF_ERROR(
        checkTensor(f, f.arguments[f.inputs[i]], "input", i, inputs[i]));
  int slot = freeSlot(fi);
  if (slot < 0)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      f.name + ": the inputs of " +
                          std::to_string(kStagingSlots) +
                          " calls are staged already (call it first)");
  DLC_RETURN_IF_ERROR(stageInputs(fi, slot, inputs));
  staged_[fi].push_back(slot);
  return nullptr;
}

int Session::freeSlot(size_t function) const {
  const std::deque<int> &busy = staged_[function];
  for (int slot = 0; slot < kStagingSlots; ++slot)
    if (std::find(busy.begin(), busy.end(), slot) == busy.end())
      return slot;
  return -1;
}

dlc_status_t Session::setCommunicator(Communicator *comm) {
  const uint32_t ranks = module_->ranks();
  const uint32_t tensorRanks = module_->tensorParallelRanks();
  const uint32_t stages = module_->pipelineStages();
  if (comm && static_cast<uint32_t>(comm->size()) != ranks)
    return makeStatus(
        DLC_INVALID_ARGUMENT,
        module_->name() + ": compiled for " +
            std::to_string(module_->dataParallelRanks()) +
            " data-parallel rank(s)" +
            (tensorRanks > 1 ? " of " + std::to_string(tensorRanks) +
                                   " tensor-parallel ranks each"
                             : std::string()) +
            (stages > 1
                 ? " in each of " + std::to_string(stages) + " pipeline stages"
                 : std::string()) +
            ", but the communicator has " + std::to_string(comm->size()) +
            (tensorRanks > 1 || stages > 1
                 ? std::string(" (mpirun -np must be dlc-compile's --dp N") +
                       (tensorRanks > 1 ? " times its --tp N" : "") +
                       (stages > 1 ? " times its --pp N" : "") + ")"
                 : std::string(" (dlc-compile --dp N must equal mpirun -np "
                               "N)")));
  communicator_ = nullptr;
  tensorCommunicator_ = nullptr;
  stageCommunicator_ = nullptr;
  stage_ = -1;
  jobRank_ = comm ? comm->rank() : 0;
  if (comm && (tensorRanks > 1 || stages > 1)) {
    // The collectives of gradients run among the rank's replicas, the
    // tensor-parallel ones among its tensor group, the transfers among its
    // stage group (RankLayout).
    const RankLayout layout{static_cast<int>(module_->dataParallelRanks()),
                            static_cast<int>(tensorRanks),
                            static_cast<int>(stages)};
    const int rank = comm->rank();
    std::unique_ptr<Communicator> groups[3];
    DLC_RETURN_IF_ERROR(
        comm->split(layout.replicaColor(rank), rank, groups[0]));
    if (tensorRanks > 1)
      DLC_RETURN_IF_ERROR(
          comm->split(layout.tensorColor(rank), rank, groups[1]));
    if (stages > 1)
      DLC_RETURN_IF_ERROR(
          comm->split(layout.stageColor(rank), rank, groups[2]));
    if (tensorRanks > 1)
      DLC_RETURN_IF_ERROR(takeTensorSlices(layout.tensorRank(rank)));
    DLC_RETURN_IF_ERROR(attachCommunicator(groups[0].get()));
    for (int g = 0; g < 3; ++g)
      ownedComms_[g] = std::move(groups[g]);
    communicator_ = ownedComms_[0].get();
    tensorCommunicator_ = ownedComms_[1].get();
    stageCommunicator_ = ownedComms_[2].get();
    if (stages > 1)
      stage_ = layout.stage(rank);
    return nullptr;
  }
  DLC_RETURN_IF_ERROR(attachCommunicator(comm));
  communicator_ = comm;
  for (std::unique_ptr<Communicator> &owned : ownedComms_)
    owned.reset();
  return nullptr;
}

dlc_status_t Session::gatherStages() {
  if (!stageCommunicator_ || !stagesDiverged_)
    return nullptr;
  // Each global's stage: the first that holds it after a call updating it.
  std::vector<int32_t> owner(module_->globals().size(), -1);
  for (const FunctionInfo &f : module_->functions())
    for (const ValueInfo &r : f.results)
      if (r.global >= 0 && r.stage >= 0 && owner[r.global] < 0)
        owner[r.global] = r.stage;
  std::vector<std::byte> value;
  for (size_t g = 0; g < owner.size(); ++g) {
    if (owner[g] < 0)
      continue;
    const size_t bytes = module_->globals()[g].type.byteSize;
    value.resize(bytes);
    if (stage_ == owner[g])
      DLC_RETURN_IF_ERROR(readGlobal(g, value.data()));
    DLC_RETURN_IF_ERROR(prefixStatus(
        stageCommunicator_->broadcast(value.data(), bytes, DLC_U8, owner[g]),
        module_->name() + ": gathering global '" + module_->globals()[g].name +
            "' from pipeline stage " + std::to_string(owner[g])));
    if (stage_ != owner[g])
      DLC_RETURN_IF_ERROR(writeGlobal(g, value.data()));
  }
  stagesDiverged_ = false;
  return nullptr;
}

dlc_status_t Session::checkGathered(size_t index, const char *what) const {
  if (!stagesDiverged_)
    return nullptr;
  for (const FunctionInfo &f : module_->functions())
    for (const ValueInfo &r : f.results)
      if (static_cast<size_t>(r.global) == index && r.stage >= 0 &&
          r.stage != stage_)
        return makeStatus(
            DLC_FAILED_PRECONDITION,
            module_->name() + ": " + what + " global '" +
                module_->globals()[index].name + "', which pipeline stage " +
                std::to_string(r.stage) + " updates, on a rank of stage " +
                std::to_string(stage_) +
                ": gather the stages first "
                "(dlc_session_gather_stages, on every rank)");
  return nullptr;
}

dlc_status_t Session::shareStageOutputs(const FunctionInfo &f,
                                        const dlc_tensor_t *outputs) {
  for (size_t o = 0; o < f.outputs.size(); ++o) {
    const ValueInfo &r = f.results[f.outputs[o]];
    if (r.stage < 0)
      continue;
    DLC_RETURN_IF_ERROR(
        prefixStatus(stageCommunicator_->broadcast(
                         outputs[o].data, r.type.byteSize, DLC_U8, r.stage),
                     f.name + ": output '" + r.name + "' from pipeline stage " +
                         std::to_string(r.stage)));
  }
  return nullptr;
}

dlc_status_t Session::lastCollectiveWait(double &) const {
  return makeStatus(DLC_UNAVAILABLE,
                    module_->name() + ": a " + module_->target() +
                        " session does not measure its calls' waits for "
                        "collectives");
}

dlc_status_t Session::takeTensorSlices(int tensorRank) {
  const auto *globals = module_->root().globals();
  for (size_t i = 0; i < module_->globals().size(); ++i) {
    const ValueInfo &g = module_->globals()[i];
    const auto *init = globals->Get(i)->initial_value();
    // Copies follow their sources; zeros are every slice's; a shard's
    // initial value is its own.
    if (g.tpSplit < 0 || !init || g.copyOf >= 0 || g.sharded)
      continue;
    DLC_RETURN_IF_ERROR(
        setGlobal(i, init->data() + tensorRank * g.type.byteSize));
  }
  return nullptr;
}

bool Session::hasCollectives(const FunctionInfo &f) {
  if (const auto *steps = f.plan->steps())
    for (const fb::Step *step : *steps)
      if (step->step_type() == fb::StepKind::AllReduceStep ||
          step->step_type() == fb::StepKind::ShardStep ||
          step->step_type() == fb::StepKind::TransferStep)
        return true;
  return false;
}

bool Session::runsInStages(const FunctionInfo &f) {
  if (const auto *steps = f.plan->steps())
    for (const fb::Step *step : *steps)
      if (step->stage() >= 0)
        return true;
  return false;
}

dlc_status_t Session::call(const std::string &function,
                           const dlc_tensor_t *inputs, size_t numInputs,
                           const dlc_tensor_t *outputs, size_t numOutputs) {
  size_t fi = 0;
  DLC_RETURN_IF_ERROR(findFunction(function, fi));
  const FunctionInfo &f = module_->functions()[fi];
  bool fromStaged = !inputs && !numInputs && !f.inputs.empty();
  if ((!fromStaged && numInputs != f.inputs.size()) ||
      numOutputs != f.outputs.size() || (numInputs && !inputs) ||
      (numOutputs && !outputs))
    return makeStatus(DLC_INVALID_ARGUMENT,
                      f.name + ": takes " + std::to_string(f.inputs.size()) +
                          " inputs and " + std::to_string(f.outputs.size()) +
                          " outputs, got " + std::to_string(numInputs) +
                          " and " + std::to_string(numOutputs));
  if (!communicator_ && (hasCollectives(f) || runsInStages(f))) {
    uint32_t ranks = module_->ranks();
    std::string compiled =
        "--dp " + std::to_string(module_->dataParallelRanks());
    if (module_->tensorParallelRanks() > 1)
      compiled += " --tp " + std::to_string(module_->tensorParallelRanks());
    if (module_->pipelineStages() > 1)
      compiled += " --pp " + std::to_string(module_->pipelineStages());
    return makeStatus(
        DLC_FAILED_PRECONDITION,
        module_->name() + ": " + f.name + ": runs as one of the " +
            std::to_string(ranks) +
            (module_->ranks() > module_->dataParallelRanks()
                 ? " "
                 : " data-parallel ") +
            "ranks the module was compiled for (dlc-compile " + compiled +
            "); the session has no communicator: run one process per rank "
            "(mpirun -np " +
            std::to_string(ranks) + ") and hand it one (dlc_session_set_comm)");
  }
  int slot = fromStaged ? (staged_[fi].empty() ? -1 : staged_[fi].front())
                        : freeSlot(fi);
  if (slot < 0)
    return makeStatus(DLC_FAILED_PRECONDITION,
                      fromStaged ? f.name + ": called without inputs, and "
                                            "none were staged"
                                 : f.name + ": called with inputs while " +
                                       std::to_string(kStagingSlots) +
                                       " calls' inputs are staged");
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

  // Staged inputs are used up by a call whose arguments passed their
  // checks, whether or not it then succeeds.
  if (fromStaged)
    staged_[fi].pop_front();
  // A function that every stage runs whole reads every global: each must
  // be the one its stage updated.
  const bool inStages = stageCommunicator_ && runsInStages(f);
  if (stageCommunicator_ && !inStages)
    DLC_RETURN_IF_ERROR(gatherStages());
  DLC_RETURN_IF_ERROR(execute(fi, inputs, slot, outputs));
  if (inStages)
    DLC_RETURN_IF_ERROR(shareStageOutputs(f, outputs));

  bool updates = false;
  for (const ValueInfo &r : f.results)
    if (r.global >= 0) {
      current_[r.global] ^= 1;
      updates = true;
    }
  if (updates)
    ++callCount_;
  stagesDiverged_ |= inStages && updates;
  return nullptr;
}

} // namespace dlc

using namespace dlc;

namespace {

/// A module runs only on devices of the target it was compiled for: any
/// other is DLC_INVALID_ARGUMENT naming the dlc-compile flag that fits
/// `device`, a target this runtime does not know DLC_UNIMPLEMENTED.
dlc_status_t checkTarget(const ModuleFile &module, const Device &device,
                         const std::string &spec) {
  const std::string &target = module.target();
  if (target == device.target())
    return nullptr;
  if (target != "cpu" && target != "cuda")
    return makeStatus(DLC_UNIMPLEMENTED,
                      module.name() + ": target '" + target +
                          "' is not built into this runtime");
  return makeStatus(DLC_INVALID_ARGUMENT,
                    module.name() + ": compiled for '" + target +
                        "', cannot run on device '" + spec +
                        "' (dlc-compile --target " + device.target() + ")");
}

} // namespace

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
        checkTarget(*module->file, *device->device, device->spec));
    DLC_RETURN_IF_ERROR(
        device->device->createSession(module->file, device->spec, session));
    DLC_RETURN_IF_ERROR(session->refreshCopies());
    *out = new dlc_session_s{std::move(session)};
    return nullptr;
  });
}

void dlc_session_release(dlc_session_t *session) { delete session; }

dlc_status_t dlc_session_set_comm(dlc_session_t *session, dlc_comm_t *comm) {
  return guardStatus("dlc_session_set_comm", [&]() -> dlc_status_t {
    if (!session)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_set_comm: no session");
    return session->session->setCommunicator(comm ? comm->comm.get() : nullptr);
  });
}

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

dlc_status_t dlc_session_collective_wait(const dlc_session_t *session,
                                         double *seconds) {
  return guardStatus("dlc_session_collective_wait", [&]() -> dlc_status_t {
    if (!session || !seconds)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_collective_wait: no session or output");
    return session->session->lastCollectiveWait(*seconds);
  });
}

dlc_status_t dlc_session_gather_stages(dlc_session_t *session) {
  return guardStatus("dlc_session_gather_stages", [&]() -> dlc_status_t {
    if (!session)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_gather_stages: no session");
    return session->session->gatherStages();
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

dlc_status_t dlc_session_stage_inputs(dlc_session_t *session,
                                      const char *function,
                                      const dlc_tensor_t *inputs,
                                      size_t num_inputs) {
  return guardStatus("dlc_session_stage_inputs", [&]() -> dlc_status_t {
    if (!session || !function)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_session_stage_inputs: no session or function "
                        "name");
    return session->session->stage(function, inputs, num_inputs);
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

dlc_status_t Session::writeProfile(const std::string &path) const {
  std::vector<ProfileLine> lines = profile();
  std::stable_sort(lines.begin(), lines.end(),
                   [](const ProfileLine &a, const ProfileLine &b) {
                     return a.seconds > b.seconds;
                   });
  std::string text;
  for (const ProfileLine &l : lines) {
    char numbers[96];
    std::snprintf(numbers, sizeof(numbers),
                  "\"calls\": %lld, \"ms\": %.4f, \"ms_per_call\": %.4f}\n",
                  static_cast<long long>(l.calls), l.seconds * 1e3,
                  l.seconds * 1e3 / static_cast<double>(l.calls));
    text += "{\"function\": " + jsonString(l.function) +
            ", \"kind\": " + jsonString(l.kind) +
            ", \"step\": " + jsonString(l.label) + ", " +
            (l.bytes ? "\"bytes\": " + std::to_string(l.bytes) + ", " : "") +
            (l.detail.empty() ? "" : l.detail + ", ") + numbers;
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
    DLC_RETURN_IF_ERROR(session->session->checkGathered(index, "reading"));
    return bytes ? session->session->readGlobal(index, data) : nullptr;
  });
}

dlc_status_t dlc_session_set_global(dlc_session_t *session, const char *name,
                                    const void *data, size_t bytes) {
  return guardStatus("dlc_session_set_global", [&]() -> dlc_status_t {
    size_t index = 0;
    DLC_RETURN_IF_ERROR(globalFor(session, name, bytes, data, index));
    return bytes ? session->session->setGlobal(index, data) : nullptr;
  });
}

} // extern "C"
