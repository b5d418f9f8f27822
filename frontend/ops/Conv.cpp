//===- Conv.cpp - ONNX convolutions: Conv, ConvTranspose ------------------===//
//
// Conv is dlc.conv once auto_pad is resolved into explicit padding.
// ConvTranspose is dlc.conv_grad_input, the data gradient of the
// convolution it transposes, whose filter is ONNX's weight as it is. The
// window attributes (strides, dilations, pads, auto_pad) are read as the
// pools read them, through RuleUtils.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

/// x + b reshaped to [1, C, 1, ...]: a per-channel bias or scale operand for
/// an [N, C, spatial...] result.
Value addChannelBias(NodeContext &c, Value y, Value bias) {
  if (!y || !bias)
    return {};
  RankedTensorType yType = typeOf(y);
  int64_t channels = yType.getDimSize(1);
  if (typeOf(bias).getShape() != ArrayRef<int64_t>{channels}) {
    c.error() << "bias has shape [" << typeOf(bias).getShape()
              << "], expected [" << channels << "]";
    return {};
  }
  SmallVector<int64_t> shape(yType.getRank(), 1);
  shape[1] = channels;
  return c.build<AddOp>({y, c.reshape(bias, shape)});
}

/// The shared checks of Conv and ConvTranspose: input [N, C, spatial...] and
/// weight of the same rank whose spatial shape matches kernel_shape.
bool checkConvOperands(NodeContext &c, Value x, Value w) {
  if (!x || !w)
    return false;
  int64_t rank = typeOf(x).getRank();
  if (rank < 3) {
    c.error() << "input must have rank 3 or more (N, C, spatial...), got "
              << typeOf(x);
    return false;
  }
  if (typeOf(w).getRank() != rank) {
    c.error() << "weight " << typeOf(w) << " must have the input's rank "
              << rank;
    return false;
  }
  ArrayRef<int64_t> kernel = typeOf(w).getShape().drop_front(2);
  if (c.hasAttr("kernel_shape") &&
      ArrayRef<int64_t>(c.intsAttr("kernel_shape")) != kernel) {
    c.error() << "kernel_shape [" << c.intsAttr("kernel_shape")
              << "] does not match the weight's spatial shape [" << kernel
              << "]";
    return false;
  }
  return true;
}

void convRule(NodeContext &c) {
  Value x = c.input(0), w = c.input(1);
  if (!checkConvOperands(c, x, w))
    return;
  int64_t spatial = typeOf(x).getRank() - 2;
  ArrayRef<int64_t> input = typeOf(x).getShape().drop_front(2);
  ArrayRef<int64_t> kernel = typeOf(w).getShape().drop_front(2);
  auto strides = spatialAttr(c, "strides", spatial, 1, 1);
  auto dilations = spatialAttr(c, "dilations", spatial, 1, 1);
  std::optional<AutoPad> autoPad = readAutoPad(c);
  SmallVector<int64_t> low, high;
  if (!strides || !dilations || !autoPad || !readPads(c, spatial, low, high))
    return;
  for (int64_t d = 0; d < spatial; ++d)
    if (!windowExtent(c, kernel[d], (*dilations)[d], d))
      return;
  if (!applyAutoPad(c, *autoPad, input, kernel, *strides, *dilations, low,
                    high))
    return;
  int64_t group = c.intAttr("group", 1);
  Value y = c.build<ConvOp>({x, w}, {c.namedI64s("stride", *strides),
                                     c.namedI64s("pad_low", low),
                                     c.namedI64s("pad_high", high),
                                     c.namedI64s("dilation", *dilations),
                                     c.namedI64("groups", group)});
  if (c.hasInput(2))
    y = addChannelBias(c, y, c.input(2));
  c.setOutput(0, y);
}

/// ConvTranspose as dlc.conv_grad_input: each input element scatters the
/// kernel into the output at stride steps, which is the data gradient of
/// the convolution G from the output (Cout channels) to the input (Cin)
/// with ONNX's strides, dilations and begin pads and the weight
/// [Cin, Cout/g, k...] as G's filter. G's end padding is chosen so that G
/// maps exactly the output positions an input element reaches back to the
/// input; output positions past that reach (output_padding, an
/// output_shape larger than the reach) are zeros, a dlc.pad.
void convTransposeRule(NodeContext &c) {
  Value x = c.input(0), w = c.input(1);
  if (!checkConvOperands(c, x, w))
    return;
  RankedTensorType xType = typeOf(x), wType = typeOf(w);
  int64_t spatial = xType.getRank() - 2;
  ArrayRef<int64_t> input = xType.getShape().drop_front(2);
  ArrayRef<int64_t> kernel = wType.getShape().drop_front(2);
  int64_t group = c.intAttr("group", 1);
  int64_t inChannels = xType.getDimSize(1);
  if (group <= 0 || inChannels % group != 0) {
    c.error() << "group " << group << " must be positive and divide the "
              << inChannels << " input channels";
    return;
  }
  if (wType.getDimSize(0) != inChannels) {
    c.error() << "weight " << wType << " must have " << inChannels
              << " input channels (dimension 0)";
    return;
  }
  auto strides = spatialAttr(c, "strides", spatial, 1, 1);
  auto dilations = spatialAttr(c, "dilations", spatial, 1, 1);
  auto outputPadding = spatialAttr(c, "output_padding", spatial, 0, 0);
  std::optional<AutoPad> autoPad = readAutoPad(c);
  SmallVector<int64_t> low, high;
  if (!strides || !dilations || !outputPadding || !autoPad ||
      !readPads(c, spatial, low, high))
    return;

  // The output size without padding, then the padding that output_shape or
  // SAME asks for (the spec's total_padding split; a negative total means
  // the output extends past the last input's reach, at the end). Every
  // attribute is at most kMaxTensorElements (spatialAttr, readPads), so
  // only the stride times the input can overflow, and the sizes are bounded
  // by kMaxTensorElements before any further arithmetic.
  SmallVector<int64_t> full(spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    std::optional<int64_t> window =
        windowExtent(c, kernel[d], (*dilations)[d], d);
    if (!window)
      return;
    std::optional<int64_t> spread = llvm::checkedMulAdd(
        (*strides)[d], input[d] - 1, (*outputPadding)[d] + *window);
    if (!spread || *spread > kMaxTensorElements) {
      c.error() << "output size of spatial dimension " << d << " (stride "
                << (*strides)[d] << " times input size " << input[d]
                << ") exceeds " << kMaxTensorElements;
      return;
    }
    full[d] = *spread;
  }
  std::optional<SmallVector<int64_t>> target;
  if (c.hasAttr("output_shape")) {
    std::vector<int64_t> shape = c.intsAttr("output_shape");
    if (c.failed())
      return;
    // Some exporters give the full [N, C, spatial...] shape.
    if (static_cast<int64_t>(shape.size()) == spatial + 2)
      shape.erase(shape.begin(), shape.begin() + 2);
    if (static_cast<int64_t>(shape.size()) != spatial) {
      c.error() << "output_shape has " << shape.size() << " entries for "
                << spatial << " spatial dimensions";
      return;
    }
    for (int64_t v : shape)
      if (v < 1 || v > kMaxTensorElements) {
        c.error() << "output_shape [" << ArrayRef<int64_t>(shape) << "] has "
                  << v << ", expected values in [1, " << kMaxTensorElements
                  << "]";
        return;
      }
    target = SmallVector<int64_t>(shape.begin(), shape.end());
  } else if (*autoPad == AutoPad::SameUpper || *autoPad == AutoPad::SameLower) {
    target = SmallVector<int64_t>(spatial);
    for (int64_t d = 0; d < spatial; ++d)
      (*target)[d] = input[d] * (*strides)[d];
  } else if (*autoPad == AutoPad::Valid) {
    low.assign(spatial, 0);
    high.assign(spatial, 0);
  }
  if (target) {
    for (int64_t d = 0; d < spatial; ++d) {
      int64_t total = full[d] - (*target)[d];
      if (total < 0) {
        low[d] = 0;
        high[d] = total;
        continue;
      }
      low[d] = *autoPad == AutoPad::SameUpper ? total / 2 : total - total / 2;
      high[d] = total - low[d];
    }
  }

  // Per dimension: the output size; `reached`, the output positions an
  // input element reaches (the last input's window ends at
  // stride * (in - 1) + window - 1 - low), computed by G; G's end padding,
  // which makes G map the reached positions to exactly `in` outputs; and
  // the zeros after them.
  SmallVector<int64_t> reached(spatial), gHigh(spatial), tail(spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t outSize = full[d] - low[d] - high[d];
    if (outSize <= 0) {
      c.error() << "output size " << outSize << " of spatial dimension " << d
                << " is not positive";
      return;
    }
    int64_t reach = full[d] - (*outputPadding)[d] - low[d];
    if (reach <= 0) {
      c.error() << "pads [" << ArrayRef<int64_t>(low) << "] start the output "
                << "of spatial dimension " << d
                << " past every position an input element reaches";
      return;
    }
    reached[d] = std::min(outSize, reach);
    gHigh[d] = reach - reached[d];
    tail[d] = outSize - reached[d];
  }

  int64_t outChannels = group * wType.getDimSize(1);
  SmallVector<int64_t> shape = {xType.getDimSize(0), outChannels};
  shape.append(reached.begin(), reached.end());
  Value y = c.buildTyped<ConvGradInputOp>(
      RankedTensorType::get(shape, xType.getElementType()), {x, w},
      {c.namedI64s("stride", *strides), c.namedI64s("pad_low", low),
       c.namedI64s("pad_high", gHigh), c.namedI64s("dilation", *dilations),
       c.namedI64("groups", group)});
  if (llvm::any_of(tail, [](int64_t t) { return t > 0; })) {
    SmallVector<int64_t> padLow(spatial + 2, 0), padHigh = {0, 0};
    padHigh.append(tail.begin(), tail.end());
    y = c.build<PadOp>(
        {y},
        {c.namedI64s("low", padLow), c.namedI64s("high", padHigh),
         c.named("mode", PadModeAttr::get(c.context(), PadMode::constant))});
  }
  if (c.hasInput(2))
    y = addChannelBias(c, y, c.input(2));
  c.setOutput(0, y);
}

} // namespace

void mlir::dlc::addConvRules(OpRuleTable &t) {
  t["Conv"] = {convRule, 1};
  t["ConvTranspose"] = {convTransposeRule, 1};
}
