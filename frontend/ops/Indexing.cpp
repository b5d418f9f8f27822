//===- Indexing.cpp - ONNX gather, scatter, selection and mask ops --------===//
//
// Gathers and scatters map onto dlc.gather, dlc.gather_elements and
// dlc.scatter_elements. Index inputs that are constants are checked against
// the data here, so a bad index in the model is an import error rather than
// a runtime one; other indices are left to the op's own runtime check. The
// N-dimensional forms (GatherND, ScatterND) linearize their index tuples into
// offsets for one gather or scatter_elements on a flattened view of the
// data. Ops without a dlc counterpart are compositions: Trilu a select with
// a constant mask, OneHot a compare against a constant iota, Compress and
// ReverseSequence (whose condition and sequence lengths must be constants) a
// gather with a constant index table.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/RuleUtils.h"

using namespace mlir;
using namespace mlir::dlc;
using mlir::dlc::DType;
using mlir::dlc::Tensor;

namespace {

/// Checks the values of a constant index input against [-size, size), so a
/// bad index in the model is an import error rather than a runtime one.
/// Non-constant indices are left to the op's own runtime check.
void checkConstantIndices(NodeContext &c, size_t i, int64_t size) {
  std::optional<Tensor> indices = c.constantValue(i);
  if (!indices)
    return;
  for (int64_t k = 0; k < indices->numElements(); ++k) {
    int64_t index = indices->getInt(k);
    if (index < -size || index >= size) {
      c.error() << "index " << index << " is out of range [" << -size << ", "
                << size << ")";
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

void gatherRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1);
  if (!data || !indices)
    return;
  RankedTensorType type = typeOf(data);
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", 0), type.getRank());
  if (!axis)
    return;
  checkConstantIndices(c, 1, type.getDimSize(*axis));
  c.setOutput(0, c.build<GatherOp>({data, indices},
                                   {c.namedI64("axis", *axis)}));
}

/// The checks GatherElements and ScatterElements share: equal ranks, and
/// indices no larger than the data outside the axis. Returns the axis.
std::optional<int64_t> elementsAxis(NodeContext &c, RankedTensorType data,
                                    RankedTensorType indices) {
  if (data.getRank() != indices.getRank()) {
    c.error() << "data " << data << " and indices " << indices
              << " have different ranks";
    return std::nullopt;
  }
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", 0), data.getRank());
  if (!axis)
    return std::nullopt;
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != *axis && indices.getDimSize(d) > data.getDimSize(d)) {
      c.error() << "indices " << indices << " are larger than data " << data
                << " in dimension " << d;
      return std::nullopt;
    }
  return axis;
}

void gatherElementsRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1);
  if (!data || !indices)
    return;
  std::optional<int64_t> axis = elementsAxis(c, typeOf(data), typeOf(indices));
  if (!axis)
    return;
  checkConstantIndices(c, 1, typeOf(data).getDimSize(*axis));
  c.setOutput(0, c.build<GatherElementsOp>({data, indices},
                                           {c.namedI64("axis", *axis)}));
}

/// The scatter ops' `reduction` attribute as dlc's, or an error.
std::optional<NamedAttribute> scatterReduction(NodeContext &c) {
  std::string name = c.stringAttr("reduction", "none");
  std::optional<ScatterReduction> reduction = symbolizeScatterReduction(name);
  if (!reduction) {
    c.error() << "reduction '" << name << "' is not supported";
    return std::nullopt;
  }
  return c.named("reduction",
                 ScatterReductionAttr::get(c.context(), *reduction));
}

/// ScatterElements, and Scatter (its deprecated name, without reduction).
void scatterElementsRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1), updates = c.input(2);
  if (!data || !indices || !updates)
    return;
  RankedTensorType dataType = typeOf(data);
  std::optional<int64_t> axis = elementsAxis(c, dataType, typeOf(indices));
  if (!axis)
    return;
  if (typeOf(updates).getShape() != typeOf(indices).getShape()) {
    c.error() << "updates " << typeOf(updates) << " and indices "
              << typeOf(indices) << " have different shapes";
    return;
  }
  if (typeOf(updates).getElementType() != dataType.getElementType()) {
    c.error() << "updates " << typeOf(updates) << " and data " << dataType
              << " have different element types";
    return;
  }
  std::optional<NamedAttribute> reduction = scatterReduction(c);
  if (!reduction)
    return;
  checkConstantIndices(c, 1, dataType.getDimSize(*axis));
  c.setOutput(0, c.buildTyped<ScatterElementsOp>(
                     dataType, {data, indices, updates},
                     {c.namedI64("axis", *axis), *reduction}));
}

//===----------------------------------------------------------------------===//
// N-dimensional gather and scatter, constant selections
//===----------------------------------------------------------------------===//

/// Checks constant index tuples (the last axis of input `i`) against `dims`,
/// each entry in [-d, d) of its dimension. Non-constant tuples are not
/// checked per entry: only their linearized offset is, by the op at run
/// time.
void checkConstantTuples(NodeContext &c, size_t i, ArrayRef<int64_t> dims) {
  std::optional<Tensor> indices = c.constantValue(i);
  if (!indices || dims.empty())
    return;
  int64_t m = static_cast<int64_t>(dims.size());
  for (int64_t k = 0; k < indices->numElements(); ++k) {
    int64_t index = indices->getInt(k), size = dims[k % m];
    if (index < -size || index >= size) {
      c.error() << "index " << index << " at tuple position " << k % m
                << " is out of range [" << -size << ", " << size << ")";
      return;
    }
  }
}

/// Index tuples (the last axis of `indices`, one entry per dimension of
/// `dims`) as row-major offsets into a block of shape `dims`: negative
/// entries count from the end of their dimension, then each tuple is dotted
/// with the strides. The result is i64 of indices' shape without the last
/// axis.
Value linearizeTuples(NodeContext &c, Value indices, ArrayRef<int64_t> dims) {
  if (!indices)
    return {};
  Type i64 = IntegerType::get(c.context(), 64);
  int64_t m = static_cast<int64_t>(dims.size());
  SmallVector<int64_t> strides(m, 1);
  for (int64_t j = m - 1; j > 0; --j)
    strides[j - 1] = strides[j] * dims[j];
  Value index = c.cast(indices, i64);
  Value negative = c.compare(ComparePredicate::lt, index, c.scalar(i64, 0));
  index = c.select(negative, c.build<AddOp>({index, c.i64Constant(dims)}),
                   index);
  ArrayRef<int64_t> shape = typeOf(indices).getShape();
  if (m == 1)
    return c.reshape(index, shape.drop_back());
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  Value offsets = c.build<MulOp>({index, c.i64Constant(strides)});
  return c.reduce<ReduceSumOp>(offsets, {last}, /*keepDims=*/false);
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

/// GatherND: the tuples become offsets into data viewed as
/// [batch * block, rest...] (block: the indexed dimensions; with
/// batch_dims, batch k's tuples are shifted to block k), and one gather on
/// axis 0 gives indices.shape[:-1] + data.shape[batch_dims + m:].
void gatherNDRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1);
  if (!data || !indices)
    return;
  RankedTensorType dataType = typeOf(data), indicesType = typeOf(indices);
  int64_t r = dataType.getRank(), q = indicesType.getRank();
  if (r < 1 || q < 1) {
    c.error() << "data " << dataType << " and indices " << indicesType
              << " must have rank 1 or more";
    return;
  }
  int64_t b = c.intAttr("batch_dims", 0);
  if (b < 0 || b >= std::min(q, r)) {
    c.error() << "batch_dims " << b << " is out of range [0, "
              << std::min(q, r) << ")";
    return;
  }
  int64_t m = indicesType.getDimSize(q - 1);
  if (m < 1 || m > r - b) {
    c.error() << "indices " << indicesType << " hold tuples of " << m
              << " entries, expected 1 to " << r - b << " for data "
              << dataType;
    return;
  }
  ArrayRef<int64_t> batch = dataType.getShape().take_front(b);
  if (indicesType.getShape().take_front(b) != batch) {
    c.error() << "data " << dataType << " and indices " << indicesType
              << " differ in their first " << b
              << " dimensions (batch_dims)";
    return;
  }
  ArrayRef<int64_t> dims = dataType.getShape().slice(b, m);
  checkConstantTuples(c, 1, dims);
  if (c.failed())
    return;
  Value linear = linearizeTuples(c, indices, dims);
  int64_t batches = product(batch), block = product(dims);
  if (b > 0) {
    std::vector<int64_t> shape(q - 1, 1);
    std::copy(batch.begin(), batch.end(), shape.begin());
    Tensor offsets(DType::I64, shape);
    for (int64_t k = 0; k < batches; ++k)
      offsets.data<int64_t>()[k] = k * block;
    linear = c.build<AddOp>({linear, c.constant(offsets)});
  }
  SmallVector<int64_t> flat = {batches * block};
  llvm::append_range(flat, dataType.getShape().drop_front(b + m));
  c.setOutput(0, c.build<GatherOp>({c.reshape(data, flat), linear},
                                   {c.namedI64("axis", 0)}));
}

/// ScatterND: data viewed as [block, row] (block: the indexed dimensions),
/// the tuples as offsets broadcast along the row, updates as
/// [tuples, row], and one scatter_elements on axis 0.
void scatterNDRule(NodeContext &c) {
  Value data = c.input(0), indices = c.input(1), updates = c.input(2);
  if (!data || !indices || !updates)
    return;
  RankedTensorType dataType = typeOf(data), indicesType = typeOf(indices),
                   updatesType = typeOf(updates);
  int64_t r = dataType.getRank(), q = indicesType.getRank();
  if (r < 1 || q < 1) {
    c.error() << "data " << dataType << " and indices " << indicesType
              << " must have rank 1 or more";
    return;
  }
  int64_t m = indicesType.getDimSize(q - 1);
  if (m < 1 || m > r) {
    c.error() << "indices " << indicesType << " hold tuples of " << m
              << " entries, expected 1 to " << r << " for data " << dataType;
    return;
  }
  SmallVector<int64_t> expected(indicesType.getShape().drop_back());
  llvm::append_range(expected, dataType.getShape().drop_front(m));
  if (updatesType.getShape() != ArrayRef<int64_t>(expected)) {
    c.error() << "updates " << updatesType << " must have shape ["
              << expected << "] for data " << dataType << " and indices "
              << indicesType;
    return;
  }
  if (updatesType.getElementType() != dataType.getElementType()) {
    c.error() << "updates " << updatesType << " and data " << dataType
              << " have different element types";
    return;
  }
  std::optional<NamedAttribute> reduction = scatterReduction(c);
  if (!reduction)
    return;
  ArrayRef<int64_t> dims = dataType.getShape().take_front(m);
  checkConstantTuples(c, 1, dims);
  if (c.failed())
    return;
  int64_t tuples = product(indicesType.getShape().drop_back());
  int64_t block = product(dims);
  int64_t row = product(dataType.getShape().drop_front(m));
  Value linear = c.reshape(linearizeTuples(c, indices, dims), {tuples, 1});
  linear = c.broadcastTo(linear, {tuples, row});
  Value result = c.buildTyped<ScatterElementsOp>(
      RankedTensorType::get({block, row}, dataType.getElementType()),
      {c.reshape(data, {block, row}), linear,
       c.reshape(updates, {tuples, row})},
      {c.namedI64("axis", 0), *reduction});
  c.setOutput(0, c.reshape(result, dataType.getShape()));
}

/// Compress with a constant condition: a gather of the positions where it
/// is true (along `axis`, or of the flattened input without one).
void compressRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<Tensor> condition = c.requireConstant(1, "condition");
  if (!x || !condition)
    return;
  if (condition->rank() != 1) {
    c.error() << "condition " << condition->describe() << " must be 1-D";
    return;
  }
  RankedTensorType type = typeOf(x);
  int64_t axis = 0;
  if (c.hasAttr("axis")) {
    std::optional<int64_t> a =
        c.normalizeAxis(c.intAttr("axis", 0), type.getRank());
    if (!a)
      return;
    axis = *a;
  } else {
    x = c.reshape(x, {type.getNumElements()});
  }
  int64_t size = typeOf(x).getDimSize(axis);
  SmallVector<int64_t> kept;
  for (int64_t k = 0; k < condition->numElements(); ++k) {
    if (condition->getDouble(k) == 0)
      continue;
    if (k >= size) {
      c.error() << "condition " << condition->describe()
                << " selects position " << k << ", past the size " << size
                << " of axis " << axis;
      return;
    }
    kept.push_back(k);
  }
  c.setOutput(0, c.build<GatherOp>({x, c.i64Constant(kept)},
                                   {c.namedI64("axis", axis)}));
}

/// ReverseSequence with constant sequence_lens: with time and batch the
/// first two axes (in either order), x is viewed as [d0 * d1, rest...] and
/// one gather with a constant [d0, d1] table of source rows reverses the
/// first len[b] steps of each batch entry.
void reverseSequenceRule(NodeContext &c) {
  Value x = c.input(0);
  std::optional<std::vector<int64_t>> lens =
      c.requireConstantInts(1, "sequence_lens");
  if (!x || !lens)
    return;
  RankedTensorType type = typeOf(x);
  if (type.getRank() < 2) {
    c.error() << "input " << type << " must have rank 2 or more";
    return;
  }
  int64_t timeAxis = c.intAttr("time_axis", 0);
  int64_t batchAxis = c.intAttr("batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) ||
        (timeAxis == 1 && batchAxis == 0))) {
    c.error() << "time_axis " << timeAxis << " and batch_axis " << batchAxis
              << " must be 0 and 1 in some order";
    return;
  }
  int64_t steps = type.getDimSize(timeAxis);
  int64_t batch = type.getDimSize(batchAxis);
  if (static_cast<int64_t>(lens->size()) != batch) {
    c.error() << "sequence_lens has " << lens->size()
              << " entries for batch size " << batch;
    return;
  }
  for (int64_t len : *lens)
    if (len < 0 || len > steps) {
      c.error() << "sequence_lens [" << ArrayRef<int64_t>(*lens) << "] has "
                << len << ", outside [0, " << steps << "]";
      return;
    }
  int64_t d0 = type.getDimSize(0), d1 = type.getDimSize(1);
  Tensor rows(DType::I64, {d0, d1});
  for (int64_t i = 0; i < d0; ++i)
    for (int64_t j = 0; j < d1; ++j) {
      int64_t t = timeAxis == 0 ? i : j, b = timeAxis == 0 ? j : i;
      int64_t len = (*lens)[b];
      int64_t from = t < len ? len - 1 - t : t;
      rows.data<int64_t>()[i * d1 + j] =
          timeAxis == 0 ? from * d1 + j : i * d1 + from;
    }
  SmallVector<int64_t> flat = {d0 * d1};
  llvm::append_range(flat, type.getShape().drop_front(2));
  c.setOutput(0, c.build<GatherOp>({c.reshape(x, flat), c.constant(rows)},
                                   {c.namedI64("axis", 0)}));
}

//===----------------------------------------------------------------------===//
// Masks: Trilu, OneHot
//===----------------------------------------------------------------------===//

void triluRule(NodeContext &c) {
  Value x = c.input(0);
  int64_t k = 0;
  if (c.hasInput(1)) {
    std::optional<std::vector<int64_t>> kv = c.requireConstantInts(1, "k");
    if (!kv)
      return;
    if (kv->size() != 1) {
      c.error() << "k must be a scalar, got " << kv->size() << " values";
      return;
    }
    k = kv->front();
  }
  if (!x)
    return;
  RankedTensorType type = typeOf(x);
  if (type.getRank() < 2) {
    c.error() << "input " << type << " must have rank 2 or more";
    return;
  }
  // Element (i, j) stays when j - i >= k (upper) or j - i <= k (lower); the
  // [N, M] mask broadcasts over the batch dimensions.
  int64_t rows = type.getDimSize(type.getRank() - 2);
  int64_t cols = type.getDimSize(type.getRank() - 1);
  bool upper = c.intAttr("upper", 1) != 0;
  Tensor mask(DType::Bool, {rows, cols});
  bool *m = mask.data<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      m[i * cols + j] = upper ? j - i >= k : j - i <= k;
  Value zero = c.scalar(type.getElementType(), 0.0);
  c.setOutput(0, c.select(c.constant(mask), x, zero));
}

void oneHotRule(NodeContext &c) {
  Value indices = c.input(0), values = c.input(2);
  std::optional<Tensor> depthValue = c.requireConstant(1, "depth");
  if (!indices || !values || !depthValue)
    return;
  if (depthValue->numElements() != 1) {
    c.error() << "depth must be a scalar, got " << depthValue->describe();
    return;
  }
  double d = depthValue->getDouble(0);
  if (!(d >= 1 && d < static_cast<double>(kMaxRangeElements))) {
    c.error() << "depth " << number(d) << " is out of range [1, "
              << kMaxRangeElements << ")";
    return;
  }
  int64_t depth = static_cast<int64_t>(d);
  RankedTensorType valuesType = typeOf(values);
  if (valuesType.getNumElements() != 2) {
    c.error() << "values " << valuesType << " must hold [off, on]";
    return;
  }
  RankedTensorType type = typeOf(indices);
  int64_t rank = type.getRank() + 1;
  std::optional<int64_t> axis =
      c.normalizeAxis(c.intAttr("axis", -1), rank);
  if (!axis)
    return;

  // Negative indices count from the end; anything still outside
  // [0, depth) matches no position and gives an all-off row.
  Type i64 = IntegerType::get(c.context(), 64);
  Value index = c.cast(indices, i64);
  Value negative = c.compare(ComparePredicate::lt, index, c.scalar(i64, 0));
  index = c.select(negative, c.build<AddOp>({index, c.scalar(i64, depth)}),
                   index);
  SmallVector<int64_t> unsqueezed(type.getShape());
  unsqueezed.insert(unsqueezed.begin() + *axis, 1);
  index = c.reshape(index, unsqueezed);
  // positions: [depth, 1, ..., 1] with a 1 for each dimension after axis.
  std::vector<int64_t> positionsShape(rank - *axis, 1);
  positionsShape[0] = depth;
  Tensor positions(DType::I64, positionsShape);
  for (int64_t i = 0; i < depth; ++i)
    positions.data<int64_t>()[i] = i;
  Value hot =
      c.compare(ComparePredicate::eq, index, c.constant(positions));

  values = c.reshape(values, {2});
  Value off = c.reshape(c.slice(values, {0}, {1}, {1}), {});
  Value on = c.reshape(c.slice(values, {1}, {1}, {1}), {});
  c.setOutput(0, c.select(hot, on, off));
}

} // namespace

void mlir::dlc::addIndexingRules(OpRuleTable &t) {
  // Gather and scatter.
  t["Gather"] = {gatherRule, 1};
  t["GatherElements"] = {gatherElementsRule, 11};
  t["ScatterElements"] = {scatterElementsRule, 11};
  t["Scatter"] = {scatterElementsRule, 9};

  // N-dimensional gather and scatter (GatherND-12 adds batch_dims), and
  // selections with constant conditions or lengths.
  t["GatherND"] = {gatherNDRule, 11};
  t["ScatterND"] = {scatterNDRule, 11};
  t["Compress"] = {compressRule, 9};
  t["ReverseSequence"] = {reverseSequenceRule, 10};

  // Masks.
  t["Trilu"] = {triluRule, 14};
  t["OneHot"] = {oneHotRule, 9};
}
