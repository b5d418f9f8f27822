//===- Npy.cpp - Fuzz target: .npy bytes ----------------------------------===//
//
// The input is a .npy file, parsed as every .npy reader of dlc parses one
// (parseNpy: the header, then the elements, byte-swapped or transposed into
// native row-major order). A parsed array must hold exactly the bytes its
// type and shape say.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Npz.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc::Tensor tensor;
  std::string error;
  if (!dlc::parseNpy(data, size, "fuzz.npy", tensor, &error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  if (tensor.byteSize() !=
      static_cast<size_t>(tensor.numElements()) * dlc::dtypeSize(tensor.dtype()))
    std::abort();
  return 0;
}
