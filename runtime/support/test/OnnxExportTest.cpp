//===- OnnxExportTest.cpp - Tests of the hand-written ONNX encoder --------===//
//
// The appended bytes are checked exactly for one initializer and, through a
// small independent wire-format decoder, for every dtype; every refusal has
// its message. onnx_export_check.py (a ctest of its own) loads the result
// with ONNX itself.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/OnnxExport.h"

#include "runtime/support/test/Outcome.h"
#include "runtime/support/test/TestTensors.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace dlc;

namespace {

using namespace dlc::testing;

/// One decoded protobuf field: a varint's value or a payload's bytes.
struct Field {
  uint32_t number;
  uint32_t type;
  uint64_t value = 0;
  std::string bytes;
};

/// Decodes the fields of a message (varint and length-delimited only, all
/// ONNX uses here); fails the test on anything else.
std::vector<Field> decode(const std::string &message) {
  std::vector<Field> fields;
  size_t pos = 0;
  auto varint = [&]() {
    uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      EXPECT_LT(pos, message.size());
      if (pos >= message.size())
        return value;
      uint8_t byte = uint8_t(message[pos++]);
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value;
    }
  };
  while (pos < message.size()) {
    uint64_t tag = varint();
    Field field{uint32_t(tag >> 3), uint32_t(tag & 7)};
    if (field.type == 0) {
      field.value = varint();
    } else if (field.type == 2) {
      uint64_t length = varint();
      EXPECT_LE(pos + length, message.size());
      field.bytes = message.substr(pos, length);
      pos += length;
    } else {
      ADD_FAILURE() << "wire type " << field.type;
      break;
    }
    fields.push_back(field);
  }
  return fields;
}

std::string varintBytes(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out += char((value & 0x7f) | 0x80);
    value >>= 7;
  }
  return out + char(value);
}

std::string bytesField(uint32_t number, const std::string &payload) {
  return varintBytes(number << 3 | 2) + varintBytes(payload.size()) + payload;
}

std::string varintField(uint32_t number, uint64_t value) {
  return varintBytes(number << 3) + varintBytes(value);
}

/// ModelProto{ir_version: 8, producer_name: "t", graph: {name: "g"},
/// opset_import: {version: 17}}, encoded by hand.
std::string tinyModel() {
  return varintField(1, 8) + bytesField(2, "t") +
         bytesField(7, bytesField(2, "g")) + bytesField(8, varintField(2, 17));
}

} // namespace

TEST(OnnxExport, AppendsTheExactBytes) {
  Tensor w(DType::F32, {2});
  w.data<float>()[0] = 1.0f;
  w.data<float>()[1] = -2.0f;
  std::string out;
  ASSERT_TRUE(isOk(appendOnnxInitializers(tinyModel(), {{"w", w}}, out)));
  std::string raw(reinterpret_cast<const char *>(w.bytes()), 8);
  // dims 2, data_type FLOAT, name "w", raw_data.
  std::string tensor = "\x08\x02"
                       "\x10\x01"
                       "\x42\x01w"
                       "\x4a\x08" +
                       raw;
  std::string graph = "\x2a" + varintBytes(tensor.size()) + tensor;
  EXPECT_EQ(out, tinyModel() + "\x3a" + varintBytes(graph.size()) + graph);
}

TEST(OnnxExport, EncodesEveryDtype) {
  const std::pair<DType, int> codes[] = {
      {DType::F32, 1},  {DType::U8, 2},   {DType::I8, 3},   {DType::U16, 4},
      {DType::I16, 5},  {DType::I32, 6},  {DType::I64, 7},  {DType::Bool, 9},
      {DType::F16, 10}, {DType::F64, 11}, {DType::U32, 12}, {DType::U64, 13},
      {DType::BF16, 16}};
  NamedTensors initializers;
  uint32_t seed = 1;
  for (auto [type, code] : codes)
    initializers.emplace_back(dtypeName(type),
                              randomTensor(type, {2, 1, 3}, seed++));
  initializers.emplace_back("scalar", randomTensor(DType::F32, {}, seed++));
  // Dimensions of several varint bytes, and an empty tensor.
  initializers.emplace_back("long", randomTensor(DType::U8, {300}, seed++));
  initializers.emplace_back("empty", Tensor(DType::I64, {0, 70000}));

  std::string model = tinyModel();
  std::string out;
  ASSERT_TRUE(isOk(appendOnnxInitializers(model, initializers, out)));
  ASSERT_EQ(out.compare(0, model.size(), model), 0);
  std::vector<Field> appended = decode(out.substr(model.size()));
  ASSERT_EQ(appended.size(), 1u);
  EXPECT_EQ(appended[0].number, 7u);
  std::vector<Field> graph = decode(appended[0].bytes);
  ASSERT_EQ(graph.size(), initializers.size());
  for (size_t i = 0; i < graph.size(); ++i) {
    const auto &[name, tensor] = initializers[i];
    SCOPED_TRACE(name);
    EXPECT_EQ(graph[i].number, 5u);
    std::vector<int64_t> dims;
    int dataType = -1;
    std::string decodedName, raw;
    for (const Field &f : decode(graph[i].bytes)) {
      if (f.number == 1 && f.type == 0)
        dims.push_back(int64_t(f.value));
      else if (f.number == 2 && f.type == 0)
        dataType = int(f.value);
      else if (f.number == 8 && f.type == 2)
        decodedName = f.bytes;
      else if (f.number == 9 && f.type == 2)
        raw = f.bytes;
      else
        ADD_FAILURE() << "unexpected field " << f.number;
    }
    EXPECT_EQ(dims, tensor.shape());
    EXPECT_EQ(decodedName, name);
    EXPECT_EQ(raw, std::string(reinterpret_cast<const char *>(tensor.bytes()),
                               tensor.byteSize()));
    if (i < std::size(codes))
      EXPECT_EQ(dataType, codes[i].second);
  }
}

TEST(OnnxExport, Refusals) {
  // A malformed model is DLC_DATA_LOSS, a bad initializer the caller's
  // DLC_INVALID_ARGUMENT.
  auto expectError = [](const std::string &model,
                        const NamedTensors &initializers,
                        dlc_status_code_t code, const std::string &message) {
    std::string out = "unchanged";
    Outcome o = outcome(appendOnnxInitializers(model, initializers, out));
    EXPECT_EQ(o.code, code) << o.message;
    EXPECT_EQ(o.message, "ONNX export: " + message);
    EXPECT_EQ(out, "unchanged");
  };
  Tensor t(DType::F32, {1});
  expectError(varintField(1, 8), {}, DLC_DATA_LOSS, "the model has no graph");
  std::string model = tinyModel();
  expectError(model.substr(0, model.size() - 1), {}, DLC_DATA_LOSS,
              "the model is not a ModelProto (malformed field at byte 10)");
  expectError("\x0b", {}, DLC_DATA_LOSS,
              "the model is not a ModelProto (malformed field at byte 0)");
  expectError(model, {{"", t}}, DLC_INVALID_ARGUMENT,
              "an initializer has no name");
  expectError(model, {{"w", t}, {"w", t}}, DLC_INVALID_ARGUMENT,
              "initializer 'w' is already in the model or given twice");
  std::string withW;
  ASSERT_TRUE(isOk(appendOnnxInitializers(model, {{"w", t}}, withW)));
  expectError(withW, {{"w", t}}, DLC_INVALID_ARGUMENT,
              "initializer 'w' is already in the model or given twice");
  expectError(model + bytesField(7, "\xff"), {}, DLC_DATA_LOSS,
              "the model's graph is malformed protobuf");
}
