#!/usr/bin/env python3
"""Checks dlc-optimizer's training steps against torch.optim.

    check_optimizers.py --build BUILD_DIR [-k SUBSTRING]

A linear model y = x W + b with two float32 dlc.global parameters goes
through `dlc-opt --dlc-functionalize --dlc-add-loss=loss=mse --dlc-autodiff
--dlc-optimizer=...`. Its @train_step runs STEPS times on the reference
evaluator, one dlc-run per step: each step binds the batch, and the
parameters, optimizer state and step count that the previous step returned
(results carry the dlc.name of the argument they update); the first step
and the hyperparameters take the globals' initial values (dlc-run binds an
argument of a global that --inputs leaves out to the global). After each
step the loss, the learning rate (and the gradient norm when clipping) and
the new parameters are compared with PyTorch doing the same steps:
torch.optim's SGD, Adam or AdamW, torch.nn.utils.clip_grad_norm_, and a
LambdaLR with HuggingFace's schedule factors.
"""
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F

import common

STEPS = 5
# float32 on both sides: the same update formulas, but torch fuses some
# (FMA in its vectorized add with alpha, lerp, addcdiv) and the evaluator
# accumulates matmul and sums in float64, so each value may differ by a few
# float32 ulps (6e-8 relative), and the differences feed forward through 5
# steps (Adam's m / sqrt(v) divides two perturbed values). 1e-5 relative
# (and 1e-6 absolute for values near 0, against the O(0.1-1) entries) is
# two orders of magnitude above that and far below any formula error
# (a wrong bias correction, schedule step or decay order moves values by
# 1e-3 or more).
RTOL, ATOL = 1e-5, 1e-6

W0 = np.random.default_rng(1).uniform(-1, 1, size=(3, 2)).astype(np.float32)
B0 = np.random.default_rng(2).uniform(-1, 1, size=(2,)).astype(np.float32)


def batches():
    rng = np.random.default_rng(3)
    return [(rng.uniform(-1, 1, size=(4, 3)).astype(np.float32),
             rng.uniform(-1, 1, size=(4, 2)).astype(np.float32))
            for _ in range(STEPS)]


MODEL = f"""
dlc.global @fc.weight : tensor<3x2xf32> = {common.mlir_dense(W0)} : tensor<3x2xf32>
dlc.global @fc.bias : tensor<2xf32> = {common.mlir_dense(B0)} : tensor<2xf32>
func.func @forward_train(%x: tensor<4x3xf32> {{dlc.name = "x"}}) -> (tensor<4x2xf32> {{dlc.name = "y"}}) {{
  %w = dlc.global_load @fc.weight : tensor<3x2xf32>
  %b = dlc.global_load @fc.bias : tensor<2xf32>
  %0 = dlc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %1 = dlc.add %0, %b : tensor<4x2xf32>, tensor<2xf32> -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}}
"""


# HuggingFace's schedules (transformers.optimization): the factor at s
# completed steps, warmup W, total T.
def constant_factor(W):
    return lambda s: s / max(1, W) if s < W else 1.0


def linear_factor(W, T):
    return lambda s: (s / max(1, W) if s < W
                      else max(0.0, (T - s) / max(1, T - W)))


def cosine_factor(W, T):
    def f(s):
        if s < W:
            return s / max(1, W)
        progress = min(1.0, (s - W) / max(1, T - W))
        return 0.5 * (1.0 + math.cos(math.pi * progress))
    return f


class OptimizerCase:
    """`options`: dlc-optimizer's; `make(params)`: the torch.optim
    optimizer; `clip`: clip_grad_norm_'s max norm (0: none); `factor`: the
    schedule's factor function (None: constant 1)."""

    def __init__(self, name, options, make, clip=0.0, factor=None):
        self.name, self.options, self.make = name, options, make
        self.clip, self.factor = clip, factor


def torch_steps(case, data):
    """PyTorch's trajectory: per step the loss, lr, grad norm (or None) and
    the parameters after the step."""
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    opt = case.make([w, b])
    sched = (torch.optim.lr_scheduler.LambdaLR(opt, case.factor)
             if case.factor else None)
    steps = []
    for x, y in data:
        opt.zero_grad()
        loss = F.mse_loss(torch.tensor(x) @ w + b, torch.tensor(y))
        loss.backward()
        norm = (torch.nn.utils.clip_grad_norm_([w, b], case.clip).item()
                if case.clip else None)
        lr = opt.param_groups[0]["lr"]
        opt.step()
        if sched:
            sched.step()
        steps.append((loss.item(), lr, norm, w.detach().numpy().copy(),
                      b.detach().numpy().copy()))
    return steps


METRICS = ("loss", "lr", "grad_norm")


def run_case(tools, case):
    data = batches()
    module = tools.pipeline(MODEL, [
        "--dlc-functionalize", "--dlc-add-loss=loss=mse", "--dlc-autodiff",
        f"--dlc-optimizer={case.options}"])
    expected = torch_steps(case, data)
    state = {}
    worst = 0.0
    for k, ((x, y), (loss, lr, norm, w, b)) in enumerate(zip(data, expected)):
        out = tools.call(module, "train_step", {"x": x, "labels": y, **state})
        if int(out["dlc.step"]) != k + 1:
            raise common.Mismatch(f"step {k}: dlc.step is {out['dlc.step']}, not {k + 1}")
        checks = [("loss", out["loss"], loss), ("lr", out["lr"], lr),
                  ("fc.weight", out["fc.weight"], w), ("fc.bias", out["fc.bias"], b)]
        if norm is not None:
            checks.append(("grad_norm", out["grad_norm"], norm))
        elif "grad_norm" in out:
            raise common.Mismatch("grad_norm is reported without clipping")
        for what, actual, want in checks:
            # lr is computed in float64 from the float32 dlc.lr; PyTorch's
            # is a double from the double lr: compare at float32 precision.
            worst = max(worst, common.expect_close(
                f"step {k}: {what}", actual, np.float32(want), RTOL, ATOL))
        # The next step reads what this one returned, by name.
        state = {name: value for name, value in out.items()
                 if name not in METRICS}
    return f"{STEPS} steps, largest difference {worst:.1e}"


def cases():
    sgd = lambda **kw: (lambda p: torch.optim.SGD(p, foreach=False, **kw))
    adam = lambda **kw: (lambda p: torch.optim.Adam(p, foreach=False, **kw))
    adamw = lambda **kw: (lambda p: torch.optim.AdamW(p, foreach=False, **kw))
    base = [
        ("sgd", "optimizer=sgd lr=0.1", sgd(lr=0.1)),
        ("sgd_momentum", "optimizer=sgd lr=0.1 momentum=0.9",
         sgd(lr=0.1, momentum=0.9)),
        ("sgd_dampening", "optimizer=sgd lr=0.1 momentum=0.9 dampening=0.1",
         sgd(lr=0.1, momentum=0.9, dampening=0.1)),
        ("sgd_nesterov", "optimizer=sgd lr=0.1 momentum=0.9 nesterov=true",
         sgd(lr=0.1, momentum=0.9, nesterov=True)),
        ("sgd_weight_decay", "optimizer=sgd lr=0.1 momentum=0.9 weight-decay=0.01",
         sgd(lr=0.1, momentum=0.9, weight_decay=0.01)),
        ("adam", "optimizer=adam lr=0.05", adam(lr=0.05)),
        ("adam_weight_decay", "optimizer=adam lr=0.05 weight-decay=0.1",
         adam(lr=0.05, weight_decay=0.1)),
        ("adam_betas_eps", "optimizer=adam lr=0.05 betas=0.8,0.99 eps=1e-3",
         adam(lr=0.05, betas=(0.8, 0.99), eps=1e-3)),
        # AdamW's default weight decay, 0.01, on both sides.
        ("adamw", "optimizer=adamw lr=0.05", adamw(lr=0.05)),
    ]
    # The clipping threshold is below every step's gradient norm here, so
    # each step clips.
    clip = 0.3
    cosine = "schedule=cosine warmup-steps=2 total-steps=6"
    result = []
    for name, options, make in base:
        result += [
            OptimizerCase(name, options, make),
            OptimizerCase(name + "+clip", f"{options} clip-grad-norm={clip}", make,
                          clip=clip),
            OptimizerCase(name + "+cosine_warmup", f"{options} {cosine}", make,
                          factor=cosine_factor(2, 6)),
            OptimizerCase(name + "+clip+cosine_warmup",
                          f"{options} clip-grad-norm={clip} {cosine}", make,
                          clip=clip, factor=cosine_factor(2, 6)),
        ]
    # The other schedules, and a cosine that reaches 0 within the steps
    # (total-steps 4 < 5: the factor stays at 0 after).
    result += [
        OptimizerCase("sgd_momentum+constant_warmup",
                      "optimizer=sgd lr=0.1 momentum=0.9 schedule=constant warmup-steps=3",
                      sgd(lr=0.1, momentum=0.9), factor=constant_factor(3)),
        OptimizerCase("adam+linear_warmup",
                      "optimizer=adam lr=0.05 schedule=linear warmup-steps=1 total-steps=4",
                      adam(lr=0.05), factor=linear_factor(1, 4)),
        OptimizerCase("adamw+linear",
                      "optimizer=adamw lr=0.05 schedule=linear total-steps=8",
                      adamw(lr=0.05), factor=linear_factor(0, 8)),
        OptimizerCase("sgd+cosine_past_total",
                      "optimizer=sgd lr=0.1 schedule=cosine warmup-steps=1 total-steps=4",
                      sgd(lr=0.1), factor=cosine_factor(1, 4)),
    ]
    return result


if __name__ == "__main__":
    sys.exit(common.main(__doc__.splitlines()[0], cases(), run_case))
