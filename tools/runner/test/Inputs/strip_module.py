"""Writes the runner a training binary was made from.

    strip_module.py BINARY OUT

A training binary is [runner][module][module size: 8 bytes little-endian]
["DLCMEXE1"] (runtime/module/Embedded.h); OUT gets the runner's bytes, as
an executable.
"""
import os
import struct
import sys

binary, out = sys.argv[1], sys.argv[2]
data = open(binary, "rb").read()
assert data[-8:] == b"DLCMEXE1", "no embedded module"
(size,) = struct.unpack("<Q", data[-16:-8])
with open(out, "wb") as f:
    f.write(data[:len(data) - 16 - size])
os.chmod(out, 0o755)
