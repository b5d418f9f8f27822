//===- Tensor.cpp - Host tensors shared by the runtime and the compiler ---===//
//
// Implements the dtype table and the Tensor value declared in Tensor.h. The
// element accessors that convert to double or int64 exist for tests and
// diagnostics, so they favour one obvious switch over speed.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Tensor.h"

#include <algorithm>

#include <cassert>
#include <cstring>

namespace dlc {

namespace {
struct DTypeInfo {
  DType type;
  const char *name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", 1},     {DType::I8, "int8", 1},
    {DType::I16, "int16", 2},     {DType::I32, "int32", 4},
    {DType::I64, "int64", 8},     {DType::U8, "uint8", 1},
    {DType::U16, "uint16", 2},    {DType::U32, "uint32", 4},
    {DType::U64, "uint64", 8},    {DType::F16, "float16", 2},
    {DType::BF16, "bfloat16", 2}, {DType::F32, "float32", 4},
    {DType::F64, "float64", 8},
};

const DTypeInfo &info(DType t) {
  const DTypeInfo &entry = kDTypes[static_cast<size_t>(t)];
  assert(entry.type == t && "kDTypes must follow the DType enum order");
  return entry;
}

/// Loads element i of a tensor as T (no alignment assumption on the bytes).
template <typename T> T load(const std::byte *bytes, int64_t i) {
  T value;
  std::memcpy(&value, bytes + i * sizeof(T), sizeof(T));
  return value;
}
} // namespace

size_t dtypeSize(DType t) { return info(t).size; }

const char *dtypeName(DType t) { return info(t).name; }

std::optional<DType> dtypeFromName(const std::string &name) {
  for (const DTypeInfo &entry : kDTypes)
    if (name == entry.name)
      return entry.type;
  return std::nullopt;
}

bool isFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 ||
         t == DType::F64;
}

bool isSignedInt(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64;
}

bool isUnsignedInt(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 ||
         t == DType::U64;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    assert(dim >= 0 && "negative dimension");
    count *= dim;
  }
  return count;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)),
      data_(static_cast<size_t>(dlc::numElements(shape_)) * dtypeSize(dtype),
            std::byte{0}) {}

double Tensor::getDouble(int64_t i) const {
  assert(i >= 0 && i < numElements() && "element index out of range");
  const std::byte *p = data_.data();
  switch (dtype_) {
  case DType::Bool:
    return load<uint8_t>(p, i) != 0 ? 1.0 : 0.0;
  case DType::F16:
    return load<Half>(p, i).toFloat();
  case DType::BF16:
    return load<BFloat16>(p, i).toFloat();
  case DType::F32:
    return load<float>(p, i);
  case DType::F64:
    return load<double>(p, i);
  case DType::U64:
    return static_cast<double>(load<uint64_t>(p, i));
  // int64 values beyond 2^53 round to the nearest double.
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
    return static_cast<double>(getInt(i));
  }
  return 0.0;
}

int64_t Tensor::getInt(int64_t i) const {
  assert(i >= 0 && i < numElements() && "element index out of range");
  const std::byte *p = data_.data();
  switch (dtype_) {
  case DType::Bool:
    return load<uint8_t>(p, i) != 0 ? 1 : 0;
  case DType::I8:
    return load<int8_t>(p, i);
  case DType::I16:
    return load<int16_t>(p, i);
  case DType::I32:
    return load<int32_t>(p, i);
  case DType::I64:
    return load<int64_t>(p, i);
  case DType::U8:
    return load<uint8_t>(p, i);
  case DType::U16:
    return load<uint16_t>(p, i);
  case DType::U32:
    return load<uint32_t>(p, i);
  // Values above INT64_MAX wrap; callers that care read data<uint64_t>().
  case DType::U64:
    return static_cast<int64_t>(load<uint64_t>(p, i));
  // Floats truncate toward zero like a C cast; NaN and out-of-range values,
  // for which the cast is undefined behaviour, give 0 and the int64 limits.
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F64: {
    double value = getDouble(i);
    if (!(value == value))
      return 0;
    if (value >= 9223372036854775807.0)
      return INT64_MAX;
    if (value <= -9223372036854775808.0)
      return INT64_MIN;
    return static_cast<int64_t>(value);
  }
  }
  return 0;
}

std::string describeType(DType dtype, const std::vector<int64_t> &shape) {
  std::string text = dtypeName(dtype);
  text += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ',';
    text += std::to_string(shape[i]);
  }
  text += ']';
  return text;
}

std::string Tensor::describe() const { return describeType(dtype_, shape_); }

bool Tensor::operator==(const Tensor &other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         data_ == other.data_;
}

void Tensor::checkType(DType t) const {
  assert(t == dtype_ && "Tensor::data<T>() with T not matching dtype()");
  (void)t;
}

namespace {

template <typename Narrow> void widenAll(const void *in, float *out, size_t n) {
  const auto *from = static_cast<const Narrow *>(in);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(from[i]);
}

template <typename Narrow>
void narrowAll(const float *in, void *out, size_t n) {
  auto *to = static_cast<Narrow *>(out);
  for (size_t i = 0; i < n; ++i)
    to[i] = Narrow(in[i]);
}

} // namespace

void widenToFloat(DType dtype, const void *in, float *out, size_t n) {
  assert(dtype == DType::F16 || dtype == DType::BF16);
  if (dtype == DType::F16)
    widenAll<Half>(in, out, n);
  else
    widenAll<BFloat16>(in, out, n);
}

void narrowFromFloat(DType dtype, const float *in, void *out, size_t n) {
  assert(dtype == DType::F16 || dtype == DType::BF16);
  if (dtype == DType::F16)
    narrowAll<Half>(in, out, n);
  else
    narrowAll<BFloat16>(in, out, n);
}

Tensor sliceOf(const Tensor &whole, int64_t dim, int64_t part, int64_t parts,
               int64_t groups) {
  std::vector<int64_t> shape = whole.shape();
  shape[dim] /= parts;
  Tensor slice(whole.dtype(), shape);
  // Rows of the dimensions before `dim`; in each, `groups` blocks of
  // `parts` runs of `run` bytes.
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  const size_t run = slice.byteSize() / std::max<int64_t>(outer, 1) / groups;
  for (int64_t row = 0; row < outer; ++row)
    for (int64_t group = 0; group < groups; ++group)
      std::memcpy(slice.bytes() + (row * groups + group) * run,
                  whole.bytes() + ((row * groups + group) * parts + part) * run,
                  run);
  return slice;
}

Tensor joinSlices(const std::vector<Tensor> &slices, int64_t dim,
                  int64_t groups) {
  const int64_t parts = static_cast<int64_t>(slices.size());
  std::vector<int64_t> shape = slices.front().shape();
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  shape[dim] *= parts;
  Tensor whole(slices.front().dtype(), shape);
  const size_t run =
      slices.front().byteSize() / std::max<int64_t>(outer, 1) / groups;
  for (int64_t row = 0; row < outer; ++row)
    for (int64_t group = 0; group < groups; ++group)
      for (int64_t part = 0; part < parts; ++part)
        std::memcpy(whole.bytes() +
                        ((row * groups + group) * parts + part) * run,
                    slices[part].bytes() + (row * groups + group) * run, run);
  return whole;
}

Tensor shardOf(const Tensor &whole, int64_t rank, int64_t ranks) {
  const int64_t size = (whole.numElements() + ranks - 1) / ranks;
  Tensor shard(whole.dtype(), {size});
  const size_t element = dtypeSize(whole.dtype());
  const int64_t begin = std::min(rank * size, whole.numElements());
  const int64_t end = std::min(begin + size, whole.numElements());
  std::memcpy(shard.bytes(), whole.bytes() + begin * element,
              (end - begin) * element);
  return shard;
}

Tensor gatherShards(const std::vector<Tensor> &shards, DType dtype,
                    const std::vector<int64_t> &shape) {
  Tensor whole(dtype, shape);
  const int64_t ranks = static_cast<int64_t>(shards.size());
  const int64_t size = (whole.numElements() + ranks - 1) / ranks;
  const size_t element = dtypeSize(dtype);
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t begin = std::min(r * size, whole.numElements());
    const int64_t end = std::min(begin + size, whole.numElements());
    std::memcpy(whole.bytes() + begin * element, shards[r].bytes(),
                (end - begin) * element);
  }
  return whole;
}

} // namespace dlc
