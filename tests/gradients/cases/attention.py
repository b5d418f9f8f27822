"""Gradient cases: dlc.attention (ir/gradients/NNGradients.cpp), whose rule
builds dlc.attention_grad: softmax(q @ k^T * scale + bias) @ v against
torch.autograd through the same formula, and finite differences.

The bias is a constant inside @f (it has no gradient): a finite position
bias with -inf above the diagonal (a causal mask), or a key-padding row.
"""
import numpy as np
import torch
from gradcheck import Case, rand

NEG_INF = "0xFFF0000000000000"


def tensor_type(shape, element="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def dense(array):
    return "dense<" + np.array2string(
        np.asarray(array), separator=", ", floatmode="unique",
        threshold=1 << 20).replace("\n", "") + ">"


def attention_case(name, q, k, v, scale, bias=None):
    """q [..., Tq, D], k [..., Tk, D], v [..., Tk, Dv]; `bias` (numpy, -inf
    allowed) broadcastable to the scores."""
    out = q[:-1] + [v[-1]]
    lse = q[:-1]
    lines = []
    bias_operand = ""
    bias_type = ""
    if bias is not None:
        finite = np.where(np.isfinite(bias), bias, 0.0)
        keep = np.isfinite(bias)
        bt = tensor_type(list(bias.shape))
        lines += [
            f"  %finite = dlc.constant {dense(finite)} : {bt}",
            f"  %keep = dlc.constant {dense(keep).replace('True', 'true').replace('False', 'false')} : {tensor_type(list(bias.shape), 'i1')}",
            f"  %inf = dlc.constant dense<{NEG_INF}> : tensor<f64>",
            f"  %bias = dlc.select %keep, %finite, %inf : "
            f"{tensor_type(list(bias.shape), 'i1')}, {bt}, tensor<f64> -> {bt}",
        ]
        bias_operand = " bias %bias"
        bias_type = f", {bt}"
    lines.append(
        f"  %out, %lse = dlc.attention %q, %k, %v{bias_operand} scale {scale!r}"
        f" : {tensor_type(q)}, {tensor_type(k)}, {tensor_type(v)}{bias_type}"
        f" -> {tensor_type(out)}, {tensor_type(lse)}")
    body = "\n".join(lines)
    text = f"""
func.func @f(%q: {tensor_type(q)}, %k: {tensor_type(k)}, %v: {tensor_type(v)}) -> {tensor_type(out)} {{
{body}
  return %out : {tensor_type(out)}
}}"""
    torch_bias = None if bias is None else torch.from_numpy(bias)

    def reference(a, b, c):
        scores = torch.matmul(a, b.transpose(-1, -2)) * scale
        if torch_bias is not None:
            scores = scores + torch_bias
        return torch.matmul(torch.softmax(scores, dim=-1), c)
    return Case(name, text, torch=reference,
                inputs=[rand(*q), rand(*k), rand(*v)])


def causal(tq, tk, slope):
    i, j = np.meshgrid(np.arange(tq), np.arange(tk), indexing="ij")
    return np.where(j <= i, -slope * (i - j), -np.inf).astype(np.float64)


CASES = [
    attention_case("attention_rank2", [3, 2], [4, 2], [4, 5], 0.7),
    attention_case("attention_batched", [2, 3, 4], [2, 5, 4], [2, 5, 3], 0.5),
    attention_case("attention_causal_heads", [2, 2, 4, 3], [2, 2, 4, 3],
                   [2, 2, 4, 3], 3 ** -0.5,
                   causal(4, 4, 0.25).reshape(1, 1, 4, 4)),
    # A padded key: a bias row broadcast over the queries.
    attention_case("attention_key_padding", [2, 3, 2], [2, 4, 2], [2, 4, 2],
                   1.0, np.array([0.0, 0.5, -np.inf, -1.0])),
]
