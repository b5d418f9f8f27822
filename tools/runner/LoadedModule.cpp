//===- LoadedModule.cpp - The module the runner runs ----------------------===//
#include "tools/runner/LoadedModule.h"

#include "runtime/module/Embedded.h"
#include "runtime/module/dlcm_generated.h"
#include "runtime/support/MappedFile.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace dlc::runner {
namespace {

/// Reads what the C API does not say from the module bytes `data` (aligned
/// as the FlatBuffers tables need: a mapping's start or a copy).
void readExtras(const void *data, size_t size, LoadedModule &out) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  flatbuffers::Verifier verifier(bytes, size);
  if (!fb::VerifyModuleBuffer(verifier))
    throw rt::Error(DLC_DATA_LOSS,
                    out.name + ": the module changed while it was loaded");
  const fb::Module *root = fb::GetModule(bytes);
  if (root->training_options())
    out.trainingOptions = root->training_options()->str();
  out.keepsOnnxModel = root->onnx_model() && root->onnx_model()->size() > 0;
  out.parametersEmbedded = root->parameters_embedded();
}

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

} // namespace

LoadedModule loadModuleFile(const std::string &path) {
  LoadedModule loaded{rt::Module::loadFile(path), path};
  std::unique_ptr<MappedFile> file;
  rt::check(MappedFile::open(path, file));
  readExtras(file->data(), file->size(), loaded);
  return loaded;
}

std::optional<LoadedModule> loadEmbeddedModule(const std::string &file,
                                               const std::string &name) {
  std::unique_ptr<MappedFile> mapped;
  rt::check(MappedFile::open(file, mapped));
  uint64_t offset = 0, size = 0;
  if (mapped->size() < kEmbeddedTrailerSize ||
      !parseEmbeddedTrailer(reinterpret_cast<const char *>(mapped->data()) +
                                mapped->size() - kEmbeddedTrailerSize,
                            mapped->size(), offset, size))
    return std::nullopt;
  // The module lies wherever the runner's bytes end; FlatBuffers reads its
  // tables in place, so they need a copy at an aligned address.
  std::unique_ptr<void, FreeDeleter> copy(
      std::aligned_alloc(64, std::max<uint64_t>(64, (size + 63) / 64 * 64)));
  if (!copy)
    throw rt::Error(DLC_RESOURCE_EXHAUSTED, name + ": out of memory for its " +
                                                std::to_string(size) +
                                                "-byte module");
  std::memcpy(copy.get(), mapped->data() + offset, size);
  LoadedModule loaded{rt::Module::loadMemory(copy.get(), size, name), name};
  readExtras(copy.get(), size, loaded);
  return loaded;
}

} // namespace dlc::runner
