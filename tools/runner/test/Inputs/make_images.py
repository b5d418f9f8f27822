# 16 images [2, 4, 4] with 3 classes: random ones, and mirror images
# (x[..., j] == x[..., 3 - j]).
import sys
import numpy as np

rng = np.random.default_rng(3)
x = rng.normal(size=(16, 2, 4, 4)).astype(np.float32)
labels = rng.integers(0, 3, size=16).astype(np.int64)
np.savez(sys.argv[1] + "/images.npz", input=x, labels=labels)
mirror = np.concatenate([x[..., :2], x[..., 1::-1]], axis=-1)
assert np.array_equal(mirror, mirror[..., ::-1])
np.savez(sys.argv[1] + "/mirror.npz", input=mirror, labels=labels)
np.savez(sys.argv[1] + "/forward.npz", input=x[:4])
