//===- Options.h - The runner's command line --------------------*- C++ -*-===//
//
// A small parser of its own (the runner has no LLVM): `--name VALUE`,
// `--name=VALUE` and flags, with one or two leading dashes as dlc's other
// tools accept them. Unknown options, missing values, malformed or
// out-of-range numbers and repeated options are errors naming the option.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_OPTIONS_H
#define DLC_TOOLS_RUNNER_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc::runner {

/// What the command line asked for. Optional fields are unset when the
/// option was not given.
/// --comm-timeout's default, in seconds.
constexpr double kDefaultCommTimeout = 300;

struct Options {
  /// The module file (positional); empty for a training binary.
  std::string modulePath;
  bool help = false;
  bool info = false;

  // Inference.
  std::string inputs;
  std::string outputs;

  // Training.
  std::string data;
  /// Token files (--data *.bin): the sequence length, checked against the
  /// model's, and the id width of files without llm.c's header.
  std::optional<int64_t> seqLen;
  std::string tokenDtype;
  std::optional<int64_t> steps;
  std::optional<int64_t> epochs;
  bool noShuffle = false;
  std::optional<uint64_t> seed;
  std::optional<double> lr;
  std::optional<double> weightDecay;
  std::string log;
  std::string tensorboard;
  std::string evalData;
  std::string checkpointDir;
  std::optional<int64_t> checkpointEvery;
  std::string resume;
  /// Seeded random parameters for a module that holds none.
  std::optional<uint64_t> initSeed;
  std::string exportPath;
  /// Per-step timings of the training steps, written at the end.
  std::string profile;
  bool rankTimes = false;
  /// Every global at the end, in one .npz.
  std::string saveState;
  /// Data-parallel modules: seconds a collective may wait for the other
  /// ranks (default kDefaultCommTimeout).
  std::optional<double> commTimeout;

  // The device; empty: the module's target ("cpu", or "cuda:0").
  std::string device;
  std::optional<int64_t> threads;

  /// The options given, as written ("--steps"), in command-line order: for
  /// messages about options that do not apply to the chosen mode.
  std::vector<std::string> given;
  /// Whether option `name` ("--steps") was given.
  bool has(const std::string &name) const;
};

/// Parses argv[1..argc). `takesModulePath` is false for a training binary,
/// whose module is embedded: then no positional argument is accepted.
/// Returns false and sets `error` to one line on a bad command line.
bool parseOptions(int argc, char **argv, bool takesModulePath, Options &out,
                  std::string &error);

/// What --help says about one option.
struct OptionHelp {
  /// "FILE"; empty for a flag.
  std::string valueName;
  /// Lines separated by '\n'.
  std::string help;
};

/// Option `name` ("data", without dashes), or nullopt when the runner has
/// none: dlc-run --interpret --train offers the runner's training options
/// as they are, help included.
std::optional<OptionHelp> describeOption(const std::string &name);

/// The --help text; `tool` is the program's name, `embedded` whether its
/// module is embedded.
std::string usage(const std::string &tool, bool embedded);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_OPTIONS_H
