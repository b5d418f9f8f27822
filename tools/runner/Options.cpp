//===- Options.cpp - The runner's command line ----------------------------===//
#include "tools/runner/Options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>

namespace dlc::runner {
namespace {

/// One option: its name without dashes and what to do with its value.
struct OptionSpec {
  const char *name;
  /// Null for a flag.
  const char *valueName;
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

const std::vector<OptionSpec> &optionSpecs() {
  static const std::vector<OptionSpec> specs = {
      {"help", nullptr, flag(&Options::help)},
      {"info", nullptr, flag(&Options::info)},
      {"inputs", "FILE", stringOption(&Options::inputs)},
      {"outputs", "FILE", stringOption(&Options::outputs)},
      {"data", "FILE", stringOption(&Options::data)},
      {"seq-len", "T", intOption("seq-len", &Options::seqLen, 1)},
      {"token-dtype", "TYPE", stringOption(&Options::tokenDtype)},
      {"steps", "N", intOption("steps", &Options::steps, 0)},
      {"epochs", "N", intOption("epochs", &Options::epochs, 0)},
      {"no-shuffle", nullptr, flag(&Options::noShuffle)},
      {"seed", "S",
       [](Options &o, const std::string &v, std::string &error) {
         std::optional<int64_t> seed;
         if (!parseInt("--seed", v, 0, seed, error))
           return false;
         o.seed = static_cast<uint64_t>(*seed);
         return true;
       }},
      {"lr", "X", numberOption("lr", &Options::lr)},
      {"weight-decay", "X",
       numberOption("weight-decay", &Options::weightDecay)},
      {"log", "FILE", stringOption(&Options::log)},
      {"tensorboard", "DIR", stringOption(&Options::tensorboard)},
      {"eval-data", "FILE", stringOption(&Options::evalData)},
      {"checkpoint-dir", "DIR", stringOption(&Options::checkpointDir)},
      {"checkpoint-every", "N",
       intOption("checkpoint-every", &Options::checkpointEvery, 1)},
      {"resume", "DIR", stringOption(&Options::resume)},
      {"init-seed", "S",
       [](Options &o, const std::string &v, std::string &error) {
         std::optional<int64_t> seed;
         if (!parseInt("--init-seed", v, 0, seed, error))
           return false;
         o.initSeed = static_cast<uint64_t>(*seed);
         return true;
       }},
      {"export", "FILE", stringOption(&Options::exportPath)},
      {"profile", "FILE", stringOption(&Options::profile)},
      {"device", "SPEC", stringOption(&Options::device)},
      {"threads", "N", intOption("threads", &Options::threads, 0)},
  };
  return specs;
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
    const OptionSpec *spec = nullptr;
    for (const OptionSpec &s : optionSpecs())
      if (body == s.name)
        spec = &s;
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
  return true;
}

std::string usage(const std::string &tool, bool embedded) {
  std::string module = embedded ? "" : " MODULE.dlcm";
  return "usage: " + tool + module +
         " --data TRAIN.npz (--steps N | --epochs E) [training options]\n"
         "       " +
         tool + module +
         " --inputs IN.npz --outputs OUT.npz [--resume CHECKPOINT]\n"
         "       " +
         tool + module +
         " --info\n"
         "\n"
         "Training (train_step, one optimizer step per batch):\n"
         "  --data FILE           samples: one array per model input and "
         "label,\n"
         "                        samples on the first axis (.npz); or a "
         "token file\n"
         "                        (.bin: nanoGPT's ids, or llm.c's with its "
         "header)\n"
         "                        cut into sequences and their next tokens\n"
         "  --seq-len T           token files: the sequence length (the "
         "model's)\n"
         "  --token-dtype TYPE    token files without a header: uint16 "
         "(default)\n"
         "                        or uint32\n"
         "  --steps N             train until N steps are done in all (with\n"
         "                        --resume, counting the steps before it)\n"
         "  --epochs E            the same as --steps E * (samples / batch)\n"
         "  --no-shuffle          visit samples in file order\n"
         "  --seed S              shuffle and dropout seed (default 0)\n"
         "  --lr X                the learning rate the schedule scales\n"
         "  --weight-decay X      the weight decay\n"
         "  --log FILE            append one JSON line per step (and per "
         "evaluation)\n"
         "  --tensorboard DIR     write the logged scalars (loss, learning "
         "rate,\n"
         "                        loss scale, throughput, eval accuracy) as "
         "a\n"
         "                        TensorBoard event file in DIR\n"
         "  --eval-data FILE      after training and at each checkpoint, "
         "the accuracy\n"
         "                        of forward on this data\n"
         "  --checkpoint-dir DIR  save a checkpoint there at the end\n"
         "  --checkpoint-every N  ... and every N steps\n"
         "  --resume CHECKPOINT   continue a run from its checkpoint (a "
         "directory\n"
         "                        or a file); without --checkpoint-dir, "
         "keep saving\n"
         "                        into that directory as the run did\n"
         "  --init-seed S         a module compiled with "
         "--embed-parameters=false:\n"
         "                        seeded random parameters instead of a "
         "checkpoint\n"
         "                        (benchmarks, device comparisons)\n"
         "  --export FILE.onnx    write the trained model at the end\n"
         "  --profile FILE.jsonl  time every step of the plan; write one "
         "line per\n"
         "                        step (kernel, matmul, conv), slowest "
         "first\n"
         "Inference (forward):\n"
         "  --inputs FILE         one array per model input\n"
         "  --outputs FILE        where to write forward's outputs (.npz)\n"
         "  --resume CHECKPOINT   with the parameters of a checkpoint\n"
         "  --init-seed S         or seeded random ones (see above)\n"
         "Any mode:\n"
         "  --info                describe the module and exit\n"
         "  --device SPEC         cpu or cuda:N (default: cpu, or cuda:0 "
         "for a module\n"
         "                        compiled with --target cuda)\n"
         "  --threads N           CPU threads (default: one per core)\n";
}

} // namespace dlc::runner
