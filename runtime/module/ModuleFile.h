//===- ModuleFile.h - A loaded and verified .dlcm module --------*- C++ -*-===//
//
// Reads a compiled module into 64-byte-aligned memory and checks all of it
// before anything uses it: the FlatBuffers verifier (every offset inside the
// buffer), the identifier and format version, then every plan (each buffer
// reference inside the buffer it names, argument and result types equal to
// their globals', shapes without overflow, convolution geometry, kernel
// indices). A module is untrusted input: whatever its bytes, loading returns
// either a module every later stage can use without further checks or a
// status naming the file and the first problem.
//
// The checked module is also summarized into plain C++ values (ValueInfo,
// FunctionInfo) that the C API hands out and the executor plans from.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_MODULE_MODULEFILE_H
#define DLC_RUNTIME_MODULE_MODULEFILE_H

#include "dlc/runtime.h"
#include "runtime/core/AlignedBuffer.h"
#include "runtime/module/dlcm_generated.h"
#include "runtime/support/Tensor.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

/// A checked tensor type: a known element type and a shape whose element
/// count and byte size fit in 63 bits.
struct ValueType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numElements = 1;
  uint64_t byteSize = 0;

  /// "float32[32,10]" ("float32[]" for a scalar).
  std::string describe() const;
  bool operator==(const ValueType &other) const {
    return dtype == other.dtype && shape == other.shape;
  }
  bool operator!=(const ValueType &other) const { return !(*this == other); }
};

/// A global, argument or result as the C API describes it.
struct ValueInfo {
  std::string name;
  std::string role;
  ValueType type;
  /// The global it reads or updates (a global's own index for a global),
  /// or -1.
  int32_t global = -1;
  /// A class-index label argument's number of classes (0 otherwise) and
  /// ignored index.
  int64_t numClasses = 0;
  int64_t ignoreIndex = -100;
  /// A global's source when it is a 16-bit copy of another (fb::Global's
  /// copy_of), or -1.
  int32_t copyOf = -1;
  /// A global each data-parallel rank holds its own ZeRO-1 shard of
  /// (fb::Global's sharded), and the shape of the whole value when the
  /// module records it (fb::Global's whole_shape).
  bool sharded = false;
  std::optional<std::vector<int64_t>> wholeShape;
  /// The dimension a global is split along among the tensor-parallel ranks
  /// (fb::Global's tp_split), or -1, and the blocks along it each split so
  /// (tp_split_groups).
  int32_t tpSplit = -1;
  int32_t tpSplitGroups = 1;
  /// A result's pipeline stage (fb::Result's stage): the first whose ranks
  /// compute it, or -1 for every rank.
  int32_t stage = -1;
};

/// A function's signature and plan.
struct FunctionInfo {
  std::string name;
  const fb::Function *plan = nullptr;
  std::vector<ValueInfo> arguments;
  std::vector<ValueInfo> results;
  /// The caller-facing values: arguments that read no global and results
  /// that update no global, as indices into `arguments` / `results`.
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
};

/// Bytes of one element of a module element type (which must be valid).
size_t elementSize(fb::ElementType t);

/// A loaded module: the aligned file bytes and what was checked in them.
class ModuleFile {
public:
  /// Reads and checks the file at `path`. A missing file is DLC_NOT_FOUND,
  /// an unreadable one DLC_IO_ERROR, a corrupt one DLC_DATA_LOSS.
  static dlc_status_t loadFile(const std::string &path,
                               std::unique_ptr<ModuleFile> &out);
  /// Copies and checks `size` bytes; `name` stands for the file in
  /// messages.
  static dlc_status_t loadMemory(const void *data, size_t size,
                                 const std::string &name,
                                 std::unique_ptr<ModuleFile> &out);

  /// The file's path or the name given to loadMemory.
  const std::string &name() const { return name_; }
  const fb::Module &root() const { return *root_; }
  const std::string &target() const { return target_; }
  const std::string &modelName() const { return modelName_; }
  const std::string &fingerprint() const { return fingerprint_; }
  /// The data-parallel ranks the module was partitioned for (1: none).
  uint32_t dataParallelRanks() const { return root_->data_parallel_ranks(); }
  /// The ranks of each tensor-parallel group (1: none).
  uint32_t tensorParallelRanks() const {
    return root_->tensor_parallel_ranks();
  }
  /// The pipeline stages (1: none).
  uint32_t pipelineStages() const { return root_->pipeline_stages(); }
  /// Every rank of a job: the data-parallel times the tensor-parallel ranks
  /// times the pipeline stages.
  uint32_t ranks() const {
    return dataParallelRanks() * tensorParallelRanks() * pipelineStages();
  }

  const std::vector<ValueInfo> &globals() const { return globals_; }
  const std::vector<FunctionInfo> &functions() const { return functions_; }
  /// Types of the module's constants, by index.
  const std::vector<ValueType> &constants() const { return constants_; }

  /// The global named `name`, or -1.
  int32_t findGlobal(const std::string &name) const;
  /// The function named `name`, or null.
  const FunctionInfo *findFunction(const std::string &name) const;
  /// "'forward', 'train_step'": for messages about an unknown function.
  std::string functionNames() const;

private:
  ModuleFile() = default;
  static dlc_status_t load(AlignedBuffer buffer, const std::string &name,
                           std::unique_ptr<ModuleFile> &out);

  AlignedBuffer buffer_;
  std::string name_;
  const fb::Module *root_ = nullptr;
  std::string target_, modelName_, fingerprint_;
  std::vector<ValueInfo> globals_;
  std::vector<FunctionInfo> functions_;
  std::vector<ValueType> constants_;

  friend class ModuleChecker;
};

} // namespace dlc

#endif // DLC_RUNTIME_MODULE_MODULEFILE_H
