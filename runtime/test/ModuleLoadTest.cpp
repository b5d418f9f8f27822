//===- ModuleLoadTest.cpp - Loading and checking .dlcm modules ------------===//
//
// Every malformed module must give a clean status, never a crash: truncated
// at every length, bytes flipped at random, a wrong identifier or version,
// and each kind of reference out of range.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Handles.h"
#include "runtime/module/ModuleFile.h"
#include "runtime/test/TestModules.h"
#include "runtime/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <unistd.h>

using namespace dlc;
using namespace dlc::test;

namespace {

/// A module with no kernels (so no shared object to dlopen): a matmul, a
/// convolution and a copy, with a global, a constant and an arena.
ModuleBuilder smallModule() {
  ModuleBuilder m;
  uint32_t g = m.global("w", "param", DType::F32, {2, 2},
                        bytesOf(std::vector<float>{1, 2, 3, 4}));
  uint32_t c =
      m.constant(DType::F32, {2, 2}, bytesOf(std::vector<float>{1, 0, 0, 1}));
  FunctionBuilder &f = m.function("forward");
  uint32_t x = f.argument("x", "input", DType::F32, {2, 2});
  uint32_t w =
      f.argument("w", "param", DType::F32, {2, 2}, static_cast<int32_t>(g));
  uint32_t y = f.result("y", "output", DType::F32, {2, 2});
  uint32_t z = f.result("z", "output", DType::F32, {1, 1, 2, 2});
  f.arenaSize(64);
  MatmulSpec mm;
  mm.lhs = argument(x);
  mm.rhs = argument(w);
  mm.result = arena(0);
  mm.m = mm.n = mm.k = 2;
  f.matmul(mm, "node 'mm' (MatMul)");
  MatmulSpec mm2 = mm;
  mm2.lhs = arena(0);
  mm2.rhs = constant(c);
  mm2.result = result(y);
  f.matmul(mm2);
  ConvSpec conv;
  conv.x = argument(x);
  conv.w = constant(c);
  conv.y = result(z);
  conv.xShape = {1, 1, 2, 2};
  conv.wShape = {1, 1, 2, 2};
  conv.yShape = {1, 1, 1, 1};
  f.conv(conv);
  f.copy(arena(0), result(z), 16);
  return m;
}

Outcome load(const ModuleBuilder &m) {
  ModulePtr module(nullptr, &dlc_module_release);
  return loadModule(m.finish(), module);
}

/// Expects `m` to be refused as corrupt with `fragment` in the message.
void expectInvalid(const ModuleBuilder &m, const std::string &fragment) {
  Outcome o = load(m);
  EXPECT_EQ(o.code, DLC_DATA_LOSS) << o.message;
  EXPECT_NE(o.message.find("test.dlcm: not a valid dlc module ("),
            std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find(fragment), std::string::npos) << o.message;
}

TEST(ModuleLoad, SmallModuleLoadsAndDescribesItself) {
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(smallModule().finish(), module).ok());
  EXPECT_STREQ(dlc_module_target(module.get()), "cpu");
  EXPECT_STREQ(dlc_module_model_name(module.get()), "test.onnx");
  ASSERT_EQ(dlc_module_global_count(module.get()), 1u);
  dlc_value_info_t info;
  ASSERT_TRUE(outcome(dlc_module_global_info(module.get(), 0, &info)).ok());
  EXPECT_STREQ(info.name, "w");
  EXPECT_STREQ(info.role, "param");
  EXPECT_EQ(info.dtype, DLC_F32);
  ASSERT_EQ(info.rank, 2);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.global, 0);
  ASSERT_EQ(dlc_module_function_count(module.get()), 1u);
  EXPECT_STREQ(dlc_module_function_name(module.get(), 0), "forward");
  size_t inputs = 0, outputs = 0;
  ASSERT_TRUE(outcome(dlc_module_function_signature(module.get(), "forward",
                                                    &inputs, &outputs))
                  .ok());
  // The global-reading argument "w" is not a caller input.
  EXPECT_EQ(inputs, 1u);
  EXPECT_EQ(outputs, 2u);
  ASSERT_TRUE(
      outcome(dlc_module_function_input(module.get(), "forward", 0, &info))
          .ok());
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.global, -1);
  ASSERT_TRUE(
      outcome(dlc_module_function_output(module.get(), "forward", 1, &info))
          .ok());
  EXPECT_STREQ(info.name, "z");
  EXPECT_EQ(info.rank, 4);

  Outcome o = outcome(
      dlc_module_function_signature(module.get(), "train", &inputs, &outputs));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_EQ(o.message,
            "test.dlcm: no function 'train' (the module has 'forward')");
  o = outcome(dlc_module_function_input(module.get(), "forward", 1, &info));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "forward: no input 1 (it has 1)");
}

TEST(ModuleLoad, MissingFileIsNotFound) {
  dlc_module_t *m = nullptr;
  Outcome o = outcome(dlc_module_load_file("/nonexistent/model.dlcm", &m));
  EXPECT_EQ(o.code, DLC_NOT_FOUND);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(o.message.find("/nonexistent/model.dlcm"), std::string::npos);
}

TEST(ModuleLoad, LoadsFromFile) {
  std::string path = ::testing::TempDir() + "module_load_" +
                     std::to_string(::getpid()) + ".dlcm";
  ASSERT_TRUE(writeFileBytes(path, smallModule().finish()));
  dlc_module_t *m = nullptr;
  Outcome o = outcome(dlc_module_load_file(path.c_str(), &m));
  EXPECT_TRUE(o.ok()) << o.message;
  dlc_module_release(m);
  // A directory is not a module.
  o = outcome(dlc_module_load_file(::testing::TempDir().c_str(), &m));
  EXPECT_EQ(o.code, DLC_IO_ERROR) << o.message;
  std::remove(path.c_str());
}

TEST(ModuleLoad, TruncatedFilesAreDataLoss) {
  std::vector<uint8_t> bytes = smallModule().finish();
  for (size_t length : {size_t(0), size_t(3), size_t(7), size_t(8), size_t(16),
                        bytes.size() / 2, bytes.size() - 8}) {
    ModulePtr module(nullptr, &dlc_module_release);
    Outcome o = loadModule(
        std::vector<uint8_t>(bytes.begin(), bytes.begin() + length), module);
    EXPECT_EQ(o.code, DLC_DATA_LOSS) << length << ": " << o.message;
    EXPECT_EQ(o.message.rfind("test.dlcm: not a valid dlc module (", 0), 0u)
        << o.message;
    EXPECT_EQ(module, nullptr);
  }
}

TEST(ModuleLoad, EveryTruncationIsClean) {
  std::vector<uint8_t> bytes = smallModule().finish();
  size_t refused = 0;
  for (size_t length = 0; length < bytes.size(); ++length) {
    ModulePtr module(nullptr, &dlc_module_release);
    Outcome o = loadModule(
        std::vector<uint8_t>(bytes.begin(), bytes.begin() + length), module);
    // FlatBuffers lays objects out back to front, so a cut that only drops
    // trailing alignment padding may still be a valid module; anything
    // else must be refused as corrupt.
    if (!o.ok()) {
      EXPECT_EQ(o.code, DLC_DATA_LOSS) << length << ": " << o.message;
      ++refused;
    }
  }
  EXPECT_GE(refused, bytes.size() - 16);
}

TEST(ModuleLoad, RandomByteFlipsAreCleanAndWhatLoadsRuns) {
  std::vector<uint8_t> bytes = smallModule().finish();
  std::mt19937 rng(1234);
  auto device = cpuDevice(2);
  int loaded = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> corrupt = bytes;
    int flips = 1 + trial % 4;
    for (int i = 0; i < flips; ++i)
      corrupt[rng() % corrupt.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    ModulePtr module(nullptr, &dlc_module_release);
    Outcome o = loadModule(corrupt, module);
    if (!o.ok()) {
      EXPECT_TRUE(o.code == DLC_DATA_LOSS || o.code == DLC_FAILED_PRECONDITION)
          << o.message;
      continue;
    }
    ++loaded;
    // What the checks let through must run without touching memory outside
    // its buffers; keep it small so that a flipped size cannot make the test
    // allocate gigabytes.
    const ModuleFile &file = *module->file;
    bool small = true;
    for (const ValueInfo &g : file.globals())
      small = small && g.type.byteSize < (1 << 20);
    for (const FunctionInfo &f : file.functions()) {
      small = small && f.plan->arena_size() < (1 << 20);
      for (const ValueInfo &v : f.arguments)
        small = small && v.type.byteSize < (1 << 20);
      for (const ValueInfo &v : f.results)
        small = small && v.type.byteSize < (1 << 20);
    }
    if (!small)
      continue;
    SessionPtr session(nullptr, &dlc_session_release);
    if (!openSession(module.get(), device.get(), session).ok())
      continue;
    for (const FunctionInfo &f : file.functions()) {
      std::vector<std::vector<uint8_t>> storage;
      std::vector<dlc_tensor_t> inputs, outputs;
      for (uint32_t i : f.inputs) {
        const ValueInfo &v = f.arguments[i];
        storage.emplace_back(v.type.byteSize + 1);
        inputs.push_back({static_cast<dlc_dtype_t>(v.type.dtype),
                          static_cast<int32_t>(v.type.shape.size()),
                          v.type.shape.data(), storage.back().data()});
      }
      for (uint32_t i : f.outputs) {
        const ValueInfo &v = f.results[i];
        storage.emplace_back(v.type.byteSize + 1);
        outputs.push_back({static_cast<dlc_dtype_t>(v.type.dtype),
                           static_cast<int32_t>(v.type.shape.size()),
                           v.type.shape.data(), storage.back().data()});
      }
      outcome(dlc_session_call(session.get(), f.name.c_str(), inputs.data(),
                               inputs.size(), outputs.data(), outputs.size()));
    }
  }
  // Most flips hit bytes the checks look at.
  EXPECT_LT(loaded, 3000);
}

TEST(ModuleLoad, WrongIdentifierIsDataLoss) {
  std::vector<uint8_t> bytes = smallModule().finish();
  bytes[4] = 'X';
  ModulePtr module(nullptr, &dlc_module_release);
  Outcome o = loadModule(bytes, module);
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_EQ(o.message, "test.dlcm: not a valid dlc module (file identifier "
                       "is 'XLCM', expected 'DLCM')");
}

TEST(ModuleLoad, WrongVersionNamesBoth) {
  ModuleBuilder m = smallModule();
  m.formatVersion(kModuleFormatVersion + 1);
  Outcome o = load(m);
  EXPECT_EQ(o.code, DLC_FAILED_PRECONDITION);
  EXPECT_NE(o.message.find("module format version " +
                           std::to_string(kModuleFormatVersion + 1) +
                           ", this runtime reads version " +
                           std::to_string(kModuleFormatVersion)),
            std::string::npos)
      << o.message;
}

TEST(ModuleLoad, OutOfRangeReferencesAreRefused) {
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[0].matmul.result = arena(64);
    expectInvalid(m, "matmul result (16 bytes at offset 64 of arena) ends "
                     "past its 64 bytes");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[0].matmul.lhs = argument(5);
    expectInvalid(m, "function 0 ('forward'): step 0 (node 'mm' (MatMul)): "
                     "matmul lhs refers to argument 5, there are 2");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[1].matmul.result = result(2);
    expectInvalid(m, "matmul result refers to result 2, there are 2");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[1].matmul.rhs = constant(1);
    expectInvalid(m, "matmul rhs refers to constant 1, there are 1");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[1].matmul.rhs = constant(0, 8);
    expectInvalid(m, "ends past its 16 bytes");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[0].matmul.k = 3;
    expectInvalid(m, "matmul lhs (24 bytes at offset 0 of argument 0) ends "
                     "past its 16 bytes");
  }
  {
    // The memory planner may not put a library call's output over its
    // operands.
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[1].matmul.lhs = arena(0);
    m.function("forward").steps()[1].matmul.result = arena(0);
    expectInvalid(m, "step 1: matmul result (16 bytes at offset 0 of arena) "
                     "overlaps its lhs (16 bytes at offset 0)");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").arenaSize(128);
    m.function("forward").steps()[2].conv.x = arena(48);
    m.function("forward").steps()[2].conv.y = arena(60);
    expectInvalid(m, "convolution y (4 bytes at offset 60 of arena) overlaps "
                     "its x (16 bytes at offset 48)");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[0].matmul.batch = -1;
    expectInvalid(m, "matmul batch is -1");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[0].matmul.batch = 1 << 30;
    m.function("forward").steps()[0].matmul.lhsBatchStride = int64_t(1) << 40;
    expectInvalid(m, "overflow");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[3].destination = argument(0);
    expectInvalid(m, "copy destination is written but lies in argument 0");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[3].destination = constant(0);
    expectInvalid(m, "copy destination is written but lies in constant 0");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[3].bytes = 17;
    expectInvalid(m, "copy destination (17 bytes at offset 0 of result 1) "
                     "ends past its 16 bytes");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[2].conv.yShape = {1, 1, 2, 2};
    expectInvalid(m, "convolution output dimension 0 is 2, expected 1");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[2].conv.groups = 2;
    expectInvalid(m, "do not agree with 2 group(s)");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[2].conv.stride = {1};
    expectInvalid(m, "convolution stride has 1 values for 2 spatial");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[2].conv.stride = {0, 1};
    expectInvalid(m, "convolution stride is 0");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[2].conv.padLow = {int64_t(1) << 62, 0};
    m.function("forward").steps()[2].conv.padHigh = {int64_t(1) << 62, 0};
    expectInvalid(m, "convolution geometry overflows");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").steps()[2].kind = fb::StepKind::NONE;
    expectInvalid(m, "step 2: has unknown step kind 0");
  }
}

TEST(ModuleLoad, BadGlobalsAndSignaturesAreRefused) {
  {
    ModuleBuilder m = smallModule();
    m.function("forward").arguments()[1].global = 3;
    expectInvalid(m, "argument 1 ('w') names global 3, the module has 1");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").arguments()[1].shape = {4};
    expectInvalid(m, "argument 1 ('w') is float32[4] but global 'w' is "
                     "float32[2,2]");
  }
  {
    ModuleBuilder m = smallModule();
    m.function("forward").results()[0].global = 0;
    m.function("forward").results()[1].global = 0;
    m.function("forward").results()[1].shape = {2, 2};
    expectInvalid(m, "result 1 ('z') updates global 'w', which an earlier "
                     "result updates too");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("w", "param", DType::F32, {1});
    expectInvalid(m, "global 1 ('w'): has the name of an earlier global");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("big", "param", DType::F32, {int64_t(1) << 40, int64_t(1) << 40});
    expectInvalid(m, "global 1 ('big'): has more elements than fit in 63");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("neg", "param", DType::F32, {2, -1});
    expectInvalid(m, "global 1 ('neg'): has a negative dimension -1");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("short", "param", DType::F32, {2}, {1, 2, 3});
    expectInvalid(m, "initial value has 3 bytes, its type float32[2] needs 8");
  }
  // A 16-bit copy names another float32 global of its shape and has no
  // initial value of its own.
  {
    ModuleBuilder m = smallModule();
    m.global("w@bf16", "weight_copy", DType::BF16, {2, 2}, {}, 5);
    expectInvalid(m, "global 1 ('w@bf16'): is a copy of global 5, which is "
                     "not another global");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("w@bf16", "weight_copy", DType::BF16, {2, 2}, {}, -2);
    expectInvalid(m, "global 1 ('w@bf16'): is a copy of global -2");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("w@bf16", "weight_copy", DType::BF16, {4}, {}, 0);
    expectInvalid(m, "global 1 ('w@bf16'): is bfloat16[4], not a float16 or "
                     "bfloat16 copy of 'w' (float32[2,2])");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("w@f32", "weight_copy", DType::F32, {2, 2}, {}, 0);
    expectInvalid(m, "global 1 ('w@f32'): is float32[2,2], not a float16 or "
                     "bfloat16 copy of 'w' (float32[2,2])");
  }
  {
    ModuleBuilder m = smallModule();
    m.global("w@fp16", "weight_copy", DType::F16, {2, 2},
             std::vector<uint8_t>(8, 0), 0);
    expectInvalid(m, "global 1 ('w@fp16'): is a copy of 'w' but has an "
                     "initial value of its own");
  }
  // Data-parallel ranks: at least one, and a bound that keeps a ZeRO
  // bucket's size a checked product.
  for (uint32_t ranks : {0u, (1u << 20) + 1}) {
    ModuleBuilder m = smallModule();
    m.dataParallelRanks(ranks);
    expectInvalid(m, "is partitioned for " + std::to_string(ranks) +
                         " data-parallel ranks (expected 1 to 1048576)");
  }
}

TEST(ModuleLoad, ShardedGlobalsRecordTheirWholeShape) {
  // A [2, 3] value's shards over 4 ranks: 2 elements each.
  auto sharded = [](std::vector<int64_t> shard,
                    std::optional<std::vector<int64_t>> whole) {
    ModuleBuilder m = smallModule();
    m.dataParallelRanks(4);
    m.shardGlobal(m.global("m", "state", DType::F32, shard), whole);
    return m;
  };
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(
      loadModule(sharded({2}, std::vector<int64_t>{2, 3}).finish(), module)
          .ok());
  int32_t rank = 0;
  const int64_t *shape = nullptr;
  ASSERT_TRUE(
      outcome(dlc_module_global_whole_shape(module.get(), 1, &rank, &shape))
          .ok());
  EXPECT_EQ(std::vector<int64_t>(shape, shape + rank),
            (std::vector<int64_t>{2, 3}));
  Outcome o =
      outcome(dlc_module_global_whole_shape(module.get(), 0, &rank, &shape));
  EXPECT_EQ(o.code, DLC_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "test.dlcm: global 0 ('w') is not sharded");
  o = outcome(dlc_module_global_whole_shape(module.get(), 2, &rank, &shape));
  EXPECT_EQ(o.message, "test.dlcm: no global 2 (it has 2)");
  // Written before the shape was recorded.
  ASSERT_TRUE(loadModule(sharded({2}, std::nullopt).finish(), module).ok());
  o = outcome(dlc_module_global_whole_shape(module.get(), 1, &rank, &shape));
  EXPECT_EQ(o.code, DLC_UNAVAILABLE);
  EXPECT_NE(o.message.find("does not record its whole shape"),
            std::string::npos)
      << o.message;
  expectInvalid(sharded({3}, std::vector<int64_t>{2, 3}),
                "global 1 ('m'): is float32[3], not a shard of [2,3] over 4 "
                "ranks");
  expectInvalid(sharded({1}, std::vector<int64_t>{-1}),
                "global 1 ('m'): whole shape [-1] is not a tensor's");
  // A scalar's shards: one element each, three of them padding.
  EXPECT_TRUE(load(sharded({1}, std::vector<int64_t>{})).ok());
  ModuleBuilder plain = smallModule();
  plain.shardGlobal(0, std::vector<int64_t>{2, 2}, /*sharded=*/false);
  expectInvalid(plain, "global 0 ('w'): has a whole shape but is not sharded");
}

TEST(ModuleLoad, CollectiveStepsAreChecked) {
  // A ZeRO bucket holds every rank's shards and this rank's: (N + 1) x the
  // shards' bytes, which must fit 63 bits though each value does. 2^20
  // ranks and a value of 2^61 - 2^20 float32 elements (2^63 - 2^22 bytes):
  // shards of 2^43 - 4 bytes, times 2^20 + 1.
  const uint32_t ranks = 1u << 20;
  const int64_t elements = (int64_t(1) << 61) - (int64_t(1) << 20);
  const int64_t shard = elements / ranks;
  {
    ModuleBuilder m;
    m.dataParallelRanks(ranks);
    FunctionBuilder &f = m.function("zero");
    uint32_t g = f.argument("g", "input", DType::F32, {elements});
    uint32_t s = f.result("s", "output", DType::F32, {shard});
    f.shard(fb::ShardKind::ReduceScatter, {argument(g)}, {result(s)},
            {uint64_t(elements)}, ranks, fb::RankReduction::Mean, 1);
    expectInvalid(m, "shard step's bucket of 1048577 times 8796093022204 "
                     "bytes overflows 63 bits");
  }
  // Its ranks must be the module's; a step's values come in pairs.
  {
    ModuleBuilder m;
    m.dataParallelRanks(2);
    FunctionBuilder &f = m.function("zero");
    uint32_t g = f.argument("g", "input", DType::F32, {4});
    uint32_t s = f.result("s", "output", DType::F32, {2});
    f.shard(fb::ShardKind::ReduceScatter, {argument(g)}, {result(s)}, {4}, 4,
            fb::RankReduction::Mean, 1);
    expectInvalid(m, "shard step over 4 ranks in a module of 2 "
                     "data-parallel rank(s)");
  }
  {
    ModuleBuilder m;
    m.dataParallelRanks(2);
    FunctionBuilder &f = m.function("step");
    uint32_t g = f.argument("g", "input", DType::F32, {4});
    f.allReduce({argument(g)}, {}, {4}, fb::RankReduction::Mean, 1);
    expectInvalid(m, "all-reduce has 1 buffers for 1 values (expected an "
                     "input and an output each)");
  }
}

TEST(ModuleLoad, TensorParallelSlicesAreChecked) {
  // "w" [2, 2] is tensor rank t's slice along dimension 1 of a [2, 4] whole:
  // the initial value holds both ranks' slices, one after the other.
  auto split = [](uint32_t tensorRanks, int32_t dim, size_t values) {
    ModuleBuilder m = smallModule();
    m.tensorParallelRanks(tensorRanks);
    uint32_t g = m.global("v", "param", DType::F32, {2, 2},
                          bytesOf(std::vector<float>(values, 1.0f)));
    m.tpSplit(g, dim);
    return m;
  };
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(split(2, 1, 8).finish(), module).ok());
  EXPECT_EQ(dlc_module_tensor_parallel_ranks(module.get()), 2);
  EXPECT_EQ(dlc_module_global_tp_split(module.get(), 1), 1);
  EXPECT_EQ(dlc_module_global_tp_split(module.get(), 0), -1);
  EXPECT_EQ(dlc_module_global_tp_split(module.get(), 2), -1);
  EXPECT_EQ(dlc_module_global_tp_split(nullptr, 0), -1);
  EXPECT_EQ(dlc_module_global_tp_split_groups(module.get(), 1), 1);
  EXPECT_EQ(dlc_module_global_tp_split_groups(nullptr, 0), 1);
  EXPECT_EQ(dlc_module_tensor_parallel_ranks(nullptr), 0);
  {
    // A fused projection's blocks: dimension 0 of 2 is 2 blocks of 1 row.
    ModuleBuilder m = split(2, 0, 8);
    m.tpSplit(1, 0, 2);
    ASSERT_TRUE(loadModule(m.finish(), module).ok());
    EXPECT_EQ(dlc_module_global_tp_split_groups(module.get(), 1), 2);
    m.tpSplit(1, 1, 3);
    expectInvalid(m, "global 1 ('v'): is split in 3 blocks along dimension 1 "
                     "of float32[2,2], which are not equal");
    m.tpSplit(1, 1, 0);
    expectInvalid(m, "global 1 ('v'): is split in 0 blocks");
  }
  expectInvalid(split(2, 1, 4),
                "global 1 ('v'): initial value has 16 bytes, its type "
                "float32[2,2] times 2 tensor-parallel slices needs 32");
  expectInvalid(split(2, 2, 8), "global 1 ('v'): is split along dimension 2 "
                                "of float32[2,2] in a module of 2 "
                                "tensor-parallel rank(s)");
  expectInvalid(split(1, 0, 4), "global 1 ('v'): is split along dimension 0 "
                                "of float32[2,2] in a module of 1 "
                                "tensor-parallel rank(s)");
  {
    // ZeRO-1's shard [3] of a tensor rank's [2, 3] slice, over 2 replicas:
    // split along the slice's dimensions, its initial value its own.
    ModuleBuilder m = smallModule();
    m.dataParallelRanks(2);
    m.tensorParallelRanks(2);
    uint32_t g = m.global("m", "optimizer_state", DType::F32, {3},
                          bytesOf(std::vector<float>(3, 0.0f)));
    m.shardGlobal(g, std::vector<int64_t>{2, 3});
    m.tpSplit(g, 1);
    ASSERT_TRUE(loadModule(m.finish(), module).ok());
    EXPECT_EQ(dlc_module_global_tp_split(module.get(), g), 1);
    m.tpSplit(g, 2);
    expectInvalid(m, "global 1 ('m'): is split along dimension 2 of its "
                     "whole [2,3] in a module of 2 tensor-parallel rank(s)");
    m.tpSplit(g, 1);
    m.shardGlobal(g, std::nullopt);
    expectInvalid(m, "global 1 ('m'): is sharded in a tensor-parallel "
                     "module, but has no whole shape");
    m.tpSplit(g, -1);
    expectInvalid(m, "global 1 ('m'): is sharded in a tensor-parallel "
                     "module, but has no whole shape");
  }
  {
    ModuleBuilder m = split(2, 1, 8);
    m.global("v@fp16", "weight_copy", DType::F16, {2, 2}, {}, 1);
    expectInvalid(m, "global 2 ('v@fp16'): is a copy of 'v' but not split "
                     "among the tensor-parallel ranks as it is");
  }
  {
    ModuleBuilder m = smallModule();
    m.tensorParallelRanks(0);
    expectInvalid(m, "is partitioned for 0 tensor-parallel ranks (expected 1 "
                     "to 1048576 ranks in all)");
  }
  {
    ModuleBuilder m = smallModule();
    m.dataParallelRanks(1u << 10);
    m.tensorParallelRanks(1u << 11);
    expectInvalid(m, "is partitioned for 2048 tensor-parallel ranks (expected "
                     "1 to 1048576 ranks in all)");
  }
  {
    ModuleBuilder m = smallModule();
    m.tensorParallelRanks(2);
    m.target("cuda");
    expectInvalid(m, "is partitioned for tensor parallelism, which runs on "
                     "CPU ranks only so far, but targets 'cuda'");
  }
  {
    ModuleBuilder m;
    FunctionBuilder &f = m.function("step");
    uint32_t g = f.argument("g", "input", DType::F32, {4});
    uint32_t r = f.result("r", "output", DType::F32, {4});
    f.allReduce({argument(g)}, {result(r)}, {4}, fb::RankReduction::Sum, 1);
    f.steps().back().amongTensorRanks = true;
    expectInvalid(m, "all-reduce among the tensor-parallel ranks of a module "
                     "of one tensor rank");
    m.tensorParallelRanks(2);
    EXPECT_TRUE(load(m).ok());
  }
  // A tensor rank's slice of a constant (the first class of its slice of
  // the logits, dlc.rank_shard with `tensor`) may hold integers; it is
  // over the module's tensor ranks, whose count divides its elements.
  auto firstClass = [](uint32_t tensorRanks, uint32_t stepRanks,
                       int64_t elements, bool tensor) {
    ModuleBuilder m;
    m.tensorParallelRanks(tensorRanks);
    FunctionBuilder &f = m.function("step");
    uint32_t all = f.argument("firsts", "input", DType::I64, {elements});
    uint32_t own = f.result("first", "output", DType::I64,
                            {(elements + stepRanks - 1) / stepRanks});
    f.shard(fb::ShardKind::RankShard, {argument(all)}, {result(own)},
            {uint64_t(elements)}, stepRanks, fb::RankReduction::Mean, 0);
    f.steps().back().dtype = DType::I64;
    f.steps().back().amongTensorRanks = tensor;
    return m;
  };
  EXPECT_TRUE(load(firstClass(2, 2, 2, true)).ok());
  expectInvalid(firstClass(2, 4, 4, true),
                "shard step over 4 ranks in a module of 2 tensor-parallel "
                "rank(s)");
  expectInvalid(firstClass(2, 2, 3, true),
                "shard step value 0 of 3 elements does not divide over 2 "
                "tensor-parallel ranks");
  // A module of one tensor rank has no tensor group (its session makes
  // none).
  ModuleBuilder oneTensorRank = firstClass(1, 1, 2, true);
  oneTensorRank.dataParallelRanks(2);
  expectInvalid(oneTensorRank, "shard step among the tensor-parallel ranks "
                               "of a module of one tensor rank");
  // Data-parallel ranks shard float state alone.
  ModuleBuilder dataParallel = firstClass(1, 2, 2, false);
  dataParallel.dataParallelRanks(2);
  expectInvalid(dataParallel, "shard step of element type");
}

TEST(ModuleLoad, PipelineStagesAreChecked) {
  // Stage 0 computes r and sends it to stage 1.
  auto staged = [](uint32_t stages) {
    ModuleBuilder m;
    m.pipelineStages(stages);
    FunctionBuilder &f = m.function("step");
    uint32_t x = f.argument("x", "input", DType::F32, {4});
    uint32_t r = f.result("r", "output", DType::F32, {4});
    f.results()[r].stage = 1;
    f.arenaSize(16);
    f.copy(argument(x), arena(0), 16);
    f.steps().back().stage = 0;
    f.transfer(0, 1, arena(0), result(r), 16);
    return m;
  };
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(staged(2).finish(), module).ok());
  EXPECT_EQ(dlc_module_pipeline_stages(module.get()), 2);
  EXPECT_EQ(dlc_module_pipeline_stages(nullptr), 0);
  expectInvalid(staged(1), "function 0 ('step'): result 0 is held by stage 1 "
                           "of a module of 1 pipeline stage(s)");
  {
    ModuleBuilder m = staged(2);
    m.function("step").steps()[0].stage = 2;
    expectInvalid(m, "step 0: runs on stage 2 of a module of 2 pipeline "
                     "stage(s)");
  }
  {
    ModuleBuilder m = staged(2);
    m.function("step").steps()[1].to = 0;
    expectInvalid(m, "step 1: transfers from stage 0 to stage 0 in a module "
                     "of 2 pipeline stage(s)");
  }
  {
    ModuleBuilder m = staged(2);
    m.function("step").steps()[1].stage = 1;
    expectInvalid(m, "step 1: is a transfer, which its two stages run, but "
                     "names stage 1");
  }
  {
    ModuleBuilder m = staged(2);
    m.function("step").steps()[1].waitStep = 1;
    expectInvalid(m, "step 1: transfer waits before step 1, not after it and "
                     "within the function's 2 steps");
  }
  {
    ModuleBuilder m = staged(2);
    m.function("step").steps()[1].destination = argument(0);
    expectInvalid(m, "step 1: transfer destination");
  }
  {
    ModuleBuilder m = staged(2);
    m.target("cuda");
    expectInvalid(m, "is cut into pipeline stages, which run on CPU ranks "
                     "only so far, but targets 'cuda'");
  }
  {
    ModuleBuilder m = staged(65);
    expectInvalid(m, "is cut into 65 pipeline stages (expected 1 to 64");
  }
  {
    ModuleBuilder m = staged(2);
    m.pipelineStages(0);
    expectInvalid(m, "is cut into 0 pipeline stages (expected 1 to 64, and "
                     "at most 1048576 ranks in all)");
  }
  {
    ModuleBuilder m = staged(2);
    m.dataParallelRanks(1u << 20);
    expectInvalid(m, "is cut into 2 pipeline stages (expected 1 to 64, and "
                     "at most 1048576 ranks in all)");
  }
  {
    ModuleBuilder m = staged(2);
    m.function("step").steps()[1].source = argument(5);
    expectInvalid(m, "step 1: transfer source refers to argument 5, there "
                     "are 1");
  }
}

TEST(ModuleLoad, KernelReferencesAreChecked) {
  ModuleBuilder m;
  uint32_t k = m.kernel("test_add_f32");
  m.sharedObject(testKernelsObject());
  FunctionBuilder &f = m.function("add");
  f.argument("a", "input", DType::F32, {4});
  f.result("b", "output", DType::F32, {4});
  f.arenaSize(64);
  f.kernel(k, {argument(0), argument(0), result(0)}, 4);
  EXPECT_TRUE(load(m).ok());

  ModuleBuilder badKernel = m;
  badKernel.function("add").steps()[0].kernel = 1;
  expectInvalid(badKernel, "runs kernel 1, the module has 1");

  ModuleBuilder badOffset = m;
  badOffset.function("add").steps()[0].buffers[0] = arena(64);
  expectInvalid(badOffset, "kernel buffer 0 (16 bytes at offset 64 of "
                           "arena) ends past its 64 bytes");

  ModuleBuilder writesInput = m;
  writesInput.function("add").steps()[0].buffers[2] = argument(0);
  expectInvalid(writesInput, "kernel buffer 2 is written but lies in argument "
                             "0 (only the arena and results are writable)");

  ModuleBuilder noSizes = m;
  noSizes.function("add").steps()[0].bufferBytes.clear();
  expectInvalid(noSizes, "gives 0 buffer sizes for 3 buffers");

  ModuleBuilder noBuffers = m;
  noBuffers.function("add").steps()[0].buffers.clear();
  noBuffers.function("add").steps()[0].bufferBytes.clear();
  expectInvalid(noBuffers, "runs a kernel on no buffers");

  ModuleBuilder badIndex = m;
  badIndex.function("add").steps()[0].buffers[2] = result(1);
  expectInvalid(badIndex, "kernel buffer 2 refers to result 1, there are 1");

  ModuleBuilder negative = m;
  negative.function("add").steps()[0].iterations = -4;
  expectInvalid(negative, "has -4 iterations");

  ModuleBuilder unnamed = m;
  unnamed.kernel("test_add_f32");
  expectInvalid(unnamed, "kernel 1: 'test_add_f32' is listed twice");
}

TEST(ModuleLoad, CudaStepFieldsAreChecked) {
  ModuleBuilder m;
  uint32_t k = m.kernel("test_add_f32");
  m.sharedObject(testKernelsObject());
  FunctionBuilder &f = m.function("add");
  f.argument("a", "input", DType::F32, {4});
  f.result("b", "output", DType::F32, {4});
  f.kernel(k, {argument(0), argument(0), result(0)}, 4);
  ModuleBuilder warps = m;
  warps.function("add").steps()[0].threadsPerIteration = 32;
  EXPECT_TRUE(load(warps).ok());
  ModuleBuilder blocks = m;
  blocks.function("add").steps()[0].threadsPerIteration = 256;
  EXPECT_TRUE(load(blocks).ok());
  for (uint32_t threads : {7u, 16u, 96u, 2048u}) {
    ModuleBuilder odd = m;
    odd.function("add").steps()[0].threadsPerIteration = threads;
    expectInvalid(odd, "runs " + std::to_string(threads) +
                           " threads per iteration (expected 1, or a power "
                           "of two from 32 to 1024)");
  }

  // A bias epilogue: a vector of n = 2 elements (the global w's first row).
  ModuleBuilder cuda = smallModule();
  cuda.target("cuda");
  MatmulSpec &mm = cuda.function("forward").steps()[0].matmul;
  mm.epilogue = fb::MatmulEpilogue::BiasRelu;
  mm.bias = argument(1);
  EXPECT_TRUE(load(cuda).ok());

  ModuleBuilder cpu = cuda;
  cpu.target("cpu");
  expectInvalid(cpu, "matmul has a 'BiasRelu' epilogue, which only the "
                     "'cuda' target fuses");
  ModuleBuilder noBias = cuda;
  noBias.function("forward").steps()[0].matmul.bias.reset();
  expectInvalid(noBias, "matmul epilogue has no bias");
  ModuleBuilder biasPastEnd = cuda;
  biasPastEnd.function("forward").steps()[0].matmul.bias = argument(1, 12);
  expectInvalid(biasPastEnd, "matmul bias (8 bytes at offset 12 of argument "
                             "1) ends past its 16 bytes");
  ModuleBuilder unknown = cuda;
  unknown.function("forward").steps()[0].matmul.epilogue =
      static_cast<fb::MatmulEpilogue>(9);
  expectInvalid(unknown, "matmul has unknown epilogue 9");
}

TEST(ModuleLoad, KernelLibraryProblemsFailSessionCreation) {
  auto device = cpuDevice(1);
  ModuleBuilder m;
  uint32_t k = m.kernel("no_such_kernel");
  FunctionBuilder &f = m.function("f");
  f.result("out", "output", DType::F32, {1});
  f.kernel(k, {result(0)}, 1);
  // No shared object at all.
  ModulePtr module(nullptr, &dlc_module_release);
  ASSERT_TRUE(loadModule(m.finish(), module).ok());
  SessionPtr session(nullptr, &dlc_session_release);
  Outcome o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_EQ(o.message, "test.dlcm: has 1 kernels but no CPU shared object");
  // Not an ELF file.
  m.sharedObject({1, 2, 3, 4, 5});
  ASSERT_TRUE(loadModule(m.finish(), module).ok());
  o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_EQ(o.message,
            "test.dlcm: cpu_shared_object: not an ELF shared object");
  // A symbol the object lacks, and one only libc defines.
  m.sharedObject(testKernelsObject());
  ASSERT_TRUE(loadModule(m.finish(), module).ok());
  o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_NE(o.message.find("no symbol 'no_such_kernel'"), std::string::npos)
      << o.message;
  ModuleBuilder libc;
  libc.function("f").result("out", "output", DType::F32, {1});
  libc.function("f").kernel(libc.kernel("memcpy"), {result(0)}, 1);
  libc.sharedObject(testKernelsObject());
  ASSERT_TRUE(loadModule(libc.finish(), module).ok());
  o = openSession(module.get(), device.get(), session);
  EXPECT_EQ(o.code, DLC_DATA_LOSS);
  EXPECT_NE(o.message.find("no symbol 'memcpy' of their own"),
            std::string::npos)
      << o.message;
}

} // namespace
