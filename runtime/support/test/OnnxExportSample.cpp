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
  std::string error;
  if (!readNpz(argv[2], initializers, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  for (auto &[name, tensor] : initializers) {
    if (name.rfind("bf16_", 0) != 0 || tensor.dtype() != DType::U16)
      continue;
    Tensor bits(DType::BF16, tensor.shape());
    std::memcpy(bits.bytes(), tensor.bytes(), tensor.byteSize());
    tensor = std::move(bits);
  }
  std::string out;
  if (!appendOnnxInitializers(model.str(), initializers, out, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  std::ofstream(argv[3], std::ios::binary) << out;
  return 0;
}
