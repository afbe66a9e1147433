"""Opening a trace for the streaming reader: text, gzip'd text, standard input, or trace.dat via trace-cmd.

Every form is turned into a stream of byte chunks of trace text; nothing is
read whole into memory.  A ``trace.dat`` (trace-cmd's binary format, told by
its magic bytes) is converted by running ``trace-cmd report -i FILE`` (an
argument list, never a shell), so it needs trace-cmd installed; without it
the error says so in one line.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import subprocess
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from collectors.inputs import open_input
from forensics.errors import InputError
from forensics.model import SourceRecord

TRACE_DAT_MAGIC = b"\x17\x08Dtracing"
GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1 << 20  # bytes per read: per-chunk costs vanish, and what is parsed is still in the CPU cache when analysed


@dataclass
class TraceStream:
    """An open trace: the name its evidence cites, its text chunks, and how it was read."""

    name: str  # the source name findings cite (the path, <stdin>, or the saved report text)
    kind: str  # "text", "gzip text", "trace.dat via trace-cmd report"
    chunks: Iterator[bytes]
    records: list[SourceRecord]  # filled when the stream is exhausted


def _gunzip(first: bytes, rest: Iterator[bytes], name: str, notes: list[str]) -> Iterator[bytes]:
    """The decompressed text; a stream that ends before its gzip trailer adds a note (the text before is kept)."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        for chunk in _chain(first, rest):
            out = inflater.decompress(chunk)
            if out:
                yield out
            while inflater.unused_data:  # concatenated gzip members (cat a.gz b.gz)
                tail = inflater.unused_data
                inflater = zlib.decompressobj(wbits=31)
                out = inflater.decompress(tail)
                if out:
                    yield out
        yield inflater.flush()
        if not inflater.eof:  # read to the end, and the last member has no trailer: the file was cut
            notes.append(
                "the gzip stream ends early (the file is truncated): only the text before the cut was analysed"
            )
    except zlib.error as exc:
        raise InputError(f"{name}: corrupt gzip data ({exc})", hint="check the file, or give it uncompressed") from None


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _copy_to(chunks: Iterator[bytes], out: BinaryIO) -> Iterator[bytes]:
    for chunk in chunks:
        out.write(chunk)
        yield chunk


def _trace_cmd_report(path: Path, records: list[SourceRecord]) -> Iterator[bytes]:
    """Stream ``trace-cmd report -i path``; one-line errors when trace-cmd is missing or fails."""
    exe = shutil.which("trace-cmd")
    if exe is None:
        raise InputError(
            f"{path}: is a trace-cmd trace.dat, and trace-cmd is not installed to read it",
            hint="install trace-cmd (apt-get install trace-cmd), or give the text of `trace-cmd report`",
        )
    started = time.monotonic()
    digest = hashlib.sha256()
    with path.open("rb") as raw:
        while block := raw.read(CHUNK):
            digest.update(block)
    proc = subprocess.Popen(  # a fixed argument list, no shell
        [exe, "report", "-i", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    produced = 0
    try:
        while block := proc.stdout.read(CHUNK):
            produced += len(block)
            yield block
    finally:
        if proc.poll() is None:
            proc.stdout.close()
            proc.kill()
        err = proc.stderr.read().decode("utf-8", "replace").strip()
        code = proc.wait()
        proc.stderr.close()
    if code != 0 or not produced:  # trace-cmd 3.1 exits 0 with no output on a damaged file
        first = err.splitlines()[0] if err else f"exit status {code}, no output"
        raise InputError(
            f"{path}: trace-cmd report failed: {first}", hint="check that the file is a complete trace.dat"
        )
    records.append(
        SourceRecord(str(path), path.stat().st_size, digest.hexdigest(), round(time.monotonic() - started, 6), None)
    )


@contextmanager
def open_trace(name: str, save_text: Path | None = None) -> Iterator[TraceStream]:
    """Open ``name`` (a path, or ``-`` for standard input) as a stream of trace text chunks.

    ``save_text``: also write the text that is analysed to this file (mode
    0600); findings then cite it, which makes evidence of gzip'd and trace.dat
    inputs checkable line by line.
    """
    records: list[SourceRecord] = []
    notes: list[str] = []  # what went wrong while reading, for the input's record
    with open_input(name) as tracked:
        chunks = tracked.read_chunks(CHUNK)
        first = next(chunks, b"")
        if first.startswith(TRACE_DAT_MAGIC):
            if name == "-":
                raise InputError(
                    "<stdin>: is a trace-cmd trace.dat; trace-cmd needs it as a file", hint="give the file's path"
                )
            kind = "trace.dat via trace-cmd report"
            text: Iterator[bytes] = _trace_cmd_report(Path(name), records)
            source = f"{name} (trace-cmd report)"
        elif first.startswith(GZIP_MAGIC):
            kind = "gzip text"
            text = _gunzip(first, chunks, tracked.name, notes)
            source = f"{tracked.name} (gunzipped)"
        else:
            kind = "text"
            text = _chain(first, chunks)
            source = tracked.name
        if save_text is None:
            yield TraceStream(source, kind, text, records)
        else:
            try:
                fd = os.open(save_text, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            except OSError as exc:
                raise InputError(
                    f"cannot write {save_text}: {exc.strerror or exc}", hint="choose a writable path"
                ) from None
            with os.fdopen(fd, "wb") as out:
                os.fchmod(out.fileno(), 0o600)
                yield TraceStream(str(save_text), kind, _copy_to(text, out), records)
        if not records:
            record = tracked.record()
            records.append(dataclasses.replace(record, error="; ".join(notes)) if notes else record)
