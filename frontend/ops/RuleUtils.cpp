//===- RuleUtils.cpp - Helpers shared by the op rule files ----------------===//
//
// The out-of-line helpers of RuleUtils.h; each is documented there.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <sstream>

using namespace mlir;
using namespace mlir::dlc;

std::string mlir::dlc::number(double value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

bool mlir::dlc::checkResultShape(NodeContext &c, ArrayRef<int64_t> shape) {
  if (checkedNumElements(shape))
    return true;
  c.error() << "result shape [" << shape << "] is too large (dlc's limit is "
            << kMaxTensorElements << " elements)";
  return false;
}

std::optional<SmallVector<int64_t>>
mlir::dlc::spatialAttr(NodeContext &c, StringRef name, int64_t spatial,
                       int64_t defaultValue, int64_t minValue) {
  if (!c.hasAttr(name))
    return SmallVector<int64_t>(spatial, defaultValue);
  std::vector<int64_t> values = c.intsAttr(name);
  if (c.failed())
    return std::nullopt;
  if (static_cast<int64_t>(values.size()) != spatial) {
    c.error() << name << " has " << values.size() << " entries for "
              << spatial << " spatial dimensions";
    return std::nullopt;
  }
  for (int64_t v : values) {
    if (v < minValue) {
      c.error() << name << " [" << values << "] has " << v
                << ", expected values of at least " << minValue;
      return std::nullopt;
    }
    if (v > kMaxTensorElements) {
      c.error() << name << " [" << values << "] has " << v
                << ", expected values of at most " << kMaxTensorElements;
      return std::nullopt;
    }
  }
  return SmallVector<int64_t>(values.begin(), values.end());
}

bool mlir::dlc::readPads(NodeContext &c, int64_t spatial,
                         SmallVectorImpl<int64_t> &low,
                         SmallVectorImpl<int64_t> &high) {
  low.assign(spatial, 0);
  high.assign(spatial, 0);
  if (!c.hasAttr("pads"))
    return true;
  std::vector<int64_t> pads = c.intsAttr("pads");
  if (c.failed())
    return false;
  if (static_cast<int64_t>(pads.size()) != 2 * spatial) {
    c.error() << "pads has " << pads.size() << " entries, expected "
              << 2 * spatial << " (begin and end per spatial dimension)";
    return false;
  }
  for (int64_t p : pads) {
    if (p < 0) {
      c.error() << "pads [" << pads << "] has the negative value " << p;
      return false;
    }
    if (p > kMaxTensorElements) {
      c.error() << "pads [" << pads << "] has " << p
                << ", expected values of at most " << kMaxTensorElements;
      return false;
    }
  }
  for (int64_t d = 0; d < spatial; ++d) {
    low[d] = pads[d];
    high[d] = pads[spatial + d];
  }
  return true;
}

std::optional<AutoPad> mlir::dlc::readAutoPad(NodeContext &c) {
  std::string mode = c.stringAttr("auto_pad", "NOTSET");
  if (c.failed())
    return std::nullopt;
  if (mode == "NOTSET" || mode.empty())
    return AutoPad::NotSet;
  if (mode == "VALID")
    return AutoPad::Valid;
  if (mode == "SAME_UPPER")
    return AutoPad::SameUpper;
  if (mode == "SAME_LOWER")
    return AutoPad::SameLower;
  c.error() << "auto_pad '" << mode
            << "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER";
  return std::nullopt;
}

std::optional<int64_t> mlir::dlc::windowExtent(NodeContext &c, int64_t kernel,
                                               int64_t dilation, int64_t dim) {
  std::optional<int64_t> extent =
      llvm::checkedMulAdd(kernel - 1, dilation, int64_t(1));
  if (!extent || *extent > kMaxTensorElements) {
    c.error() << "kernel size " << kernel << " with dilation " << dilation
              << " spans more than " << kMaxTensorElements
              << " elements in spatial dimension " << dim;
    return std::nullopt;
  }
  return extent;
}

bool mlir::dlc::applyAutoPad(NodeContext &c, AutoPad mode,
                             ArrayRef<int64_t> input,
                             ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> strides,
                             ArrayRef<int64_t> dilations,
                             SmallVectorImpl<int64_t> &low,
                             SmallVectorImpl<int64_t> &high) {
  if (mode == AutoPad::NotSet)
    return true;
  for (size_t d = 0; d < input.size(); ++d) {
    low[d] = high[d] = 0;
    if (mode == AutoPad::Valid)
      continue;
    std::optional<int64_t> window =
        windowExtent(c, kernel[d], dilations[d], d);
    if (!window)
      return false;
    // (out - 1) * stride is below the input size, and the input and the
    // window are at most kMaxTensorElements (2^40): no overflow.
    int64_t out = ceilDiv(input[d], strides[d]);
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + *window -
                                             input[d]);
    int64_t small = total / 2;
    low[d] = mode == AutoPad::SameUpper ? small : total - small;
    high[d] = total - low[d];
  }
  return true;
}
