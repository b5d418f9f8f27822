//===- TensorAttr.cpp - Conversions between MLIR constants and Tensors ----===//
//
// The evaluator works on Tensor; the IR stores constants as
// ElementsAttr. These conversions are the only place the two meet, so the
// bit layout (row-major, little-endian, i1 as one byte) is decided once.
//
//===----------------------------------------------------------------------===//

#include "ir/eval/Evaluator.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;
using mlir::dlc::DType;
using mlir::dlc::Tensor;

FailureOr<DType> mlir::dlc::dtypeOf(Type t) {
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  auto i = dyn_cast<IntegerType>(t);
  if (!i)
    return failure();
  if (i.getWidth() == 1)
    return DType::Bool;
  bool isUnsigned = i.isUnsigned();
  switch (i.getWidth()) {
  case 8:
    return isUnsigned ? DType::U8 : DType::I8;
  case 16:
    return isUnsigned ? DType::U16 : DType::I16;
  case 32:
    return isUnsigned ? DType::U32 : DType::I32;
  case 64:
    return isUnsigned ? DType::U64 : DType::I64;
  default:
    return failure();
  }
}

Type mlir::dlc::elementTypeOf(MLIRContext *ctx, DType dtype) {
  auto unsignedInt = [&](unsigned w) {
    return IntegerType::get(ctx, w, IntegerType::Unsigned);
  };
  switch (dtype) {
  case DType::Bool:
    return IntegerType::get(ctx, 1);
  case DType::I8:
    return IntegerType::get(ctx, 8);
  case DType::I16:
    return IntegerType::get(ctx, 16);
  case DType::I32:
    return IntegerType::get(ctx, 32);
  case DType::I64:
    return IntegerType::get(ctx, 64);
  case DType::U8:
    return unsignedInt(8);
  case DType::U16:
    return unsignedInt(16);
  case DType::U32:
    return unsignedInt(32);
  case DType::U64:
    return unsignedInt(64);
  case DType::F16:
    return Float16Type::get(ctx);
  case DType::BF16:
    return BFloat16Type::get(ctx);
  case DType::F32:
    return Float32Type::get(ctx);
  case DType::F64:
    return Float64Type::get(ctx);
  }
  return {};
}

namespace {
std::vector<int64_t> shapeOf(ShapedType type) {
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}
} // namespace

FailureOr<Tensor> mlir::dlc::tensorFromAttr(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.hasStaticShape())
    return failure();
  FailureOr<DType> dtype = dtypeOf(type.getElementType());
  if (failed(dtype))
    return failure();
  Tensor result(*dtype, shapeOf(type));
  if (result.numElements() == 0)
    return result;

  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (*dtype == DType::Bool) {
      // Dense i1 data is bit-packed; Tensor stores one byte per bool.
      bool *out = result.data<bool>();
      int64_t i = 0;
      for (bool b : dense.getValues<bool>())
        out[i++] = b;
      return result;
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      size_t size = dtypeSize(*dtype);
      for (int64_t i = 0; i < result.numElements(); ++i)
        std::memcpy(result.bytes() + i * size, raw.data(), size);
    } else {
      if (raw.size() != result.byteSize())
        return failure();
      std::memcpy(result.bytes(), raw.data(), raw.size());
    }
    return result;
  }

  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return failure();
    ArrayRef<char> raw = blob->getData();
    if (*dtype == DType::Bool) {
      // Resource blobs of i1 hold one byte per element, like Tensor.
      if (raw.size() != static_cast<size_t>(result.numElements()))
        return failure();
      for (int64_t i = 0; i < result.numElements(); ++i)
        result.data<bool>()[i] = raw[i] != 0;
      return result;
    }
    if (raw.size() != result.byteSize())
      return failure();
    std::memcpy(result.bytes(), raw.data(), raw.size());
    return result;
  }
  return failure();
}

DenseElementsAttr mlir::dlc::attrFromTensor(const Tensor &tensor,
                                            RankedTensorType type) {
  if (tensor.dtype() == DType::Bool) {
    const bool *data = tensor.data<bool>();
    return DenseElementsAttr::get(
        type, ArrayRef<bool>(data, static_cast<size_t>(tensor.numElements())));
  }
  ArrayRef<char> raw(reinterpret_cast<const char *>(tensor.bytes()),
                     tensor.byteSize());
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}
