//===- Values.cpp - Host tensors passed to and from the C API -------------===//
#include "tools/runner/Values.h"

#include "runtime/support/Float16.h"
#include "tools/runner/Error.h"

#include <cstring>

namespace dlc::runner {

dlc_tensor_t view(Tensor &t) {
  return {static_cast<dlc_dtype_t>(t.dtype()), static_cast<int32_t>(t.rank()),
          t.shape().data(), t.bytes()};
}

dlc_tensor_t view(const ArrayView &a) {
  return {static_cast<dlc_dtype_t>(a.dtype),
          static_cast<int32_t>(a.shape.size()), a.shape.data(),
          const_cast<std::byte *>(a.data)};
}

DType dtypeOf(const dlc_value_info_t &info) {
  return static_cast<DType>(info.dtype);
}

std::vector<int64_t> shapeOf(const dlc_value_info_t &info) {
  return std::vector<int64_t>(info.shape, info.shape + info.rank);
}

Tensor makeTensor(const dlc_value_info_t &info) {
  return Tensor(dtypeOf(info), shapeOf(info));
}

std::string describeType(const dlc_value_info_t &info) {
  return dlc::describeType(dtypeOf(info), shapeOf(info));
}

bool sameType(const dlc_value_info_t &info, const Tensor &t) {
  return dtypeOf(info) == t.dtype() && shapeOf(info) == t.shape();
}

bool loadInteger(const std::byte *data, DType dtype, int64_t i,
                 int64_t &value) {
  auto load = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, data + i * sizeof(v), sizeof(v));
    value = static_cast<int64_t>(v);
    return true;
  };
  switch (dtype) {
  case DType::I8:
    return load(int8_t());
  case DType::I16:
    return load(int16_t());
  case DType::I32:
    return load(int32_t());
  case DType::I64:
    return load(int64_t());
  case DType::U8:
    return load(uint8_t());
  case DType::U16:
    return load(uint16_t());
  case DType::U32:
    return load(uint32_t());
  default:
    // uint64 class indices past INT64_MAX would compare wrongly as int64.
    return false;
  }
}

bool findGlobal(const Engine &engine, const std::string &name,
                dlc_value_info_t &out) {
  for (const dlc_value_info_t &info : engine.globals())
    if (name == info.name) {
      out = info;
      return true;
    }
  return false;
}

void setScalarGlobal(Engine &engine, const std::string &name, double value,
                     const std::string &option) {
  dlc_value_info_t info;
  if (!findGlobal(engine, name, info))
    throw Error(option + ": the module has no global '" + name +
                "' (it was compiled without a setting of that name)");
  Tensor t = makeTensor(info);
  if (t.numElements() != 1 || !isFloat(t.dtype()))
    throw Error(option + ": the module's global '" + name + "' is " +
                describeType(info) + ", not a float scalar");
  switch (t.dtype()) {
  case DType::F64:
    t.data<double>()[0] = value;
    break;
  case DType::F32:
    t.data<float>()[0] = static_cast<float>(value);
    break;
  case DType::F16:
    t.data<Half>()[0] = Half::fromFloat(static_cast<float>(value));
    break;
  default:
    t.data<BFloat16>()[0] = BFloat16::fromFloat(static_cast<float>(value));
    break;
  }
  engine.setGlobal(name, t.bytes(), t.byteSize());
}

} // namespace dlc::runner
