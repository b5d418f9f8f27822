"""Exports the quick start's example: a small MLP classifier, from PyTorch.

Writes DIR/mlp.onnx (batch dimension symbolic), DIR/inputs.npz (a batch of
4 samples keyed by the ONNX input name) and DIR/expected.npz (PyTorch's
outputs for them); for training, DIR/train.npz (64 labelled samples) and
DIR/expected_losses.json (PyTorch's losses over 20 AdamW steps of batch 8,
samples in order); DIR/quadrants.npz (8192 samples of the same task) and
DIR/quadrants_eval.npz (1024 held out) for the compiled training binary.
Run with Debian's /usr/bin/python3, which has torch.
"""
import argparse
import json
import os

import numpy as np
import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(16, 32), torch.nn.ReLU(),
            torch.nn.Linear(32, 32), torch.nn.GELU(),
            torch.nn.Linear(32, 4))

    def forward(self, x):
        return torch.log_softmax(self.net(x), dim=-1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    torch.manual_seed(0)
    model = MLP().eval()
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    torch.onnx.export(model, torch.from_numpy(x),
                      os.path.join(args.out, "mlp.onnx"),
                      input_names=["features"], output_names=["log_probs"],
                      dynamic_axes={"features": {0: "batch"},
                                    "log_probs": {0: "batch"}},
                      opset_version=17)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()
    np.savez(os.path.join(args.out, "inputs.npz"), features=x)
    np.savez(os.path.join(args.out, "expected.npz"), log_probs=y)

    # Training data: the class is the quadrant of two input features.
    def quadrants(seed, samples):
        rng = np.random.default_rng(seed)
        features = rng.standard_normal((samples, 16)).astype(np.float32)
        labels = (2 * (features[:, 0] > 0) +
                  (features[:, 1] > 0)).astype(np.int64)
        return features, labels

    features, labels = quadrants(1, 64)
    np.savez(os.path.join(args.out, "train.npz"), features=features,
             labels=labels)
    # A larger set to train the compiled binary on, and held-out samples.
    for name, seed, samples in (("quadrants.npz", 2, 8192),
                                ("quadrants_eval.npz", 3, 1024)):
        f, l = quadrants(seed, samples)
        np.savez(os.path.join(args.out, name), features=f, labels=l)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step in range(20):
        rows = [(step * 8 + j) % 64 for j in range(8)]
        loss = torch.nn.functional.cross_entropy(
            model(torch.from_numpy(features[rows])),
            torch.from_numpy(labels[rows]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with open(os.path.join(args.out, "expected_losses.json"), "w") as f:
        json.dump(losses, f)


if __name__ == "__main__":
    main()
