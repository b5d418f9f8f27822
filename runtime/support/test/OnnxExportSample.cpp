//===- OnnxExportSample.cpp - appendOnnxInitializers as a command ---------===//
//
// dlc_onnx_export_sample MODEL.onnx INITIALIZERS.npz OUT.onnx appends the
// arrays of the .npz to the model's graph, so that onnx_export_check.py can
// check the result with ONNX itself. NumPy has no bfloat16, so a uint16
// array whose name starts with "bf16_" is appended as bfloat16 bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Npz.h"
#include "runtime/support/OnnxExport.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace dlc;

namespace {

/// Prints the message of `status` (which it frees) when it is an error.
bool failed(dlc_status_t status) {
  StatusOwner owner(status);
  if (status)
    std::fprintf(stderr, "%s\n", dlc_status_message(status));
  return status != nullptr;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL.onnx INITIALIZERS.npz OUT.onnx\n",
                 argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream model;
  model << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  NamedTensors initializers;
  if (failed(readNpz(argv[2], initializers)))
    return 1;
  for (auto &[name, tensor] : initializers) {
    if (name.rfind("bf16_", 0) != 0 || tensor.dtype() != DType::U16)
      continue;
    Tensor bits(DType::BF16, tensor.shape());
    std::memcpy(bits.bytes(), tensor.bytes(), tensor.byteSize());
    tensor = std::move(bits);
  }
  std::string out;
  if (failed(appendOnnxInitializers(model.str(), initializers, out)))
    return 1;
  std::ofstream(argv[3], std::ios::binary) << out;
  return 0;
}
