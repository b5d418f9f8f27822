"""Checks appendOnnxInitializers against ONNX itself.

Builds a small model with onnx.helper (its graph adds an initializer to the
input, so the checker sees an initializer in use), writes initializers of
every dtype ONNX and NumPy share (plus bfloat16 as uint16 bits) with
np.savez, appends them with dlc_onnx_export_sample, then loads the result
with onnx.load, runs onnx.checker.check_model and compares every
initializer's dtype, shape and values with NumPy's.

Usage: onnx_export_check.py PATH/TO/dlc_onnx_export_sample
Exits 77 (skipped) when numpy or onnx cannot be imported.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)


def main():
    tool = sys.argv[1]
    dtypes = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
              'uint32', 'uint64', 'float16', 'float32', 'float64']
    arrays = {}
    for i, name in enumerate(dtypes):
        values = (np.arange(6) + i) % 2 if name == 'bool' else np.arange(6) - i
        arrays['w_' + name] = values.astype(name).reshape(2, 3)
    arrays['w_scalar'] = np.array(3.5, dtype=np.float32)
    arrays['w_empty'] = np.zeros((0, 4), dtype=np.int64)
    arrays['w_long'] = np.arange(300, dtype=np.float32) / 7
    # bfloat16 bits of 1.0, -2.0, 0.5 and 3.0.
    arrays['bf16_w'] = np.array([0x3f80, 0xc000, 0x3f00, 0x4040],
                                dtype=np.uint16)

    with tempfile.TemporaryDirectory() as d:
        x = helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3])
        y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 3])
        graph = helper.make_graph(
            [helper.make_node('Add', ['x', 'w_float32'], ['y'])], 'g', [x], [y])
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid('', 17)])
        base, inits, out = (os.path.join(d, f)
                            for f in ('base.onnx', 'inits.npz', 'out.onnx'))
        onnx.save(model, base)
        np.savez(inits, **arrays)
        subprocess.run([tool, base, inits, out], check=True)
        result = onnx.load(out)

    onnx.checker.check_model(result, full_check=True)
    assert [n.op_type for n in result.graph.node] == ['Add']
    found = {t.name: t for t in result.graph.initializer}
    assert sorted(found) == sorted(arrays), sorted(found)
    for name, expected in arrays.items():
        tensor = found[name]
        got = numpy_helper.to_array(tensor)
        if name.startswith('bf16_'):
            assert tensor.data_type == TensorProto.BFLOAT16, tensor.data_type
            expected = (expected.astype(np.uint32) << 16).view(np.float32)
        assert got.dtype == expected.dtype, (name, got.dtype, expected.dtype)
        assert got.shape == expected.shape, (name, got.shape, expected.shape)
        assert np.array_equal(got, expected), (name, got, expected)
    print(f"ok: {len(arrays)} initializers")


if __name__ == '__main__':
    main()
