//===- Options.cpp - The runner's command line ----------------------------===//
#include "tools/runner/Options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>

namespace dlc::runner {
namespace {

/// Where an option applies, as --help groups them.
enum class Section { Training, Inference, Any };

/// One option: its name without dashes, what to do with its value, and its
/// help (lines after the first indented by usage()).
struct OptionSpec {
  const char *name;
  /// Null for a flag.
  const char *valueName;
  Section section;
  const char *help;
  /// Stores the value (ignored for a flag); false with `error` set when it
  /// is malformed.
  std::function<bool(Options &, const std::string &, std::string &error)> apply;
};

/// A decimal integer in [minimum, INT64_MAX], all of `text`.
bool parseInt(const std::string &option, const std::string &text,
              int64_t minimum, std::optional<int64_t> &out,
              std::string &error) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < minimum) {
    error = "option '" + option +
            "' expects an integer >= " + std::to_string(minimum) + ", got '" +
            text + "'";
    return false;
  }
  out = value;
  return true;
}

/// A finite decimal or scientific number >= 0, all of `text`.
bool parseNonNegative(const std::string &option, const std::string &text,
                      std::optional<double> &out, std::string &error) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0) {
    error = "option '" + option + "' expects a finite number >= 0, got '" +
            text + "'";
    return false;
  }
  out = value;
  return true;
}

std::function<bool(Options &, const std::string &, std::string &)>
stringOption(std::string Options::*field) {
  return [field](Options &o, const std::string &v, std::string &) {
    o.*field = v;
    return true;
  };
}

std::function<bool(Options &, const std::string &, std::string &)>
intOption(const char *name, std::optional<int64_t> Options::*field,
          int64_t minimum) {
  return [=](Options &o, const std::string &v, std::string &error) {
    return parseInt(std::string("--") + name, v, minimum, o.*field, error);
  };
}

std::function<bool(Options &, const std::string &, std::string &)>
numberOption(const char *name, std::optional<double> Options::*field) {
  return [=](Options &o, const std::string &v, std::string &error) {
    return parseNonNegative(std::string("--") + name, v, o.*field, error);
  };
}

std::function<bool(Options &, const std::string &, std::string &)>
flag(bool Options::*field) {
  return [field](Options &o, const std::string &, std::string &) {
    o.*field = true;
    return true;
  };
}

std::function<bool(Options &, const std::string &, std::string &)>
seedOption(const char *name, std::optional<uint64_t> Options::*field) {
  return [=](Options &o, const std::string &v, std::string &error) {
    std::optional<int64_t> seed;
    if (!parseInt(std::string("--") + name, v, 0, seed, error))
      return false;
    o.*field = static_cast<uint64_t>(*seed);
    return true;
  };
}

const std::vector<OptionSpec> &optionSpecs() {
  using S = Section;
  static const std::vector<OptionSpec> specs = {
      {"data", "FILE", S::Training,
       "samples: one array per model input and label,\n"
       "samples on the first axis (.npz); or a token file\n"
       "(.bin: nanoGPT's ids, or llm.c's with its header)\n"
       "cut into sequences and their next tokens",
       stringOption(&Options::data)},
      {"seq-len", "T", S::Training,
       "token files: the sequence length (the model's)",
       intOption("seq-len", &Options::seqLen, 1)},
      {"token-dtype", "TYPE", S::Training,
       "token files without a header: uint16 (default)\nor uint32",
       stringOption(&Options::tokenDtype)},
      {"steps", "N", S::Training,
       "train until N steps are done in all (with\n--resume, counting the "
       "steps before it)",
       intOption("steps", &Options::steps, 0)},
      {"epochs", "N", S::Training, "the same as --steps N * (samples / batch)",
       intOption("epochs", &Options::epochs, 0)},
      {"no-shuffle", nullptr, S::Training, "visit samples in file order",
       flag(&Options::noShuffle)},
      {"seed", "S", S::Training, "shuffle and dropout seed (default 0)",
       seedOption("seed", &Options::seed)},
      {"lr", "X", S::Training, "the learning rate the schedule scales",
       numberOption("lr", &Options::lr)},
      {"weight-decay", "X", S::Training, "the weight decay",
       numberOption("weight-decay", &Options::weightDecay)},
      {"log", "FILE", S::Training,
       "append one JSON line per step (and per evaluation)",
       stringOption(&Options::log)},
      {"tensorboard", "DIR", S::Training,
       "write the logged scalars (loss, learning rate,\nloss scale, "
       "throughput, eval accuracy) as a\nTensorBoard event file in DIR",
       stringOption(&Options::tensorboard)},
      {"eval-data", "FILE", S::Training,
       "after training and at each checkpoint, the accuracy\nof forward on "
       "this data",
       stringOption(&Options::evalData)},
      {"checkpoint-dir", "DIR", S::Training,
       "save a checkpoint there at the end",
       stringOption(&Options::checkpointDir)},
      {"checkpoint-every", "N", S::Training, "... and every N steps",
       intOption("checkpoint-every", &Options::checkpointEvery, 1)},
      {"resume", "CHECKPOINT", S::Training,
       "continue a run from its checkpoint (a directory\nor a file); "
       "without --checkpoint-dir, keep saving\ninto that directory as the "
       "run did; for inference,\nthe parameters of a checkpoint",
       stringOption(&Options::resume)},
      {"init-seed", "S", S::Training,
       "a module compiled with --embed-parameters=false:\nseeded random "
       "parameters instead of a checkpoint\n(benchmarks, device "
       "comparisons; inference too)",
       seedOption("init-seed", &Options::initSeed)},
      {"export", "FILE.onnx", S::Training, "write the trained model at the end",
       stringOption(&Options::exportPath)},
      {"save-state", "FILE", S::Training,
       "write every global at the end (parameters,\nstatistics, optimizer "
       "state) as one .npz",
       stringOption(&Options::saveState)},
      {"profile", "FILE.jsonl", S::Training,
       "time every step of the plan; write one line per\nstep (kernel, "
       "matmul, conv), slowest first",
       stringOption(&Options::profile)},
      {"rank-times", nullptr, S::Training,
       "log each rank's busy and idle (waiting for\ncollectives) "
       "milliseconds of every step",
       flag(&Options::rankTimes)},
      {"comm-timeout", "SECONDS", S::Training,
       "a module compiled with --dp N, run by mpirun -np N:\nhow long a "
       "rank waits in a collective for the\nothers before it fails, naming "
       "the collective\n(default 300)",
       [](Options &o, const std::string &v, std::string &error) {
         if (!parseNonNegative("--comm-timeout", v, o.commTimeout, error))
           return false;
         if (*o.commTimeout > 0)
           return true;
         error = "option '--comm-timeout' expects a number of seconds > 0";
         return false;
       }},
      {"inputs", "FILE", S::Inference, "one array per model input",
       stringOption(&Options::inputs)},
      {"outputs", "FILE", S::Inference,
       "where to write forward's outputs (.npz)",
       stringOption(&Options::outputs)},
      {"info", nullptr, S::Any, "describe the module and exit",
       flag(&Options::info)},
      {"device", "SPEC", S::Any,
       "cpu or cuda:N (default: cpu, or for a module compiled\nwith "
       "--target cuda cuda:0, or the rank's local rank\nin an mpirun job)",
       stringOption(&Options::device)},
      {"threads", "N", S::Any,
       "CPU threads (default: one per core, shared among\nthe "
       "ranks of an mpirun job on this machine)",
       intOption("threads", &Options::threads, 0)},
      {"help", nullptr, S::Any, "show this help", flag(&Options::help)},
  };
  return specs;
}

const OptionSpec *findSpec(const std::string &name) {
  for (const OptionSpec &s : optionSpecs())
    if (name == s.name)
      return &s;
  return nullptr;
}

} // namespace

bool Options::has(const std::string &name) const {
  for (const std::string &g : given)
    if (g == name)
      return true;
  return false;
}

bool parseOptions(int argc, char **argv, bool takesModulePath, Options &out,
                  std::string &error) {
  bool onlyPositional = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (onlyPositional || arg.size() < 2 || arg[0] != '-') {
      if (!takesModulePath || !out.modulePath.empty()) {
        error = "unexpected argument '" + arg + "'" +
                (takesModulePath ? " (the module is '" + out.modulePath + "')"
                                 : std::string(" (this program's module is "
                                               "built in)"));
        return false;
      }
      out.modulePath = arg;
      continue;
    }
    if (arg == "--") {
      onlyPositional = true;
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    const OptionSpec *spec = findSpec(body);
    std::string name = "--" + body;
    if (!spec) {
      error = "unknown option '" + arg + "' (see --help)";
      return false;
    }
    if (out.has(name)) {
      error = "option '" + name + "' given more than once";
      return false;
    }
    out.given.push_back(name);
    if (!spec->valueName) {
      if (value) {
        error = "option '" + name + "' takes no value";
        return false;
      }
      spec->apply(out, "", error);
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) {
        error = "option '" + name + "' needs a value (" + name + " " +
                spec->valueName + ")";
        return false;
      }
      value = argv[++i];
    }
    if (!spec->apply(out, *value, error))
      return false;
  }
  // Checked here, where every engine's options pass (dlc-run --interpret
  // --train's too), in any mode.
  if (out.initSeed && !out.resume.empty()) {
    error = "--init-seed and --resume both give the parameters; give one";
    return false;
  }
  return true;
}

std::optional<OptionHelp> describeOption(const std::string &name) {
  const OptionSpec *spec = findSpec(name);
  if (!spec)
    return std::nullopt;
  return OptionHelp{spec->valueName ? spec->valueName : "", spec->help};
}

std::string usage(const std::string &tool, bool embedded) {
  std::string module = embedded ? "" : " MODULE.dlcm";
  std::string text =
      "usage: " + tool + module +
      " --data TRAIN.npz (--steps N | --epochs E) [training options]\n"
      "       " +
      tool + module +
      " --inputs IN.npz --outputs OUT.npz [--resume CHECKPOINT]\n"
      "       " +
      tool + module + " --info\n\n";
  const std::pair<Section, const char *> sections[] = {
      {Section::Training, "Training (train_step, one optimizer step per "
                          "batch):"},
      {Section::Inference, "Inference (forward; --resume or --init-seed give "
                           "the parameters):"},
      {Section::Any, "Any mode:"}};
  for (auto [section, title] : sections) {
    text += std::string(title) + "\n";
    for (const OptionSpec &spec : optionSpecs()) {
      if (spec.section != section)
        continue;
      std::string head = std::string("  --") + spec.name;
      if (spec.valueName)
        head += std::string(" ") + spec.valueName;
      head.resize(std::max<size_t>(head.size() + 1, 24), ' ');
      std::string help = spec.help;
      for (size_t nl; (nl = help.find('\n')) != std::string::npos;) {
        text += head + help.substr(0, nl) + "\n";
        head = std::string(24, ' ');
        help = help.substr(nl + 1);
      }
      text += head + help + "\n";
    }
  }
  return text;
}

} // namespace dlc::runner
