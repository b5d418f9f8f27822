//===- ModuleBuilder.h - Hand-built .dlcm modules for tests -----*- C++ -*-===//
//
// Tests need modules the compiler would never write (out-of-range
// references, wrong versions) as well as small correct ones, without
// depending on the compiler. The builder records globals, constants,
// kernels and functions as plain values and serializes them with
// FlatBufferBuilder in finish(); it checks nothing, on purpose.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_TEST_MODULEBUILDER_H
#define DLC_RUNTIME_TEST_MODULEBUILDER_H

#include "runtime/module/Format.h"
#include "runtime/module/dlcm_generated.h"
#include "runtime/support/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc::test {

/// A buffer reference (fb::BufferRef) under construction.
struct Ref {
  fb::BufferKind kind = fb::BufferKind::Arena;
  uint32_t index = 0;
  uint64_t offset = 0;
};
inline Ref arena(uint64_t offset) { return {fb::BufferKind::Arena, 0, offset}; }
inline Ref argument(uint32_t i, uint64_t offset = 0) {
  return {fb::BufferKind::Argument, i, offset};
}
inline Ref result(uint32_t i, uint64_t offset = 0) {
  return {fb::BufferKind::Result, i, offset};
}
inline Ref constant(uint32_t i, uint64_t offset = 0) {
  return {fb::BufferKind::Constant, i, offset};
}

struct Value {
  std::string name, role;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int32_t global = -1;
  /// Arguments only: a class-index label's number of classes.
  int64_t numClasses = 0;
  /// Results only: the pipeline stage holding it, or -1.
  int32_t stage = -1;
};

struct MatmulSpec {
  DType dtype = DType::F32;
  Ref lhs, rhs, result;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t lhsBatchStride = 0, rhsBatchStride = 0;
  bool lhsTransposed = false, rhsTransposed = false;
  fb::MatmulEpilogue epilogue = fb::MatmulEpilogue::None;
  std::optional<Ref> bias;
};

struct ConvSpec {
  fb::ConvKind kind = fb::ConvKind::Forward;
  DType dtype = DType::F32;
  Ref x, w, y;
  std::vector<int64_t> xShape, wShape, yShape, stride, padLow, padHigh,
      dilation;
  int64_t groups = 1;
  /// Shapes stay channels-first; the buffers hold them channels-last.
  bool channelsLast = false;
  fb::ConvEngine engine = fb::ConvEngine::Auto;
};

/// One step of a function.
struct StepSpec {
  fb::StepKind kind = fb::StepKind::NONE;
  std::string location;
  /// The pipeline stage that runs it, or -1.
  int32_t stage = -1;
  // KernelStep: buffer sizes default to the whole argument or result a
  // buffer refers to (4 bytes for the arena); the last `outputs` buffers
  // are written.
  uint32_t kernel = 0;
  std::vector<Ref> buffers;
  std::vector<uint64_t> bufferBytes;
  uint32_t outputs = 1;
  int64_t iterations = 0, grain = 0;
  uint32_t threadsPerIteration = 1;
  MatmulSpec matmul;
  ConvSpec conv;
  // CopyStep and TransferStep (from stage `from` to stage `to`)
  Ref source, destination;
  uint64_t bytes = 0;
  uint32_t from = 0, to = 0;
  // AllReduceStep and ShardStep: `buffers` holds the inputs, then the
  // outputs; `elements` each value's whole element count.
  fb::ShardKind shardKind = fb::ShardKind::RankShard;
  fb::RankReduction reduction = fb::RankReduction::Mean;
  DType dtype = DType::F32;
  uint32_t bucket = 0, ranks = 0, waitStep = 0;
  std::vector<uint64_t> elements;
  /// AllReduceStep and ShardStep: among the tensor group.
  bool amongTensorRanks = false;
};

class FunctionBuilder {
public:
  explicit FunctionBuilder(std::string name) : name_(std::move(name)) {}

  /// Adds an argument / result and returns its index.
  uint32_t argument(const std::string &name, const std::string &role,
                    DType dtype, std::vector<int64_t> shape,
                    int32_t global = -1, int64_t numClasses = 0);
  uint32_t result(const std::string &name, const std::string &role, DType dtype,
                  std::vector<int64_t> shape, int32_t global = -1);
  void arenaSize(uint64_t bytes) { arenaSize_ = bytes; }

  void kernel(uint32_t kernel, std::vector<Ref> buffers, int64_t iterations,
              const std::string &location = "", int64_t grain = 0);
  void matmul(const MatmulSpec &spec, const std::string &location = "");
  void conv(const ConvSpec &spec, const std::string &location = "");
  void copy(Ref source, Ref destination, uint64_t bytes,
            const std::string &location = "");
  /// A TransferStep of `bytes` from stage `from`'s `source` to stage `to`'s
  /// `destination`.
  void transfer(uint32_t from, uint32_t to, Ref source, Ref destination,
                uint64_t bytes);
  /// An AllReduceStep of float32 values of `elements` each, from `inputs`
  /// into `outputs`, complete before step `waitStep`.
  void allReduce(std::vector<Ref> inputs, std::vector<Ref> outputs,
                 std::vector<uint64_t> elements, fb::RankReduction reduction,
                 uint32_t waitStep, const std::string &location = "");
  /// A ShardStep of float32 values over `ranks` ranks.
  void shard(fb::ShardKind kind, std::vector<Ref> inputs,
             std::vector<Ref> outputs, std::vector<uint64_t> elements,
             uint32_t ranks, fb::RankReduction reduction, uint32_t waitStep,
             const std::string &location = "");

  std::vector<Value> &arguments() { return arguments_; }
  std::vector<Value> &results() { return results_; }
  std::vector<StepSpec> &steps() { return steps_; }

private:
  friend class ModuleBuilder;
  std::string name_;
  std::vector<Value> arguments_, results_;
  uint64_t arenaSize_ = 0;
  std::vector<StepSpec> steps_;
};

class ModuleBuilder {
public:
  /// Adds a global with `initial` bytes (empty: none), a 16-bit copy of
  /// global `copyOf` if that is not -1, and returns its index.
  uint32_t global(const std::string &name, const std::string &role, DType dtype,
                  std::vector<int64_t> shape, std::vector<uint8_t> initial = {},
                  int32_t copyOf = -1);
  uint32_t constant(DType dtype, std::vector<int64_t> shape,
                    std::vector<uint8_t> data);
  uint32_t kernel(const std::string &name);
  /// The function named `name` (added on first use; references stay valid
  /// until the next new function).
  FunctionBuilder &function(const std::string &name);
  /// Marks global `index` sharded over the data-parallel ranks (unless
  /// `sharded` is false), a shard of a value of `wholeShape` (nullopt: not
  /// recorded).
  void shardGlobal(uint32_t index,
                   std::optional<std::vector<int64_t>> wholeShape,
                   bool sharded = true) {
    globals_[index].sharded = sharded;
    globals_[index].wholeShape = std::move(wholeShape);
  }

  /// Splits global `index` along `dim` among the tensor-parallel ranks.
  void tpSplit(uint32_t index, int32_t dim, int32_t groups = 1) {
    globals_[index].tpSplit = dim;
    globals_[index].tpSplitGroups = groups;
  }

  void sharedObject(std::vector<uint8_t> bytes) { so_ = std::move(bytes); }
  /// CUDA kernels as PTX (the driver compiles it for any GPU).
  void cudaPtx(std::string ptx) { ptx_ = std::move(ptx); }
  void target(std::string t) { target_ = std::move(t); }
  void dataParallelRanks(uint32_t ranks) { ranks_ = ranks; }
  void tensorParallelRanks(uint32_t ranks) { tensorRanks_ = ranks; }
  void pipelineStages(uint32_t stages) { stages_ = stages; }
  void fingerprint(std::string f) { fingerprint_ = std::move(f); }
  void formatVersion(uint32_t v) { version_ = v; }
  void onnxModel(std::vector<uint8_t> bytes) { onnx_ = std::move(bytes); }
  void modelName(std::string n) { modelName_ = std::move(n); }

  /// The serialized module.
  std::vector<uint8_t> finish() const;

private:
  struct GlobalSpec {
    Value value;
    std::vector<uint8_t> initial;
    int32_t copyOf = -1;
    bool sharded = false;
    std::optional<std::vector<int64_t>> wholeShape;
    int32_t tpSplit = -1;
    int32_t tpSplitGroups = 1;
  };
  struct ConstantSpec {
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
  };
  std::vector<GlobalSpec> globals_;
  std::vector<ConstantSpec> constants_;
  std::vector<std::string> kernels_;
  std::vector<FunctionBuilder> functions_;
  std::vector<uint8_t> so_, onnx_;
  std::string ptx_;
  uint32_t ranks_ = 1, tensorRanks_ = 1, stages_ = 1;
  std::string target_ = "cpu", fingerprint_ = "test-fingerprint",
              modelName_ = "test.onnx";
  uint32_t version_ = kModuleFormatVersion;
};

/// The bytes of `n` values of T.
template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &v) {
  const auto *p = reinterpret_cast<const uint8_t *>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(T));
}

/// Reads a whole file (the test kernels' shared object); empty on failure.
std::vector<uint8_t> readFileBytes(const std::string &path);

/// Writes bytes to a file; false on failure.
bool writeFileBytes(const std::string &path, const std::vector<uint8_t> &b);

} // namespace dlc::test

#endif // DLC_RUNTIME_TEST_MODULEBUILDER_H
