//===- Handles.h - The objects behind the C API's handles -------*- C++ -*-===//
//
// Handles share what they wrap: a session holds its module and device by
// shared_ptr, so releasing the caller's handles early is safe (runtime.h:
// "a session keeps its module and device alive").
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CORE_HANDLES_H
#define DLC_RUNTIME_CORE_HANDLES_H

#include "dlc/runtime.h"
#include "runtime/core/Devices.h"
#include "runtime/module/ModuleFile.h"

#include <map>
#include <memory>
#include <string>

struct dlc_module_s {
  std::shared_ptr<const dlc::ModuleFile> file;
};

struct dlc_device_s {
  /// The spec it was created from ("cpu", "cuda:0").
  std::string spec;
  std::shared_ptr<dlc::Device> device;
};

struct dlc_metadata_s {
  std::map<std::string, int64_t> values;
};

#endif // DLC_RUNTIME_CORE_HANDLES_H
