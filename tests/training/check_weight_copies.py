#!/usr/bin/env python3
"""Checks dlc-optimizer's 16-bit parameter copies against casting.

    check_weight_copies.py --build BUILD_DIR [-k SUBSTRING]

Under mixed precision a train_step can cast each float32 parameter to its
16-bit type when the step starts, or (dlc-optimizer's low-precision-copies,
the default) read a copy in that type which the previous step's update
wrote. Both must train identically: the copy is the same rounding of the
same float32 value, only computed one step earlier. check_optimizers.py's
linear model goes through `dlc-opt --dlc-functionalize
--dlc-add-loss=loss=mse --dlc-mixed-precision=precision=P --dlc-autodiff
--dlc-optimizer=... low-precision-copies=true|false`, and both train_steps
run STEPS steps on the reference evaluator, each binding what the previous
one returned. Every result they share (loss, metrics, parameters,
optimizer state) must be bit-identical, the first must return a copy of
each parameter equal to the rounding of the parameter it returns, and the
second no copy at all. A third run of the first leaves the copies out of
each step's inputs, so that dlc-run rounds them from the parameters given,
as a session does when a parameter is set: it too must be bit-identical.
"""
import sys

import numpy as np

import common
from check_optimizers import MODEL, batches

STEPS = 4


class Case:
    def __init__(self, name, precision, optimizer, autodiff=""):
        self.name, self.precision = name, precision
        self.optimizer, self.autodiff = optimizer, autodiff


def rounded(values, precision):
    """float32 `values` rounded to nearest even in `precision`, as the bit
    patterns dlc-run writes for it (float16, or bfloat16 as uint16)."""
    if precision == "fp16":
        return values.astype(np.float16)
    bits = values.astype(np.float32).view(np.uint32)
    return ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def trajectory(tools, case, copies, feed_copies=True):
    """The steps' results; `feed_copies` False leaves the copies out of
    each step's inputs, so that dlc-run rounds them from the parameters
    (as a session does when a parameter is set)."""
    autodiff = "--dlc-autodiff" + (f"={case.autodiff}" if case.autodiff else "")
    module = tools.pipeline(MODEL, [
        "--dlc-functionalize", "--dlc-add-loss=loss=mse",
        f"--dlc-mixed-precision=precision={case.precision}", autodiff,
        f"--dlc-optimizer={case.optimizer} low-precision-copies={copies}"])
    state, steps = {}, []
    for x, y in batches()[:STEPS]:
        out = tools.call(module, "train_step", {"x": x, "labels": y, **state})
        steps.append(out)
        state = {name: value for name, value in out.items()
                 if name.startswith(("fc.", "optimizer.", "dlc.")) and
                 (feed_copies or "@" not in name)}
    return steps


def run_case(tools, case):
    with_copies = trajectory(tools, case, "true")
    casting = trajectory(tools, case, "false")
    derived = trajectory(tools, case, "true", feed_copies=False)
    for k, (a, b) in enumerate(zip(with_copies, derived)):
        for name, value in a.items():
            if value.tobytes() != b[name].tobytes():
                raise common.Mismatch(f"step {k}: {name} differs when the "
                                      "copies are rounded from the inputs")
    suffix = "@bf16" if case.precision == "bf16" else "@fp16"
    for k, (a, b) in enumerate(zip(with_copies, casting)):
        copies = sorted(n for n in a if n.endswith(suffix))
        if copies != [p + suffix for p in ("fc.bias", "fc.weight")]:
            raise common.Mismatch(f"step {k}: copies {copies}")
        if any(n.endswith(suffix) for n in b):
            raise common.Mismatch(f"step {k}: copies without low-precision-copies")
        for name, value in b.items():
            if a[name].tobytes() != value.tobytes():
                raise common.Mismatch(f"step {k}: {name} differs: "
                                      f"{a[name]} vs {value}")
        for copy in copies:
            source = copy[:-len(suffix)]
            want = rounded(a[source], case.precision)
            if a[copy].tobytes() != want.tobytes():
                raise common.Mismatch(f"step {k}: {copy} is not {source} "
                                      f"rounded to {case.precision}")
    skipped = int(with_copies[-1].get("skipped_steps", 0))
    if case.autodiff and not 0 < skipped < STEPS:
        raise common.Mismatch(f"{skipped} of {STEPS} steps skipped: the case "
                              "must have both kinds")
    return (f"{STEPS} steps ({skipped} skipped) bit-identical (copies fed, "
            "derived or cast), copies equal the rounded parameters")


CASES = [
    Case("bf16_sgd_momentum", "bf16", "optimizer=sgd lr=0.1 momentum=0.9"),
    Case("bf16_adamw", "bf16", "optimizer=adamw lr=0.05"),
    Case("fp16_adam", "fp16", "optimizer=adam lr=0.05"),
    # Loss scaling with a first scale that overflows: a skipped step keeps
    # the old copy as it keeps the old parameter.
    Case("fp16_adam_loss_scaling", "fp16",
         "optimizer=adam lr=0.05 init-scale=1e30 backoff-factor=1e-27 "
         "growth-interval=2",
         "loss-scale=true"),
]


if __name__ == "__main__":
    sys.exit(common.main(__doc__.splitlines()[0], CASES, run_case))
