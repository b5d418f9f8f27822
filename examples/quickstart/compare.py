"""Prints dlc's outputs beside PyTorch's and fails if they differ."""
import sys

import numpy as np

actual = np.load(sys.argv[1])["log_probs"]
expected = np.load(sys.argv[2])["log_probs"]
np.set_printoptions(precision=5, suppress=True)
print("dlc (reference evaluator) log-probabilities:\n", actual)
print("PyTorch log-probabilities:\n", expected)
# float32 through a float64-accumulating evaluator: agreement to ~1e-6.
ok = np.allclose(actual, expected, rtol=1e-4, atol=1e-5)
print("max abs difference: %.3g -> %s" % (np.abs(actual - expected).max(),
                                          "OK" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
