//===- TensorGradients.cpp - Shape, slicing and indexing ops: gradients ---===//
//
// Vector-Jacobian products of the ops that only move elements. Each is the
// transpose of the forward copy: shape ops undo themselves, windows write
// the gradient back into zeros of the input's shape, and every read that
// fans out (broadcast, edge/reflect padding, gather with repeated indices)
// sums its gradients back onto the element it read, as torch's autograd
// does.
//
//===----------------------------------------------------------------------===//

#include "ir/GradientUtils.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::grad;

namespace {

/// `v` along dimension `dim`: `size` elements from `offset`, `stride` apart;
/// every other dimension whole.
Value sliceAlong(OpBuilder &b, Location loc, Value v, int64_t dim,
                 int64_t offset, int64_t size, int64_t stride = 1) {
  ArrayRef<int64_t> shape = typeOf(v).getShape();
  SmallVector<int64_t> offsets(shape.size(), 0), strides(shape.size(), 1);
  SmallVector<int64_t> sizes(shape);
  offsets[dim] = offset;
  sizes[dim] = size;
  strides[dim] = stride;
  return SliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// `v` with `low` and `high` zeros added to dimension `dim`.
Value zeroPadAlong(OpBuilder &b, Location loc, Value v, int64_t dim,
                   int64_t low, int64_t high) {
  if (low == 0 && high == 0)
    return v;
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> lows(rank, 0), highs(rank, 0);
  lows[dim] = low;
  highs[dim] = high;
  return PadOp::create(b, loc, v, Value(), lows, highs, PadMode::constant);
}

/// `v` summed over dimension `dim`, kept with size 1.
Value sumAlong(OpBuilder &b, Location loc, Value v, int64_t dim) {
  return ReduceSumOp::create(b, loc, v, ArrayRef<int64_t>{dim},
                             /*keep_dims=*/true);
}

} // namespace

// dx = reshape(g, shape(x)).
LogicalResult ReshapeOp::buildGradient(OpBuilder &b,
                                       ArrayRef<Value> resultGrads,
                                       MutableArrayRef<Value> operandGrads) {
  operandGrads[0] =
      reshape(b, getLoc(), resultGrads[0], typeOf(getInput()).getShape());
  return success();
}

// dx = transpose(g, inverse(permutation)).
LogicalResult TransposeOp::buildGradient(OpBuilder &b,
                                         ArrayRef<Value> resultGrads,
                                         MutableArrayRef<Value> operandGrads) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  operandGrads[0] = TransposeOp::create(b, getLoc(), resultGrads[0], inverse);
  return success();
}

// dx = g summed over the broadcast dimensions.
LogicalResult
BroadcastToOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                             MutableArrayRef<Value> operandGrads) {
  operandGrads[0] = sumToShape(b, getLoc(), resultGrads[0], typeOf(getInput()));
  return success();
}

// dx_i = the part of g along `axis` that x_i filled.
LogicalResult ConcatOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      MutableArrayRef<Value> operandGrads) {
  int64_t axis = static_cast<int64_t>(getAxis());
  int64_t at = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    int64_t size = typeOf(input).getDimSize(axis);
    operandGrads[i] = sliceAlong(b, getLoc(), resultGrads[0], axis, at, size);
    at += size;
  }
  return success();
}

// dx = zeros(shape(x)) with g written at offsets + i * strides.
LogicalResult SliceOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                     MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0];
  if (typeOf(g).getNumElements() == 0)
    return success();
  ArrayRef<int64_t> inShape = typeOf(getInput()).getShape();
  ArrayRef<int64_t> sizes = getSizes(), strides = getStrides();
  int64_t rank = sizes.size();
  // Reverse g where the slice reads backwards, so every step is positive:
  // `first` is then the lowest input coordinate read.
  SmallVector<int64_t> first(getOffsets()), step(rank);
  SmallVector<int64_t> flipOffsets(rank, 0), flipStrides(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    step[d] = sizes[d] > 1 ? std::abs(strides[d]) : 1; // one read: no step
    if (strides[d] < 0) {
      first[d] += (sizes[d] - 1) * strides[d];
      flipOffsets[d] = sizes[d] - 1;
      flipStrides[d] = -1;
    }
  }
  if (llvm::is_contained(flipStrides, -1))
    g = SliceOp::create(b, loc, g, flipOffsets, sizes, flipStrides);
  // Put step - 1 zeros between neighbours: each dimension s becomes [s, 1],
  // padded to [s, step], merged to s * step and cut to (s - 1) * step + 1.
  SmallVector<int64_t> span(sizes);
  if (llvm::any_of(step, [](int64_t s) { return s > 1; })) {
    SmallVector<int64_t> pairs, padLow(2 * rank, 0), padHigh, merged;
    for (int64_t d = 0; d < rank; ++d) {
      pairs.append({sizes[d], 1});
      padHigh.append({0, step[d] - 1});
      merged.push_back(sizes[d] * step[d]);
      span[d] = (sizes[d] - 1) * step[d] + 1;
    }
    g = reshape(b, loc, g, pairs);
    g = PadOp::create(b, loc, g, Value(), padLow, padHigh, PadMode::constant);
    g = reshape(b, loc, g, merged);
    g = SliceOp::create(b, loc, g, SmallVector<int64_t>(rank, 0), span,
                        SmallVector<int64_t>(rank, 1));
  }
  // Surround the window with zeros up to the input's shape.
  SmallVector<int64_t> high(rank);
  for (int64_t d = 0; d < rank; ++d)
    high[d] = inShape[d] - first[d] - span[d];
  operandGrads[0] =
      PadOp::create(b, loc, g, Value(), first, high, PadMode::constant);
  return success();
}

// dx = g's interior plus, for reflect/edge, each border folded back onto the
// elements it copied; dvalue = sum of g over the padded positions.
LogicalResult PadOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                   MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0];
  RankedTensorType inType = typeOf(getInput());
  ArrayRef<int64_t> low = getLow(), high = getHigh();
  int64_t rank = inType.getRank();
  if (getMode() == PadMode::constant) {
    operandGrads[0] = SliceOp::create(b, loc, g, low, inType.getShape(),
                                      SmallVector<int64_t>(rank, 1));
    if (Value value = getValue()) {
      // The padded positions are where pad(zeros, value = 1) is 1.
      Value mask = PadOp::create(b, loc, splat(b, loc, inType, 0.0),
                                 scalar(b, loc, inType.getElementType(), 1.0),
                                 low, high, PadMode::constant);
      operandGrads[1] = sumAll(b, loc, mul(b, loc, g, mask));
    }
    return success();
  }
  // Padding is separable: fold one dimension at a time.
  bool reflect = getMode() == PadMode::reflect;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = inType.getDimSize(d), l = low[d], h = high[d];
    if (l == 0 && h == 0)
      continue;
    Value sum = sliceAlong(b, loc, g, d, l, n);
    // Adds `border`, in input order, to the input elements from `at` on.
    auto addAt = [&](Value border, int64_t at) {
      int64_t size = typeOf(border).getDimSize(d);
      sum =
          add(b, loc, sum, zeroPadAlong(b, loc, border, d, at, n - at - size));
    };
    if (reflect) {
      if (l > 0) // output l - 1 - k copies input k + 1
        addAt(sliceAlong(b, loc, g, d, l - 1, l, -1), 1);
      if (h > 0) // output l + n + k copies input n - 2 - k
        addAt(sliceAlong(b, loc, g, d, l + n + h - 1, h, -1), n - 1 - h);
    } else {
      if (l > 0) // every low border element copies input 0
        addAt(sumAlong(b, loc, sliceAlong(b, loc, g, d, 0, l), d), 0);
      if (h > 0) // every high border element copies input n - 1
        addAt(sumAlong(b, loc, sliceAlong(b, loc, g, d, l + n, h), d), n - 1);
    }
    g = sum;
  }
  operandGrads[0] = g;
  return success();
}

// ddata = scatter-add of g into zeros at the indices, broadcast over the
// dimensions around `axis`.
LogicalResult GatherOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0];
  if (typeOf(g).getNumElements() == 0)
    return success();
  RankedTensorType dataType = typeOf(getData());
  int64_t axis = static_cast<int64_t>(getAxis());
  int64_t count = typeOf(getIndices()).getNumElements();
  SmallVector<int64_t> shape(dataType.getShape()), column(shape.size(), 1);
  shape[axis] = count;
  column[axis] = count;
  Value indices =
      broadcastTo(b, loc, reshape(b, loc, getIndices(), column), shape);
  operandGrads[0] = scatterAddIntoZeros(b, loc, dataType, indices,
                                        reshape(b, loc, g, shape), axis);
  return success();
}

// ddata = scatter-add of g into zeros at the indices.
LogicalResult
GatherElementsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                MutableArrayRef<Value> operandGrads) {
  operandGrads[0] =
      scatterAddIntoZeros(b, getLoc(), typeOf(getData()), getIndices(),
                          resultGrads[0], static_cast<int64_t>(getAxis()));
  return success();
}

// none: ddata = g with the written positions zeroed; add: ddata = g. Both:
// dupdates = gather_elements(g, indices). With `none` and repeated indices
// every update aimed at a position gets its gradient, though only the last
// write survives: torch's scatter backward does the same (ONNX leaves the
// forward undefined there).
LogicalResult
ScatterElementsOp::buildGradient(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 MutableArrayRef<Value> operandGrads) {
  Location loc = getLoc();
  Value g = resultGrads[0];
  int64_t axis = static_cast<int64_t>(getAxis());
  switch (getReduction()) {
  case ScatterReduction::none:
    operandGrads[0] = ScatterElementsOp::create(
        b, loc, g, getIndices(), splat(b, loc, typeOf(getUpdates()), 0.0), axis,
        ScatterReduction::none);
    break;
  case ScatterReduction::add:
    operandGrads[0] = g;
    break;
  default:
    return emitOpError() << "has no gradient rule for reduction "
                         << stringifyScatterReduction(getReduction());
  }
  operandGrads[2] = GatherElementsOp::create(b, loc, g, getIndices(), axis);
  return success();
}

bool ScatterElementsOp::hasGradientRule() {
  return getReduction() == ScatterReduction::none ||
         getReduction() == ScatterReduction::add;
}
