"""Threads hammering the kernels at once, for a free-threaded Python (tools/freethreaded.sh).

Each round runs THREADS threads that, on the same buffers and on buffers of
their own, decode, validate, encode and transcode chunks (single and batched
calls), change the SIMD level and the buffer pool limit, and compare every
result with the one computed beforehand on one thread.  Exits 1 on the first
difference, 0 when every round agreed.  Runs on any Python; without the GIL
the threads really overlap.
"""

import sys
import threading
import time

import numpy as np

import fixedutf32

THREADS = 8
SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
WIDTH = 16


def main() -> int:
    rng = np.random.default_rng(0)
    letters = np.array(list("aé日😀 xyz"))
    texts = ["".join(rng.choice(letters, rng.integers(0, WIDTH + 1))) for _ in range(4096)]
    array = np.array(texts, f"<U{WIDTH}")
    shared_big = bytes(fixedutf32.encode_chunk(array, endian="big"))  # 256 KiB: from the pool
    shared_chunks = [shared_big[i : i + 4096] for i in range(0, len(shared_big), 4096)]
    bad = bytearray(shared_big)
    bad[4 * 1000 : 4 * 1000 + 4] = (0xD800).to_bytes(4, "big")
    bad = bytes(bad)
    offsets, values = fixedutf32.to_utf8(array)
    expected_utf8 = values.tobytes()
    levels = fixedutf32.available_simd_levels()
    failures: list[str] = []
    calls = [0] * THREADS
    stop = time.monotonic() + SECONDS

    def check(ok: bool, what: str) -> None:
        if not ok and len(failures) < 10:
            failures.append(what)

    def work(index: int) -> None:
        own = bytearray(shared_big)  # a buffer of this thread only, decoded in place
        while time.monotonic() < stop and not failures:
            decoded = fixedutf32.decode_chunk(shared_big, 4 * WIDTH, endian="big")
            check(np.array_equal(decoded, array), "decode_chunk of the shared chunk")
            parts = fixedutf32.decode_chunks(shared_chunks, 4 * WIDTH, endian="big")
            check(np.array_equal(np.concatenate(parts), array), "decode_chunks")
            try:
                fixedutf32.validate(bad, 4 * WIDTH, endian="big")
                check(False, "validate let a surrogate through")
            except fixedutf32.InvalidCodePointError as error:
                check((error.index, error.position) == (1000 // WIDTH, 1000 % WIDTH), "position")
            own[:] = shared_big
            fixedutf32.decode_chunk(own, 4 * WIDTH, endian="big", out=own)
            check(bytes(own) == array.tobytes(), "in-place decode of a thread's own buffer")
            check(fixedutf32.to_utf8(decoded)[1].tobytes() == expected_utf8, "to_utf8")
            back = fixedutf32.from_utf8(offsets, values, 4 * WIDTH)
            check(np.array_equal(back, array), "from_utf8")
            if index == 0:  # one thread flips the level and the pool limit under the others
                fixedutf32.set_simd_level(levels[calls[0] % len(levels)])
                fixedutf32.set_buffer_pool_limit((calls[0] % 3) << 20)
            calls[index] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    gil = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
    print(
        f"{THREADS} threads for {SECONDS:.0f} s (GIL {'on' if gil else 'off'}): "
        f"{sum(calls)} rounds of 6 calls, {len(failures)} failures"
    )
    for failure in failures:
        print("  failed:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
