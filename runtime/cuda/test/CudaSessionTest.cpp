//===- CudaSessionTest.cpp - Sessions on "cuda:0" -------------------------===//
//
// A module of a generated-ABI kernel (TestKernels.cu, as PTX) and copies,
// run on the GPU: globals ping-pong across calls whether a call runs step
// by step (the first), is captured into a CUDA graph (the second) or
// replays it (the rest), staged inputs are used in order, and globals,
// checkpoints and failed calls behave as on the CPU. Skipped where no GPU
// can be opened.
//
// ctest runs these tests twice: on the GPU (label gpu), and against the
// fake driver (fake_driver/, label runtime), which runs on the CPU. Against
// the fake they also check what the session asked the device to do (which
// calls ran step by step, captured or replayed a graph, in which order the
// streams' work ran) and how it handles the driver's failures, which a
// real GPU does not produce on demand.
//
//===----------------------------------------------------------------------===//
#include "TestKernelsPtx.h"
#include "runtime/cuda/Driver.h"
#include "runtime/cuda/test/CudaTestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>
#include <unistd.h>

using namespace dlc;
using namespace dlc::test;

namespace {

/// accumulate(x: float32[n]) -> old: float32[n] adds x to the global "acc"
/// and returns its value before the call (SessionTest's module, on CUDA).
ModuleBuilder accumulator(int64_t n) {
  ModuleBuilder m;
  m.target("cuda");
  m.cudaPtx(kTestKernelsPtx);
  uint32_t acc = m.global("acc", "state", DType::F32, {n});
  uint32_t add = m.kernel("test_add_f32");
  FunctionBuilder &f = m.function("accumulate");
  uint32_t x = f.argument("x", "input", DType::F32, {n});
  uint32_t a = f.argument("acc", "state", DType::F32, {n}, acc);
  uint32_t old = f.result("old", "output", DType::F32, {n});
  uint32_t next = f.result("acc", "state", DType::F32, {n}, acc);
  f.kernel(add, {argument(x), argument(a), result(next)}, n, "node 'add'");
  f.copy(argument(a), result(old), uint64_t(n) * 4, "old value");
  return m;
}

std::vector<float> readAcc(dlc_session_t *session, int64_t n) {
  std::vector<float> acc(n);
  Outcome o = outcome(
      dlc_session_get_global(session, "acc", acc.data(), n * sizeof(float)));
  EXPECT_TRUE(o.ok()) << o.message;
  return acc;
}

// Large enough that the kernel's grid-stride loop takes several rounds.
constexpr int64_t kElements = 1 << 20;

TEST(GpuSession, GlobalsPingPongThroughCapturedGraphs) {
  Opened s;
  std::string why;
  if (!open(accumulator(kElements), s, why))
    GTEST_SKIP() << why;
  float expected = 0;
  Work work;
  for (int call = 1; call <= 6; ++call) {
    HostTensor<float> x(DLC_F32, {kElements}, float(call)),
        old(DLC_F32, {kElements});
    dlc_tensor_t in = x.view(), out = old.view();
    Outcome o = outcome(
        dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
    ASSERT_TRUE(o.ok()) << o.message;
    // The first call runs step by step; the next two each capture a graph
    // (for either buffer of the global, which calls alternate), which the
    // later calls replay.
    const char *steps = "1 launches, 0 captures, 0 graph launches",
               *capture = "0 launches, 1 captures, 1 graph launches",
               *replay = "0 launches, 0 captures, 1 graph launches";
    if (std::optional<std::string> done = work.next())
      EXPECT_EQ(*done, std::string(call == 1   ? steps
                                   : call <= 3 ? capture
                                               : replay) +
                           ", 1 kernel runs")
          << "call " << call;
    EXPECT_EQ(old.data, std::vector<float>(kElements, expected))
        << "call " << call;
    expected += float(call);
    EXPECT_EQ(readAcc(s.session.get(), kElements),
              std::vector<float>(kElements, expected));
  }
}

TEST(GpuSession, StagedInputsOverlapAndKeepTheirOrder) {
  Opened s;
  std::string why;
  if (!open(accumulator(kElements), s, why))
    GTEST_SKIP() << why;
  HostTensor<float> old(DLC_F32, {kElements});
  dlc_tensor_t out = old.view();
  float expected = 0;
  // As the runner does: the inputs of call k + 1 are staged before call k.
  HostTensor<float> first(DLC_F32, {kElements}, 1.0f);
  dlc_tensor_t in = first.view();
  ASSERT_TRUE(
      outcome(dlc_session_stage_inputs(s.session.get(), "accumulate", &in, 1))
          .ok());
  for (int call = 1; call <= 5; ++call) {
    HostTensor<float> next(DLC_F32, {kElements}, float(call + 1));
    in = next.view();
    if (call < 5)
      ASSERT_TRUE(outcome(dlc_session_stage_inputs(s.session.get(),
                                                   "accumulate", &in, 1))
                      .ok());
    // The caller's buffer is free as soon as it is staged.
    next.data.assign(kElements, -1.0f);
    takeTrace();
    Outcome o = outcome(
        dlc_session_call(s.session.get(), "accumulate", nullptr, 0, &out, 1));
    ASSERT_TRUE(o.ok()) << o.message;
    // The call's inputs were copied on the copy stream (A), and the compute
    // stream (B) waited for that before running the step; the inputs
    // staged for the next call are not copied yet.
    std::vector<std::string> step =
        call == 1 ? std::vector<std::string>{"B kernel test_add_f32", "B DtoD"}
                  : std::vector<std::string>{"B graph"};
    std::vector<std::string> order = {"A HtoD", "A record", "B wait A"};
    order.insert(order.end(), step.begin(), step.end());
    order.push_back("B DtoH");
    if (std::optional<std::vector<std::string>> trace = takeTrace())
      EXPECT_EQ(*trace, order) << "call " << call;
    expected += float(call);
    EXPECT_EQ(readAcc(s.session.get(), kElements),
              std::vector<float>(kElements, expected));
  }
}

TEST(GpuSession, FailedCallsAndGlobalsAsOnTheCpu) {
  Opened s;
  std::string why;
  if (!open(accumulator(4), s, why))
    GTEST_SKIP() << why;
  // Its collectives run on a stream of their own: the host does not wait.
  double seconds = 0;
  Outcome waited =
      outcome(dlc_session_collective_wait(s.session.get(), &seconds));
  EXPECT_EQ(waited.code, DLC_UNAVAILABLE);
  EXPECT_EQ(waited.message, "test.dlcm: a cuda session does not measure its "
                            "calls' waits for collectives");
  std::vector<float> value = {1, 2, 3, 4};
  ASSERT_TRUE(
      outcome(dlc_session_set_global(s.session.get(), "acc", value.data(), 16))
          .ok());
  EXPECT_EQ(readAcc(s.session.get(), 4), value);
  HostTensor<float> wrong(DLC_F32, {5}), old(DLC_F32, {4});
  dlc_tensor_t in = wrong.view(), out = old.view();
  Outcome o =
      outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(readAcc(s.session.get(), 4), value);

  // A checkpoint taken on the GPU restores on the GPU.
  std::string dir =
      ::testing::TempDir() + "dlc_gpu_checkpoint_" + std::to_string(::getpid());
  ASSERT_EQ(std::system(("rm -rf '" + dir + "'").c_str()), 0);
  ASSERT_TRUE(outcome(dlc_session_save_checkpoint(s.session.get(), dir.c_str(),
                                                  nullptr, 0))
                  .ok());
  HostTensor<float> ones(DLC_F32, {4}, 1.0f);
  in = ones.view();
  ASSERT_TRUE(
      outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1))
          .ok());
  EXPECT_EQ(readAcc(s.session.get(), 4), (std::vector<float>{2, 3, 4, 5}));
  ASSERT_TRUE(outcome(dlc_session_load_checkpoint(s.session.get(), dir.c_str(),
                                                  nullptr))
                  .ok());
  EXPECT_EQ(readAcc(s.session.get(), 4), value);
}

TEST(GpuSession, CpuModulesAreRefused) {
  std::string why;
  DevicePtr device = openCuda(why);
  if (!device)
    GTEST_SKIP() << why;
  ModuleBuilder m = accumulator(4);
  m.target("cpu");
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(m.finish(), module).ok());
  SessionPtr session(nullptr, &dlc_session_release);
  Outcome o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "test.dlcm: compiled for 'cpu', cannot run on device "
                       "'cuda:0' (dlc-compile --target cuda)");
}

TEST(GpuSession, DirectConvolutionsAreRefused) {
  // CUDA convolutions run on cuDNN; a step that demands the CPU's direct
  // loops (dlc.plan.conv engine direct) cannot open.
  std::string why;
  DevicePtr device = openCuda(why);
  if (!device)
    GTEST_SKIP() << why;
  ModuleBuilder m;
  m.target("cuda");
  FunctionBuilder &f = m.function("conv");
  f.argument("x", "input", DType::F32, {1, 1, 4, 4});
  f.argument("w", "input", DType::F32, {1, 1, 3, 3});
  f.result("y", "output", DType::F32, {1, 1, 2, 2});
  ConvSpec s;
  s.x = argument(0);
  s.w = argument(1);
  s.y = result(0);
  s.xShape = {1, 1, 4, 4};
  s.wShape = {1, 1, 3, 3};
  s.yShape = {1, 1, 2, 2};
  s.engine = fb::ConvEngine::Direct;
  f.conv(s, "node 'conv' (Conv)");
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(m.finish(), module).ok());
  SessionPtr session(nullptr, &dlc_session_release);
  Outcome o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_UNIMPLEMENTED);
  EXPECT_EQ(o.message, "test.dlcm: conv: step 0 (node 'conv' (Conv)): the "
                       "convolution demands the direct engine, which runs on "
                       "the CPU only; CUDA convolutions run on cuDNN");
}

TEST(GpuSession, AnyThreadMayUseIt) {
  Opened s;
  std::string why;
  if (!open(accumulator(4), s, why))
    GTEST_SKIP() << why;
  // The driver's current context is the calling thread's: every entry
  // point makes the device's current first.
  HostTensor<float> x(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
  dlc_tensor_t in = x.view(), out = old.view();
  std::vector<float> value = {1, 2, 3, 4};
  std::vector<std::function<dlc_status_t()>> uses = {
      [&] {
        return dlc_session_stage_inputs(s.session.get(), "accumulate", &in, 1);
      },
      [&] {
        return dlc_session_call(s.session.get(), "accumulate", nullptr, 0, &out,
                                1);
      },
      [&] {
        return dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1);
      },
      [&] {
        return dlc_session_set_global(s.session.get(), "acc", value.data(), 16);
      }};
  for (auto &use : uses)
    std::thread([&] {
      Outcome o = outcome(use());
      EXPECT_TRUE(o.ok()) << o.message;
    }).join();
  std::thread([&] { EXPECT_EQ(readAcc(s.session.get(), 4), value); }).join();
  std::thread([&] {
    s.session.reset();
    s.device.reset();
  }).join();
}

TEST(GpuSession, ProfilingTimesEveryStep) {
  Opened s;
  std::string why;
  if (!open(accumulator(kElements), s, why))
    GTEST_SKIP() << why;
  ASSERT_TRUE(outcome(dlc_session_set_profiling(s.session.get(), 1)).ok());
  Work work;
  HostTensor<float> x(DLC_F32, {kElements}, 1.0f), old(DLC_F32, {kElements});
  dlc_tensor_t in = x.view(), out = old.view();
  for (int call = 1; call <= 2; ++call)
    ASSERT_TRUE(outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1,
                                         &out, 1))
                    .ok());
  EXPECT_EQ(old.data, std::vector<float>(kElements, 1.0f));
  // Profiled calls run step by step, never captured.
  if (std::optional<std::string> done = work.next())
    EXPECT_EQ(*done, "2 launches, 0 captures, 0 graph launches, 2 kernel runs");
  std::string path =
      ::testing::TempDir() + "dlc_gpu_profile_" + std::to_string(::getpid());
  ASSERT_TRUE(
      outcome(dlc_session_write_profile(s.session.get(), path.c_str())).ok());
  std::ifstream file(path);
  int lines = 0;
  for (std::string line; std::getline(file, line); ++lines) {
    EXPECT_NE(line.find("\"calls\": 2,"), std::string::npos) << line;
    EXPECT_EQ(line.find("\"ms\": 0.0000,"), std::string::npos) << line;
  }
  EXPECT_EQ(lines, 2);
  std::remove(path.c_str());
}

// The driver's failures, which only the fake produces on demand.

TEST(FakeCudaDriver, FailedLaunchesNameTheStep) {
  Opened s;
  std::string why;
  if (!open(accumulator(4), s, why))
    GTEST_SKIP() << why;
  if (!fakeDriver())
    GTEST_SKIP() << "needs the fake CUDA driver";
  HostTensor<float> x(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
  dlc_tensor_t in = x.view(), out = old.view();
  failNext("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  Outcome o =
      outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
  EXPECT_EQ(o.code, DLC_INTERNAL);
  EXPECT_EQ(o.message,
            "test.dlcm: accumulate: step 0 (node 'add') test_add_f32: "
            "cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too "
            "many resources requested for launch");
  // The failed call updated nothing, and the next one runs.
  EXPECT_EQ(readAcc(s.session.get(), 4), std::vector<float>(4, 0.0f));
  ASSERT_TRUE(
      outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1))
          .ok());
  EXPECT_EQ(readAcc(s.session.get(), 4), std::vector<float>(4, 1.0f));
}

TEST(FakeCudaDriver, AGraphThatCannotBeMadeFallsBackToSteps) {
  Opened s;
  std::string why;
  if (!open(accumulator(4), s, why))
    GTEST_SKIP() << why;
  if (!fakeDriver())
    GTEST_SKIP() << "needs the fake CUDA driver";
  Work work;
  for (int call = 1; call <= 4; ++call) {
    HostTensor<float> x(DLC_F32, {4}, float(call)), old(DLC_F32, {4});
    dlc_tensor_t in = x.view(), out = old.view();
    if (call == 2)
      failNext("cuGraphInstantiateWithFlags", CUDA_ERROR_OUT_OF_MEMORY);
    Outcome o = outcome(
        dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
    ASSERT_TRUE(o.ok()) << o.message;
    EXPECT_EQ(old.data, std::vector<float>(4, float(call * (call - 1) / 2)));
    // The capture that could not be instantiated is the last one.
    EXPECT_EQ(*work.next(), std::string("1 launches, ") +
                                (call == 2 ? "1" : "0") +
                                " captures, 0 graph launches, 1 kernel runs")
        << "call " << call;
  }
}

TEST(FakeCudaDriver, OutOfMemoryNamesTheBuffer) {
  std::string why;
  DevicePtr device = openCuda(why);
  if (!device)
    GTEST_SKIP() << why;
  if (!fakeDriver())
    GTEST_SKIP() << "needs the fake CUDA driver (16 GiB)";
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(accumulator(int64_t(5) << 30).finish(), module).ok());
  SessionPtr session(nullptr, &dlc_session_release);
  Outcome o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_RESOURCE_EXHAUSTED);
  EXPECT_EQ(o.message.rfind(
                "test.dlcm: global 'acc' (float32[5368709120]): out of device "
                "memory for a block of 21474836480 bytes",
                0),
            0u)
      << o.message;
}

TEST(FakeCudaDriver, SessionsGiveBackEverythingTheyTook) {
  if (!fakeCounters()) {
    std::string why;
    if (!openCuda(why))
      GTEST_SKIP() << why;
    GTEST_SKIP() << "needs the fake CUDA driver";
  }
  uint64_t before = fakeCounters()->liveObjects;
  {
    Opened s;
    std::string why;
    ASSERT_TRUE(open(accumulator(4), s, why)) << why;
    HostTensor<float> x(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
    dlc_tensor_t in = x.view(), out = old.view();
    // Step by step, then two graphs captured.
    for (int call = 1; call <= 3; ++call)
      ASSERT_TRUE(outcome(dlc_session_call(s.session.get(), "accumulate", &in,
                                           1, &out, 1))
                      .ok());
    EXPECT_GT(fakeCounters()->liveObjects, before);
  }
  EXPECT_EQ(fakeCounters()->liveObjects, before);
}

// The fake refuses what the driver refuses during a capture, which the
// session relies on to fall back to running step by step.
TEST(FakeCudaDriver, RefusesWhatTheDriverRefusesInACapture) {
  std::string why;
  DevicePtr device = openCuda(why);
  if (!device)
    GTEST_SKIP() << why;
  if (!fakeDriver())
    GTEST_SKIP() << "needs the fake CUDA driver";
  const cuda::Driver *driver = nullptr;
  ASSERT_EQ(cuda::Driver::get(driver), nullptr);
  CUstream stream = nullptr;
  ASSERT_EQ(driver->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
            CUDA_SUCCESS);
  CUdeviceptr memory = 0;
  ASSERT_EQ(driver->cuMemAlloc(&memory, 256), CUDA_SUCCESS);
  float host[64] = {};
  auto captureFails = [&](auto unsupported) {
    CUgraph graph = nullptr;
    EXPECT_EQ(driver->cuStreamBeginCapture(stream,
                                           CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              CUDA_SUCCESS);
    EXPECT_EQ(unsupported(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_EQ(driver->cuStreamEndCapture(stream, &graph),
              CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_EQ(graph, nullptr);
  };
  captureFails([&] { return driver->cuStreamSynchronize(stream); });
  CUdeviceptr more = 0;
  captureFails([&] { return driver->cuMemAlloc(&more, 256); });
  captureFails([&] {
    return driver->cuMemcpyHtoDAsync(memory, host, sizeof(host), stream);
  });
  EXPECT_EQ(driver->cuMemFree(memory), CUDA_SUCCESS);
  EXPECT_EQ(driver->cuStreamDestroy(stream), CUDA_SUCCESS);
}

} // namespace
