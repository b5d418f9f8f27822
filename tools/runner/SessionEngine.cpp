//===- SessionEngine.cpp - A compiled module on the runtime ---------------===//
#include "tools/runner/SessionEngine.h"

namespace dlc::runner {

bool SessionEngine::hasFunction(const std::string &function) const {
  for (size_t i = 0; i < module_.module.functionCount(); ++i)
    if (module_.module.functionName(i) == function)
      return true;
  return false;
}

std::vector<dlc_value_info_t> SessionEngine::globals() const {
  std::vector<dlc_value_info_t> out;
  for (size_t i = 0; i < module_.module.globalCount(); ++i)
    out.push_back(module_.module.global(i));
  return out;
}

std::optional<std::vector<int64_t>>
SessionEngine::wholeShape(size_t index) const {
  int32_t rank = 0;
  const int64_t *shape = nullptr;
  dlc_status_t status =
      dlc_module_global_whole_shape(module_.module.get(), index, &rank, &shape);
  // DLC_INVALID_ARGUMENT: the global is not sharded (the index is valid).
  if (dlc_status_code(status) == DLC_INVALID_ARGUMENT) {
    dlc_status_free(status);
    return std::nullopt;
  }
  rt::check(status);
  return std::vector<int64_t>(shape, shape + rank);
}

void SessionEngine::saveCheckpoint(const std::string &directory,
                                   const Metadata &metadata) {
  rt::Metadata handle;
  for (const auto &[key, value] : metadata)
    handle.set(key, value);
  session_.saveCheckpoint(directory, &handle);
}

} // namespace dlc::runner
