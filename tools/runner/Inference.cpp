//===- Inference.cpp - --inputs/--outputs: one call of forward ------------===//
#include "tools/runner/Inference.h"

#include "runtime/support/Npz.h"
#include "tools/runner/Error.h"
#include "tools/runner/Values.h"

#include <set>

namespace dlc::runner {

void runInference(Engine &engine, const std::string &inputsPath,
                  const std::string &outputsPath) {
  rt::Signature forward = engine.signature("forward");
  NamedTensors arrays;
  throwIfError(readNpz(inputsPath, arrays));

  // Match the file's arrays to forward's inputs, collecting every problem.
  std::vector<dlc_tensor_t> inputs;
  std::string expected, problems;
  std::set<std::string> used;
  for (const dlc_value_info_t &in : forward.inputs) {
    expected += (expected.empty() ? "" : ", ") + std::string(in.name) + ": " +
                describeType(in);
    auto it = arrays.begin();
    while (it != arrays.end() && it->first != in.name)
      ++it;
    if (it == arrays.end()) {
      problems += "; missing array '" + std::string(in.name) + "'";
      continue;
    }
    used.insert(in.name);
    if (!sameType(in, it->second))
      problems += "; array '" + it->first + "' is " + it->second.describe();
    inputs.push_back(view(it->second));
  }
  for (const auto &[name, tensor] : arrays)
    if (!used.count(name))
      problems += "; unexpected array '" + name + "'";
  if (!problems.empty())
    throw Error(inputsPath + ": does not match forward's inputs (" + expected +
                ")" + problems);

  NamedTensors results;
  for (const dlc_value_info_t &out : forward.outputs)
    results.emplace_back(out.name, makeTensor(out));
  std::vector<dlc_tensor_t> outputs;
  for (auto &[name, tensor] : results)
    outputs.push_back(view(tensor));
  engine.call("forward", inputs, outputs);
  throwIfError(writeNpz(outputsPath, results));
}

} // namespace dlc::runner
