//===- NN.cpp - ONNX matrix products, convolutions and pooling ------------===//
//
// MatMul, Gemm and Einsum become dlc.matmul, with the transposes and
// reshapes that put the contracted dimensions last on the left and first on
// the right. Conv is dlc.conv once auto_pad is resolved into explicit
// padding. ConvTranspose is also dlc.conv: the input dilated by the strides,
// correlated with the spatially flipped filter whose channel axes are
// swapped within each group. Pools are dlc.max_pool and dlc.sum_pool; an
// average divides the sum by a window-count tensor computed here, since the
// count depends only on shapes, padding and count_include_pad.
//
//===----------------------------------------------------------------------===//

#include "frontend/NodeContext.h"
#include "ir/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::dlc;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

Type elemType(Value v) { return typeOf(v).getElementType(); }

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

//===----------------------------------------------------------------------===//
// MatMul, Gemm, Einsum
//===----------------------------------------------------------------------===//

/// numpy.matmul: a 1-D left operand is the row [1, K], a 1-D right operand
/// the column [K, 1], and the added dimension is dropped from the result.
Value numpyMatmul(NodeContext &c, Value a, Value b) {
  if (!a || !b)
    return {};
  ArrayRef<int64_t> aShape = typeOf(a).getShape(), bShape = typeOf(b).getShape();
  if (aShape.empty() || bShape.empty()) {
    c.error() << "operands must have rank 1 or more, got ranks "
              << aShape.size() << " and " << bShape.size();
    return {};
  }
  bool aVector = aShape.size() == 1, bVector = bShape.size() == 1;
  if (aVector)
    a = c.reshape(a, {1, aShape[0]});
  if (bVector)
    b = c.reshape(b, {bShape[0], 1});
  Value y = c.build<MatmulOp>({a, b});
  if (!y || (!aVector && !bVector))
    return y;
  ArrayRef<int64_t> shape = typeOf(y).getShape();
  SmallVector<int64_t> result(shape.drop_back(2));
  if (!aVector)
    result.push_back(shape[shape.size() - 2]);
  if (!bVector)
    result.push_back(shape.back());
  return c.reshape(y, result);
}

void gemmRule(NodeContext &c) {
  Value a = c.input(0), b = c.input(1);
  if (!a || !b)
    return;
  if (typeOf(a).getRank() != 2 || typeOf(b).getRank() != 2) {
    c.error() << "A and B must be matrices, got ranks " << typeOf(a).getRank()
              << " and " << typeOf(b).getRank();
    return;
  }
  if (c.intAttr("transA", 0))
    a = c.transpose(a, {1, 0});
  if (c.intAttr("transB", 0))
    b = c.transpose(b, {1, 0});
  Value y = c.build<MatmulOp>({a, b});
  if (!y)
    return;
  Type type = elemType(y);
  double alpha = c.floatAttr("alpha", 1.0f), beta = c.floatAttr("beta", 1.0f);
  if (alpha != 1.0)
    y = c.build<MulOp>({y, c.scalar(type, alpha)});
  if (c.hasInput(2)) {
    Value bias = c.input(2);
    ArrayRef<int64_t> biasShape = typeOf(bias).getShape();
    ArrayRef<int64_t> shape = typeOf(y).getShape();
    // Gemm-1 and -6 broadcast C only with broadcast=1; later versions always
    // do, but only towards [M, N] ("unidirectional").
    bool broadcast = c.version() >= 7 || c.intAttr("broadcast", 0) != 0;
    if (broadcast ? !isBroadcastableTo(biasShape, shape) : biasShape != shape) {
      c.error() << "C of shape [" << biasShape << "] does not "
                << (broadcast ? "broadcast to" : "match") << " the result shape ["
                << shape << "]";
      return;
    }
    if (beta != 1.0)
      bias = c.build<MulOp>({bias, c.scalar(type, beta)});
    y = c.build<AddOp>({y, bias});
  }
  c.setOutput(0, y);
}

/// An Einsum label: a letter's character code, or kEllipsis + i for the
/// i-th (right-aligned) dimension the ellipsis stands for.
using Label = int;
using Labels = SmallVector<Label>;
constexpr Label kEllipsis = 256;

std::string labelName(Label l) {
  return l < kEllipsis ? std::string(1, static_cast<char>(l))
                       : "...[" + std::to_string(l - kEllipsis) + "]";
}

struct EinsumOperand {
  Value value;
  Labels labels;
};

/// Parses one term ("ij", "b...k") of an operand of rank `rank` (-1 for the
/// output), expanding the ellipsis to `ellipsisRank` labels (the term's own
/// count for inputs, the widest input's for the output).
std::optional<Labels> parseEinsumTerm(NodeContext &c, StringRef term,
                                      int64_t rank, int64_t ellipsisRank,
                                      StringRef what) {
  Labels letters;
  int64_t ellipsisAt = -1;
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (ch == '.') {
      if (!term.substr(i).starts_with("...") || ellipsisAt >= 0) {
        c.error() << what << " '" << term << "' has a malformed ellipsis";
        return std::nullopt;
      }
      ellipsisAt = letters.size();
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(ch)) {
      c.error() << what << " '" << term << "' has the character '" << ch
                << "', expected letters and '...'";
      return std::nullopt;
    }
    letters.push_back(ch);
  }
  int64_t count = ellipsisRank;
  if (rank >= 0) {
    count = rank - static_cast<int64_t>(letters.size());
    if (count < 0 || (ellipsisAt < 0 && count != 0)) {
      c.error() << what << " '" << term << "' has " << letters.size()
                << " labels for an operand of rank " << rank;
      return std::nullopt;
    }
  }
  if (ellipsisAt < 0)
    return letters;
  Labels labels(letters.begin(), letters.begin() + ellipsisAt);
  for (int64_t i = 0; i < count; ++i)
    labels.push_back(kEllipsis + (ellipsisRank - count) + i);
  labels.append(letters.begin() + ellipsisAt, letters.end());
  return labels;
}

/// Removes a repeated label (a diagonal, "ii->i") by masking with the
/// identity and summing one of the two dimensions away.
EinsumOperand takeDiagonals(NodeContext &c, EinsumOperand op) {
  for (size_t q = 0; q < op.labels.size() && op.value;) {
    auto first = llvm::find(op.labels, op.labels[q]);
    size_t p = first - op.labels.begin();
    if (p == q) {
      ++q;
      continue;
    }
    ArrayRef<int64_t> shape = typeOf(op.value).getShape();
    int64_t n = shape[p];
    std::vector<int64_t> maskShape(shape.size(), 1);
    maskShape[p] = maskShape[q] = n;
    ::dlc::Tensor eye(::dlc::DType::F64, maskShape);
    for (int64_t i = 0; i < n; ++i)
      eye.data<double>()[i * n + i] = 1.0;
    Value mask = c.cast(c.constant(eye), elemType(op.value));
    op.value = c.reduce<ReduceSumOp>(c.build<MulOp>({op.value, mask}),
                                     {static_cast<int64_t>(q)}, false);
    op.labels.erase(op.labels.begin() + q);
  }
  return op;
}

/// Sums away the labels of `op` that are not in `keep`.
EinsumOperand sumLabelsNotIn(NodeContext &c, EinsumOperand op,
                             ArrayRef<Label> keep) {
  SmallVector<int64_t> axes;
  Labels rest;
  for (auto [i, l] : llvm::enumerate(op.labels)) {
    if (llvm::is_contained(keep, l))
      rest.push_back(l);
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return op;
  return {c.reduce<ReduceSumOp>(op.value, axes, false), rest};
}

/// Contracts two operands over their shared labels not in `keep`, as one
/// batched matmul: a to [batch..., M, K], b to [batch..., K, N]. The result
/// has the labels batch, a's free labels, b's free labels.
EinsumOperand contractPair(NodeContext &c, EinsumOperand a, EinsumOperand b,
                           ArrayRef<Label> keep) {
  Labels keepA(keep), keepB(keep);
  keepA.append(b.labels);
  keepB.append(a.labels);
  a = sumLabelsNotIn(c, a, keepA);
  b = sumLabelsNotIn(c, b, keepB);
  if (!a.value || !b.value)
    return {};
  Labels batch, contracted, aFree, bFree;
  for (Label l : a.labels) {
    bool shared = llvm::is_contained(b.labels, l);
    bool kept = llvm::is_contained(keep, l);
    if (shared)
      (kept ? batch : contracted).push_back(l);
    else
      aFree.push_back(l);
  }
  for (Label l : b.labels)
    if (!llvm::is_contained(a.labels, l))
      bFree.push_back(l);

  auto arrange = [&](EinsumOperand &op, ArrayRef<Label> order,
                     ArrayRef<Label> rows, ArrayRef<Label> cols) {
    SmallVector<int64_t> perm, shape;
    ArrayRef<int64_t> dims = typeOf(op.value).getShape();
    int64_t rowSize = 1, colSize = 1;
    for (Label l : order) {
      int64_t i = llvm::find(op.labels, l) - op.labels.begin();
      perm.push_back(i);
      if (llvm::is_contained(rows, l))
        rowSize *= dims[i];
      else if (llvm::is_contained(cols, l))
        colSize *= dims[i];
      else
        shape.push_back(dims[i]);
    }
    shape.push_back(rowSize);
    shape.push_back(colSize);
    return c.reshape(c.transpose(op.value, perm), shape);
  };
  Labels aOrder(batch), bOrder(batch);
  aOrder.append(aFree);
  aOrder.append(contracted);
  bOrder.append(contracted);
  bOrder.append(bFree);
  Value lhs = arrange(a, aOrder, aFree, contracted);
  Value rhs = arrange(b, bOrder, contracted, bFree);
  Value product = c.build<MatmulOp>({lhs, rhs});
  if (!product)
    return {};
  ArrayRef<int64_t> productShape = typeOf(product).getShape();
  SmallVector<int64_t> shape(productShape.drop_back(2));
  auto dimOf = [](const EinsumOperand &op, Label l) {
    return typeOf(op.value).getDimSize(llvm::find(op.labels, l) -
                                       op.labels.begin());
  };
  for (Label l : aFree)
    shape.push_back(dimOf(a, l));
  for (Label l : bFree)
    shape.push_back(dimOf(b, l));
  Labels labels(batch);
  labels.append(aFree);
  labels.append(bFree);
  return {c.reshape(product, shape), labels};
}

void einsumRule(NodeContext &c) {
  std::string equation = c.stringAttr("equation");
  llvm::erase_if(equation, [](char ch) { return ch == ' '; });
  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != c.numInputs()) {
    c.error() << "equation '" << equation << "' has " << terms.size()
              << " input terms for " << c.numInputs() << " inputs";
    return;
  }

  // Labels per operand, the widest ellipsis and the size of each label.
  SmallVector<EinsumOperand> operands;
  int64_t ellipsisRank = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    Value v = c.input(i);
    if (!v)
      return;
    int64_t letters =
        llvm::count_if(term, [](char ch) { return llvm::isAlpha(ch); });
    if (term.contains("..."))
      ellipsisRank = std::max(ellipsisRank, typeOf(v).getRank() - letters);
    operands.push_back({v, {}});
  }
  std::map<Label, int64_t> sizes;
  std::map<Label, int> uses;
  for (auto [i, term] : llvm::enumerate(terms)) {
    std::optional<Labels> labels =
        parseEinsumTerm(c, term, typeOf(operands[i].value).getRank(),
                        ellipsisRank, "term");
    if (!labels)
      return;
    operands[i].labels = *labels;
    for (auto [d, l] : llvm::enumerate(*labels)) {
      int64_t size = typeOf(operands[i].value).getDimSize(d);
      auto [it, inserted] = sizes.insert({l, size});
      ++uses[l];
      if (inserted || it->second == size)
        continue;
      // Ellipsis dimensions broadcast; letters must agree.
      if (l >= kEllipsis && (it->second == 1 || size == 1)) {
        it->second = std::max(it->second, size);
        continue;
      }
      c.error() << "label '" << labelName(l) << "' has sizes " << it->second
                << " and " << size;
      return;
    }
  }

  Labels output;
  if (explicitOutput) {
    std::optional<Labels> labels =
        parseEinsumTerm(c, rhs, -1, ellipsisRank, "output term");
    if (!labels)
      return;
    output = *labels;
    for (auto [i, l] : llvm::enumerate(output)) {
      if (!sizes.count(l)) {
        c.error() << "output label '" << labelName(l)
                  << "' is not in any input term";
        return;
      }
      if (llvm::is_contained(ArrayRef<Label>(output).take_front(i), l)) {
        c.error() << "output label '" << labelName(l) << "' is repeated";
        return;
      }
    }
  } else {
    // NumPy's implicit output: the ellipsis, then the letters used once in
    // ASCII order.
    for (int64_t i = 0; i < ellipsisRank; ++i)
      output.push_back(kEllipsis + i);
    for (auto [l, n] : uses)
      if (l < kEllipsis && n == 1)
        output.push_back(l);
  }

  // Diagonals first, then a left-to-right chain of pairwise contractions,
  // each keeping the labels that the output or a later operand needs.
  for (EinsumOperand &op : operands)
    op = takeDiagonals(c, op);
  auto laterLabels = [&](size_t from) {
    Labels keep(output);
    for (size_t j = from; j < operands.size(); ++j)
      keep.append(operands[j].labels);
    return keep;
  };
  EinsumOperand acc = sumLabelsNotIn(c, operands[0], laterLabels(1));
  for (size_t i = 1; i < operands.size() && acc.value; ++i)
    acc = contractPair(c, acc, operands[i], laterLabels(i + 1));
  if (!acc.value)
    return;

  SmallVector<int64_t> perm;
  for (Label l : output)
    perm.push_back(llvm::find(acc.labels, l) - acc.labels.begin());
  Value y = c.transpose(acc.value, perm);
  // A broadcast ellipsis dimension that only one operand has at size 1 is
  // still 1 here; NumPy's result has the broadcast size.
  SmallVector<int64_t> shape;
  for (Label l : output)
    shape.push_back(sizes[l]);
  if (y && typeOf(y).getShape() != ArrayRef<int64_t>(shape))
    y = c.broadcastTo(y, shape);
  c.setOutput(0, y);
}

//===----------------------------------------------------------------------===//
// Window attributes shared by Conv, ConvTranspose and the pools
//===----------------------------------------------------------------------===//

/// Integer attribute `name` with one entry per spatial dimension, each at
/// least `minValue`; `defaultValue` repeated when absent.
std::optional<SmallVector<int64_t>> spatialAttr(NodeContext &c, StringRef name,
                                                int64_t spatial,
                                                int64_t defaultValue,
                                                int64_t minValue) {
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

/// The `pads` attribute ([x1_begin, x2_begin, ..., x1_end, x2_end, ...]) split
/// into begins and ends.
bool readPads(NodeContext &c, int64_t spatial, SmallVectorImpl<int64_t> &low,
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

enum class AutoPad { NotSet, Valid, SameUpper, SameLower };

std::optional<AutoPad> readAutoPad(NodeContext &c) {
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

/// Rewrites the padding of a convolution or pool for auto_pad: VALID is no
/// padding; SAME pads so that the output has ceil(input / stride) elements,
/// the odd element at the end (SAME_UPPER) or the beginning (SAME_LOWER).
void applyAutoPad(AutoPad mode, ArrayRef<int64_t> input,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, SmallVectorImpl<int64_t> &low,
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

//===----------------------------------------------------------------------===//
// Conv and ConvTranspose
//===----------------------------------------------------------------------===//

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
  applyAutoPad(*autoPad, input, kernel, *strides, *dilations, low, high);
  int64_t group = c.intAttr("group", 1);
  Value y = c.build<ConvOp>(
      {x, w}, {c.namedI64s("stride", *strides), c.namedI64s("pad_low", low),
               c.namedI64s("pad_high", high),
               c.namedI64s("dilation", *dilations),
               c.namedI64s("input_dilation", SmallVector<int64_t>(spatial, 1)),
               c.namedI64("groups", group)});
  if (c.hasInput(2))
    y = addChannelBias(c, y, c.input(2));
  c.setOutput(0, y);
}

/// ConvTranspose as a convolution: each input element scatters the kernel
/// into the output at stride steps, which is the correlation of the
/// stride-dilated input, padded by dilation * (k - 1) on both sides less
/// the ONNX pads, with the flipped kernel. The weight [Cin, Cout/g, k...]
/// becomes [Cout, Cin/g, k...] by swapping the channel axes in each group.
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
  // the output extends past the last input's reach, at the end).
  SmallVector<int64_t> full(spatial);
  for (int64_t d = 0; d < spatial; ++d)
    full[d] = (*strides)[d] * (input[d] - 1) + (*outputPadding)[d] +
              (kernel[d] - 1) * (*dilations)[d] + 1;
  std::optional<SmallVector<int64_t>> target;
  if (c.hasAttr("output_shape")) {
    std::vector<int64_t> shape = c.intsAttr("output_shape");
    // Some exporters give the full [N, C, spatial...] shape.
    if (static_cast<int64_t>(shape.size()) == spatial + 2)
      shape.erase(shape.begin(), shape.begin() + 2);
    if (static_cast<int64_t>(shape.size()) != spatial) {
      c.error() << "output_shape has " << shape.size() << " entries for "
                << spatial << " spatial dimensions";
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

  SmallVector<int64_t> convLow(spatial), convHigh(spatial), cropLow(spatial),
      outSize(spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    outSize[d] = full[d] - low[d] - high[d];
    if (outSize[d] <= 0) {
      c.error() << "output size " << outSize[d] << " of spatial dimension "
                << d << " is not positive";
      return;
    }
    int64_t reach = (*dilations)[d] * (kernel[d] - 1);
    int64_t lo = reach - low[d];
    int64_t hi = reach - high[d] + (*outputPadding)[d];
    // Padding beyond the kernel's reach crops the output instead.
    convLow[d] = std::max<int64_t>(lo, 0);
    convHigh[d] = std::max<int64_t>(hi, 0);
    cropLow[d] = convLow[d] - lo;
  }

  int64_t outPerGroup = wType.getDimSize(1), inPerGroup = inChannels / group;
  SmallVector<int64_t> grouped = {group, inPerGroup, outPerGroup};
  grouped.append(kernel.begin(), kernel.end());
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t d = 0; d < spatial; ++d)
    perm.push_back(3 + d);
  SmallVector<int64_t> filterShape = {group * outPerGroup, inPerGroup};
  filterShape.append(kernel.begin(), kernel.end());
  Value filter = c.reshape(c.transpose(c.reshape(w, grouped), perm),
                           filterShape);
  SmallVector<int64_t> offsets(spatial + 2, 0), steps(spatial + 2, 1);
  for (int64_t d = 0; d < spatial; ++d) {
    offsets[d + 2] = kernel[d] - 1;
    steps[d + 2] = -1;
  }
  filter = c.slice(filter, offsets, filterShape, steps);

  Value y = c.build<ConvOp>(
      {x, filter},
      {c.namedI64s("stride", SmallVector<int64_t>(spatial, 1)),
       c.namedI64s("pad_low", convLow), c.namedI64s("pad_high", convHigh),
       c.namedI64s("dilation", *dilations),
       c.namedI64s("input_dilation", *strides), c.namedI64("groups", group)});
  if (y && typeOf(y).getShape().drop_front(2) != ArrayRef<int64_t>(outSize)) {
    SmallVector<int64_t> start = {0, 0}, sizes(typeOf(y).getShape().take_front(2));
    start.append(cropLow);
    sizes.append(outSize);
    y = c.slice(y, start, sizes, SmallVector<int64_t>(spatial + 2, 1));
  }
  if (c.hasInput(2))
    y = addChannelBias(c, y, c.input(2));
  c.setOutput(0, y);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolWindow {
  SmallVector<int64_t> kernel, strides, dilations;
  /// The padding the ONNX node asks for.
  SmallVector<int64_t> padLow, padHigh;
  /// padHigh plus what ceil_mode adds so the last window fits.
  SmallVector<int64_t> poolHigh;
  SmallVector<int64_t> outSize;
};

/// Reads and resolves the window attributes of a pool over x. Output sizes
/// follow the ONNX formula; with ceil_mode a last window that would start
/// in the end padding is dropped (as PyTorch and later ONNX specs do), and
/// the end padding grows so the remaining last window fits.
std::optional<PoolWindow> poolWindow(NodeContext &c, Value x) {
  if (!x)
    return std::nullopt;
  int64_t rank = typeOf(x).getRank();
  if (rank < 3) {
    c.error() << "input must have rank 3 or more (N, C, spatial...), got "
              << typeOf(x);
    return std::nullopt;
  }
  int64_t spatial = rank - 2;
  ArrayRef<int64_t> input = typeOf(x).getShape().drop_front(2);
  if (!c.hasAttr("kernel_shape")) {
    c.error() << "kernel_shape is required";
    return std::nullopt;
  }
  PoolWindow w;
  auto kernel = spatialAttr(c, "kernel_shape", spatial, 1, 1);
  auto strides = spatialAttr(c, "strides", spatial, 1, 1);
  auto dilations = spatialAttr(c, "dilations", spatial, 1, 1);
  std::optional<AutoPad> autoPad = readAutoPad(c);
  if (!kernel || !strides || !dilations || !autoPad ||
      !readPads(c, spatial, w.padLow, w.padHigh))
    return std::nullopt;
  w.kernel = *kernel;
  w.strides = *strides;
  w.dilations = *dilations;
  applyAutoPad(*autoPad, input, w.kernel, w.strides, w.dilations, w.padLow,
               w.padHigh);
  bool ceilMode = c.intAttr("ceil_mode", 0) != 0 &&
                  (*autoPad == AutoPad::NotSet || *autoPad == AutoPad::Valid);
  w.poolHigh = w.padHigh;
  for (int64_t d = 0; d < spatial; ++d) {
    int64_t window = (w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t span = input[d] + w.padLow[d] + w.padHigh[d] - window;
    if (span < 0) {
      c.error() << "kernel extent " << window << " is larger than the padded "
                << "input size " << span + window << " in spatial dimension "
                << d;
      return std::nullopt;
    }
    int64_t out = (ceilMode ? ceilDiv(span, w.strides[d]) : span / w.strides[d]) + 1;
    if (ceilMode && (out - 1) * w.strides[d] >= input[d] + w.padLow[d])
      --out;
    w.outSize.push_back(out);
    w.poolHigh[d] += std::max<int64_t>(
        0, (out - 1) * w.strides[d] + window - (input[d] + w.padLow[d] +
                                                w.padHigh[d]));
  }
  return w;
}

template <typename PoolOpT>
Value buildPool(NodeContext &c, Value x, const PoolWindow &w) {
  return c.build<PoolOpT>(
      {x}, {c.namedI64s("window", w.kernel), c.namedI64s("stride", w.strides),
            c.namedI64s("pad_low", w.padLow),
            c.namedI64s("pad_high", w.poolHigh),
            c.namedI64s("dilation", w.dilations)});
}

void maxPoolRule(NodeContext &c) {
  if (c.wantsOutput(1)) {
    c.error() << "Indices output is not supported";
    return;
  }
  Value x = c.input(0);
  std::optional<PoolWindow> w = poolWindow(c, x);
  if (!w)
    return;
  // storage_order only changes the Indices output.
  c.setOutput(0, buildPool<MaxPoolOp>(c, x, *w));
}

/// The number of elements each window of `w` averages over, as a constant
/// [1, 1, out...] (or a scalar when every window has the same count).
/// Windows count input elements, and with count_include_pad also the
/// node's padding, but never the extra end padding of ceil_mode.
Value windowCounts(NodeContext &c, Value x, const PoolWindow &w,
                   bool includePad) {
  ArrayRef<int64_t> input = typeOf(x).getShape().drop_front(2);
  size_t spatial = input.size();
  // The count is a product of per-dimension counts.
  SmallVector<SmallVector<int64_t>> perDim(spatial);
  for (size_t d = 0; d < spatial; ++d) {
    int64_t begin = includePad ? -w.padLow[d] : 0;
    int64_t end = includePad ? input[d] + w.padHigh[d] : input[d];
    for (int64_t y = 0; y < w.outSize[d]; ++y) {
      int64_t n = 0;
      for (int64_t k = 0; k < w.kernel[d]; ++k) {
        int64_t p = y * w.strides[d] + k * w.dilations[d] - w.padLow[d];
        n += p >= begin && p < end;
      }
      perDim[d].push_back(n);
    }
  }
  std::vector<int64_t> shape = {1, 1};
  shape.insert(shape.end(), w.outSize.begin(), w.outSize.end());
  ::dlc::Tensor counts(::dlc::DType::F64, shape);
  double *data = counts.data<double>();
  bool uniform = true;
  for (int64_t i = 0; i < counts.numElements(); ++i) {
    double n = 1;
    int64_t rest = i;
    for (size_t d = spatial; d-- > 0;) {
      n *= perDim[d][rest % w.outSize[d]];
      rest /= w.outSize[d];
    }
    data[i] = n;
    uniform = uniform && n == data[0];
  }
  Type type = elemType(x);
  if (uniform)
    return c.scalar(type, data[0]);
  return c.cast(c.constant(counts), type);
}

void averagePoolRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<PoolWindow> w = poolWindow(c, x);
  if (!w)
    return;
  bool includePad = c.intAttr("count_include_pad", 0) != 0;
  Value sum = buildPool<SumPoolOp>(c, x, *w);
  c.setOutput(0, c.build<DivOp>({sum, windowCounts(c, x, *w, includePad)}));
}

/// |x|^p, for LpPool's and GlobalLpPool's sums.
Value absPow(NodeContext &c, Value x, double p) {
  Value a = c.unary<AbsOp>(x);
  if (p == 1.0)
    return a;
  if (p == 2.0)
    return c.build<MulOp>({a, a});
  return c.build<PowOp>({a, c.scalar(elemType(x), p)});
}

/// s^(1/p).
Value root(NodeContext &c, Value s, double p) {
  if (!s || p == 1.0)
    return s;
  if (p == 2.0)
    return c.unary<SqrtOp>(s);
  return c.build<PowOp>({s, c.scalar(elemType(s), 1.0 / p)});
}

std::optional<double> lpNorm(NodeContext &c) {
  int64_t p = c.intAttr("p", 2);
  if (p <= 0) {
    c.error() << "p " << p << " must be positive";
    return std::nullopt;
  }
  return static_cast<double>(p);
}

void lpPoolRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<double> p = lpNorm(c);
  std::optional<PoolWindow> w = poolWindow(c, x);
  if (!p || !w)
    return;
  c.setOutput(0, root(c, buildPool<SumPoolOp>(c, absPow(c, x, *p), *w), *p));
}

/// The spatial axes [2, rank) of a global pool's input.
std::optional<SmallVector<int64_t>> spatialAxes(NodeContext &c, Value x) {
  if (!x)
    return std::nullopt;
  int64_t rank = typeOf(x).getRank();
  if (rank < 2) {
    c.error() << "input must have rank 2 or more (N, C, spatial...), got "
              << typeOf(x);
    return std::nullopt;
  }
  return llvm::to_vector(llvm::seq<int64_t>(2, rank));
}

void globalAveragePoolRule(NodeContext &c) {
  Value x = c.input(0);
  if (auto axes = spatialAxes(c, x))
    c.setOutput(0, c.mean(x, *axes, true));
}

void globalMaxPoolRule(NodeContext &c) {
  Value x = c.input(0);
  if (auto axes = spatialAxes(c, x))
    c.setOutput(0, c.reduce<ReduceMaxOp>(x, *axes, true));
}

void globalLpPoolRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<double> p = lpNorm(c);
  std::optional<SmallVector<int64_t>> axes = spatialAxes(c, x);
  if (!p || !axes)
    return;
  Value sum = c.reduce<ReduceSumOp>(absPow(c, x, *p), *axes, true);
  c.setOutput(0, root(c, sum, *p));
}

} // namespace

void mlir::dlc::addNNRules(OpRuleTable &t) {
  t["MatMul"] = {[](NodeContext &c) {
                   c.setOutput(0, numpyMatmul(c, c.input(0), c.input(1)));
                 }, 1};
  t["Gemm"] = {gemmRule, 1};
  t["Einsum"] = {einsumRule, 12};
  t["Conv"] = {convRule, 1};
  t["ConvTranspose"] = {convTransposeRule, 1};
  t["MaxPool"] = {maxPoolRule, 1};
  t["AveragePool"] = {averagePoolRule, 1};
  t["LpPool"] = {lpPoolRule, 2};
  t["GlobalAveragePool"] = {globalAveragePoolRule, 1};
  t["GlobalMaxPool"] = {globalMaxPoolRule, 1};
  t["GlobalLpPool"] = {globalLpPoolRule, 2};
}
