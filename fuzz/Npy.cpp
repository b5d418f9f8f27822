//===- Npy.cpp - Fuzz target: .npy bytes ----------------------------------===//
//
// The input is a .npy file, parsed as every .npy reader of dlc parses one
// (parseNpy: the header, then the elements, byte-swapped or transposed into
// native row-major order). A parsed array must hold exactly the bytes its
// type and shape say.
//
//===----------------------------------------------------------------------===//
#include "fuzz/Status.h"
#include "runtime/support/Npz.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlc::Tensor tensor;
  if (!dlc::fuzz::succeeded(dlc::parseNpy(data, size, "fuzz.npy", tensor)))
    return 0;
  if (tensor.byteSize() !=
      static_cast<size_t>(tensor.numElements()) * dlc::dtypeSize(tensor.dtype()))
    std::abort();
  return 0;
}
