#!/usr/bin/env python3
"""Checks dlc-add-loss's losses and their gradients against PyTorch.

    check_losses.py --build BUILD_DIR [-k SUBSTRING]

For each case, a model function that returns its input (the logits or
predictions, float64) goes through `dlc-opt --dlc-functionalize
--dlc-add-loss=...`; @loss runs on the reference evaluator and is compared
with torch.nn.functional's loss in float64. Then `--dlc-autodiff=vjp=true`
builds @loss_vjp, whose gradients with respect to the logits (and to a float
label) for a random cotangent are compared with torch.autograd's.
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F

import common

# Both sides compute the same float64 formulas in a different order (the
# evaluator accumulates sums in its own order; torch fuses log_softmax and
# its backward): about 1e-16 relative per operation on values of order 1,
# so 1e-12 relative is tight yet safe. Gradient entries are compared to
# 1e-12 of the largest entry as well, since some are exactly 0 on one side
# (ignored positions, ties) and a rounding residue on the other.
RTOL = 1e-12


class LossCase:
    """`options`: dlc-add-loss's; `logits`, `labels`: the data (labels None
    for loss=model); `torch_loss(x, t)`: the same loss in PyTorch."""

    def __init__(self, name, options, logits, labels, torch_loss):
        self.name, self.options = name, options
        self.logits, self.labels, self.torch_loss = logits, labels, torch_loss


def model(shape):
    t = common.mlir_type(shape, "f64")
    return f"""
func.func @forward_train(%x: {t} {{dlc.name = "x"}}) -> ({t} {{dlc.name = "y"}}) {{
  return %x : {t}
}}
"""


def run_case(tools, case):
    x = case.logits
    label_name = "labels"
    for option in case.options.split():
        if option.startswith("label="):
            label_name = option[len("label="):]
    inputs = {"x": x}
    if case.labels is not None:
        inputs[label_name] = case.labels
    add_loss = ["--dlc-functionalize", f"--dlc-add-loss={case.options}"]

    # PyTorch: the loss, then the gradients for a cotangent of the loss.
    cotangent = np.float64(1.7)
    xt = torch.tensor(x, requires_grad=True)
    float_label = case.labels is not None and case.labels.dtype == np.float64
    tt = (None if case.labels is None
          else torch.tensor(case.labels, requires_grad=float_label))
    expected = case.torch_loss(xt, tt)
    expected.backward(torch.tensor(cotangent))

    loss = tools.call(tools.pipeline(model(x.shape), add_loss), "loss", inputs)
    notes = ["loss " + "%.1e" % common.expect_close(
        "loss", loss["loss"], expected.detach().numpy(), RTOL, 0.0)]

    # @loss_vjp: x, the label, then the cotangent (argument 1 or 2); the
    # loss, then the gradients of the float arguments in order.
    vjp_module = tools.pipeline(model(x.shape), add_loss + ["--dlc-autodiff=vjp=true"])
    vjp = tools.call(vjp_module, "loss_vjp",
                     {**inputs, f"arg{len(inputs)}": cotangent})
    common.expect_close("loss of @loss_vjp", vjp["loss"],
                        expected.detach().numpy(), RTOL, 0.0)
    grads = [("logits", xt)] + ([("label", tt)] if float_label else [])
    for i, (what, t) in enumerate(grads):
        g = t.grad.numpy()
        err = common.expect_close(f"gradient of the {what}", vjp[f"result{i + 1}"],
                                  g, RTOL, RTOL * np.abs(g).max())
        notes.append(f"d{what} {err:.1e}")
    return ", ".join(notes)


def ce(ignore_index=-100, label_smoothing=0.0):
    """torch's cross entropy with the classes on the last axis (torch wants
    them on axis 1)."""
    def loss(x, t):
        if x.dim() > 2:
            x = x.movedim(-1, 1)
        return F.cross_entropy(x, t, ignore_index=ignore_index,
                               label_smoothing=label_smoothing)
    return loss


def cases():
    rng = np.random.default_rng(0)
    u = lambda *s, lo=-3.0, hi=3.0: rng.uniform(lo, hi, size=s)
    classes = lambda n, *s: rng.integers(0, n, size=s).astype(np.int64)

    ties = u(6, 5)
    ties[0] = [2.0, 2.0, 1.0, -1.0, 2.0]  # three tied maxima
    ties[1] = 0.5                         # all equal
    ignored = classes(5, 6)
    ignored[[1, 4]] = -100
    custom = classes(5, 6)
    custom[[0, 2, 3]] = 2                 # ignore-index=2 drops these
    ignored3 = classes(4, 2, 3)
    ignored3[0, 1] = ignored3[1, 2] = -100
    # bce: logits around 0 (exactly 0 included: max(x, 0) and |x| have
    # kinks there) and far out, where a naive log(1 + exp(x)) overflows.
    bce_x = u(3, 4)
    bce_x[0, :2] = 0.0
    bce_x[1, :2] = [60.0, -60.0]
    # l1: predictions equal to their labels, where torch's gradient is 0.
    l1_x, l1_t = u(3, 4), u(3, 4)
    l1_t[0, :3] = l1_x[0, :3]

    return [
        LossCase("cross_entropy_2d", "loss=cross_entropy", u(6, 5), classes(5, 6), ce()),
        LossCase("cross_entropy_3d", "loss=cross_entropy", u(2, 3, 4), classes(4, 2, 3), ce()),
        LossCase("cross_entropy_ties", "loss=cross_entropy", ties, classes(5, 6), ce()),
        LossCase("cross_entropy_ignore_index", "loss=cross_entropy", u(6, 5), ignored, ce()),
        LossCase("cross_entropy_ignore_index_custom", "loss=cross_entropy ignore-index=2",
                 u(6, 5), custom, ce(ignore_index=2)),
        LossCase("cross_entropy_label_smoothing", "loss=cross_entropy label-smoothing=0.1",
                 u(6, 5), classes(5, 6), ce(label_smoothing=0.1)),
        LossCase("cross_entropy_ignore_and_smoothing",
                 "loss=cross_entropy label-smoothing=0.1", u(6, 5), ignored,
                 ce(label_smoothing=0.1)),
        LossCase("cross_entropy_3d_ignore_and_smoothing",
                 "loss=cross_entropy label-smoothing=0.1 label=targets", u(2, 3, 4),
                 ignored3, ce(label_smoothing=0.1)),
        LossCase("mse", "loss=mse", u(3, 4), u(3, 4), F.mse_loss),
        LossCase("mse_3d", "loss=mse", u(2, 3, 2), u(2, 3, 2), F.mse_loss),
        LossCase("l1", "loss=l1", l1_x, l1_t, F.l1_loss),
        LossCase("bce_with_logits", "loss=bce_with_logits", bce_x,
                 u(3, 4, lo=0.0, hi=1.0), F.binary_cross_entropy_with_logits),
        LossCase("bce_with_logits_hard_labels", "loss=bce_with_logits", u(5,),
                 rng.integers(0, 2, size=5).astype(np.float64),
                 F.binary_cross_entropy_with_logits),
        LossCase("model", "loss=model", u(1, 1), None, lambda x, t: x.reshape(())),
        LossCase("model_rank0", "loss=model", np.float64(0.25).reshape(()), None,
                 lambda x, t: x.reshape(())),
    ]


if __name__ == "__main__":
    sys.exit(common.main(__doc__.splitlines()[0], cases(), run_case))
