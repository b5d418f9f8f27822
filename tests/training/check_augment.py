"""dlc-augment against torchvision's functional transforms.

For each case, an image batch goes through `dlc-opt -dlc-augment` (on an
@forward that returns its input) and then through
  - the reference evaluator (`dlc-run --interpret`),
  - the CPU module (`dlc-compile`, run by `dlc-run MODULE`),
  - the CUDA module (`dlc-compile --target cuda`, run through the CUDA
    emulation, tests/models/cuda_emulation),
and each result is compared with torchvision.transforms.functional applied
per sample with the parameters dlc drew: each draw is Philox4x32-10's first
word for (seed, stream, sample) times 2^-32, rounded to float32 (the
augmentation's streams start at 2^30 and count its draws: a flip takes
one, a crop two, a rotation one), recomputed here from the generator's
definition. Flips, crops and normalization select or move pixels and are
compared exactly (normalization within 1 ulp: torchvision divides by the
standard deviation the same way); rotations within ROTATE_TOL of the
largest pixel, as torchvision samples in float32 through grid_sample's
arithmetic (a coordinate off by 1e-6 moves a bilinear value by that times
the neighbours' difference).

Prints PASS/FAIL per case and target, then `N passed, M failed`.

Usage: /usr/bin/python3 tests/training/check_augment.py --build BUILD
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision.transforms.functional as TF
from torchvision.transforms import InterpolationMode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "coverage"))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import op_coverage  # noqa: E402  (run_cuda, the CUDA emulation)
from philox import philox_uniform  # noqa: E402

FIRST_STREAM = 1 << 30
ROTATE_TOL = 1e-5
SHAPE = (4, 3, 9, 8)
# (transforms, seed). Several seeds, so that flips happen and do not,
# crops land at different offsets, and angles of both signs are drawn.
CASES = [
    ("hflip", 0), ("hflip", 1), ("vflip", 2),
    ("crop:2", 3), ("crop:3", 4),
    ("rotate:30", 5), ("rotate:180", 6),
    ("normalize:0.5,0.4,0.3/0.2,0.25,0.3", 7),
    ("hflip,crop:2,rotate:15,normalize:0.45/0.22", 8),
    ("vflip,hflip,rotate:90", 9),
]


def draw(seed, stream, index):
    """dlc.random_uniform's element `index`, rounded to float32 as dlc
    draws it for float32 images."""
    return np.float32(philox_uniform(seed, stream, index))


def parse(spec):
    """[(name, argument)] as dlc-augment reads the list."""
    items = []
    for part in spec.split(","):
        name = part.split(":")[0]
        if name not in ("hflip", "vflip", "crop", "rotate", "normalize"):
            items[-1] = (items[-1][0], items[-1][1] + "," + part)
        else:
            items.append((name, part.split(":", 1)[1] if ":" in part else ""))
    return items


def reference(images, spec, seed):
    """torchvision's transforms per sample, with dlc's draws."""
    out = torch.from_numpy(images.copy())
    stream = FIRST_STREAM
    for name, argument in parse(spec):
        if name == "normalize":
            mean, std = ([float(v) for v in part.split(",")]
                         for part in argument.split("/"))
            channels = out.shape[1]
            out = TF.normalize(out, mean * (channels // len(mean)),
                               std * (channels // len(std)))
            continue
        draws = 2 if name == "crop" else 1
        u = [[draw(seed, stream + d, n) for d in range(draws)]
             for n in range(out.shape[0])]
        stream += draws
        samples = []
        for n, image in enumerate(out):
            if name == "hflip":
                image = TF.hflip(image) if u[n][0] < 0.5 else image
            elif name == "vflip":
                image = TF.vflip(image) if u[n][0] < 0.5 else image
            elif name == "crop":
                pad = int(argument)
                top, left = (int(min(np.floor(np.float32(v) *
                                              np.float32(2 * pad + 1)),
                                     2 * pad)) for v in u[n])
                image = TF.crop(TF.pad(image, [pad]), top, left,
                                image.shape[1], image.shape[2])
            elif name == "rotate":
                angle = float((np.float32(u[n][0]) * np.float32(2) -
                               np.float32(1)) * np.float32(float(argument)))
                image = TF.rotate(image, angle,
                                  interpolation=InterpolationMode.BILINEAR)
            samples.append(image)
        out = torch.stack(samples)
    return out.numpy()


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(proc.stderr.strip()[-1500:])


def check(index, spec, seed, images, args, work):
    """(target, largest difference, tolerance) per target."""
    bin_dir = os.path.join(args.build, "bin")
    identity = os.path.join(work, "identity.mlir")
    t = "tensor<" + "x".join(map(str, SHAPE)) + "xf32>"
    with open(identity, "w") as f:
        f.write(f'func.func @forward(%x: {t} {{dlc.name = "x"}}) -> '
                f'({t} {{dlc.name = "y"}}) {{\n  return %x : {t}\n}}\n')
    augmented = os.path.join(work, "augmented.mlir")
    run([os.path.join(bin_dir, "dlc-opt"), identity,
         f"-dlc-augment=function=forward transforms={spec}", "-o",
         augmented])
    # The step's seed, as the runner would set it.
    text = open(augmented).read().replace(
        "@dlc.rng_seed : tensor<i64> = dense<0>",
        f"@dlc.rng_seed : tensor<i64> = dense<{seed}>")
    with open(augmented, "w") as f:
        f.write(text)
    np.savez(os.path.join(work, "in.npz"), x=images)
    want = reference(images, spec, seed)
    if np.array_equal(want, images):
        raise RuntimeError("the drawn parameters leave the images as they "
                           "are: the case checks nothing (another seed)")
    rotates = "rotate" in spec
    results = {}
    run([os.path.join(bin_dir, "dlc-run"), "--interpret", augmented,
         "--inputs", os.path.join(work, "in.npz"), "--outputs",
         os.path.join(work, "eval.npz")])
    results["evaluator"] = np.load(os.path.join(work, "eval.npz"))["y"]
    for target in ["cpu", "cuda"]:
        # A file of its own per case: ctypes would reuse a library loaded
        # from the same path.
        module = os.path.join(work, f"{target}{index}.dlcm")
        run([os.path.join(bin_dir, "dlc-compile"), augmented, "--target",
             target, "--cuda-arch", "sm_80", "-o", module])
        if target == "cpu":
            run([os.path.join(bin_dir, "dlc-run"), module, "--inputs",
                 os.path.join(work, "in.npz"), "--outputs",
                 os.path.join(work, "cpu.npz")])
            results["cpu"] = np.load(os.path.join(work, "cpu.npz"))["y"]
        else:
            results["cuda"] = op_coverage.run_cuda(
                module, {"x": images}, work, args.flatc)["y"]
    lines = []
    scale = float(np.abs(want).max())
    for target, got in results.items():
        diff = float(np.abs(got.astype(np.float64) - want).max()) / scale
        # Moves and selections are exact; normalize's subtraction and
        # division round as torchvision's do, within an ulp of float32.
        tolerance = ROTATE_TOL if rotates else 2 ** -23
        lines.append((target, diff, tolerance))
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--flatc", default=shutil.which("flatc"))
    args = p.parse_args()
    rng = np.random.default_rng(0)
    # Distinct pixel values, so a wrong index shows.
    images = (rng.permutation(int(np.prod(SHAPE))).reshape(SHAPE) /
              np.prod(SHAPE)).astype(np.float32)
    passed = failed = 0
    with tempfile.TemporaryDirectory() as work:
        for index, (spec, seed) in enumerate(CASES):
            try:
                lines = check(index, spec, seed, images, args, work)
            except RuntimeError as e:
                print(f"FAIL {spec} (seed {seed}): {e}")
                failed += 1
                continue
            for target, diff, tolerance in lines:
                ok = diff <= tolerance
                print(f"{'PASS' if ok else 'FAIL'} {spec} (seed {seed}) on "
                      f"{target}: max |dlc - torchvision| {diff:.2e} of the "
                      f"largest pixel (tolerance {tolerance:.1e})")
                passed += ok
                failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed else 1


if __name__ == "__main__":
    sys.exit(main())
