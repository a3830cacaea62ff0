"""A stored chunk to exactly its bytes: codecs undone, size checked, local files read safely."""
# KeyReader (reader.py) decodes every chunk of a key with ChunkDecoder, a shard's inner ones too.

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .codecs import CodecChain, CodecSpec
from .elements import ElementLayout
from .files import ChunkFile, open_chunk_file
from .sizes import chunk_size_error

if TYPE_CHECKING:
    from .._arguments import Buffer

__all__ = ["ChunkDecoder"]


@dataclass(frozen=True)
class ChunkDecoder:
    """How the stored chunks of one array become their bytes, ``nbytes`` each once decoded."""

    elements: ElementLayout
    count: int  # elements in one chunk, edge chunks too: they are stored whole
    chain: CodecChain
    nbytes: int = field(init=False)

    def __post_init__(self) -> None:
        nbytes = self.count * self.elements.length_bytes
        if self.chain.decoded_nbytes != nbytes or not self.chain.exact:
            raise ValueError(
                f"the chain decodes to {self.chain.decoded_nbytes} bytes; a chunk of "
                f"{self.count} elements of length_bytes {self.elements.length_bytes} holds {nbytes}"
            )
        object.__setattr__(self, "nbytes", nbytes)

    @classmethod
    def build(
        cls,
        length_bytes: int,
        endian: Literal["little", "big"],
        count: int,
        codecs: Sequence[CodecSpec | object],
        zarr_format: int = 3,
        element_size: int = 4,
    ) -> ChunkDecoder:
        """A decoder from the layout and the codec JSON (or specs) of an array."""
        # codecs: bytes-to-bytes, in write order (V2 numcodecs configurations if zarr_format=2);
        # element_size is blosc's typesize where a configuration gives none.  Raises
        # MetadataError for a codec it cannot read or build, ValueError for a bad layout.
        from .codecs import parse_codec

        specs = tuple(
            c if isinstance(c, CodecSpec) else parse_codec(c, zarr_format, f"codecs[{i}]")
            for i, c in enumerate(codecs)
        )
        elements = ElementLayout(length_bytes, endian)
        chain = CodecChain(specs, count * elements.length_bytes, element_size=element_size)
        return cls(elements, count, chain)

    @property
    def max_stored_nbytes(self) -> int:
        """The most bytes a stored chunk may hold."""
        return self.chain.max_stored_nbytes

    def decode(self, stored: Buffer, *, key: str, out: Buffer | None = None) -> memoryview:
        """Undo the codecs of a stored chunk and check its size (not its code units)."""
        # Returns nbytes bytes: a view of out if given, of stored if no codecs, else a new
        # buffer.  ChunkSizeError for a wrong size; on CorruptChunkError out may hold a part.
        result = self.chain.decode(stored, key=key, out=out)
        if result.nbytes != self.nbytes:
            raise chunk_size_error(key, result.nbytes, self.count, self.elements.length_bytes)
        return result

    def open_file(
        self, path: str | os.PathLike[str], *, key: str, within: str | None = None
    ) -> ChunkFile | None:
        """Open a local chunk file, checked (open_chunk_file) and, without codecs, sized."""
        # None for a missing chunk.  Without codecs a file not nbytes long raises ChunkSizeError
        # before any read; CorruptChunkError if not a regular file or larger than a stored chunk.
        if not self.chain.raw:
            return open_chunk_file(
                path, key=key, max_nbytes=self.chain.max_stored_nbytes, within=within
            )
        file = open_chunk_file(path, key=key, max_nbytes=sys.maxsize, within=within)
        if file is not None and file.size != self.nbytes:
            file.close()
            raise chunk_size_error(key, file.size, self.count, self.elements.length_bytes)
        return file
