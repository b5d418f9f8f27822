//===- ConvGeometry.cpp - The shape of one ConvStep -----------------------===//
#include "runtime/cpu/ConvGeometry.h"

#include "runtime/core/PlanStep.h"

namespace dlc::cpu {
namespace {

std::vector<int64_t> read(const flatbuffers::Vector<int64_t> *v, size_t n,
                          int64_t absent) {
  if (!v)
    return std::vector<int64_t>(n, absent);
  return std::vector<int64_t>(v->begin(), v->end());
}

int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t d : v)
    p *= d;
  return p;
}

} // namespace

ConvGeometry ConvGeometry::fromStep(const fb::ConvStep &s) {
  ConvGeometry g;
  const auto &x = *s.x_shape(), &w = *s.w_shape(), &y = *s.y_shape();
  size_t spatial = x.size() - 2;
  g.batch = x[0];
  g.inChannels = x[1];
  g.outChannels = w[0];
  g.groups = s.groups();
  g.channelsLast = s.channels_last();
  for (size_t i = 0; i < spatial; ++i) {
    g.input.push_back(x[i + 2]);
    g.kernel.push_back(w[i + 2]);
    g.output.push_back(y[i + 2]);
  }
  g.stride = read(s.stride(), spatial, 1);
  g.padLow = read(s.pad_low(), spatial, 0);
  g.padHigh = read(s.pad_high(), spatial, 0);
  g.dilation = read(s.dilation(), spatial, 1);
  return g;
}

int64_t ConvGeometry::inputPlane() const { return product(input); }
int64_t ConvGeometry::kernelPlane() const { return product(kernel); }
int64_t ConvGeometry::outputPlane() const { return product(output); }

int64_t ConvGeometry::xElements() const {
  return batch * inChannels * inputPlane();
}
int64_t ConvGeometry::wElements() const {
  return outChannels * inPerGroup() * kernelPlane();
}
int64_t ConvGeometry::yElements() const {
  return batch * outChannels * outputPlane();
}

int64_t ConvGeometry::outputElements(fb::ConvKind kind) const {
  int64_t elements[] = {xElements(), wElements(), yElements()};
  return elements[convOutputRef(kind)];
}

} // namespace dlc::cpu
