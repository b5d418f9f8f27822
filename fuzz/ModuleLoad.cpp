//===- ModuleLoad.cpp - Fuzz target: .dlcm module bytes -------------------===//
//
// The input is loaded twice. First as a module file, through the C API as
// an embedding program loads one (dlc_module_load_memory), then described
// completely: every global, every function's signature, input and output.
// The loader promises that a module it accepts can be used without further
// checks, so reading all of it must stay inside the buffer. Then as a
// training binary: its trailer (runtime/module/Embedded.h) locates the
// module, which the runner loads and describes as --info does. Nothing is
// run: a module's kernels are a shared object that running would load.
//
//===----------------------------------------------------------------------===//
#include "dlc/runtime.h"
#include "fuzz/Scratch.h"
#include "tools/runner/Info.h"
#include "tools/runner/LoadedModule.h"

#include <cstdlib>
#include <cstring>

namespace {

/// Keeps reads the compiler could otherwise drop.
void use(size_t value) {
  volatile size_t sink = value;
  (void)sink;
}

/// Touches every byte a caller may read from `info`.
void touch(const dlc_value_info_t &info) {
  size_t sum = std::strlen(info.name) + std::strlen(info.role);
  for (int32_t i = 0; i < info.rank; ++i)
    sum += static_cast<size_t>(info.shape[i]);
  if (dlc_dtype_size(info.dtype) == 0)
    std::abort();
  use(sum);
}

/// Aborts on a failed call that does not say why; frees the status.
bool ok(dlc_status_t status) {
  if (!status)
    return true;
  if (!*dlc_status_message(status))
    std::abort();
  dlc_status_free(status);
  return false;
}

void loadModule(const uint8_t *data, size_t size) {
  dlc_module_t *module = nullptr;
  if (!ok(dlc_module_load_memory(data, size, "fuzz.dlcm", &module)))
    return;
  use(std::strlen(dlc_module_target(module)) +
      std::strlen(dlc_module_model_name(module)));
  dlc_value_info_t info;
  for (size_t i = 0; i < dlc_module_global_count(module); ++i)
    if (ok(dlc_module_global_info(module, i, &info)))
      touch(info);
  for (size_t f = 0; f < dlc_module_function_count(module); ++f) {
    const char *name = dlc_module_function_name(module, f);
    size_t inputs = 0, outputs = 0;
    if (!ok(dlc_module_function_signature(module, name, &inputs, &outputs)))
      continue;
    for (size_t i = 0; i < inputs; ++i)
      if (ok(dlc_module_function_input(module, name, i, &info)))
        touch(info);
    for (size_t i = 0; i < outputs; ++i)
      if (ok(dlc_module_function_output(module, name, i, &info)))
        touch(info);
  }
  dlc_module_release(module);
}

void loadTrainingBinary(const uint8_t *data, size_t size) {
  std::string path = dlc::fuzz::scratchDir() + "/training-binary";
  dlc::fuzz::writeFile(path, data, size);
  // Only the runtime's errors are expected: anything else escapes and is
  // reported.
  try {
    if (std::optional<dlc::runner::LoadedModule> loaded =
            dlc::runner::loadEmbeddedModule(path, "fuzz"))
      use(dlc::runner::describeModule(*loaded).size());
  } catch (const dlc::rt::Error &e) {
    if (!*e.what())
      std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  loadModule(data, size);
  loadTrainingBinary(data, size);
  return 0;
}
