"""Gradient cases: matmul, convolution and pooling (ir/gradients/NNGradients.cpp).

The MLIR of each case is generated from its attributes (the shapes follow
from them), and the torch reference is written from the op's definition:
asymmetric padding is an explicit torch.nn.functional.pad before a
convolution or pool with no padding of its own (zeros for conv and sum,
-inf for max, so padding never wins), a transposed convolution
(conv_grad_input) is torch's conv_transpose without padding, cropped by
pad_low and zero-extended to the result's size, and sum_pool is avg_pool with
divisor_override=1 or, where avg_pool has no dilation, a depthwise
convolution with a ones filter. Random points have no ties, so max_pool is
smooth there; the tie cases use fixed data and skip finite differences.
"""
import numpy as np
import torch
import torch.nn.functional as F
from gradcheck import Case, rand, positive, data


def tensor_type(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f64>"


def ints(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def window_size(n, k, stride, low, high, dilation):
    padded = n + low + high
    return (padded - ((k - 1) * dilation + 1)) // stride + 1


def torch_pad(x, low, high, value=0.0):
    """F.pad of the spatial dimensions by per-dimension (low, high)."""
    pads = []
    for lo, hi in reversed(list(zip(low, high))):
        pads += [lo, hi]
    return F.pad(x, pads, value=value)


# --- matmul ------------------------------------------------------------------

def matmul_case(name, a, b):
    batch = list(np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2])))
    y = batch + [a[-2], b[-1]]
    text = f"""
func.func @f(%a: {tensor_type(a)}, %b: {tensor_type(b)}) -> {tensor_type(y)} {{
  %y = dlc.matmul %a, %b : {tensor_type(a)}, {tensor_type(b)} -> {tensor_type(y)}
  return %y : {tensor_type(y)}
}}"""
    return Case(name, text, torch=lambda x, z: torch.matmul(x, z),
                inputs=[rand(*a), rand(*b)])


# --- conv --------------------------------------------------------------------

def conv_ref(x, w, stride, low, high, dilation, groups):
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[x.dim() - 2]
    return conv(torch_pad(x, low, high), w, stride=stride, dilation=dilation,
                groups=groups)


def conv_case(name, x, w, stride=None, low=None, high=None, dilation=None,
              groups=1):
    spatial = len(x) - 2
    ones, zeros = [1] * spatial, [0] * spatial
    stride, dilation = stride or ones, dilation or ones
    low, high = low or zeros, high or zeros
    y = [x[0], w[0]] + [window_size(x[d + 2], w[d + 2], stride[d], low[d],
                                    high[d], dilation[d])
                        for d in range(spatial)]
    X, W, Y = tensor_type(x), tensor_type(w), tensor_type(y)
    text = f"""
func.func @f(%x: {X}, %w: {W}) -> {Y} {{
  %y = dlc.conv %x, %w stride {ints(stride)} pad_low {ints(low)} pad_high {ints(high)} dilation {ints(dilation)} groups {groups} : {X}, {W} -> {Y}
  return %y : {Y}
}}"""
    return Case(name, text,
                torch=lambda a, b: conv_ref(a, b, stride, low, high, dilation,
                                            groups),
                inputs=[rand(*x), rand(*w)])


def conv_transpose_ref(g, w, stride, low, dilation, groups, size):
    """torch's transposed convolution without padding, its spatial
    dimensions cropped by `low` and extended with zeros to `size`."""
    transpose = {1: F.conv_transpose1d, 2: F.conv_transpose2d,
                 3: F.conv_transpose3d}[g.dim() - 2]
    r = transpose(g, w, stride=stride, dilation=dilation, groups=groups)
    extra = [max(0, lo + n - full) for lo, n, full in
             zip(low, size, r.shape[2:])]
    r = torch_pad(r, [0] * len(size), extra)
    index = (slice(None), slice(None)) + tuple(
        slice(lo, lo + n) for lo, n in zip(low, size))
    return r[index]


def conv_transpose_case(name, g, w, r, stride=None, low=None, high=None,
                        dilation=None, groups=1):
    """dlc.conv_grad_input of g ([N, O, ...]) by w ([O, C/groups, k...]) into
    r's spatial size: a transposed convolution, as ConvTranspose imports."""
    spatial = len(g) - 2
    ones, zeros = [1] * spatial, [0] * spatial
    stride, dilation = stride or ones, dilation or ones
    low, high = low or zeros, high or zeros
    result = [g[0], w[1] * groups] + r
    G, W, R = tensor_type(g), tensor_type(w), tensor_type(result)
    text = f"""
func.func @f(%g: {G}, %w: {W}) -> {R} {{
  %r = dlc.conv_grad_input %g, %w stride {ints(stride)} pad_low {ints(low)} pad_high {ints(high)} dilation {ints(dilation)} groups {groups} : {G}, {W} -> {R}
  return %r : {R}
}}"""
    return Case(name, text,
                torch=lambda a, b: conv_transpose_ref(a, b, stride, low,
                                                      dilation, groups, r),
                inputs=[rand(*g), rand(*w)])


# --- pools -------------------------------------------------------------------

def max_pool_ref(x, window, stride, low, high, dilation):
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[x.dim() - 2]
    x = torch_pad(x, low, high, value=float("-inf"))
    return pool(x, window, stride=stride, dilation=dilation)


def sum_pool_ref(x, window, stride, low, high, dilation):
    x = torch_pad(x, low, high)
    spatial = x.dim() - 2
    if spatial in (2, 3) and all(d == 1 for d in dilation):
        pool = F.avg_pool2d if spatial == 2 else F.avg_pool3d
        return pool(x, window, stride=stride, divisor_override=1)
    # avg_pool has no dilation (and avg_pool1d no divisor_override): the
    # same sum as a depthwise convolution with a ones filter.
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[spatial]
    channels = x.shape[1]
    ones = torch.ones([channels, 1] + list(window), dtype=x.dtype)
    return conv(x, ones, stride=stride, dilation=dilation, groups=channels)


def pool_case(name, op, x, window, stride=None, low=None, high=None,
              dilation=None, inputs=None, fd=True):
    spatial = len(x) - 2
    ones, zeros = [1] * spatial, [0] * spatial
    stride, dilation = stride or ones, dilation or ones
    low, high = low or zeros, high or zeros
    y = x[:2] + [window_size(x[d + 2], window[d], stride[d], low[d], high[d],
                             dilation[d]) for d in range(spatial)]
    X, Y = tensor_type(x), tensor_type(y)
    text = f"""
func.func @f(%x: {X}) -> {Y} {{
  %y = dlc.{op} %x window {ints(window)} stride {ints(stride)} pad_low {ints(low)} pad_high {ints(high)} dilation {ints(dilation)} : {X} -> {Y}
  return %y : {Y}
}}"""
    ref = max_pool_ref if op == "max_pool" else sum_pool_ref
    return Case(name, text,
                torch=lambda a: ref(a, window, stride, low, high, dilation),
                inputs=inputs or [rand(*x)], fd=fd)


def distinct(*shape, seed=0):
    """A random permutation of 0.1, 0.2, ...: no ties, gaps of 0.1 for FD."""
    n = int(np.prod(shape))
    values = (np.random.default_rng(seed).permutation(n) + 1) * 0.1 - n * 0.05
    return data(values.reshape(shape))


CASES = [
    # --- matmul --------------------------------------------------------------
    matmul_case("matmul_2d", [3, 4], [4, 5]),
    matmul_case("matmul_vector_shapes", [1, 4], [4, 1]),
    matmul_case("matmul_batched", [2, 3, 4], [2, 4, 5]),
    # lhs batch [2, 1] against rhs batch [3]: both sides broadcast.
    matmul_case("matmul_broadcast_batch", [2, 1, 3, 4], [3, 4, 5]),
    matmul_case("matmul_broadcast_size1_both", [1, 2, 3, 4], [3, 1, 4, 2]),
    matmul_case("matmul_rank2_rank4", [3, 4], [2, 3, 4, 5]),
    matmul_case("matmul_rank4_rank2", [2, 3, 3, 4], [4, 5]),

    # --- conv ----------------------------------------------------------------
    conv_case("conv1d", [2, 3, 9], [4, 3, 3]),
    conv_case("conv1d_stride_leftover", [2, 3, 10], [4, 3, 3], stride=[3]),
    conv_case("conv1d_asymmetric_pad_dilation", [1, 2, 8], [3, 2, 3],
              low=[2], high=[1], dilation=[2]),
    conv_case("conv2d", [2, 3, 5, 6], [4, 3, 3, 2]),
    conv_case("conv2d_stride_pad", [2, 3, 7, 6], [4, 3, 3, 3],
              stride=[2, 2], low=[1, 1], high=[1, 1]),
    conv_case("conv2d_asymmetric_pad", [1, 2, 6, 5], [3, 2, 3, 2],
              stride=[1, 2], low=[2, 0], high=[0, 3]),
    conv_case("conv2d_dilation", [1, 2, 7, 7], [2, 2, 3, 2],
              dilation=[2, 3], low=[1, 0], high=[1, 2]),
    conv_case("conv2d_groups2", [2, 4, 6, 5], [6, 2, 3, 3], groups=2,
              stride=[2, 1], low=[1, 1], high=[0, 1]),
    conv_case("conv2d_depthwise", [1, 3, 6, 6], [3, 1, 3, 3], groups=3,
              low=[1, 1], high=[1, 1]),
    conv_case("conv2d_depthwise_multiplier", [2, 2, 5, 5], [4, 1, 2, 3],
              groups=2, stride=[2, 1], dilation=[1, 2]),
    conv_case("conv3d", [1, 2, 4, 5, 4], [3, 2, 2, 3, 2]),
    conv_case("conv3d_stride_pad_dilation", [2, 2, 5, 4, 6], [2, 1, 2, 2, 3],
              groups=2, stride=[2, 1, 2], low=[1, 0, 2], high=[0, 1, 1],
              dilation=[1, 2, 1]),
    # Transposed convolutions (ConvTranspose): strides that interleave the
    # scattered kernels, padding that crops them, a result that G's end
    # padding leaves partly unreached (output_padding), dilation, groups.
    conv_transpose_case("conv1d_transposed", [2, 3, 4], [3, 2, 3], [4],
                        low=[1], high=[1]),
    conv_transpose_case("conv1d_transposed_strided", [1, 2, 5], [2, 3, 2],
                        [10], stride=[2]),
    conv_transpose_case("conv1d_transposed_output_padding", [1, 2, 4],
                        [2, 2, 3], [14], stride=[3], low=[1], high=[0],
                        dilation=[2]),
    conv_transpose_case("conv2d_transposed_groups", [2, 4, 3, 4],
                        [4, 3, 2, 3], [6, 10], stride=[2, 3], low=[0, 1],
                        high=[0, 1], groups=2),
    conv_transpose_case("conv3d_transposed", [1, 2, 2, 3, 2],
                        [2, 2, 2, 2, 2], [4, 5, 3], stride=[2, 2, 1],
                        low=[0, 1, 0], high=[0, 0, 0]),

    # --- max_pool --------------------------------------------------------------
    pool_case("max_pool1d_overlapping", "max_pool", [2, 3, 9], [3], stride=[1],
              inputs=[distinct(2, 3, 9, seed=1)]),
    pool_case("max_pool2d", "max_pool", [2, 2, 6, 6], [2, 2], stride=[2, 2],
              inputs=[distinct(2, 2, 6, 6, seed=2)]),
    pool_case("max_pool2d_overlapping_pad", "max_pool", [1, 3, 7, 6], [3, 3],
              stride=[2, 1], low=[1, 0], high=[1, 2],
              inputs=[distinct(1, 3, 7, 6, seed=3)]),
    pool_case("max_pool2d_dilation", "max_pool", [2, 2, 7, 8], [2, 3],
              stride=[1, 2], dilation=[3, 2], low=[0, 1], high=[2, 0],
              inputs=[distinct(2, 2, 7, 8, seed=4)]),
    pool_case("max_pool3d", "max_pool", [1, 2, 4, 5, 4], [2, 2, 2],
              stride=[1, 2, 1], low=[1, 0, 0], high=[0, 1, 1],
              inputs=[distinct(1, 2, 4, 5, 4, seed=5)]),
    # Negative values and padding: the padding never wins.
    pool_case("max_pool2d_negative_padded", "max_pool", [1, 1, 3, 3], [2, 2],
              low=[1, 1], high=[1, 1],
              inputs=[data(-np.arange(1.0, 10.0).reshape(1, 1, 3, 3))]),
    # Ties in and across overlapping windows: the first maximum in row-major
    # window order gets the gradient, as in PyTorch (not smooth: no FD).
    pool_case("max_pool2d_ties", "max_pool", [1, 1, 4, 4], [2, 2],
              stride=[1, 1], fd=False,
              inputs=[data(np.array([[[[1.0, 3.0, 3.0, 0.0],
                                       [3.0, 3.0, 2.0, 2.0],
                                       [0.0, 1.0, 2.0, 2.0],
                                       [1.0, 1.0, 1.0, 1.0]]]]))]),
    pool_case("max_pool1d_ties_dilated", "max_pool", [1, 2, 7], [3],
              stride=[2], dilation=[2], low=[1], high=[1], fd=False,
              inputs=[data(np.array([[[2.0, 0.0, 2.0, 1.0, 2.0, 0.0, 2.0],
                                      [-1.0, -1.0, -1.0, -1.0, -1.0, -1.0,
                                       -1.0]]]))]),

    # --- sum_pool --------------------------------------------------------------
    pool_case("sum_pool1d", "sum_pool", [2, 3, 8], [3], stride=[2],
              low=[1], high=[2]),
    pool_case("sum_pool2d", "sum_pool", [2, 2, 6, 6], [2, 2], stride=[2, 2]),
    pool_case("sum_pool2d_overlapping_pad", "sum_pool", [1, 3, 5, 6], [3, 2],
              stride=[1, 2], low=[2, 0], high=[1, 1]),
    pool_case("sum_pool2d_dilation", "sum_pool", [1, 2, 7, 6], [2, 2],
              stride=[2, 1], dilation=[2, 3], low=[1, 1], high=[0, 2]),
    pool_case("sum_pool3d_pad", "sum_pool", [1, 2, 4, 3, 5], [2, 2, 3],
              stride=[2, 1, 2], low=[1, 1, 0], high=[1, 0, 2]),
]
