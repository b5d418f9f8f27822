"""Reads a TensorBoard event file as TensorBoard does, without TensorFlow:
the TFRecord framing (each length and payload checked against its masked
CRC-32C) and the Event protobuf decoded from the wire with the field
numbers of TensorFlow's event.proto and summary.proto (Event: wall_time 1,
step 2, file_version 3, summary 5; Summary.value 1; Value: tag 1,
simple_value 2).

Prints `version <file_version>` for the first event, then `<tag> <step>
<value>` per scalar (value as float32 shows it, %.9g), and exits 1 on any
framing or decoding error.

Usage: read_tfevents.py DIR   (the directory's single events.out.tfevents.*)
"""
import glob
import os
import struct
import sys


def crc32c(data):
    crc = 0xffffffff
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82f63b78 if crc & 1 else crc >> 1
    return crc ^ 0xffffffff


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xa282ead8) & 0xffffffff


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7f) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def fields(data):
    """(field number, wire type, value) of a message's fields."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        elif wire == 2:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        else:
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def main():
    paths = glob.glob(os.path.join(sys.argv[1], "events.out.tfevents.*"))
    if len(paths) != 1:
        sys.exit(f"expected one event file, found {len(paths)}")
    data = open(paths[0], "rb").read()
    at = 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if masked(crc32c(header)) != length_crc:
            sys.exit(f"record at {at}: bad length CRC")
        payload = data[at + 12:at + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[at + 12 + length:
                                                  at + 16 + length])
        if len(payload) != length or masked(crc32c(payload)) != payload_crc:
            sys.exit(f"record at {at}: bad payload CRC")
        at += 16 + length
        step = 0
        for number, wire, value in fields(payload):
            if number == 2 and wire == 0:
                step = value
            elif number == 3 and wire == 2:
                print("version", value.decode())
            elif number == 5 and wire == 2:
                for n, w, entry in fields(value):
                    assert n == 1 and w == 2, (n, w)
                    tag, number_ = None, None
                    for n2, w2, v2 in fields(entry):
                        if n2 == 1 and w2 == 2:
                            tag = v2.decode()
                        elif n2 == 2 and w2 == 5:
                            (number_,) = struct.unpack("<f", v2)
                    if tag is None or number_ is None:
                        sys.exit(f"step {step}: a summary value without "
                                 f"its tag or simple_value")
                    print(tag, step, "%.9g" % number_)


if __name__ == "__main__":
    main()
