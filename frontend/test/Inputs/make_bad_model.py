"""Writes the broken models and .npz files of frontend/test/malformed/.

    make_bad_model.py CASE OUT

Binary test inputs are generated at test time instead of being committed.
Each CASE writes OUT (a .onnx model, or a .npz for the npz-* cases) and, for
the external-data cases, the data files next to it. Models are built with
onnx.helper; truncated and random files are written byte by byte. The random
bytes come from a fixed seed, so every run sees the same file.
"""
import os
import random
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, opset=13, initializers=(), domains=()):
    graph = helper.make_graph(nodes, "bad", inputs, outputs,
                              initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)]
    opsets += [helper.make_opsetid(d, 1) for d in domains]
    # IR version 8 reads every opset we build here, old or new.
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def relu_model(opset=13):
    """x: f32[2, 3] -> y = Relu(x); the valid base of several cases."""
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [f32("x", [2, 3])], [f32("y", [2, 3])], opset)


def add_weight_model(weight):
    """y = x + w for x: f32[2, 3] and the initializer `weight` (named w)."""
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [f32("x", [2, 3])], [f32("y", [2, 3])],
                 initializers=[weight])


def external_weight(location, offset=None, length=None):
    """A 2x3 float initializer `w` whose data lives in an external file."""
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([2, 3])
    w.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if offset is not None:
        entries.append(("offset", str(offset)))
    if length is not None:
        entries.append(("length", str(length)))
    for key, value in entries:
        e = w.external_data.add()
        e.key = key
        e.value = value
    return w


WEIGHT_BYTES = np.arange(6, dtype=np.float32).tobytes()  # 24 bytes


def huge_weight():
    """A float initializer `w` of shape [2^38] holding a single value."""
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.append(1 << 38)
    w.float_data.append(1.0)
    return w


def relu_chain(count, opset=18):
    """x -> Relu -> ... -> Relu -> y, `count` nodes listed last to first:
    a graph only a topological sort can import."""
    names = ["x"] + ["t%d" % i for i in range(1, count)] + ["y"]
    nodes = [helper.make_node("Relu", [names[i]], [names[i + 1]],
                              name="relu%d" % i) for i in range(count)]
    return model(nodes[::-1], [f32("x", [2, 3])], [f32("y", [2, 3])], opset)


def single_node(op, inputs, outputs, graph_inputs=None, graph_outputs=None,
                opset=18, initializers=(), **attrs):
    """One node named `node`, by default over x: f32[2, 3] with outputs of
    the same type."""
    if graph_inputs is None:
        graph_inputs = [f32("x", [2, 3])]
    if graph_outputs is None:
        graph_outputs = [f32(o, [2, 3]) for o in outputs if o]
    return model([helper.make_node(op, inputs, outputs, name="node", **attrs)],
                 graph_inputs, graph_outputs, opset, initializers)


def scalar(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype), name)


def write_external(out, location, offset=None, length=None):
    folder = os.path.dirname(os.path.abspath(out))
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.write(WEIGHT_BYTES)
    return add_weight_model(external_weight(location, offset, length))


def cycle(opset):
    # a -> b -> a, both fed by the graph input too.
    return model([helper.make_node("Add", ["x", "b_out"], ["a_out"], name="a"),
                  helper.make_node("Relu", ["a_out"], ["b_out"], name="b")],
                 [f32("x", [2, 3])], [f32("b_out", [2, 3])], opset)


def missing_input(opset):
    return model([helper.make_node("Add", ["x", "nowhere"], ["y"],
                                   name="add")],
                 [f32("x", [2, 3])], [f32("y", [2, 3])], opset)


def unknown_op(opset):
    return model([helper.make_node("FooBar", ["x"], ["y"], name="foo")],
                 [f32("x", [2, 3])], [f32("y", [2, 3])], opset)


def build(case, out):
    """Returns a ModelProto to write to `out`, or None if `out` is written."""
    if case == "valid":
        return relu_model()
    if case == "symbolic-dim":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", ["N", 3])], [f32("y", ["N", 3])])
    if case == "opset-too-new":
        return relu_model(opset=22)
    if case == "no-default-opset":
        m = relu_model()
        del m.opset_import[:]
        m.opset_import.append(helper.make_opsetid("com.example", 1))
        return m
    if case == "custom-domain":
        return model([helper.make_node("Relu", ["x"], ["y"], name="custom",
                                       domain="com.example")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])],
                     domains=["com.example"])
    if case == "unknown-op":
        return unknown_op(13)
    if case == "unknown-op-18":
        return unknown_op(18)
    if case == "op-before-opset":
        # Mod first appeared in opset 10.
        return model([helper.make_node("Mod", ["x", "x"], ["y"], name="mod")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])], opset=9)
    if case == "op-version-too-old":
        # Add-6 still had the legacy broadcast attribute; dlc reads Add-7+.
        return model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])], opset=6)
    if case in ("string-input", "complex-input"):
        dtype = (TensorProto.STRING if case == "string-input"
                 else TensorProto.COMPLEX64)
        return model([helper.make_node("Identity", ["x"], ["y"], name="id")],
                     [helper.make_tensor_value_info("x", dtype, [2])],
                     [helper.make_tensor_value_info("y", dtype, [2])])
    if case == "complex-initializer":
        w = numpy_helper.from_array(np.ones([2, 3], np.complex64), "w")
        return add_weight_model(w)
    if case == "bad-attribute":
        return model([helper.make_node("Gelu", ["x"], ["y"], name="gelu",
                                       approximate="bogus")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])], opset=20)
    if case == "missing-input":
        return missing_input(13)
    if case == "missing-input-18":
        return missing_input(18)
    if case == "too-few-inputs-18":
        return model([helper.make_node("Add", ["x"], ["y"], name="add")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])], opset=18)
    if case == "defined-twice-18":
        return model([helper.make_node("Relu", ["x"], ["y"], name="a"),
                      helper.make_node("Relu", ["x"], ["y"], name="b")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])], opset=18)
    if case == "cycle":
        return cycle(13)
    if case == "cycle-18":
        return cycle(18)
    if case == "shape-mismatch":
        return model([helper.make_node("Add", ["x", "z"], ["y"], name="add")],
                     [f32("x", [2, 3]), f32("z", [4])], [f32("y", [2, 3])])
    if case == "output-unproduced":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", [2, 3])], [f32("y", [2, 3]), f32("ghost", [2])])
    if case == "raw-data-size":
        w = numpy_helper.from_array(np.zeros([2, 3], np.float32), "w")
        w.raw_data = w.raw_data[:10]
        return add_weight_model(w)
    if case == "typed-data-size":
        w = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
        w.dims[:] = [2, 3]
        return add_weight_model(w)
    if case == "huge-dims":
        w = numpy_helper.from_array(np.zeros([2, 3], np.float32), "w")
        w.dims[:] = [1 << 30, 1 << 30]
        return add_weight_model(w)
    # 2^38 elements (1 TiB of float32, under the 2^40-element cap) with the
    # data of one: refused by size before the tensor is allocated.
    if case == "huge-float-data":
        return add_weight_model(huge_weight())
    if case == "huge-raw-data":
        w = huge_weight()
        del w.float_data[:]
        w.raw_data = np.ones([1], np.float32).tobytes()
        return add_weight_model(w)
    if case == "huge-constant":
        node = helper.make_node("Constant", [], ["w"], name="const",
                                value=huge_weight())
        return model([node, helper.make_node("Add", ["x", "w"], ["y"],
                                             name="add")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])])

    if case == "ext-dotdot":
        # The file exists outside the folder: '..' is refused, not missed.
        parent = os.path.dirname(os.path.dirname(os.path.abspath(out)))
        with open(os.path.join(parent, "weights.bin"), "wb") as f:
            f.write(WEIGHT_BYTES)
        return write_external(out, "../weights.bin")
    if case == "ext-valid":
        return write_external(out, "weights.bin")
    if case == "ext-absolute":
        folder = os.path.dirname(os.path.abspath(out))
        return write_external(out, os.path.join(folder, "weights.bin"))
    if case == "ext-symlink":
        # model/link.bin -> ../secret.bin, outside the model's folder.
        folder = os.path.dirname(os.path.abspath(out))
        secret = os.path.join(os.path.dirname(folder), "secret.bin")
        with open(secret, "wb") as f:
            f.write(WEIGHT_BYTES)
        link = os.path.join(folder, "link.bin")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(secret, link)
        return write_external(out, "link.bin")
    if case == "ext-offset-beyond":
        return write_external(out, "weights.bin", offset=100)
    if case == "ext-length-beyond":
        return write_external(out, "weights.bin", offset=8, length=24)
    if case == "ext-bad-offset":
        return write_external(out, "weights.bin", offset="-8")
    if case == "ext-missing-file":
        return write_external(out, "nothere.bin")
    if case == "ext-huge":
        # The 24-byte file for a [2^38] float tensor.
        folder = os.path.dirname(os.path.abspath(out))
        with open(os.path.join(folder, "weights.bin"), "wb") as f:
            f.write(WEIGHT_BYTES)
        w = external_weight("weights.bin")
        w.dims[:] = [1 << 38]
        return add_weight_model(w)

    # Graph inputs and outputs.
    if case == "negative-input-dim":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", [-7, 3])], [f32("y", [2, 3])])
    if case == "huge-input":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", [1 << 30, 1 << 30])], [f32("y", [2, 3])])
    if case == "duplicate-input-18":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", [2, 3]), f32("x", [2, 3])],
                     [f32("y", [2, 3])], opset=18)
    if case == "unnamed-input-18":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", [2, 3]), f32("", [2, 3])],
                     [f32("y", [2, 3])], opset=18)
    if case == "output-dim-mismatch":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", [2, 3])], [f32("y", [2, 4])])
    if case == "output-dim-symbolic":
        return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [f32("x", [2, 3])], [f32("y", ["N", None])])

    # Node arity and attribute types past ONNX's checker (opset 18).
    if case == "no-outputs-18":
        return single_node("Relu", ["x"], [], graph_outputs=[f32("x", [2, 3])])
    if case == "too-many-inputs-18":
        return single_node("Relu", ["x", "x", "x"], ["y"])
    if case == "too-many-outputs-18":
        return single_node("Relu", ["x"], ["y", "z"])
    if case == "empty-required-input-18":
        return single_node("Add", ["x", ""], ["y"])
    if case == "reduce-axes-input-18":
        return single_node(
            "ReduceMean", ["x", "axes"], ["y"], graph_outputs=[f32("y", [2])],
            initializers=[numpy_helper.from_array(np.array([1]), "axes")],
            keepdims=0)
    if case == "pad-axes-input-18":
        return single_node(
            "Pad", ["x", "pads", "", "axes"], ["y"],
            graph_outputs=[f32("y", [2, 5])],
            initializers=[numpy_helper.from_array(np.array([1, 1]), "pads"),
                          numpy_helper.from_array(np.array([1]), "axes")])
    if case == "dropout-no-data-18":
        return single_node("Dropout", ["", "r", "t"], ["y"],
                           initializers=[scalar("r", 0.5),
                                         scalar("t", True, np.bool_)])
    if case == "softmax-axis-ints-18":
        return single_node("Softmax", ["x"], ["y"], axis=[1])
    if case == "softmax-axis-ints":
        return single_node("Softmax", ["x"], ["y"], opset=13, axis=[1])
    if case in ("gemm-alpha-string-18", "gemm-alpha-int-18"):
        return single_node(
            "Gemm", ["x", "w"], ["y"], graph_outputs=[f32("y", [2, 2])],
            initializers=[numpy_helper.from_array(
                np.ones([3, 2], np.float32), "w")],
            alpha="2" if case == "gemm-alpha-string-18" else 2)
    if case == "conv-strides-floats-18":
        return single_node(
            "Conv", ["x", "w"], ["y"], graph_inputs=[f32("x", [1, 1, 4, 4])],
            graph_outputs=[f32("y", [1, 1, 2, 2])],
            initializers=[numpy_helper.from_array(
                np.ones([1, 1, 3, 3], np.float32), "w")],
            strides=[1.0, 1.0])
    if case == "constant-value-int-18":
        return single_node("Constant", [], ["y"], graph_inputs=[],
                           graph_outputs=[f32("y", [])], value=5)
    if case == "lstm-activations-string-18":
        return single_node(
            "LSTM", ["x", "w", "r"], ["y"],
            graph_inputs=[f32("x", [1, 1, 2])],
            graph_outputs=[f32("y", [1, 1, 1, 1])],
            initializers=[
                numpy_helper.from_array(np.ones([1, 4, 2], np.float32), "w"),
                numpy_helper.from_array(np.ones([1, 4, 1], np.float32), "r")],
            hidden_size=1, activations="Tanh")

    # Graphs out of order, at an opset the checker does not see.
    if case == "reversed-chain-18":
        return relu_chain(3)
    if case == "long-reversed-chain-18":
        return relu_chain(20000)
    if case == "cycle-with-tail-18":
        # a <-> b, and c after the cycle.
        return model([helper.make_node("Relu", ["b_out"], ["c_out"], name="c"),
                      helper.make_node("Add", ["x", "b_out"], ["a_out"],
                                       name="a"),
                      helper.make_node("Relu", ["a_out"], ["b_out"],
                                       name="b")],
                     [f32("x", [2, 3])], [f32("c_out", [2, 3])], 18)
    if case == "missing-upstream-18":
        # `use` waits on `t`, whose producer waits on a value nobody makes.
        return model([helper.make_node("Relu", ["t"], ["y"], name="use"),
                      helper.make_node("Relu", ["nowhere"], ["t"],
                                       name="make")],
                     [f32("x", [2, 3])], [f32("y", [2, 3])], 18)

    if case == "truncated":
        # A valid model with a weight, cut inside the weight's bytes.
        w = numpy_helper.from_array(np.ones([16, 16], np.float32), "w")
        m = model([helper.make_node("Relu", ["w"], ["y"], name="relu")],
                  [], [f32("y", [16, 16])], initializers=[w])
        data = m.SerializeToString()
        with open(out, "wb") as f:
            f.write(data[:len(data) // 2])
        return None
    if case == "random-bytes":
        with open(out, "wb") as f:
            f.write(random.Random(1234).randbytes(4096))
        return None
    if case == "empty":
        open(out, "wb").close()
        return None

    x = np.zeros([2, 3], np.float32)
    if case == "npz-good":
        np.savez(out, x=x)
    elif case == "npz-missing":
        np.savez(out, other=x)
    elif case == "npz-dtype":
        np.savez(out, x=x.astype(np.int32))
    elif case == "npz-shape":
        np.savez(out, x=np.zeros([3, 2], np.float32))
    elif case == "npz-extra":
        np.savez(out, x=x, extra=x)
    elif case == "npz-random":
        with open(out, "wb") as f:
            f.write(random.Random(1234).randbytes(1024))
    elif case == "npz-truncated":
        np.savez(out, x=np.ones([64, 64], np.float32))
        with open(out, "rb") as f:
            data = f.read()
        with open(out, "wb") as f:
            f.write(data[:len(data) // 2])
    elif case == "npz-bad-member":
        # A valid zip whose member is not a .npy file.
        with zipfile.ZipFile(out, "w") as z:
            z.writestr("x.npy", b"this is not an npy file")
    else:
        sys.exit("make_bad_model.py: unknown case '%s'" % case)
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_bad_model.py CASE OUT")
    case, out = sys.argv[1], sys.argv[2]
    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    m = build(case, out)
    if m is not None:
        with open(out, "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
