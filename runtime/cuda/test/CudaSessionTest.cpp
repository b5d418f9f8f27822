//===- CudaSessionTest.cpp - Sessions on "cuda:0" -------------------------===//
//
// A module of a generated-ABI kernel (TestKernels.cu, as PTX) and copies,
// run on the GPU: globals ping-pong across calls whether a call runs step
// by step (the first), is captured into a CUDA graph (the second) or
// replays it (the rest), staged inputs are used in order, and globals,
// checkpoints and failed calls behave as on the CPU. Skipped where no GPU
// can be opened.
//
//===----------------------------------------------------------------------===//
#include "TestKernelsPtx.h"
#include "runtime/test/ModuleBuilder.h"
#include "runtime/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
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

struct Opened {
  ModulePtr module{nullptr, &dlc_module_release};
  DevicePtr device{nullptr, &dlc_device_release};
  SessionPtr session{nullptr, &dlc_session_release};
};

/// Opens `m` on cuda:0; false (the test skips) without a GPU.
bool open(const ModuleBuilder &m, Opened &o, std::string &why) {
  o.device = openDevice("cuda:0", 0, why);
  if (!o.device)
    return false;
  Outcome r = loadModule(m.finish(), o.module);
  EXPECT_TRUE(r.ok()) << r.message;
  r = openSession(o.module.get(), o.device.get(), o.session);
  EXPECT_TRUE(r.ok()) << r.message;
  return r.ok();
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
  for (int call = 1; call <= 6; ++call) {
    HostTensor<float> x(DLC_F32, {kElements}, float(call)),
        old(DLC_F32, {kElements});
    dlc_tensor_t in = x.view(), out = old.view();
    Outcome o = outcome(
        dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
    ASSERT_TRUE(o.ok()) << o.message;
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
    Outcome o = outcome(
        dlc_session_call(s.session.get(), "accumulate", nullptr, 0, &out, 1));
    ASSERT_TRUE(o.ok()) << o.message;
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
  DevicePtr device = openDevice("cuda:0", 0, why);
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

} // namespace
