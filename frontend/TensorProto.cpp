//===- TensorProto.cpp - ONNX TensorProto to host tensors -----------------===//

#include "frontend/TensorProto.h"
#include "ir/ShapeUtils.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using llvm::StringRef;
using mlir::dlc::BFloat16;
using mlir::dlc::DType;
using mlir::dlc::Half;
using mlir::dlc::Tensor;

std::optional<DType> mlir::dlc::dtypeFromOnnx(int32_t dataType) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::INT16:
    return DType::I16;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::UINT16:
    return DType::U16;
  case onnx::TensorProto::UINT32:
    return DType::U32;
  case onnx::TensorProto::UINT64:
    return DType::U64;
  default:
    return std::nullopt;
  }
}

std::string mlir::dlc::onnxTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dataType));
  return "unknown type " + std::to_string(dataType);
}

namespace {

/// Maps the bytes of an external-data tensor into `file` and points `bytes`
/// at them. The location must be a relative path that stays inside
/// `modelDir` once symlinks are resolved (ONNX's external data rules;
/// DESIGN.md decision 2), and the range must hold exactly `expectedBytes`,
/// which is checked before anything is copied.
bool readExternalData(const onnx::TensorProto &proto, StringRef modelDir,
                      uint64_t expectedBytes,
                      std::unique_ptr<llvm::MemoryBuffer> &file,
                      StringRef &bytes, std::string &message) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &e : proto.external_data()) {
    char *end = nullptr;
    if (e.key() == "location") {
      location = e.value();
    } else if (e.key() == "offset" || e.key() == "length") {
      errno = 0;
      long long v = std::strtoll(e.value().c_str(), &end, 10);
      if (errno || end == e.value().c_str() || *end || v < 0) {
        message = "external data " + e.key() + " '" + e.value() +
                  "' is not a non-negative integer";
        return false;
      }
      (e.key() == "offset" ? offset : length) = v;
    }
  }
  if (modelDir.empty()) {
    message = "external data is not allowed here";
    return false;
  }
  if (location.empty()) {
    message = "external data has no location";
    return false;
  }
  if (llvm::sys::path::is_absolute(location) ||
      llvm::sys::path::is_absolute(location, llvm::sys::path::Style::windows)) {
    message = "external data location '" + location + "' is an absolute path";
    return false;
  }
  for (StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                         llvm::sys::path::end(location)))
    if (part == "..") {
      message = "external data location '" + location +
                "' leaves the model's folder through '..'";
      return false;
    }
  llvm::SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  llvm::SmallString<256> realDir, realPath;
  if (llvm::sys::fs::real_path(modelDir, realDir) ||
      llvm::sys::fs::real_path(path, realPath)) {
    message = "external data file '" + std::string(path) + "' cannot be found";
    return false;
  }
  StringRef resolved = realPath;
  if (!resolved.starts_with(realDir) ||
      (resolved.size() > realDir.size() &&
       !llvm::sys::path::is_separator(resolved[realDir.size()]))) {
    message = "external data location '" + location +
              "' resolves outside the model's folder (symlink to '" +
              std::string(realPath) + "')";
    return false;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(realPath, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer) {
    message = "external data file '" + std::string(path) +
              "' cannot be read: " + buffer.getError().message();
    return false;
  }
  int64_t size = static_cast<int64_t>((*buffer)->getBufferSize());
  if (length < 0)
    length = size - std::min(offset, size);
  if (offset > size || length > size - offset) {
    message = "external data range [" + std::to_string(offset) + ", " +
              std::to_string(offset) + "+" + std::to_string(length) +
              ") exceeds file '" + location + "' of " + std::to_string(size) +
              " bytes";
    return false;
  }
  if (static_cast<uint64_t>(length) != expectedBytes) {
    message = "holds " + std::to_string(length) + " bytes of data for " +
              std::to_string(expectedBytes) + " expected";
    return false;
  }
  file = std::move(*buffer);
  bytes = file->getBuffer().substr(offset, length);
  return true;
}

template <typename T> struct StorageTag {
  using type = T;
};

/// Calls `fn(StorageTag<T>{}, field)` with the repeated field that holds
/// values of `dtype` and the storage type T they convert to (ONNX stores
/// e.g. int8/uint16/bool in int32_data and float16 as raw bits in
/// int32_data).
template <typename Fn>
decltype(auto) withTypedField(const onnx::TensorProto &p, DType dtype,
                              Fn &&fn) {
  switch (dtype) {
  case DType::F32:
    return fn(StorageTag<float>{}, p.float_data());
  case DType::F64:
    return fn(StorageTag<double>{}, p.double_data());
  case DType::I64:
    return fn(StorageTag<int64_t>{}, p.int64_data());
  case DType::U32:
    return fn(StorageTag<uint32_t>{}, p.uint64_data());
  case DType::U64:
    return fn(StorageTag<uint64_t>{}, p.uint64_data());
  case DType::I32:
    return fn(StorageTag<int32_t>{}, p.int32_data());
  case DType::I16:
    return fn(StorageTag<int16_t>{}, p.int32_data());
  case DType::I8:
    return fn(StorageTag<int8_t>{}, p.int32_data());
  case DType::U16:
    return fn(StorageTag<uint16_t>{}, p.int32_data());
  case DType::U8:
    return fn(StorageTag<uint8_t>{}, p.int32_data());
  case DType::Bool:
    return fn(StorageTag<bool>{}, p.int32_data());
  case DType::F16:
    return fn(StorageTag<Half>{}, p.int32_data());
  case DType::BF16:
    return fn(StorageTag<BFloat16>{}, p.int32_data());
  }
  llvm_unreachable("every DType has a field");
}

/// Copies the typed repeated field of `p` into `out`, whose element count
/// the caller has checked against the field's size.
void copyTypedData(const onnx::TensorProto &p, Tensor &out) {
  withTypedField(p, out.dtype(), [&](auto tag, const auto &field) {
    using T = typename decltype(tag)::type;
    T *data = reinterpret_cast<T *>(out.bytes());
    for (int i = 0; i < field.size(); ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        data[i] = T::fromBits(static_cast<uint16_t>(field[i]));
      else
        data[i] = static_cast<T>(field[i]);
    }
  });
}

} // namespace

std::optional<Tensor> mlir::dlc::tensorFromProto(const onnx::TensorProto &p,
                                                 StringRef modelDir,
                                                 std::string &message) {
  std::optional<DType> dtype = dtypeFromOnnx(p.data_type());
  if (!dtype) {
    message = "data type " + onnxTypeName(p.data_type()) + " is not supported";
    return std::nullopt;
  }
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  // The size the data must have, from the shape alone: a corrupt dims list
  // must not turn into a huge allocation, so nothing is allocated before the
  // data is known to hold exactly this much. At most kMaxTensorElements
  // elements of at most 8 bytes, so the byte count cannot overflow.
  std::optional<int64_t> count = checkedNumElements(shape);
  if (!count) {
    message = "has an invalid or too large shape";
    return std::nullopt;
  }
  uint64_t expectedBytes = static_cast<uint64_t>(*count) * dtypeSize(*dtype);
  if (p.segment().begin() != 0 || p.segment().end() != 0) {
    message = "segmented tensors are not supported";
    return std::nullopt;
  }

  std::optional<StringRef> raw;
  std::unique_ptr<llvm::MemoryBuffer> externalFile;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    StringRef bytes;
    if (!readExternalData(p, modelDir, expectedBytes, externalFile, bytes,
                          message))
      return std::nullopt;
    raw = bytes;
  } else if (p.has_raw_data()) {
    raw = StringRef(p.raw_data());
    if (raw->size() != expectedBytes) {
      message = "holds " + std::to_string(raw->size()) +
                " bytes of data for " + std::to_string(expectedBytes) +
                " expected";
      return std::nullopt;
    }
  } else {
    int64_t values = withTypedField(
        p, *dtype, [](auto, const auto &field) -> int64_t {
          return field.size();
        });
    if (values != *count) {
      message = "holds " + std::to_string(values) + " values for " +
                std::to_string(*count) + " elements";
      return std::nullopt;
    }
  }

  Tensor out(*dtype, shape);
  if (!raw) {
    copyTypedData(p, out);
  } else if (*dtype == DType::Bool) {
    // Any non-zero byte is true; copying bytes could create invalid bools.
    for (int64_t i = 0; i < *count; ++i)
      out.data<bool>()[i] = (*raw)[i] != 0;
  } else if (!raw->empty()) {
    // An empty tensor has no buffer, and memcpy's pointers may not be null
    // even for no bytes.
    std::memcpy(out.bytes(), raw->data(), raw->size());
  }
  return out;
}
