"""Type stubs for the compiled kernels (see _kernels.pyx)."""

from typing_extensions import Buffer

VALIDATE: int
SRC_SWAPPED: int
SWAP: int
STREAM: int
OK: int
INVALID_CODE_POINT: int
TOO_LONG: int

AVX2_COMPILED: bool
AVX2_TARGET_FLAGS: str
AVX2_NEEDS: int
CPU_FEATURES: dict[str, int]
MAX_UNITS: int
POOL_MIN_BYTES: int
POOL_MAX_BUFFERS: int

def _cpu_features() -> int: ...
def _level_for_features(features: int) -> str: ...
def available_simd_levels() -> tuple[str, ...]: ...
def get_simd_level() -> str: ...
def set_simd_level(name: str) -> str: ...
def validate(data: Buffer, swapped: bool) -> int: ...
def convert(src: Buffer, dst: Buffer, flags: int) -> int: ...
def repad(
    src: Buffer, dst: Buffer | None, from_units: int, to_units: int, flags: int
) -> tuple[int, int, int]: ...
def str_lengths(src: Buffer, lengths: Buffer, width: int, flags: int) -> int: ...
def overlap(a: Buffer, b: Buffer) -> int: ...

class PooledBuffer:
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

def new_buffer(nbytes: int) -> PooledBuffer: ...
def set_buffer_pool_limit(nbytes: int) -> int: ...
def buffer_pool_bytes() -> int: ...

# Transcoding (_transcode.pxi): statuses are (error, index, position, value).
UTF8_SLACK: int
UTF8_OK: int
UTF8_TOO_LARGE: int
UTF8_SURROGATE: int
UTF8_HEADER_BITS: int
UTF8_TOO_SHORT: int
UTF8_TOO_LONG: int
UTF8_OVERLONG: int
UTF8_CAPACITY: int
UTF8_BAD_OFFSETS: int
UTF8_BAD_VLEN: int

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
) -> tuple[int, int, int, int, int, int]: ...
def utf8_to_utf32(
    positions: Buffer,
    stride: int,
    n: int,
    values: Buffer,
    width: int,
    swap: bool,
    destination: Buffer | None,
) -> tuple[int, int, int, int]: ...
def utf8_vlen_parse(chunk: Buffer, n: int, positions: Buffer) -> tuple[int, int, int, int]: ...
def utf8_scatter_fixed(offsets: Buffer, values: Buffer, destination: Buffer, stride: int) -> None: ...
