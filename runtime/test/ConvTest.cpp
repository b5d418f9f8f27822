//===- ConvTest.cpp - ConvStep against a float64 reference ----------------===//
//
// Forward, backward-data and backward-filter convolutions in float32
// (oneDNN) and float64 (the direct loops), each through a session, against
// a naive float64 convolution written here independently of the runtime:
// it enumerates every term x * w of the forward sum once and adds it where
// each of the three operations needs it. Groups 1, 2 and depthwise, stride
// 2, asymmetric padding, dilation 2, and 1-, 2- and 3-d shapes.
//
// Tolerance: |got - want| <= rtol * sum |terms|, the bound of a sum
// evaluated in another order (k terms: about k * eps of the magnitude).
// Channels-last steps (NHWC / OHWI buffers) take the same cases: their
// operands are the same values moved, so the same tolerances hold.
//
//===----------------------------------------------------------------------===//
#include "runtime/support/Float16.h"
#include "runtime/test/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <random>

using namespace dlc;
using namespace dlc::test;

namespace {

struct Case {
  const char *name;
  int64_t batch, inChannels, outChannels, groups;
  /// Per spatial dimension (1 to 3 of them).
  std::vector<int64_t> input, kernel, stride, padLow, padHigh, dilation;

  size_t rank() const { return input.size(); }
  std::vector<int64_t> output() const {
    std::vector<int64_t> out;
    for (size_t d = 0; d < rank(); ++d)
      out.push_back((input[d] + padLow[d] + padHigh[d] -
                     (dilation[d] * (kernel[d] - 1) + 1)) /
                        stride[d] +
                    1);
    return out;
  }
  std::vector<int64_t> xShape() const { return with(batch, inChannels, input); }
  std::vector<int64_t> wShape() const {
    return with(outChannels, inChannels / groups, kernel);
  }
  std::vector<int64_t> yShape() const {
    return with(batch, outChannels, output());
  }
  static std::vector<int64_t> with(int64_t a, int64_t b,
                                   const std::vector<int64_t> &rest) {
    std::vector<int64_t> s{a, b};
    s.insert(s.end(), rest.begin(), rest.end());
    return s;
  }
};

int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t d : v)
    p *= d;
  return p;
}

/// The reference: spatial dims padded to three (leading 1s), every term of
/// the forward sum visited once.
struct Reference {
  std::vector<double> y, dx, dw;
  std::vector<double> yMag, dxMag, dwMag;

  Reference(const Case &c, const std::vector<double> &x,
            const std::vector<double> &w, const std::vector<double> &dy) {
    auto pad3 = [&](const std::vector<int64_t> &v, int64_t fill) {
      std::vector<int64_t> r(3 - v.size(), fill);
      r.insert(r.end(), v.begin(), v.end());
      return r;
    };
    std::vector<int64_t> in = pad3(c.input, 1), k = pad3(c.kernel, 1),
                         out = pad3(c.output(), 1), s = pad3(c.stride, 1),
                         pl = pad3(c.padLow, 0), dl = pad3(c.dilation, 1);
    int64_t cg = c.inChannels / c.groups, og = c.outChannels / c.groups;
    y.assign(product(c.yShape()), 0);
    yMag = y;
    dx.assign(product(c.xShape()), 0);
    dxMag = dx;
    dw.assign(product(c.wShape()), 0);
    dwMag = dw;
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t o = 0; o < c.outChannels; ++o)
        for (int64_t p0 = 0; p0 < out[0]; ++p0)
          for (int64_t p1 = 0; p1 < out[1]; ++p1)
            for (int64_t p2 = 0; p2 < out[2]; ++p2)
              for (int64_t ci = 0; ci < cg; ++ci)
                for (int64_t k0 = 0; k0 < k[0]; ++k0)
                  for (int64_t k1 = 0; k1 < k[1]; ++k1)
                    for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                      int64_t i0 = p0 * s[0] - pl[0] + k0 * dl[0];
                      int64_t i1 = p1 * s[1] - pl[1] + k1 * dl[1];
                      int64_t i2 = p2 * s[2] - pl[2] + k2 * dl[2];
                      if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] ||
                          i2 < 0 || i2 >= in[2])
                        continue;
                      int64_t channel = (o / og) * cg + ci;
                      int64_t xi =
                          (((n * c.inChannels + channel) * in[0] + i0) * in[1] +
                           i1) *
                              in[2] +
                          i2;
                      int64_t wi =
                          (((o * cg + ci) * k[0] + k0) * k[1] + k1) * k[2] + k2;
                      int64_t yi =
                          (((n * c.outChannels + o) * out[0] + p0) * out[1] +
                           p1) *
                              out[2] +
                          p2;
                      y[yi] += x[xi] * w[wi];
                      yMag[yi] += std::fabs(x[xi] * w[wi]);
                      dx[xi] += dy[yi] * w[wi];
                      dxMag[xi] += std::fabs(dy[yi] * w[wi]);
                      dw[wi] += x[xi] * dy[yi];
                      dwMag[wi] += std::fabs(x[xi] * dy[yi]);
                    }
  }
};

const Case kCases[] = {
    {"3x3 pad 1", 2, 3, 4, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    {"groups 2", 2, 4, 6, 2, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    {"depthwise", 2, 4, 4, 4, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
    {"depthwise x2",
     1,
     3,
     6,
     3,
     {7, 7},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1},
     {1, 1}},
    {"stride 2", 2, 3, 5, 1, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {0, 1}, {1, 1}},
    {"asymmetric padding",
     1,
     2,
     3,
     1,
     {6, 7},
     {3, 2},
     {1, 1},
     {0, 2},
     {1, 0},
     {1, 1}},
    {"dilation 2", 2, 3, 4, 1, {9, 9}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}},
    {"1x1 stride 2",
     2,
     8,
     4,
     1,
     {6, 6},
     {1, 1},
     {2, 2},
     {0, 0},
     {0, 0},
     {1, 1}},
    {"resnet-like",
     4,
     16,
     16,
     1,
     {8, 8},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1},
     {1, 1}},
    {"1-d", 2, 3, 4, 1, {11}, {3}, {2}, {1}, {2}, {2}},
    {"3-d",
     1,
     2,
     3,
     1,
     {4, 5, 4},
     {2, 3, 2},
     {1, 2, 1},
     {0, 1, 1},
     {1, 1, 0},
     {1, 1, 2}},
};

const char *kindName(fb::ConvKind kind) {
  return kind == fb::ConvKind::Forward        ? "forward"
         : kind == fb::ConvKind::BackwardData ? "backward data"
                                              : "backward filter";
}

/// The row-major index, in a tensor of channels-first `shape` stored
/// channels-last, of element `index` of the channels-first tensor.
size_t channelsLastIndex(const std::vector<int64_t> &shape, size_t index) {
  int64_t positions = 1;
  for (size_t d = 2; d < shape.size(); ++d)
    positions *= shape[d];
  auto i = static_cast<int64_t>(index);
  int64_t p = i % positions, c = i / positions % shape[1],
          n = i / positions / shape[1];
  return static_cast<size_t>((n * positions + p) * shape[1] + c);
}

template <typename T>
void runCase(const Case &c, fb::ConvKind kind, DType dtype, dlc_dtype_t cDtype,
             double rtol, const std::string &spec = "cpu",
             bool channelsLast = false,
             fb::ConvEngine engine = fb::ConvEngine::Auto) {
  SCOPED_TRACE(std::string(c.name) + ", " + kindName(kind) + ", " +
               dtypeName(dtype) + ", " + spec +
               (channelsLast ? ", channels-last" : "") + ", engine " +
               fb::EnumNameConvEngine(engine));
  auto stored = [&](const std::vector<int64_t> &shape, size_t index) {
    return channelsLast ? channelsLastIndex(shape, index) : index;
  };
  std::string why;
  DevicePtr device = openDevice(spec, 2, why);
  if (!device)
    GTEST_SKIP() << why;
  // The step's operands in the order x, w, y; which one is the output
  // depends on the kind.
  std::vector<int64_t> shapes[3] = {c.xShape(), c.wShape(), c.yShape()};
  int outputIndex = kind == fb::ConvKind::Forward        ? 2
                    : kind == fb::ConvKind::BackwardData ? 0
                                                         : 1;
  ModuleBuilder mb;
  mb.target(targetOf(spec));
  FunctionBuilder &f = mb.function("conv");
  Ref refs[3];
  uint32_t nextArgument = 0;
  for (int i = 0; i < 3; ++i) {
    if (i == outputIndex) {
      f.result("out", "output", dtype, shapes[i]);
      refs[i] = result(0);
    } else {
      f.argument(i == 0 ? "x" : i == 1 ? "w" : "dy", "input", dtype, shapes[i]);
      refs[i] = argument(nextArgument++);
    }
  }
  ConvSpec s;
  s.kind = kind;
  s.dtype = dtype;
  s.x = refs[0];
  s.w = refs[1];
  s.y = refs[2];
  s.xShape = shapes[0];
  s.wShape = shapes[1];
  s.yShape = shapes[2];
  s.stride = c.stride;
  s.padLow = c.padLow;
  s.padHigh = c.padHigh;
  s.dilation = c.dilation;
  s.groups = c.groups;
  s.channelsLast = channelsLast;
  s.engine = engine;
  f.conv(s, "node 'conv' (Conv)");
  ModulePtr module(nullptr, &dlc_module_release);
  Outcome o = loadModule(mb.finish(), module);
  ASSERT_TRUE(o.ok()) << o.message;
  SessionPtr session(nullptr, &dlc_session_release);
  o = openSession(module.get(), device.get(), session);
  ASSERT_TRUE(o.ok()) << o.message;

  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<HostTensor<T>> tensors;
  std::vector<double> values[3];
  for (int i = 0; i < 3; ++i) {
    tensors.emplace_back(cDtype, shapes[i]);
    std::vector<T> &data = tensors.back().data;
    for (size_t j = 0; j < data.size(); ++j) {
      T v = static_cast<T>(dist(rng));
      data[stored(shapes[i], j)] = v;
      values[i].push_back(static_cast<double>(v));
    }
  }
  std::vector<dlc_tensor_t> inputs;
  for (int i = 0; i < 3; ++i)
    if (i != outputIndex)
      inputs.push_back(tensors[i].view());
  dlc_tensor_t output = tensors[outputIndex].view();
  o = outcome(
      dlc_session_call(session.get(), "conv", inputs.data(), 2, &output, 1));
  ASSERT_TRUE(o.ok()) << o.message;

  Reference ref(c, values[0], values[1], values[2]);
  const std::vector<double> &want = outputIndex == 2   ? ref.y
                                    : outputIndex == 0 ? ref.dx
                                                       : ref.dw;
  const std::vector<double> &mag = outputIndex == 2   ? ref.yMag
                                   : outputIndex == 0 ? ref.dxMag
                                                      : ref.dwMag;
  const std::vector<T> &got = tensors[outputIndex].data;
  for (size_t i = 0; i < want.size(); ++i) {
    T value = got[stored(shapes[outputIndex], i)];
    ASSERT_LE(std::fabs(static_cast<double>(value) - want[i]),
              1e-30 + rtol * mag[i])
        << "element " << i << ": got " << static_cast<double>(value)
        << ", want " << want[i];
  }
}

/// A 16-bit host value (dlc::BFloat16 or dlc::Half, 2 bytes) that runCase
/// converts from and to double, as it does float and double: through
/// float, rounding to nearest even.
template <typename Narrow> struct Stored16 {
  Narrow value;
  explicit Stored16(double d) : value(static_cast<float>(d)) {}
  Stored16() : value(0.0f) {}
  explicit operator double() const { return static_cast<float>(value); }
};
static_assert(sizeof(Stored16<BFloat16>) == 2 && sizeof(Stored16<Half>) == 2,
              "16-bit elements");

const fb::ConvKind kKinds[] = {fb::ConvKind::Forward,
                               fb::ConvKind::BackwardData,
                               fb::ConvKind::BackwardFilter};

/// runCase for every case and kind, in each of the `channelsLast` layouts.
template <typename T>
void runCases(DType dtype, dlc_dtype_t cDtype, double rtol,
              const std::string &spec = "cpu",
              std::initializer_list<bool> channelsLast = {false},
              fb::ConvEngine engine = fb::ConvEngine::Auto) {
  for (const Case &c : kCases)
    for (fb::ConvKind kind : kKinds)
      for (bool last : channelsLast)
        runCase<T>(c, kind, dtype, cDtype, rtol, spec, last, engine);
}

TEST(Conv, Float32MatchesReference) {
  // float32 through oneDNN: sums of at most 16 * 9 * 4 * 64 terms (backward
  // filter of the resnet-like case) in a blocked order, each term exact in
  // float64; k * eps(float32) for k ~ 2^13 is 5e-4 in the worst case, the
  // typical pairwise-blocked error is far smaller: 1e-5 of the magnitude.
  runCases<float>(DType::F32, DLC_F32, 1e-5);
}

TEST(Conv, Float64MatchesReference) {
  // float64 through the direct loops, accumulating in double in another
  // order than the reference: 1e-13 of the magnitude.
  runCases<double>(DType::F64, DLC_F64, 1e-13);
}

TEST(Conv, Bfloat16MatchesReference) {
  // bfloat16 operands (exact in the float64 reference) through oneDNN (or
  // float32 on widened copies where this CPU has no bfloat16 convolution),
  // which sums in float32 and rounds the result to bfloat16 once: within
  // 2^-8 of the sum of |terms| (one unit in the last place, 2^-8 relative,
  // at most, plus the float32 sum's 1e-5).
  runCases<Stored16<BFloat16>>(DType::BF16, DLC_BF16, 4e-3, "cpu",
                               {false, true});
}

TEST(Conv, Float16MatchesReference) {
  // As bfloat16 with float16's 11 significant bits: one unit in the last
  // place is 2^-11 relative, plus the float32 sum's 1e-5.
  runCases<Stored16<Half>>(DType::F16, DLC_F16, 6e-4, "cpu", {false, true});
}

TEST(Conv, ChannelsLastMatchesReference) {
  // float32 through oneDNN's NHWC/OHWI descriptors, float64 through the
  // direct loops behind channels-first copies; tolerances as above.
  runCases<float>(DType::F32, DLC_F32, 1e-5, "cpu", {true});
  runCases<double>(DType::F64, DLC_F64, 1e-13, "cpu", {true});
}

TEST(Conv, DirectEngineMatchesReference) {
  // float32 on the direct loops (dlc-compile --conv-engine direct), which
  // sum in double and round once: far inside oneDNN's 1e-5. bfloat16 on
  // them through widened float32 copies: the bfloat16 bound above.
  runCases<float>(DType::F32, DLC_F32, 1e-5, "cpu", {false, true},
                  fb::ConvEngine::Direct);
  runCases<Stored16<BFloat16>>(DType::BF16, DLC_BF16, 4e-3, "cpu", {false},
                               fb::ConvEngine::Direct);
}

TEST(Conv, LibraryEngineMatchesReference) {
  // The library engine demanded where oneDNN takes the step: as auto.
  runCases<float>(DType::F32, DLC_F32, 1e-5, "cpu", {false},
                  fb::ConvEngine::Library);
}

/// A 4-d convolution: oneDNN takes at most 3 spatial dimensions.
const Case kFourD{"4-d",
                  1,
                  2,
                  2,
                  1,
                  {3, 3, 3, 3},
                  {2, 1, 2, 1},
                  {1, 1, 1, 1},
                  {0, 0, 1, 0},
                  {0, 0, 0, 0},
                  {1, 1, 1, 1}};

/// Opens `session` on a CPU device (into `device`) for the forward step of
/// `c` in `dtype` on `engine`.
Outcome openConv(const Case &c, DType dtype, fb::ConvEngine engine,
                 DevicePtr &device, SessionPtr &session) {
  device = cpuDevice(2);
  ModuleBuilder mb;
  FunctionBuilder &f = mb.function("conv");
  f.argument("x", "input", dtype, c.xShape());
  f.argument("w", "input", dtype, c.wShape());
  f.result("y", "output", dtype, c.yShape());
  ConvSpec s;
  s.dtype = dtype;
  s.x = argument(0);
  s.w = argument(1);
  s.y = result(0);
  s.xShape = c.xShape();
  s.wShape = c.wShape();
  s.yShape = c.yShape();
  s.stride = c.stride;
  s.padLow = c.padLow;
  s.padHigh = c.padHigh;
  s.dilation = c.dilation;
  s.groups = c.groups;
  s.engine = engine;
  f.conv(s, "node 'conv' (Conv)");
  ModulePtr module(nullptr, &dlc_module_release);
  Outcome o = loadModule(mb.finish(), module);
  if (!o.ok())
    return o;
  return openSession(module.get(), device.get(), session);
}

/// openConv's outcome alone.
Outcome openConv(const Case &c, DType dtype, fb::ConvEngine engine) {
  DevicePtr device(nullptr, &dlc_device_release);
  SessionPtr session(nullptr, &dlc_session_release);
  return openConv(c, dtype, engine, device, session);
}

TEST(Conv, LibraryEngineDemandsWhatOneDnnTakes) {
  // oneDNN has no float64 convolution and takes 1 to 3 spatial dimensions:
  // a step that demands it anyway refuses the session, naming the step.
  Outcome o = openConv(kCases[0], DType::F64, fb::ConvEngine::Library);
  EXPECT_EQ(o.code, DLC_UNIMPLEMENTED);
  EXPECT_EQ(o.message, "test.dlcm: conv: step 0 (node 'conv' (Conv)): the "
                       "convolution demands the library engine, and oneDNN "
                       "does not take float64 over 2 spatial dimensions on "
                       "this CPU");
  o = openConv(kFourD, DType::F32, fb::ConvEngine::Library);
  EXPECT_EQ(o.code, DLC_UNIMPLEMENTED);
  EXPECT_NE(o.message.find("does not take float32 over 4 spatial"),
            std::string::npos)
      << o.message;
  EXPECT_TRUE(openConv(kFourD, DType::F32, fb::ConvEngine::Direct).ok());
}

// The same cases through cuDNN (ctest label `gpu`; skipped without a GPU).
// cuDNN may pick Winograd or FFT engines for float32, whose transforms
// round more than a direct sum: 1e-4 of the magnitude.
TEST(GpuConv, Float32MatchesReference) {
  runCases<float>(DType::F32, DLC_F32, 1e-4, "cuda:0");
}

TEST(GpuConv, ChannelsLastFloat32MatchesReference) {
  runCases<float>(DType::F32, DLC_F32, 1e-4, "cuda:0", {true});
}

TEST(GpuConv, Float64MatchesReference) {
  runCases<double>(DType::F64, DLC_F64, 1e-13, "cuda:0");
}

TEST(Conv, ManySpatialDimensionsUseTheDirectLoops) {
  // oneDNN takes at most 3 spatial dimensions; 4 run on the direct loops.
  const Case &c = kFourD;
  DevicePtr device(nullptr, &dlc_device_release);
  SessionPtr session(nullptr, &dlc_session_release);
  Outcome o = openConv(c, DType::F32, fb::ConvEngine::Auto, device, session);
  ASSERT_TRUE(o.ok()) << o.message;
  HostTensor<float> x(DLC_F32, c.xShape(), 1.0f), w(DLC_F32, c.wShape(), 1.0f),
      y(DLC_F32, c.yShape());
  dlc_tensor_t inputs[] = {x.view(), w.view()};
  dlc_tensor_t output = y.view();
  ASSERT_TRUE(
      outcome(dlc_session_call(session.get(), "conv", inputs, 2, &output, 1))
          .ok());
  // All-ones operands: each output counts the taps (2 channels x 4 kernel
  // positions) that fall inside the input. At output position (0,0,0,0)
  // the third dimension's first tap is in the padding; at (0,0,1,0),
  // linear index 3, none is.
  EXPECT_EQ(y.data[0], 2 * 2);
  EXPECT_EQ(y.data[3], 2 * 4);
}

} // namespace
