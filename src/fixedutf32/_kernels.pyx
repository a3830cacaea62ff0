# Cython directives live in setup.py; a "# cython:" header here would override them.
"""Whole-chunk kernels for fixed_length_utf32 data.

Every loop here is ``noexcept nogil`` and returns a status; the ``def``
wrappers release the GIL around them and hand the status back to the Python
layer (``fixedutf32.chunk``), which checks arguments and raises.  Buffers are
byte buffers (``uint8_t[::1]``) so that any start address works; lengths are
counted in 4-byte code units.

The scalar loops below are the reference.  The SIMD paths in ``_simd.h`` do
the bulk of the work and return a resume index; the scalar loop finishes from
there, so that an error is always pinned down by the same code.
"""

import os

from fixedutf32._checks import check_byte_count as _check_byte_count

from cpython.buffer cimport (
    PyBUF_SIMPLE,
    PyBUF_WRITABLE,
    PyBuffer_FillInfo,
    PyBuffer_Release,
    PyObject_GetBuffer,
)
from libc.stdint cimport int64_t, uint8_t, uint32_t, uintptr_t
from libc.string cimport memcpy, memset

cdef extern from "_simd.h" nogil:
    uint32_t fu32_bswap32(uint32_t value)
    uint32_t fu32_load_unit(const uint8_t *p)
    void fu32_store_unit(uint8_t *p, uint32_t value)
    const int FU32_VALIDATE
    const int FU32_SRC_SWAPPED
    const int FU32_SWAP
    const int FU32_STREAM
    const int FU32_HAVE_AVX2
    const int FU32_LEVEL_PORTABLE
    const int FU32_LEVEL_AVX2
    const unsigned FU32_CPU_AVX2
    const unsigned FU32_CPU_BMI1
    const unsigned FU32_CPU_BMI2
    const unsigned FU32_CPU_LZCNT
    const unsigned FU32_CPU_POPCNT
    const unsigned FU32_CPU_AVX
    const unsigned FU32_CPU_OSXSAVE
    const unsigned FU32_CPU_OS_YMM
    const unsigned FU32_AVX2_NEEDS
    const char *FU32_AVX2_TARGET_FLAGS
    unsigned fu32_cpu_features()
    int fu32_level_for_features(unsigned features)
    int fu32_cpu_level()
    void *fu32_buffer_alloc(size_t size)
    void fu32_buffer_free(void *p)
    Py_ssize_t fu32_portable_validate(const uint8_t *src, Py_ssize_t n, int swapped)
    Py_ssize_t fu32_portable_convert(const uint8_t *src, uint8_t *dst, Py_ssize_t n, int flags)
    Py_ssize_t fu32_portable_repad(const uint8_t *src, uint8_t *dst, Py_ssize_t n_elems,
                                   Py_ssize_t from_units, Py_ssize_t to_units, int flags)
    Py_ssize_t fu32_portable_str_lengths(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                         Py_ssize_t *lengths, int flags)
    Py_ssize_t fu32_avx2_validate(const uint8_t *src, Py_ssize_t n, int swapped)
    Py_ssize_t fu32_avx2_convert(const uint8_t *src, uint8_t *dst, Py_ssize_t n, int flags)
    Py_ssize_t fu32_avx2_repad(const uint8_t *src, uint8_t *dst, Py_ssize_t n_elems,
                               Py_ssize_t from_units, Py_ssize_t to_units, int flags)
    Py_ssize_t fu32_avx2_str_lengths(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                     Py_ssize_t *lengths, int flags)

VALIDATE = FU32_VALIDATE
SRC_SWAPPED = FU32_SRC_SWAPPED
SWAP = FU32_SWAP
STREAM = FU32_STREAM

cdef enum RepadKind:
    KIND_OK = 0
    KIND_INVALID_CODE_POINT = 1
    KIND_TOO_LONG = 2

# Status kinds returned by repad.
OK = KIND_OK
INVALID_CODE_POINT = KIND_INVALID_CODE_POINT
TOO_LONG = KIND_TOO_LONG

# ---------------------------------------------------------------------------
# Runtime dispatch
# ---------------------------------------------------------------------------

# The levels are chosen in one place, fu32_cpu_level() in _simd.h, from one
# list of required CPU and OS features (FU32_AVX2_NEEDS) that matches the
# target flags every AVX2 function is compiled with.
_LEVEL_NAMES = ("scalar", "avx2")  # indexed by FU32_LEVEL_*

cdef int _simd_level = FU32_LEVEL_PORTABLE

# Feature bits of _cpu_features() and _level_for_features(), for tests.
AVX2_COMPILED = bool(FU32_HAVE_AVX2)
AVX2_TARGET_FLAGS = FU32_AVX2_TARGET_FLAGS.decode("ascii")  # what the AVX2 code is built for
AVX2_NEEDS = FU32_AVX2_NEEDS
CPU_FEATURES = {
    "avx2": FU32_CPU_AVX2,
    "bmi1": FU32_CPU_BMI1,
    "bmi2": FU32_CPU_BMI2,
    "lzcnt": FU32_CPU_LZCNT,
    "popcnt": FU32_CPU_POPCNT,
    "avx": FU32_CPU_AVX,
    "osxsave": FU32_CPU_OSXSAVE,
    "os_ymm": FU32_CPU_OS_YMM,
}


def _cpu_features():
    """The CPU and OS features the chooser reads, as a bit mask of CPU_FEATURES."""
    return fu32_cpu_features()


def _level_for_features(unsigned features):
    """The name of the level the chooser picks for a feature mask (a pure function)."""
    return _LEVEL_NAMES[fu32_level_for_features(features)]


def available_simd_levels():
    """Return the kernel implementations this CPU can run, slowest first.

    Returns
    -------
    tuple of str
        Always starts with ``"scalar"``; ``"avx2"`` follows on x86-64 CPUs
        and systems that have AVX2, BMI1, BMI2, LZCNT and POPCNT and save
        the YMM registers (every instruction the AVX2 code is built with).
    """
    if fu32_cpu_level() == FU32_LEVEL_AVX2:
        return ("scalar", "avx2")
    return ("scalar",)


def get_simd_level():
    """Return the name of the kernel implementation in use (``"scalar"`` or ``"avx2"``)."""
    return _LEVEL_NAMES[_simd_level]


def set_simd_level(name):
    """Pick the kernel implementation used by every later call.

    Parameters
    ----------
    name : str
        ``"scalar"``, ``"avx2"`` or ``"best"`` (the fastest this CPU has).
        The environment variable ``FIXEDUTF32_SIMD`` sets it at import.

    Returns
    -------
    str
        The implementation that was in use before.

    Raises
    ------
    ValueError
        If ``name`` is unknown or this CPU cannot run it.
    """
    global _simd_level
    previous = _LEVEL_NAMES[_simd_level]
    available = available_simd_levels()
    if name == "best":
        name = available[len(available) - 1]
    if name not in _LEVEL_NAMES:
        raise ValueError(
            f"unknown SIMD level {name!r}; expected one of {_LEVEL_NAMES + ('best',)}")
    if name not in available:
        raise ValueError(
            f"SIMD level {name!r} is not supported by this CPU; available: {available}")
    _simd_level = _LEVEL_NAMES.index(name)
    return previous


set_simd_level(os.environ.get("FIXEDUTF32_SIMD", "best") or "best")

# ---------------------------------------------------------------------------
# Scalar reference loops
# ---------------------------------------------------------------------------

cdef inline bint is_scalar_value(uint32_t c) noexcept nogil:
    # A Unicode scalar value: at most U+10FFFF and not a surrogate.
    return c <= 0x10FFFF and (c ^ 0xD800) >= 0x800


cdef inline uint32_t load_native(const uint8_t *p, bint swapped) noexcept nogil:
    cdef uint32_t value = fu32_load_unit(p)
    return fu32_bswap32(value) if swapped else value


cdef Py_ssize_t find_invalid_scalar(const uint8_t *src, Py_ssize_t n, bint swapped) noexcept nogil:
    """Index of the first unit that is not a scalar value, or -1."""
    cdef Py_ssize_t i
    for i in range(n):
        if not is_scalar_value(load_native(src + 4 * i, swapped)):
            return i
    return -1


cdef Py_ssize_t convert_scalar(const uint8_t *src, uint8_t *dst, Py_ssize_t n, int flags) noexcept nogil:
    """Copy (and swap) n units, checking each before it is written.

    Returns -1, or the index of the first invalid unit: units before it are
    written, it and the ones after are untouched.
    """
    cdef bint validate = (flags & FU32_VALIDATE) != 0
    cdef bint src_swapped = (flags & FU32_SRC_SWAPPED) != 0
    cdef bint swap = (flags & FU32_SWAP) != 0
    cdef Py_ssize_t i
    cdef uint32_t raw
    for i in range(n):
        raw = fu32_load_unit(src + 4 * i)
        if validate and not is_scalar_value(fu32_bswap32(raw) if src_swapped else raw):
            return i
        fu32_store_unit(dst + 4 * i, fu32_bswap32(raw) if swap else raw)
    return -1


cdef struct RepadStatus:
    int kind             # a RepadKind
    Py_ssize_t element   # element index
    Py_ssize_t position  # code unit inside the element


cdef RepadStatus repad_scalar(const uint8_t *src, uint8_t *dst, Py_ssize_t n_elems,
                              Py_ssize_t from_units, Py_ssize_t to_units, int flags) noexcept nogil:
    """Element by element width change; dst may be NULL (check only)."""
    cdef bint validate = (flags & FU32_VALIDATE) != 0
    cdef bint src_swapped = (flags & FU32_SRC_SWAPPED) != 0
    cdef bint swap = (flags & FU32_SWAP) != 0
    cdef Py_ssize_t keep = from_units if from_units < to_units else to_units
    cdef Py_ssize_t e, j
    cdef const uint8_t *s
    cdef uint8_t *d
    cdef RepadStatus status
    status.kind = KIND_OK
    status.element = -1
    status.position = -1
    for e in range(n_elems):
        s = src + 4 * e * from_units
        for j in range(to_units, from_units):
            if fu32_load_unit(s + 4 * j) != 0:
                status.kind = KIND_TOO_LONG
                status.element = e
                status.position = j
                return status
        if validate:
            for j in range(keep):
                if not is_scalar_value(load_native(s + 4 * j, src_swapped)):
                    status.kind = KIND_INVALID_CODE_POINT
                    status.element = e
                    status.position = j
                    return status
        if dst != NULL:
            d = dst + 4 * e * to_units
            if swap:
                for j in range(keep):
                    fu32_store_unit(d + 4 * j, fu32_bswap32(fu32_load_unit(s + 4 * j)))
            else:
                memcpy(d, s, 4 * keep)
            memset(d + 4 * keep, 0, 4 * (to_units - keep))
    return status


cdef Py_ssize_t str_lengths_scalar(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                   Py_ssize_t *lengths, int flags) noexcept nogil:
    """Lengths without trailing U+0000; -1, or the flat index of the first invalid unit."""
    cdef bint validate = (flags & FU32_VALIDATE) != 0
    cdef bint src_swapped = (flags & FU32_SRC_SWAPPED) != 0
    cdef Py_ssize_t e, j, length
    cdef const uint8_t *s
    for e in range(n_elems):
        s = src + 4 * e * width
        if validate:
            for j in range(width):
                if not is_scalar_value(load_native(s + 4 * j, src_swapped)):
                    return e * width + j
        length = width
        while length > 0 and fu32_load_unit(s + 4 * (length - 1)) == 0:
            length -= 1
        lengths[e] = length
    return -1

# ---------------------------------------------------------------------------
# Dispatchers: the SIMD path does the bulk, the scalar loop finishes
# ---------------------------------------------------------------------------

cdef Py_ssize_t validate_units(const uint8_t *src, Py_ssize_t n, bint swapped, int level) noexcept nogil:
    cdef Py_ssize_t resume, bad
    if level == FU32_LEVEL_AVX2:
        resume = fu32_avx2_validate(src, n, swapped)
    else:
        resume = fu32_portable_validate(src, n, swapped)
    if resume < 0:
        return -1
    bad = find_invalid_scalar(src + 4 * resume, n - resume, swapped)
    return -1 if bad < 0 else resume + bad


cdef Py_ssize_t convert_units(const uint8_t *src, uint8_t *dst, Py_ssize_t n, int flags, int level) noexcept nogil:
    cdef Py_ssize_t resume, bad
    if level == FU32_LEVEL_AVX2:
        resume = fu32_avx2_convert(src, dst, n, flags)
    else:
        resume = fu32_portable_convert(src, dst, n, flags)
    if resume < 0:
        return -1
    bad = convert_scalar(src + 4 * resume, dst + 4 * resume, n - resume, flags)
    if bad < 0:
        return -1
    bad += resume
    if src == dst and (flags & FU32_SWAP):
        # In place: swap the converted prefix back so the caller's buffer is
        # exactly as it was.
        convert_units(dst, dst, bad, FU32_SWAP, level)
    return bad


cdef RepadStatus repad_elements(const uint8_t *src, uint8_t *dst, Py_ssize_t n_elems,
                                Py_ssize_t from_units, Py_ssize_t to_units, int flags,
                                int level) noexcept nogil:
    cdef Py_ssize_t resume
    cdef RepadStatus status
    if level == FU32_LEVEL_AVX2:
        resume = fu32_avx2_repad(src, dst, n_elems, from_units, to_units, flags)
    else:
        resume = fu32_portable_repad(src, dst, n_elems, from_units, to_units, flags)
    status = repad_scalar(src + 4 * resume * from_units,
                          dst + 4 * resume * to_units if dst != NULL else NULL,
                          n_elems - resume, from_units, to_units, flags & ~FU32_STREAM)
    if status.kind != KIND_OK:
        status.element += resume
    return status


cdef Py_ssize_t str_lengths_elements(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                     Py_ssize_t *lengths, int flags, int level) noexcept nogil:
    cdef Py_ssize_t resume, bad
    if level == FU32_LEVEL_AVX2:
        resume = fu32_avx2_str_lengths(src, n_elems, width, lengths, flags)
    else:
        resume = fu32_portable_str_lengths(src, n_elems, width, lengths, flags)
    if resume < 0:
        return -1
    bad = str_lengths_scalar(src + 4 * resume * width, n_elems - resume, width,
                             lengths + resume, flags)
    return -1 if bad < 0 else resume * width + bad

# ---------------------------------------------------------------------------
# Python entry points (argument checks and messages live in chunk.py)
# ---------------------------------------------------------------------------
# Each wrapper checks what keeps memory safe whatever it is given: widths in
# range, so that no product like 4 * width (plus a vector of units) wraps,
# and buffers large enough for what the loop writes.  The messages are terse:
# the public functions check their arguments before and word the errors.

cdef extern from *:
    Py_ssize_t PY_SSIZE_T_MAX

# The widest element, in code units, any wrapper takes.
MAX_UNITS = PY_SSIZE_T_MAX // 8


cdef int check_units(Py_ssize_t units, str name) except -1:
    if units <= 0 or units > PY_SSIZE_T_MAX // 8:
        raise ValueError(f"{name} {units} out of range 1..{PY_SSIZE_T_MAX // 8}")
    return 0


cdef inline bint fits(Py_ssize_t have, Py_ssize_t count, Py_ssize_t size) noexcept nogil:
    """count * size <= have, without computing the product (count, size >= 0)."""
    return count == 0 or size <= have // count


cdef int acquire(object obj, Py_buffer *view, bint writable) except -1:
    # PyBUF_SIMPLE: contiguous bytes, whatever the format (so NumPy U arrays
    # and memoryviews of any item type pass without a cast).  The Python
    # layer has already checked types and contiguity and worded the errors.
    return PyObject_GetBuffer(obj, view, PyBUF_SIMPLE | (PyBUF_WRITABLE if writable else 0))


def validate(data, bint swapped):
    """Index of the first code unit that is not a Unicode scalar value, or -1."""
    cdef Py_buffer src
    cdef int level = _simd_level
    cdef Py_ssize_t bad
    acquire(data, &src, False)
    try:
        with nogil:
            bad = validate_units(<const uint8_t *>src.buf, src.len // 4, swapped, level)
    finally:
        PyBuffer_Release(&src)
    return bad


def convert(source, destination, int flags):
    """Copy the code units of ``source`` into ``destination`` by ``flags``.

    ``destination`` may be ``source`` itself (in place).  Returns -1, or the
    index of the first invalid unit; an in-place buffer is then left as it was.
    """
    cdef Py_buffer src, dst
    cdef int level = _simd_level
    cdef Py_ssize_t bad, n
    acquire(source, &src, False)
    try:
        acquire(destination, &dst, True)
        try:
            n = src.len // 4
            if dst.len < 4 * n:
                raise ValueError(f"destination holds {dst.len} bytes, need {4 * n}")
            with nogil:
                bad = convert_units(<const uint8_t *>src.buf, <uint8_t *>dst.buf, n, flags, level)
        finally:
            PyBuffer_Release(&dst)
    finally:
        PyBuffer_Release(&src)
    return bad


def repad(source, destination, Py_ssize_t from_units, Py_ssize_t to_units, int flags):
    """Change the width of every element; ``destination`` None only checks.

    Returns ``(kind, element, position)``: kind ``OK``, ``INVALID_CODE_POINT``
    (position is the unit inside the element) or ``TOO_LONG`` (position is
    the first non-zero unit past the new width).
    """
    check_units(from_units, "from_units")
    check_units(to_units, "to_units")
    cdef Py_buffer src, dst
    cdef uint8_t *d = NULL
    cdef int level = _simd_level
    cdef RepadStatus status
    cdef Py_ssize_t n_elems
    acquire(source, &src, False)
    try:
        n_elems = src.len // (4 * from_units)
        if destination is not None:
            acquire(destination, &dst, True)
        try:
            if destination is not None:
                if not fits(dst.len, n_elems, 4 * to_units):
                    raise ValueError(f"destination holds {dst.len} bytes, too few for {n_elems} "
                                     f"elements of {to_units} units")
                d = <uint8_t *>dst.buf
            with nogil:
                status = repad_elements(<const uint8_t *>src.buf, d, n_elems, from_units, to_units,
                                        flags, level)
        finally:
            if destination is not None:
                PyBuffer_Release(&dst)
    finally:
        PyBuffer_Release(&src)
    return status.kind, status.element, status.position


def str_lengths(source, Py_ssize_t[::1] lengths, Py_ssize_t width, int flags):
    """Fill ``lengths`` with code points per element; -1 or the first invalid unit."""
    check_units(width, "width")
    cdef Py_buffer src
    cdef int level = _simd_level
    cdef Py_ssize_t bad, n_elems
    acquire(source, &src, False)
    try:
        n_elems = src.len // (4 * width)
        if lengths.shape[0] < n_elems:
            raise ValueError(f"lengths holds {lengths.shape[0]} entries, need {n_elems}")
        with nogil:
            bad = str_lengths_elements(<const uint8_t *>src.buf, n_elems, width,
                                       &lengths[0] if n_elems > 0 else NULL, flags, level)
    finally:
        PyBuffer_Release(&src)
    return bad


def overlap(first, second):
    """0 when the buffers are disjoint, 1 when they are the same bytes, 2 when they partly overlap."""
    cdef Py_buffer a, b
    cdef uintptr_t a0, a1, b0, b1
    acquire(first, &a, False)
    try:
        acquire(second, &b, False)
        try:
            a0 = <uintptr_t>a.buf
            b0 = <uintptr_t>b.buf
            a1 = a0 + <uintptr_t>a.len
            b1 = b0 + <uintptr_t>b.len
        finally:
            PyBuffer_Release(&b)
    finally:
        PyBuffer_Release(&a)
    if a0 == a1 or b0 == b1:
        return 0
    if a0 == b0 and a1 == b1:
        return 1
    if a0 < b1 and b0 < a1:
        return 2
    return 0


# ---------------------------------------------------------------------------
# Output buffer pool
# ---------------------------------------------------------------------------
# A new large array costs a page fault and a kernel-zeroed page per 4 KiB on
# first touch (for a 64 MiB chunk, more than the decode itself), and glibc
# gives a freed 64 KiB block back to the system at once, to fault it in again
# on the next call.  Freed output buffers of at least POOL_MIN_BYTES are kept
# (up to a limit in bytes and in count) and handed out again, so that decoding
# chunk after chunk writes to memory that is already mapped, as a memory pool
# in Arrow does.

POOL_MIN_BYTES = 32 * 1024
POOL_MAX_BUFFERS = 64
cdef dict _pool = {}              # capacity -> [address, ...], most recent last
cdef Py_ssize_t _pool_bytes = 0
cdef Py_ssize_t _pool_count = 0
cdef Py_ssize_t _pool_limit = 512 << 20


cdef class PooledBuffer:
    """A writable, 64-byte aligned byte buffer whose memory goes back to the pool when freed."""
    cdef uint8_t *data
    cdef Py_ssize_t size
    cdef Py_ssize_t capacity

    def __getbuffer__(self, Py_buffer *view, int flags):
        PyBuffer_FillInfo(view, self, self.data, self.size, 0, flags)

    def __releasebuffer__(self, Py_buffer *view):
        pass

    def __len__(self):
        return self.size

    def __dealloc__(self):
        global _pool_bytes, _pool_count
        if self.data == NULL:
            return
        if (_pool is not None and _pool_bytes + self.capacity <= _pool_limit
                and _pool_count < POOL_MAX_BUFFERS):
            _pool.setdefault(self.capacity, []).append(<uintptr_t>self.data)
            _pool_bytes += self.capacity
            _pool_count += 1
        else:
            fu32_buffer_free(self.data)
        self.data = NULL


cdef Py_ssize_t _pool_take(Py_ssize_t nbytes) except -2:
    """Capacity of a pooled buffer for ``nbytes`` (taken out of the pool), or -1."""
    global _pool_bytes, _pool_count
    cdef Py_ssize_t capacity = nbytes, best = -1
    if not _pool_count:
        return -1
    if not _pool.get(nbytes):
        # No exact fit: the smallest one that is at most twice the size.
        for capacity, addresses in _pool.items():
            if addresses and nbytes <= capacity <= 2 * nbytes and (best < 0 or capacity < best):
                best = capacity
        if best < 0:
            return -1
        capacity = best
    _pool_bytes -= capacity
    _pool_count -= 1
    return capacity


def new_buffer(Py_ssize_t nbytes):
    """A writable buffer of ``nbytes`` (contents undefined), reused from the pool when possible."""
    if nbytes < 0:
        raise ValueError("nbytes must not be negative")
    cdef PooledBuffer buffer = PooledBuffer.__new__(PooledBuffer)
    cdef Py_ssize_t capacity = _pool_take(nbytes)
    if capacity >= 0:
        buffer.data = <uint8_t *><uintptr_t>_pool[capacity].pop()
        buffer.capacity = capacity
    else:
        buffer.data = <uint8_t *>fu32_buffer_alloc(<size_t>nbytes)
        if buffer.data == NULL:
            raise MemoryError(f"cannot allocate {nbytes} bytes")
        buffer.capacity = nbytes
    buffer.size = nbytes
    return buffer


def set_buffer_pool_limit(nbytes):
    """Keep at most ``nbytes`` of freed output buffers for reuse (0 turns the pool off).

    A chunk of at least 32 KiB decoded or encoded into a new array takes its
    memory from this pool when a freed buffer of a fitting size is there,
    which avoids the page faults of fresh memory.  At most 64 buffers and, by
    default, 512 MiB are kept.

    Parameters
    ----------
    nbytes : int
        The new limit in bytes; buffers beyond it are freed at once.

    Returns
    -------
    int
        The previous limit.

    Raises
    ------
    ValueError
        If ``nbytes`` is negative or above ``sys.maxsize``.
    TypeError
        If ``nbytes`` is not an int.

    Examples
    --------
    >>> import fixedutf32
    >>> previous = fixedutf32.set_buffer_pool_limit(0)  # free the pool
    >>> fixedutf32.buffer_pool_bytes()
    0
    >>> fixedutf32.set_buffer_pool_limit(previous)
    0
    """
    global _pool_limit, _pool_bytes, _pool_count
    cdef Py_ssize_t limit = _check_byte_count(nbytes, "the pool limit")
    previous = _pool_limit
    _pool_limit = limit
    for capacity in sorted(_pool, reverse=True):
        addresses = _pool[capacity]
        while addresses and _pool_bytes > _pool_limit:
            fu32_buffer_free(<void *><uintptr_t>addresses.pop())
            _pool_bytes -= capacity
            _pool_count -= 1
    return previous


def buffer_pool_bytes():
    """Bytes held by freed output buffers waiting for reuse (see set_buffer_pool_limit).

    Returns
    -------
    int
        The total size of the buffers in the pool.
    """
    return _pool_bytes

include "_transcode.pxi"
