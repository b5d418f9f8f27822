//===- Linear.cpp - ONNX matrix products: MatMul, Gemm, Einsum ------------===//
//
// MatMul, Gemm and Einsum become dlc.matmul, with the transposes and
// reshapes that put the contracted dimensions last on the left and first on
// the right. Einsum first removes repeated labels (diagonals) with an
// identity mask, then contracts its operands left to right, each pair as one
// batched matmul, summing away labels that nothing later needs.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"
#include "ir/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::dlc;

namespace {

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
  // Every attribute first: a malformed one stops the rule before any build.
  bool transA = c.intAttr("transA", 0) != 0;
  bool transB = c.intAttr("transB", 0) != 0;
  double alpha = c.floatAttr("alpha", 1.0f), beta = c.floatAttr("beta", 1.0f);
  // Gemm-1 and -6 broadcast C only with broadcast=1; later versions always
  // do, but only towards [M, N] ("unidirectional").
  bool broadcast = c.version() >= 7 || c.intAttr("broadcast", 0) != 0;
  if (c.failed())
    return;
  if (transA)
    a = c.transpose(a, {1, 0});
  if (transB)
    b = c.transpose(b, {1, 0});
  Value y = c.build<MatmulOp>({a, b});
  if (!y)
    return;
  Type type = elemType(y);
  if (alpha != 1.0)
    y = c.build<MulOp>({y, c.scalar(type, alpha)});
  if (y && c.hasInput(2)) {
    Value bias = c.input(2);
    ArrayRef<int64_t> biasShape = typeOf(bias).getShape();
    ArrayRef<int64_t> shape = typeOf(y).getShape();
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
    Tensor eye(DType::F64, maskShape);
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

} // namespace

void mlir::dlc::addLinearRules(OpRuleTable &t) {
  t["MatMul"] = {[](NodeContext &c) {
                   c.setOutput(0, numpyMatmul(c, c.input(0), c.input(1)));
                 }, 1};
  t["Gemm"] = {gemmRule, 1};
  t["Einsum"] = {einsumRule, 12};
}
