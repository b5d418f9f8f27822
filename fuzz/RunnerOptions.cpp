//===- RunnerOptions.cpp - Fuzz target: the runner's command line ---------===//
//
// The input is a command line: arguments separated by NUL bytes, after
// argv[0]. It is parsed as dlc-run parses one (a module path allowed) and
// as a training binary does (none allowed). A parse either fails with a
// message or records each option it accepted once.
//
//===----------------------------------------------------------------------===//
#include "tools/runner/Options.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

namespace {

void parse(std::vector<char *> &argv, bool takesModulePath) {
  dlc::runner::Options options;
  std::string error;
  // argv ends with the null that follows argv[argc].
  if (!dlc::runner::parseOptions(static_cast<int>(argv.size() - 1), argv.data(),
                                 takesModulePath, options, error)) {
    if (error.empty())
      std::abort();
    return;
  }
  std::set<std::string> given(options.given.begin(), options.given.end());
  if (given.size() != options.given.size() ||
      (!takesModulePath && !options.modulePath.empty()))
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> args{"dlc-run"};
  args.emplace_back();
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\0')
      args.emplace_back();
    else
      args.back() += static_cast<char>(data[i]);
  }
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  parse(argv, true);
  parse(argv, false);
  return 0;
}
