//===- Runner.h - The runner of compiled dlc modules ------------*- C++ -*-===//
//
// The program behind `dlc-run MODULE.dlcm ...` and behind training binaries
// (dlc-compile --emit=exe, the dlc-runner executable with a module
// appended): it trains a module's train_step on an .npz dataset, runs its
// forward on given inputs, or describes it. It needs only the runtime's C
// API and runtime/support, never MLIR, so it builds in the runtime-only
// configuration.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_RUNNER_H
#define DLC_TOOLS_RUNNER_RUNNER_H

#include <functional>
#include <string>

namespace dlc::runner {

/// Runs the runner on its command line and returns the process's exit code
/// (0, or 1 after printing one `NAME: error: ...` line, NAME being argv[0]'s
/// file name). When `embeddingFile` is non-null and that file ends with an
/// embedded module (runtime/module/Embedded.h: a training binary passes
/// "/proc/self/exe"), the module is that one; otherwise it is the first
/// positional argument. Never throws.
int main(int argc, char **argv, const char *embeddingFile);

/// Runs `body` and returns 0, or 1 after printing what it threw as one
/// `TOOL: error: ...` line (escaped, as names from files may hold control
/// characters). The runner's own boundary; tools built without exceptions
/// call the runner's loops through it. Never throws.
int reportFailures(const std::string &tool, const std::function<void()> &body);

/// Whether `path` is an existing compiled module as far as its name or its
/// first bytes tell: it ends in ".dlcm" or bytes 4..7 are the FlatBuffers
/// file identifier "DLCM". dlc-run hands such arguments to the runner.
bool looksLikeModule(const char *path);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_RUNNER_H
