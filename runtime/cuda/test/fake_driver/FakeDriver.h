//===- FakeDriver.h - What tests ask the fake CUDA driver -------*- C++ -*-===//
//
// The fake CUDA driver (FakeDriver.cpp, built as libcuda.so.1) exports
// these beside the driver API so that a test run against it can see what
// the session asked the GPU to do: how many kernels it launched one by one,
// how many graphs it captured and replayed, in which order each stream's
// work ran, and whether it gave back everything it took. A test finds them
// with dlsym on the loaded libcuda.so.1; against a real driver they are
// absent.
//
// The kernels the fake runs are host code (cuda_shim.h): a library of them
// defines, per kernel NAME, DLC_EMU_ENTRY(NAME) and the size of its
// by-value buffers parameter, which cuLaunchKernel copies as a real driver
// copies kernelParams from the kernel's parameter layout.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CUDA_TEST_FAKE_DRIVER_FAKEDRIVER_H
#define DLC_RUNTIME_CUDA_TEST_FAKE_DRIVER_FAKEDRIVER_H

extern "C" {

/// What the fake has done since it was loaded.
struct dlc_fake_counters_t {
  /// cuLaunchKernel calls that ran a kernel (not those a capture recorded).
  unsigned long long kernelLaunches;
  /// Kernels run, whether launched directly or replayed by a graph.
  unsigned long long kernelRuns;
  /// Captures that ended in a graph.
  unsigned long long captures;
  /// cuGraphLaunch calls.
  unsigned long long graphLaunches;
  /// Primary context retains, device and pinned allocations, streams,
  /// events, modules, graphs and executable graphs not yet given back.
  unsigned long long liveObjects;
};
void dlc_fake_counters(dlc_fake_counters_t *out);

/// Makes the next call of driver symbol `symbol` ("cuLaunchKernel",
/// "cuGraphInstantiateWithFlags": the versioned name) return `error` (a
/// CUresult) without doing anything.
void dlc_fake_fail(const char *symbol, int error);

/// The work the streams ran since the last dlc_fake_clear_trace, in the
/// order it ran, a line each: "s<stream> <what>", where what is "HtoD",
/// "DtoH", "DtoD", "memset", "kernel NAME", "graph", "record" (an event)
/// or "wait s<stream>" (done waiting for an event of that stream). Valid
/// until the next call into the fake.
const char *dlc_fake_trace();
void dlc_fake_clear_trace();

/// For the fake libraries that run beside the driver (FakeNccl.cpp):
/// enqueues host work on `stream` (a CUstream) as the driver enqueues a
/// library's kernel. `run(argument)` runs when the stream's work reaches
/// it, traced as `what`, and owns `argument` once this call succeeds.
/// Refused during a capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, which
/// invalidates it) and on an unknown stream; returns a CUresult.
int dlc_fake_enqueue_host(void *stream, const char *what, void (*run)(void *),
                          void *argument);
/// Whether [address, address + bytes) lies in one allocation of device
/// memory.
int dlc_fake_is_device_memory(const void *address, unsigned long bytes);
}

/// Defines the host entry of kernel `kernel` (compiled against
/// cuda_shim.h) and the byte size of its buffers parameter, which the fake
/// finds by name.
#define DLC_FAKE_KERNEL(kernel)                                                \
  DLC_EMU_ENTRY(kernel)                                                        \
  extern "C" const unsigned long dlc_fake_buffers_bytes_##kernel =             \
      dlc_fake_buffers_bytes(kernel);

/// The size of the first parameter of `kernel`: its dlc_buffers<N>.
template <typename Buffers, typename Count>
constexpr unsigned long dlc_fake_buffers_bytes(void (*)(Buffers, Count)) {
  return sizeof(Buffers);
}

#endif // DLC_RUNTIME_CUDA_TEST_FAKE_DRIVER_FAKEDRIVER_H
