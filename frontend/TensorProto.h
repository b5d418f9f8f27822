//===- TensorProto.h - ONNX TensorProto to host tensors -------------------===//
//
// Converts ONNX tensors (initializers, Constant values, test data) into
// Tensor, reading raw_data, the typed repeated fields or external
// data. Every size and offset is checked against what the proto and the file
// actually hold, and the byte count the shape implies is compared with the
// data before the tensor is allocated, so a hostile model cannot make the
// importer read past a buffer, outside the model's folder, or allocate more
// than its data holds.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_FRONTEND_TENSORPROTO_H
#define DLC_FRONTEND_TENSORPROTO_H

#include "ir/RuntimeNames.h"

#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

namespace mlir::dlc {

/// The DType of an ONNX TensorProto data type, or nullopt (string, complex,
/// float8...).
std::optional<DType> dtypeFromOnnx(int32_t dataType);

/// ONNX's name of a data type ("FLOAT", "STRING") for messages.
std::string onnxTypeName(int32_t dataType);

/// Converts `proto`. External data is read from `modelDir` ("" forbids it).
/// On failure returns nullopt and sets `message` (one line, no node name).
std::optional<Tensor> tensorFromProto(const onnx::TensorProto &proto,
                                      llvm::StringRef modelDir,
                                      std::string &message);

} // namespace mlir::dlc

#endif // DLC_FRONTEND_TENSORPROTO_H
