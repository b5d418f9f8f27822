"""The seven PyTorch models behind the exported-model checks (tests/models/).

Each model is small enough that a forward pass at its test batch takes seconds in
dlc's naive C++ evaluator, yet together they cover what real exporters emit:
Gemm/MatMul chains, convolutions with BatchNorm in both modes, residual blocks,
depthwise convolutions, transposed convolutions (ConvTranspose in 1-D and
2-D: strides, padding, output padding, groups, dilation), a GPT-style
decoder (embeddings, LayerNorm, causal attention with a masked softmax,
GELU) and a ViT-style encoder (banded and biased attention, attention
pooling).

Everything is deterministic: `build(name)` seeds torch before constructing a
model, and `make_inputs(name, batch)` draws inputs from a seeded numpy
generator, so two runs of export.py write identical files.

Run with /usr/bin/python3 (Debian's torch 1.13.1, torchvision, onnx 1.12).
"""

import math
from dataclasses import dataclass
from typing import Callable, Dict, List

import numpy as np
import torch
import torch.nn as nn
import torchvision


# ---------------------------------------------------------------------------
# Models written here.


class MLP(nn.Module):
    """[B, 32] -> [B, 10]: Linear ReLU Linear GELU Linear."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(32, 64), nn.ReLU(),
            nn.Linear(64, 64), nn.GELU(),
            nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


class CNNBN(nn.Module):
    """[B, 3, 32, 32] -> [B, 10]: two Conv-BN-ReLU stages, pooling, a Linear."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, stride=1), nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.features(x))


class Deconv(nn.Module):
    """[B, 4, 8, 8] -> [B, 10] through transposed convolutions: a grouped
    2-D one that doubles the resolution (stride 2, padding 1, output
    padding 1), a strided Conv2d back down, then the channels' rows as a
    sequence through a dilated 1-D one (stride 3, output padding 2, whose
    last output no input reaches), averaged into a Linear."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                     output_padding=1, groups=2)
        self.down = nn.Conv2d(6, 8, 4, stride=4)
        self.up1d = nn.ConvTranspose1d(8, 4, 3, stride=3, padding=1,
                                       dilation=2, output_padding=2)
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        y = self.down(torch.relu(self.up(x)))          # [B, 8, 4, 4]
        z = torch.relu(self.up1d(y.flatten(2)))        # [B, 4, 50]
        return self.fc(z.mean(dim=2))


@dataclass
class GPTConfig:
    vocab: int = 64
    context: int = 16
    d_model: int = 32
    heads: int = 2
    layers: int = 2


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention with an explicit lower-triangular mask.

    The mask is a registered buffer applied with masked_fill(-inf) before the
    softmax, which is what most hand-written GPTs (nanoGPT, minGPT) export:
    the importer sees a constant bool tensor, Where/Equal, and -inf.
    """

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.heads = cfg.heads
        self.head_dim = cfg.d_model // cfg.heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.register_buffer(
            "mask",
            torch.tril(torch.ones(cfg.context, cfg.context, dtype=torch.bool))
            .view(1, 1, cfg.context, cfg.context))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        # [B, T, C] -> [B, heads, T, head_dim]
        q = q.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        att = att.masked_fill(~self.mask[:, :, :t, :t], float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), x + mlp(ln(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(),
            nn.Linear(4 * cfg.d_model, cfg.d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Token ids int64 [B, 16] -> logits [B, 16, 64]."""

    def __init__(self, cfg: GPTConfig = GPTConfig()):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.Sequential(*[Block(cfg) for _ in range(cfg.layers)])
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab)

    def forward(self, tokens):
        t = tokens.shape[1]
        pos = torch.arange(t, dtype=torch.long, device=tokens.device)
        x = self.tok_emb(tokens) + self.pos_emb(pos)
        x = self.blocks(x)
        return self.head(self.ln_f(x))


class Encoder(nn.Module):
    """Features float [B, 13, 20] -> logits [B, 10]: ViT-style attention.

    Attention in the shapes a fused kernel must get right beyond GPT's:
    a self-attention of 2 heads of 10 (a head size no tile divides) whose
    scores get a per-head ALiBi-style position bias and a banded mask
    (|i - j| <= 3, by masked_fill), then attention pooling: 5 learned
    queries of 128 against the 13 positions' keys of 128 and values of 96
    (Tq != Tk, v narrower than k, no mask, the scale a division).
    """

    def __init__(self):
        super().__init__()
        self.heads, self.head_dim = 2, 10
        self.qkv = nn.Linear(20, 60)
        self.proj = nn.Linear(20, 20)
        pos = torch.arange(13)
        distance = (pos.view(13, 1) - pos.view(1, 13)).abs()
        self.register_buffer("band", (distance <= 3).view(1, 1, 13, 13))
        # A plain attribute, not a buffer: the export makes it a Constant,
        # where a buffer would be an initializer, which dlc trains.
        slopes = torch.tensor([0.5, 0.25]).view(1, 2, 1, 1)
        self.alibi = -slopes * distance.float()
        self.queries = nn.Parameter(0.5 * torch.randn(5, 128))
        self.key = nn.Linear(20, 128)
        self.value = nn.Linear(20, 96)
        self.head = nn.Linear(96, 10)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, self.head_dim).transpose(1, 2)
                   for y in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        att = (att + self.alibi).masked_fill(~self.band, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        queries = self.queries.expand(b, -1, -1)
        att = (queries @ self.key(x).transpose(-2, -1)) / math.sqrt(128)
        pooled = torch.softmax(att, dim=-1) @ self.value(x)
        return self.head(pooled.mean(dim=1))


# ---------------------------------------------------------------------------
# torchvision models.


def _resnet18():
    return torchvision.models.resnet18(num_classes=10)


def _mobilenet_v2():
    model = torchvision.models.mobilenet_v2(num_classes=10)
    # The classifier is Dropout(0.2) + Linear. In training mode a p > 0 dropout
    # draws a random mask, so PyTorch's outputs could never be reproduced by
    # the evaluator. p = 0 keeps the Dropout node in the training-mode export
    # (ratio 0, training_mode true: the importer must still handle it) while
    # making it the identity.
    assert isinstance(model.classifier[0], nn.Dropout)
    model.classifier[0] = nn.Dropout(0.0)
    return model


def _perturb_batchnorm(model: nn.Module, seed: int):
    """Gives every BatchNorm non-trivial affine parameters and running stats.

    Fresh BatchNorm layers have weight 1, bias 0, running mean 0 and running
    variance 1, which makes eval-mode BatchNorm almost the identity and would
    let an importer that ignores scale, bias, mean or variance pass. The
    ranges keep activations of the deep models in a sane range.
    """
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.weight.copy_(0.5 + torch.rand(n, generator=gen))
                m.bias.copy_(0.1 * torch.randn(n, generator=gen))
                m.running_mean.copy_(0.1 * torch.randn(n, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(n, generator=gen))
    return model


# ---------------------------------------------------------------------------
# Registry.


@dataclass
class ModelSpec:
    name: str
    factory: Callable[[], nn.Module]
    input_names: List[str]
    output_names: List[str]
    # Shape of each input after the batch dimension, and its numpy dtype.
    input_shapes: List[List[int]]
    input_dtypes: List[str]
    seed: int
    # Batch of the exported test inputs.
    batch: int = 2


MODELS: Dict[str, ModelSpec] = {
    "mlp": ModelSpec("mlp", MLP, ["input"], ["logits"],
                     [[32]], ["float32"], 1),
    "cnn_bn": ModelSpec("cnn_bn", CNNBN, ["input"], ["logits"],
                        [[3, 32, 32]], ["float32"], 2),
    # Batch 8: both nets downsample 32x, so their last train-mode
    # BatchNorms see batch x 1 pixel per channel. With 2 samples, PyTorch's
    # own float32 logits differ from float64 by up to 3% (resnet18) and no
    # evaluator could match them within 1e-4; with 8 the float32 error is
    # ~1e-5 of the logits' scale (~0.3 GFLOP per forward).
    "resnet18": ModelSpec("resnet18", _resnet18, ["input"], ["logits"],
                          [[3, 32, 32]], ["float32"], 3, batch=8),
    "mobilenet_v2": ModelSpec("mobilenet_v2", _mobilenet_v2, ["input"],
                              ["logits"], [[3, 32, 32]], ["float32"], 4,
                              batch=8),
    "deconv": ModelSpec("deconv", Deconv, ["input"], ["logits"],
                        [[4, 8, 8]], ["float32"], 7),
    "gpt": ModelSpec("gpt", GPT, ["tokens"], ["logits"],
                     [[GPTConfig.context]], ["int64"], 5),
    "encoder": ModelSpec("encoder", Encoder, ["input"], ["logits"],
                         [[13, 20]], ["float32"], 6),
}


def build(name: str) -> nn.Module:
    """Constructs model `name` with deterministic weights (in train mode)."""
    spec = MODELS[name]
    torch.manual_seed(spec.seed)
    model = spec.factory()
    _perturb_batchnorm(model, 1000 + spec.seed)
    return model


def make_inputs(name: str, batch: int) -> Dict[str, np.ndarray]:
    """Fixed inputs for model `name`, keyed by ONNX input name."""
    spec = MODELS[name]
    rng = np.random.default_rng(100 + spec.seed)
    out = {}
    for iname, shape, dtype in zip(spec.input_names, spec.input_shapes,
                                   spec.input_dtypes):
        full = [batch] + shape
        if dtype == "int64":
            out[iname] = rng.integers(0, GPTConfig.vocab, size=full,
                                      dtype=np.int64)
        else:
            out[iname] = rng.standard_normal(full).astype(dtype)
    return out
