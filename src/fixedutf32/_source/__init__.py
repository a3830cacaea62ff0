"""The one reader of stored chunks (codecs, frames, sizes, grid, shard, files, elements, reader)."""
# Used by the store tools, the bench and the zarr pipeline alike; no zarr-python import here,
# numcodecs only when a codec chain is built. Records are frozen dataclasses.

from .chunks import ChunkDecoder
from .codecs import DEFAULTS, CodecChain, CodecSpec, parse_codec, parse_codecs
from .elements import ElementLayout
from .files import BLOCK_BYTES, ChunkFile, open_chunk_file
from .frames import check_frame, zstd_content_size
from .grid import ChunkGrid, Index
from .reader import KeyReader
from .scratch import Scratch, borrowed_scratch, thread_scratch
from .shard import ShardIndex, ShardLayout
from .sizes import DecodedSize, chunk_size_error, compress_bound, shard_index_size_error

__all__ = [
    "BLOCK_BYTES",
    "DEFAULTS",
    "ChunkDecoder",
    "ChunkFile",
    "ChunkGrid",
    "CodecChain",
    "CodecSpec",
    "DecodedSize",
    "ElementLayout",
    "Index",
    "KeyReader",
    "Scratch",
    "ShardIndex",
    "ShardLayout",
    "borrowed_scratch",
    "check_frame",
    "chunk_size_error",
    "compress_bound",
    "open_chunk_file",
    "parse_codec",
    "parse_codecs",
    "shard_index_size_error",
    "thread_scratch",
    "zstd_content_size",
]
