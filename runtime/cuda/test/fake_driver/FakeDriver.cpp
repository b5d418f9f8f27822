//===- FakeDriver.cpp - A CUDA driver that runs on the CPU ----------------===//
//
// libcuda.so.1 for testing the CUDA session where there is no GPU: put
// first on LD_LIBRARY_PATH, it is what runtime/cuda/Driver.cpp opens, and it
// implements every function Driver.h binds (this file defines them under
// cuda.h's names, whose macros give the versioned symbols the runtime binds)
// with the documented behaviour the session relies on:
//
// - one device ("dlc fake GPU", compute capability 9.0, 132 SMs, 16 GiB),
//   whose memory is host memory: a CUdeviceptr is a host address, and a
//   copy outside a live allocation is CUDA_ERROR_INVALID_VALUE;
// - streams that run their work in order, but only once the host waits for
//   it (cuStreamSynchronize, cuEventSynchronize, a copy to pageable memory,
//   a free) or another stream's work waits for it through an event: the
//   latest schedule a GPU may choose, so that a missing wait between the
//   copy and compute streams, or a pinned buffer refilled before its copy
//   ran, shows as wrong data;
// - asynchronous copies that read pinned memory when they run but pageable
//   memory when called (the driver stages it), and copies to pageable
//   memory that complete before returning;
// - stream capture: what is enqueued on a capturing stream is recorded, not
//   run (kernel parameters copied when recorded), into the graph that
//   cuStreamEndCapture returns and an executable graph replays. Calls the
//   driver refuses during a capture fail as it does and invalidate the
//   capture: synchronizing the capturing stream, allocating or freeing
//   memory from the capturing thread, a copy with pageable memory, a wait
//   for an event recorded outside the capture;
// - kernels from a library of host code (DLC_FAKE_KERNELS_LIBRARY, built
//   against tests/models/cuda_emulation/cuda_shim.h), run by its emulation
//   over the launch's grid; one it reports wrong leaves a sticky
//   CUDA_ERROR_LAUNCH_FAILED until the primary context is released, as a
//   fault on a GPU does;
// - counters, a trace of what ran, and injected failures (FakeDriver.h);
// - host work that a fake library (FakeNccl.cpp) enqueues on a stream.
//
// Not emulated, and refused with CUDA_ERROR_NOT_SUPPORTED rather than
// emulated wrongly: events recorded during a capture (fork and join across
// streams), 2-d and 3-d launches, launch parameters passed as `extra`, wait
// and instantiation flags, device attributes other than the capability and
// the SM count. Nor are: more than one device or context, the legacy
// default stream's implicit synchronization, warp-per-iteration kernels
// (the emulation reports their shuffles as errors), cuBLASLt and cuDNN, and
// module images (only their kind is checked: the kernels come from the
// host library, by name).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/test/fake_driver/FakeDriver.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kTotalMemory = size_t(16) << 30;
constexpr size_t kDeviceAlignment = 256;
constexpr size_t kPinnedAlignment = 4096;
constexpr int kMultiprocessors = 132;
constexpr int kMaxThreadsPerMultiprocessor = 2048;
constexpr int kMaxThreadsPerBlock = 1024;
/// The device time each piece of work takes, so that timing events around
/// any work measure a positive time.
constexpr double kMillisecondsPerOp = 0.01;

/// A kernel's host entry (DLC_EMU_ENTRY) and cuda_shim.cpp's launcher.
using Entry = void (*)(void *const *, long long);
using Launcher = const char *(*)(Entry, void *const *, long long, unsigned,
                                 unsigned, unsigned);

/// Work on a stream: its trace text and what it does.
struct Op {
  std::string what;
  std::function<void()> run;
};

/// A captured graph, or an executable one (a copy of a captured graph).
struct Graph {
  std::vector<Op> ops;
};

struct Stream {
  int id = 0;
  /// Work not run yet; `done` of the `enqueued` ops so far have run.
  std::deque<Op> pending;
  uint64_t enqueued = 0, done = 0;
  /// The capture in progress, if any.
  std::shared_ptr<Graph> capture;
  bool captureInvalid = false;
  CUstreamCaptureMode captureMode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::thread::id captureThread;
};

struct Event {
  bool timing = true;
  /// Its last record: the stream, the op's position there (1-based; 0:
  /// never recorded) and the device time it ran at (negative: not yet).
  std::shared_ptr<Stream> stream;
  uint64_t position = 0;
  double time = -1;
};

struct Kernel {
  std::string name;
  Entry entry = nullptr;
  unsigned long buffersBytes = 0;
  Launcher launch = nullptr;
};

struct Module {
  ~Module() {
    if (library)
      dlclose(library);
  }
  void *library = nullptr;
  Launcher launch = nullptr;
  std::vector<const void *> kernels;
};

/// Live driver objects of one kind, by handle.
template <typename T> class Handles {
public:
  template <typename Handle> Handle add(std::shared_ptr<T> object) {
    T *address = object.get();
    live_[address] = std::move(object);
    return reinterpret_cast<Handle>(address);
  }
  std::shared_ptr<T> find(const void *handle) const {
    auto it = live_.find(handle);
    return it == live_.end() ? nullptr : it->second;
  }
  bool erase(const void *handle) { return live_.erase(handle) > 0; }
  const std::map<const void *, std::shared_ptr<T>> &all() const {
    return live_;
  }

private:
  std::map<const void *, std::shared_ptr<T>> live_;
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  int contextRetains = 0;
  /// A kernel's failure, returned by every later call in the context.
  CUresult sticky = CUDA_SUCCESS;
  std::map<std::string, CUresult> injected;
  /// Allocations by base address: device memory and pinned host memory.
  std::map<uintptr_t, size_t> device, pinned;
  size_t deviceBytes = 0;
  Handles<Stream> streams;
  Handles<Event> events;
  Handles<Module> modules;
  Handles<Kernel> kernels;
  Handles<Graph> graphs, execs;
  /// CUstream 0.
  std::shared_ptr<Stream> nullStream = std::make_shared<Stream>();
  int streamsCreated = 0;
  double clock = 0;
  dlc_fake_counters_t counters = {};
  std::string trace;
};

State state;
/// The context a handle of the primary context points at.
char primaryContext;
thread_local bool contextCurrent = false;

enum class Needs { Nothing, Init, Context };

/// What every entry point checks first: an injected failure, cuInit, and
/// for calls in the context, a current context and no sticky error.
CUresult enter(const char *symbol, Needs needs) {
  auto injected = state.injected.find(symbol);
  if (injected != state.injected.end()) {
    CUresult error = injected->second;
    state.injected.erase(injected);
    return error;
  }
  if (needs == Needs::Nothing)
    return CUDA_SUCCESS;
  if (!state.initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  if (needs == Needs::Context && state.sticky)
    return state.sticky;
  if (needs == Needs::Context && !(contextCurrent && state.contextRetains))
    return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

/// The first statement of every entry point.
#define DLC_FAKE_ENTER(needs)                                                  \
  std::lock_guard<std::mutex> lock(state.mutex);                               \
  if (CUresult entered = enter(__func__, Needs::needs))                        \
  return entered

/// Whether [address, address + bytes) lies in one of `allocations`.
bool within(const std::map<uintptr_t, size_t> &allocations, uintptr_t address,
            size_t bytes) {
  auto it = allocations.upper_bound(address);
  if (it == allocations.begin())
    return false;
  --it;
  size_t offset = address - it->first;
  return offset < it->second && bytes <= it->second - offset;
}

std::shared_ptr<Stream> findStream(CUstream stream) {
  return stream ? state.streams.find(stream) : state.nullStream;
}

/// Runs `stream`'s work until `position` of its ops have run.
void runUntil(Stream &stream, uint64_t position) {
  while (stream.done < position) {
    Op op = std::move(stream.pending.front());
    stream.pending.pop_front();
    op.run();
    ++stream.done;
    state.clock += kMillisecondsPerOp;
    state.trace += "s" + std::to_string(stream.id) + " " + op.what + "\n";
  }
}

/// Runs all work (a host wait for the whole device).
CUresult synchronizeDevice() {
  runUntil(*state.nullStream, state.nullStream->enqueued);
  for (const auto &entry : state.streams.all())
    runUntil(*entry.second, entry.second->enqueued);
  return state.sticky;
}

/// Enqueues `op`, or records it into the capture in progress.
void enqueue(Stream &stream, Op op) {
  if (stream.capture) {
    stream.capture->ops.push_back(std::move(op));
    return;
  }
  stream.pending.push_back(std::move(op));
  ++stream.enqueued;
}

/// What the driver does with a call it refuses during a capture.
CUresult refuseInCapture(Stream &stream) {
  stream.captureInvalid = true;
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

/// Allocating or freeing memory is unsafe during a capture of the global
/// mode, or of the thread-local mode from its thread.
CUresult checkSafeDuringCaptures() {
  for (const auto &entry : state.streams.all()) {
    Stream &s = *entry.second;
    if (s.capture && (s.captureMode == CU_STREAM_CAPTURE_MODE_GLOBAL ||
                      (s.captureMode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
                       s.captureThread == std::this_thread::get_id())))
      return refuseInCapture(s);
  }
  return CUDA_SUCCESS;
}

/// Writes `message` to a module load's JIT error log, if it asked for one.
void writeJitLog(unsigned count, const CUjit_option *options, void **values,
                 const std::string &message) {
  char *log = nullptr;
  size_t size = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = static_cast<char *>(values[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (log && size)
    std::snprintf(log, size, "%s", message.c_str());
}

/// The errors the fake returns, with the driver's texts.
#define DLC_FAKE_ERRORS(X)                                                     \
  X(CUDA_SUCCESS, "no error")                                                  \
  X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                              \
  X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                 \
  X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                        \
  X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                       \
  X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")                \
  X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                      \
  X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                      \
  X(CUDA_ERROR_ILLEGAL_STATE,                                                  \
    "the operation cannot be performed in the present state")                  \
  X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                            \
  X(CUDA_ERROR_NOT_READY, "device not ready")                                  \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,                                        \
    "too many resources requested for launch")                                 \
  X(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")                    \
  X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                       \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,                                     \
    "operation not permitted when stream is capturing")                        \
  X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,                                     \
    "operation failed due to a previous error during capture")                 \
  X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION,                                       \
    "dependency created on uncaptured work in another stream")                 \
  X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,                                    \
    "attempt to terminate a thread-local capture sequence from another "       \
    "thread")                                                                  \
  X(CUDA_ERROR_UNKNOWN, "unknown error")

/// Sets `text` to the name (or description) of `error`.
CUresult describe(CUresult error, const char **text, bool name) {
  switch (error) {
#define DLC_FAKE_DESCRIBE(code, description)                                   \
  case code:                                                                   \
    *text = name ? #code : description;                                        \
    return CUDA_SUCCESS;
    DLC_FAKE_ERRORS(DLC_FAKE_DESCRIBE)
#undef DLC_FAKE_DESCRIBE
  default:
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

} // namespace

//===--- Initialization, errors, the device and its context ---------------===//

CUresult CUDAAPI cuInit(unsigned int flags) {
  DLC_FAKE_ENTER(Nothing);
  if (flags)
    return CUDA_ERROR_INVALID_VALUE;
  state.initialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
  DLC_FAKE_ENTER(Nothing);
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **name) {
  return describe(error, name, true);
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
  return describe(error, text, false);
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  DLC_FAKE_ENTER(Init);
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  DLC_FAKE_ENTER(Init);
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice device) {
  DLC_FAKE_ENTER(Init);
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!name || length <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(length), "dlc fake GPU");
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                      CUdevice device) {
  DLC_FAKE_ENTER(Init);
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = 9;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = 0;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = kMultiprocessors;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_NOT_SUPPORTED;
  }
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice device) {
  DLC_FAKE_ENTER(Init);
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  DLC_FAKE_ENTER(Init);
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  ++state.contextRetains;
  *context = reinterpret_cast<CUcontext>(&primaryContext);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
  DLC_FAKE_ENTER(Init);
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!state.contextRetains)
    return CUDA_ERROR_INVALID_CONTEXT;
  // The last release destroys the context, and a sticky error with it.
  if (--state.contextRetains == 0)
    state.sticky = CUDA_SUCCESS;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
  DLC_FAKE_ENTER(Init);
  if (context && (context != reinterpret_cast<CUcontext>(&primaryContext) ||
                  !state.contextRetains))
    return CUDA_ERROR_INVALID_CONTEXT;
  contextCurrent = context != nullptr;
  return CUDA_SUCCESS;
}

//===--- Memory -----------------------------------------------------------===//

CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total) {
  DLC_FAKE_ENTER(Context);
  *free = kTotalMemory - state.deviceBytes;
  *total = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *address, size_t bytes) {
  DLC_FAKE_ENTER(Context);
  if (CUresult refused = checkSafeDuringCaptures())
    return refused;
  if (!address || !bytes)
    return CUDA_ERROR_INVALID_VALUE;
  size_t size =
      (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
  void *memory = size <= kTotalMemory - state.deviceBytes
                     ? std::aligned_alloc(kDeviceAlignment, size)
                     : nullptr;
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  state.device[reinterpret_cast<uintptr_t>(memory)] = size;
  state.deviceBytes += size;
  *address = reinterpret_cast<CUdeviceptr>(memory);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr address) {
  DLC_FAKE_ENTER(Context);
  if (CUresult refused = checkSafeDuringCaptures())
    return refused;
  auto it = state.device.find(address);
  if (it == state.device.end())
    return CUDA_ERROR_INVALID_VALUE;
  // Freeing synchronizes the device: nothing may still use the memory.
  synchronizeDevice();
  state.deviceBytes -= it->second;
  state.device.erase(it);
  std::free(reinterpret_cast<void *>(address));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostAlloc(void **data, size_t bytes, unsigned int) {
  DLC_FAKE_ENTER(Context);
  if (CUresult refused = checkSafeDuringCaptures())
    return refused;
  if (!data || !bytes)
    return CUDA_ERROR_INVALID_VALUE;
  size_t size =
      (bytes + kPinnedAlignment - 1) / kPinnedAlignment * kPinnedAlignment;
  *data = std::aligned_alloc(kPinnedAlignment, size);
  if (!*data)
    return CUDA_ERROR_OUT_OF_MEMORY;
  state.pinned[reinterpret_cast<uintptr_t>(*data)] = size;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeHost(void *data) {
  DLC_FAKE_ENTER(Context);
  if (CUresult refused = checkSafeDuringCaptures())
    return refused;
  if (!state.pinned.erase(reinterpret_cast<uintptr_t>(data)))
    return CUDA_ERROR_INVALID_VALUE;
  synchronizeDevice();
  std::free(data);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr destination, const void *source,
                                   size_t bytes, CUstream handle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Stream> stream = findStream(handle);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!within(state.device, destination, bytes) || !source)
    return CUDA_ERROR_INVALID_VALUE;
  auto *to = reinterpret_cast<void *>(destination);
  if (within(state.pinned, reinterpret_cast<uintptr_t>(source), bytes)) {
    enqueue(*stream, {"HtoD", [=] { std::memcpy(to, source, bytes); }});
    return CUDA_SUCCESS;
  }
  // Pageable memory is copied to a staging buffer before the call returns
  // (the caller may reuse it), which a graph cannot replay.
  if (stream->capture)
    return refuseInCapture(*stream);
  auto *from = static_cast<const unsigned char *>(source);
  auto staged =
      std::make_shared<std::vector<unsigned char>>(from, from + bytes);
  enqueue(*stream,
          {"HtoD", [=] { std::memcpy(to, staged->data(), staged->size()); }});
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *destination, CUdeviceptr source,
                                   size_t bytes, CUstream handle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Stream> stream = findStream(handle);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!within(state.device, source, bytes) || !destination)
    return CUDA_ERROR_INVALID_VALUE;
  auto *from = reinterpret_cast<const void *>(source);
  bool pinned =
      within(state.pinned, reinterpret_cast<uintptr_t>(destination), bytes);
  if (!pinned && stream->capture)
    return refuseInCapture(*stream);
  enqueue(*stream, {"DtoH", [=] { std::memcpy(destination, from, bytes); }});
  // A copy to pageable memory has completed when the call returns.
  if (!pinned)
    runUntil(*stream, stream->enqueued);
  return pinned ? CUDA_SUCCESS : state.sticky;
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr destination, CUdeviceptr source,
                                   size_t bytes, CUstream handle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Stream> stream = findStream(handle);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!within(state.device, destination, bytes) ||
      !within(state.device, source, bytes))
    return CUDA_ERROR_INVALID_VALUE;
  auto *to = reinterpret_cast<void *>(destination);
  auto *from = reinterpret_cast<const void *>(source);
  enqueue(*stream, {"DtoD", [=] { std::memcpy(to, from, bytes); }});
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr destination, unsigned char value,
                                 size_t count, CUstream handle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Stream> stream = findStream(handle);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!within(state.device, destination, count))
    return CUDA_ERROR_INVALID_VALUE;
  auto *to = reinterpret_cast<void *>(destination);
  enqueue(*stream, {"memset", [=] { std::memset(to, value, count); }});
  return CUDA_SUCCESS;
}

//===--- Modules and kernels ----------------------------------------------===//

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *handle, const void *image,
                                    unsigned int count, CUjit_option *options,
                                    void **values) {
  DLC_FAKE_ENTER(Context);
  if (!handle || !image)
    return CUDA_ERROR_INVALID_VALUE;
  // A cubin is an ELF image, PTX a NUL-terminated text with a target.
  auto *text = static_cast<const char *>(image);
  if (std::memcmp(text,
                  "\x7f"
                  "ELF",
                  4) != 0 &&
      !std::strstr(text, ".target ")) {
    writeJitLog(count, options, values, "neither a cubin nor PTX");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto module = std::make_shared<Module>();
  module->library = dlopen(DLC_FAKE_KERNELS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!module->library) {
    writeJitLog(count, options, values,
                std::string("the fake driver's host kernels: ") + dlerror());
    return CUDA_ERROR_INVALID_IMAGE;
  }
  module->launch =
      reinterpret_cast<Launcher>(dlsym(module->library, "dlc_emu_launch"));
  if (!module->launch) {
    writeJitLog(count, options, values,
                "the host kernels have no dlc_emu_launch (cuda_shim.cpp)");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  *handle = state.modules.add<CUmodule>(std::move(module));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule handle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Module> module = state.modules.find(handle);
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  // The module's code must outlive the work that runs it.
  synchronizeDevice();
  for (const void *kernel : module->kernels)
    state.kernels.erase(kernel);
  state.modules.erase(handle);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule handle,
                                     const char *name) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Module> module = state.modules.find(handle);
  if (!module)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!function || !name)
    return CUDA_ERROR_INVALID_VALUE;
  auto kernel = std::make_shared<Kernel>();
  kernel->name = name;
  kernel->entry = reinterpret_cast<Entry>(
      dlsym(module->library, ("dlc_emu_entry_" + kernel->name).c_str()));
  auto *bytes = static_cast<const unsigned long *>(dlsym(
      module->library, ("dlc_fake_buffers_bytes_" + kernel->name).c_str()));
  if (!kernel->entry || !bytes)
    return CUDA_ERROR_NOT_FOUND;
  kernel->buffersBytes = *bytes;
  kernel->launch = module->launch;
  module->kernels.push_back(kernel.get());
  *function = state.kernels.add<CUfunction>(std::move(kernel));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize,
                                                  int *blockSize,
                                                  CUfunction function,
                                                  CUoccupancyB2DSize, size_t,
                                                  int blockSizeLimit) {
  DLC_FAKE_ENTER(Context);
  if (!state.kernels.find(function))
    return CUDA_ERROR_INVALID_HANDLE;
  // As for a kernel of few registers: 256 threads, 8 blocks per SM.
  int block = 256;
  if (blockSizeLimit > 0)
    block = std::max(1, std::min(block, blockSizeLimit));
  *blockSize = block;
  *minGridSize = kMultiprocessors * (kMaxThreadsPerMultiprocessor / block);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction function, unsigned int gridX,
                                unsigned int gridY, unsigned int gridZ,
                                unsigned int blockX, unsigned int blockY,
                                unsigned int blockZ, unsigned int,
                                CUstream handle, void **parameters,
                                void **extra) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Kernel> kernel = state.kernels.find(function);
  std::shared_ptr<Stream> stream = findStream(handle);
  if (!kernel || !stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ ||
      uint64_t(blockX) * blockY * blockZ > kMaxThreadsPerBlock)
    return CUDA_ERROR_INVALID_VALUE;
  if (gridY != 1 || gridZ != 1 || blockY != 1 || blockZ != 1 || extra ||
      !parameters)
    return CUDA_ERROR_NOT_SUPPORTED;
  // The parameters are copied now, as the driver does: the caller's
  // values may be gone when the kernel runs or a graph replays it.
  std::vector<void *> buffers((kernel->buffersBytes + sizeof(void *) - 1) /
                              sizeof(void *));
  std::memcpy(buffers.data(), parameters[0], kernel->buffersBytes);
  long long iterations = 0;
  std::memcpy(&iterations, parameters[1], sizeof(iterations));
  if (!stream->capture)
    ++state.counters.kernelLaunches;
  enqueue(*stream,
          {"kernel " + kernel->name, [=] {
             const char *error = kernel->launch(kernel->entry, buffers.data(),
                                                iterations, 1, gridX, blockX);
             ++state.counters.kernelRuns;
             if (error) {
               std::fprintf(stderr, "fake CUDA driver: kernel %s: %s\n",
                            kernel->name.c_str(), error);
               state.sticky = CUDA_ERROR_LAUNCH_FAILED;
             }
           }});
  return CUDA_SUCCESS;
}

//===--- Streams and events -----------------------------------------------===//

CUresult CUDAAPI cuStreamCreate(CUstream *handle, unsigned int flags) {
  DLC_FAKE_ENTER(Context);
  if (!handle || (flags & ~unsigned(CU_STREAM_NON_BLOCKING)))
    return CUDA_ERROR_INVALID_VALUE;
  auto stream = std::make_shared<Stream>();
  stream->id = ++state.streamsCreated;
  *handle = state.streams.add<CUstream>(std::move(stream));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream handle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Stream> stream = state.streams.find(handle);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  // The work enqueued still completes.
  runUntil(*stream, stream->enqueued);
  state.streams.erase(handle);
  return CUDA_SUCCESS;
}

/// Runs the work enqueued on `handle` (state.mutex held), as a host wait
/// for it does.
static CUresult waitForStream(CUstream handle) {
  std::shared_ptr<Stream> stream = findStream(handle);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (stream->capture)
    return refuseInCapture(*stream);
  runUntil(*stream, stream->enqueued);
  return state.sticky;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream handle) {
  DLC_FAKE_ENTER(Context);
  return waitForStream(handle);
}

// A query is a host wait that returns at once: the stream's work runs
// here (it would never run otherwise) and the stream is then complete.
CUresult CUDAAPI cuStreamQuery(CUstream handle) {
  DLC_FAKE_ENTER(Context);
  return waitForStream(handle);
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream handle, CUevent eventHandle,
                                   unsigned int flags) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Stream> stream = findStream(handle);
  std::shared_ptr<Event> event = state.events.find(eventHandle);
  if (!stream || !event)
    return CUDA_ERROR_INVALID_HANDLE;
  if (flags != CU_EVENT_WAIT_DEFAULT)
    return CUDA_ERROR_NOT_SUPPORTED;
  // Events are never recorded in a capture here, so this one is outside.
  if (stream->capture) {
    stream->captureInvalid = true;
    return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
  }
  // An event never recorded is complete.
  if (!event->stream)
    return CUDA_SUCCESS;
  // The wait is for the record that is the event's last one now.
  std::shared_ptr<Stream> recorded = event->stream;
  uint64_t position = event->position;
  enqueue(*stream, {"wait s" + std::to_string(recorded->id),
                    [=] { runUntil(*recorded, position); }});
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *handle, unsigned int flags) {
  DLC_FAKE_ENTER(Context);
  if (!handle ||
      (flags & ~unsigned(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING)))
    return CUDA_ERROR_INVALID_VALUE;
  auto event = std::make_shared<Event>();
  event->timing = !(flags & CU_EVENT_DISABLE_TIMING);
  *handle = state.events.add<CUevent>(std::move(event));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent handle) {
  DLC_FAKE_ENTER(Context);
  return state.events.erase(handle) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuEventRecord(CUevent handle, CUstream streamHandle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Event> event = state.events.find(handle);
  std::shared_ptr<Stream> stream = findStream(streamHandle);
  if (!event || !stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (stream->capture) {
    std::fprintf(stderr, "fake CUDA driver: events recorded during a capture "
                         "are not emulated\n");
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  event->stream = stream;
  event->position = stream->enqueued + 1;
  event->time = -1;
  uint64_t position = event->position;
  Stream *on = stream.get();
  enqueue(*stream,
          {"record", [=] {
             // Unless the event was recorded again since.
             if (event->stream.get() == on && event->position == position)
               event->time = state.clock;
           }});
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent handle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Event> event = state.events.find(handle);
  if (!event)
    return CUDA_ERROR_INVALID_HANDLE;
  if (event->stream)
    runUntil(*event->stream, event->position);
  return state.sticky;
}

CUresult CUDAAPI cuEventElapsedTime(float *milliseconds, CUevent startHandle,
                                    CUevent endHandle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Event> start = state.events.find(startHandle);
  std::shared_ptr<Event> end = state.events.find(endHandle);
  if (!start || !end || !start->timing || !end->timing || !start->stream ||
      !end->stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (start->time < 0 || end->time < 0)
    return CUDA_ERROR_NOT_READY;
  *milliseconds = static_cast<float>(end->time - start->time);
  return CUDA_SUCCESS;
}

//===--- Capture and graphs -----------------------------------------------===//

CUresult CUDAAPI cuStreamBeginCapture(CUstream handle,
                                      CUstreamCaptureMode mode) {
  DLC_FAKE_ENTER(Context);
  if (!handle)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::shared_ptr<Stream> stream = state.streams.find(handle);
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
      mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  if (stream->capture)
    return CUDA_ERROR_ILLEGAL_STATE;
  stream->capture = std::make_shared<Graph>();
  stream->captureInvalid = false;
  stream->captureMode = mode;
  stream->captureThread = std::this_thread::get_id();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream handle, CUgraph *graph) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Stream> stream = findStream(handle);
  if (!stream || !graph)
    return CUDA_ERROR_INVALID_VALUE;
  if (!stream->capture)
    return CUDA_ERROR_ILLEGAL_STATE;
  if (stream->captureMode != CU_STREAM_CAPTURE_MODE_RELAXED &&
      stream->captureThread != std::this_thread::get_id())
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  std::shared_ptr<Graph> captured = std::move(stream->capture);
  stream->capture = nullptr;
  if (stream->captureInvalid) {
    *graph = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  ++state.counters.captures;
  *graph = state.graphs.add<CUgraph>(std::move(captured));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *exec, CUgraph handle,
                                    unsigned long long flags) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Graph> graph = state.graphs.find(handle);
  if (!graph)
    return CUDA_ERROR_INVALID_VALUE;
  if (flags)
    return CUDA_ERROR_NOT_SUPPORTED;
  *exec = state.execs.add<CUgraphExec>(std::make_shared<Graph>(*graph));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec handle, CUstream streamHandle) {
  DLC_FAKE_ENTER(Context);
  std::shared_ptr<Graph> exec = state.execs.find(handle);
  std::shared_ptr<Stream> stream = findStream(streamHandle);
  if (!exec || !stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!stream->capture)
    ++state.counters.graphLaunches;
  // The executable graph may be destroyed before its launch completes.
  enqueue(*stream, {"graph", [exec] {
                      for (const Op &op : exec->ops)
                        op.run();
                    }});
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec exec) {
  DLC_FAKE_ENTER(Context);
  return state.execs.erase(exec) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph graph) {
  DLC_FAKE_ENTER(Context);
  return state.graphs.erase(graph) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

//===--- What tests ask (FakeDriver.h) ------------------------------------===//

void dlc_fake_counters(dlc_fake_counters_t *out) {
  std::lock_guard<std::mutex> lock(state.mutex);
  *out = state.counters;
  out->liveObjects = state.contextRetains + state.device.size() +
                     state.pinned.size() + state.streams.all().size() +
                     state.events.all().size() + state.modules.all().size() +
                     state.graphs.all().size() + state.execs.all().size();
}

void dlc_fake_fail(const char *symbol, int error) {
  std::lock_guard<std::mutex> lock(state.mutex);
  state.injected[symbol] = static_cast<CUresult>(error);
}

const char *dlc_fake_trace() {
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.trace.c_str();
}

void dlc_fake_clear_trace() {
  std::lock_guard<std::mutex> lock(state.mutex);
  state.trace.clear();
}

int dlc_fake_enqueue_host(void *handle, const char *what, void (*run)(void *),
                          void *argument) {
  std::lock_guard<std::mutex> lock(state.mutex);
  std::shared_ptr<Stream> stream = findStream(static_cast<CUstream>(handle));
  if (!stream)
    return CUDA_ERROR_INVALID_HANDLE;
  if (stream->capture)
    return refuseInCapture(*stream);
  enqueue(*stream, {what, [run, argument] { run(argument); }});
  return CUDA_SUCCESS;
}

int dlc_fake_is_device_memory(const void *address, unsigned long bytes) {
  std::lock_guard<std::mutex> lock(state.mutex);
  return within(state.device, reinterpret_cast<uintptr_t>(address), bytes);
}
