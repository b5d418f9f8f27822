//===- OnnxExport.h - Trained weights written back into an ONNX model -----===//
//
// Exporting a trained model is the ONNX file it was compiled from with the
// trained tensors as its initializers. The runtime has no protobuf or ONNX
// dependency, so the initializers are encoded by hand in protobuf's wire
// format, and protobuf's merge rule does the rest: parsing two serialized
// messages one after the other is parsing their merge, whose repeated fields
// are concatenated. So `model + ModelProto{graph: GraphProto{initializer:
// [...]}}` is the model with the initializers appended to its graph.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_ONNXEXPORT_H
#define DLC_RUNTIME_SUPPORT_ONNXEXPORT_H

#include "runtime/support/Npz.h"

#include <string>

namespace dlc {

/// Sets `out` to the serialized ModelProto `model` (whose graph must not
/// already hold initializers of these names) with `initializers` appended to
/// its graph as TensorProtos (dims, data_type, name, little-endian raw_data).
/// Fails with DLC_DATA_LOSS when `model` is not a well-formed ModelProto
/// with a graph, DLC_INVALID_ARGUMENT when an initializer name is empty or
/// already present, and DLC_RESOURCE_EXHAUSTED when the result exceeds
/// protobuf's 2 GiB message limit.
dlc_status_t appendOnnxInitializers(const std::string &model,
                                    const NamedTensors &initializers,
                                    std::string &out);

/// Whether a global of `role` goes into an exported model: the parameters
/// and the model's state (BatchNorm's running statistics), not optimizer
/// state, step counters or mixed precision's 16-bit copies.
inline bool isExportedRole(const std::string &role) {
  return role == "param" || role == "state";
}

} // namespace dlc

#endif // DLC_RUNTIME_SUPPORT_ONNXEXPORT_H
