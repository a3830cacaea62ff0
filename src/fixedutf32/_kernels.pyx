# Cython directives live in setup.py; a "# cython:" header here would override them.
"""Wrappers of the C kernels in ``csrc/`` for fixed_length_utf32 data.

The loops are C: one table of kernels per SIMD level (``csrc/table.h``,
listed in ``csrc/kernels.h``), each returning a status.  One table is chosen
here, at import and by ``set_simd_level``; the ``def`` wrappers call through
it with the GIL released and hand the status back to the Python layer
(``fixedutf32.chunk``, ``fixedutf32.transcode``), which checks arguments and
raises.  Buffers are read as raw bytes, so that any start address works;
lengths are counted in 4-byte code units.

Every wrapper returns its status the same way, a tuple ``(kind, element,
position, detail)`` (see ``csrc/common.h``); ``fixedutf32._status`` turns it
into an exception.  The wrappers check only what keeps memory safe.
"""

import os
import threading

from cpython.buffer cimport (
    PyBUF_SIMPLE,
    PyBUF_WRITABLE,
    PyBuffer_FillInfo,
    PyBuffer_Release,
    PyObject_GetBuffer,
)
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int64_t, uint8_t, uintptr_t

cdef extern from "csrc/kernels.h" nogil:
    ctypedef struct fu32_status:
        int kind
        Py_ssize_t element
        Py_ssize_t position
        int64_t detail
    const int FU32_OK
    const int FU32_TOO_LARGE
    const int FU32_SURROGATE
    const int FU32_STRING_TOO_LONG
    const int FU32_UTF8_HEADER_BITS
    const int FU32_UTF8_TOO_SHORT
    const int FU32_UTF8_STRAY_CONTINUATION
    const int FU32_UTF8_OVERLONG
    const int FU32_UTF8_TOO_LARGE
    const int FU32_UTF8_SURROGATE
    const int FU32_BAD_OFFSETS
    const int FU32_BAD_VLEN
    const int FU32_VALIDATE
    const int FU32_SRC_SWAPPED
    const int FU32_SWAP
    const int FU32_STREAM
    const int FU32_VLEN
    const int FU32_UTF8_SLACK
    const int FU32_HAVE_AVX2
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
    # One level's kernels (csrc/table.h): the same signatures at every level.
    ctypedef struct fu32_kernels:
        const char *name
        unsigned needs
        fu32_status (*validate)(const uint8_t *src, Py_ssize_t n, Py_ssize_t width,
                                int flags) noexcept nogil
        fu32_status (*convert)(const uint8_t *src, uint8_t *dst, Py_ssize_t n, Py_ssize_t width,
                               int flags) noexcept nogil
        fu32_status (*repad)(const uint8_t *src, uint8_t *dst, Py_ssize_t n_elems,
                             Py_ssize_t from_units, Py_ssize_t to_units, int flags) noexcept nogil
        fu32_status (*str_lengths)(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                   Py_ssize_t *lengths, int flags) noexcept nogil
        fu32_status (*utf32_to_utf8)(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                     int flags, int64_t *offsets, uint8_t *dst, Py_ssize_t pos,
                                     Py_ssize_t cap, Py_ssize_t *out_len,
                                     Py_ssize_t *done) noexcept nogil
        fu32_status (*utf8_to_utf32)(const int64_t *starts, const int64_t *ends,
                                     Py_ssize_t stride, Py_ssize_t n, const uint8_t *values,
                                     Py_ssize_t values_len, Py_ssize_t width, int flags,
                                     uint8_t *dst) noexcept nogil
        fu32_status (*longest)(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                               Py_ssize_t *longest, int flags) noexcept nogil
    const int FU32_LEVEL_COUNT
    const fu32_kernels *fu32_level(int index)
    int fu32_level_runs(int index, unsigned features)
    int fu32_level_for_features(unsigned features)
    int fu32_cpu_level()
    unsigned fu32_cpu_features()

cdef extern from "csrc/buffer.h" nogil:
    void *fu32_buffer_alloc(size_t size)
    void fu32_buffer_free(void *p)

# Flags of convert, repad and str_lengths.
VALIDATE = FU32_VALIDATE
SRC_SWAPPED = FU32_SRC_SWAPPED
SWAP = FU32_SWAP
STREAM = FU32_STREAM

# Status kinds, one name per meaning (csrc/common.h).
OK = FU32_OK
TOO_LARGE = FU32_TOO_LARGE
SURROGATE = FU32_SURROGATE
STRING_TOO_LONG = FU32_STRING_TOO_LONG
UTF8_HEADER_BITS = FU32_UTF8_HEADER_BITS
UTF8_TOO_SHORT = FU32_UTF8_TOO_SHORT
UTF8_STRAY_CONTINUATION = FU32_UTF8_STRAY_CONTINUATION
UTF8_OVERLONG = FU32_UTF8_OVERLONG
UTF8_TOO_LARGE = FU32_UTF8_TOO_LARGE
UTF8_SURROGATE = FU32_UTF8_SURROGATE
BAD_OFFSETS = FU32_BAD_OFFSETS
BAD_VLEN = FU32_BAD_VLEN

# The status of every call that found nothing wrong (no tuple built; a C
# global, so that returning it costs no module lookup).
cdef tuple _OK_STATUS = (FU32_OK, 0, 0, 0)
OK_STATUS = _OK_STATUS


cdef inline tuple status_tuple(fu32_status r):
    if r.kind == FU32_OK:
        return _OK_STATUS
    return (r.kind, r.element, r.position, r.detail)

# ---------------------------------------------------------------------------
# Runtime dispatch
# ---------------------------------------------------------------------------

# Each level is one table of kernels in C (csrc/kernels.h lists them, slowest
# first, each with the CPU and OS features it needs); one is picked here, at
# import and by set_simd_level, and every wrapper calls through it.
_LEVEL_NAMES = tuple(fu32_level(i).name.decode("ascii") for i in range(FU32_LEVEL_COUNT))
# "scalar" was the portable level's first name; users and scripts still pass it.
_LEVEL_ALIASES = {"scalar": "portable"}

# The table in use is one pointer in C (csrc/capi.h), read and written
# atomically: the C API's callers and, on free-threaded Python, the
# wrappers read it on other threads while set_simd_level writes it.
cdef extern from "csrc/capi.h" nogil:
    ctypedef struct fixedutf32_api:
        unsigned abi_major
        unsigned abi_minor
    const fixedutf32_api fu32_capi
    const char *FIXEDUTF32_CAPSULE_NAME
    const fu32_kernels *fu32_active_table()
    void fu32_set_active_table(const fu32_kernels *k)

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


# The CPU does not change while the process runs: ask it once (CPUID and
# XGETBV cost tens of microseconds on a virtual machine).
_FEATURES = fu32_cpu_features()
_AVAILABLE_LEVELS = tuple(
    name for index, name in enumerate(_LEVEL_NAMES) if fu32_level_runs(index, _FEATURES))
_BEST_LEVEL = _LEVEL_NAMES[fu32_cpu_level()]  # what "best" means on this CPU


def available_simd_levels():
    """Return the kernel implementations this CPU can run, slowest first.

    Returns
    -------
    tuple of str
        Always starts with ``"portable"`` (plain C loops that the compiler
        vectorizes for the target's baseline: SSE2 on x86-64, NEON on
        aarch64); ``"avx2"`` follows on x86-64 CPUs and systems that have
        AVX2, BMI1, BMI2, LZCNT and POPCNT and save the YMM registers (every
        instruction the AVX2 code is built with).

    Examples
    --------
    >>> import fixedutf32
    >>> fixedutf32.available_simd_levels()[0]
    'portable'
    """
    return _AVAILABLE_LEVELS


def get_simd_level():
    """Return the name of the kernel implementation in use.

    Returns
    -------
    str
        ``"portable"`` or ``"avx2"``.

    Examples
    --------
    >>> import fixedutf32
    >>> fixedutf32.get_simd_level() in fixedutf32.available_simd_levels()
    True
    """
    return fu32_active_table().name.decode("ascii")


def set_simd_level(name):
    """Pick the kernel implementation used by every later call.

    Every kernel (chunk and UTF-8 alike) runs at the one level chosen here;
    every level gives the same results and reports the same errors.

    Parameters
    ----------
    name : str
        ``"portable"``, ``"avx2"`` or ``"best"`` (the fastest this CPU has);
        ``"scalar"`` is accepted as an alias of ``"portable"``.  The
        environment variable ``FIXEDUTF32_SIMD`` sets it at import.

    Returns
    -------
    str
        The implementation that was in use before.

    Raises
    ------
    ValueError
        If ``name`` is unknown or this CPU cannot run it.

    Examples
    --------
    >>> import fixedutf32
    >>> previous = fixedutf32.set_simd_level("portable")
    >>> fixedutf32.get_simd_level()
    'portable'
    >>> fixedutf32.set_simd_level(previous)
    'portable'
    """
    previous = get_simd_level()
    available = available_simd_levels()
    if name == "best":
        name = _BEST_LEVEL
    elif type(name) is str:
        name = _LEVEL_ALIASES.get(name, name)
    if name not in _LEVEL_NAMES:
        raise ValueError(
            f"unknown SIMD level {name!r}; expected one of {_LEVEL_NAMES + ('best',)}, the levels "
            f"of this build ('scalar' is an alias of 'portable')")
    if name not in available:
        raise ValueError(
            f"SIMD level {name!r} is not supported by this CPU; available: {available}")
    fu32_set_active_table(fu32_level(_LEVEL_NAMES.index(name)))
    return previous


def _level_from_environment():
    # Named here, not in set_simd_level: the variable is what the user set.
    value = os.environ.get("FIXEDUTF32_SIMD", "best") or "best"
    try:
        set_simd_level(value)
    except ValueError as exc:
        raise ValueError(
            f"the environment variable FIXEDUTF32_SIMD is {value!r}: {exc}; set "
            f"FIXEDUTF32_SIMD to one of those, or unset it") from None


_level_from_environment()

# The C API (include/fixedutf32/fixedutf32.h): the table of entries, for
# compiled callers, which load it with fixedutf32_import().
_C_API = PyCapsule_New(<void *>&fu32_capi, FIXEDUTF32_CAPSULE_NAME, NULL)
C_API_VERSION = (fu32_capi.abi_major, fu32_capi.abi_minor)

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


def validate(data, Py_ssize_t width, bint swapped):
    """Check that every code unit of ``data`` is a scalar value; a status."""
    check_units(width, "width")
    cdef Py_buffer src
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status
    acquire(data, &src, False)
    try:
        with nogil:
            status = k.validate(<const uint8_t *>src.buf, src.len // 4, width,
                                FU32_SRC_SWAPPED if swapped else 0)
    finally:
        PyBuffer_Release(&src)
    return status_tuple(status)


# destination may be source itself (in place); it is then left as it was on error.
def convert(source, destination, Py_ssize_t width, int flags):
    """Copy the code units of ``source`` into ``destination`` by ``flags``; a status."""
    return _convert(source, destination, width, flags, False)


cdef tuple _convert(object source, object destination, Py_ssize_t width, int flags, bint exact):
    # exact: destination must be exactly as large as source (a new array
    # that would otherwise be handed back partly unwritten).
    check_units(width, "width")
    cdef Py_buffer src, dst
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status
    cdef Py_ssize_t n
    acquire(source, &src, False)
    try:
        acquire(destination, &dst, True)
        try:
            n = src.len // 4
            if dst.len < 4 * n or (exact and dst.len != src.len):
                raise ValueError(
                    f"destination holds {dst.len} bytes, need {src.len if exact else 4 * n}")
            with nogil:
                status = k.convert(<const uint8_t *>src.buf, <uint8_t *>dst.buf, n, width, flags)
        finally:
            PyBuffer_Release(&dst)
    finally:
        PyBuffer_Release(&src)
    return status_tuple(status)


def repad(source, destination, Py_ssize_t from_units, Py_ssize_t to_units, int flags):
    """Change the width of every element; ``destination`` None only checks.  A status."""
    check_units(from_units, "from_units")
    check_units(to_units, "to_units")
    cdef Py_buffer src, dst
    cdef Py_ssize_t n_elems
    cdef uint8_t *d = NULL  # NULL: check only
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status
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
                status = k.repad(<const uint8_t *>src.buf, d, n_elems, from_units, to_units, flags)
        finally:
            if destination is not None:
                PyBuffer_Release(&dst)
    finally:
        PyBuffer_Release(&src)
    return status_tuple(status)


def str_lengths(source, Py_ssize_t[::1] lengths, Py_ssize_t width, int flags):
    """Fill ``lengths`` with code points per element; a status."""
    check_units(width, "width")
    cdef Py_buffer src
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status
    cdef Py_ssize_t n_elems
    acquire(source, &src, False)
    try:
        n_elems = src.len // (4 * width)
        if lengths.shape[0] < n_elems:
            raise ValueError(f"lengths holds {lengths.shape[0]} entries, need {n_elems}")
        with nogil:
            status = k.str_lengths(<const uint8_t *>src.buf, n_elems, width,
                                   &lengths[0] if n_elems > 0 else NULL, flags)
    finally:
        PyBuffer_Release(&src)
    return status_tuple(status)


# One pass, no array of lengths written (what check needs of a chunk).  On error longest
# covers only some of the elements before the failing one.
def longest(source, Py_ssize_t width, int flags):
    """Return ``(status, longest)``: the longest element of ``source`` in code points."""
    check_units(width, "width")
    cdef Py_buffer src
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status
    cdef Py_ssize_t best = 0
    acquire(source, &src, False)
    try:
        with nogil:
            status = k.longest(<const uint8_t *>src.buf, src.len // (4 * width), width, &best,
                               flags)
    finally:
        PyBuffer_Release(&src)
    return status_tuple(status), best


def overlap(first, second):
    """How two buffers overlap: 0 disjoint, 1 the same bytes, 2 partly."""
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

cdef enum:
    _POOL_MIN = 32 * 1024
    _POOL_MAX_BUFFERS = 64
POOL_MIN_BYTES = _POOL_MIN
POOL_MAX_BUFFERS = _POOL_MAX_BUFFERS
cdef dict _pool = {}              # capacity -> [address, ...], most recent last
cdef Py_ssize_t _pool_bytes = 0
cdef Py_ssize_t _pool_count = 0
cdef Py_ssize_t _pool_limit = 512 << 20
# Held by every change to the pool: on free-threaded Python buffers are freed
# and taken on several threads at once.  Reentrant, because a collection run
# inside a change may free a buffer on the same thread.
cdef object _pool_lock = threading.RLock()


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
        cdef bint kept = False
        if self.data == NULL:
            return
        lock = _pool_lock
        if lock is not None and _pool is not None:  # None once the module is torn down
            with lock:
                # C names only: a buffer freed while the interpreter shuts down (a thread's
                # scratch) finds the module's Python globals gone.
                if (_pool_bytes + self.capacity <= _pool_limit
                        and _pool_count < _POOL_MAX_BUFFERS):
                    _pool.setdefault(self.capacity, []).append(<uintptr_t>self.data)
                    _pool_bytes += self.capacity
                    _pool_count += 1
                    kept = True
        if not kept:
            fu32_buffer_free(self.data)
        self.data = NULL


# The caller holds _pool_lock and pops the address from _pool[capacity].
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
    return _new_buffer(nbytes)


cdef PooledBuffer _new_buffer(Py_ssize_t nbytes):
    if nbytes < 0:
        raise ValueError("nbytes must not be negative")
    cdef PooledBuffer buffer = PooledBuffer.__new__(PooledBuffer)
    cdef Py_ssize_t capacity = -1
    cdef uintptr_t address = 0
    if _pool_count:
        with _pool_lock:
            capacity = _pool_take(nbytes)
            if capacity >= 0:
                address = _pool[capacity].pop()
    if capacity >= 0:
        buffer.data = <uint8_t *>address
        buffer.capacity = capacity
    else:
        buffer.data = <uint8_t *>fu32_buffer_alloc(<size_t>nbytes)
        if buffer.data == NULL:
            raise MemoryError(f"cannot allocate {nbytes} bytes")
        buffer.capacity = nbytes
    buffer.size = nbytes
    return buffer


# The public one, documented: fixedutf32.chunk.set_buffer_pool_limit.
def set_buffer_pool_limit(Py_ssize_t nbytes):
    """Keep at most ``nbytes`` of freed buffers; return the previous limit."""
    global _pool_limit, _pool_bytes, _pool_count
    if nbytes < 0:
        raise ValueError(f"bad pool limit {nbytes}")
    with _pool_lock:
        previous = _pool_limit
        _pool_limit = nbytes
        for capacity in sorted(_pool, reverse=True):
            addresses = _pool[capacity]
            while addresses and _pool_bytes > _pool_limit:
                fu32_buffer_free(<void *><uintptr_t>addresses.pop())
                _pool_bytes -= capacity
                _pool_count -= 1
    return previous


# Outputs at least this large are written with non-temporal stores: they
# would not fit in the last-level cache anyway, and streaming saves the read
# of each destination line.
cdef enum:
    _STREAM_MIN = 16 * 1024 * 1024
STREAM_MIN_BYTES = _STREAM_MIN

import numpy
# Bound once, as C globals: converted() calls them for every chunk.
cdef object _np_empty = numpy.empty
cdef object _np_frombuffer = numpy.frombuffer


# decode_chunk's and encode_chunk's common case in one call.  The caller passes both sizes (no
# attribute of dtype is read): count items, nbytes in all, exactly source's size (else ValueError).
# Pool memory from POOL_MIN_BYTES, non-temporal stores from STREAM_MIN_BYTES.
def converted(source, dtype, count, Py_ssize_t nbytes, Py_ssize_t width, int flags):
    """Return ``(status, array)``: ``source``'s units converted by ``flags`` into a new array."""
    if nbytes < _POOL_MIN:
        result = _np_empty(count, dtype)
    else:
        result = _np_frombuffer(_new_buffer(nbytes), dtype)
        if nbytes >= _STREAM_MIN:
            flags |= FU32_STREAM
    return _convert(source, result, width, flags, True), result


def buffer_pool_bytes():
    """Bytes held by freed output buffers waiting for reuse (see set_buffer_pool_limit).

    Returns
    -------
    int
        The total size of the buffers in the pool.
    """
    return _pool_bytes


include "_transcode.pxi"
include "_batch.pxi"
include "_arrow.pxi"
include "_files.pxi"
