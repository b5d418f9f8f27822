"""Writes the seed corpora of the fuzz targets (fuzz/corpus/TARGET).

    /usr/bin/python3 fuzz/make_corpus.py [BUILD]

BUILD (default: build) is a normal build whose bin/ holds dlc-compile and
dlc-run: the modules and the checkpoint are made by dlc's own tools. The
models come from frontend/test (the .onnxtxt tests converted to binary and
the malformed cases of make_bad_model.py) plus models that name the scratch
model folder's external data files (fuzz/Scratch.h). Every seed is small:
fuzzing mutates bytes, and the committed corpus stays well under 2 MB.
Rerunning replaces the corpora; fuzz/regressions is never touched.
"""
import glob
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
import onnx.parser
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "frontend", "test", "Inputs"))
import make_bad_model as bad  # noqa: E402

CORPUS = os.path.join(ROOT, "fuzz", "corpus")


def fresh(target):
    path = os.path.join(CORPUS, target)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def external(name, location, dims, dtype=TensorProto.FLOAT, **entries):
    """A TensorProto whose data lies in `location` (Scratch.h's files)."""
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in [("location", location)] + list(entries.items()):
        e = t.external_data.add()
        e.key, e.value = key, str(value)
    return t


def tiny_mlp():
    """x: f32[N, 4] -> Gemm -> Relu -> Gemm -> y: f32[N, 3]."""
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array(rng.standard_normal([4, 8], np.float32), "w1")
    b1 = numpy_helper.from_array(np.zeros([8], np.float32), "b1")
    w2 = numpy_helper.from_array(rng.standard_normal([8, 3], np.float32), "w2")
    b2 = numpy_helper.from_array(np.zeros([3], np.float32), "b2")
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], name="fc2")]
    graph = helper.make_graph(
        nodes, "mlp", [bad.f32("x", ["N", 4])], [bad.f32("y", ["N", 3])],
        initializer=[w1, b1, w2, b2])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8)


def onnx_import():
    out = fresh("onnx-import")
    for path in sorted(glob.glob(os.path.join(ROOT, "frontend/test/*.onnxtxt"))):
        with open(path) as f:
            text = f.read()
        # Most files hold several models, each after a split-file marker
        # (`#--- name.onnxtxt`); the parts that are no model (the test's
        # header, Python checks) do not parse and are left out.
        for i, part in enumerate(re.split(r"^(?://|#)--- .*$", text,
                                          flags=re.M)):
            try:
                model = onnx.parser.parse_model(part)
            except Exception:
                continue
            name = os.path.basename(path)[:-len(".onnxtxt")]
            write(out, "%s-%d.onnx" % (name, i), model.SerializeToString())
    with tempfile.TemporaryDirectory() as tmp:
        for case in ["valid", "symbolic-dim", "opset-too-new", "custom-domain",
                     "unknown-op", "op-version-too-old", "bad-attribute",
                     "cycle-18", "shape-mismatch", "raw-data-size",
                     "typed-data-size", "huge-dims", "huge-constant",
                     "negative-input-dim", "duplicate-input-18",
                     "reduce-axes-input-18", "pad-axes-input-18",
                     "softmax-axis-ints-18", "conv-strides-floats-18",
                     "lstm-activations-string-18", "reversed-chain-18",
                     "missing-upstream-18", "truncated"]:
            path = os.path.join(tmp, case + ".onnx")
            model = bad.build(case, path)
            if model is not None:
                write(out, "bad-" + case + ".onnx", model.SerializeToString())
            else:
                shutil.copy(path, os.path.join(out, "bad-" + case + ".onnx"))
    write(out, "mlp.onnx", tiny_mlp().SerializeToString())
    for name, location, entries in [
            ("ext-weights", "weights.bin", {"offset": 0, "length": 24}),
            ("ext-sub", "sub/weights.bin", {"offset": 24}),
            ("ext-escape", "escape.bin", {}),
            ("ext-dotdot", "../secret.bin", {}),
            ("ext-folder", "folder", {})]:
        model = bad.add_weight_model(external("w", location, [2, 3], **entries))
        write(out, name + ".onnx", model.SerializeToString())


def external_data():
    out = fresh("external-data")
    seeds = {
        "weights": external("w", "weights.bin", [2, 3], offset=0, length=24),
        "weights-rest": external("w", "weights.bin", [58], offset=24),
        "sub": external("w", "sub/weights.bin", [4, 8], TensorProto.INT64),
        "bytes": external("w", "weights.bin", [256], TensorProto.UINT8),
        "bool": external("w", "weights.bin", [16], TensorProto.BOOL,
                         offset=100, length=16),
        "escape": external("w", "escape.bin", [6]),
        "dotdot": external("w", "../secret.bin", [6]),
        "absolute": external("w", "/etc/passwd", [1], TensorProto.UINT8),
        "folder": external("w", "folder", [0]),
        "missing": external("w", "missing.bin", [1]),
        "bad-offset": external("w", "weights.bin", [1], offset="-8"),
    }
    for dtype in [np.float32, np.float64, np.float16, np.int8, np.int16,
                  np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                  np.uint64, np.bool_]:
        a = np.arange(6).reshape(2, 3).astype(dtype)
        seeds["raw-" + np.dtype(dtype).name] = numpy_helper.from_array(a, "r")
        typed = helper.make_tensor(
            "t", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)], [2, 3],
            a.flatten().tolist())
        seeds["typed-" + np.dtype(dtype).name] = typed
    seeds["bfloat16"] = helper.make_tensor("b", TensorProto.BFLOAT16, [2],
                                           [1.0, -2.0])
    seeds["scalar"] = numpy_helper.from_array(np.array(3.5, np.float32), "s")
    seeds["string"] = helper.make_tensor("s", TensorProto.STRING, [1], [b"a"])
    for name, proto in seeds.items():
        write(out, name + ".pb", proto.SerializeToString())


def run(*args):
    result = subprocess.run([str(a) for a in args], capture_output=True,
                            text=True)
    if result.returncode != 0:
        sys.exit("make_corpus.py: %s failed:\n%s" % (args[0], result.stderr))


def modules_and_checkpoint(build, tmp):
    """Compiles the tiny MLP into modules and trains one to a checkpoint."""
    modules = fresh("module-load")
    checkpoints = fresh("checkpoint")
    model = os.path.join(tmp, "mlp.onnx")
    onnx.save(tiny_mlp(), model)
    compile_ = os.path.join(build, "bin", "dlc-compile")
    train = ["--train", "--loss", "mse", "--optimizer", "adamw",
             "--batch-size", "2"]
    for name, args in [
            ("forward", ["--batch-size", "2"]),
            ("train", train),
            ("train-no-parameters", train + ["--embed-parameters=false"]),
            ("train-sgd-bf16", ["--train", "--loss", "mse", "--optimizer",
                                "sgd", "--momentum", "0.9", "--precision",
                                "bf16", "--batch-size", "2",
                                "--embed-parameters=false"])]:
        run(compile_, model, *args, "-o", os.path.join(modules, name + ".dlcm"))
    embedded = os.path.join(build, "runtime/test/embed_example/linear.dlcm")
    if os.path.exists(embedded):
        shutil.copy(embedded, os.path.join(modules, "linear.dlcm"))
    # Training binaries' tails (runtime/module/Embedded.h): a stand-in for
    # the runner's bytes, the module, its size and the magic.
    for name in ["forward", "train"]:
        with open(os.path.join(modules, name + ".dlcm"), "rb") as f:
            module = f.read()
        write(modules, "binary-%s" % name,
              b"\x7fELF" + bytes(60) + module +
              struct.pack("<Q", len(module)) + b"DLCMEXE1")

    data = os.path.join(tmp, "data.npz")
    rng = np.random.default_rng(1)
    np.savez(data, x=rng.standard_normal([8, 4], np.float32),
             labels=rng.standard_normal([8, 3], np.float32))
    # AdamW's state, and bfloat16 weight copies (stored as uint16 with a
    # marker member).
    for name, args in [("train", []),
                       ("train-sgd-bf16", ["--init-seed", "1"])]:
        ckpt = os.path.join(tmp, name)
        run(os.path.join(build, "bin", "dlc-run"),
            os.path.join(modules, name + ".dlcm"), "--data", data,
            "--steps", "3", "--checkpoint-dir", ckpt, *args)
        for path in glob.glob(os.path.join(ckpt, "step-*.dlcc")):
            shutil.copy(path, os.path.join(checkpoints, name + ".dlcc"))
    return data, os.path.join(checkpoints, "train.dlcc")


def arrays():
    """Arrays of every dtype dlc reads, in the layouts .npy allows."""
    a = np.arange(12).reshape(3, 4)
    out = {"f32": a.astype(np.float32), "f64": a.astype(np.float64),
           "f16": a.astype(np.float16), "i8": a.astype(np.int8),
           "i16": a.astype(np.int16), "i32": a.astype(np.int32),
           "i64": a.astype(np.int64), "u8": a.astype(np.uint8),
           "u16": a.astype(np.uint16), "u32": a.astype(np.uint32),
           "u64": a.astype(np.uint64), "bool": (a % 2).astype(np.bool_),
           "scalar": np.array(1.5, np.float32),
           "empty": np.zeros([0, 3], np.float32),
           "fortran": np.asfortranarray(a.astype(np.float32)),
           "big-endian": a.astype(">i4"), "rank4": np.ones([1, 2, 1, 3])}
    return out


def npy_bytes(array, version=None):
    f = io.BytesIO()
    if version is None:
        np.save(f, array)
    else:
        np.lib.format.write_array(f, array, version=version)
    return f.getvalue()


def npy():
    out = fresh("npy")
    for name, array in arrays().items():
        write(out, name + ".npy", npy_bytes(array))
    write(out, "v2.npy", npy_bytes(np.ones([2], np.float32), (2, 0)))
    write(out, "v3.npy", npy_bytes(np.ones([2], np.float32), (3, 0)))
    write(out, "complex.npy", npy_bytes(np.ones([2], np.complex64)))


def npz(data, checkpoint):
    out = fresh("npz")
    all_arrays = arrays()
    with open(os.path.join(out, "all.npz"), "wb") as f:
        np.savez(f, **all_arrays)
    with open(os.path.join(out, "compressed.npz"), "wb") as f:
        np.savez_compressed(f, x=np.zeros([64], np.float32),
                            y=all_arrays["i64"])
    with open(os.path.join(out, "empty.npz"), "wb") as f:
        np.savez(f)
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w") as z:
        with z.open("x.npy", "w", force_zip64=True) as member:
            member.write(npy_bytes(all_arrays["f32"]))
    write(out, "zip64.npz", f.getvalue())
    write(out, "single.npy", npy_bytes(all_arrays["u16"]))
    shutil.copy(data, os.path.join(out, "data.npz"))
    shutil.copy(checkpoint, os.path.join(out, "checkpoint.npz"))


def runner_options():
    out = fresh("runner-options")
    lines = [
        ["model.dlcm", "--data", "train.npz", "--epochs", "10", "--eval-data",
         "eval.npz", "--log", "metrics.jsonl", "--checkpoint-dir", "ckpt",
         "--checkpoint-every", "500", "--export", "trained.onnx"],
        ["--data=train.npz", "--steps=20000", "--resume", "ckpt", "--seed",
         "7", "--no-shuffle", "--lr", "3e-4", "--weight-decay=0.01"],
        ["model.dlcm", "--inputs", "in.npz", "--outputs", "out.npz",
         "--init-seed", "1", "--device", "cuda:0", "--threads", "2"],
        ["model.dlcm", "-info"],
        ["--help"],
        ["--", "-model.dlcm"],
        ["model.dlcm", "--profile", "p.jsonl", "--steps", "-1"],
    ]
    for i, args in enumerate(lines):
        write(out, "args-%d" % i, b"\0".join(a.encode() for a in args))


def token_file():
    """nanoGPT's raw ids and llm.c's files (header: magic, version, count)."""
    out = fresh("token-file")
    ids = np.arange(40, dtype=np.uint16) * 1000
    write(out, "nanogpt-uint16.bin", ids.tobytes())
    write(out, "nanogpt-uint32.bin", ids.astype(np.uint32).tobytes())
    for version, dtype in [(1, np.uint16), (2, np.uint32)]:
        header = np.zeros(256, np.int32)
        header[:3] = [20240520, version, len(ids)]
        write(out, "llmc-v%d.bin" % version,
              header.tobytes() + ids.astype(dtype).tobytes())


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                            else os.path.join(ROOT, "build"))
    with tempfile.TemporaryDirectory() as tmp:
        onnx_import()
        external_data()
        data, checkpoint = modules_and_checkpoint(build, tmp)
        npy()
        npz(data, checkpoint)
        runner_options()
        token_file()


if __name__ == "__main__":
    main()
