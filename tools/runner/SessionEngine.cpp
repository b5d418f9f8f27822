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

void SessionEngine::saveCheckpoint(const std::string &directory,
                                   const Metadata &metadata) {
  rt::Metadata handle;
  for (const auto &[key, value] : metadata)
    handle.set(key, value);
  session_.saveCheckpoint(directory, &handle);
}

} // namespace dlc::runner
