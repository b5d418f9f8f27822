"""Gradient cases: dlc.cross_entropy (ir/gradients/NNGradients.cpp), whose
rule builds dlc.cross_entropy_grad, against torch.nn.functional.
cross_entropy(reduction='none') and finite differences.

The labels are a constant inside @f (they carry no gradient), with ignored
positions and label smoothing among the cases.
"""
import numpy as np
import torch
import torch.nn.functional as F
from gradcheck import Case, rand


def tensor_type(shape, element="f64"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def cross_entropy_case(name, shape, labels, ignore_index=-100, smoothing=0.0):
    """Logits of `shape` [..., C]; `labels` a nested list of shape[:-1]."""
    labels = np.asarray(labels, dtype=np.int64)
    rows = list(shape[:-1])
    lt = tensor_type(rows, "i64")
    text = f"""
func.func @f(%x: {tensor_type(shape)}) -> {tensor_type(rows)} {{
  %l = dlc.constant dense<{labels.tolist()}> : {lt}
  %loss, %lse = dlc.cross_entropy %x, %l ignore_index {ignore_index} label_smoothing {smoothing!r} : {tensor_type(shape)}, {lt} -> {tensor_type(rows)}, {tensor_type(rows)}
  return %loss : {tensor_type(rows)}
}}"""
    target = torch.from_numpy(labels)

    def reference(x):
        classes = x.shape[-1]
        loss = F.cross_entropy(x.reshape(-1, classes), target.reshape(-1),
                               reduction="none", ignore_index=ignore_index,
                               label_smoothing=smoothing)
        return loss.reshape(target.shape)
    return Case(name, text, torch=reference, inputs=[rand(*shape)])


CASES = [
    cross_entropy_case("cross_entropy_rows", [4, 5], [0, 4, 2, 2]),
    cross_entropy_case("cross_entropy_ignored", [2, 3, 6],
                       [[1, -100, 5], [0, 3, -100]]),
    cross_entropy_case("cross_entropy_smoothing", [3, 7], [6, 0, 3],
                       smoothing=0.1),
    cross_entropy_case("cross_entropy_smoothing_ignore_index", [2, 2, 4],
                       [[1, 2], [2, 0]], ignore_index=2, smoothing=0.3),
]
