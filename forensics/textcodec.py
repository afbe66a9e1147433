"""Turning the bytes of a text log into the UTF-8 lines every reader and the evidence check agree on.

Logs reach an analyst in forms the kernel never wrote: saved by a Windows
tool as UTF-16 (with or without a byte-order mark), or captured from a
terminal with ANSI colour codes (``dmesg --color=always``, ``journalctl``
piped through ``script``).  :class:`TextNormalizer` streams such bytes into
plain UTF-8 with the escape sequences removed; newlines are kept, so line
numbers are those of the file.  A file whose lines end in a lone carriage
return (classic Mac, some serial-console captures: no ``\n`` at all in its
first 512 characters, two or more ``\r``) has each ``\r`` read as a newline, as an
editor shows its lines; otherwise it read as one line, and a report in it was
cited at line 1 and time 0.  The evidence check (:mod:`forensics.evidence`)
reads sources through :func:`normalize_text`, the same transformation, so an
excerpt cited from a UTF-16 or coloured log resolves at its line.

A plain UTF-8 (or ASCII) file without escape bytes passes through unchanged,
at the cost of one ``memchr`` per chunk.
"""

from __future__ import annotations

import codecs
import re

from forensics.journal_text import JournalText, journal_kind

BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# ECMA-48: CSI (ESC [ params intermediates final), OSC (ESC ] ... BEL or ST), and two-byte escapes.
_ANSI = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_ESC_TAIL = 64  # an escape sequence this close to the end of a chunk may continue in the next one
_SNIFF = 512  # bytes looked at to tell UTF-16 without a BOM


def sniff_encoding(head: bytes) -> tuple[str | None, int]:
    """The encoding the start of a file announces or shows, and the length of its BOM.

    ``None`` means UTF-8 (the default).  Without a BOM, UTF-16 is told by its
    NUL bytes: ASCII text in UTF-16 LE has a NUL at every odd offset, in BE at
    every even one.
    """
    for bom, name in BOMS:
        if head.startswith(bom):
            return (None if name == "utf-8" else name), len(bom)
    sample = head[: _SNIFF - _SNIFF % 2]
    if len(sample) >= 4 and sample.count(0) * 10 >= len(sample) * 4:  # at least 40 % NULs: not UTF-8 text
        even, odd = sample[0::2].count(0), sample[1::2].count(0)
        if odd >= 0.9 * len(sample) / 2 > even:
            return "utf-16-le", 0
        if even >= 0.9 * len(sample) / 2 > odd:
            return "utf-16-be", 0
    return None, 0


class TextNormalizer:
    """Stream bytes of a log into UTF-8 without ANSI escape sequences (see the module docstring).

    ``encoding`` is what was detected (``"utf-8"``, ``"utf-16-le"``,
    ``"utf-16-be"``) once the first bytes were seen; ``escapes`` counts the
    escape sequences removed.
    """

    def __init__(self) -> None:
        self.encoding: str | None = None
        self.escapes = 0
        self._head = b""
        self._decoder: codecs.IncrementalDecoder | None = None
        self._tail = b""  # an escape sequence that may continue in the next chunk
        self._bom = 0  # bytes of byte-order mark at the start, dropped
        self._cr_only = False  # lines end in a lone \r (see the module docstring)
        self._journal: JournalText | None = (
            None  # a journal export, read as kernel log lines (forensics/journal_text.py)
        )

    @property
    def cut(self) -> str | None:
        """How a journal or ``dmesg -J`` document ended short (after :meth:`close`), None when it did not."""
        return self._journal.cut if self._journal is not None else None

    def feed(self, chunk: bytes) -> bytes:
        """The normalized bytes of ``chunk`` (possibly fewer: some are held until the next call)."""
        if self.encoding is None:
            self._head += chunk
            if len(self._head) < _SNIFF:
                return b""
            chunk, self._head = self._head, b""
            self._start(chunk)
            chunk = chunk[self._bom :]
        if self._journal is not None:
            return self._strip(self._journal.feed(chunk))
        return self._lines(self._strip(self._decode(chunk, final=False)))

    def close(self) -> bytes:
        """What is held back, at the end of the input."""
        out = b""
        if self.encoding is None:
            head, self._head = self._head, b""
            self._start(head)
            out = head[self._bom :] if self._journal is not None else self._decode(head[self._bom :], final=False)
        if self._journal is not None:
            out = self._strip(self._journal.feed(out) + self._journal.close())
            tail, self._tail = self._tail, b""
            return out + self._strip_all(tail)
        out = self._strip(out + self._decode(b"", final=True))
        tail, self._tail = self._tail, b""
        return self._lines(out + self._strip_all(tail))

    def _start(self, head: bytes) -> None:
        name, self._bom = sniff_encoding(head)
        self.encoding = name or "utf-8"
        if name in (None, "utf-8") and (kind := journal_kind(head[self._bom :])) is not None:
            self._journal = JournalText(kind)
            return
        # Raw bytes suffice: in UTF-16 too a CR or LF code unit holds the byte 0x0D or 0x0A.  The first _SNIFF
        # characters, not bytes: a UTF-16 console's first 512 bytes were its first 256 characters, one CR (its
        # first lines are long), so a CR-only UTF-16 log was one line and a report in it read only by chance.
        sniff = head[: _SNIFF * (2 if name is not None and name.startswith("utf-16") else 1)]
        self._cr_only = b"\n" not in sniff and sniff.count(b"\r") >= 2
        if name is not None:
            self._decoder = codecs.getincrementaldecoder(name)(errors="replace")

    def _decode(self, chunk: bytes, final: bool) -> bytes:
        if self._decoder is None:
            return chunk
        return self._decoder.decode(chunk, final).encode("utf-8", errors="replace")

    def _strip(self, data: bytes) -> bytes:
        data = self._tail + data
        self._tail = b""
        if b"\x1b" not in data:
            return data
        cut = data.rfind(b"\x1b", max(0, len(data) - _ESC_TAIL))
        if cut >= 0 and _ANSI.match(data, cut) is None:  # an escape cut by the chunk boundary: finish it next time
            data, self._tail = data[:cut], data[cut:]
        return self._strip_all(data)

    def _lines(self, data: bytes) -> bytes:
        return data.replace(b"\r", b"\n") if self._cr_only else data

    def _strip_all(self, data: bytes) -> bytes:
        return _strip_escapes(data, self)


def _strip_escapes(data: bytes, counter: TextNormalizer | None = None) -> bytes:
    """``_ANSI.subn(b"", data)``, its count added to ``counter.escapes``: the pattern tried only where an escape
    byte stands (every match starts with one), not at every byte (~1.4 ms a MiB; a fuzzer's coloured console
    has a few escapes a MiB)."""
    pieces: list[memoryview] = []  # joined once: slices of bytes would be copied twice
    view = memoryview(data)
    start = 0
    at = data.find(b"\x1b")
    while at >= 0:
        m = _ANSI.match(data, at)
        if m is None:
            at = data.find(b"\x1b", at + 1)
            continue
        pieces.append(view[start:at])
        start = m.end()
        at = data.find(b"\x1b", start)
    if not pieces:
        return data
    if counter is not None:
        counter.escapes += len(pieces)
    pieces.append(view[start:])
    return b"".join(pieces)


def normalize_text(data: bytes) -> bytes:
    """The whole of ``data`` as :class:`TextNormalizer` streams it (for the evidence check and tests)."""
    norm = TextNormalizer()
    return norm.feed(data) + norm.close()
