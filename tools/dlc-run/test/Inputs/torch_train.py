"""PyTorch's training loop for the models of Inputs/, in float64.

    torch_train.py MODEL DATA LOG STATE --batch-size B --steps K --no-shuffle
                   [dlc-run's training options]

Trains MODEL (mlp.onnxtxt or batchnorm.onnxtxt, its initial values read
with onnx.parser) on the samples of DATA in order, step k taking samples
(k*B + j) mod N as dlc-run --no-shuffle does, with torch.optim's
optimizer, torch.nn.utils.clip_grad_norm_ and a LambdaLR of HuggingFace's
schedule. Writes what dlc-run would: LOG, one JSON object per step ("step",
"loss", "lr", "grad_norm" when clipping), and STATE, the final parameters,
running statistics, optimizer state and step counter under dlc's names
(float32, as dlc saves them).
"""
import argparse
import json
import math
import re

import numpy as np
import onnx.numpy_helper
import onnx.parser
import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
for name in ["model", "data", "log", "state"]:
    parser.add_argument(name)
parser.add_argument("--batch-size", type=int, required=True)
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--no-shuffle", action="store_true", required=True)
parser.add_argument("--loss", default="cross_entropy")
parser.add_argument("--optimizer", default="sgd")
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--momentum", type=float, default=0.0)
parser.add_argument("--dampening", type=float, default=0.0)
parser.add_argument("--nesterov", action="store_true")
parser.add_argument("--weight-decay", type=float)
parser.add_argument("--betas", default="0.9,0.999")
parser.add_argument("--eps", type=float, default=1e-8)
parser.add_argument("--clip-grad-norm", type=float, default=0.0)
parser.add_argument("--lr-schedule", default="constant")
parser.add_argument("--warmup-steps", type=int, default=0)
parser.add_argument("--total-steps", type=int, default=0)
parser.add_argument("--freeze", default="")
args = parser.parse_args()

model = onnx.parser.parse_model(open(args.model).read())
values = {t.name: torch.tensor(onnx.numpy_helper.to_array(t),
                               dtype=torch.float64)
          for t in model.graph.initializer}
running = ["bn_mean", "bn_var"]
params = {n: v.requires_grad_() for n, v in values.items()
          if n not in running and
          not (args.freeze and re.fullmatch(args.freeze, n))}


def forward(v, x):
    if model.graph.name == "mlp":
        h = F.relu(F.linear(x, v["fc1_w"], v["fc1_b"]))
        return F.linear(h, v["fc2_w"], v["fc2_b"])
    # batchnorm.onnxtxt: ONNX's momentum 0.9 is torch's 0.1.
    h = F.linear(x, v["fc_w"])
    h = F.batch_norm(h, v["bn_mean"], v["bn_var"], v["bn_scale"], v["bn_bias"],
                     training=True, momentum=0.1, eps=1e-5)
    return F.linear(F.relu(h), v["out_w"])


def factor(s):
    w, t = args.warmup_steps, args.total_steps
    if s < w:
        return s / w
    if args.lr_schedule == "constant":
        return 1.0
    progress = (s - w) / (t - w)
    if args.lr_schedule == "linear":
        return max(0.0, 1.0 - progress)
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


decay = args.weight_decay
if decay is None:
    decay = 0.01 if args.optimizer == "adamw" else 0.0
if args.optimizer == "sgd":
    opt = torch.optim.SGD(params.values(), lr=args.lr, momentum=args.momentum,
                          dampening=args.dampening, nesterov=args.nesterov,
                          weight_decay=decay)
else:
    betas = tuple(float(b) for b in args.betas.split(","))
    cls = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
    opt = cls(params.values(), lr=args.lr, betas=betas, eps=args.eps,
              weight_decay=decay)
schedule = torch.optim.lr_scheduler.LambdaLR(opt, factor)

data = np.load(args.data)
x = torch.tensor(data["x"], dtype=torch.float64)
labels = torch.tensor(data["labels"])
if labels.is_floating_point():
    labels = labels.double()
n, b = x.shape[0], args.batch_size
log = open(args.log, "w")
for k in range(args.steps):
    rows = [(k * b + j) % n for j in range(b)]
    opt.zero_grad()
    out = forward(values, x[rows])
    loss = (F.cross_entropy(out, labels[rows]) if args.loss == "cross_entropy"
            else F.mse_loss(out, labels[rows]))
    loss.backward()
    record = {"step": k, "loss": loss.item(), "lr": opt.param_groups[0]["lr"]}
    if args.clip_grad_norm > 0:
        record["grad_norm"] = torch.nn.utils.clip_grad_norm_(
            params.values(), args.clip_grad_norm).item()
    opt.step()
    schedule.step()
    log.write(json.dumps(record) + "\n")

state = {n: v.detach().numpy().astype(np.float32) for n, v in values.items()}
for name, p in params.items():
    for key in ["momentum_buffer", "exp_avg", "exp_avg_sq"]:
        if key in opt.state[p]:
            state["optimizer.%s.%s" % (name, key)] = (
                opt.state[p][key].numpy().astype(np.float32))
state["dlc.step"] = np.array(args.steps, np.int64)
state["dlc.lr"] = np.array(args.lr, np.float32)
state["dlc.weight_decay"] = np.array(decay, np.float32)
np.savez(args.state, **state)
