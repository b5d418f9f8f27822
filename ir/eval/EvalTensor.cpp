//===- EvalTensor.cpp - Data movement rules of the reference evaluator ----===//
//
// Reshape, transpose, broadcast_to, concat, slice, pad, gather,
// gather_elements and scatter_elements. All but scatter's reductions only
// move elements, so they copy bits through an unsigned integer as wide as
// the element (visitElementSize) and never convert a value. Strided views
// (transpose, broadcast_to, slice) are one routine, copyStrided: each reads
// the input at `base + sum index[d] * strides[d]`.
//
// Index errors are data errors, reported with the offending index, its
// position in the index tensor and the valid range. Scatter applies updates
// in row-major order of `updates`: with `none` the last write to a position
// wins; `add` and `mul` combine in the compute domain and round to the
// storage type after each update.
//
//===----------------------------------------------------------------------===//

#include "ir/eval/EvalSupport.h"

using namespace mlir;
using namespace mlir::dlc;
using namespace mlir::dlc::eval;

namespace {

/// out[i] = in[base + sum_d index_i[d] * strides[d]] for every index of
/// `out` in row-major order.
void copyStrided(Tensor &out, const Tensor &in, ArrayRef<int64_t> strides,
                 int64_t base) {
  visitElementSize(dtypeSize(out.dtype()), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const std::byte *src = in.bytes();
    std::byte *dst = out.bytes();
    forEachOffset<1>(out.shape(), {strides}, {base},
                     [&](const std::array<int64_t, 1> &offset) {
                       std::memcpy(dst, src + offset[0] * sizeof(U),
                                   sizeof(U));
                       dst += sizeof(U);
                     });
  });
}

/// Checks `index` against a dimension of size `size` and wraps a negative
/// one. `position` is its element number in the index tensor.
FailureOr<int64_t> wrapIndex(Operation *op, int64_t index, int64_t size,
                             int64_t position) {
  if (index < -size || index >= size)
    return op->emitOpError()
           << "index " << index << " at position " << position
           << " of the indices is out of range [" << -size << ", " << size
           << ")";
  return index < 0 ? index + size : index;
}

/// For each output coordinate of one padded dimension, the input
/// coordinate it copies, or -1 for the constant.
SmallVector<int64_t> padSources(int64_t size, int64_t low, int64_t high,
                                PadMode mode) {
  SmallVector<int64_t> sources;
  for (int64_t i = -low; i < size + high; ++i) {
    if (i >= 0 && i < size) {
      sources.push_back(i);
      continue;
    }
    switch (mode) {
    case PadMode::constant:
      sources.push_back(-1);
      break;
    case PadMode::edge:
      sources.push_back(i < 0 ? 0 : size - 1);
      break;
    case PadMode::reflect:
      // The verifier keeps padding below the size, so one mirror suffices.
      sources.push_back(i < 0 ? -i : 2 * (size - 1) - i);
      break;
    }
  }
  return sources;
}

/// The addressing shared by gather_elements and scatter_elements: for every
/// element of `indices` (row-major), the offset into a tensor of `shape`
/// with the coordinate on `axis` replaced by the (wrapped) index. Fails on
/// an index out of range or an indices shape that does not fit `shape`.
FailureOr<std::vector<int64_t>> elementOffsets(Operation *op,
                                               ArrayRef<int64_t> shape,
                                               const Tensor &indices,
                                               int64_t axis) {
  ArrayRef<int64_t> indexShape = indices.shape();
  for (size_t d = 0; d < shape.size(); ++d)
    if (static_cast<int64_t>(d) != axis && indexShape[d] > shape[d])
      return op->emitOpError()
             << "indices dimension " << d << " has size " << indexShape[d]
             << ", larger than the data's " << shape[d];
  SmallVector<int64_t> strides = stridesOf(shape);
  SmallVector<int64_t> walk = strides;
  walk[axis] = 0;
  std::vector<int64_t> index = readIndices(indices);
  std::vector<int64_t> offsets(index.size());
  int64_t position = 0;
  bool ok = true;
  forEachOffset<1>(indexShape, {ArrayRef<int64_t>(walk)}, {0},
                   [&](const std::array<int64_t, 1> &offset) {
                     if (!ok)
                       return;
                     FailureOr<int64_t> i = wrapIndex(
                         op, index[position], shape[axis], position);
                     if (failed(i)) {
                       ok = false;
                       return;
                     }
                     offsets[position++] = offset[0] + *i * strides[axis];
                   });
  if (!ok)
    return failure();
  return offsets;
}

} // namespace

LogicalResult eval::evalReshape(ReshapeOp op, Operands operands,
                                Results &results) {
  Tensor out = resultTensor(op);
  if (out.byteSize() > 0)
    std::memcpy(out.bytes(), operands[0].bytes(), out.byteSize());
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalTranspose(TransposeOp op, Operands operands,
                                  Results &results) {
  Tensor out = resultTensor(op);
  SmallVector<int64_t> inStrides = stridesOf(operands[0].shape());
  SmallVector<int64_t> strides;
  for (int64_t p : op.getPermutation())
    strides.push_back(inStrides[p]);
  copyStrided(out, operands[0], strides, 0);
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalBroadcastTo(BroadcastToOp op, Operands operands,
                                    Results &results) {
  Tensor out = resultTensor(op);
  copyStrided(out, operands[0],
              broadcastStrides(operands[0].shape(), out.shape()), 0);
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalConcat(ConcatOp op, Operands operands,
                               Results &results) {
  Tensor out = resultTensor(op);
  int64_t axis = static_cast<int64_t>(op.getAxis());
  size_t elementSize = dtypeSize(out.dtype());
  int64_t outer = productOf(out.shape(), 0, axis);
  // Each input contributes one contiguous chunk per outer index.
  int64_t outChunk = productOf(out.shape(), axis, out.shape().size());
  int64_t at = 0;
  for (const Tensor &in : operands) {
    int64_t chunk = productOf(in.shape(), axis, in.shape().size());
    if (chunk == 0)
      continue;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.bytes() + (o * outChunk + at) * elementSize,
                  in.bytes() + o * chunk * elementSize, chunk * elementSize);
    at += chunk;
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalSlice(SliceOp op, Operands operands,
                              Results &results) {
  Tensor out = resultTensor(op);
  SmallVector<int64_t> inStrides = stridesOf(operands[0].shape());
  SmallVector<int64_t> strides;
  int64_t base = 0;
  for (auto [d, offset, stride] :
       llvm::enumerate(op.getOffsets(), op.getStrides())) {
    base += offset * inStrides[d];
    strides.push_back(stride * inStrides[d]);
  }
  if (out.numElements() > 0)
    copyStrided(out, operands[0], strides, base);
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalPad(PadOp op, Operands operands, Results &results) {
  const Tensor &in = operands[0];
  Tensor out = resultTensor(op);
  size_t rank = in.shape().size();
  SmallVector<SmallVector<int64_t>> sources;
  for (size_t d = 0; d < rank; ++d)
    sources.push_back(padSources(in.shape()[d], op.getLow()[d],
                                 op.getHigh()[d], op.getMode()));
  SmallVector<int64_t> inStrides = stridesOf(in.shape());
  // The constant: the value operand's bytes, or zero (out starts zeroed).
  const std::byte *fill = operands.size() > 1 ? operands[1].bytes() : nullptr;
  size_t elementSize = dtypeSize(out.dtype());
  SmallVector<int64_t> index(rank, 0);
  std::byte *dst = out.bytes();
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    int64_t offset = 0;
    bool inside = true;
    for (size_t d = 0; d < rank && inside; ++d) {
      int64_t source = sources[d][index[d]];
      inside = source >= 0;
      offset += source * inStrides[d];
    }
    if (inside)
      std::memcpy(dst, in.bytes() + offset * elementSize, elementSize);
    else if (fill)
      std::memcpy(dst, fill, elementSize);
    dst += elementSize;
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out.shape()[d])
        break;
      index[d] = 0;
    }
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalGather(GatherOp op, Operands operands,
                               Results &results) {
  const Tensor &data = operands[0];
  int64_t axis = static_cast<int64_t>(op.getAxis());
  int64_t size = data.shape()[axis];
  std::vector<int64_t> indices = readIndices(operands[1]);
  for (size_t j = 0; j < indices.size(); ++j) {
    FailureOr<int64_t> index = wrapIndex(op, indices[j], size, j);
    if (failed(index))
      return failure();
    indices[j] = *index;
  }
  Tensor out = resultTensor(op);
  size_t elementSize = dtypeSize(data.dtype());
  int64_t outer = productOf(data.shape(), 0, axis);
  int64_t inner = productOf(data.shape(), axis + 1, data.shape().size());
  size_t rowBytes = inner * elementSize;
  if (out.byteSize() == 0) {
    results.push_back(std::move(out));
    return success();
  }
  std::byte *dst = out.bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : indices) {
      std::memcpy(dst, data.bytes() + (o * size + index) * rowBytes,
                  rowBytes);
      dst += rowBytes;
    }
  }
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalGatherElements(GatherElementsOp op, Operands operands,
                                       Results &results) {
  const Tensor &data = operands[0];
  FailureOr<std::vector<int64_t>> offsets = elementOffsets(
      op, data.shape(), operands[1], static_cast<int64_t>(op.getAxis()));
  if (failed(offsets))
    return failure();
  Tensor out = resultTensor(op);
  size_t elementSize = dtypeSize(data.dtype());
  for (size_t i = 0; i < offsets->size(); ++i)
    std::memcpy(out.bytes() + i * elementSize,
                data.bytes() + (*offsets)[i] * elementSize, elementSize);
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalScatterElements(ScatterElementsOp op,
                                        Operands operands, Results &results) {
  const Tensor &data = operands[0], &updates = operands[2];
  FailureOr<std::vector<int64_t>> offsets = elementOffsets(
      op, data.shape(), operands[1], static_cast<int64_t>(op.getAxis()));
  if (failed(offsets))
    return failure();
  Tensor out = data;
  ScatterReduction reduction = op.getReduction();
  LogicalResult status =
      visitDType(data.dtype(), [&](auto tag) -> LogicalResult {
        using T = typename decltype(tag)::type;
        T *dst = out.data<T>();
        const T *src = updates.data<T>();
        auto combine = [&](auto fn) -> LogicalResult {
          using Fn = decltype(fn);
          if constexpr (!Fn::template accepts<ComputeT<T>>) {
            return unsupportedType(op, data.dtype());
          } else {
            for (size_t i = 0; i < offsets->size(); ++i) {
              T &target = dst[(*offsets)[i]];
              target = fromCompute<T>(fn(toCompute(target), toCompute(src[i])));
            }
            return success();
          }
        };
        switch (reduction) {
        case ScatterReduction::none:
          for (size_t i = 0; i < offsets->size(); ++i)
            dst[(*offsets)[i]] = src[i];
          return success();
        case ScatterReduction::add: return combine(AddFn{});
        case ScatterReduction::mul: return combine(MulFn{});
        case ScatterReduction::max: return combine(MaxFn{});
        case ScatterReduction::min: return combine(MinFn{});
        }
        return success();
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}

LogicalResult eval::evalSegmentSum(SegmentSumOp op, Operands operands,
                                   Results &results) {
  const Tensor &data = operands[0];
  std::vector<int64_t> segments = readIndices(operands[1]);
  Tensor out = resultTensor(op);
  int64_t segmentCount = out.shape().empty() ? 0 : out.shape().front();
  size_t row = segments.empty() ? 0 : data.numElements() / segments.size();
  // Rows added one at a time in increasing t, each sum rounded to the
  // element type as a scatter-add rounds it (the kernels' order).
  LogicalResult status =
      visitDomain<Domain::Float>(op, data.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T *dst = out.data<T>();
        const T *src = data.data<T>();
        for (size_t t = 0; t < segments.size(); ++t) {
          if (segments[t] < 0 || segments[t] >= segmentCount)
            continue;
          for (size_t k = 0; k < row; ++k) {
            T &target = dst[segments[t] * row + k];
            target = fromCompute<T>(toCompute(target) +
                                    toCompute(src[t * row + k]));
          }
        }
      });
  if (failed(status))
    return failure();
  results.push_back(std::move(out));
  return success();
}
