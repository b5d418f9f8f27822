//===- Info.h - --info: what a module holds ---------------------*- C++ -*-===//
#ifndef DLC_TOOLS_RUNNER_INFO_H
#define DLC_TOOLS_RUNNER_INFO_H

#include "tools/runner/LoadedModule.h"

#include <string>

namespace dlc::runner {

/// The module's target, model, training options, each function's
/// caller-facing inputs and outputs ("name role dtype[shape]") and its
/// globals' count and bytes, as lines of text.
std::string describeModule(const LoadedModule &module);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_INFO_H
