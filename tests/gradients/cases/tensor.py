"""Gradient cases: shape, slicing and indexing ops (ir/gradients/TensorGradients.cpp).

Torch has no negative-stride slicing, no reflect/edge padding of arbitrary
rank and no ONNX-style gather, so those references index with explicit
coordinate lists (index_select per dimension); torch's autograd then sums
the gradient of every repeated read, which is what the rules must do.
Repeated and negative indices are used on purpose so that accumulation and
index wrapping are exercised.
"""
import numpy as np
import torch
from gradcheck import Case, rand, positive, data


def take(x, coords):
    """x indexed by one coordinate list per dimension (an outer product)."""
    for d, idx in enumerate(coords):
        x = torch.index_select(x, d, torch.tensor(idx, dtype=torch.int64))
    return x


def slice_ref(x, offsets, sizes, strides):
    return take(x, [[o + i * s for i in range(n)]
                    for o, n, s in zip(offsets, sizes, strides)])


def pad_sources(n, low, high, mode):
    """ONNX Pad's source coordinate for each output coordinate (reflect/edge)."""
    out = []
    for i in range(-low, n + high):
        if 0 <= i < n:
            out.append(i)
        elif mode == "edge":
            out.append(0 if i < 0 else n - 1)
        else:
            out.append(-i if i < 0 else 2 * (n - 1) - i)
    return out


def pad_ref(x, low, high, mode):
    return take(x, [pad_sources(n, l, h, mode)
                    for n, l, h in zip(x.shape, low, high)])


def pad_const_ref(x, low, high, value=None):
    """Constant padding; `value` (a 0-d tensor) fills and gets a gradient."""
    shape = [n + l + h for n, l, h in zip(x.shape, low, high)]
    fill = value if value is not None else torch.zeros((), dtype=x.dtype)
    out = fill.expand(shape).clone()
    out[tuple(slice(l, l + n) for n, l in zip(x.shape, low))] = x
    return out


def gather_ref(d, i, axis):
    """ONNX Gather: shape d[:axis] + i + d[axis+1:], negative indices wrap."""
    n = d.shape[axis]
    flat = torch.index_select(d, axis, (i.long() % n).reshape(-1))
    return flat.reshape(d.shape[:axis] + i.shape + d.shape[axis + 1:])


def elements(i, n):
    """Wraps negative GatherElements/ScatterElements indices (torch wants int64)."""
    return i.long() % n


CASES = [
    # --- reshape -----------------------------------------------------------
    Case("reshape_2d", """
func.func @f(%x: tensor<3x4xf64>) -> tensor<2x6xf64> {
  %y = dlc.reshape %x : tensor<3x4xf64> to tensor<2x6xf64>
  return %y : tensor<2x6xf64>
}""", torch=lambda x: x.reshape(2, 6), inputs=[rand(3, 4)]),
    Case("reshape_flatten_rank3", """
func.func @f(%x: tensor<2x3x4xf64>) -> tensor<24xf64> {
  %y = dlc.reshape %x : tensor<2x3x4xf64> to tensor<24xf64>
  return %y : tensor<24xf64>
}""", torch=lambda x: x.reshape(24), inputs=[rand(2, 3, 4)]),
    Case("reshape_rank0", """
func.func @f(%x: tensor<f64>) -> tensor<1x1xf64> {
  %y = dlc.reshape %x : tensor<f64> to tensor<1x1xf64>
  return %y : tensor<1x1xf64>
}""", torch=lambda x: x.reshape(1, 1), inputs=[rand()]),

    # --- transpose ---------------------------------------------------------
    Case("transpose_2d", """
func.func @f(%x: tensor<2x3xf64>) -> tensor<3x2xf64> {
  %y = dlc.transpose %x [1, 0] : tensor<2x3xf64> -> tensor<3x2xf64>
  return %y : tensor<3x2xf64>
}""", torch=lambda x: x.permute(1, 0), inputs=[rand(2, 3)]),
    # [2, 0, 3, 1] is not its own inverse.
    Case("transpose_4d", """
func.func @f(%x: tensor<2x3x4x5xf64>) -> tensor<4x2x5x3xf64> {
  %y = dlc.transpose %x [2, 0, 3, 1] : tensor<2x3x4x5xf64> -> tensor<4x2x5x3xf64>
  return %y : tensor<4x2x5x3xf64>
}""", torch=lambda x: x.permute(2, 0, 3, 1), inputs=[rand(2, 3, 4, 5)]),

    # --- broadcast_to ------------------------------------------------------
    Case("broadcast_to_leading", """
func.func @f(%x: tensor<3xf64>) -> tensor<2x3xf64> {
  %y = dlc.broadcast_to %x : tensor<3xf64> to tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda x: x.expand(2, 3), inputs=[rand(3)]),
    Case("broadcast_to_inner_ones", """
func.func @f(%x: tensor<2x1x4xf64>) -> tensor<3x2x5x4xf64> {
  %y = dlc.broadcast_to %x : tensor<2x1x4xf64> to tensor<3x2x5x4xf64>
  return %y : tensor<3x2x5x4xf64>
}""", torch=lambda x: x.expand(3, 2, 5, 4), inputs=[rand(2, 1, 4)]),
    Case("broadcast_to_rank0", """
func.func @f(%x: tensor<f64>) -> tensor<2x3xf64> {
  %y = dlc.broadcast_to %x : tensor<f64> to tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda x: x.expand(2, 3), inputs=[rand()]),

    # --- concat ------------------------------------------------------------
    Case("concat3_axis0", """
func.func @f(%a: tensor<1x3xf64>, %b: tensor<2x3xf64>, %c: tensor<3x3xf64>) -> tensor<6x3xf64> {
  %y = dlc.concat %a, %b, %c {axis = 0 : i64} : tensor<1x3xf64>, tensor<2x3xf64>, tensor<3x3xf64> -> tensor<6x3xf64>
  return %y : tensor<6x3xf64>
}""", torch=lambda a, b, c: torch.cat([a, b, c], 0),
         inputs=[rand(1, 3), rand(2, 3), rand(3, 3)]),
    Case("concat3_axis1", """
func.func @f(%a: tensor<2x1x4xf64>, %b: tensor<2x3x4xf64>, %c: tensor<2x2x4xf64>) -> tensor<2x6x4xf64> {
  %y = dlc.concat %a, %b, %c {axis = 1 : i64} : tensor<2x1x4xf64>, tensor<2x3x4xf64>, tensor<2x2x4xf64> -> tensor<2x6x4xf64>
  return %y : tensor<2x6x4xf64>
}""", torch=lambda a, b, c: torch.cat([a, b, c], 1),
         inputs=[rand(2, 1, 4), rand(2, 3, 4), rand(2, 2, 4)]),
    # The same value twice: its two slices of the gradient add up.
    Case("concat3_last_axis_repeated_input", """
func.func @f(%a: tensor<2x3x2xf64>, %b: tensor<2x3x1xf64>) -> tensor<2x3x5xf64> {
  %y = dlc.concat %a, %b, %a {axis = 2 : i64} : tensor<2x3x2xf64>, tensor<2x3x1xf64>, tensor<2x3x2xf64> -> tensor<2x3x5xf64>
  return %y : tensor<2x3x5xf64>
}""", torch=lambda a, b: torch.cat([a, b, a], 2), inputs=[rand(2, 3, 2), rand(2, 3, 1)]),
    Case("concat_single_input", """
func.func @f(%a: tensor<4xf64>) -> tensor<4xf64> {
  %y = dlc.concat %a {axis = 0 : i64} : tensor<4xf64> -> tensor<4xf64>
  return %y : tensor<4xf64>
}""", torch=lambda a: torch.cat([a], 0), inputs=[rand(4)]),

    # --- slice -------------------------------------------------------------
    Case("slice_window", """
func.func @f(%x: tensor<4x5xf64>) -> tensor<2x3xf64> {
  %y = dlc.slice %x offsets [1, 2] sizes [2, 3] strides [1, 1] : tensor<4x5xf64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda x: x[1:3, 2:5], inputs=[rand(4, 5)]),
    Case("slice_strided", """
func.func @f(%x: tensor<7x8xf64>) -> tensor<3x3xf64> {
  %y = dlc.slice %x offsets [1, 0] sizes [3, 3] strides [2, 3] : tensor<7x8xf64> -> tensor<3x3xf64>
  return %y : tensor<3x3xf64>
}""", torch=lambda x: slice_ref(x, [1, 0], [3, 3], [2, 3]), inputs=[rand(7, 8)]),
    Case("slice_reverse", """
func.func @f(%x: tensor<6xf64>) -> tensor<6xf64> {
  %y = dlc.slice %x offsets [5] sizes [6] strides [-1] : tensor<6xf64> -> tensor<6xf64>
  return %y : tensor<6xf64>
}""", torch=lambda x: torch.flip(x, [0]), inputs=[rand(6)]),
    Case("slice_negative_strides_rank3", """
func.func @f(%x: tensor<5x4x9xf64>) -> tensor<2x3x3xf64> {
  %y = dlc.slice %x offsets [4, 3, 7] sizes [2, 3, 3] strides [-2, -1, -3] : tensor<5x4x9xf64> -> tensor<2x3x3xf64>
  return %y : tensor<2x3x3xf64>
}""", torch=lambda x: slice_ref(x, [4, 3, 7], [2, 3, 3], [-2, -1, -3]),
         inputs=[rand(5, 4, 9)]),
    Case("slice_mixed_strides_rank4", """
func.func @f(%x: tensor<2x5x6x3xf64>) -> tensor<1x2x3x3xf64> {
  %y = dlc.slice %x offsets [1, 4, 0, 0] sizes [1, 2, 3, 3] strides [1, -3, 2, 1] : tensor<2x5x6x3xf64> -> tensor<1x2x3x3xf64>
  return %y : tensor<1x2x3x3xf64>
}""", torch=lambda x: slice_ref(x, [1, 4, 0, 0], [1, 2, 3, 3], [1, -3, 2, 1]),
         inputs=[rand(2, 5, 6, 3)]),
    # A stride larger than the dimension: one element read.
    Case("slice_single_element_big_stride", """
func.func @f(%x: tensor<3x4xf64>) -> tensor<1x2xf64> {
  %y = dlc.slice %x offsets [2, 1] sizes [1, 2] strides [5, 2] : tensor<3x4xf64> -> tensor<1x2xf64>
  return %y : tensor<1x2xf64>
}""", torch=lambda x: slice_ref(x, [2, 1], [1, 2], [5, 2]), inputs=[rand(3, 4)]),

    # --- pad: constant -----------------------------------------------------
    Case("pad_constant_zero", """
func.func @f(%x: tensor<2x3xf64>) -> tensor<4x4xf64> {
  %y = dlc.pad %x low [0, 1] high [2, 0] mode constant : tensor<2x3xf64> -> tensor<4x4xf64>
  return %y : tensor<4x4xf64>
}""", torch=lambda x: pad_const_ref(x, [0, 1], [2, 0]), inputs=[rand(2, 3)]),
    Case("pad_constant_value", """
func.func @f(%x: tensor<2x3x2xf64>, %v: tensor<f64>) -> tensor<3x6x2xf64> {
  %y = dlc.pad %x value %v : tensor<f64> low [1, 2, 0] high [0, 1, 0] mode constant : tensor<2x3x2xf64> -> tensor<3x6x2xf64>
  return %y : tensor<3x6x2xf64>
}""", torch=lambda x, v: pad_const_ref(x, [1, 2, 0], [0, 1, 0], v),
         inputs=[rand(2, 3, 2), rand()]),
    Case("pad_constant_value_rank4", """
func.func @f(%x: tensor<1x2x2x3xf64>, %v: tensor<f64>) -> tensor<2x2x5x5xf64> {
  %y = dlc.pad %x value %v : tensor<f64> low [0, 0, 1, 2] high [1, 0, 2, 0] mode constant : tensor<1x2x2x3xf64> -> tensor<2x2x5x5xf64>
  return %y : tensor<2x2x5x5xf64>
}""", torch=lambda x, v: pad_const_ref(x, [0, 0, 1, 2], [1, 0, 2, 0], v),
         inputs=[rand(1, 2, 2, 3), rand()]),
    # No padded position: the value gets a zero gradient.
    Case("pad_constant_value_unused", """
func.func @f(%x: tensor<2x3xf64>, %v: tensor<f64>) -> tensor<2x3xf64> {
  %y = dlc.pad %x value %v : tensor<f64> low [0, 0] high [0, 0] mode constant : tensor<2x3xf64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda x, v: pad_const_ref(x, [0, 0], [0, 0], v), inputs=[rand(2, 3), rand()]),

    # --- pad: reflect ------------------------------------------------------
    # The largest reflect padding the op allows (size - 1) on both sides.
    Case("pad_reflect_1d_max", """
func.func @f(%x: tensor<5xf64>) -> tensor<13xf64> {
  %y = dlc.pad %x low [4] high [4] mode reflect : tensor<5xf64> -> tensor<13xf64>
  return %y : tensor<13xf64>
}""", torch=lambda x: pad_ref(x, [4], [4], "reflect"), inputs=[rand(5)]),
    Case("pad_reflect_2d", """
func.func @f(%x: tensor<3x4xf64>) -> tensor<6x9xf64> {
  %y = dlc.pad %x low [1, 2] high [2, 3] mode reflect : tensor<3x4xf64> -> tensor<6x9xf64>
  return %y : tensor<6x9xf64>
}""", torch=lambda x: pad_ref(x, [1, 2], [2, 3], "reflect"), inputs=[rand(3, 4)]),
    Case("pad_reflect_3d_one_sided", """
func.func @f(%x: tensor<2x3x4xf64>) -> tensor<2x5x5xf64> {
  %y = dlc.pad %x low [0, 0, 1] high [0, 2, 0] mode reflect : tensor<2x3x4xf64> -> tensor<2x5x5xf64>
  return %y : tensor<2x5x5xf64>
}""", torch=lambda x: pad_ref(x, [0, 0, 1], [0, 2, 0], "reflect"), inputs=[rand(2, 3, 4)]),
    Case("pad_reflect_4d_like_torch", """
func.func @f(%x: tensor<1x2x3x3xf64>) -> tensor<1x2x5x7xf64> {
  %y = dlc.pad %x low [0, 0, 1, 2] high [0, 0, 1, 2] mode reflect : tensor<1x2x3x3xf64> -> tensor<1x2x5x7xf64>
  return %y : tensor<1x2x5x7xf64>
}""", torch=lambda x: torch.nn.functional.pad(x, (2, 2, 1, 1), mode="reflect"),
         inputs=[rand(1, 2, 3, 3)]),

    # --- pad: edge ---------------------------------------------------------
    Case("pad_edge_size1", """
func.func @f(%x: tensor<1xf64>) -> tensor<6xf64> {
  %y = dlc.pad %x low [2] high [3] mode edge : tensor<1xf64> -> tensor<6xf64>
  return %y : tensor<6xf64>
}""", torch=lambda x: pad_ref(x, [2], [3], "edge"), inputs=[rand(1)]),
    # Padding wider than the dimension.
    Case("pad_edge_2d_wide", """
func.func @f(%x: tensor<3x4xf64>) -> tensor<7x9xf64> {
  %y = dlc.pad %x low [3, 0] high [1, 5] mode edge : tensor<3x4xf64> -> tensor<7x9xf64>
  return %y : tensor<7x9xf64>
}""", torch=lambda x: pad_ref(x, [3, 0], [1, 5], "edge"), inputs=[rand(3, 4)]),
    Case("pad_edge_4d_like_torch", """
func.func @f(%x: tensor<2x1x3x4xf64>) -> tensor<2x1x6x5xf64> {
  %y = dlc.pad %x low [0, 0, 2, 0] high [0, 0, 1, 1] mode edge : tensor<2x1x3x4xf64> -> tensor<2x1x6x5xf64>
  return %y : tensor<2x1x6x5xf64>
}""", torch=lambda x: torch.nn.functional.pad(x, (0, 1, 2, 1), mode="replicate"),
         inputs=[rand(2, 1, 3, 4)]),
    Case("pad_edge_3d_all_dims", """
func.func @f(%x: tensor<2x2x3xf64>) -> tensor<3x5x5xf64> {
  %y = dlc.pad %x low [1, 2, 1] high [0, 1, 1] mode edge : tensor<2x2x3xf64> -> tensor<3x5x5xf64>
  return %y : tensor<3x5x5xf64>
}""", torch=lambda x: pad_ref(x, [1, 2, 1], [0, 1, 1], "edge"), inputs=[rand(2, 2, 3)]),

    # --- gather ------------------------------------------------------------
    # Repeated (0 twice, -1 and 4 are the same row) and negative indices.
    Case("gather_axis0_repeats_negative", """
func.func @f(%d: tensor<5x3xf64>, %i: tensor<5xi64>) -> tensor<5x3xf64> {
  %y = dlc.gather %d[%i] {axis = 0 : i64} : tensor<5x3xf64>, tensor<5xi64> -> tensor<5x3xf64>
  return %y : tensor<5x3xf64>
}""", torch=lambda d, i: gather_ref(d, i, 0),
         inputs=[rand(5, 3), data(np.array([0, -1, 4, 2, 0]))]),
    Case("gather_axis1_rank2_indices", """
func.func @f(%d: tensor<3x5xf64>, %i: tensor<2x3xi64>) -> tensor<3x2x3xf64> {
  %y = dlc.gather %d[%i] {axis = 1 : i64} : tensor<3x5xf64>, tensor<2x3xi64> -> tensor<3x2x3xf64>
  return %y : tensor<3x2x3xf64>
}""", torch=lambda d, i: gather_ref(d, i, 1),
         inputs=[rand(3, 5), data(np.array([[1, 3, -2], [4, 1, 0]]))]),
    Case("gather_rank0_index", """
func.func @f(%d: tensor<2x4x3xf64>, %i: tensor<i64>) -> tensor<2x3xf64> {
  %y = dlc.gather %d[%i] {axis = 1 : i64} : tensor<2x4x3xf64>, tensor<i64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda d, i: gather_ref(d, i, 1),
         inputs=[rand(2, 4, 3), data(np.array(-3))]),
    Case("gather_last_axis_i32", """
func.func @f(%d: tensor<2x3x4xf64>, %i: tensor<6xi32>) -> tensor<2x3x6xf64> {
  %y = dlc.gather %d[%i] {axis = 2 : i64} : tensor<2x3x4xf64>, tensor<6xi32> -> tensor<2x3x6xf64>
  return %y : tensor<2x3x6xf64>
}""", torch=lambda d, i: gather_ref(d, i, 2),
         inputs=[rand(2, 3, 4), data(np.array([3, 3, 0, -4, 1, 3], dtype=np.int32))]),
    # An embedding lookup: rows of a table for a batch of token ids.
    Case("gather_embedding", """
func.func @f(%t: tensor<6x4xf64>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf64> {
  %y = dlc.gather %t[%i] {axis = 0 : i64} : tensor<6x4xf64>, tensor<2x3xi64> -> tensor<2x3x4xf64>
  return %y : tensor<2x3x4xf64>
}""", torch=lambda t, i: torch.nn.functional.embedding(i, t),
         inputs=[rand(6, 4), data(np.array([[5, 0, 5], [2, 5, 1]]))]),

    # --- gather_elements ---------------------------------------------------
    Case("gather_elements_axis1", """
func.func @f(%d: tensor<3x4xf64>, %i: tensor<3x5xi64>) -> tensor<3x5xf64> {
  %y = dlc.gather_elements %d[%i] {axis = 1 : i64} : tensor<3x4xf64>, tensor<3x5xi64> -> tensor<3x5xf64>
  return %y : tensor<3x5xf64>
}""", torch=lambda d, i: torch.gather(d, 1, elements(i, 4)),
         inputs=[rand(3, 4), data(np.array([[0, 0, 3, -1, 2],
                                            [1, 2, 1, 1, -4],
                                            [3, 2, 1, 0, 0]]))]),
    # Indices smaller than the data off the axis.
    Case("gather_elements_axis0_partial", """
func.func @f(%d: tensor<4x5xf64>, %i: tensor<2x3xi64>) -> tensor<2x3xf64> {
  %y = dlc.gather_elements %d[%i] {axis = 0 : i64} : tensor<4x5xf64>, tensor<2x3xi64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda d, i: torch.gather(d, 0, elements(i, 4)),
         inputs=[rand(4, 5), data(np.array([[3, 0, 3], [3, -2, 1]]))]),
    Case("gather_elements_rank3_last_axis_i32", """
func.func @f(%d: tensor<2x3x4xf64>, %i: tensor<2x2x6xi32>) -> tensor<2x2x6xf64> {
  %y = dlc.gather_elements %d[%i] {axis = 2 : i64} : tensor<2x3x4xf64>, tensor<2x2x6xi32> -> tensor<2x2x6xf64>
  return %y : tensor<2x2x6xf64>
}""", torch=lambda d, i: torch.gather(d, 2, elements(i, 4)),
         inputs=[rand(2, 3, 4),
                 data(np.array([[[0, 1, 2, 3, 3, -1], [2, 2, 0, 1, 0, 0]],
                                [[1, 1, 1, 1, 0, 3], [3, 2, 1, 0, -3, -4]]],
                               dtype=np.int32))]),

    # --- scatter_elements --------------------------------------------------
    # add: repeated targets accumulate in the forward pass; both updates
    # aimed at one position get its gradient.
    Case("scatter_add_axis1_repeats", """
func.func @f(%d: tensor<3x4xf64>, %i: tensor<3x3xi64>, %u: tensor<3x3xf64>) -> tensor<3x4xf64> {
  %y = dlc.scatter_elements %d[%i], %u {axis = 1 : i64} reduction add : tensor<3x4xf64>, tensor<3x3xi64>, tensor<3x3xf64>
  return %y : tensor<3x4xf64>
}""", torch=lambda d, i, u: d.scatter_add(1, elements(i, 4), u),
         inputs=[rand(3, 4), data(np.array([[0, 0, 3], [-1, 3, 1], [2, 1, 2]])),
                 rand(3, 3)]),
    Case("scatter_add_axis0_partial", """
func.func @f(%d: tensor<4x3xf64>, %i: tensor<2x2xi64>, %u: tensor<2x2xf64>) -> tensor<4x3xf64> {
  %y = dlc.scatter_elements %d[%i], %u {axis = 0 : i64} reduction add : tensor<4x3xf64>, tensor<2x2xi64>, tensor<2x2xf64>
  return %y : tensor<4x3xf64>
}""", torch=lambda d, i, u: d.scatter_add(0, elements(i, 4), u),
         inputs=[rand(4, 3), data(np.array([[3, 1], [3, -4]])), rand(2, 2)]),
    # none, distinct targets: the overwritten data elements get no gradient.
    Case("scatter_none_axis1", """
func.func @f(%d: tensor<3x5xf64>, %i: tensor<3x2xi64>, %u: tensor<3x2xf64>) -> tensor<3x5xf64> {
  %y = dlc.scatter_elements %d[%i], %u {axis = 1 : i64} reduction none : tensor<3x5xf64>, tensor<3x2xi64>, tensor<3x2xf64>
  return %y : tensor<3x5xf64>
}""", torch=lambda d, i, u: d.scatter(1, elements(i, 5), u),
         inputs=[rand(3, 5), data(np.array([[0, 4], [-1, 2], [1, 3]])), rand(3, 2)]),
    Case("scatter_none_rank3_axis0", """
func.func @f(%d: tensor<3x2x2xf64>, %i: tensor<2x2x1xi32>, %u: tensor<2x2x1xf64>) -> tensor<3x2x2xf64> {
  %y = dlc.scatter_elements %d[%i], %u {axis = 0 : i64} reduction none : tensor<3x2x2xf64>, tensor<2x2x1xi32>, tensor<2x2x1xf64>
  return %y : tensor<3x2x2xf64>
}""", torch=lambda d, i, u: d.scatter(0, elements(i, 3), u),
         inputs=[rand(3, 2, 2), data(np.array([[[2], [0]], [[1], [2]]], dtype=np.int32)),
                 rand(2, 2, 1)]),
    # none with a repeated target: ONNX leaves the forward undefined, the
    # evaluator keeps the last write, and the rule (like torch) gives every
    # update aimed at a position that position's gradient. The two updates
    # to (0, 1) are equal so the forward is the same in every reading; the
    # finite differences see only the last write, hence fd=False.
    Case("scatter_none_repeated_target", """
func.func @f(%d: tensor<2x3xf64>, %i: tensor<2x2xi64>, %u: tensor<2x2xf64>) -> tensor<2x3xf64> {
  %y = dlc.scatter_elements %d[%i], %u {axis = 1 : i64} reduction none : tensor<2x3xf64>, tensor<2x2xi64>, tensor<2x2xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda d, i, u: d.scatter(1, elements(i, 3), u),
         inputs=[rand(2, 3), data(np.array([[1, 1], [0, 2]])),
                 data(np.array([[0.75, 0.75], [-1.25, 0.5]]))], fd=False),
]
