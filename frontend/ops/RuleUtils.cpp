//===- RuleUtils.cpp - Helpers shared by the op rule files ----------------===//
//
// The out-of-line helpers of RuleUtils.h; each is documented there.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

#include <limits>
#include <sstream>

using namespace mlir;
using namespace mlir::dlc;

std::string mlir::dlc::number(double value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

bool mlir::dlc::checkResultShape(NodeContext &c, ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > std::numeric_limits<int64_t>::max() / d)) {
      c.error() << "result shape [" << shape << "] is too large";
      return false;
    }
    count *= d;
  }
  return true;
}

std::optional<SmallVector<int64_t>>
mlir::dlc::spatialAttr(NodeContext &c, StringRef name, int64_t spatial,
                       int64_t defaultValue, int64_t minValue) {
  if (!c.hasAttr(name))
    return SmallVector<int64_t>(spatial, defaultValue);
  std::vector<int64_t> values = c.intsAttr(name);
  if (static_cast<int64_t>(values.size()) != spatial) {
    c.error() << name << " has " << values.size() << " entries for "
              << spatial << " spatial dimensions";
    return std::nullopt;
  }
  for (int64_t v : values)
    if (v < minValue) {
      c.error() << name << " [" << values << "] has " << v
                << ", expected values of at least " << minValue;
      return std::nullopt;
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
  if (static_cast<int64_t>(pads.size()) != 2 * spatial) {
    c.error() << "pads has " << pads.size() << " entries, expected "
              << 2 * spatial << " (begin and end per spatial dimension)";
    return false;
  }
  for (int64_t p : pads)
    if (p < 0) {
      c.error() << "pads [" << pads << "] has the negative value " << p;
      return false;
    }
  for (int64_t d = 0; d < spatial; ++d) {
    low[d] = pads[d];
    high[d] = pads[spatial + d];
  }
  return true;
}

std::optional<AutoPad> mlir::dlc::readAutoPad(NodeContext &c) {
  std::string mode = c.stringAttr("auto_pad", "NOTSET");
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

void mlir::dlc::applyAutoPad(AutoPad mode, ArrayRef<int64_t> input,
                             ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> strides,
                             ArrayRef<int64_t> dilations,
                             SmallVectorImpl<int64_t> &low,
                             SmallVectorImpl<int64_t> &high) {
  if (mode == AutoPad::NotSet)
    return;
  for (size_t d = 0; d < input.size(); ++d) {
    low[d] = high[d] = 0;
    if (mode == AutoPad::Valid)
      continue;
    int64_t window = (kernel[d] - 1) * dilations[d] + 1;
    int64_t out = ceilDiv(input[d], strides[d]);
    int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + window -
                                             input[d]);
    int64_t small = total / 2;
    low[d] = mode == AutoPad::SameUpper ? small : total - small;
    high[d] = total - low[d];
  }
}
