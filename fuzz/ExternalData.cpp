//===- ExternalData.cpp - Fuzz target: a TensorProto's data ---------------===//
//
// The input is one serialized onnx.TensorProto, converted as the importer
// converts initializers and Constant values: raw_data, the typed fields, or
// external data resolved against the scratch model folder, which holds data
// files, a subfolder, a directory and a symlink leading out of it
// (Scratch.h). Conversion must succeed with a tensor of the declared type
// and shape or fail with a message.
//
//===----------------------------------------------------------------------===//
#include "frontend/TensorProto.h"
#include "fuzz/Scratch.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  onnx::TensorProto proto;
  // Bytes that are no TensorProto stay out of the corpus (-1).
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    return -1;
  std::string message;
  std::optional<::dlc::Tensor> tensor =
      mlir::dlc::tensorFromProto(proto, dlc::fuzz::modelDir(), message);
  if (!tensor) {
    if (message.empty())
      std::abort();
    return 0;
  }
  if (static_cast<int>(tensor->shape().size()) != proto.dims_size())
    std::abort();
  return 0;
}
