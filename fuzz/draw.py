"""Turn the fuzzer's bytes into choices.

Every target reads its input through :class:`Draw`, so the same target runs
under atheris (coverage-guided bytes from libFuzzer) and under the plain
random driver, and a saved input replays to the same calls. When the bytes
run out every draw returns its smallest choice, so short inputs stay valid.
"""

import numpy as np

# Code points a string may hold: ASCII, Latin-1, BMP, astral, U+0000.
_RANGES = [(0x20, 0x7E), (0xA0, 0xFF), (0x100, 0xD7FF), (0xE000, 0xFFFD), (0x10000, 0x10FFFF),
           (0, 0)]
_SURROGATES = (0xD800, 0xDFFF)


class Draw:
    def __init__(self, data):
        self.data = bytes(data)
        self.pos = 0

    def int(self, lo, hi):
        """An integer in [lo, hi], from as few bytes as the range needs."""
        span = hi - lo
        if span <= 0:
            return lo
        need = (span.bit_length() + 7) // 8
        chunk = self.data[self.pos:self.pos + need]
        self.pos += need
        return lo + int.from_bytes(chunk, "little") % (span + 1)

    def bool(self, p_true=0.5):
        return self.int(0, 255) < int(256 * p_true)

    def choice(self, options):
        return options[self.int(0, len(options) - 1)]

    def bytes(self, n):
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def code_point(self, surrogates=False):
        ranges = _RANGES + ([_SURROGATES] if surrogates else [])
        lo, hi = self.choice(ranges)
        return self.int(lo, hi)

    def text(self, max_len, surrogates=False):
        return "".join(chr(self.code_point(surrogates)) for _ in range(self.int(0, max_len)))

    def unit(self):
        """A 32-bit code unit: mostly a scalar value, sometimes not."""
        kind = self.int(0, 9)
        if kind < 6:
            return self.code_point()
        if kind < 8:
            return self.int(0xD800, 0xDFFF)
        return self.int(0x110000, 0xFFFFFFFF)


def units_to_bytes(units, endian):
    """A (n, cap) array of code units as the chunk's bytes."""
    return np.asarray(units, dtype=np.uint32).astype("<u4" if endian == "little" else ">u4").tobytes()


def strings_to_units(strings, cap):
    """Code points of each string, padded with U+0000 to ``cap`` units."""
    units = np.zeros((len(strings), cap), dtype=np.uint32)
    for i, s in enumerate(strings):
        units[i, :len(s)] = [ord(c) for c in s]
    return units


def is_scalar(unit):
    return unit <= 0x10FFFF and not 0xD800 <= unit <= 0xDFFF
