"""Type stubs for the compiled kernels (see _kernels.pyx and _transcode.pxi)."""

from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer as _Buffer
from typing_extensions import TypeVar

# Anything with the buffer protocol.  NumPy's stubs give ndarray __buffer__
# only for Python >= 3.12, so it is named here for 3.11.
Buffer: TypeAlias = _Buffer | np.ndarray[Any, Any]

# What a function with an ``out=`` argument returns: ``out`` as given or,
# when ``out`` is omitted or None, a new array of the default type.
BytesOutT = TypeVar("BytesOutT", bound=Buffer, default=npt.NDArray[np.uint8])
StrOutT = TypeVar("StrOutT", bound=Buffer, default=npt.NDArray[np.str_])

# A kernel's status: (kind, element, position, detail), kinds below.
Status = tuple[int, int, int, int]

# Flags of convert, repad and str_lengths.
VALIDATE: int
SRC_SWAPPED: int
SWAP: int
STREAM: int

# Status kinds (csrc/common.h), one name per meaning.
OK: int
TOO_LARGE: int
SURROGATE: int
STRING_TOO_LONG: int
UTF8_HEADER_BITS: int
UTF8_TOO_SHORT: int
UTF8_STRAY_CONTINUATION: int
UTF8_OVERLONG: int
UTF8_TOO_LARGE: int
UTF8_SURROGATE: int
BAD_OFFSETS: int
BAD_VLEN: int
OK_STATUS: Status

# The level chooser (csrc/kernels.h) and the CPU features it reads (csrc/cpu.h).
AVX2_COMPILED: bool
AVX2_TARGET_FLAGS: str
AVX2_NEEDS: int
CPU_FEATURES: dict[str, int]

# The C API (include/fixedutf32/fixedutf32.h): a PyCapsule holding the table.
_C_API: object
C_API_VERSION: tuple[int, int]

def _cpu_features() -> int: ...
def _level_for_features(features: int) -> str: ...
def available_simd_levels() -> tuple[str, ...]: ...
def get_simd_level() -> str: ...
def set_simd_level(name: str) -> str: ...

# Chunk kernels (entries of each level's table, csrc/table.h).
MAX_UNITS: int

def validate(data: Buffer, width: int, swapped: bool) -> Status: ...
def convert(source: Buffer, destination: Buffer, width: int, flags: int) -> Status: ...
def converted(
    source: Buffer, dtype: np.dtype[Any], count: int, nbytes: int, width: int, flags: int
) -> tuple[Status, npt.NDArray[Any]]: ...
def repad(
    source: Buffer, destination: Buffer | None, from_units: int, to_units: int, flags: int
) -> Status: ...
def str_lengths(source: Buffer, lengths: Buffer, width: int, flags: int) -> Status: ...
def longest(source: Buffer, width: int, flags: int) -> tuple[Status, int]: ...
def overlap(first: Buffer, second: Buffer) -> int: ...

# The output buffer pool.
POOL_MIN_BYTES: int
STREAM_MIN_BYTES: int
POOL_MAX_BUFFERS: int

class PooledBuffer:
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

def new_buffer(nbytes: int) -> PooledBuffer: ...
def set_buffer_pool_limit(nbytes: int) -> int: ...
def buffer_pool_bytes() -> int: ...

# UTF-8 kernels (table entries, and csrc/layout.h; wrapped in _transcode.pxi).
UTF8_SLACK: int

def utf32_to_utf8(
    source: Buffer,
    width: int,
    swap: bool,
    validate: bool,
    offsets: Buffer | None,
    destination: Buffer,
    vlen: bool,
    start: int = 0,
    pos: int = 0,
) -> tuple[Status, int, int]: ...
def utf8_to_utf32(
    positions: Buffer,
    stride: int,
    n: int,
    values: Buffer,
    width: int,
    swap: bool,
    destination: Buffer | None,
) -> Status: ...
def utf8_vlen_parse(chunk: Buffer, n: int, positions: Buffer) -> Status: ...
def utf8_scatter_fixed(
    offsets: Buffer, values: Buffer, destination: Buffer, stride: int
) -> None: ...

# The batched wrapper (_batch.pxi) and the status kinds it adds for sizes and overlaps.
BATCH_BAD_SIZE: int
BATCH_BAD_OUT_SIZE: int
BATCH_OVERLAP: int
BATCH_OUTS_OVERLAP: int

def overlap_many(sources: list[Any], destinations: list[Any]) -> tuple[int, Status]: ...
def convert_many(
    # Lists of buffers (the kernel takes only a list), one buffer, or None.
    sources: list[Any],
    destinations: list[Any] | Buffer | None,
    width: int,
    flags: int,
    check_first: bool,
) -> tuple[int, Status]: ...
def converted_many(
    sources: list[Any], width: int, flags: int
) -> tuple[int, Status, npt.NDArray[np.uint8] | None, int]: ...

# The Arrow C data interface and its PyCapsule protocol (_arrow.pxi).
class BorrowedBuffer:
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

def arrow_schema(large: bool) -> object: ...
def arrow_export(
    offsets: Buffer, values: Buffer, length: int, large: bool
) -> tuple[object, object]: ...
def borrowed_buffer(address: int, size: int, owner: object) -> BorrowedBuffer: ...
def arrow_schema_format(schema_capsule: object) -> tuple[bytes, int, bool]: ...
def arrow_array_fields(array_capsule: object) -> tuple[int, int, int, tuple[int, ...]]: ...
def arrow_stream_arrays(stream_capsule: object) -> tuple[object, list[object]]: ...
def is_capsule(obj: object, name: bytes) -> bool: ...

# Chunk files read and checked in place as they land (_files.pxi).
FILE_MISSING: int
FILE_UNUSUAL: int
FILE_INVALID: int
FILE_SHORT: int

def read_files(
    dir_fd: int,
    names: list[bytes],
    destination: Buffer,
    starts: npt.NDArray[np.intp],
    nbytes: int,
    bounce: Buffer | None,
    width: int,
    flags: int,
    check_first: bool = False,
) -> tuple[int, int, Status]: ...
def read_checked(
    fd: int,
    offset: int,
    destination: Buffer,
    bounce: Buffer | None,
    width: int,
    flags: int,
    check_first: bool = False,
) -> tuple[int, Status]: ...
def read_longest(
    fd: int, offset: int, nbytes: int, bounce: Buffer, width: int, flags: int
) -> tuple[int, Status, int]: ...
def read_utf8(
    dir_fd: int,
    names: list[bytes],
    lows: npt.NDArray[np.intp],
    highs: npt.NDArray[np.intp],
    nbytes: int,
    bounce: Buffer,
    width: int,
    swapped: bool,
    offsets: Buffer,
    wide: bool,
    first: int,
    values: Buffer,
    pos: int,
    limit: int,
    backward: bool,
) -> tuple[int, int, Status, int]: ...
