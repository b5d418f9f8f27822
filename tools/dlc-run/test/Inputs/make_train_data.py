"""Writes the training data of the dlc-run --train tests.

    make_train_data.py CASE OUT [N] [SEED]

Each CASE writes OUT, an .npz with one array per model input and label,
samples on the first axis, for the models next to this script (x: three
float32 features per sample). Values come from a fixed seed, so every run
sees the same file.

    classes     x float32[N, 3], labels int64[N]: two classes separated by a
                plane through the origin (an easy problem for mlp.onnxtxt
                and batchnorm.onnxtxt with cross_entropy)
    targets     x float32[N, 3], labels float32[N, 2]: a linear function of
                x plus noise (for mse)
    sequences   x float32[N, 3, 4], labels float32[N, 3, 2]: a linear
                function of each position's features plus noise (for
                residual_mlp.onnxtxt with mse)
    tokens      ids int64[N, 3] in [0, 16), labels int64[N]: the ids' sum
                modulo 8 (for token_classifier.onnxtxt with cross_entropy)
    index       x float32[N, 3] whose row i is (i, 0, 0): with sum.onnxtxt of
                train-order.test, the loss of a batch is the sum of its
                sample indices
The error cases of train-errors.test (each from `classes` with N = 8):
    no-labels, labels-int32, labels-2d, x-features, x-scalar, x-empty,
    counts (labels has 6 samples, x 8)
"""
import sys

import numpy as np


def classes(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    labels = (x[:, 0] - x[:, 1] + 0.5 * x[:, 2] > 0).astype(np.int64)
    return {"x": x, "labels": labels}


def targets(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    w = np.array([[0.5, -1.0, 0.25], [1.0, 0.5, -0.5]], np.float32)
    noise = 0.01 * rng.normal(size=(n, 2))
    return {"x": x, "labels": (x @ w.T + noise).astype(np.float32)}


def sequences(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3, 4)).astype(np.float32)
    w = rng.normal(size=(4, 2)).astype(np.float32)
    noise = 0.01 * rng.normal(size=(n, 3, 2))
    return {"x": x, "labels": (x @ w + noise).astype(np.float32)}


def tokens(n, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 16, size=(n, 3))
    return {"ids": ids, "labels": ids.sum(axis=1) % 8}


def index(n, seed):
    x = np.zeros((n, 3), np.float32)
    x[:, 0] = np.arange(n)
    return {"x": x}


def error_case(case):
    arrays = classes(8, 0)
    x, labels = arrays["x"], arrays["labels"]
    if case == "no-labels":
        return {"x": x}
    if case == "labels-int32":
        return {"x": x, "labels": labels.astype(np.int32)}
    if case == "labels-2d":
        return {"x": x, "labels": labels.reshape(8, 1)}
    if case == "x-features":
        return {"x": x[:, :2], "labels": labels}
    if case == "x-scalar":
        return {"x": np.float32(1.0), "labels": labels}
    if case == "x-empty":
        return {"x": x[:0], "labels": labels[:0]}
    if case == "counts":
        return {"x": x, "labels": labels[:6]}
    return None


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    case, out = argv[0], argv[1]
    n = int(argv[2]) if len(argv) > 2 else 16
    seed = int(argv[3]) if len(argv) > 3 else 0
    makers = {"classes": classes, "targets": targets, "sequences": sequences,
              "tokens": tokens, "index": index}
    arrays = makers[case](n, seed) if case in makers else error_case(case)
    if arrays is None:
        sys.stderr.write("make_train_data.py: unknown case %r\n" % case)
        return 2
    np.savez(out, **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
