"""One stored chunk of an array to its bytes: codecs undone, size checked,
local files read safely.

:class:`ChunkDecoder` puts together what is known of an array's chunks once
(their elements, their codec chain) and turns a stored chunk into exactly
its bytes, or raises; :class:`~fixedutf32._source.reader.KeyReader` uses it
for every chunk of a key, the inner chunks of a shard too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .codecs import CodecChain, CodecSpec
from .elements import ElementLayout
from .files import ChunkFile, open_chunk_file
from .scratch import Scratch, thread_scratch
from .sizes import chunk_size_error

if TYPE_CHECKING:
    from .._arguments import Buffer

__all__ = ["ChunkDecoder"]

# on_block(block, offset): a part of a chunk just read into its buffer.
OnBlock = Callable[[memoryview, int], None]


@dataclass(frozen=True)
class ChunkDecoder:
    """How the stored chunks of one array become their bytes.

    Parameters
    ----------
    elements : ElementLayout
        The width and byte order of the elements.
    count : int
        Elements in one chunk (edge chunks too: they are stored whole).
    chain : CodecChain
        The codecs applied to a chunk's bytes; ``chain.decoded_nbytes`` must
        be ``count * elements.length_bytes``.

    Attributes
    ----------
    nbytes : int
        Bytes of one decoded chunk.

    Raises
    ------
    ValueError
        If ``chain`` decodes to another size.

    Examples
    --------
    >>> import numcodecs
    >>> decoder = ChunkDecoder.build(16, "little", 4, [])
    >>> decoder.decode(bytes(60), key="c/0")
    Traceback (most recent call last):
    ...
    fixedutf32.errors.ChunkSizeError: chunk c/0 holds 60 bytes; a chunk of 4 elements of ...
    >>> zstd = ChunkDecoder.build(16, "little", 4, [{"name": "zstd"}])
    >>> zstd.decode(numcodecs.Zstd().encode(bytes(64)), key="c/0").nbytes
    64
    """

    elements: ElementLayout
    count: int
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
        """A decoder from the layout and the codec JSON (or specs) of an array.

        Parameters
        ----------
        length_bytes : int
        endian : {"little", "big"}
        count : int
            Elements per chunk.
        codecs : sequence of CodecSpec or codec JSON
            The bytes-to-bytes codecs, in the order applied on writing (V3
            objects, or V2 numcodecs configurations with ``zarr_format=2``).
        zarr_format : {3, 2}
            The form of the codec JSON.
        element_size : int
            blosc's typesize where a configuration gives none.

        Returns
        -------
        ChunkDecoder

        Raises
        ------
        MetadataError
            For a codec that cannot be read or built.
        ValueError
            For an invalid ``length_bytes`` or ``endian``.
        """
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
        """Undo the codecs of a stored chunk and check its size.

        Parameters
        ----------
        stored : buffer
            The chunk as stored (read only).
        key : str
            Its store key, for errors.
        out : writable buffer, optional
            Exactly :attr:`nbytes` bytes to decode into (see
            :attr:`CodecChain.decodes_into_out`).

        Returns
        -------
        memoryview
            Exactly :attr:`nbytes` bytes: a view of ``out`` when given; of
            ``stored`` without codecs and ``out``; else a new buffer.  The
            code units are not checked here (:class:`ElementLayout`).

        Raises
        ------
        ChunkSizeError
            If a chunk without codecs is not :attr:`nbytes` bytes.
        CorruptChunkError
            As :meth:`CodecChain.decode` (``out`` may then hold part of the chunk).
        """
        result = self.chain.decode(stored, key=key, out=out)
        if result.nbytes != self.nbytes:
            raise chunk_size_error(key, result.nbytes, self.count, self.elements.length_bytes)
        return result

    def open_file(
        self, path: str | os.PathLike[str], *, key: str, within: str | None = None
    ) -> ChunkFile | None:
        """Open a local chunk file, checked (:func:`open_chunk_file`) and, without codecs, sized.

        Parameters
        ----------
        path : str or os.PathLike
        key : str
            Its store key, for errors.
        within : str, optional
            The real path of the store's root, which the file must lie in
            (:func:`open_chunk_file`).

        Returns
        -------
        ChunkFile or None
            None for a missing chunk.

        Raises
        ------
        ChunkSizeError
            Without codecs: if the file is not :attr:`nbytes` bytes (nothing is read).
        CorruptChunkError
            If it is not a regular file, or is larger than a stored chunk may be.
        """
        if not self.chain.raw:
            return open_chunk_file(
                path, key=key, max_nbytes=self.chain.max_stored_nbytes, within=within
            )
        file = open_chunk_file(path, key=key, max_nbytes=sys.maxsize, within=within)
        if file is not None and file.size != self.nbytes:
            file.close()
            raise chunk_size_error(key, file.size, self.count, self.elements.length_bytes)
        return file

    def read_file(
        self,
        path: str | os.PathLike[str],
        *,
        key: str,
        out: Buffer,
        on_block: OnBlock | None = None,
        scratch: Scratch | None = None,
    ) -> memoryview | None:
        """Read a local chunk file into ``out`` and undo its codecs there.

        Without codecs the file is read into ``out`` in blocks of
        :meth:`ElementLayout.block_bytes`, and ``on_block(block, offset)``
        runs on each block as soon as it is read, while it is in cache (to
        validate it, or decode it in place).  With codecs the stored bytes are
        read into a reused scratch buffer, decoded into ``out``, and
        ``on_block`` runs once on the whole chunk.

        Parameters
        ----------
        path : str or os.PathLike
        key : str
            Its store key, for errors.
        out : writable buffer
            Exactly :attr:`nbytes` bytes.
        on_block : callable, optional
            ``on_block(block, offset)``; an exception it raises propagates.
        scratch : Scratch, optional
            Where the stored bytes go; default this thread's.

        Returns
        -------
        memoryview or None
            ``out``'s bytes; None when there is no such file (``out`` untouched).

        Raises
        ------
        ChunkSizeError, CorruptChunkError
            As :meth:`open_file` and :meth:`decode`; ``out`` may then hold
            part of the chunk.
        """
        file = self.open_file(path, key=key)
        if file is None:
            return None
        with file:
            if self.chain.raw:
                return file.read_into(
                    out, block_bytes=self.elements.block_bytes(), on_block=on_block
                )
            stored = (scratch or thread_scratch()).bytes("stored", file.size)
            file.read_into(stored)
        result = self.decode(stored, key=key, out=out)
        if on_block is not None:
            on_block(result, 0)
        return result
