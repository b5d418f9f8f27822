"""Gradient cases for the reductions, cumsum and top_k.

Each reduction over one axis, several, all of them (rank-0 result) and none
(the identity), with and without keep_dims, ranks 0 to 4. reduce_prod with
one zero and several zeros in a group (the product stays smooth, so FD
checks those too); reduce_max/min with ties on purpose, where torch.amax
splits the gradient evenly (FD off). cumsum in all four exclusive/reverse
combinations; top_k largest and smallest on several axes.
"""
import numpy as np
import torch
from gradcheck import Case, rand, positive, data


def ttype(shape, element="f64"):
    """The MLIR tensor type of `shape`."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def reduce(name, op, shape, axes, keep, fn, spec, **kw):
    out = [1 if d in axes else n for d, n in enumerate(shape)
           if keep or d not in axes]
    t, o = ttype(shape), ttype(out)
    flag = " keep_dims" if keep else ""
    return Case(name, f"""
func.func @f(%x: {t}) -> {o} {{
  %y = dlc.{op} %x axes {list(axes)}{flag} : {t} -> {o}
  return %y : {o}
}}""", torch=fn, inputs=[spec], **kw)


def torch_prod(x, axes, keep):
    """torch.prod over several axes (it takes one at a time)."""
    for axis in sorted(axes, reverse=True):
        x = torch.prod(x, axis, keepdim=keep)
    return x


def cumsum(name, shape, axis, exclusive, reverse, spec):
    t = ttype(shape)
    flags = "".join([", exclusive" if exclusive else "",
                     ", reverse" if reverse else ""])

    def fn(x):
        y = torch.flip(x, [axis]) if reverse else x
        y = torch.cumsum(y, axis) - (y if exclusive else 0)
        return torch.flip(y, [axis]) if reverse else y

    return Case(name, f"""
func.func @f(%x: {t}) -> {t} {{
  %y = dlc.cumsum %x {{axis = {axis} : i64{flags}}} : {t}
  return %y : {t}
}}""", torch=fn, inputs=[spec])


def top_k(name, shape, k, axis, largest, spec, **kw):
    out = list(shape)
    out[axis] = k
    t, v, i = ttype(shape), ttype(out), ttype(out, "i64")
    flags = ", largest" if largest else ""

    def fn(x):
        values, indices = torch.topk(x, k, axis, largest=largest, sorted=True)
        return values, indices

    return Case(name, f"""
func.func @f(%x: {t}) -> ({v}, {i}) {{
  %v, %i = dlc.top_k %x {{axis = {axis} : i64, k = {k} : i64{flags}, sorted}}
      : {t} -> {v}, {i}
  return %v, %i : {v}, {i}
}}""", torch=fn, inputs=[spec], **kw)


# Rows with one zero (row 0), two zeros (row 1) and none (row 2).
ZEROS = np.array([[1.5, 0.0, -2.0, 0.5],
                  [0.0, 1.2, 0.0, -0.7],
                  [0.8, -1.1, 1.3, 0.6]])
# Ties: row 0 has two maxima, row 1 three minima, row 2 all equal.
TIES = np.array([[2.0, -1.0, 2.0, 0.5],
                 [-1.0, -1.0, 3.0, -1.0],
                 [0.7, 0.7, 0.7, 0.7]])

CASES = [
    reduce("reduce_sum_axis1_keep", "reduce_sum", (2, 3), [1], True,
           lambda x: x.sum(1, keepdim=True), rand(2, 3)),
    reduce("reduce_sum_axes02", "reduce_sum", (2, 3, 4), [0, 2], False,
           lambda x: x.sum((0, 2)), rand(2, 3, 4)),
    reduce("reduce_sum_all", "reduce_sum", (3, 4), [0, 1], False,
           lambda x: x.sum(), rand(3, 4)),
    reduce("reduce_sum_all_keep", "reduce_sum", (3, 4), [0, 1], True,
           lambda x: x.sum((0, 1), keepdim=True), rand(3, 4)),
    reduce("reduce_sum_none", "reduce_sum", (2, 3), [], False,
           lambda x: x.clone(), rand(2, 3)),
    reduce("reduce_sum_scalar", "reduce_sum", (), [], False,
           lambda x: x.clone(), rand()),
    reduce("reduce_sum_rank4", "reduce_sum", (2, 3, 4, 5), [1, 3], True,
           lambda x: x.sum((1, 3), keepdim=True), rand(2, 3, 4, 5)),
    reduce("reduce_sum_size1_axis", "reduce_sum", (3, 1), [1], False,
           lambda x: x.sum(1), rand(3, 1)),

    reduce("reduce_prod_axis1", "reduce_prod", (3, 4), [1], False,
           lambda x: torch_prod(x, [1], False), rand(3, 4)),
    reduce("reduce_prod_axes02_keep", "reduce_prod", (2, 3, 4), [0, 2], True,
           lambda x: torch_prod(x, [0, 2], True), rand(2, 3, 4)),
    reduce("reduce_prod_all", "reduce_prod", (2, 3), [0, 1], False,
           lambda x: torch.prod(x), rand(2, 3)),
    reduce("reduce_prod_none", "reduce_prod", (2, 3), [], False,
           lambda x: x.clone(), rand(2, 3)),
    reduce("reduce_prod_scalar", "reduce_prod", (), [], False,
           lambda x: x.clone(), rand()),
    reduce("reduce_prod_zeros", "reduce_prod", (3, 4), [1], False,
           lambda x: torch_prod(x, [1], False), data(ZEROS)),
    reduce("reduce_prod_zeros_keep", "reduce_prod", (3, 4), [1], True,
           lambda x: torch_prod(x, [1], True), data(ZEROS)),
    reduce("reduce_prod_zeros_axis0", "reduce_prod", (3, 4), [0], False,
           lambda x: torch_prod(x, [0], False), data(ZEROS)),
    reduce("reduce_prod_zeros_all", "reduce_prod", (3, 4), [0, 1], False,
           lambda x: torch.prod(x), data(ZEROS)),
    reduce("reduce_prod_one_zero_all", "reduce_prod", (2, 3), [0, 1], False,
           lambda x: torch.prod(x),
           data(np.array([[1.5, -0.5, 2.0], [0.0, 1.1, -1.3]]))),

    reduce("reduce_max_axis1", "reduce_max", (3, 4), [1], False,
           lambda x: torch.amax(x, 1), rand(3, 4)),
    reduce("reduce_max_axes02_keep", "reduce_max", (2, 3, 4), [0, 2], True,
           lambda x: torch.amax(x, (0, 2), keepdim=True), rand(2, 3, 4)),
    reduce("reduce_max_all", "reduce_max", (3, 4), [0, 1], False,
           lambda x: torch.amax(x, (0, 1)), rand(3, 4)),
    reduce("reduce_max_none", "reduce_max", (2, 3), [], False,
           lambda x: x.clone(), rand(2, 3)),
    reduce("reduce_max_scalar", "reduce_max", (), [], False,
           lambda x: x.clone(), rand()),
    reduce("reduce_max_rank4", "reduce_max", (2, 3, 2, 3), [1, 2, 3], False,
           lambda x: torch.amax(x, (1, 2, 3)), rand(2, 3, 2, 3)),
    reduce("reduce_max_ties", "reduce_max", (3, 4), [1], False,
           lambda x: torch.amax(x, 1), data(TIES), fd=False),
    reduce("reduce_max_ties_all", "reduce_max", (3, 4), [0, 1], True,
           lambda x: torch.amax(x, (0, 1), keepdim=True), data(TIES), fd=False),

    reduce("reduce_min_axis0_keep", "reduce_min", (3, 4), [0], True,
           lambda x: torch.amin(x, 0, keepdim=True), rand(3, 4)),
    reduce("reduce_min_axes12", "reduce_min", (2, 3, 4), [1, 2], False,
           lambda x: torch.amin(x, (1, 2)), rand(2, 3, 4)),
    reduce("reduce_min_none", "reduce_min", (4,), [], False,
           lambda x: x.clone(), rand(4)),
    reduce("reduce_min_ties", "reduce_min", (3, 4), [1], True,
           lambda x: torch.amin(x, 1, keepdim=True), data(TIES), fd=False),
    reduce("reduce_min_ties_axis0", "reduce_min", (3, 4), [0], False,
           lambda x: torch.amin(x, 0), data(TIES), fd=False),

    cumsum("cumsum_axis0", (3, 4), 0, False, False, rand(3, 4)),
    cumsum("cumsum_axis1", (3, 4), 1, False, False, rand(3, 4)),
    cumsum("cumsum_exclusive", (3, 4), 1, True, False, rand(3, 4)),
    cumsum("cumsum_reverse", (3, 4), 1, False, True, rand(3, 4)),
    cumsum("cumsum_exclusive_reverse", (3, 4), 0, True, True, rand(3, 4)),
    cumsum("cumsum_rank1", (6,), 0, False, False, rand(6)),
    cumsum("cumsum_rank3_reverse", (2, 3, 4), 1, False, True, rand(2, 3, 4)),

    top_k("top_k_largest", (3, 5), 2, 1, True, rand(3, 5)),
    top_k("top_k_smallest", (3, 5), 3, 1, False, rand(3, 5)),
    top_k("top_k_axis0", (4, 3), 2, 0, True, rand(4, 3)),
    top_k("top_k_all", (5,), 5, 0, False, rand(5)),
    top_k("top_k_rank3", (2, 4, 3), 1, 1, True, rand(2, 4, 3)),
]
