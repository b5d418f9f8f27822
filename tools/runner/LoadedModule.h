//===- LoadedModule.h - The module the runner runs --------------*- C++ -*-===//
//
// Loads the module from its file or from the end of a training binary
// (runtime/module/Embedded.h) through the C API, and reads what the C API
// does not describe from the module's FlatBuffers tables: the training
// options it was compiled with (for --info), whether it keeps its ONNX
// model (for --export) and whether it embeds its parameters. The bytes are
// verified again for that read, so the runner never trusts bytes that no
// verifier checked.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_TOOLS_RUNNER_LOADEDMODULE_H
#define DLC_TOOLS_RUNNER_LOADEDMODULE_H

#include <dlc/runtime.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dlc::runner {

struct LoadedModule {
  rt::Module module;
  /// The path, or the training binary's name.
  std::string name;
  /// The dlc-compile options of the training configuration ("" if none).
  std::string trainingOptions;
  /// Whether the module keeps the ONNX model, which --export needs.
  bool keepsOnnxModel = false;
  /// False for a module compiled with --embed-parameters=false: training
  /// must start from a checkpoint.
  bool parametersEmbedded = true;
};

/// Loads the module at `path`. Throws rt::Error with the runtime's message
/// (a missing or corrupt file).
LoadedModule loadModuleFile(const std::string &path);

/// The module embedded at the end of `file`, named `name` in messages, or
/// nullopt when `file` has none. Throws rt::Error when it has one that
/// cannot be loaded.
std::optional<LoadedModule> loadEmbeddedModule(const std::string &file,
                                               const std::string &name);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_LOADEDMODULE_H
