//===- SessionTest.cpp - Sessions, calls, globals and checkpoints ---------===//
#include "dlc/runtime.hpp"
#include "runtime/support/Float16.h"
#include "runtime/test/TestModules.h"
#include "runtime/test/TestUtil.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fstream>
#include <iterator>
#include <limits>
#include <unistd.h>

using namespace dlc;
using namespace dlc::test;

namespace {

/// accumulate(x: float32[4]) -> old: float32[4] updates global "acc"
/// (float32[4], zeros) to acc + x and returns acc's value before the call;
/// read() -> value: float32[4] returns acc.
ModuleBuilder accumulator() {
  ModuleBuilder m;
  uint32_t acc = m.global("acc", "state", DType::F32, {4});
  uint32_t add = m.kernel("test_add_f32");
  m.sharedObject(testKernelsObject());
  FunctionBuilder &f = m.function("accumulate");
  uint32_t x = f.argument("x", "input", DType::F32, {4});
  uint32_t a = f.argument("acc", "state", DType::F32, {4}, acc);
  uint32_t old = f.result("old", "output", DType::F32, {4});
  uint32_t next = f.result("acc", "state", DType::F32, {4}, acc);
  f.kernel(add, {argument(x), argument(a), result(next)}, 4, "node 'add'");
  f.copy(argument(a), result(old), 16, "old value");
  FunctionBuilder &r = m.function("read");
  uint32_t ra = r.argument("acc", "state", DType::F32, {4}, acc);
  uint32_t value = r.result("value", "output", DType::F32, {4});
  r.copy(argument(ra), result(value), 16);
  return m;
}

struct Opened {
  ModulePtr module{nullptr, &dlc_module_release};
  DevicePtr device{nullptr, &dlc_device_release};
  SessionPtr session{nullptr, &dlc_session_release};
};

Opened open(const ModuleBuilder &m, int threads = 2) {
  Opened o;
  Outcome r = loadModule(m.finish(), o.module);
  EXPECT_TRUE(r.ok()) << r.message;
  o.device = cpuDevice(threads);
  r = openSession(o.module.get(), o.device.get(), o.session);
  EXPECT_TRUE(r.ok()) << r.message;
  return o;
}

std::vector<float> readAcc(dlc_session_t *session) {
  std::vector<float> acc(4);
  Outcome o = outcome(
      dlc_session_get_global(session, "acc", acc.data(), 4 * sizeof(float)));
  EXPECT_TRUE(o.ok()) << o.message;
  return acc;
}

Outcome accumulate(dlc_session_t *session, HostTensor<float> &x,
                   HostTensor<float> &old) {
  dlc_tensor_t in = x.view(), out = old.view();
  return outcome(dlc_session_call(session, "accumulate", &in, 1, &out, 1));
}

TEST(Session, GlobalsPingPongAcrossCalls) {
  Opened s = open(accumulator());
  for (int call = 1; call <= 3; ++call) {
    HostTensor<float> x(DLC_F32, {4}, float(call)), old(DLC_F32, {4});
    Outcome o = accumulate(s.session.get(), x, old);
    ASSERT_TRUE(o.ok()) << o.message;
    // The argument saw the value before this call: 0, 1, 1 + 2.
    float before = float((call - 1) * call / 2);
    EXPECT_EQ(old.data, std::vector<float>(4, before));
    EXPECT_EQ(readAcc(s.session.get()),
              std::vector<float>(4, before + float(call)));
  }
  HostTensor<float> value(DLC_F32, {4});
  dlc_tensor_t out = value.view();
  ASSERT_TRUE(
      outcome(dlc_session_call(s.session.get(), "read", nullptr, 0, &out, 1))
          .ok());
  EXPECT_EQ(value.data, std::vector<float>(4, 6.0f));
}

TEST(Session, CallsReportTheirWaitForCollectives) {
  Opened s = open(accumulator());
  double seconds = -1;
  // Before any call, and after one without collectives: no wait.
  ASSERT_TRUE(
      outcome(dlc_session_collective_wait(s.session.get(), &seconds)).ok());
  EXPECT_EQ(seconds, 0.0);
  HostTensor<float> one(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
  ASSERT_TRUE(accumulate(s.session.get(), one, old).ok());
  ASSERT_TRUE(
      outcome(dlc_session_collective_wait(s.session.get(), &seconds)).ok());
  EXPECT_EQ(seconds, 0.0);
  Outcome o = outcome(dlc_session_collective_wait(nullptr, &seconds));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "dlc_session_collective_wait: no session or output");
  o = outcome(dlc_session_collective_wait(s.session.get(), nullptr));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
}

TEST(Session, FailedCallsLeaveStateUnchanged) {
  Opened s = open(accumulator());
  HostTensor<float> one(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
  ASSERT_TRUE(accumulate(s.session.get(), one, old).ok());

  HostTensor<float> wrongShape(DLC_F32, {5}, 1.0f);
  Outcome o = accumulate(s.session.get(), wrongShape, old);
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "accumulate: input 0 ('x') is float32[5], expected "
                       "float32[4]");
  HostTensor<int32_t> wrongType(DLC_I32, {4});
  dlc_tensor_t in = wrongType.view(), out = old.view();
  o = outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
  EXPECT_EQ(o.message, "accumulate: input 0 ('x') is int32[4], expected "
                       "float32[4]");
  HostTensor<float> wrongOutput(DLC_F32, {2, 2});
  in = one.view();
  out = wrongOutput.view();
  o = outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
  EXPECT_EQ(o.message, "accumulate: output 0 ('old') is float32[2,2], "
                       "expected float32[4]");
  o = outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 0));
  EXPECT_EQ(o.message, "accumulate: takes 1 inputs and 1 outputs, got 1 and 0");
  in.data = nullptr;
  out = old.view();
  o = outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
  EXPECT_EQ(o.message, "accumulate: input 0 ('x') has no data");
  in = one.view();
  in.rank = -1;
  o = outcome(dlc_session_call(s.session.get(), "accumulate", &in, 1, &out, 1));
  EXPECT_EQ(o.message, "accumulate: input 0 ('x') has rank -1, expected "
                       "float32[4]");
  o = outcome(
      dlc_session_call(s.session.get(), "train_step", nullptr, 0, nullptr, 0));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_EQ(o.message, "test.dlcm: no function 'train_step' (the module has "
                       "'accumulate', 'read')");

  EXPECT_EQ(readAcc(s.session.get()), std::vector<float>(4, 1.0f));
  // And the next good call continues from there.
  ASSERT_TRUE(accumulate(s.session.get(), one, old).ok());
  EXPECT_EQ(readAcc(s.session.get()), std::vector<float>(4, 2.0f));
}

TEST(Session, StagedInputsAreUsedInOrderAndCopiedWhenStaged) {
  Opened s = open(accumulator());
  HostTensor<float> one(DLC_F32, {4}, 1.0f), ten(DLC_F32, {4}, 10.0f);
  dlc_tensor_t in = one.view();
  ASSERT_TRUE(
      outcome(dlc_session_stage_inputs(s.session.get(), "accumulate", &in, 1))
          .ok());
  in = ten.view();
  ASSERT_TRUE(
      outcome(dlc_session_stage_inputs(s.session.get(), "accumulate", &in, 1))
          .ok());
  // The caller's buffers are free once staged.
  one.data.assign(4, -100.0f);
  ten.data.assign(4, -100.0f);
  // A third set has no slot.
  Outcome o =
      outcome(dlc_session_stage_inputs(s.session.get(), "accumulate", &in, 1));
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(o.message, "accumulate: the inputs of 2 calls are staged already "
                       "(call it first)");
  // Nor can a call bring its own inputs while both slots wait.
  HostTensor<float> old(DLC_F32, {4});
  o = accumulate(s.session.get(), one, old);
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);

  dlc_tensor_t out = old.view();
  ASSERT_TRUE(outcome(dlc_session_call(s.session.get(), "accumulate", nullptr,
                                       0, &out, 1))
                  .ok());
  EXPECT_EQ(readAcc(s.session.get()), std::vector<float>(4, 1.0f));
  ASSERT_TRUE(outcome(dlc_session_call(s.session.get(), "accumulate", nullptr,
                                       0, &out, 1))
                  .ok());
  EXPECT_EQ(readAcc(s.session.get()), std::vector<float>(4, 11.0f));
  o = outcome(
      dlc_session_call(s.session.get(), "accumulate", nullptr, 0, &out, 1));
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(o.message, "accumulate: called without inputs, and none were "
                       "staged");
  EXPECT_EQ(readAcc(s.session.get()), std::vector<float>(4, 11.0f));

  // Staged inputs are checked when staged.
  HostTensor<float> wrongShape(DLC_F32, {5});
  in = wrongShape.view();
  o = outcome(dlc_session_stage_inputs(s.session.get(), "accumulate", &in, 1));
  EXPECT_EQ(o.message, "accumulate: input 0 ('x') is float32[5], expected "
                       "float32[4]");
  o = outcome(dlc_session_stage_inputs(s.session.get(), "accumulate", &in, 2));
  EXPECT_EQ(o.message, "accumulate: takes 1 inputs, 2 were staged");
  // A function without inputs has nothing to stage (and no slot is taken).
  for (int i = 0; i < 3; ++i) {
    o = outcome(dlc_session_stage_inputs(s.session.get(), "read", nullptr, 0));
    EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
    EXPECT_EQ(o.message, "read: takes no inputs; there is nothing to stage");
  }
  HostTensor<float> value(DLC_F32, {4});
  out = value.view();
  EXPECT_TRUE(
      outcome(dlc_session_call(s.session.get(), "read", nullptr, 0, &out, 1))
          .ok());
}

TEST(Session, GetAndSetGlobals) {
  Opened s = open(accumulator());
  std::vector<float> v{1, 2, 3, 4};
  ASSERT_TRUE(
      outcome(dlc_session_set_global(s.session.get(), "acc", v.data(), 16))
          .ok());
  EXPECT_EQ(readAcc(s.session.get()), v);
  Outcome o =
      outcome(dlc_session_set_global(s.session.get(), "acc", v.data(), 12));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "global 'acc' is float32[4] (16 bytes), got 12 bytes");
  o = outcome(dlc_session_get_global(s.session.get(), "nope", v.data(), 16));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_EQ(o.message, "test.dlcm: no global 'nope'");
}

TEST(Session, KernelIterationsRunExactlyOnceOnEveryThreadCount) {
  for (int threads : {1, 2, 4, 7}) {
    for (int64_t grain : {0, 1, 100}) {
      ModuleBuilder m;
      uint32_t mark = m.kernel("test_mark_i32");
      m.sharedObject(testKernelsObject());
      FunctionBuilder &f = m.function("mark");
      f.result("counts", "output", DType::I32, {10007});
      f.kernel(mark, {result(0)}, 10007, "", grain);
      Opened s = open(m, threads);
      HostTensor<int32_t> counts(DLC_I32, {10007});
      dlc_tensor_t out = counts.view();
      ASSERT_TRUE(outcome(dlc_session_call(s.session.get(), "mark", nullptr, 0,
                                           &out, 1))
                      .ok());
      EXPECT_EQ(counts.data, std::vector<int32_t>(10007, 1))
          << threads << " threads, grain " << grain;
    }
  }
}

TEST(Session, LabelClassesAreDescribed) {
  Opened s = open(linearClassifier(8, 5, 3));
  dlc_value_info_t x, labels;
  ASSERT_TRUE(
      outcome(dlc_module_function_input(s.module.get(), "train_step", 0, &x))
          .ok());
  ASSERT_TRUE(outcome(dlc_module_function_input(s.module.get(), "train_step", 1,
                                                &labels))
                  .ok());
  EXPECT_EQ(x.num_classes, 0);
  EXPECT_EQ(labels.num_classes, 3);
  EXPECT_EQ(labels.ignore_index, -100);
}

TEST(Session, LinearClassifierTrains) {
  const int64_t batch = 8, features = 5, classes = 3;
  Opened s = open(linearClassifier(batch, features, classes));
  HostTensor<float> x(DLC_F32, {batch, features});
  HostTensor<int64_t> labels(DLC_I64, {batch});
  for (int64_t b = 0; b < batch; ++b) {
    labels.data[b] = b % classes;
    for (int64_t j = 0; j < features; ++j)
      x.data[b * features + j] = (j == labels.data[b] ? 1.0f : 0.0f) +
                                 0.1f * float((b * 7 + j * 3) % 5);
  }
  std::vector<float> losses;
  for (int step = 0; step < 30; ++step) {
    HostTensor<float> loss(DLC_F32, {});
    dlc_tensor_t in[] = {x.view(), labels.view()};
    dlc_tensor_t out = loss.view();
    Outcome o = outcome(
        dlc_session_call(s.session.get(), "train_step", in, 2, &out, 1));
    ASSERT_TRUE(o.ok()) << o.message;
    losses.push_back(loss.data[0]);
  }
  // Plain gradient descent on a convex loss with a small step: every step
  // lowers it.
  for (size_t i = 1; i < losses.size(); ++i)
    EXPECT_LT(losses[i], losses[i - 1]) << "step " << i;
  EXPECT_LT(losses.back(), 0.5f * losses.front());
  int64_t step = 0;
  ASSERT_TRUE(outcome(dlc_session_get_global(s.session.get(), "dlc.step", &step,
                                             sizeof(step)))
                  .ok());
  EXPECT_EQ(step, 30);

  HostTensor<float> logits(DLC_F32, {batch, classes});
  dlc_tensor_t in = x.view(), out = logits.view();
  ASSERT_TRUE(
      outcome(dlc_session_call(s.session.get(), "forward", &in, 1, &out, 1))
          .ok());
  for (int64_t b = 0; b < batch; ++b) {
    const float *row = &logits.data[b * classes];
    int64_t best = std::max_element(row, row + classes) - row;
    EXPECT_EQ(best, labels.data[b]) << "example " << b;
  }
}

TEST(Session, HandlesMayBeReleasedBeforeTheSession) {
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(accumulator().finish(), module).ok());
  DevicePtr device = cpuDevice(2);
  SessionPtr session(nullptr, &dlc_session_release);
  ASSERT_TRUE(openSession(module.get(), device.get(), session).ok());
  module.reset();
  device.reset();
  HostTensor<float> one(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
  EXPECT_TRUE(accumulate(session.get(), one, old).ok());
}

TEST(Session, DeviceSpecs) {
  dlc_device_t *d = nullptr;
  // Without a GPU (or a driver, or CUDA in the build) "cuda:N" is
  // unavailable, with a message naming the device; with one it opens.
  Outcome o = outcome(dlc_device_create("cuda:0", 0, &d));
  if (o.ok()) {
    dlc_device_release(d);
    d = nullptr;
  } else {
    EXPECT_EQ(o.code, DLC_UNAVAILABLE);
    EXPECT_EQ(o.message.rfind("device 'cuda:0': ", 0), 0u) << o.message;
  }
  o = outcome(dlc_device_create("cuda:99999", 0, &d));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "device 'cuda:99999': device number out of range");
  o = outcome(dlc_device_create("tpu", 0, &d));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "unknown device 'tpu' (expected \"cpu\" or "
                       "\"cuda:N\")");
  o = outcome(dlc_device_create("cuda:x", 0, &d));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  o = outcome(dlc_device_create("cpu", -1, &d));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(d, nullptr);
  o = outcome(dlc_device_create("cpu", 0, &d));
  EXPECT_TRUE(o.ok());
  dlc_device_release(d);
}

TEST(Session, ModuleForAnotherTargetIsRefused) {
  ModuleBuilder m = accumulator();
  m.target("cuda");
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(m.finish(), module).ok());
  DevicePtr device = cpuDevice(1);
  SessionPtr session(nullptr, &dlc_session_release);
  Outcome o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "test.dlcm: compiled for 'cuda', cannot run on device "
                       "'cpu' (dlc-compile --target cpu)");
}

TEST(Session, RankStepsNeedTheJobsCommunicator) {
  // forward(p: float32[5]) -> this rank's shard of p, in a module of two
  // data-parallel ranks (the shard step of a dropout's counter offset).
  ModuleBuilder m;
  m.dataParallelRanks(2);
  FunctionBuilder &f = m.function("forward");
  uint32_t p = f.argument("p", "input", DType::F32, {5});
  uint32_t s = f.result("s", "output", DType::F32, {3});
  f.shard(fb::ShardKind::RankShard, {argument(p)}, {result(s)}, {5}, 2,
          fb::RankReduction::Mean, 0, "rank shard");
  Opened o = open(m);
  HostTensor<float> in(DLC_F32, {5}), out(DLC_F32, {3});
  in.data = {1, 2, 3, 4, 5};
  dlc_tensor_t x = in.view(), y = out.view();
  Outcome r =
      outcome(dlc_session_call(o.session.get(), "forward", &x, 1, &y, 1));
  EXPECT_EQ(r.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(r.message,
            "test.dlcm: forward: runs as one of the 2 data-parallel ranks the "
            "module was compiled for (dlc-compile --dp 2); the session has "
            "no communicator: run one process per rank (mpirun -np 2) and "
            "hand it one (dlc_session_set_comm)");
  // A communicator of another size is refused, naming both.
  dlc_comm_t *one = nullptr;
  ASSERT_TRUE(outcome(dlc_comm_open("local", 10, &one)).ok());
  r = outcome(dlc_session_set_comm(o.session.get(), one));
  EXPECT_EQ(r.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(r.message, "test.dlcm: compiled for 2 data-parallel rank(s), but "
                       "the communicator has 1 (dlc-compile --dp N must "
                       "equal mpirun -np N)");
  dlc_comm_release(one);
}

TEST(Session, TensorRanksNeedTheJobsCommunicator) {
  // forward(g) -> g summed over a tensor group of 2 (dlc.tp_reduce's step),
  // in a module of 2 data-parallel x 2 tensor-parallel ranks.
  ModuleBuilder m;
  m.dataParallelRanks(2);
  m.tensorParallelRanks(2);
  FunctionBuilder &f = m.function("forward");
  uint32_t g = f.argument("g", "input", DType::F32, {4});
  uint32_t r = f.result("r", "output", DType::F32, {4});
  f.allReduce({argument(g)}, {result(r)}, {4}, fb::RankReduction::Sum, 1);
  f.steps().back().amongTensorRanks = true;
  Opened o = open(m);
  HostTensor<float> in(DLC_F32, {4}), out(DLC_F32, {4});
  dlc_tensor_t x = in.view(), y = out.view();
  Outcome outcomeOf =
      outcome(dlc_session_call(o.session.get(), "forward", &x, 1, &y, 1));
  EXPECT_EQ(outcomeOf.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(outcomeOf.message,
            "test.dlcm: forward: runs as one of the 4 ranks the module was "
            "compiled for (dlc-compile --dp 2 --tp 2); the session has no "
            "communicator: run one process per rank (mpirun -np 4) and hand "
            "it one (dlc_session_set_comm)");
  dlc_comm_t *one = nullptr;
  ASSERT_TRUE(outcome(dlc_comm_open("local", 10, &one)).ok());
  outcomeOf = outcome(dlc_session_set_comm(o.session.get(), one));
  EXPECT_EQ(outcomeOf.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(outcomeOf.message,
            "test.dlcm: compiled for 2 data-parallel rank(s) of 2 "
            "tensor-parallel ranks each, but the communicator has 1 (mpirun "
            "-np must be dlc-compile's --dp N times its --tp N)");
  dlc_comm_release(one);
  // Its checkpoints hold the whole values, which the ranks gather
  // together.
  const std::string dir = ::testing::TempDir() + "dlc_session_tp_ckpt";
  Outcome saved = outcome(
      dlc_session_save_checkpoint(o.session.get(), dir.c_str(), nullptr, 0));
  EXPECT_EQ(saved.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(saved.message,
            dir + ": module test.dlcm splits parameters over 2 "
                  "tensor-parallel ranks (dlc-compile --tp): its ranks save, "
                  "restore and export it together, with the session's "
                  "communicator (dlc_session_set_comm)");
  Outcome loaded = outcome(
      dlc_session_load_checkpoint(o.session.get(), dir.c_str(), nullptr));
  EXPECT_EQ(loaded.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(loaded.message, saved.message);
}

TEST(Session, PipelineStagesNeedTheJobsCommunicator) {
  // forward(x) -> r: stage 0 copies x and sends it to stage 1, in a module
  // of 2 pipeline stages; a staged function without any transfer needs
  // the stages too (without one a rank would skip every step).
  for (bool transfers : {true, false}) {
    ModuleBuilder m;
    m.pipelineStages(2);
    FunctionBuilder &f = m.function("forward");
    uint32_t x = f.argument("x", "input", DType::F32, {4});
    uint32_t r = f.result("r", "output", DType::F32, {4});
    f.results()[r].stage = 1;
    f.arenaSize(16);
    f.copy(argument(x), transfers ? arena(0) : result(r), 16);
    f.steps().back().stage = transfers ? 0 : 1;
    if (transfers)
      f.transfer(0, 1, arena(0), result(r), 16);
    Opened o = open(m);
    HostTensor<float> in(DLC_F32, {4}), out(DLC_F32, {4});
    dlc_tensor_t xs = in.view(), ys = out.view();
    Outcome called =
        outcome(dlc_session_call(o.session.get(), "forward", &xs, 1, &ys, 1));
    EXPECT_EQ(called.code, DLC_FAILED_PRECONDITION);
    EXPECT_EQ(called.message,
              "test.dlcm: forward: runs as one of the 2 ranks the module was "
              "compiled for (dlc-compile --dp 1 --pp 2); the session has no "
              "communicator: run one process per rank (mpirun -np 2) and "
              "hand it one (dlc_session_set_comm)");
    dlc_comm_t *one = nullptr;
    ASSERT_TRUE(outcome(dlc_comm_open("local", 10, &one)).ok());
    called = outcome(dlc_session_set_comm(o.session.get(), one));
    EXPECT_EQ(called.code, DLC_INVALID_ARGUMENT);
    EXPECT_EQ(called.message,
              "test.dlcm: compiled for 1 data-parallel rank(s) in each of 2 "
              "pipeline stages, but the communicator has 1 (mpirun -np must "
              "be dlc-compile's --dp N times its --pp N)");
    dlc_comm_release(one);
    // Nothing to gather without stages running on ranks.
    EXPECT_TRUE(outcome(dlc_session_gather_stages(o.session.get())).ok());
  }
  Outcome none = outcome(dlc_session_gather_stages(nullptr));
  EXPECT_EQ(none.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(none.message, "dlc_session_gather_stages: no session");
}

std::string tempDir(const std::string &name) {
  std::string dir = ::testing::TempDir() + "dlc_session_" + name + "_" +
                    std::to_string(::getpid());
  std::string command = "rm -rf '" + dir + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  return dir;
}

int countCheckpoints(const std::string &dir) {
  int n = 0;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      n += std::string(e->d_name).rfind("step-", 0) == 0;
    closedir(d);
  }
  return n;
}

TEST(Session, CheckpointsRestoreGlobalsStepAndMetadata) {
  Opened s = open(accumulator());
  std::string dir = tempDir("checkpoint");
  HostTensor<float> one(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
  dlc_metadata_t *meta = nullptr;
  ASSERT_TRUE(outcome(dlc_metadata_create(&meta)).ok());
  ASSERT_TRUE(outcome(dlc_metadata_set(meta, "epoch", 3)).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(accumulate(s.session.get(), one, old).ok());
    Outcome o = outcome(
        dlc_session_save_checkpoint(s.session.get(), dir.c_str(), meta, 2));
    ASSERT_TRUE(o.ok()) << o.message;
  }
  dlc_metadata_release(meta);
  EXPECT_EQ(countCheckpoints(dir), 2);
  ASSERT_TRUE(accumulate(s.session.get(), one, old).ok());
  EXPECT_EQ(readAcc(s.session.get()), std::vector<float>(4, 4.0f));

  dlc_metadata_t *restored = nullptr;
  Outcome o = outcome(
      dlc_session_load_checkpoint(s.session.get(), dir.c_str(), &restored));
  ASSERT_TRUE(o.ok()) << o.message;
  EXPECT_EQ(readAcc(s.session.get()), std::vector<float>(4, 3.0f));
  int64_t epoch = 0;
  EXPECT_TRUE(outcome(dlc_metadata_get(restored, "epoch", &epoch)).ok());
  EXPECT_EQ(epoch, 3);
  o = outcome(dlc_metadata_get(restored, "missing", &epoch));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  // The entries list what was saved, and nothing past the last.
  ASSERT_EQ(dlc_metadata_count(restored), 1u);
  const char *key = nullptr;
  epoch = 0;
  EXPECT_TRUE(outcome(dlc_metadata_entry(restored, 0, &key, &epoch)).ok());
  EXPECT_STREQ(key, "epoch");
  EXPECT_EQ(epoch, 3);
  EXPECT_EQ(outcome(dlc_metadata_entry(restored, 1, &key, &epoch)).code,
            DLC_INVALID_ARGUMENT);
  dlc_metadata_release(restored);

  // Without a "dlc.step" global the step is the call count, which resumes
  // from the checkpoint's: the next save is step 4.
  ASSERT_TRUE(accumulate(s.session.get(), one, old).ok());
  ASSERT_TRUE(outcome(dlc_session_save_checkpoint(s.session.get(), dir.c_str(),
                                                  nullptr, 0))
                  .ok());
  std::ifstream latest(dir + "/LATEST");
  std::string name((std::istreambuf_iterator<char>(latest)), {});
  EXPECT_NE(name.find("step-00000004.dlcc"), std::string::npos) << name;
}

TEST(Session, SixteenBitCopiesFollowTheirSource) {
  // acc's float16 and bfloat16 copies: rounded from acc when the session
  // opens, when acc is set and when a checkpoint restores it; never set
  // directly.
  ModuleBuilder m = accumulator();
  m.global("acc@fp16", "weight_copy", DType::F16, {4}, {}, 0);
  m.global("acc@bf16", "weight_copy", DType::BF16, {4}, {}, 0);
  Opened s = open(m);
  auto copies = [&] {
    std::vector<uint16_t> h(4), b(4);
    EXPECT_TRUE(outcome(dlc_session_get_global(s.session.get(), "acc@fp16",
                                               h.data(), 8))
                    .ok());
    EXPECT_TRUE(outcome(dlc_session_get_global(s.session.get(), "acc@bf16",
                                               b.data(), 8))
                    .ok());
    std::vector<float> values;
    for (int i = 0; i < 4; ++i) {
      values.push_back(static_cast<float>(Half::fromBits(h[i])));
      values.push_back(static_cast<float>(BFloat16::fromBits(b[i])));
    }
    return values;
  };
  EXPECT_EQ(copies(), std::vector<float>(8, 0.0f));
  // 1 + 2^-9 rounds to 1 in bfloat16 (8 bits) but not in float16 (11).
  std::vector<float> v{1.0f + 1.0f / 512, -2.0f, 65536.0f, 0.5f};
  ASSERT_TRUE(
      outcome(dlc_session_set_global(s.session.get(), "acc", v.data(), 16))
          .ok());
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(copies(), (std::vector<float>{1.0f + 1.0f / 512, 1.0f, -2.0f, -2.0f,
                                          inf, 65536.0f, 0.5f, 0.5f}));
  std::vector<uint16_t> bits(4);
  Outcome o = outcome(
      dlc_session_set_global(s.session.get(), "acc@bf16", bits.data(), 8));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message,
            "global 'acc@bf16' is the session's bfloat16 copy of 'acc': set "
            "that one");

  std::string dir = tempDir("copies");
  ASSERT_TRUE(outcome(dlc_session_save_checkpoint(s.session.get(), dir.c_str(),
                                                  nullptr, 0))
                  .ok());
  std::vector<float> zeros(4, 0.0f);
  ASSERT_TRUE(
      outcome(dlc_session_set_global(s.session.get(), "acc", zeros.data(), 16))
          .ok());
  ASSERT_TRUE(outcome(dlc_session_load_checkpoint(s.session.get(), dir.c_str(),
                                                  nullptr))
                  .ok());
  EXPECT_EQ(copies(), (std::vector<float>{1.0f + 1.0f / 512, 1.0f, -2.0f, -2.0f,
                                          inf, 65536.0f, 0.5f, 0.5f}));
}

TEST(Session, CheckpointsOfOtherModelsAreRefusedWithoutChanges) {
  std::string dir = tempDir("other");
  {
    Opened s = open(accumulator());
    HostTensor<float> one(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
    ASSERT_TRUE(accumulate(s.session.get(), one, old).ok());
    ASSERT_TRUE(outcome(dlc_session_save_checkpoint(s.session.get(),
                                                    dir.c_str(), nullptr, 0))
                    .ok());
  }
  // Another fingerprint.
  ModuleBuilder other = accumulator();
  other.fingerprint("another-model");
  Opened s = open(other);
  std::vector<float> v{5, 6, 7, 8};
  ASSERT_TRUE(
      outcome(dlc_session_set_global(s.session.get(), "acc", v.data(), 16))
          .ok());
  Outcome o = outcome(
      dlc_session_load_checkpoint(s.session.get(), dir.c_str(), nullptr));
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(o.message, dir + " is from another model (its fingerprint is "
                             "'test-fingerprint', module test.dlcm has "
                             "'another-model')");
  EXPECT_EQ(readAcc(s.session.get()), v);

  // The same fingerprint but globals that do not match.
  ModuleBuilder mismatched = accumulator();
  mismatched.global("extra", "state", DType::F32, {2});
  Opened m = open(mismatched);
  o = outcome(
      dlc_session_load_checkpoint(m.session.get(), dir.c_str(), nullptr));
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(o.message,
            dir + ": does not match module test.dlcm; missing 'extra'");
  EXPECT_EQ(readAcc(m.session.get()), std::vector<float>(4, 0.0f));

  o = outcome(dlc_session_load_checkpoint(
      m.session.get(), (dir + "/nonexistent").c_str(), nullptr));
  EXPECT_EQ(o.code, DLC_NOT_FOUND) << o.message;
}

TEST(Session, ExportsParamsAndStateIntoTheOnnxModel) {
  // ModelProto{ir_version: 8, graph: GraphProto{name: "g"}}.
  std::vector<uint8_t> model{0x08, 0x08, 0x3a, 0x03, 0x12, 0x01, 'g'};
  ModuleBuilder m = accumulator();
  m.onnxModel(model);
  Opened s = open(m);
  std::string path = tempDir("export") + ".onnx";
  Outcome o = outcome(dlc_session_export_onnx(s.session.get(), path.c_str()));
  ASSERT_TRUE(o.ok()) << o.message;
  std::vector<uint8_t> bytes = readFileBytes(path);
  ASSERT_GT(bytes.size(), model.size());
  EXPECT_TRUE(std::equal(model.begin(), model.end(), bytes.begin()));
  std::string text(bytes.begin(), bytes.end());
  EXPECT_NE(text.find("acc"), std::string::npos);
  std::remove(path.c_str());

  Opened without = open(accumulator());
  o = outcome(dlc_session_export_onnx(without.session.get(), path.c_str()));
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);
  EXPECT_EQ(o.message,
            "test.dlcm: the module kept no ONNX model to export into");
}

TEST(Session, CppWrapperThrowsErrorsWithTheirCode) {
  std::vector<uint8_t> bytes = accumulator().finish();
  rt::Module module = rt::Module::loadMemory(bytes.data(), bytes.size(), "acc");
  EXPECT_EQ(module.functionName(0), "accumulate");
  rt::Signature sig = module.signature("accumulate");
  ASSERT_EQ(sig.inputs.size(), 1u);
  EXPECT_STREQ(sig.inputs[0].name, "x");
  rt::Session session(module, rt::Device("cpu", 2));
  HostTensor<float> one(DLC_F32, {4}, 1.0f), old(DLC_F32, {4});
  session.call("accumulate", {one.view()}, {old.view()});
  std::vector<float> acc(4);
  session.getGlobal("acc", acc.data(), 16);
  EXPECT_EQ(acc, std::vector<float>(4, 1.0f));
  try {
    session.call("accumulate", {}, {});
    FAIL() << "expected an error";
  } catch (const rt::Error &e) {
    EXPECT_EQ(e.code(), DLC_INVALID_ARGUMENT);
    EXPECT_STREQ(e.what(),
                 "accumulate: takes 1 inputs and 1 outputs, got 0 and 0");
  }
  EXPECT_THROW(rt::Device("cuda:0"), rt::Error);
  rt::Metadata meta;
  meta.set("k", 1);
  EXPECT_TRUE(meta.has("k"));
  EXPECT_FALSE(meta.has("j"));
  EXPECT_EQ(meta.value("k"), 1);
}

} // namespace
