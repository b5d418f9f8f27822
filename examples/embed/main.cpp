//===- main.cpp - Train a compiled module from a program of your own -----===//
//
// The smallest embedding of the dlc runtime: load a module, print its
// functions' signatures, open a CPU session, run `train_step` on random
// (seeded) batches and print the losses, then run `forward`.
//
// Usage: embed MODULE.dlcm [STEPS (default 5)] [THREADS (default 0: one per
// core)]
//
// Inputs are drawn by dtype: floats from N(0, 1); class-index labels
// (dlc_value_info_t's num_classes > 0) uniformly from [0, num_classes);
// other integers and bools are 0, as are float16/bfloat16 inputs (no
// conversion here).
//
//===----------------------------------------------------------------------===//
#include <dlc/runtime.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

std::string describe(const dlc_value_info_t &v) {
  std::string s = std::string(v.name) + ": " + dlc_dtype_name(v.dtype) + "[";
  for (int32_t i = 0; i < v.rank; ++i)
    s += (i ? "," : "") + std::to_string(v.shape[i]);
  return s + "] (" + v.role + ")";
}

int64_t elements(const dlc_value_info_t &v) {
  int64_t n = 1;
  for (int32_t i = 0; i < v.rank; ++i)
    n *= v.shape[i];
  return n;
}

/// A tensor's bytes, 8-byte aligned, with its C API view.
struct Buffer {
  dlc_value_info_t info;
  std::vector<uint64_t> storage;

  explicit Buffer(const dlc_value_info_t &v) : info(v) {
    size_t bytes = static_cast<size_t>(elements(v)) * dlc_dtype_size(v.dtype);
    storage.assign((bytes + 7) / 8, 0);
  }
  dlc_tensor_t view() {
    return dlc_tensor_t{info.dtype, info.rank, info.shape, storage.data()};
  }
  double first() const {
    if (info.dtype == DLC_F32) {
      float f;
      std::memcpy(&f, storage.data(), sizeof(f));
      return f;
    }
    if (info.dtype == DLC_F64) {
      double d;
      std::memcpy(&d, storage.data(), sizeof(d));
      return d;
    }
    return 0;
  }
};

void fill(Buffer &b, std::mt19937 &rng) {
  int64_t classes = b.info.num_classes;
  std::normal_distribution<float> normal(0, 1);
  int64_t n = elements(b.info);
  if (b.info.dtype == DLC_F32) {
    auto *p = reinterpret_cast<float *>(b.storage.data());
    for (int64_t i = 0; i < n; ++i)
      p[i] = normal(rng);
  } else if (b.info.dtype == DLC_F64) {
    auto *p = reinterpret_cast<double *>(b.storage.data());
    for (int64_t i = 0; i < n; ++i)
      p[i] = normal(rng);
  } else if ((b.info.dtype == DLC_I64 || b.info.dtype == DLC_I32) &&
             classes > 0) {
    std::uniform_int_distribution<int64_t> label(0, classes - 1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t v = label(rng);
      if (b.info.dtype == DLC_I64)
        reinterpret_cast<int64_t *>(b.storage.data())[i] = v;
      else
        reinterpret_cast<int32_t *>(b.storage.data())[i] =
            static_cast<int32_t>(v);
    }
  }
}

bool hasFunction(const dlc::rt::Module &m, const std::string &name) {
  for (size_t i = 0; i < m.functionCount(); ++i)
    if (m.functionName(i) == name)
      return true;
  return false;
}

/// Calls `function` on freshly drawn inputs and returns its outputs.
std::vector<Buffer> call(dlc::rt::Session &session,
                         const dlc::rt::Module &module,
                         const std::string &function, std::mt19937 &rng) {
  dlc::rt::Signature sig = module.signature(function);
  std::vector<Buffer> inputs, outputs;
  std::vector<dlc_tensor_t> in, out;
  for (const dlc_value_info_t &v : sig.inputs) {
    inputs.emplace_back(v);
    fill(inputs.back(), rng);
  }
  for (const dlc_value_info_t &v : sig.outputs)
    outputs.emplace_back(v);
  for (Buffer &b : inputs)
    in.push_back(b.view());
  for (Buffer &b : outputs)
    out.push_back(b.view());
  session.call(function, in, out);
  return outputs;
}

int run(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODULE.dlcm [STEPS] [THREADS]\n", argv[0]);
    return 2;
  }
  int steps = argc > 2 ? std::atoi(argv[2]) : 5;
  int threads = argc > 3 ? std::atoi(argv[3]) : 0;

  dlc::rt::Module module = dlc::rt::Module::loadFile(argv[1]);
  std::printf("module %s: model %s, target %s\n", argv[1],
              module.modelName().c_str(), module.target().c_str());
  for (size_t i = 0; i < module.functionCount(); ++i) {
    std::string name = module.functionName(i);
    dlc::rt::Signature sig = module.signature(name);
    std::printf("  %s(", name.c_str());
    for (size_t j = 0; j < sig.inputs.size(); ++j)
      std::printf("%s%s", j ? ", " : "", describe(sig.inputs[j]).c_str());
    std::printf(") -> (");
    for (size_t j = 0; j < sig.outputs.size(); ++j)
      std::printf("%s%s", j ? ", " : "", describe(sig.outputs[j]).c_str());
    std::printf(")\n");
  }

  dlc::rt::Session session(module, dlc::rt::Device("cpu", threads));
  std::mt19937 rng(0);
  if (hasFunction(module, "train_step")) {
    for (int step = 0; step < steps; ++step) {
      std::vector<Buffer> outputs = call(session, module, "train_step", rng);
      std::printf("train_step %d:", step);
      for (const Buffer &b : outputs)
        if (std::string(b.info.role) == "loss")
          std::printf(" %s = %.6f", b.info.name, b.first());
      std::printf("\n");
    }
  }
  if (hasFunction(module, "forward"))
    for (const Buffer &b : call(session, module, "forward", rng))
      std::printf("forward: %s, first element %.6f\n", describe(b.info).c_str(),
                  b.first());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const dlc::rt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
