//===- ConvGeometry.h - The shape of one ConvStep ---------------*- C++ -*-===//
//
// A ConvStep's shapes and attributes, read once from a checked module
// (ModuleFile has verified that they agree): x is [N, C, spatial...], w is
// [O, C / groups, kernel...], y is [N, O, output...], stored so or, with
// `channelsLast`, as [N, spatial..., C] and [O, kernel..., C / groups].
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_CONVGEOMETRY_H
#define DLC_RUNTIME_CPU_CONVGEOMETRY_H

#include "runtime/module/dlcm_generated.h"

#include <cstdint>
#include <vector>

namespace dlc::cpu {

struct ConvGeometry {
  int64_t batch = 0, inChannels = 0, outChannels = 0, groups = 1;
  bool channelsLast = false;
  /// Per spatial dimension.
  std::vector<int64_t> input, kernel, output, stride, padLow, padHigh, dilation;

  /// Reads a checked step (absent attributes take their defaults).
  static ConvGeometry fromStep(const fb::ConvStep &step);

  size_t spatialRank() const { return input.size(); }
  int64_t inPerGroup() const { return inChannels / groups; }
  int64_t outPerGroup() const { return outChannels / groups; }
  /// Elements of one channel of x, w and y: their spatial positions.
  int64_t inputPlane() const;
  int64_t kernelPlane() const;
  int64_t outputPlane() const;
  /// Elements of x, w and y.
  int64_t xElements() const;
  int64_t wElements() const;
  int64_t yElements() const;
  /// Elements of the operand a step of `kind` writes (convOutputRef).
  int64_t outputElements(fb::ConvKind kind) const;
};

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_CONVGEOMETRY_H
