#!/usr/bin/python3
"""Exports the models of models.py to ONNX with their inputs and PyTorch outputs.

For every model, opset and mode this writes, under --out:
  {model}_op{opset}_{mode}.onnx          torch.onnx.export, batch dim symbolic ("batch")
  {model}_op{opset}_{mode}.inputs.npz    inputs at the model's test batch (ModelSpec.batch), keyed by ONNX input name
  {model}_op{opset}_{mode}.expected.npz  PyTorch's outputs, keyed by ONNX output name
  {model}_op{opset}_{mode}.expected64.npz  the same model run in float64 by PyTorch
                                         (floating outputs in float64), same keys
  {model}_op{opset}_{mode}.json          {"outputs": [...to compare], "batch_size": B, ...}
and, last, manifest.json listing every case and a fingerprint of the sources
(check_models.py re-exports when the fingerprint changes).

Mode "train" exports with TrainingMode.TRAINING and no constant folding: the
graph keeps BatchNormalization with training_mode=1 (batch statistics) and
Dropout nodes, as a training compiler receives them. Mode "eval" exports with
TrainingMode.EVAL and the exporter's default constant folding, as models are
usually shipped (PyTorch then folds BatchNorm into the preceding Conv).

A combination that torch 1.13.1 cannot export is recorded in its JSON as
"skipped": "reason" (and none of the other files is written) and the run goes
on. CASE_FILES lists the files of an exported case.

Usage: /usr/bin/python3 tests/models/export.py --out DIR
           [--models mlp,gpt] [--opsets 13,14,17] [--modes train,eval]
"""

import argparse
import copy
import hashlib
import json
import os
import sys
import traceback
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

# Training-mode tracing drops BatchNorm's num_batches_tracked += 1 (a buffer
# nothing reads when momentum is set) and says so once per layer.
warnings.filterwarnings("ignore", message=".*Removing mutation from node.*")

ALL_OPSETS = [13, 14, 17]
ALL_MODES = ["train", "eval"]
# The files every case that was not skipped has, besides its .json.
CASE_FILES = (".onnx", ".inputs.npz", ".expected.npz", ".expected64.npz")


def fingerprint() -> str:
    """Hash of what determines the exported files: these sources and torch."""
    h = hashlib.sha256()
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("models.py", "export.py"):
        with open(os.path.join(here, name), "rb") as f:
            h.update(f.read())
    h.update(torch.__version__.encode())
    h.update(onnx.__version__.encode())
    return h.hexdigest()


def case_name(model: str, opset: int, mode: str) -> str:
    return f"{model}_op{opset}_{mode}"


def set_mode(model: torch.nn.Module, mode: str):
    model.train(mode == "train")
    return model


def restore_initializers(proto: onnx.ModelProto, state: dict) -> list:
    """Makes the exported initializers equal the fresh model's state.

    Tracing in training mode runs the model forward, which updates BatchNorm
    running statistics before the exporter reads them; the file would then
    hold stats that no longer match the model the expected outputs come from
    (they do not change train-mode outputs, but they are the initial state a
    training compiler starts from). Those buffers are put back; any other
    difference is a harness bug and raises. Returns the names restored.
    """
    restored = []
    for init in proto.graph.initializer:
        if init.name not in state:
            continue
        want = state[init.name].detach().cpu().numpy()
        got = onnx.numpy_helper.to_array(init)
        if got.shape == want.shape and np.array_equal(got, want):
            continue
        if not init.name.endswith(("running_mean", "running_var")):
            raise RuntimeError(
                f"initializer '{init.name}' differs from the model state")
        init.CopyFrom(onnx.numpy_helper.from_array(want.astype(got.dtype),
                                                   init.name))
        restored.append(init.name)
    return restored


def as_tuple(result):
    return (result,) if isinstance(result, torch.Tensor) else tuple(result)


def export_case(name: str, opset: int, mode: str, out_dir: str) -> dict:
    spec = models.MODELS[name]
    base = os.path.join(out_dir, case_name(name, opset, mode))
    inputs = models.make_inputs(name, spec.batch)
    meta = {"model": name, "opset": opset, "mode": mode,
            "batch_size": spec.batch, "inputs": spec.input_names}

    # One fresh model for export, a deep copy of its untouched state for the
    # reference run: neither forward pass can leak into the other.
    fresh = models.build(name)
    reference = copy.deepcopy(fresh)
    state = copy.deepcopy(fresh.state_dict())

    torch_inputs = tuple(torch.from_numpy(inputs[n]) for n in spec.input_names)
    dynamic_axes = {n: {0: "batch"}
                    for n in spec.input_names + spec.output_names}
    export_model = set_mode(fresh, mode)
    training = (torch.onnx.TrainingMode.TRAINING if mode == "train"
                else torch.onnx.TrainingMode.EVAL)
    try:
        with torch.no_grad():
            torch.onnx.export(
                export_model, torch_inputs, base + ".onnx",
                input_names=spec.input_names,
                output_names=spec.output_names,
                dynamic_axes=dynamic_axes,
                opset_version=opset,
                training=training,
                do_constant_folding=(mode == "eval"))
        proto = onnx.load(base + ".onnx")
        onnx.checker.check_model(proto)
    except Exception as e:  # recorded, the other cases still run
        reason = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}"
        meta["skipped"] = reason
        traceback.print_exc()
        for ext in CASE_FILES:
            if os.path.exists(base + ext):
                os.remove(base + ext)
        with open(base + ".json", "w") as f:
            json.dump(meta, f, indent=1)
        return meta

    # Not a skip: a mismatch here would make every comparison meaningless.
    if restore_initializers(proto, state):
        onnx.checker.check_model(proto)
        onnx.save(proto, base + ".onnx")

    # PyTorch's outputs, same mode, from the untouched copy, and the same model
    # in float64: the near-exact result check_models.py measures dlc's error
    # against, and, through PyTorch's own float32 distance to it, how
    # ill-conditioned each output is (train-mode BatchNorm over few samples
    # amplifies rounding).
    reference64 = set_mode(copy.deepcopy(reference).double(), mode)
    set_mode(reference, mode)
    with torch.no_grad():
        result = as_tuple(reference(*torch_inputs))
        result64 = as_tuple(reference64(*[
            t.double() if t.is_floating_point() else t for t in torch_inputs]))
    expected = {n: t.detach().cpu().numpy()
                for n, t in zip(spec.output_names, result)}
    expected64 = {n: t.detach().cpu().numpy()
                  for n, t in zip(spec.output_names, result64)}
    # PyTorch float32's largest distance to the float64 result, per output,
    # for people reading the JSON (check_models.py computes it from the two
    # .npz files).
    meta["reference_error"] = {
        n: float(np.max(np.abs(expected[n].astype(np.float64)
                               - expected64[n].astype(np.float64))))
        for n in spec.output_names}

    graph_outputs = [o.name for o in proto.graph.output]
    extra = [o for o in graph_outputs if o not in expected]
    if extra:
        # Outputs the exporter added (none seen with torch 1.13.1); there is
        # no PyTorch value for them, so they are listed but not compared.
        meta["uncompared_outputs"] = extra
    meta["outputs"] = [o for o in graph_outputs if o in expected]
    meta["onnx_outputs"] = graph_outputs

    np.savez(base + ".inputs.npz", **inputs)
    np.savez(base + ".expected.npz", **expected)
    np.savez(base + ".expected64.npz", **expected64)
    with open(base + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--models", default=",".join(models.MODELS),
                   help="comma-separated model names")
    p.add_argument("--opsets", default=",".join(map(str, ALL_OPSETS)))
    p.add_argument("--modes", default=",".join(ALL_MODES))
    args = p.parse_args(argv)

    names = [m for m in args.models.split(",") if m]
    opsets = [int(o) for o in args.opsets.split(",") if o]
    modes = [m for m in args.modes.split(",") if m]
    for m in names:
        if m not in models.MODELS:
            p.error(f"unknown model '{m}' (known: {', '.join(models.MODELS)})")
    for m in modes:
        if m not in ALL_MODES:
            p.error(f"unknown mode '{m}' (known: {', '.join(ALL_MODES)})")

    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "manifest.json")
    if os.path.exists(manifest_path):
        os.remove(manifest_path)  # written last: its presence means complete
    cases = []
    for name in names:
        for opset in opsets:
            for mode in modes:
                meta = export_case(name, opset, mode, args.out)
                cname = case_name(name, opset, mode)
                cases.append(cname)
                status = ("skipped: " + meta["skipped"]) if "skipped" in meta \
                    else "ok"
                print(f"{cname}: {status}", flush=True)
    with open(manifest_path, "w") as f:
        json.dump({"fingerprint": fingerprint(), "cases": cases}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
