//===- DirectConv.cpp - Convolutions as plain loops -----------------------===//
//
// All three loops walk spatial positions with an odometer (a coordinate
// vector incremented in row-major order) rather than dividing a linear
// index, and map an output position p and kernel position q to the input
// position p * stride - padLow + q * dilation, skipping the padding.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/DirectConv.h"

#include <algorithm>

namespace dlc::cpu {
namespace {

using Coords = std::vector<int64_t>;

/// Advances `c` to the next position in `dims` (row-major); false after
/// the last.
bool next(Coords &c, const Coords &dims) {
  for (size_t d = c.size(); d-- > 0;) {
    if (++c[d] < dims[d])
      return true;
    c[d] = 0;
  }
  return false;
}

/// The linear offset of input position p * stride - padLow + q * dilation,
/// or -1 when it falls in the padding.
int64_t inputOffset(const ConvGeometry &g, const Coords &p, const Coords &q) {
  int64_t offset = 0;
  for (size_t d = 0; d < p.size(); ++d) {
    int64_t i = p[d] * g.stride[d] - g.padLow[d] + q[d] * g.dilation[d];
    if (i < 0 || i >= g.input[d])
      return -1;
    offset = offset * g.input[d] + i;
  }
  return offset;
}

/// The output position p with p * stride - padLow + q * dilation == i as a
/// linear offset, or -1 when there is none.
int64_t outputOffset(const ConvGeometry &g, const Coords &i, const Coords &q) {
  int64_t offset = 0;
  for (size_t d = 0; d < i.size(); ++d) {
    int64_t t = i[d] + g.padLow[d] - q[d] * g.dilation[d];
    if (t < 0 || t % g.stride[d])
      return -1;
    int64_t p = t / g.stride[d];
    if (p >= g.output[d])
      return -1;
    offset = offset * g.output[d] + p;
  }
  return offset;
}

/// Runs `body(unit, a, b)` for every unit of work in [0, units) on `pool`,
/// with two odometers of `g`'s rank that a thread reuses across its units.
template <typename Body>
void forEachUnit(const ConvGeometry &g, int64_t units, ThreadPool &pool,
                 Body body) {
  pool.parallelFor(units, 1, [&](int64_t begin, int64_t end) {
    Coords a(g.spatialRank()), b(g.spatialRank());
    for (int64_t unit = begin; unit < end; ++unit)
      body(unit, a, b);
  });
}

} // namespace

template <typename T>
void directConvForward(const ConvGeometry &g, const T *x, const T *w, T *y,
                       ThreadPool &pool) {
  int64_t xPlane = g.inputPlane(), kPlane = g.kernelPlane(),
          yPlane = g.outputPlane(), cg = g.inPerGroup(), og = g.outPerGroup();
  // One output channel plane of one sample.
  auto outputPlane = [&](int64_t no, Coords &p, Coords &q) {
    int64_t n = no / g.outChannels, o = no % g.outChannels;
    int64_t firstIn = (o / og) * cg;
    T *out = y + no * yPlane;
    std::fill(p.begin(), p.end(), 0);
    for (int64_t pi = 0; pi < yPlane; ++pi, next(p, g.output)) {
      double acc = 0;
      for (int64_t c = 0; c < cg; ++c) {
        const T *xc = x + (n * g.inChannels + firstIn + c) * xPlane;
        const T *wc = w + (o * cg + c) * kPlane;
        std::fill(q.begin(), q.end(), 0);
        for (int64_t qi = 0; qi < kPlane; ++qi, next(q, g.kernel)) {
          int64_t i = inputOffset(g, p, q);
          if (i >= 0)
            acc += static_cast<double>(xc[i]) * static_cast<double>(wc[qi]);
        }
      }
      out[pi] = static_cast<T>(acc);
    }
  };
  forEachUnit(g, g.batch * g.outChannels, pool, outputPlane);
}

template <typename T>
void directConvBackwardData(const ConvGeometry &g, const T *dy, const T *w,
                            T *dx, ThreadPool &pool) {
  int64_t xPlane = g.inputPlane(), kPlane = g.kernelPlane(),
          yPlane = g.outputPlane(), cg = g.inPerGroup(), og = g.outPerGroup();
  // One input channel plane of one sample.
  auto inputPlane = [&](int64_t nc, Coords &i, Coords &q) {
    int64_t n = nc / g.inChannels, ci = nc % g.inChannels;
    int64_t group = ci / cg, c = ci % cg;
    T *out = dx + nc * xPlane;
    std::fill(i.begin(), i.end(), 0);
    for (int64_t ii = 0; ii < xPlane; ++ii, next(i, g.input)) {
      double acc = 0;
      std::fill(q.begin(), q.end(), 0);
      for (int64_t qi = 0; qi < kPlane; ++qi, next(q, g.kernel)) {
        int64_t p = outputOffset(g, i, q);
        if (p < 0)
          continue;
        for (int64_t o = group * og; o < (group + 1) * og; ++o)
          acc += static_cast<double>(dy[(n * g.outChannels + o) * yPlane + p]) *
                 static_cast<double>(w[(o * cg + c) * kPlane + qi]);
      }
      out[ii] = static_cast<T>(acc);
    }
  };
  forEachUnit(g, g.batch * g.inChannels, pool, inputPlane);
}

template <typename T>
void directConvBackwardFilter(const ConvGeometry &g, const T *x, const T *dy,
                              T *dw, ThreadPool &pool) {
  int64_t xPlane = g.inputPlane(), kPlane = g.kernelPlane(),
          yPlane = g.outputPlane(), cg = g.inPerGroup(), og = g.outPerGroup();
  // One kernel plane of dw: an output channel's weights for one input
  // channel of its group.
  auto filter = [&](int64_t oc, Coords &p, Coords &q) {
    int64_t o = oc / cg, c = oc % cg;
    int64_t in = (o / og) * cg + c;
    T *out = dw + oc * kPlane;
    std::fill(q.begin(), q.end(), 0);
    for (int64_t qi = 0; qi < kPlane; ++qi, next(q, g.kernel)) {
      double acc = 0;
      for (int64_t n = 0; n < g.batch; ++n) {
        const T *xc = x + (n * g.inChannels + in) * xPlane;
        const T *dyo = dy + (n * g.outChannels + o) * yPlane;
        std::fill(p.begin(), p.end(), 0);
        for (int64_t pi = 0; pi < yPlane; ++pi, next(p, g.output)) {
          int64_t i = inputOffset(g, p, q);
          if (i >= 0)
            acc += static_cast<double>(xc[i]) * static_cast<double>(dyo[pi]);
        }
      }
      out[qi] = static_cast<T>(acc);
    }
  };
  forEachUnit(g, g.outChannels * cg, pool, filter);
}

template void directConvForward<float>(const ConvGeometry &, const float *,
                                       const float *, float *, ThreadPool &);
template void directConvForward<double>(const ConvGeometry &, const double *,
                                        const double *, double *, ThreadPool &);
template void directConvBackwardData<float>(const ConvGeometry &, const float *,
                                            const float *, float *,
                                            ThreadPool &);
template void directConvBackwardData<double>(const ConvGeometry &,
                                             const double *, const double *,
                                             double *, ThreadPool &);
template void directConvBackwardFilter<float>(const ConvGeometry &,
                                              const float *, const float *,
                                              float *, ThreadPool &);
template void directConvBackwardFilter<double>(const ConvGeometry &,
                                               const double *, const double *,
                                               double *, ThreadPool &);

} // namespace dlc::cpu
