//===- StepTimer.cpp - Times one function of a compiled module ------------===//
//
//   dlc-step-timer MODULE.dlcm --data DATA.npz [--function train_step]
//                  [--device cpu|cuda:N] [--threads N] [--warmup W]
//                  [--steps S] [--profile PROFILE.jsonl]
//
// Calls the function S times after W warm-up calls on the first batch of
// DATA (arrays named by the function's inputs, the batch taken from the
// front) and prints one JSON object: the median, minimum and mean
// milliseconds per call; --profile also writes the per-step timings of the
// timed calls (dlc_session_write_profile). bench/bench_cpu.py and
// bench/bench_gpu.py drive it beside PyTorch. A call returns once its
// outputs are on the host, so a GPU call's time is its whole step. A module
// without stored parameters runs on zeros, which take as long.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/Npz.h"

#include <dlc/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "dlc-step-timer: error: %s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  // No --device: the module's target ("cpu", or cuda:0), as the runner.
  std::string modulePath, dataPath, function = "train_step", profile,
                                    deviceSpec;
  int threads = 0, warmup = 3, steps = 10;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--data")
      dataPath = value();
    else if (arg == "--function")
      function = value();
    else if (arg == "--device")
      deviceSpec = value();
    else if (arg == "--threads")
      threads = std::atoi(value().c_str());
    else if (arg == "--warmup")
      warmup = std::atoi(value().c_str());
    else if (arg == "--steps")
      steps = std::atoi(value().c_str());
    else if (arg == "--profile")
      profile = value();
    else if (!arg.empty() && arg[0] != '-' && modulePath.empty())
      modulePath = arg;
    else
      return fail("unknown argument '" + arg + "'");
  }
  if (modulePath.empty() || dataPath.empty() || steps < 1 || warmup < 0)
    return fail("usage: dlc-step-timer MODULE --data DATA.npz [--function F] "
                "[--device SPEC] [--threads N] [--warmup W] [--steps S>=1] "
                "[--profile FILE]");
  dlc::NamedTensors data;
  dlc::StatusOwner read(dlc::readNpz(dataPath, data));
  if (read.get())
    return fail(dlc_status_message(read.get()));
  try {
    dlc::rt::Module module = dlc::rt::Module::loadFile(modulePath);
    if (deviceSpec.empty())
      deviceSpec = module.target() == "cuda" ? "cuda:0" : "cpu";
    dlc::rt::Device device(deviceSpec, threads);
    dlc::rt::Session session(module, device);
    dlc::rt::Signature signature = module.signature(function);
    std::vector<dlc_tensor_t> inputs, outputs;
    std::vector<std::vector<char>> outputBuffers;
    for (const dlc_value_info_t &info : signature.inputs) {
      auto it = std::find_if(data.begin(), data.end(), [&](const auto &entry) {
        return entry.first == info.name;
      });
      if (it == data.end())
        return fail(dataPath + " has no array '" + info.name + "'");
      dlc::Tensor &t = it->second;
      if (static_cast<int>(t.dtype()) != static_cast<int>(info.dtype) ||
          t.rank() != info.rank ||
          !std::equal(t.shape().begin() + 1, t.shape().end(), info.shape + 1) ||
          t.shape()[0] < info.shape[0])
        return fail("array '" + std::string(info.name) + "' is " +
                    t.describe() +
                    ", which does not hold a batch of the input");
      inputs.push_back({info.dtype, info.rank, info.shape, t.bytes()});
    }
    for (const dlc_value_info_t &info : signature.outputs) {
      size_t bytes = dlc_dtype_size(info.dtype);
      for (int d = 0; d < info.rank; ++d)
        bytes *= static_cast<size_t>(info.shape[d]);
      outputBuffers.emplace_back(bytes);
    }
    for (size_t i = 0; i < signature.outputs.size(); ++i) {
      const dlc_value_info_t &info = signature.outputs[i];
      outputs.push_back(
          {info.dtype, info.rank, info.shape, outputBuffers[i].data()});
    }
    std::vector<double> times;
    for (int i = 0; i < warmup + steps; ++i) {
      if (i == warmup && !profile.empty())
        session.setProfiling(true);
      auto start = std::chrono::steady_clock::now();
      session.call(function, inputs, outputs);
      std::chrono::duration<double, std::milli> elapsed =
          std::chrono::steady_clock::now() - start;
      if (i >= warmup)
        times.push_back(elapsed.count());
    }
    if (!profile.empty())
      session.writeProfile(profile);
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (double t : times)
      mean += t / times.size();
    double median =
        sorted.size() % 2
            ? sorted[sorted.size() / 2]
            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf("{\"median_ms\": %.4f, \"min_ms\": %.4f, \"mean_ms\": %.4f, "
                "\"steps\": %d}\n",
                median, sorted.front(), mean, steps);
  } catch (const dlc::rt::Error &e) {
    return fail(e.what());
  }
  return 0;
}
