"""Philox4x32-10 as runtime/support/Philox.h defines dlc's draws, written
from the generator's definition for the tests' references (dropout masks,
dlc.random_uniform, augmentation parameters)."""


def philox_uniform(seed, stream, index):
    """The draw of element `index` of stream `stream` under `seed`: the
    first output word for counter (index low, index high, stream, 0) and
    key (seed low, seed high), times 2^-32, in [0, 1)."""
    m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    mask = 0xFFFFFFFF
    c = [index & mask, (index >> 32) & mask, stream & mask, 0]
    k = [seed & mask, (seed >> 32) & mask]
    for _ in range(10):
        p0, p1 = m0 * c[0], m1 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & mask,
             (p0 >> 32) ^ c[3] ^ k[1], p0 & mask]
        k = [(k[0] + w0) & mask, (k[1] + w1) & mask]
    return c[0] * 2.0 ** -32
