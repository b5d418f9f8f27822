//===- TestTensors.h - Tensors for the file format tests ------------------===//
//
// The tests of .npz files, memory-mapped archives, checkpoints and ONNX
// export round-trip the same kind of data: tensors of pseudo-random bytes
// of every dtype the format holds.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_SUPPORT_TEST_TESTTENSORS_H
#define DLC_RUNTIME_SUPPORT_TEST_TESTTENSORS_H

#include "runtime/support/Tensor.h"

#include <cstdint>
#include <random>
#include <vector>

namespace dlc::testing {

/// The dtypes NumPy has: all but bfloat16.
inline constexpr DType kNumpyTypes[] = {
    DType::Bool, DType::I8,  DType::I16, DType::I32, DType::I64, DType::U8,
    DType::U16,  DType::U32, DType::U64, DType::F16, DType::F32, DType::F64,
};

/// A tensor of pseudo-random bytes (0 or 1 for Bool, NumPy's canonical
/// form). Random floats include NaNs with payloads, which must survive too.
inline Tensor randomTensor(DType type, std::vector<int64_t> shape,
                           uint32_t seed) {
  Tensor t(type, std::move(shape));
  std::mt19937 rng(seed);
  for (size_t i = 0; i < t.byteSize(); ++i)
    t.bytes()[i] = std::byte(type == DType::Bool ? rng() & 1 : rng());
  return t;
}

} // namespace dlc::testing

#endif // DLC_RUNTIME_SUPPORT_TEST_TESTTENSORS_H
