//===- Conv.cpp - ConvStep on the CPU -------------------------------------===//
//
// float32 convolutions of 1 to 3 spatial dimensions run on oneDNN's
// convolution primitives (forward, backward data, backward weights),
// created once per step when the session opens. The primitives compute in
// the memory layouts oneDNN prefers (format_tag::any, blocked), and the
// step reorders its plain NCHW (or, for a channels_last step, NHWC)
// operands into scratch memory and the result back: measured 1.4x to 1.8x
// faster than plain NCHW primitives even with the reorders counted
// (docs/performance.md). float64, and shapes oneDNN does not take, run on
// DirectConv (channels-last steps through channels-first scratch copies).
// That is the step's `auto` engine; a step may demand either (dlc-compile
// --conv-engine library|direct), and one oneDNN cannot take refuses to open.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/LibraryKernel.h"

#include "runtime/core/PlanStep.h"
#include "runtime/core/Status.h"
#include "runtime/cpu/ConvGeometry.h"
#include "runtime/cpu/DirectConv.h"
#include "runtime/cpu/Widen.h"
#include "runtime/module/Format.h"
#include "runtime/support/Tensor.h"

#include <array>
#include <cstring>

namespace dlc::cpu {
namespace {

using dnnl::memory;
using Kind = fb::ConvKind;

/// A prepared ConvStep, whose run takes its operands by name: the kernels
/// below that wrap another hand it their scratch copies.
class ConvKernel : public LibraryKernel {
public:
  void run(void *const *buffers, void *scratch, dnnl::stream &stream,
           ThreadPool &pool) final {
    run(buffers[0], buffers[1], buffers[2], scratch, stream, pool);
  }
  /// Computes the step's output from its two operands (x, w, y as the step
  /// names them; the output is the one its kind writes).
  virtual void run(void *x, void *w, void *y, void *scratch,
                   dnnl::stream &stream, ThreadPool &pool) = 0;
};

/// An operand with no elements: the output is zeros (a sum of nothing),
/// or empty itself.
class ZeroConv final : public ConvKernel {
public:
  ZeroConv(Kind kind, size_t outputBytes)
      : kind_(kind), outputBytes_(outputBytes) {}
  void run(void *x, void *w, void *y, void *, dnnl::stream &,
           ThreadPool &) override {
    void *operands[] = {x, w, y};
    std::memset(operands[convOutputRef(kind_)], 0, outputBytes_);
  }

private:
  Kind kind_;
  size_t outputBytes_;
};

template <typename T> class DirectConvKernel final : public ConvKernel {
public:
  DirectConvKernel(Kind kind, ConvGeometry g) : kind_(kind), g_(std::move(g)) {}
  void run(void *x, void *w, void *y, void *, dnnl::stream &,
           ThreadPool &pool) override {
    T *xt = static_cast<T *>(x), *wt = static_cast<T *>(w),
      *yt = static_cast<T *>(y);
    switch (kind_) {
    case Kind::Forward:
      directConvForward<T>(g_, xt, wt, yt, pool);
      break;
    case Kind::BackwardData:
      directConvBackwardData<T>(g_, yt, wt, xt, pool);
      break;
    case Kind::BackwardFilter:
      directConvBackwardFilter<T>(g_, xt, yt, wt, pool);
      break;
    }
  }

private:
  Kind kind_;
  ConvGeometry g_;
};

/// One operand of a oneDNN convolution: the caller's plain buffer and, when
/// the primitive wants another layout, a scratch buffer and the reorder
/// between them.
struct Operand {
  memory plain;
  memory internal;
  dnnl::reorder reorder;
  bool reordered = false;
  size_t scratchOffset = 0;

  /// Prepares an input (`isInput`: reordered plain -> internal) or the
  /// output (internal -> plain) for the layout `want`, reserving its
  /// scratch space at `scratch` when the layouts differ.
  void prepare(const memory::desc &plainDesc, const memory::desc &want,
               const dnnl::engine &engine, bool isInput, size_t &scratch) {
    plain = memory(plainDesc, engine, DNNL_MEMORY_NONE);
    reordered = want != plainDesc;
    if (!reordered) {
      internal = plain;
      return;
    }
    internal = memory(want, engine, DNNL_MEMORY_NONE);
    scratchOffset = scratch;
    scratch += alignScratch(want.get_size());
    reorder = isInput ? dnnl::reorder(dnnl::reorder::primitive_desc(
                            engine, plainDesc, engine, want))
                      : dnnl::reorder(dnnl::reorder::primitive_desc(
                            engine, want, engine, plainDesc));
  }

  void bind(void *data, std::byte *scratch) {
    plain.set_data_handle(data);
    if (reordered)
      internal.set_data_handle(scratch + scratchOffset);
  }
};

/// The oneDNN arguments x, w and y are for a convolution of `kind`: the
/// backward primitives take the gradients (dy, and dx or dw) as DIFF_ ones.
using Arguments = std::array<int, 3>;
Arguments argumentsOf(Kind kind) {
  switch (kind) {
  case Kind::Forward:
    return {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  case Kind::BackwardData:
    return {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST};
  case Kind::BackwardFilter:
    break;
  }
  return {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST};
}

class DnnlConv final : public ConvKernel {
public:
  DnnlConv(Kind kind, const ConvGeometry &g, const dnnl::engine &engine,
           memory::data_type type);

  size_t scratchBytes() const override { return scratchBytes_; }

  void run(void *x, void *w, void *y, void *scratch, dnnl::stream &stream,
           ThreadPool &) override {
    auto *base = static_cast<std::byte *>(scratch);
    x_.bind(x, base);
    w_.bind(w, base);
    y_.bind(y, base);
    scratchpad_.set_data_handle(base + scratchpadOffset_);
    Operand *operands[] = {&x_, &w_, &y_};
    size_t written = convOutputRef(kind_);
    for (size_t i = 0; i < 3; ++i)
      if (i != written && operands[i]->reordered)
        operands[i]->reorder.execute(stream, operands[i]->plain,
                                     operands[i]->internal);
    Arguments args = argumentsOf(kind_);
    primitive_.execute(stream, {{args[0], x_.internal},
                                {args[1], w_.internal},
                                {args[2], y_.internal},
                                {DNNL_ARG_SCRATCHPAD, scratchpad_}});
    Operand &output = *operands[written];
    if (output.reordered)
      output.reorder.execute(stream, output.internal, output.plain);
    stream.wait();
  }

private:
  Kind kind_;
  dnnl::primitive primitive_;
  Operand x_, w_, y_;
  memory scratchpad_;
  size_t scratchpadOffset_ = 0;
  size_t scratchBytes_ = 0;
};

memory::format_tag plainActivationTag(size_t spatial, bool channelsLast) {
  using tag = memory::format_tag;
  if (channelsLast)
    return spatial == 1 ? tag::nwc : spatial == 2 ? tag::nhwc : tag::ndhwc;
  return spatial == 1 ? tag::ncw : spatial == 2 ? tag::nchw : tag::ncdhw;
}

memory::format_tag plainWeightTag(size_t spatial, bool grouped,
                                  bool channelsLast) {
  using tag = memory::format_tag;
  if (grouped && channelsLast)
    return spatial == 1 ? tag::gowi : spatial == 2 ? tag::gohwi : tag::godhwi;
  if (grouped)
    return spatial == 1 ? tag::goiw : spatial == 2 ? tag::goihw : tag::goidhw;
  if (channelsLast)
    return spatial == 1 ? tag::owi : spatial == 2 ? tag::ohwi : tag::odhwi;
  return spatial == 1 ? tag::oiw : spatial == 2 ? tag::oihw : tag::oidhw;
}

/// Moves the channels of `count` tensors of `channels` x `positions`
/// elements each: [count, positions, channels] -> [count, channels,
/// positions] (`toChannelsFirst`) or back.
template <typename T>
void moveChannels(const T *from, T *to, int64_t count, int64_t positions,
                  int64_t channels, bool toChannelsFirst) {
  for (int64_t n = 0; n < count; ++n)
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t c = 0; c < channels; ++c) {
        int64_t last = (n * positions + p) * channels + c;
        int64_t first = (n * channels + c) * positions + p;
        if (toChannelsFirst)
          to[first] = from[last];
        else
          to[last] = from[first];
      }
}

/// A channels-last step run by a channels-first kernel (the direct loops:
/// float64, and geometries oneDNN refuses): the inputs are moved to
/// channels-first scratch copies and the output back.
template <typename T> class ChannelsLastConv final : public ConvKernel {
public:
  ChannelsLastConv(Kind kind, ConvGeometry g, std::unique_ptr<ConvKernel> inner)
      : kind_(kind), g_(std::move(g)), inner_(std::move(inner)) {}

  size_t scratchBytes() const override {
    return alignScratch(g_.xElements() * sizeof(T)) +
           alignScratch(g_.wElements() * sizeof(T)) +
           alignScratch(g_.yElements() * sizeof(T)) + inner_->scratchBytes();
  }

  void run(void *x, void *w, void *y, void *scratch, dnnl::stream &stream,
           ThreadPool &pool) override {
    auto *base = static_cast<std::byte *>(scratch);
    T *xs = reinterpret_cast<T *>(base);
    T *ws =
        reinterpret_cast<T *>(base + alignScratch(g_.xElements() * sizeof(T)));
    T *ys = reinterpret_cast<T *>(reinterpret_cast<std::byte *>(ws) +
                                  alignScratch(g_.wElements() * sizeof(T)));
    void *rest = reinterpret_cast<std::byte *>(ys) +
                 alignScratch(g_.yElements() * sizeof(T));
    // x, w, y: their (count, positions, channels).
    struct Operand {
      T *stored, *first;
      int64_t count, positions, channels;
    } operands[3] = {
        {static_cast<T *>(x), xs, g_.batch, g_.inputPlane(), g_.inChannels},
        {static_cast<T *>(w), ws, g_.outChannels, g_.kernelPlane(),
         g_.inPerGroup()},
        {static_cast<T *>(y), ys, g_.batch, g_.outputPlane(), g_.outChannels}};
    size_t written = convOutputRef(kind_);
    for (size_t i = 0; i < 3; ++i)
      if (i != written)
        moveChannels(operands[i].stored, operands[i].first, operands[i].count,
                     operands[i].positions, operands[i].channels, true);
    inner_->run(xs, ws, ys, rest, stream, pool);
    const Operand &o = operands[written];
    moveChannels(o.first, o.stored, o.count, o.positions, o.channels, false);
  }

private:
  Kind kind_;
  ConvGeometry g_;
  std::unique_ptr<ConvKernel> inner_;
};

/// A 16-bit convolution through a float32 kernel (Widen.h). Scratch: the
/// widened x, w and y, then the kernel's own.
class WidenedConv final : public ConvKernel {
public:
  WidenedConv(Kind kind, DType dtype, const ConvGeometry &g,
              std::unique_ptr<ConvKernel> inner)
      : kind_(kind),
        dtype_(dtype), elements_{static_cast<size_t>(g.xElements()),
                                 static_cast<size_t>(g.wElements()),
                                 static_cast<size_t>(g.yElements())},
        inner_(std::move(inner)) {}

  size_t scratchBytes() const override {
    size_t bytes = inner_->scratchBytes();
    for (size_t n : elements_)
      bytes += alignScratch(n * sizeof(float));
    return bytes;
  }

  void run(void *x, void *w, void *y, void *scratch, dnnl::stream &stream,
           ThreadPool &pool) override {
    void *stored[3] = {x, w, y};
    float *wide[3];
    auto *next = static_cast<std::byte *>(scratch);
    for (size_t i = 0; i < 3; ++i) {
      wide[i] = reinterpret_cast<float *>(next);
      next += alignScratch(elements_[i] * sizeof(float));
    }
    size_t written = convOutputRef(kind_);
    for (size_t i = 0; i < 3; ++i)
      if (i != written)
        widenToFloat(dtype_, stored[i], wide[i], elements_[i]);
    inner_->run(wide[0], wide[1], wide[2], next, stream, pool);
    narrowFromFloat(dtype_, wide[written], stored[written], elements_[written]);
  }

private:
  Kind kind_;
  DType dtype_;
  size_t elements_[3];
  std::unique_ptr<ConvKernel> inner_;
};

/// The direct loops for `g`, behind ChannelsLastConv when it is stored so.
template <typename T>
std::unique_ptr<ConvKernel> directConv(Kind kind, const ConvGeometry &g) {
  auto direct = std::make_unique<DirectConvKernel<T>>(kind, g);
  if (!g.channelsLast)
    return direct;
  return std::make_unique<ChannelsLastConv<T>>(kind, g, std::move(direct));
}

DnnlConv::DnnlConv(Kind kind, const ConvGeometry &g, const dnnl::engine &engine,
                   memory::data_type type)
    : kind_(kind) {
  size_t spatial = g.spatialRank();
  bool grouped = g.groups > 1;
  memory::dims xDims{g.batch, g.inChannels}, yDims{g.batch, g.outChannels},
      wDims;
  if (grouped)
    wDims = {g.groups, g.outPerGroup(), g.inPerGroup()};
  else
    wDims = {g.outChannels, g.inChannels};
  memory::dims strides, dilations, padLow, padHigh;
  for (size_t i = 0; i < spatial; ++i) {
    xDims.push_back(g.input[i]);
    yDims.push_back(g.output[i]);
    wDims.push_back(g.kernel[i]);
    strides.push_back(g.stride[i]);
    // oneDNN counts dilation from 0 (no dilation), ONNX from 1.
    dilations.push_back(g.dilation[i] - 1);
    padLow.push_back(g.padLow[i]);
    padHigh.push_back(g.padHigh[i]);
  }
  memory::desc xPlain(xDims, type, plainActivationTag(spatial, g.channelsLast));
  memory::desc yPlain(yDims, type, plainActivationTag(spatial, g.channelsLast));
  memory::desc wPlain(wDims, type,
                      plainWeightTag(spatial, grouped, g.channelsLast));
  memory::desc xAny(xDims, type, memory::format_tag::any);
  memory::desc yAny(yDims, type, memory::format_tag::any);
  memory::desc wAny(wDims, type, memory::format_tag::any);

  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  auto algorithm = dnnl::algorithm::convolution_direct;
  dnnl::convolution_forward::primitive_desc forward(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      algorithm, xAny, wAny, yAny, strides,
                                      dilations, padLow, padHigh),
      attr, engine);
  // The backward primitives take the same operands, and the forward one as
  // a hint; the (empty) `primitive` says which.
  auto backward = [&](auto primitive) -> dnnl::primitive_desc {
    using Primitive = decltype(primitive);
    return typename Primitive::primitive_desc(
        typename Primitive::desc(algorithm, xAny, wAny, yAny, strides,
                                 dilations, padLow, padHigh),
        attr, engine, forward);
  };
  dnnl::primitive_desc pd = forward;
  switch (kind) {
  case Kind::Forward:
    break;
  case Kind::BackwardData:
    pd = backward(dnnl::convolution_backward_data());
    break;
  case Kind::BackwardFilter:
    pd = backward(dnnl::convolution_backward_weights());
    break;
  }
  primitive_ = dnnl::primitive(pd);
  // Each operand in the layout the primitive chose for its argument.
  Arguments args = argumentsOf(kind);
  auto want = [&](int arg) {
    return pd.query_md(dnnl::query::exec_arg_md, arg);
  };
  size_t written = convOutputRef(kind);
  x_.prepare(xPlain, want(args[0]), engine, written != 0, scratchBytes_);
  w_.prepare(wPlain, want(args[1]), engine, written != 1, scratchBytes_);
  y_.prepare(yPlain, want(args[2]), engine, written != 2, scratchBytes_);
  memory::desc scratchpad = pd.scratchpad_desc();
  scratchpad_ = memory(scratchpad, engine, DNNL_MEMORY_NONE);
  scratchpadOffset_ = scratchBytes_;
  scratchBytes_ += alignScratch(scratchpad.get_size());
}

} // namespace

dlc_status_t createConvKernel(const fb::ConvStep &step, CpuDevice &device,
                              std::unique_ptr<LibraryKernel> &out) {
  ConvGeometry g = ConvGeometry::fromStep(step);
  DType dtype = static_cast<DType>(step.dtype());
  if (g.xElements() == 0 || g.wElements() == 0 || g.yElements() == 0) {
    out = std::make_unique<ZeroConv>(
        step.kind(), g.outputElements(step.kind()) * dtypeSize(dtype));
    return nullptr;
  }
  fb::ConvEngine engine = step.engine();
  // The library engine as codegen/plan's dlc-lower-to-plan checks it: oneDNN
  // convolves float32, bfloat16 and float16 over 1 to 3 spatial dimensions.
  bool libraryShape = dtype != DType::F64 && g.spatialRank() <= 3;
  auto refuseLibrary = [&] {
    return makeStatus(DLC_UNIMPLEMENTED,
                      std::string("the convolution demands the library "
                                  "engine, and oneDNN does not take ") +
                          dtypeName(dtype) + " over " +
                          std::to_string(g.spatialRank()) +
                          " spatial dimensions on this CPU");
  };
  if (dtype == DType::F64) {
    if (engine == fb::ConvEngine::Library)
      return refuseLibrary();
    out = directConv<double>(step.kind(), g);
    return nullptr;
  }
  if (dtype != DType::F32 && dtype != DType::BF16 && dtype != DType::F16)
    return makeStatus(DLC_UNIMPLEMENTED, std::string("convolution of ") +
                                             dtypeName(dtype) +
                                             " is not supported on the CPU");
  bool tryLibrary = libraryShape && engine != fb::ConvEngine::Direct;
  if (dtype != DType::F32 && tryLibrary) {
    // oneDNN's own 16-bit convolution, where this CPU has one.
    try {
      out = std::make_unique<DnnlConv>(step.kind(), g, device.engine(),
                                       dtype == DType::BF16
                                           ? memory::data_type::bf16
                                           : memory::data_type::f16);
      return nullptr;
    } catch (const dnnl::error &) {
    }
  }
  std::unique_ptr<ConvKernel> f32;
  if (tryLibrary) {
    try {
      f32 = std::make_unique<DnnlConv>(step.kind(), g, device.engine(),
                                       memory::data_type::f32);
    } catch (const dnnl::error &) {
      // oneDNN refuses some geometries (it checks its own limits); the
      // direct loops take any.
    }
  }
  if (!f32) {
    if (engine == fb::ConvEngine::Library)
      return refuseLibrary();
    f32 = directConv<float>(step.kind(), g);
  }
  out = dtype == DType::F32 ? std::move(f32)
                            : std::make_unique<WidenedConv>(step.kind(), dtype,
                                                            g, std::move(f32));
  return nullptr;
}

} // namespace dlc::cpu
