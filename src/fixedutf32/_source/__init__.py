"""The one reader of stored chunks: every tool of the package reads them through here.

What a stored chunk is, and how it is turned into its bytes, lives in one
module per concern, each used by the store tools (``fixedutf32.store``),
the bench's standalone reader and the zarr-python pipeline alike:

- :mod:`.codecs`: codec JSON (V3 objects, V2 numcodecs configurations) to
  numcodecs objects with one table of defaults; a chain that checks every
  frame before inflating it, decompresses into a given buffer, and
  encodes with blosc's typesize as the metadata gives it;
- :mod:`.frames`: what blosc, zstd and lz4 frame headers declare, checked
  against the chunk;
- :mod:`.sizes`: how large a chunk is and may be, and the messages when it
  is not;
- :mod:`.grid`: the chunk grid, its keys both ways, element coordinates
  and edge chunks;
- :mod:`.shard`: the index of a ``sharding_indexed`` shard, every entry
  checked against the shard;
- :mod:`.files`: local chunk files read safely (regular files only, no
  larger than the chunk can be) into a given buffer, in blocks;
- :mod:`.elements`: the chunk kernels on blocks, their arguments checked
  once per array;
- :mod:`.chunks`: a stored chunk to its bytes;
- :mod:`.reader`: one key of an array (a chunk, or a shard's inner chunks)
  from a local directory or any store, each chunk handed to a sink;
- :mod:`.scratch`: buffers reused from chunk to chunk, per thread.

Plain buffers, memoryviews and NumPy arrays go in; frozen dataclasses are
the records.  Nothing here imports zarr-python; numcodecs is imported when a
codec chain is built.
"""

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
