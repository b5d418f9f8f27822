//===- Module.cpp - dlc_module_* and dtype functions of the C API ---------===//
#include "runtime/core/Handles.h"
#include "runtime/core/Status.h"

#include <algorithm>
#include <cstring>

using namespace dlc;

namespace {

bool validDtype(dlc_dtype_t dtype) {
  return static_cast<int>(dtype) >= DLC_BOOL &&
         static_cast<int>(dtype) <= DLC_F64;
}

void fillInfo(const ValueInfo &v, dlc_value_info_t *out) {
  out->name = v.name.c_str();
  out->role = v.role.c_str();
  out->dtype = static_cast<dlc_dtype_t>(v.type.dtype);
  out->rank = static_cast<int32_t>(v.type.shape.size());
  out->shape = v.type.shape.data();
  out->global = v.global;
  out->num_classes = v.numClasses;
  out->ignore_index = v.ignoreIndex;
}

dlc_status_t findFunction(const dlc_module_t *module, const char *function,
                          const FunctionInfo *&out) {
  if (!module || !function)
    return makeStatus(DLC_INVALID_ARGUMENT, "no module or function name");
  out = module->file->findFunction(function);
  if (!out)
    return makeStatus(DLC_NOT_FOUND, module->file->name() + ": no function '" +
                                         function + "' (the module has " +
                                         module->file->functionNames() + ")");
  return nullptr;
}

/// The caller-facing value `index` of `function` (an input or an output).
dlc_status_t signatureValue(const dlc_module_t *module, const char *function,
                            size_t index, bool output, dlc_value_info_t *out) {
  const FunctionInfo *f = nullptr;
  DLC_RETURN_IF_ERROR(findFunction(module, function, f));
  const std::vector<uint32_t> &indices = output ? f->outputs : f->inputs;
  if (index >= indices.size() || !out)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      f->name + ": no " + (output ? "output " : "input ") +
                          std::to_string(index) + " (it has " +
                          std::to_string(indices.size()) + ")");
  fillInfo(output ? f->results[indices[index]] : f->arguments[indices[index]],
           out);
  return nullptr;
}

dlc_status_t wrapModule(dlc_status_t status, std::unique_ptr<ModuleFile> &file,
                        dlc_module_t **out) {
  if (status)
    return status;
  *out = new dlc_module_s{std::shared_ptr<const ModuleFile>(file.release())};
  return nullptr;
}

} // namespace

extern "C" {

const char *dlc_dtype_name(dlc_dtype_t dtype) {
  return validDtype(dtype) ? dtypeName(static_cast<DType>(dtype)) : "unknown";
}

size_t dlc_dtype_size(dlc_dtype_t dtype) {
  return validDtype(dtype) ? dtypeSize(static_cast<DType>(dtype)) : 0;
}

dlc_status_t dlc_module_load_file(const char *path, dlc_module_t **out) {
  return guardStatus("dlc_module_load_file", [&]() -> dlc_status_t {
    if (!path || !out)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_module_load_file: no path or output");
    *out = nullptr;
    std::unique_ptr<ModuleFile> file;
    return wrapModule(ModuleFile::loadFile(path, file), file, out);
  });
}

dlc_status_t dlc_module_load_memory(const void *data, size_t size,
                                    const char *name, dlc_module_t **out) {
  return guardStatus("dlc_module_load_memory", [&]() -> dlc_status_t {
    if (!out)
      return makeStatus(DLC_INVALID_ARGUMENT,
                        "dlc_module_load_memory: no output");
    *out = nullptr;
    std::unique_ptr<ModuleFile> file;
    return wrapModule(
        ModuleFile::loadMemory(data, size, name ? name : "<memory>", file),
        file, out);
  });
}

void dlc_module_release(dlc_module_t *module) { delete module; }

const char *dlc_module_target(const dlc_module_t *module) {
  return module ? module->file->target().c_str() : "";
}

const char *dlc_module_model_name(const dlc_module_t *module) {
  return module ? module->file->modelName().c_str() : "";
}

int32_t dlc_module_data_parallel_ranks(const dlc_module_t *module) {
  return module ? static_cast<int32_t>(module->file->dataParallelRanks()) : 0;
}

int32_t dlc_module_tensor_parallel_ranks(const dlc_module_t *module) {
  return module ? static_cast<int32_t>(module->file->tensorParallelRanks()) : 0;
}

int32_t dlc_module_pipeline_stages(const dlc_module_t *module) {
  return module ? static_cast<int32_t>(module->file->pipelineStages()) : 0;
}

int32_t dlc_module_sharded_globals(const dlc_module_t *module) {
  if (!module)
    return 0;
  const auto &globals = module->file->globals();
  return static_cast<int32_t>(
      std::count_if(globals.begin(), globals.end(),
                    [](const dlc::ValueInfo &g) { return g.sharded; }));
}

size_t dlc_module_global_count(const dlc_module_t *module) {
  return module ? module->file->globals().size() : 0;
}

dlc_status_t dlc_module_global_info(const dlc_module_t *module, size_t index,
                                    dlc_value_info_t *out) {
  if (!module || !out)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "dlc_module_global_info: no module or output");
  const auto &globals = module->file->globals();
  if (index >= globals.size())
    return makeStatus(DLC_INVALID_ARGUMENT,
                      module->file->name() + ": no global " +
                          std::to_string(index) + " (it has " +
                          std::to_string(globals.size()) + ")");
  fillInfo(globals[index], out);
  return nullptr;
}

dlc_status_t dlc_module_global_whole_shape(const dlc_module_t *module,
                                           size_t index, int32_t *rank,
                                           const int64_t **shape) {
  if (!module || !rank || !shape)
    return makeStatus(DLC_INVALID_ARGUMENT,
                      "dlc_module_global_whole_shape: no module or output");
  const auto &globals = module->file->globals();
  const std::string &name = module->file->name();
  if (index >= globals.size())
    return makeStatus(DLC_INVALID_ARGUMENT,
                      name + ": no global " + std::to_string(index) +
                          " (it has " + std::to_string(globals.size()) + ")");
  const dlc::ValueInfo &g = globals[index];
  if (!g.sharded)
    return makeStatus(DLC_INVALID_ARGUMENT, name + ": global " +
                                                std::to_string(index) + " ('" +
                                                g.name + "') is not sharded");
  if (!g.wholeShape)
    return makeStatus(DLC_UNAVAILABLE,
                      name + ": global '" + g.name +
                          "' is sharded, and the module does not record its "
                          "whole shape (compiled by an earlier dlc-compile: "
                          "compile it again)");
  *rank = static_cast<int32_t>(g.wholeShape->size());
  *shape = g.wholeShape->data();
  return nullptr;
}

int32_t dlc_module_global_tp_split(const dlc_module_t *module, size_t index) {
  if (!module || index >= module->file->globals().size())
    return -1;
  return module->file->globals()[index].tpSplit;
}

int32_t dlc_module_global_tp_split_groups(const dlc_module_t *module,
                                          size_t index) {
  if (!module || index >= module->file->globals().size())
    return 1;
  return module->file->globals()[index].tpSplitGroups;
}

size_t dlc_module_function_count(const dlc_module_t *module) {
  return module ? module->file->functions().size() : 0;
}

const char *dlc_module_function_name(const dlc_module_t *module, size_t index) {
  if (!module || index >= module->file->functions().size())
    return "";
  return module->file->functions()[index].name.c_str();
}

dlc_status_t dlc_module_function_signature(const dlc_module_t *module,
                                           const char *function,
                                           size_t *num_inputs,
                                           size_t *num_outputs) {
  return guardStatus("dlc_module_function_signature", [&]() -> dlc_status_t {
    const FunctionInfo *f = nullptr;
    DLC_RETURN_IF_ERROR(findFunction(module, function, f));
    if (num_inputs)
      *num_inputs = f->inputs.size();
    if (num_outputs)
      *num_outputs = f->outputs.size();
    return nullptr;
  });
}

dlc_status_t dlc_module_function_input(const dlc_module_t *module,
                                       const char *function, size_t index,
                                       dlc_value_info_t *out) {
  return guardStatus("dlc_module_function_input", [&] {
    return signatureValue(module, function, index, false, out);
  });
}

dlc_status_t dlc_module_function_output(const dlc_module_t *module,
                                        const char *function, size_t index,
                                        dlc_value_info_t *out) {
  return guardStatus("dlc_module_function_output", [&] {
    return signatureValue(module, function, index, true, out);
  });
}

} // extern "C"
