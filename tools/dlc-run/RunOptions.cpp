//===- RunOptions.cpp - dlc-run --train's options, the runner's -----------===//
#include "tools/dlc-run/RunOptions.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>

namespace cl = llvm::cl;

namespace mlir::dlc::tools {
namespace {

/// The runner's options that apply to a training run on the evaluator.
/// Left out: --lr and --weight-decay (compile options here too), --profile
/// (no plan is timed) and the device options.
constexpr const char *kRunOptions[] = {
    "data",        "seq-len",    "token-dtype",    "steps",
    "epochs",      "no-shuffle", "seed",           "log",
    "tensorboard", "eval-data",  "checkpoint-dir", "checkpoint-every",
    "resume",      "save-state", "init-seed",      "export"};

/// One registered option: a flag, or a value kept as written.
struct RunOption {
  std::string name;
  std::unique_ptr<cl::opt<bool>> flag;
  std::unique_ptr<cl::opt<std::string>> value;

  /// A flag counts when set (--no-shuffle=false is not given).
  bool given() const {
    return flag ? flag->getNumOccurrences() && flag->getValue()
                : value->getNumOccurrences();
  }
};

std::deque<RunOption> &registered() {
  static std::deque<RunOption> options;
  return options;
}

/// cl keeps references to names and help: they live here.
std::deque<std::string> &texts() {
  static std::deque<std::string> strings;
  return strings;
}

} // namespace

void registerRunOptions(cl::OptionCategory &category) {
  for (const char *name : kRunOptions) {
    std::optional<runner::OptionHelp> help = runner::describeOption(name);
    // The runner's help, on one line as cl prints it.
    std::string &desc = texts().emplace_back(help->help);
    std::replace(desc.begin(), desc.end(), '\n', ' ');
    RunOption &option = registered().emplace_back();
    option.name = name;
    if (help->valueName.empty()) {
      option.flag = std::make_unique<cl::opt<bool>>(
          llvm::StringRef(option.name), cl::desc(desc), cl::cat(category));
    } else {
      std::string &valueName = texts().emplace_back(help->valueName);
      option.value = std::make_unique<cl::opt<std::string>>(
          llvm::StringRef(option.name), cl::desc(desc),
          cl::value_desc(valueName), cl::cat(category));
    }
  }
}

std::vector<std::string> runOptionsGiven() {
  std::vector<std::string> given;
  for (const RunOption &option : registered())
    if (option.given())
      given.push_back("--" + option.name);
  return given;
}

bool parseRunOptions(const std::vector<std::string> &more, runner::Options &out,
                     std::string &error) {
  std::vector<std::string> args = {"dlc-run"};
  for (const RunOption &option : registered())
    if (option.given())
      args.push_back("--" + option.name +
                     (option.value ? "=" + option.value->getValue() : ""));
  args.insert(args.end(), more.begin(), more.end());
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  return runner::parseOptions(static_cast<int>(argv.size()), argv.data(),
                              /*takesModulePath=*/false, out, error);
}

} // namespace mlir::dlc::tools
