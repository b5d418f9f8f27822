#!/usr/bin/env python3
"""Checks dlc-optimizer's dynamic loss scaling against GradScaler.

    check_loss_scaling.py --build BUILD_DIR [-k SUBSTRING]

check_optimizers.py's linear model goes through `dlc-opt
--dlc-functionalize --dlc-add-loss=loss=mse --dlc-autodiff=loss-scale=true
--dlc-optimizer=... init-scale=... growth-interval=...`, and its
@train_step runs step after step on the reference evaluator, each step
binding what the previous one returned (as check_optimizers.py does). After
each step the loss, the learning rate, the scale the step used, the count
of skipped steps, the gradient norm when clipping, the parameters, the
optimizer state and the new scale, growth tracker and step count are
compared with PyTorch doing the same steps the way torch.cuda.amp.GradScaler
trains: scaler.scale(loss).backward(), scaler.unscale_(optimizer),
clip_grad_norm_, scaler.step(optimizer), scaler.update(), and a LambdaLR
stepped every iteration.

The scales start near float32's largest power of two so that the scaled
gradients really overflow to inf in the evaluator's float32 for some steps
(and a NaN in one batch's labels makes another step's gradients NaN). Each
step's batch is chosen for the gradient it gives: the labels are PyTorch's
prediction at that step plus 2^level * u, with u normalized so that the
largest unscaled gradient element is 2^level (see batch()). A level half
way between powers of two keeps every step's overflow decision a factor
sqrt(2) away from float32's limit, so rounding cannot flip it (asserted for
every step), and the levels below make each trajectory skip steps, grow the
scale and skip again in the pattern its case names (also asserted, so that
no case can pass without skipping and growing).
"""
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import common
from check_optimizers import B0, MODEL, W0, cosine_factor

# float32 on both sides with the same formulas as check_optimizers.py (the
# unscaling multiplies by a power of two, exact), over up to 13 steps:
# differences of a few float32 ulps (6e-8 relative) from fused operations
# and float64 accumulation, fed forward. 1e-5 relative (1e-6 absolute near
# 0) is two orders above that and far below a formula error (a bias
# correction counting skipped steps, a momentum buffer that is not the
# gradient on the first applied step, an update on a skipped step move
# values by 1e-3 or more). The scale, the tracker and the counts are exact.
RTOL, ATOL = 1e-5, 1e-6

FLOAT32_LIMIT = 2.0 ** 128  # float32 rounds what reaches it to inf
# A decision counts as robust when the float64 value it rests on is this
# factor from FLOAT32_LIMIT: far above float32's rounding (and the
# evaluator's float64 accumulation), far below the sqrt(2) the levels give.
MARGIN = 1.1

# A batch whose labels hold a NaN; the rest of it gives level 0.5, which no
# scale in these trajectories overflows, so the NaN alone skips the step.
NAN = "nan"

# The trajectory patterns each case is asserted to contain.
SKIPS_IN_A_ROW = "two skipped steps in a row"
GROWTH = "a growth of the scale"
SKIP_AFTER_GROWTH = "a skipped step right after a growth"
NAN_SKIP = "a step skipped for a NaN gradient (no inf)"
CAPPED_GROWTH = "a growth left out because the scale would be inf"
PATTERNS = (SKIPS_IN_A_ROW, GROWTH, SKIP_AFTER_GROWTH, NAN_SKIP)

# Growth interval 2 from 2^126, factors 2 and 0.5 (a step overflows when
# log2(scale) + level >= 128): skip, skip (to 2^124), four clean steps
# that grow the scale to 2^125 and 2^126, a skip right after that growth,
# the NaN batch (skip, to 2^124), then four clean steps that grow it to
# 2^125 and 2^126. 4 skips, 4 growths.
LEVELS_2 = [3.5, 3.5, 3.5, 2.5, 2.5, 2.5, 2.5, NAN, 0.5, 0.5, 1.5, 1.5]
# Growth interval 3 from 2^126: skip, skip, three clean (growth), one
# clean then a skip that resets the tracker, three clean (growth), a skip
# right after it, the NaN batch, and one clean step: the 13th call, the
# optimizer's 8th step. 5 skips, 2 growths.
LEVELS_3 = [3.5, 3.5, 3.5, 2.5, 2.5, 2.5, 3.5, 2.5, 2.5, 2.5, 3.5, NAN, 1.5]
# Growth interval 1 from 2^124, factors 4 and 0.25: growth to 2^126, a skip,
# growth to 2^126 again, two steps whose growth would reach 2^128 = inf and
# keep 2^126, a skip, the NaN batch, a growth.
LEVELS_CAPPED = [2.5, 2.5, 1.5, 1.5, 0.5, 2.5, NAN, 0.5]


def f32_round(value):
    """A double rounded to float32 (inf past its range), as a C++
    static_cast<float> does."""
    with np.errstate(over="ignore"):
        return float(np.float32(value))


class GradScalerReference:
    """torch.cuda.amp.GradScaler's scale, unscale_, step and update on CPU
    tensors, for one optimizer on one device.

    torch 1.13 has CPU kernels neither for
    torch._amp_foreach_non_finite_check_and_unscale_ nor for
    torch._amp_update_scale_, and GradScaler turns itself off without CUDA;
    this class does in Python what torch/cuda/amp/grad_scaler.py does with
    them, and what the CUDA kernels of aten/src/ATen/native/cuda/AmpKernels.cu
    compute:
      * scale(loss): loss * scale, a float32 scale tensor.
      * unscale_: inv_scale = scale.double().reciprocal().float(); each
        gradient (in place) flags found_inf if any element is not finite and
        is multiplied by inv_scale (left as is when inv_scale is 1), whether
        or not an inf was found.
      * step: optimizer.step() unless found_inf (_maybe_opt_step).
      * update (_amp_update_scale_cuda_kernel): found_inf: scale =
        float(scale * backoff_factor) (a product in double), tracker = 0;
        else tracker + 1 == growth_interval: scale = float(scale *
        growth_factor) only if that is finite, tracker = 0; else tracker
        += 1.
    """

    def __init__(self, init_scale, growth_factor, backoff_factor,
                 growth_interval):
        self._scale = torch.full((1,), init_scale, dtype=torch.float32)
        self._growth_tracker = torch.full((1,), 0, dtype=torch.int32)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._found_inf = None

    def get_scale(self):
        return self._scale.item()

    def get_growth_tracker(self):
        return int(self._growth_tracker.item())

    def scale(self, loss):
        return loss * self._scale

    def unscale_(self, optimizer):
        assert self._found_inf is None, "unscale_ twice before update"
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = torch.full((1,), 0.0, dtype=torch.float32)
        with torch.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if not torch.isfinite(param.grad).all():
                        found_inf.fill_(1.0)
                    if inv_scale.item() != 1.0:
                        param.grad.mul_(inv_scale)
        self._found_inf = found_inf

    def step(self, optimizer):
        """Returns whether the optimizer stepped."""
        if self._found_inf is None:
            self.unscale_(optimizer)
        if self._found_inf.item():
            return False
        optimizer.step()
        return True

    def update(self):
        scale = self._scale.item()
        if self._found_inf.item():
            self._scale.fill_(f32_round(scale * self._backoff_factor))
            self._growth_tracker.fill_(0)
        else:
            successful = self.get_growth_tracker() + 1
            if successful == self._growth_interval:
                new_scale = f32_round(scale * self._growth_factor)
                if np.isfinite(new_scale):
                    self._scale.fill_(new_scale)
                self._growth_tracker.fill_(0)
            else:
                self._growth_tracker.fill_(successful)
        self._found_inf = None


class ScalingCase:
    """`options`: dlc-optimizer's, without the loss scaling ones; `make`:
    the torch.optim optimizer; `levels`: each step's gradient level (or
    NAN); the scaler's settings; `clip` and `factor` as in
    check_optimizers.OptimizerCase; `patterns`: what the trajectory must
    contain."""

    def __init__(self, name, options, make, levels, init_scale,
                 growth_interval, growth_factor=2.0, backoff_factor=0.5,
                 clip=0.0, factor=None, patterns=PATTERNS):
        self.name, self.options, self.make = name, options, make
        self.levels, self.init_scale = levels, init_scale
        self.growth_interval = growth_interval
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.clip, self.factor, self.patterns = clip, factor, patterns

    def dlc_options(self):
        # repr: the shortest decimal that reads back as the same double
        # (the powers of two here are exact float32 values too).
        return (f"{self.options} init-scale={self.init_scale!r}"
                f" growth-factor={self.growth_factor!r}"
                f" backoff-factor={self.backoff_factor!r}"
                f" growth-interval={self.growth_interval}")


def batch_directions(count):
    """Per step a float32 batch x (4x3, entries in [0.5, 1)) and float64
    label directions u (4x2): one sign per column, so that no sum in the
    gradients cancels (a partial sum never exceeds the total, in any
    order), normalized so that the largest gradient element of labels
    pred + u, the bias's 2/8 |sum of a column of u|, is 1 (the weight's,
    x^T u 2/8, are smaller, as x < 1)."""
    rng = np.random.default_rng(5)
    result = []
    for _ in range(count):
        x = rng.uniform(0.5, 1.0, size=(4, 3)).astype(np.float32)
        u = rng.uniform(0.5, 1.0, size=(4, 2)) * rng.choice([-1.0, 1.0], size=2)
        u /= 2 / 8 * np.abs(u.sum(axis=0)).max()
        result.append((x, u))
    return result


def batch(x, u, level, pred):
    """The labels at `level`: the prediction plus 2^level u, in float32;
    for NAN, level 0.5 with one label NaN."""
    labels = pred.astype(np.float64) + 2.0 ** (0.5 if level == NAN else level) * u
    labels = labels.astype(np.float32)
    if level == NAN:
        labels[1, 0] = np.nan
    return labels


def check_decision(k, x, labels, pred, scale, level, found_inf, grads):
    """Asserts that the reference's found_inf is the one float64 predicts,
    with MARGIN to spare: an overflow with some exact scaled gradient
    element at least MARGIN times past float32's limit, a clean step with
    every exact partial sum (bounded by the sums of absolute values) that
    much below it; a NaN batch skips for its NaN only."""
    d = (pred.astype(np.float64) - labels.astype(np.float64)) * (2 / 8) * scale
    x64 = x.astype(np.float64)
    exact = np.concatenate([(x64.T @ d).ravel(), d.sum(axis=0)])
    bound = np.concatenate([(np.abs(x64).T @ np.abs(d)).ravel(),
                            np.abs(d).sum(axis=0), np.abs(d).ravel()])
    if level == NAN:
        assert found_inf, f"step {k}: the NaN batch did not skip"
        assert any(np.isnan(g).any() for g in grads) and not any(
            np.isinf(g).any() for g in grads), \
            f"step {k}: the NaN batch's gradients are not NaN without inf"
        finite = ~np.isnan(bound)
        assert bound[finite].max() * MARGIN < FLOAT32_LIMIT, \
            f"step {k}: the NaN batch's other gradients are near overflow"
        return
    if found_inf:
        assert np.abs(exact).max() >= FLOAT32_LIMIT * MARGIN, \
            f"step {k}: an overflow within {MARGIN} of float32's limit"
    else:
        assert bound.max() * MARGIN < FLOAT32_LIMIT, \
            f"step {k}: a clean step within {MARGIN} of float32's limit"


# torch.optim's state per parameter that dlc has as optimizer.NAME.KEY.
OPTIMIZER_STATE = ("momentum_buffer", "exp_avg", "exp_avg_sq")


def torch_steps(case):
    """PyTorch's trajectory under GradScalerReference. Returns the batches
    (x, labels) and per step a dict: loss, lr, grad_norm (or None), the
    scale used, skipped (this step), skipped_steps (the count after it),
    the new scale and tracker, grew / capped (the update's outcome), and
    the parameters and optimizer state after the step."""
    w = torch.tensor(W0, requires_grad=True)
    b = torch.tensor(B0, requires_grad=True)
    opt = case.make([w, b])
    sched = (torch.optim.lr_scheduler.LambdaLR(opt, case.factor)
             if case.factor else None)
    scaler = GradScalerReference(case.init_scale, case.growth_factor,
                                 case.backoff_factor, case.growth_interval)
    data, steps, skipped = [], [], 0
    for k, ((x, u), level) in enumerate(
            zip(batch_directions(len(case.levels)), case.levels)):
        with torch.no_grad():
            pred = (torch.tensor(x) @ w + b).numpy()
        labels = batch(x, u, level, pred)
        data.append((x, labels))
        opt.zero_grad()
        out = torch.tensor(x) @ w + b
        loss = F.mse_loss(out, torch.tensor(labels))
        scale = scaler.get_scale()
        tracker = scaler.get_growth_tracker()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        check_decision(k, x, labels, out.detach().numpy(), scale, level,
                       bool(scaler._found_inf.item()),
                       [w.grad.numpy(), b.grad.numpy()])
        norm = (torch.nn.utils.clip_grad_norm_([w, b], case.clip).item()
                if case.clip else None)
        lr = opt.param_groups[0]["lr"]
        stepped = scaler.step(opt)
        scaler.update()
        if sched:
            with warnings.catch_warnings():
                # A LambdaLR stepped before the optimizer's first step (the
                # first steps are skipped) warns; stepping it every
                # iteration is the point here.
                warnings.simplefilter("ignore", UserWarning)
                sched.step()
        skipped += not stepped
        new_scale = scaler.get_scale()
        grow_due = stepped and tracker + 1 == case.growth_interval
        state = {}
        for name, param in (("fc.weight", w), ("fc.bias", b)):
            for key, value in opt.state[param].items():
                if key in OPTIMIZER_STATE and value is not None:
                    state[f"optimizer.{name}.{key}"] = \
                        value.detach().numpy().copy()
        steps.append(dict(
            loss=loss.item(), lr=lr, grad_norm=norm, scale=scale,
            skipped=not stepped, skipped_steps=skipped, new_scale=new_scale,
            tracker=scaler.get_growth_tracker(),
            grew=new_scale > scale, capped=grow_due and new_scale == scale,
            nan=level == NAN, params={"fc.weight": w.detach().numpy().copy(),
                                      "fc.bias": b.detach().numpy().copy()},
            state=state))
    return data, steps


def patterns_of(steps):
    """The PATTERNS (and CAPPED_GROWTH) a trajectory contains."""
    found = set()
    for prev, step in zip(steps, steps[1:]):
        if prev["skipped"] and step["skipped"]:
            found.add(SKIPS_IN_A_ROW)
        if prev["grew"] and step["skipped"]:
            found.add(SKIP_AFTER_GROWTH)
    for step in steps:
        if step["grew"]:
            found.add(GROWTH)
        if step["capped"]:
            found.add(CAPPED_GROWTH)
        if step["nan"] and step["skipped"]:
            found.add(NAN_SKIP)
    return found


METRICS = ("loss", "lr", "grad_norm", "loss_scale", "skipped_steps")


def expect_exact(what, actual, expected):
    if np.asarray(actual).shape != () or actual.item() != expected:
        raise common.Mismatch(f"{what} is {actual!r}, PyTorch's {expected!r}")


def run_case(tools, case):
    data, expected = torch_steps(case)
    missing = [p for p in case.patterns if p not in patterns_of(expected)]
    if missing:  # the test data, not dlc, is wrong
        raise AssertionError("the reference trajectory lacks " + "; ".join(missing))
    module = tools.pipeline(MODEL, [
        "--dlc-functionalize", "--dlc-add-loss=loss=mse",
        "--dlc-autodiff=loss-scale=true",
        f"--dlc-optimizer={case.dlc_options()}"])
    state = {}
    worst = 0.0
    for k, ((x, y), want) in enumerate(zip(data, expected)):
        out = tools.call(module, "train_step", {"x": x, "labels": y, **state})
        at = f"step {k} ({'skipped' if want['skipped'] else 'applied'})"
        expect_exact(f"{at}: dlc.step", out["dlc.step"], k + 1)
        # The scale and counts are powers of two and integers: exact.
        expect_exact(f"{at}: loss_scale", out["loss_scale"], want["scale"])
        expect_exact(f"{at}: skipped_steps", out["skipped_steps"],
                     want["skipped_steps"])
        expect_exact(f"{at}: dlc.skipped_steps", out["dlc.skipped_steps"],
                     want["skipped_steps"])
        expect_exact(f"{at}: dlc.loss_scale", out["dlc.loss_scale"],
                     want["new_scale"])
        expect_exact(f"{at}: dlc.loss_scale_growth_tracker",
                     out["dlc.loss_scale_growth_tracker"], want["tracker"])
        checks = [("lr", out["lr"], want["lr"])]
        if want["nan"]:
            if not (np.isnan(out["loss"]) and np.isnan(want["loss"])):
                raise common.Mismatch(f"{at}: loss is {out['loss']!r}, "
                                      f"PyTorch's {want['loss']!r}, not both NaN")
        else:
            checks.append(("loss", out["loss"], want["loss"]))
        if want["grad_norm"] is None:
            if "grad_norm" in out:
                raise common.Mismatch("grad_norm is reported without clipping")
        elif np.isfinite(want["grad_norm"]):
            checks.append(("grad_norm", out["grad_norm"], want["grad_norm"]))
        elif np.isfinite(out["grad_norm"]) or not want["skipped"]:
            # A skipped step's norm of inf/NaN gradients: no number to
            # compare, but both sides must say it is not one.
            raise common.Mismatch(f"{at}: grad_norm is {out['grad_norm']!r}, "
                                  f"PyTorch's {want['grad_norm']!r}")
        new_state = {name: value for name, value in out.items()
                     if name not in METRICS}
        for name, value in {**want["params"], **want["state"]}.items():
            checks.append((name, out[name], value))
        # Optimizer state PyTorch has not created yet (before the first
        # applied step) is dlc's zeros.
        for name in out:
            if name.startswith("optimizer.") and name not in want["state"]:
                checks.append((name, out[name], np.zeros_like(out[name])))
        for what, actual, value in checks:
            worst = max(worst, common.expect_close(
                f"{at}: {what}", actual, np.float32(value), RTOL, ATOL))
        if want["skipped"]:
            # A skipped step leaves parameters and optimizer state as they
            # came (the first step's: the globals' initial values), bit for
            # bit.
            before = state or {"fc.weight": W0, "fc.bias": B0}
            for name, value in out.items():
                if name in want["params"] or name.startswith("optimizer."):
                    if not np.array_equal(
                            value, before.get(name, np.zeros_like(value))):
                        raise common.Mismatch(f"{at}: {name} changed")
        # The next step reads what this one returned, by name.
        state = new_state
    skips = sum(s["skipped"] for s in expected)
    growths = sum(s["grew"] for s in expected)
    capped = sum(s["capped"] for s in expected)
    return (f"{len(expected)} steps ({skips} skipped, {growths} growths"
            + (f", {capped} capped" if capped else "")
            + f"), largest difference {worst:.1e}")


def cases():
    sgd = lambda **kw: (lambda p: torch.optim.SGD(p, foreach=False, **kw))
    adam = lambda **kw: (lambda p: torch.optim.Adam(p, foreach=False, **kw))
    adamw = lambda **kw: (lambda p: torch.optim.AdamW(p, foreach=False, **kw))
    return [
        ScalingCase("sgd", "optimizer=sgd lr=0.01", sgd(lr=0.01),
                    LEVELS_2, 2.0 ** 126, 2),
        ScalingCase("sgd_momentum", "optimizer=sgd lr=0.01 momentum=0.9",
                    sgd(lr=0.01, momentum=0.9), LEVELS_2, 2.0 ** 126, 2),
        # With dampening the first applied step's buffer (the gradient)
        # differs from the later rule's (1 - dampening) gradient, so
        # counting the skipped steps as the optimizer's would show.
        ScalingCase("sgd_momentum_dampening",
                    "optimizer=sgd lr=0.01 momentum=0.9 dampening=0.5",
                    sgd(lr=0.01, momentum=0.9, dampening=0.5),
                    LEVELS_3, 2.0 ** 126, 3),
        # The bias corrections count the applied steps only.
        ScalingCase("adam", "optimizer=adam lr=0.05", adam(lr=0.05),
                    LEVELS_3, 2.0 ** 126, 3),
        # The schedule counts every call, skipped or not; the norm is of
        # the unscaled gradients. Clipping at 1 clips every applied step.
        ScalingCase("adamw+clip+cosine_warmup",
                    "optimizer=adamw lr=0.05 clip-grad-norm=1.0 schedule=cosine"
                    " warmup-steps=2 total-steps=12",
                    adamw(lr=0.05), LEVELS_2, 2.0 ** 126, 2, clip=1.0,
                    factor=cosine_factor(2, 12)),
        ScalingCase("adam_weight_decay+capped_growth",
                    "optimizer=adam lr=0.05 weight-decay=0.1",
                    adam(lr=0.05, weight_decay=0.1), LEVELS_CAPPED,
                    2.0 ** 124, 1, growth_factor=4.0, backoff_factor=0.25,
                    patterns=PATTERNS + (CAPPED_GROWTH,)),
    ]


if __name__ == "__main__":
    sys.exit(common.main(__doc__.splitlines()[0], cases(), run_case))
