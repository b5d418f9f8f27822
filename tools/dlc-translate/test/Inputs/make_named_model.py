"""Writes models whose node names and op types hold line breaks and escapes.

    make_named_model.py CASE OUT

For the tests of how the tools print such names (tools/common/Diagnostics):
every error must stay on one line, so a name from the model is printed with
its control characters and backslashes escaped. Models are built with
onnx.helper at test time instead of being committed.
"""
import sys

import onnx
from onnx import TensorProto, helper


def model(nodes, opset=18):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph(nodes, "names", [x], [y])
    # Opset 18: the importer, not ONNX's checker, rejects an unknown op.
    return helper.make_model(graph, ir_version=8,
                             opset_imports=[helper.make_opsetid("", opset)])


def build(case):
    if case == "newline-node":
        # The location names the node.
        return model([helper.make_node("FooBar", ["x"], ["y"],
                                       name="first\nsecond")])
    if case == "newline-op-type":
        return model([helper.make_node("Foo\nBar", ["x"], ["y"],
                                       name="foo")])
    if case == "control-chars":
        return model([helper.make_node("FooBar", ["x"], ["y"],
                                       name="tab\tcr\rbell\x07back\\slash")])
    if case == "cycle":
        # The message lists the nodes of the cycle by name as well.
        return model([
            helper.make_node("Add", ["x", "b_out"], ["a_out"], name="a\nA"),
            helper.make_node("Relu", ["a_out"], ["b_out"], name="b\r\nB"),
            helper.make_node("Relu", ["a_out"], ["y"], name="out")])
    raise SystemExit("unknown case '%s'" % case)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    onnx.save(build(sys.argv[1]), sys.argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
