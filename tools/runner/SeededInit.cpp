//===- SeededInit.cpp - Seeded random parameters --------------------------===//
#include "tools/runner/SeededInit.h"

#include "tools/runner/Error.h"
#include "tools/runner/Values.h"

#include <algorithm>
#include <cmath>

namespace dlc::runner {
namespace {

/// SplitMix64: a tiny generator whose streams for different seeds are
/// independent enough for initial weights.
uint64_t splitMix(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// FNV-1a of `name`, so a global's stream does not depend on its index.
uint64_t hashName(const std::string &name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name)
    h = (h ^ c) * 0x100000001B3ull;
  return h;
}

} // namespace

void initializeParameters(Engine &engine, uint64_t seed, int tensorRank) {
  const std::vector<dlc_value_info_t> globals = engine.globals();
  for (size_t g = 0; g < globals.size(); ++g) {
    const dlc_value_info_t &info = globals[g];
    if (std::string(info.role) != "param")
      continue;
    // A slice's values are its part of the whole's.
    Tensor t = makeTensor(info);
    const int32_t split = engine.tpSplit(g);
    const int ranks = engine.tensorParallelRanks();
    if (split >= 0) {
      std::vector<int64_t> whole = t.shape();
      whole[split] *= ranks;
      t = Tensor(t.dtype(), whole);
    }
    if (t.dtype() != DType::F32 && t.dtype() != DType::F64)
      throw Error(std::string("--init-seed: parameter '") + info.name +
                  "' is " + describeType(info) +
                  ", only float32 and float64 parameters can be drawn");
    std::string name = info.name;
    bool isScale = name.size() >= 6 && name.substr(name.size() - 6) == "weight";
    int64_t fanIn = t.rank() >= 2
                        ? t.numElements() / std::max<int64_t>(t.shape()[0], 1)
                        : 1;
    double bound =
        1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fanIn, 1)));
    uint64_t state = seed ^ hashName(name);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      double value = isScale ? 1.0 : 0.0;
      if (t.rank() >= 2) {
        // 53 random bits -> [0, 1) -> [-bound, bound).
        double u = static_cast<double>(splitMix(state) >> 11) * 0x1.0p-53;
        value = (2 * u - 1) * bound;
      }
      if (t.dtype() == DType::F32)
        t.data<float>()[i] = static_cast<float>(value);
      else
        t.data<double>()[i] = value;
    }
    if (split >= 0)
      t = sliceOf(t, split, tensorRank, ranks, engine.tpSplitGroups(g));
    engine.setGlobal(info.name, t.bytes(), t.byteSize());
  }
}

} // namespace dlc::runner
