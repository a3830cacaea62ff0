# Included at the end of _kernels.pyx: the Arrow C data interface
# (https://arrow.apache.org/docs/format/CDataInterface.html) and its PyCapsule
# protocol, without pyarrow.  Exporting wraps an offsets array and a values
# array in an ArrowSchema and an ArrowArray that keep both alive until the
# consumer releases them; importing reads the fields of a producer's structs
# and lends its buffers as Python buffers.  fixedutf32._arrow checks what it
# is given and words the errors.

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from libc.stdlib cimport free, malloc


cdef struct ArrowSchema:
    const char *format
    const char *name
    const char *metadata
    int64_t flags
    int64_t n_children
    ArrowSchema **children
    ArrowSchema *dictionary
    void (*release)(ArrowSchema *) noexcept
    void *private_data


cdef struct ArrowArray:
    int64_t length
    int64_t null_count
    int64_t offset
    int64_t n_buffers
    int64_t n_children
    const void **buffers
    ArrowArray **children
    ArrowArray *dictionary
    void (*release)(ArrowArray *) noexcept
    void *private_data


cdef struct ArrowArrayStream:
    int (*get_schema)(ArrowArrayStream *, ArrowSchema *out) noexcept
    int (*get_next)(ArrowArrayStream *, ArrowArray *out) noexcept
    const char *(*get_last_error)(ArrowArrayStream *) noexcept
    void (*release)(ArrowArrayStream *) noexcept
    void *private_data


cdef enum:
    ARROW_FLAG_NULLABLE = 2

# The producer's structs live in capsules named by the protocol; each
# capsule releases its struct (if still owned) and frees it when collected.


cdef void _schema_capsule_free(object capsule) noexcept:
    cdef ArrowSchema *s = <ArrowSchema *>PyCapsule_GetPointer(capsule, b"arrow_schema")
    if s != NULL:
        if s.release != NULL:
            s.release(s)
        free(s)


cdef void _array_capsule_free(object capsule) noexcept:
    cdef ArrowArray *a = <ArrowArray *>PyCapsule_GetPointer(capsule, b"arrow_array")
    if a != NULL:
        if a.release != NULL:
            a.release(a)
        free(a)


# --- export -----------------------------------------------------------------

cdef struct _Exported:
    PyObject *owner          # (offsets, values): kept alive until the consumer releases
    const void *buffers[3]


cdef uint8_t _EMPTY_VALUES[1]


cdef void _release_schema(ArrowSchema *s) noexcept:
    s.release = NULL  # format and name are static strings


cdef void _release_array(ArrowArray *a) noexcept with gil:
    # A consumer may release from any thread, with or without the GIL.
    cdef _Exported *e = <_Exported *>a.private_data
    if e != NULL:
        Py_XDECREF(e.owner)
        free(e)
    a.private_data = NULL
    a.release = NULL


cdef object _new_schema_capsule(bint large):
    cdef ArrowSchema *s = <ArrowSchema *>malloc(sizeof(ArrowSchema))
    if s == NULL:
        raise MemoryError()
    s.format = b"U" if large else b"u"
    s.name = b""
    s.metadata = NULL
    s.flags = ARROW_FLAG_NULLABLE
    s.n_children = 0
    s.children = NULL
    s.dictionary = NULL
    s.release = _release_schema
    s.private_data = NULL
    return PyCapsule_New(s, b"arrow_schema", _schema_capsule_free)


def arrow_schema(bint large):
    """A capsule ``arrow_schema`` of type string (``large``: large_string)."""
    return _new_schema_capsule(large)


# offsets: C-contiguous int32 (int64 with large), length + 1 entries; values: the UTF-8 bytes.
# No copy: both are kept alive until the consumer releases the array.
def arrow_export(offsets, values, Py_ssize_t length, bint large):
    """``(arrow_schema, arrow_array)`` capsules of a string array over the buffers given."""
    cdef Py_buffer off, val
    cdef ArrowArray *a
    cdef _Exported *e
    owner = (offsets, values)
    acquire(offsets, &off, False)
    try:
        acquire(values, &val, False)
        try:
            if length < 0 or off.len < (length + 1) * (8 if large else 4):
                raise ValueError(f"offsets hold {off.len} bytes, too few for {length} strings")
            a = <ArrowArray *>malloc(sizeof(ArrowArray))
            e = <_Exported *>malloc(sizeof(_Exported))
            if a == NULL or e == NULL:
                free(a)
                free(e)
                raise MemoryError()
            # The buffers' addresses stay valid: ``owner`` holds the objects
            # that own them (NumPy arrays, which never move their memory).
            e.buffers[0] = NULL  # no validity bitmap: no nulls
            e.buffers[1] = off.buf
            e.buffers[2] = val.buf if val.len else <const void *>_EMPTY_VALUES
        finally:
            PyBuffer_Release(&val)
    finally:
        PyBuffer_Release(&off)
    Py_INCREF(owner)
    e.owner = <PyObject *>owner
    a.length = length
    a.null_count = 0
    a.offset = 0
    a.n_buffers = 3
    a.n_children = 0
    a.buffers = e.buffers
    a.children = NULL
    a.dictionary = NULL
    a.release = _release_array
    a.private_data = e
    array_capsule = PyCapsule_New(a, b"arrow_array", _array_capsule_free)
    return _new_schema_capsule(large), array_capsule


# --- import -----------------------------------------------------------------

cdef class BorrowedBuffer:
    """Read-only bytes at an address that ``owner`` keeps valid (a producer's Arrow buffer)."""
    cdef const uint8_t *data
    cdef Py_ssize_t size
    cdef object owner

    def __getbuffer__(self, Py_buffer *view, int flags):
        PyBuffer_FillInfo(view, self, <void *>self.data, self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer *view):
        pass

    def __len__(self):
        return self.size


def borrowed_buffer(uintptr_t address, Py_ssize_t size, owner):
    """A BorrowedBuffer of ``size`` bytes at ``address``, holding ``owner``."""
    if address == 0 or size < 0:
        raise ValueError(f"bad buffer at {address:#x} of {size} bytes")
    cdef BorrowedBuffer buffer = BorrowedBuffer.__new__(BorrowedBuffer)
    buffer.data = <const uint8_t *>address
    buffer.size = size
    buffer.owner = owner
    return buffer


def arrow_schema_format(schema_capsule):
    """``(format, n_children, has_dictionary)`` of an ``arrow_schema`` capsule."""
    cdef ArrowSchema *s = <ArrowSchema *>PyCapsule_GetPointer(schema_capsule, b"arrow_schema")
    if s.release == NULL:
        raise ValueError("the ArrowSchema was already released")
    format = b""
    if s.format != NULL:
        format = s.format
    return format, s.n_children, s.dictionary != NULL


def arrow_array_fields(array_capsule):
    """``(length, null_count, offset, buffer addresses)`` of an ``arrow_array`` capsule."""
    cdef ArrowArray *a = <ArrowArray *>PyCapsule_GetPointer(array_capsule, b"arrow_array")
    cdef int64_t i
    if a.release == NULL:
        raise ValueError("the ArrowArray was already released")
    if a.n_buffers < 0 or a.n_buffers > 64 or (a.n_buffers and a.buffers == NULL):
        raise ValueError(f"the ArrowArray has a bad buffer list ({a.n_buffers} buffers)")
    addresses = tuple(<uintptr_t>a.buffers[i] for i in range(a.n_buffers))
    return a.length, a.null_count, a.offset, addresses


cdef str _stream_error(ArrowArrayStream *stream, int code):
    cdef const char *message = NULL
    if stream.get_last_error != NULL:
        message = stream.get_last_error(stream)
    text = message.decode("utf-8", "replace") if message != NULL else "no message"
    return f"the Arrow stream failed (error {code}): {text}"


def arrow_stream_arrays(stream_capsule):
    """Consume a stream: ``(arrow_schema capsule, [arrow_array capsule, ...])``, one per array."""
    cdef ArrowArrayStream *stream = <ArrowArrayStream *>PyCapsule_GetPointer(
        stream_capsule, b"arrow_array_stream")
    cdef ArrowSchema *s
    cdef ArrowArray *a
    cdef int code
    if stream.release == NULL:
        raise ValueError("the ArrowArrayStream was already released")
    s = <ArrowSchema *>malloc(sizeof(ArrowSchema))
    if s == NULL:
        raise MemoryError()
    s.release = NULL
    schema = PyCapsule_New(s, b"arrow_schema", _schema_capsule_free)
    code = stream.get_schema(stream, s)
    if code != 0:
        raise ValueError(_stream_error(stream, code))
    arrays = []
    while True:
        a = <ArrowArray *>malloc(sizeof(ArrowArray))
        if a == NULL:
            raise MemoryError()
        a.release = NULL
        capsule = PyCapsule_New(a, b"arrow_array", _array_capsule_free)
        code = stream.get_next(stream, a)
        if code != 0:
            raise ValueError(_stream_error(stream, code))
        if a.release == NULL:  # the end of the stream
            break
        arrays.append(capsule)
    return schema, arrays


def is_capsule(obj, bytes name):
    """Whether ``obj`` is a capsule of that name."""
    return bool(PyCapsule_IsValid(obj, name))
