//===- Runner.cpp - The runner of compiled dlc modules --------------------===//
//
// The entry: parses the command line, loads the module, chooses the mode
// (--info, inference with --inputs/--outputs, training with --data), opens
// the device and a session, and turns every failure, thrown from anywhere
// below, into one `NAME: error: ...` line and exit code 1.
//
//===----------------------------------------------------------------------===//
#include "tools/runner/Runner.h"

#include "tools/runner/Error.h"
#include "tools/runner/Inference.h"
#include "tools/runner/Info.h"
#include "tools/runner/LoadedModule.h"
#include "tools/runner/Options.h"
#include "tools/runner/SeededInit.h"
#include "tools/runner/SessionEngine.h"
#include "tools/runner/Training.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>

namespace dlc::runner {
namespace {

const char *const kTrainingOptions[] = {
    "--data",           "--seq-len",
    "--token-dtype",    "--steps",
    "--epochs",         "--no-shuffle",
    "--seed",           "--lr",
    "--weight-decay",   "--log",
    "--tensorboard",    "--eval-data",
    "--checkpoint-dir", "--checkpoint-every",
    "--export",         "--save-state",
    "--comm-timeout"};
const char *const kInferenceOptions[] = {"--inputs", "--outputs"};
/// Options that apply in every mode.
const char *const kCommonOptions[] = {"--device", "--threads", "--info",
                                      "--help"};

enum class Mode { Info, Inference, Training };

bool isIn(const std::string &option, const char *const *begin,
          const char *const *end) {
  for (const char *const *it = begin; it != end; ++it)
    if (option == *it)
      return true;
  return false;
}

template <size_t N>
bool isIn(const std::string &option, const char *const (&list)[N]) {
  return isIn(option, list, list + N);
}

/// Chooses the mode from the options given; every option must apply to it.
Mode chooseMode(const Options &o) {
  if (o.info) {
    for (const std::string &g : o.given)
      if (!isIn(g, kCommonOptions))
        throw Error("--info describes the module and runs nothing; " + g +
                    " does not go with it");
    return Mode::Info;
  }
  if (o.has("--inputs") || o.has("--outputs")) {
    for (const std::string &g : o.given)
      if (isIn(g, kTrainingOptions))
        throw Error(g + " applies to training (--data), not to inference "
                        "(--inputs, --outputs)");
    if (o.inputs.empty() || o.outputs.empty())
      throw Error("inference needs both --inputs IN.npz and --outputs "
                  "OUT.npz");
    return Mode::Inference;
  }
  if (o.data.empty()) {
    for (const std::string &g : o.given)
      if (isIn(g, kTrainingOptions))
        throw Error(g + " applies to training, which needs --data");
    throw Error("nothing to do: give --data to train, --inputs and --outputs "
                "to run forward, or --info (see --help)");
  }
  return Mode::Training;
}

/// cuDNN's engines are chosen by measurement when a session opens
/// (runtime/cuda/Dnn.h), and two processes may choose differently among
/// engines that sum in different orders, so a resumed run must take the
/// engines of the run it continues to go on bit for bit. A training run on
/// a GPU keeps its choices in cudnn-engines beside its checkpoints (which
/// only step-*.dlcc and LATEST are), starting from those of the run it
/// resumes, unless DLC_CUDNN_ENGINES already names a file. --checkpoint-dir
/// is made now for that, as the first checkpoint would make it; a file
/// that cannot be written leaves the choices to be measured again.
void keepEnginesWithCheckpoints(const Options &options) {
  if (std::getenv("DLC_CUDNN_ENGINES"))
    return;
  namespace fs = std::filesystem;
  std::error_code ignored;
  std::string from;
  if (!options.resume.empty())
    from = (fs::is_directory(options.resume, ignored)
                ? options.resume
                : directoryOf(options.resume)) +
           "/cudnn-engines";
  std::string dir = checkpointDirectory(options);
  std::string file = dir.empty() ? from : dir + "/cudnn-engines";
  if (file.empty())
    return;
  if (!options.checkpointDir.empty())
    fs::create_directories(options.checkpointDir, ignored);
  if (!from.empty() && file != from)
    fs::copy_file(from, file, fs::copy_options::skip_existing, ignored);
  ::setenv("DLC_CUDNN_ENGINES", file.c_str(), 0);
}

std::string escapeForOneLine(const std::string &text);

/// "TOOL: error: MESSAGE" on stderr, after whatever stdout holds.
void printFailure(const std::string &tool, const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", tool.c_str(),
               escapeForOneLine(message).c_str());
  std::fflush(stderr);
}

/// Opens the job's communicator for training `loaded`: every run opens
/// one, since N ranks need a module compiled for N, and a module of one
/// rank under a launcher of several would train that many times into the
/// same files.
void openJobComm(const LoadedModule &loaded, const Options &options,
                 std::optional<rt::Comm> &comm) {
  const int32_t ranks = loaded.module.ranks();
  const int32_t tensorRanks = loaded.module.tensorParallelRanks();
  if (ranks <= 1 && options.commTimeout)
    throw Error("--comm-timeout applies to a module compiled with --dp N, "
                "--tp N or --pp N; " +
                loaded.name + " runs on one rank");
  comm.emplace("auto", options.commTimeout.value_or(kDefaultCommTimeout));
  if (comm->size() == ranks)
    return;
  const int32_t stages = loaded.module.pipelineStages();
  std::string compiled = "--dp " + std::to_string(ranks / tensorRanks / stages);
  if (tensorRanks > 1)
    compiled += " --tp " + std::to_string(tensorRanks);
  if (stages > 1)
    compiled += " --pp " + std::to_string(stages);
  throw Error(loaded.name + ": compiled for " + std::to_string(ranks) +
              " rank" + (ranks == 1 ? "" : "s") +
              (ranks > 1 ? " (dlc-compile " + compiled + ")" : std::string()) +
              ", but this job has " + std::to_string(comm->size()) +
              (ranks > 1
                   ? ": run it with mpirun -np " + std::to_string(ranks)
                   : ": compile it with --dp " + std::to_string(comm->size())));
}

/// Trains `engine` as one rank of `comm`'s job (openJobComm).
void runTrainingRanks(SessionEngine &engine, const LoadedModule &loaded,
                      const Options &options, const std::string &tool,
                      rt::Comm &comm) {
  if (loaded.module.ranks() == 1) {
    runTraining(engine, options, nullptr);
    return;
  }
  try {
    // On a GPU this opens NCCL, which may fail on this rank alone.
    engine.setComm(comm);
    runTraining(engine, options, &comm);
  } catch (const std::exception &e) {
    // A rank that fails alone (its log cannot be written, its checkpoint
    // fails) ends the job: the others would wait in their next collective
    // until --comm-timeout, and this message would be lost.
    printFailure(tool, e.what());
    comm.abort(1);
  }
}

void runMode(Mode mode, const LoadedModule &loaded, const Options &options,
             const std::string &tool) {
  if (mode == Mode::Info) {
    std::fputs(describeModule(loaded).c_str(), stdout);
    return;
  }
  std::optional<rt::Comm> comm;
  if (mode == Mode::Training)
    openJobComm(loaded, options, comm);
  // A module runs where it was compiled for unless --device says otherwise:
  // a --target cuda training binary trains on its machine's first GPU, and
  // the ranks of a job on one machine each on their own (the launcher's
  // local rank; NCCL cannot put two ranks on one GPU).
  std::string spec =
      !options.device.empty() ? options.device
      : loaded.module.target() == "cuda"
          ? "cuda:" + std::to_string(comm ? comm->localRank() : 0)
          : "cpu";
  if (mode == Mode::Training && spec.rfind("cuda", 0) == 0)
    keepEnginesWithCheckpoints(options);
  rt::Device device(spec,
                    static_cast<int32_t>(options.threads.value_or(0)));
  SessionEngine engine(loaded, device);
  if (mode == Mode::Training) {
    runTrainingRanks(engine, loaded, options, tool, *comm);
    return;
  }
  if (!engine.hasFunction("forward"))
    throw Error(loaded.name + ": has no forward function");
  if (!options.resume.empty())
    engine.loadCheckpoint(options.resume);
  else if (options.initSeed)
    initializeParameters(engine, *options.initSeed);
  else if (!loaded.parametersEmbedded)
    throw Error(loaded.name + " holds no parameters (it was compiled with "
                              "--embed-parameters=false): give them with "
                              "--resume CHECKPOINT (or --init-seed S for "
                              "seeded random ones)");
  runInference(engine, options.inputs, options.outputs);
}

/// `text` on one line: control characters as C escapes, as dlc's other
/// tools print names (ir/Locations.h).
std::string escapeForOneLine(const std::string &text) {
  std::string out;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\x%02x", byte);
      out += escape;
    } else {
      out += c;
    }
  }
  return out;
}

int run(int argc, char **argv, const char *embeddingFile,
        const std::string &tool) {
  std::optional<LoadedModule> embedded;
  if (embeddingFile)
    embedded = loadEmbeddedModule(embeddingFile, tool);
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, !embedded, options, error))
    throw Error(error);
  if (options.help) {
    std::fputs(usage(tool, embedded.has_value()).c_str(), stdout);
    return 0;
  }
  if (!embedded && options.modulePath.empty())
    throw Error("no module given (usage: " + tool +
                " MODULE.dlcm [options]; see --help)");
  Mode mode = chooseMode(options);
  if (embedded) {
    runMode(mode, *embedded, options, tool);
  } else {
    LoadedModule loaded = loadModuleFile(options.modulePath);
    runMode(mode, loaded, options, tool);
  }
  return 0;
}

} // namespace

int reportFailures(const std::string &tool, const std::function<void()> &body) {
  std::string message;
  try {
    body();
    return 0;
  } catch (const std::bad_alloc &) {
    message = "out of memory";
  } catch (const std::exception &e) {
    message = e.what();
  } catch (...) {
    message = "an unknown internal error";
  }
  printFailure(tool, message);
  return 1;
}

int main(int argc, char **argv, const char *embeddingFile) {
  std::string tool = argc > 0 ? argv[0] : "dlc-runner";
  tool = tool.substr(tool.rfind('/') + 1);
  int code = 0;
  int failed = reportFailures(
      tool, [&] { code = run(argc, argv, embeddingFile, tool); });
  return failed ? failed : code;
}

bool looksLikeModule(const char *path) {
  size_t length = std::strlen(path);
  if (length >= 5 && std::strcmp(path + length - 5, ".dlcm") == 0)
    return true;
  std::ifstream file(path, std::ios::binary);
  char header[8] = {};
  return file.read(header, sizeof(header)) &&
         std::memcmp(header + 4, "DLCM", 4) == 0;
}

} // namespace dlc::runner
