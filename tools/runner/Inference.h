//===- Inference.h - --inputs/--outputs: one call of forward ----*- C++ -*-===//
#ifndef DLC_TOOLS_RUNNER_INFERENCE_H
#define DLC_TOOLS_RUNNER_INFERENCE_H

#include "tools/runner/Engine.h"

#include <string>

namespace dlc::runner {

/// Runs forward on the arrays of `inputsPath` (one per caller-facing input,
/// by name; any mismatch is one error listing what was expected) and writes
/// its outputs, by name, to `outputsPath` (replaced atomically). Throws on
/// failure.
void runInference(Engine &engine, const std::string &inputsPath,
                  const std::string &outputsPath);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_INFERENCE_H
