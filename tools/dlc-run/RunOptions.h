//===- RunOptions.h - dlc-run --train's options, the runner's ---*- C++ -*-===//
//
// dlc-run --interpret --train trains with the runner's loop, so it takes
// the runner's training options (tools/runner/Options.cpp): the same
// names, help, value checks and errors as `dlc-run MODULE.dlcm`. They are
// registered here as command-line options under those names and handed
// back to the runner's parser as written. --lr and --weight-decay are the
// training pipeline's options (tools/common/TrainingOptions.h), which an
// interpreted run also compiles with.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_DLC_RUN_RUNOPTIONS_H
#define DLC_TOOLS_DLC_RUN_RUNOPTIONS_H

#include "tools/runner/Options.h"

#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace mlir::dlc::tools {

/// The runner of compiled modules (tools/runner), part of the runtime.
namespace runner = ::dlc::runner;

/// Registers the runner's training options in `category`. Call once,
/// before parsing the command line.
void registerRunOptions(llvm::cl::OptionCategory &category);

/// The run options given, as "--name", in registration order.
std::vector<std::string> runOptionsGiven();

/// Parses the run options given, then `more` ("--lr=0.1"), into `out` with
/// the runner's parser. Returns false with `error` set to one line on a bad
/// value.
bool parseRunOptions(const std::vector<std::string> &more, runner::Options &out,
                     std::string &error);

} // namespace mlir::dlc::tools

#endif // DLC_TOOLS_DLC_RUN_RUNOPTIONS_H
