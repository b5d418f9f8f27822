//===- Values.h - Host tensors passed to and from the C API -----*- C++ -*-===//
#ifndef DLC_TOOLS_RUNNER_VALUES_H
#define DLC_TOOLS_RUNNER_VALUES_H

#include "runtime/support/Tensor.h"
#include "tools/runner/Engine.h"

#include <dlc/runtime.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::runner {

/// The C API's view of a host tensor or borrowed array (which it does not
/// write to when passed as an input).
dlc_tensor_t view(Tensor &t);
dlc_tensor_t view(const ArrayView &a);

/// A zero-filled tensor of `info`'s type.
Tensor makeTensor(const dlc_value_info_t &info);
DType dtypeOf(const dlc_value_info_t &info);
std::vector<int64_t> shapeOf(const dlc_value_info_t &info);
/// "float32[4,3]".
std::string describeType(const dlc_value_info_t &info);
/// Whether `a` and `t` have the same dtype and shape.
bool sameType(const dlc_value_info_t &info, const Tensor &t);

/// Element `i` of integer `data` of `dtype`; false for a non-integer dtype.
bool loadInteger(const std::byte *data, DType dtype, int64_t i, int64_t &value);

/// Sets the one-element float global `name` of `engine` to `value`.
/// Throws naming `option` when the program has no such global.
void setScalarGlobal(Engine &engine, const std::string &name, double value,
                     const std::string &option);

/// The global `name`'s description, or false when the program has none.
bool findGlobal(const Engine &engine, const std::string &name,
                dlc_value_info_t &out);

} // namespace dlc::runner

#endif // DLC_TOOLS_RUNNER_VALUES_H
