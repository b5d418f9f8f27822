//===- Tensor.h - Host tensors shared by the runtime and the compiler -----===//
//
// A dense, row-major host tensor: an element type, a static shape and owned
// bytes. It is the one tensor value that crosses every boundary in dlc: .npz
// files, the reference evaluator, constant folding and the runtime's C API.
// It has no MLIR dependency so the runtime-only build can use it.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_TENSOR_H
#define DLC_RUNTIME_SUPPORT_TENSOR_H

#include "runtime/support/Float16.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dlc {

/// Element types. The names follow NumPy ("float32", "int64", "bool").
enum class DType : uint8_t {
  Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64,
};

/// Size of one element in bytes.
size_t dtypeSize(DType t);
/// NumPy's name of the type ("float32"; "bfloat16" for BF16).
const char *dtypeName(DType t);
/// Inverse of dtypeName.
std::optional<DType> dtypeFromName(const std::string &name);
bool isFloat(DType t);
bool isSignedInt(DType t);
bool isUnsignedInt(DType t);

/// `n` elements of the 16-bit float `dtype` (F16 or BF16) to float32: exact.
void widenToFloat(DType dtype, const void *in, float *out, size_t n);
/// `n` float32 elements to the 16-bit float `dtype` (F16 or BF16), rounded
/// to nearest even.
void narrowFromFloat(DType dtype, const float *in, void *out, size_t n);

/// Maps a C++ storage type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::I8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::I16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::U16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::U32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::U64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BF16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };

/// Number of elements of a shape (1 for a scalar).
int64_t numElements(const std::vector<int64_t> &shape);
/// "float32[2,3]" ("float32[]" for a scalar), as messages name a type.
std::string describeType(DType dtype, const std::vector<int64_t> &shape);

/// A dense row-major array whose bytes someone else owns: `bytes` bytes of
/// dtype[shape] at `data`. What the dataset reader (MappedNpz) and loader
/// (DataLoader) hand out without copying; the owner says how long `data`
/// stays valid.
struct ArrayView {
  const std::byte *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  size_t bytes = 0;
};

/// A dense row-major tensor owning its bytes. Copies are deep.
class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return dlc::numElements(shape_); }
  size_t byteSize() const { return data_.size(); }

  std::byte *bytes() { return data_.data(); }
  const std::byte *bytes() const { return data_.data(); }

  /// Typed element access; T must match dtype() (checked by assert).
  template <typename T> T *data() {
    checkType(DTypeOf<T>::value);
    return reinterpret_cast<T *>(data_.data());
  }
  template <typename T> const T *data() const {
    checkType(DTypeOf<T>::value);
    return reinterpret_cast<const T *>(data_.data());
  }

  /// Element i converted to double / int64 (for tests and diagnostics).
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;

  /// "float32[2,3]".
  std::string describe() const;

  /// Same type, shape and bytes.
  bool operator==(const Tensor &other) const;

private:
  void checkType(DType t) const;

  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::vector<std::byte> data_;
};

/// Slice `part` of `parts` equal ones of `whole` along `dim` (a
/// tensor-parallel rank's slice of a split global); with `groups`, its part
/// of each of that many equal blocks along `dim`, one after another (a
/// fused QKV projection's Q, K and V).
Tensor sliceOf(const Tensor &whole, int64_t dim, int64_t part, int64_t parts,
               int64_t groups = 1);
/// The whole whose slices along `dim` (in `groups` blocks) are `slices`,
/// in order.
Tensor joinSlices(const std::vector<Tensor> &slices, int64_t dim,
                  int64_t groups = 1);

/// Rank `rank`'s ZeRO shard of `whole` over `ranks` ranks (dlc.rank_shard's
/// value): block `rank` of its flattened elements padded with zeros.
Tensor shardOf(const Tensor &whole, int64_t rank, int64_t ranks);
/// The whole value of `dtype`[`shape`] whose shards `shards` are, in rank
/// order (dlc.all_gather's value): their blocks joined, the padding cut.
Tensor gatherShards(const std::vector<Tensor> &shards, DType dtype,
                    const std::vector<int64_t> &shape);

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_TENSOR_H
