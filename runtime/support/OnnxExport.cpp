//===- OnnxExport.cpp - Trained weights written back into an ONNX model ---===//
//
// The field numbers are onnx.proto's (checked against ONNX 1.12):
//   ModelProto.graph = 7, GraphProto.initializer = 5,
//   TensorProto.dims = 1 (int64), data_type = 2 (int32), name = 8,
//   raw_data = 9.
// Fields are written in field-number order, dims unpacked, as protobuf
// itself serializes a proto2 `repeated int64`.
//
// The model is walked (not decoded) once, to check that it is well-formed
// protobuf with a graph and to collect the names of the initializers it
// already has: appending to a malformed message would produce garbage, and a
// duplicate initializer is an invalid model.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/OnnxExport.h"

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

namespace dlc {

namespace {

constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorDims = 1;
constexpr uint32_t kTensorDataType = 2;
constexpr uint32_t kTensorName = 8;
constexpr uint32_t kTensorRawData = 9;

enum WireType : uint32_t { Varint = 0, Fixed64 = 1, Bytes = 2, Fixed32 = 5 };

/// Protobuf's limit on a serialized message (INT32_MAX bytes).
constexpr uint64_t kMaxMessageSize = 0x7fffffff;

/// TensorProto.DataType.
int32_t onnxDataType(DType t) {
  switch (t) {
  case DType::F32:
    return 1;
  case DType::U8:
    return 2;
  case DType::I8:
    return 3;
  case DType::U16:
    return 4;
  case DType::I16:
    return 5;
  case DType::I32:
    return 6;
  case DType::I64:
    return 7;
  case DType::Bool:
    return 9;
  case DType::F16:
    return 10;
  case DType::F64:
    return 11;
  case DType::U32:
    return 12;
  case DType::U64:
    return 13;
  case DType::BF16:
    return 16;
  }
  return 0;
}

void appendVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void appendTag(std::string &out, uint32_t field, WireType type) {
  appendVarint(out, static_cast<uint64_t>(field) << 3 | type);
}

/// The tag and length of a length-delimited field.
void appendBytesPrefix(std::string &out, uint32_t field, uint64_t size) {
  appendTag(out, field, Bytes);
  appendVarint(out, size);
}

/// A TensorProto up to its raw_data's bytes, which the caller appends.
std::string encodeTensorPrefix(const std::string &name, const Tensor &tensor) {
  std::string out;
  for (int64_t dim : tensor.shape()) {
    appendTag(out, kTensorDims, Varint);
    appendVarint(out, static_cast<uint64_t>(dim));
  }
  appendTag(out, kTensorDataType, Varint);
  appendVarint(out, static_cast<uint64_t>(onnxDataType(tensor.dtype())));
  appendBytesPrefix(out, kTensorName, name.size());
  out += name;
  appendBytesPrefix(out, kTensorRawData, tensor.byteSize());
  return out;
}

/// Walks the fields of one serialized message.
class FieldReader {
public:
  explicit FieldReader(std::string_view bytes)
      : size_(bytes.size()), rest_(bytes) {}

  /// Reads the next field; false at the end or (with malformed() set) on
  /// malformed input. A length-delimited field's payload is `payload`.
  bool next(uint32_t &field, uint32_t &type, std::string_view &payload) {
    if (rest_.empty())
      return false;
    fieldStart_ = size_ - rest_.size();
    uint64_t tag, length;
    if (!varint(tag) || tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
      return bad();
    field = static_cast<uint32_t>(tag >> 3);
    type = static_cast<uint32_t>(tag & 7);
    switch (type) {
    case Varint:
      return varint(length) || bad();
    case Fixed64:
      return skip(8) || bad();
    case Fixed32:
      return skip(4) || bad();
    case Bytes:
      if (!varint(length) || length > rest_.size())
        return bad();
      payload = rest_.substr(0, length);
      rest_.remove_prefix(length);
      return true;
    default: // groups (3, 4) are not in onnx.proto; 6 and 7 do not exist
      return bad();
    }
  }

  bool malformed() const { return malformed_; }
  /// Where the field next() last read (or failed on) starts.
  size_t fieldStart() const { return fieldStart_; }

private:
  bool varint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64 && !rest_.empty(); shift += 7) {
      uint8_t byte = static_cast<uint8_t>(rest_.front());
      rest_.remove_prefix(1);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }
  bool skip(size_t n) {
    if (rest_.size() < n)
      return false;
    rest_.remove_prefix(n);
    return true;
  }
  bool bad() {
    malformed_ = true;
    return false;
  }

  size_t size_;
  std::string_view rest_;
  size_t fieldStart_ = 0;
  bool malformed_ = false;
};

dlc_status_t fail(dlc_status_code_t code, const std::string &message) {
  return makeStatus(code, "ONNX export: " + message);
}

/// Checks that `model` is well-formed with a graph; collects the names of
/// its graph's initializers.
dlc_status_t walkModel(const std::string &model, std::set<std::string> &names) {
  FieldReader reader(model);
  uint32_t field, type;
  std::string_view payload;
  bool sawGraph = false;
  while (reader.next(field, type, payload)) {
    if (field != kModelGraph || type != Bytes)
      continue;
    sawGraph = true;
    FieldReader graph(payload);
    std::string_view tensor;
    while (graph.next(field, type, tensor)) {
      if (field != kGraphInitializer || type != Bytes)
        continue;
      FieldReader fields(tensor);
      std::string_view name;
      while (fields.next(field, type, name))
        if (field == kTensorName && type == Bytes)
          names.insert(std::string(name));
      if (fields.malformed())
        return fail(DLC_DATA_LOSS,
                    "the model's graph holds a malformed initializer");
    }
    if (graph.malformed())
      return fail(DLC_DATA_LOSS, "the model's graph is malformed protobuf");
  }
  if (reader.malformed())
    return fail(DLC_DATA_LOSS,
                "the model is not a ModelProto (malformed field at byte " +
                    std::to_string(reader.fieldStart()) + ")");
  if (!sawGraph)
    return fail(DLC_DATA_LOSS, "the model has no graph");
  return nullptr;
}

} // namespace

dlc_status_t appendOnnxInitializers(const std::string &model,
                                    const NamedTensors &initializers,
                                    std::string &out) {
  std::set<std::string> names;
  DLC_RETURN_IF_ERROR(walkModel(model, names));
  // Sizes first, so the weights are copied once, straight into `out`.
  std::vector<std::string> prefixes;
  uint64_t graphSize = 0;
  for (const auto &[name, tensor] : initializers) {
    if (name.empty())
      return fail(DLC_INVALID_ARGUMENT, "an initializer has no name");
    if (!names.insert(name).second)
      return fail(DLC_INVALID_ARGUMENT,
                  "initializer '" + name +
                      "' is already in the model or given twice");
    prefixes.push_back(encodeTensorPrefix(name, tensor));
    uint64_t tensorSize = prefixes.back().size() + tensor.byteSize();
    std::string fieldPrefix;
    appendBytesPrefix(fieldPrefix, kGraphInitializer, tensorSize);
    graphSize += fieldPrefix.size() + tensorSize;
    if (graphSize > kMaxMessageSize)
      return fail(DLC_RESOURCE_EXHAUSTED,
                  "the initializers exceed protobuf's 2 GiB limit on "
                  "a message (from '" +
                      name + "' on)");
  }
  std::string graphPrefix;
  appendBytesPrefix(graphPrefix, kModelGraph, graphSize);
  uint64_t total = model.size() + graphPrefix.size() + graphSize;
  if (total > kMaxMessageSize)
    return fail(DLC_RESOURCE_EXHAUSTED,
                "the model with its initializers would be " +
                    std::to_string(total) +
                    " bytes, over protobuf's 2 GiB limit on a message");
  out.clear();
  out.reserve(total);
  out += model;
  out += graphPrefix;
  for (size_t i = 0; i < initializers.size(); ++i) {
    const Tensor &tensor = initializers[i].second;
    appendBytesPrefix(out, kGraphInitializer,
                      prefixes[i].size() + tensor.byteSize());
    out += prefixes[i];
    out.append(reinterpret_cast<const char *>(tensor.bytes()),
               tensor.byteSize());
  }
  return nullptr;
}

} // namespace dlc
