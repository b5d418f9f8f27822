"""Gradient cases for the elementwise ops, select, cast and dropout.

Every unary op, every binary op with broadcasting on either side (and both),
ranks 0 to 4, and the points where PyTorch picks a subgradient: abs at 0,
maximum/minimum ties (split evenly), pow at a zero base and a zero exponent.
Inputs keep FD away from kinks: data arrays for the piecewise ops, domains
bounded away from singularities for the rest.
"""
import os
import sys

import numpy as np
import torch
from gradcheck import Case, rand, positive, data

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools"))
from philox import philox_uniform  # noqa: E402


def ttype(shape, element="f64"):
    """The MLIR tensor type of `shape`."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def unary(name, op, shape, fn, spec, **kw):
    t = ttype(shape)
    return Case(name, f"""
func.func @f(%x: {t}) -> {t} {{
  %y = dlc.{op} %x : {t}
  return %y : {t}
}}""", torch=fn, inputs=[spec], **kw)


def binary(name, op, lshape, rshape, fn, lspec, rspec, **kw):
    l, r = ttype(lshape), ttype(rshape)
    o = ttype(np.broadcast_shapes(lshape, rshape))
    return Case(name, f"""
func.func @f(%x: {l}, %y: {r}) -> {o} {{
  %z = dlc.{op} %x, %y : {l}, {r} -> {o}
  return %z : {o}
}}""", torch=fn, inputs=[lspec, rspec], **kw)


def with_constant(name, op, shape, value, fn, spec, **kw):
    """`x <op> value` with a rank-0 constant right operand (no gradient)."""
    t = ttype(shape)
    return Case(name, f"""
func.func @f(%x: {t}) -> {t} {{
  %c = dlc.constant dense<{value}> : tensor<f64>
  %y = dlc.{op} %x, %c : {t}, tensor<f64> -> {t}
  return %y : {t}
}}""", torch=fn, inputs=[spec], **kw)


# Away from 0, integers and half-integers: safe for FD through abs, sign,
# floor, ceil, round and truncation.
PIECEWISE = np.array([[-1.7, -0.2, 0.3], [0.8, 1.3, 2.6]])


def philox_keep(seed, stream, count, ratio):
    """dlc.dropout's keep mask (runtime/support/Philox.h), element by element."""
    return np.array([philox_uniform(seed, stream, i) >= ratio
                     for i in range(count)], dtype=bool)


def dropout(name, shape, ratio, stream, seed):
    t = ttype(shape)
    m = ttype(shape, "i1")

    def fn(x, s):
        keep = philox_keep(int(s), stream, x.numel(), ratio) if ratio > 0 else \
            np.ones(x.numel(), dtype=bool)
        mask = torch.from_numpy(keep.reshape(tuple(shape))).to(x.dtype)
        return x * mask * (1.0 / (1.0 - ratio))

    return Case(name, f"""
func.func @f(%x: {t}, %seed: tensor<i64>) -> {t} {{
  %y, %mask = dlc.dropout %x, %seed {{ratio = {ratio!r} : f64, stream = {stream} : i64}}
      : {t}, tensor<i64> -> {m}
  return %y : {t}
}}""", torch=fn, inputs=[rand(*shape), data(np.array(seed, dtype=np.int64))])


CASES = [
    # Unary ops.
    unary("neg", "neg", (2, 3, 4), lambda x: -x, rand(2, 3, 4)),
    unary("abs", "abs", (2, 3), torch.abs, data(PIECEWISE)),
    unary("abs_at_zero", "abs", (4,), torch.abs,
          data(np.array([0.0, -0.0, 1.5, -2.0])), fd=False),
    unary("sign", "sign", (2, 3), torch.sign, data(PIECEWISE)),
    unary("exp", "exp", (), torch.exp, rand()),
    unary("exp_2d", "exp", (3, 4), torch.exp, rand(3, 4)),
    unary("log", "log", (3, 4), torch.log, positive(3, 4)),
    unary("sqrt", "sqrt", (2, 2, 2, 2), torch.sqrt, positive(2, 2, 2, 2)),
    unary("rsqrt", "rsqrt", (5,), torch.rsqrt, positive(5)),
    unary("reciprocal", "reciprocal", (3, 4), torch.reciprocal, positive(3, 4)),
    unary("reciprocal_negative", "reciprocal", (3,), torch.reciprocal,
          rand(3, low=-2.0, high=-0.5)),
    unary("ceil", "ceil", (2, 3), torch.ceil, data(PIECEWISE)),
    unary("floor", "floor", (2, 3), torch.floor, data(PIECEWISE)),
    unary("round", "round", (2, 3), torch.round, data(PIECEWISE)),
    unary("round_halves", "round", (4,), torch.round,
          data(np.array([0.5, 1.5, -2.5, 3.0])), fd=False),
    unary("erf", "erf", (3, 4), torch.erf, rand(3, 4)),
    unary("sin", "sin", (4, 3), torch.sin, rand(4, 3)),
    unary("cos", "cos", (3,), torch.cos, rand(3)),
    unary("tanh", "tanh", (2, 3, 4), torch.tanh, rand(2, 3, 4)),
    unary("tan", "tan", (3, 4), torch.tan, rand(3, 4, low=-1.2, high=1.2)),
    unary("asin", "asin", (3, 4), torch.asin, rand(3, 4, low=-0.9, high=0.9)),
    unary("acos", "acos", (3, 4), torch.acos, rand(3, 4, low=-0.9, high=0.9)),
    unary("atan", "atan", (3, 4), torch.atan, rand(3, 4)),
    unary("sinh", "sinh", (2, 3), torch.sinh, rand(2, 3)),
    unary("cosh", "cosh", (2, 3), torch.cosh, rand(2, 3)),
    unary("asinh", "asinh", (3, 4), torch.asinh, rand(3, 4)),
    unary("acosh", "acosh", (3, 4), torch.acosh, positive(3, 4, low=1.1, high=3.0)),
    unary("atanh", "atanh", (3, 4), torch.atanh, rand(3, 4, low=-0.9, high=0.9)),
    unary("sigmoid", "sigmoid", (2, 3, 4, 5), torch.sigmoid, rand(2, 3, 4, 5)),
    unary("sigmoid_scalar", "sigmoid", (), torch.sigmoid, rand()),

    # add: same shapes, broadcasting on either side, on both, rank 0 and 4.
    binary("add", "add", (3, 4), (3, 4), torch.add, rand(3, 4), rand(3, 4)),
    binary("add_broadcast_rhs", "add", (2, 3), (3,), torch.add,
           rand(2, 3), rand(3)),
    binary("add_broadcast_lhs", "add", (3,), (2, 3), torch.add,
           rand(3), rand(2, 3)),
    binary("add_broadcast_both", "add", (2, 1), (1, 3), torch.add,
           rand(2, 1), rand(1, 3)),
    binary("add_scalar", "add", (), (2, 3), torch.add, rand(), rand(2, 3)),
    binary("add_scalars", "add", (), (), torch.add, rand(), rand()),
    binary("add_rank4", "add", (4, 1, 3, 1), (2, 1, 5), torch.add,
           rand(4, 1, 3, 1), rand(2, 1, 5)),

    binary("sub", "sub", (3, 4), (3, 4), torch.sub, rand(3, 4), rand(3, 4)),
    binary("sub_broadcast_both", "sub", (1, 3), (2, 1), torch.sub,
           rand(1, 3), rand(2, 1)),
    binary("sub_scalar_lhs", "sub", (), (4,), torch.sub, rand(), rand(4)),

    binary("mul", "mul", (3, 4), (3, 4), torch.mul, rand(3, 4), rand(3, 4)),
    binary("mul_broadcast_rhs", "mul", (2, 3), (2, 1), torch.mul,
           rand(2, 3), rand(2, 1)),
    binary("mul_scalar_lhs", "mul", (), (3, 4), torch.mul, rand(), rand(3, 4)),
    binary("mul_rank3", "mul", (3, 1, 4), (2, 1), torch.mul,
           rand(3, 1, 4), rand(2, 1)),
    # Both operands are one value: the two contributions add up (2x).
    Case("mul_same_operand", """
func.func @f(%x: tensor<3xf64>) -> tensor<3xf64> {
  %y = dlc.mul %x, %x : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  return %y : tensor<3xf64>
}""", torch=lambda x: x * x, inputs=[rand(3)]),

    binary("div", "div", (3, 4), (3, 4), torch.div, rand(3, 4), positive(3, 4)),
    binary("div_broadcast_rhs", "div", (3, 4), (4,), torch.div,
           rand(3, 4), rand(4, low=-2.0, high=-0.5)),
    binary("div_broadcast_lhs", "div", (4,), (3, 4), torch.div,
           rand(4), positive(3, 4)),
    binary("div_scalar_rhs", "div", (2, 1), (), torch.div, rand(2, 1), positive()),

    # fmod: x / y stays away from integers, where fmod jumps.
    binary("rem", "rem", (2, 3), (2, 3), torch.fmod,
           data(np.array([[5.3, -5.3, 2.2], [-7.1, 0.4, 3.9]])),
           data(np.array([[2.0, 1.5, -0.7], [2.0, 1.5, -0.7]]))),
    binary("rem_broadcast_rhs", "rem", (2, 3), (), torch.fmod,
           data(np.array([[1.0, -2.3, 3.1], [0.2, -0.5, 1.6]])),
           data(np.array(0.7))),
    binary("rem_broadcast_lhs", "rem", (3,), (2, 3), torch.fmod,
           data(np.array([5.3, -5.3, 2.2])),
           data(np.array([[2.0, 1.5, -0.7], [-2.4, 3.0, 0.9]]))),

    # pow: both operands get gradients where the base is positive.
    binary("pow", "pow", (3, 4), (3, 4), torch.pow, positive(3, 4), rand(3, 4)),
    binary("pow_broadcast_rhs", "pow", (2, 3), (), torch.pow,
           positive(2, 3), rand()),
    binary("pow_broadcast_lhs", "pow", (), (3,), torch.pow, positive(), rand(3)),
    binary("pow_broadcast_both", "pow", (2, 1), (1, 3), torch.pow,
           positive(2, 1), rand(1, 3)),
    # torch's special cases: exponent 0 gives the base no gradient, a zero
    # base with exponent >= 0 gives the exponent none (FD sees 0^-h = inf).
    binary("pow_zero_base", "pow", (6,), (6,), torch.pow,
           data(np.array([0.0, 0.0, 0.0, 0.0, 1.5, 2.0])),
           data(np.array([0.0, 1.0, 2.0, 3.0, 0.0, 2.5])), fd=False),
    # A negative base with a constant integer exponent (the exponent's
    # gradient, log of a negative number, is built but not used).
    with_constant("pow_negative_base_cube", "pow", (3, 4), "3.0",
                  lambda x: torch.pow(x, 3.0), rand(3, 4)),
    with_constant("pow_square", "pow", (5,), "2.0",
                  lambda x: torch.pow(x, 2.0), rand(5)),

    binary("max", "max", (2, 3), (2, 3), torch.maximum, rand(2, 3), rand(2, 3)),
    binary("max_broadcast_rhs", "max", (2, 3), (3,), torch.maximum,
           data(np.array([[0.5, -1.0, 2.0], [-0.5, 1.5, 0.1]])),
           data(np.array([0.1, 0.2, 0.3]))),
    binary("max_broadcast_lhs", "max", (), (4,), torch.maximum,
           data(np.array(0.25)), data(np.array([-1.0, 0.5, 1.5, 0.0]))),
    binary("max_ties", "max", (2, 3), (2, 3), torch.maximum,
           data(np.array([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]])),
           data(np.array([[1.0, 1.0, -1.0], [0.7, 0.5, 2.0]])), fd=False),
    binary("max_ties_broadcast", "max", (2, 3), (), torch.maximum,
           data(np.array([[0.5, 1.0, 0.5], [-2.0, 0.5, 0.6]])),
           data(np.array(0.5)), fd=False),

    binary("min", "min", (2, 3), (2, 3), torch.minimum, rand(2, 3), rand(2, 3)),
    binary("min_broadcast_both", "min", (2, 1), (1, 3), torch.minimum,
           data(np.array([[0.3], [-0.6]])),
           data(np.array([[1.0, -1.0, 0.0]]))),
    binary("min_ties", "min", (2, 3), (2, 3), torch.minimum,
           data(np.array([[1.0, 2.0, -1.0], [0.5, 0.5, 3.0]])),
           data(np.array([[1.0, 1.0, -1.0], [0.7, 0.5, 2.0]])), fd=False),
    binary("min_ties_broadcast", "min", (3,), (2, 3), torch.minimum,
           data(np.array([0.5, -1.0, 2.0])),
           data(np.array([[0.5, -1.0, 1.0], [0.5, 0.0, 2.0]])), fd=False),

    # select: the condition gets no gradient; either branch may broadcast.
    Case("select", """
func.func @f(%c: tensor<2x3xi1>, %a: tensor<2x3xf64>, %b: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %y = dlc.select %c, %a, %b : tensor<2x3xi1>, tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda c, a, b: torch.where(c.bool(), a, b),
         inputs=[data(np.array([[True, False, True], [False, False, True]])),
                 rand(2, 3), rand(2, 3)]),
    Case("select_broadcast", """
func.func @f(%c: tensor<3xi1>, %a: tensor<2x3xf64>, %b: tensor<f64>) -> tensor<2x3xf64> {
  %y = dlc.select %c, %a, %b : tensor<3xi1>, tensor<2x3xf64>, tensor<f64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda c, a, b: torch.where(c.bool(), a, b),
         inputs=[data(np.array([True, False, True])), rand(2, 3), rand()]),
    Case("select_broadcast_branches", """
func.func @f(%c: tensor<2x1xi1>, %a: tensor<1x3xf64>, %b: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %y = dlc.select %c, %a, %b : tensor<2x1xi1>, tensor<1x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda c, a, b: torch.where(c.bool(), a, b),
         inputs=[data(np.array([[True], [False]])), rand(1, 3), rand(2, 3)]),
    Case("select_scalar_branches", """
func.func @f(%c: tensor<2x3xi1>, %a: tensor<f64>, %b: tensor<f64>) -> tensor<2x3xf64> {
  %y = dlc.select %c, %a, %b : tensor<2x3xi1>, tensor<f64>, tensor<f64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda c, a, b: torch.where(c.bool(), a, b),
         inputs=[data(np.array([[True, False, True], [True, True, False]])),
                 rand(), rand()]),

    # cast: float to float passes the gradient (rounded like torch rounds
    # it); FD is off where the forward rounds to a narrower type.
    Case("cast_f32_round_trip", """
func.func @f(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %a = dlc.cast %x : tensor<3x4xf64> to tensor<3x4xf32>
  %b = dlc.cast %a : tensor<3x4xf32> to tensor<3x4xf64>
  return %b : tensor<3x4xf64>
}""", torch=lambda x: x.float().double(), inputs=[rand(3, 4)], fd=False),
    Case("cast_f16_round_trip", """
func.func @f(%x: tensor<5xf64>) -> tensor<5xf64> {
  %a = dlc.cast %x : tensor<5xf64> to tensor<5xf16>
  %b = dlc.cast %a : tensor<5xf16> to tensor<5xf64>
  return %b : tensor<5xf64>
}""", torch=lambda x: x.half().double(), inputs=[rand(5)], fd=False),
    Case("cast_from_int", """
func.func @f(%x: tensor<3xf64>, %n: tensor<3xi64>) -> tensor<3xf64> {
  %a = dlc.cast %n : tensor<3xi64> to tensor<3xf64>
  %y = dlc.mul %x, %a : tensor<3xf64>, tensor<3xf64> -> tensor<3xf64>
  return %y : tensor<3xf64>
}""", torch=lambda x, n: x * n.double(),
         inputs=[rand(3), data(np.array([2, -1, 5], dtype=np.int64))]),
    # Through an integer: no gradient (truncation is piecewise constant).
    Case("cast_through_int", """
func.func @f(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %i = dlc.cast %x : tensor<2x3xf64> to tensor<2x3xi64>
  %a = dlc.cast %i : tensor<2x3xi64> to tensor<2x3xf64>
  %y = dlc.mul %x, %a : tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}""", torch=lambda x: x * x.long().double(), inputs=[data(PIECEWISE)]),

    # dropout: g * mask / (1 - ratio); the mask is recomputed here with the
    # same Philox stream, so the forward values are checked too.
    dropout("dropout", (4, 5), 0.25, 0, 7),
    dropout("dropout_rank3_stream", (2, 3, 4), 0.5, 3, 123456789012),
    dropout("dropout_ratio_zero", (6,), 0.0, 1, 5),
]
