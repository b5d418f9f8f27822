//===- CudaSession.cpp - A module opened on a GPU -------------------------===//
//
// Prepares every step once (kernel functions and launch shapes, cuBLASLt
// and cuDNN plans, resolved buffer references), then runs a call as: wait
// for its inputs' copy, replay (or first capture) the function's graph on
// the compute stream, copy the outputs back, synchronize. Errors name the
// driver or library call and the step's ONNX node.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaSession.h"

#include "runtime/core/Devices.h"
#include "runtime/core/Status.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace dlc::cuda {
namespace {

/// Every block the session allocates starts at the caching allocator's
/// 256-byte alignment; values packed into one block keep it too, which the
/// generated kernels' 16-byte vector accesses and the libraries rely on.
constexpr uint64_t kPackAlignment = 256;

/// The largest workspace a single cuBLASLt or cuDNN call may take: enough
/// for their fastest algorithms on training shapes, small beside a GPU.
constexpr size_t kMaxWorkspaceBytes = size_t(64) << 20;

/// Offsets of `values`' byte sizes packed into one block, and its size.
uint64_t pack(const std::vector<uint64_t> &sizes,
              std::vector<uint64_t> &offsets) {
  uint64_t end = 0;
  offsets.clear();
  for (uint64_t size : sizes) {
    offsets.push_back(end);
    end += (size + kPackAlignment - 1) / kPackAlignment * kPackAlignment;
  }
  return end;
}

} // namespace

dlc_status_t CudaDevice::createSession(std::shared_ptr<const ModuleFile> module,
                                       const std::string &deviceSpec,
                                       std::unique_ptr<Session> &out) {
  auto device = std::static_pointer_cast<CudaDevice>(shared_from_this());
  const std::string &name = module->name();
  DLC_RETURN_IF_ERROR(device->makeCurrent());
  std::unique_ptr<CudaSession> s(new CudaSession(module));
  s->device_ = device;
  const Driver &driver = device->driver();
  DLC_RETURN_IF_ERROR(
      prefixStatus(s->compute_.create(driver), name + ": compute stream"));
  DLC_RETURN_IF_ERROR(
      prefixStatus(s->copy_.create(driver), name + ": copy stream"));
  DLC_RETURN_IF_ERROR(prefixStatus(s->communication_.create(driver),
                                   name + ": communication stream"));
  DLC_RETURN_IF_ERROR(s->kernels_.load(*device, *module));

  // Globals: initial values copied in, or zeros.
  s->globals_.resize(module->globals().size());
  for (size_t i = 0; i < s->globals_.size(); ++i) {
    const ValueInfo &info = module->globals()[i];
    std::string what =
        name + ": global '" + info.name + "' (" + info.type.describe() + ")";
    for (int b = 0; b < (s->hasTwoBuffers(i) ? 2 : 1); ++b)
      DLC_RETURN_IF_ERROR(
          s->globals_[i][b].allocate(*device, info.type.byteSize, what));
    const auto *init = module->root().globals()->Get(i)->initial_value();
    CUdeviceptr address = s->globals_[i][0].address();
    size_t bytes = info.type.byteSize;
    if (!bytes)
      continue;
    // On the compute stream, which synchronizes with nothing else: the
    // module's bytes outlive the session, and creation synchronizes last.
    DLC_RETURN_IF_ERROR(
        init ? s->check(driver.cuMemcpyHtoDAsync(address, init->data(), bytes,
                                                 s->compute_.get()),
                        what + ": cuMemcpyHtoDAsync")
             : s->check(
                   driver.cuMemsetD8Async(address, 0, bytes, s->compute_.get()),
                   what + ": cuMemsetD8Async"));
  }

  if (const auto *constants = module->root().constants())
    for (uint32_t i = 0; i < constants->size(); ++i) {
      const auto *data = constants->Get(i)->data();
      size_t bytes = data ? data->size() : 0;
      std::string what = name + ": constant " + std::to_string(i);
      DeviceBlock block;
      DLC_RETURN_IF_ERROR(block.allocate(*device, bytes, what));
      if (bytes)
        DLC_RETURN_IF_ERROR(
            s->check(driver.cuMemcpyHtoDAsync(block.address(), data->data(),
                                              bytes, s->compute_.get()),
                     what + ": cuMemcpyHtoDAsync"));
      s->constants_.push_back(std::move(block));
    }

  s->functions_.resize(module->functions().size());
  for (size_t f = 0; f < s->functions_.size(); ++f)
    DLC_RETURN_IF_ERROR(s->prepare(module->functions()[f], s->functions_[f]));
  DLC_RETURN_IF_ERROR(s->workspace_.allocate(*device, s->workspaceBytes_,
                                             name + ": library workspace"));
  DLC_RETURN_IF_ERROR(s->check(driver.cuStreamSynchronize(s->compute_.get()),
                               name + ": cuStreamSynchronize"));
  out = std::move(s);
  return nullptr;
}

CudaSession::~CudaSession() {
  // Nothing may still run on the buffers about to return to the allocator.
  StatusOwner current(device_ ? device_->makeCurrent() : nullptr);
  if (device_ && !current.get()) {
    device_->driver().cuStreamSynchronize(compute_.get());
    device_->driver().cuStreamSynchronize(copy_.get());
    device_->driver().cuStreamSynchronize(communication_.get());
  }
}

dlc_status_t CudaSession::prepare(const FunctionInfo &info, Function &fn) {
  const ModuleFile &module = *module_;
  const Driver &driver = device_->driver();
  std::string where = module.name() + ": " + info.name;
  const fb::Function &plan = *info.plan;
  DLC_RETURN_IF_ERROR(
      fn.arena.allocate(*device_, plan.arena_size(), where + ": arena"));

  std::vector<uint64_t> sizes;
  for (uint32_t a : info.inputs)
    sizes.push_back(info.arguments[a].type.byteSize);
  fn.inputBytes = pack(sizes, fn.inputOffsets);
  for (int slot = 0; slot < kStagingSlots; ++slot) {
    DLC_RETURN_IF_ERROR(
        fn.inputs[slot].allocate(*device_, fn.inputBytes, where + ": inputs"));
    DLC_RETURN_IF_ERROR(
        prefixStatus(fn.pinnedInputs[slot].allocate(driver, fn.inputBytes),
                     where + ": pinned inputs"));
    DLC_RETURN_IF_ERROR(prefixStatus(
        fn.inputsCopied[slot].create(driver, false), where + ": inputs"));
  }
  sizes.clear();
  for (uint32_t r : info.outputs)
    sizes.push_back(info.results[r].type.byteSize);
  fn.outputBytes = pack(sizes, fn.outputOffsets);
  DLC_RETURN_IF_ERROR(
      fn.outputs.allocate(*device_, fn.outputBytes, where + ": outputs"));
  DLC_RETURN_IF_ERROR(
      prefixStatus(fn.pinnedOutputs.allocate(driver, fn.outputBytes),
                   where + ": pinned outputs"));
  fn.graphs.setDestroy([&driver](GraphCache::Graph graph) {
    driver.cuGraphExecDestroy(static_cast<CUgraphExec>(graph));
  });

  DLC_RETURN_IF_ERROR(prepareSteps(module, info, fn.steps,
                                   [this](const fb::Step &fbStep, Step &step) {
                                     return prepareStep(fbStep, step);
                                   }));
  fn.communicates =
      std::any_of(fn.steps.begin(), fn.steps.end(), [](const Step &step) {
        return step.collective && step.collective->communicates();
      });
  // Room for every collective in flight at once, so that none is left
  // untracked by a failed allocation once it is enqueued.
  if (fn.communicates)
    fn.inFlight.reserve(fn.steps.size());
  return nullptr;
}

dlc_status_t CudaSession::prepareStep(const fb::Step &fbStep, Step &step) {
  const ModuleFile &module = *module_;
  switch (step.kind) {
  case fb::StepKind::KernelStep: {
    const fb::KernelStep &k = *fbStep.step_as_KernelStep();
    const KernelModule::Kernel &kernel = kernels_.kernels()[k.kernel()];
    if (k.buffer_bytes())
      for (uint64_t bytes : *k.buffer_bytes())
        step.bytes += bytes;
    step.function = kernel.function;
    step.iterations = k.iterations();
    LaunchShape shape = launchShape(k.iterations(), k.threads_per_iteration(),
                                    kernel.blockSize, kernel.residentBlocks);
    step.threads = static_cast<unsigned>(shape.threads);
    step.blocks = static_cast<unsigned>(shape.blocks);
    return nullptr;
  }
  case fb::StepKind::MatmulStep: {
    const fb::MatmulStep &m = *fbStep.step_as_MatmulStep();
    if (!blas_)
      DLC_RETURN_IF_ERROR(prefixStatus(Blas::open(blas_), device_->spec()));
    DLC_RETURN_IF_ERROR(BlasMatmul::create(*blas_, m,
                                           module.root().cuda_allow_tf32(),
                                           kMaxWorkspaceBytes, step.matmul));
    workspaceBytes_ =
        std::max<uint64_t>(workspaceBytes_, step.matmul->workspaceBytes());
    return nullptr;
  }
  case fb::StepKind::ConvStep: {
    const fb::ConvStep &c = *fbStep.step_as_ConvStep();
    if (c.engine() == fb::ConvEngine::Direct)
      return makeStatus(DLC_UNIMPLEMENTED,
                        "the convolution demands the direct engine, which "
                        "runs on the CPU only; CUDA convolutions run on cuDNN");
    step.convOutput = convOutputRef(c.kind());
    if (!dnn_)
      DLC_RETURN_IF_ERROR(prefixStatus(Dnn::open(dnn_), device_->spec()));
    DnnConvOptions options;
    options.allowTf32 = module.root().cuda_allow_tf32();
    options.allowNondeterministic = module.root().cuda_allow_nondeterministic();
    options.maxWorkspaceBytes = kMaxWorkspaceBytes;
    options.driver = &device_->driver();
    options.stream = compute_.get();
    options.deviceName = device_->name();
    DLC_RETURN_IF_ERROR(DnnConv::create(*dnn_, c, options, step.conv));
    workspaceBytes_ =
        std::max<uint64_t>(workspaceBytes_, step.conv->workspaceBytes());
    return nullptr;
  }
  case fb::StepKind::CopyStep:
    step.bytes = fbStep.step_as_CopyStep()->bytes();
    return nullptr;
  case fb::StepKind::AllReduceStep:
  case fb::StepKind::ShardStep:
    return CollectiveStep::create(*device_, fbStep, step.collective);
  default:
    // ModuleFile refuses any other step kind.
    return makeStatus(DLC_INTERNAL, "unknown step kind");
  }
}

dlc_status_t CudaSession::readGlobal(size_t index, void *data) const {
  DLC_RETURN_IF_ERROR(device_->makeCurrent());
  const Driver &driver = device_->driver();
  const ValueInfo &info = module_->globals()[index];
  std::string what = module_->name() + ": global '" + info.name + "'";
  // On the compute stream, after whatever wrote the global last.
  DLC_RETURN_IF_ERROR(check(
      driver.cuMemcpyDtoHAsync(data, globals_[index][current(index)].address(),
                               info.type.byteSize, compute_.get()),
      what + ": cuMemcpyDtoHAsync"));
  return check(driver.cuStreamSynchronize(compute_.get()),
               what + ": cuStreamSynchronize");
}

dlc_status_t CudaSession::writeGlobal(size_t index, const void *data) {
  DLC_RETURN_IF_ERROR(device_->makeCurrent());
  const Driver &driver = device_->driver();
  const ValueInfo &info = module_->globals()[index];
  std::string what = module_->name() + ": global '" + info.name + "'";
  // Synchronized before returning: `data` is the caller's, and the next
  // call must see the whole value.
  DLC_RETURN_IF_ERROR(
      check(driver.cuMemcpyHtoDAsync(globals_[index][current(index)].address(),
                                     data, info.type.byteSize, compute_.get()),
            what + ": cuMemcpyHtoDAsync"));
  return check(driver.cuStreamSynchronize(compute_.get()),
               what + ": cuStreamSynchronize");
}

dlc_status_t CudaSession::stageInputs(size_t index, int slot,
                                      const dlc_tensor_t *inputs) {
  DLC_RETURN_IF_ERROR(device_->makeCurrent());
  const Driver &driver = device_->driver();
  const FunctionInfo &info = module_->functions()[index];
  Function &fn = functions_[index];
  std::string where = module_->name() + ": " + info.name + ": inputs";
  // The pinned buffer is reused once its last copy to the device is done;
  // the device buffer once the call that read it is, which a call's
  // synchronization already ensured.
  DLC_RETURN_IF_ERROR(
      check(driver.cuEventSynchronize(fn.inputsCopied[slot].get()),
            where + ": cuEventSynchronize"));
  for (size_t i = 0; i < info.inputs.size(); ++i)
    if (uint64_t bytes = info.arguments[info.inputs[i]].type.byteSize)
      std::memcpy(fn.pinnedInputs[slot].data() + fn.inputOffsets[i],
                  inputs[i].data, bytes);
  if (fn.inputBytes)
    DLC_RETURN_IF_ERROR(
        check(driver.cuMemcpyHtoDAsync(fn.inputs[slot].address(),
                                       fn.pinnedInputs[slot].data(),
                                       fn.inputBytes, copy_.get()),
              where + ": cuMemcpyHtoDAsync"));
  return check(driver.cuEventRecord(fn.inputsCopied[slot].get(), copy_.get()),
               where + ": cuEventRecord");
}

uint64_t CudaSession::resolve(const StepRef &ref, size_t numArguments,
                              const std::vector<uint64_t> &bases) const {
  switch (ref.kind) {
  case fb::BufferKind::Arena:
    return bases.back() + ref.offset;
  case fb::BufferKind::Argument:
    return bases[ref.index] + ref.offset;
  case fb::BufferKind::Result:
    return bases[numArguments + ref.index] + ref.offset;
  case fb::BufferKind::Constant:
    return constants_[ref.index].address() + ref.offset;
  }
  return 0;
}

dlc_status_t CudaSession::enqueueStep(Function &fn, size_t s,
                                      size_t numArguments,
                                      const std::vector<uint64_t> &bases) {
  const Driver &driver = device_->driver();
  CUstream stream = compute_.get();
  Step &step = fn.steps[s];
  auto at = [&](size_t i) {
    return resolve(step.refs[i], numArguments, bases);
  };
  switch (step.kind) {
  case fb::StepKind::KernelStep: {
    if (step.iterations == 0)
      return nullptr;
    // The kernel ABI (dlcm.fbs): the buffer pointers by value as one
    // parameter, then the iteration count.
    std::vector<uint64_t> pointers(step.refs.size());
    for (size_t i = 0; i < pointers.size(); ++i)
      pointers[i] = at(i);
    int64_t iterations = step.iterations;
    void *parameters[] = {pointers.data(), &iterations};
    return check(driver.cuLaunchKernel(step.function, step.blocks, 1, 1,
                                       step.threads, 1, 1, 0, stream,
                                       parameters, nullptr),
                 "cuLaunchKernel");
  }
  case fb::StepKind::MatmulStep:
    // k = 0: every element is an empty sum, which cuBLASLt does not write.
    if (size_t bytes = step.matmul->zeroFillBytes())
      return check(driver.cuMemsetD8Async(at(2), 0, bytes, stream),
                   "cuMemsetD8Async");
    return step.matmul->run(
        reinterpret_cast<const void *>(at(0)),
        reinterpret_cast<const void *>(at(1)),
        step.refs.size() > 3 ? reinterpret_cast<const void *>(at(3)) : nullptr,
        reinterpret_cast<void *>(at(2)),
        reinterpret_cast<void *>(workspace_.address()), stream);
  case fb::StepKind::ConvStep:
    // A sum of nothing (an empty operand) is zeros, which cuDNN does not
    // write: the output (x, w or y by the kind) is cleared instead.
    if (size_t bytes = step.conv->zeroFillBytes())
      return check(
          driver.cuMemsetD8Async(at(step.convOutput), 0, bytes, stream),
          "cuMemsetD8Async");
    return step.conv->run(
        reinterpret_cast<void *>(at(0)), reinterpret_cast<void *>(at(1)),
        reinterpret_cast<void *>(at(2)),
        reinterpret_cast<void *>(workspace_.address()), stream);
  case fb::StepKind::CopyStep: {
    uint64_t source = at(0), destination = at(1);
    if (!step.bytes || source == destination)
      return nullptr;
    // Device copies must not overlap (the CPU's memmove may); the memory
    // planner never asks for one that does.
    if (source < destination + step.bytes && destination < source + step.bytes)
      return makeStatus(DLC_INTERNAL, "copy between overlapping ranges");
    return check(
        driver.cuMemcpyDtoDAsync(destination, source, step.bytes, stream),
        "cuMemcpyDtoDAsync");
  }
  case fb::StepKind::AllReduceStep:
  case fb::StepKind::ShardStep: {
    std::vector<uint64_t> addresses(step.refs.size());
    for (size_t i = 0; i < addresses.size(); ++i)
      addresses[i] = at(i);
    // Session::call refuses a function with collectives without a
    // communicator, and attachCommunicator opened the device's for one
    // with collectives that communicate.
    CollectiveStep &collective = *step.collective;
    if (collective.communicates() && !deviceComm_)
      return makeStatus(DLC_INTERNAL, "no device communicator");
    DLC_RETURN_IF_ERROR(collective.issue(addresses, deviceComm_.get(),
                                         communicator()->rank(), stream,
                                         communication_.get(), profiling()));
    if (collective.communicates())
      fn.inFlight.push_back(s);
    return nullptr;
  }
  default:
    return nullptr;
  }
}

dlc_status_t CudaSession::joinDue(Function &fn, size_t s) {
  // The collectives whose outputs step `s` reads first, and those issued
  // before them (the communication stream runs them in issue order, and
  // the optimizer reads them in another).
  size_t due = 0;
  for (size_t i = 0; i < fn.inFlight.size(); ++i)
    if (fn.steps[fn.inFlight[i]].collective->waitStep() <= s)
      due = i + 1;
  for (size_t i = 0; i < due; ++i) {
    Step &issued = fn.steps[fn.inFlight[i]];
    DLC_RETURN_IF_ERROR(prefixStatus(
        issued.collective->join(compute_.get(), profiling()), issued.label));
  }
  fn.inFlight.erase(fn.inFlight.begin(), fn.inFlight.begin() + due);
  return nullptr;
}

dlc_status_t CudaSession::enqueue(size_t index,
                                  const std::vector<uint64_t> &bases) {
  const FunctionInfo &info = module_->functions()[index];
  Function &fn = functions_[index];
  std::string where = module_->name() + ": " + info.name;
  fn.inFlight.clear();
  for (size_t s = 0; s < fn.steps.size(); ++s) {
    DLC_RETURN_IF_ERROR(prefixStatus(joinDue(fn, s), where));
    DLC_RETURN_IF_ERROR(
        prefixStatus(enqueueStep(fn, s, info.arguments.size(), bases),
                     where + ": " + fn.steps[s].label));
  }
  return prefixStatus(joinDue(fn, fn.steps.size()), where);
}

dlc_status_t CudaSession::enqueueProfiled(size_t index,
                                          const std::vector<uint64_t> &bases) {
  const Driver &driver = device_->driver();
  const FunctionInfo &info = module_->functions()[index];
  Function &fn = functions_[index];
  std::string where = module_->name() + ": " + info.name;
  // An event before and after each step: the waits for collectives come
  // between them, timed on their own lines.
  while (profileEvents_.size() < 2 * fn.steps.size()) {
    Event event;
    DLC_RETURN_IF_ERROR(
        prefixStatus(event.create(driver, true), where + ": profiling"));
    profileEvents_.push_back(std::move(event));
  }
  auto record = [&](size_t event) {
    return check(
        driver.cuEventRecord(profileEvents_[event].get(), compute_.get()),
        where + ": cuEventRecord");
  };
  fn.inFlight.clear();
  for (size_t i = 0; i < fn.steps.size(); ++i) {
    DLC_RETURN_IF_ERROR(prefixStatus(joinDue(fn, i), where));
    DLC_RETURN_IF_ERROR(record(2 * i));
    DLC_RETURN_IF_ERROR(
        prefixStatus(enqueueStep(fn, i, info.arguments.size(), bases),
                     where + ": " + fn.steps[i].label));
    DLC_RETURN_IF_ERROR(record(2 * i + 1));
  }
  DLC_RETURN_IF_ERROR(prefixStatus(joinDue(fn, fn.steps.size()), where));
  DLC_RETURN_IF_ERROR(synchronize(fn, where));
  for (size_t i = 0; i < fn.steps.size(); ++i) {
    Step &step = fn.steps[i];
    float ms = 0;
    DLC_RETURN_IF_ERROR(
        check(driver.cuEventElapsedTime(&ms, profileEvents_[2 * i].get(),
                                        profileEvents_[2 * i + 1].get()),
              where + ": cuEventElapsedTime"));
    step.milliseconds += ms;
    ++step.calls;
    if (step.collective && step.collective->communicates()) {
      float collectiveMs = 0, exposedMs = 0;
      DLC_RETURN_IF_ERROR(
          prefixStatus(step.collective->elapsed(collectiveMs, exposedMs),
                       where + ": " + step.label));
      step.collectiveMilliseconds += collectiveMs;
      step.exposedMilliseconds += exposedMs;
    }
  }
  return nullptr;
}

dlc_status_t CudaSession::launch(size_t index,
                                 const std::vector<uint64_t> &bases) {
  const Driver &driver = device_->driver();
  Function &fn = functions_[index];
  std::string where = module_->name() + ": " + module_->functions()[index].name;
  // The first call runs step by step: libraries load some kernels on first
  // use, which a capture must not be the one to see. Collectives are not
  // captured: their waits, enqueued from the host across two streams,
  // would have to become the graph's fork and join.
  if (!fn.warm || fn.captureFailed || fn.communicates) {
    DLC_RETURN_IF_ERROR(enqueue(index, bases));
    fn.warm = true;
    return nullptr;
  }
  auto exec = static_cast<CUgraphExec>(fn.graphs.find(bases));
  if (!exec) {
    // Capture records the launches instead of running them; a step that
    // cannot be captured (a library call that synchronizes) makes the
    // function run step by step from then on.
    DLC_RETURN_IF_ERROR(
        check(driver.cuStreamBeginCapture(compute_.get(),
                                          CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              where + ": cuStreamBeginCapture"));
    StatusOwner enqueued(enqueue(index, bases));
    CUgraph graph = nullptr;
    StatusOwner ended(check(driver.cuStreamEndCapture(compute_.get(), &graph),
                            where + ": cuStreamEndCapture"));
    StatusOwner instantiated(
        enqueued.get() || ended.get()
            ? nullptr
            : check(driver.cuGraphInstantiate(&exec, graph, 0),
                    where + ": cuGraphInstantiate"));
    if (graph)
      driver.cuGraphDestroy(graph);
    if (enqueued.get() || ended.get() || instantiated.get()) {
      fn.captureFailed = true;
      return enqueue(index, bases);
    }
    fn.graphs.insert(bases, exec);
  }
  return check(driver.cuGraphLaunch(exec, compute_.get()),
               where + ": cuGraphLaunch");
}

dlc_status_t CudaSession::synchronize(const Function &fn,
                                      const std::string &where) {
  const Driver &driver = device_->driver();
  auto wait = [&](const Stream &stream) {
    return check(driver.cuStreamSynchronize(stream.get()),
                 where + ": cuStreamSynchronize");
  };
  if (!fn.communicates || !deviceComm_)
    return wait(compute_);
  // The communication stream first, through the device communicator's
  // bounded wait, which names the collective in flight if it times out:
  // after a failure it may hold collectives the compute stream never
  // joined. Its clock starts once the call is enqueued, so it also covers
  // the compute still queued before the last collective (a step far
  // shorter than --comm-timeout's 300 s). Whatever happens, both streams
  // are then waited for (an aborted NCCL communicator ends its kernels):
  // nothing may still run on the call's buffers when it returns.
  dlc_status_t status =
      prefixStatus(deviceComm_->synchronize(communication_.get()), where);
  for (const Stream *stream : {&communication_, &compute_}) {
    dlc_status_t waited = wait(*stream);
    if (!status)
      status = waited;
    else
      dlc_status_free(waited);
  }
  return status;
}

dlc_status_t CudaSession::attachCommunicator(Communicator *comm) {
  // The old communicator goes first, whatever fails after.
  deviceComm_.reset();
  DLC_RETURN_IF_ERROR(device_->makeCurrent());
  // Graphs bake in the rank a RankShard step copies.
  for (Function &fn : functions_)
    fn.graphs.clear();
  bool communicates =
      std::any_of(functions_.begin(), functions_.end(),
                  [](const Function &fn) { return fn.communicates; });
  if (!comm || !communicates)
    return nullptr;
  return prefixStatus(openDeviceCommunicator(*comm, *device_, deviceComm_),
                      module_->name() + ": " + device_->spec() +
                          ": opening the ranks' device communicator");
}

dlc_status_t CudaSession::execute(size_t index, const dlc_tensor_t *inputs,
                                  int slot, const dlc_tensor_t *outputs) {
  DLC_RETURN_IF_ERROR(device_->makeCurrent());
  const Driver &driver = device_->driver();
  const FunctionInfo &info = module_->functions()[index];
  Function &fn = functions_[index];
  std::string where = module_->name() + ": " + info.name;
  if (inputs)
    DLC_RETURN_IF_ERROR(stageInputs(index, slot, inputs));

  // Bases: the arguments, the results, then the arena.
  std::vector<uint64_t> bases(info.arguments.size() + info.results.size() + 1);
  for (size_t i = 0; i < info.inputs.size(); ++i)
    bases[info.inputs[i]] = fn.inputs[slot].address() + fn.inputOffsets[i];
  for (size_t i = 0; i < info.outputs.size(); ++i)
    bases[info.arguments.size() + info.outputs[i]] =
        fn.outputs.address() + fn.outputOffsets[i];
  for (size_t a = 0; a < info.arguments.size(); ++a)
    if (int32_t g = info.arguments[a].global; g >= 0)
      bases[a] = globals_[g][current(g)].address();
  for (size_t r = 0; r < info.results.size(); ++r)
    if (int32_t g = info.results[r].global; g >= 0)
      bases[info.arguments.size() + r] = globals_[g][1 - current(g)].address();
  bases.back() = fn.arena.address();

  DLC_RETURN_IF_ERROR(check(
      driver.cuStreamWaitEvent(compute_.get(), fn.inputsCopied[slot].get(), 0),
      where + ": cuStreamWaitEvent"));
  dlc_status_t status =
      profiling() ? enqueueProfiled(index, bases) : launch(index, bases);
  if (!status && fn.outputBytes)
    status = check(driver.cuMemcpyDtoHAsync(fn.pinnedOutputs.data(),
                                            fn.outputs.address(),
                                            fn.outputBytes, compute_.get()),
                   where + ": outputs: cuMemcpyDtoHAsync");
  // Also after a failure: what was enqueued must finish before the next
  // call may reuse its buffers.
  StatusOwner synchronized(synchronize(fn, where));
  if (status)
    return status;
  if (synchronized.get())
    return synchronized.release();
  for (size_t i = 0; i < info.outputs.size(); ++i)
    if (uint64_t bytes = info.results[info.outputs[i]].type.byteSize)
      std::memcpy(outputs[i].data,
                  fn.pinnedOutputs.data() + fn.outputOffsets[i], bytes);
  return nullptr;
}

namespace {

/// A convolution's engine choice as JSON members: the engine's index among
/// the candidates, their count, and when they were measured the chosen
/// and the fastest engine's milliseconds (the fastest may be one that
/// determinism rules out).
std::string engineDetail(const DnnEngineChoice &choice) {
  std::string text = "\"engine\": " + std::to_string(choice.chosen) +
                     ", \"engines\": " + std::to_string(choice.candidates);
  if (choice.chosenMs >= 0) {
    char numbers[96];
    std::snprintf(numbers, sizeof(numbers),
                  ", \"engine_ms\": %.4f, \"fastest_engine_ms\": %.4f",
                  choice.chosenMs, choice.fastestMs);
    text += numbers;
  }
  return text;
}

} // namespace

std::vector<Session::ProfileLine> CudaSession::profile() const {
  std::vector<ProfileLine> lines;
  for (size_t f = 0; f < functions_.size(); ++f)
    for (const Step &step : functions_[f].steps) {
      if (!step.calls)
        continue;
      std::string detail;
      if (step.conv) {
        detail = engineDetail(step.conv->engineChoice());
      } else if (step.collective && step.collective->communicates()) {
        // As the CPU reports its collectives (cpu/CpuSession.cpp).
        char text[128];
        std::snprintf(text, sizeof(text),
                      "\"collective_ms\": %.4f, \"exposed_ms\": %.4f",
                      step.collectiveMilliseconds, step.exposedMilliseconds);
        detail = text;
      }
      lines.push_back(
          {module_->functions()[f].name, fb::EnumNameStepKind(step.kind),
           step.label, step.calls, step.milliseconds / 1e3,
           step.kind == fb::StepKind::KernelStep ? step.bytes : 0, detail});
    }
  return lines;
}

} // namespace dlc::cuda
