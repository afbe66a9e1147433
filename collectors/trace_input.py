"""Opening a trace for the streaming reader: text, gzip'd text, standard input, or trace.dat via trace-cmd.

Every form is turned into a stream of byte chunks of trace text; nothing is
read whole into memory.  A ``trace.dat`` (trace-cmd's binary format, told by
its magic bytes) is converted by running ``trace-cmd report -i FILE`` (an
argument list, never a shell), so it needs trace-cmd installed; without it
the error says so in one line.  A ``perf.data`` (told by its magic) is converted by
``perf script --show-lost-events -i FILE``: its PERF_RECORD_LOST lines say what perf lost, per CPU.
Both name the machine that recorded them (:class:`NamedSystem`).
"""

from __future__ import annotations

import hashlib
import itertools
import mmap
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple

from collectors.binary_formats import TEXT_SAMPLE, TextInput, not_text, refusal
from collectors.inputs import TrackedInput, open_input, sniff_compression
from forensics.errors import InputError
from forensics.model import NotAvailable, SourceRecord
from forensics.output import open_output

TRACE_DAT_MAGIC = b"\x17\x08Dtracing"
PERF_DATA_MAGIC = b"PERFILE2"
#: How a perf.data is read: its losses shown (PERF_RECORD_LOST lines), so a text without one lost nothing.
PERF_DATA_KIND = "perf.data via perf script --show-lost-events"
CHUNK = 1 << 20  # bytes per read: per-chunk costs vanish, and what is parsed is still in the CPU cache when analysed
#: Plain text files from this size are mapped instead of read (MappedText): no copy into read buffers and
#: batches (0.3-0.5 s of CPU per 870 MB).  Smaller ones are read: mapping costs more than it saves there.
MAP_MIN_BYTES = 32 << 20


class MappedText:
    """A plain text file mapped read-only: the reader of batches slices it (read_batches), others iterate it.

    Iterating gives its text in :data:`CHUNK` pieces (copies), like a read file; :meth:`take` accounts a
    range a reader used without copying it.  Either way the bytes are counted and hashed for the source
    record.  The mapping is never closed here (batches may still view it): it goes with its last user.
    A file cut shorter while it is read ends the run with one line, exit 3 (:mod:`collectors.mapping`).
    """

    def __init__(self, mapped: mmap.mmap, tracked: TrackedInput) -> None:
        self.mapped = mapped
        self._tracked = tracked
        self._released = 0

    def take(self, lo: int, hi: int) -> None:
        """Account ``mapped[lo:hi]`` as read (in order, each byte once)."""
        self._tracked.take(memoryview(self.mapped)[lo:hi])

    def release(self, upto: int) -> None:
        """Unmap the pages before ``upto`` from this process (they stay in the page cache; a later read maps them
        again).  Mapped pages count in the peak RSS: without this a run's RSS grows with the file."""
        upto -= upto % mmap.PAGESIZE
        if upto > self._released:
            self.mapped.madvise(mmap.MADV_DONTNEED, self._released, upto - self._released)
            self._released = upto

    def __iter__(self) -> Iterator[bytes]:
        for pos in range(0, len(self.mapped), CHUNK):
            chunk = self.mapped[pos : pos + CHUNK]
            self._tracked.take(memoryview(chunk))
            yield chunk


class NamedSystem(NamedTuple):
    """The machine a recording names: its host and kernel release, and where they were read."""

    host: str
    release: str
    where: str  # "its UNAME option (trace-cmd dump --options)"
    # A trace.dat's: the line of ``trace-cmd dump --options`` that prints the UNAME option's text (1-based), and that
    # text: what a contradiction of kernels cites for a trace.dat without findings (0, "": none to cite).
    line: int = 0
    text: str = ""


#: Why a text trace names no machine: its lines hold none (a trace.dat, an LTTng trace's metadata do).
TEXT_NAMES_NONE = (
    "trace text names no host or kernel (a trace.dat's UNAME option, a perf.data's header and an LTTng trace's "
    "metadata do)"
)
UNAME_OPTION = "[Option UNAME"  # trace-cmd dump --options: the line before the text of uname -s -n -r -m
#: The locator name of a line of ``trace-cmd dump --options`` (a trace.dat's UNAME option's text), not of its report.
OPTIONS_LINE = "trace-cmd dump --options line"


def trace_dat_system(path: Path) -> NamedSystem | NotAvailable:
    """The host and kernel release a trace.dat records: trace-cmd writes ``uname -s -n -r -m`` of the machine that
    recorded it into its UNAME option (``Linux vm 6.18.44-fc-v1300 x86_64``), read with ``trace-cmd dump --options``
    (an argument list, never a shell).  Not available, with why, when trace-cmd or the option is missing."""
    exe = shutil.which("trace-cmd")
    if exe is None:
        return NotAvailable("trace-cmd is not installed to read the trace.dat's UNAME option")
    try:
        done = subprocess.run([exe, "dump", "--options", "-i", str(path)], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return NotAvailable(f"trace-cmd dump --options failed: {err}")
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip().startswith(UNAME_OPTION)), -1)
    if at < 0 or at + 1 >= len(lines):
        return NotAvailable("the trace.dat records no UNAME option (trace-cmd dump --options)")
    words = lines[at + 1].split()
    if len(words) < 3:
        return NotAvailable(f"the trace.dat's UNAME option {lines[at + 1].strip()!r} names no host and release")
    said = lines[at + 1].strip()
    return NamedSystem(
        words[1], words[2], f"the trace.dat's UNAME option {said!r} (trace-cmd dump --options)", at + 2, said
    )


def perf_data_system(path: Path) -> NamedSystem | NotAvailable:
    """The host and kernel release a perf.data's header names (``# hostname : vm``, ``# os release : 6.18.44``,
    read with ``perf report --header-only``, as ``kforensic profile`` reads them)."""
    from collectors.perf_script import perf_data_system as header

    said = header(path)
    if said.host is None or said.kernel is None:
        return NotAvailable("the perf.data header names no host and kernel (perf report --header-only)")
    return NamedSystem(
        said.host, said.kernel, f"the perf.data header ({'; '.join(said.lines)}: perf report --header-only)"
    )


def _perf_script(path: Path, records: list[SourceRecord]) -> Iterator[bytes]:
    """Stream ``perf script --show-lost-events -i path`` (its PERF_RECORD_LOST lines: the events perf lost, per CPU);
    one-line errors when perf is missing or fails."""
    from collectors.perf_script import perf_script_chunks

    started = time.monotonic()
    digest = hashlib.sha256()
    with path.open("rb") as raw:
        while block := raw.read(CHUNK):
            digest.update(block)
    yield from perf_script_chunks(path, label=str(path), extra=("--show-lost-events",))
    records.append(
        SourceRecord(str(path), path.stat().st_size, digest.hexdigest(), round(time.monotonic() - started, 6), None)
    )


@dataclass
class TraceStream:
    """An open trace: the name its evidence cites, its text chunks, and how it was read."""

    name: str  # the source name findings cite (the path, <stdin>, or the saved report text)
    kind: str  # "text", "gzip text", "trace.dat via trace-cmd report"
    chunks: Iterable[bytes]  # a MappedText for large plain files
    records: list[SourceRecord]  # filled when the stream is exhausted
    # The text's first bytes (up to TEXT_SAMPLE, decompressed), kept from the read itself: what the input is, when it
    # is refused, is judged from them; a FIFO, standard input or a device is never opened a second time.
    head: bytes = b""
    # The machine the recording names (a trace.dat's UNAME option), or why not (a text trace names none).
    system: NamedSystem | NotAvailable = field(default_factory=lambda: NotAvailable(TEXT_NAMES_NONE))
    # The text's first bytes (up to TEXT_SAMPLE; a trace.dat's: of its report, filled as it is read): which
    # trace-cmd buffers it holds (shared_buffers).
    sample: bytearray = field(default_factory=bytearray)


def _sampled(chunks: Iterator[bytes], sample: bytearray) -> Iterator[bytes]:
    """``chunks``, their first TEXT_SAMPLE bytes copied into ``sample`` as they are read."""
    for chunk in chunks:
        if len(sample) < TEXT_SAMPLE:
            sample += chunk[: TEXT_SAMPLE - len(sample)]
        yield chunk


#: A line of ``trace-cmd report``: an instance's (``record -B NAME``) prefixed ``NAME:``, the top buffer's not;
#: then the task, the CPU in brackets, the time and the event name.
_REPORT_LINE = re.compile(rb"^(?:([^\s:]+):)?\s+\S.*?-\d+\s+\[\d+\][^:\n]*?\d+\.\d+:\s+(\w+):", re.MULTILINE)


def shared_buffers(sample: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The trace-cmd buffers (``trace-cmd record -B``; "" the top one) whose lines in ``sample`` record the same
    events, and those events: ``trace-cmd report`` merges every buffer of a trace.dat into one stream, each
    instance's lines prefixed with its name, so an event two of them trace is read twice.  ((), ()) when no two
    buffers share an event in the sample."""
    events: dict[bytes, set[bytes]] = {}
    for m in _REPORT_LINE.finditer(sample):
        events.setdefault(m[1] or b"", set()).add(m[2])
    shared = {e for a, b in itertools.combinations(events.values(), 2) for e in a & b}
    if not shared:
        return (), ()
    names = tuple(sorted(n.decode("utf-8", "replace") for n, evs in events.items() if evs & shared))
    return names, tuple(sorted(e.decode("utf-8", "replace") for e in shared))


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
    if code != 0 or not produced:
        raise InputError(_report_failure(exe, path, code, err), hint="check that the file is a complete trace.dat")
    records.append(
        SourceRecord(str(path), path.stat().st_size, digest.hexdigest(), round(time.monotonic() - started, 6), None)
    )


def _report_failure(exe: str, path: Path, code: int, err: str) -> str:
    """What went wrong when ``trace-cmd report`` gave no trace: its own message, the signal that killed it, or, when
    it printed nothing at all and exited 0 (trace-cmd 3.1.6 on a cut or damaged file: "failed: exit status 0" read
    as a contradiction), that, with where ``trace-cmd dump --summary`` stops reading the file."""
    if err:
        return f"{path}: trace-cmd report failed: {err.splitlines()[0]}"
    if code < 0:
        from collectors.perf_script import signal_name

        return f"{path}: trace-cmd report was killed by signal {-code} ({signal_name(-code)}), no output"
    if code != 0:
        return f"{path}: trace-cmd report failed: exit status {code}, no message and no output"
    said = "trace-cmd report printed nothing: no event, no header and no error (exit status 0)"
    try:  # only on this failure: trace-cmd's own reader says where the file stops making sense
        dump = subprocess.run(  # a fixed argument list, no shell
            [exe, "dump", "--summary", "-i", str(path)],
            check=False,
            capture_output=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return f"{path}: {said}"
    stop = [line.strip() for line in dump.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return f"{path}: {said}; `trace-cmd dump` stops at: {stop[0]}" if dump.returncode and stop else f"{path}: {said}"


@contextmanager
def open_trace(name: str, save_text: Path | None = None) -> Iterator[TraceStream]:
    """Open ``name`` (a path, or ``-`` for standard input) as a stream of trace text chunks.

    ``save_text``: also write the text that is analysed to this file (mode
    0600); findings then cite it, which makes evidence of gzip'd and trace.dat
    inputs checkable line by line.
    """
    records: list[SourceRecord] = []
    with open_input(name) as tracked:
        mapped = tracked.mapped(MAP_MIN_BYTES) if save_text is None else None
        if mapped is not None:
            head = mapped[:16]
            if sniff_compression(head) is None and not head.startswith((TRACE_DAT_MAGIC, PERF_DATA_MAGIC)):
                try:
                    start = mapped[:TEXT_SAMPLE]
                    yield TraceStream(
                        tracked.source, "text", MappedText(mapped, tracked), records, start, sample=bytearray(start)
                    )
                finally:
                    tracked.close_hash()
                records.append(tracked.record())
                return
            mapped.close()  # compressed or trace.dat: read as a stream
        chunks = tracked.read_chunks(CHUNK)  # decompressed when the file is gzip, xz, zstd or bzip2
        first = next(chunks, b"")
        if first.startswith(TRACE_DAT_MAGIC) and tracked.compression is None:
            if name == "-":
                raise InputError(
                    "<stdin>: is a trace-cmd trace.dat; trace-cmd needs it as a file", hint="give the file's path"
                )
            kind = "trace.dat via trace-cmd report"
            text: Iterator[bytes] = _trace_cmd_report(Path(name), records)
            source = f"{name} (trace-cmd report)"
        elif first.startswith(PERF_DATA_MAGIC) and tracked.compression is None:
            if name == "-":
                raise InputError("<stdin>: is a perf.data; perf needs it as a file", hint="give the file's path")
            kind = PERF_DATA_KIND
            text = _perf_script(Path(name), records)
            source = f"{name} (perf script)"
        else:
            kind = f"{tracked.compression} text" if tracked.compression else "text"
            text = _chain(first, chunks)
            source = tracked.source
        # (a perf.data's own head: one that holds no trace events is refused as a perf.data, pipelines/trace.py)
        head = b"" if kind.startswith("trace.dat") else first[:TEXT_SAMPLE]
        system = (
            trace_dat_system(Path(name))
            if kind.startswith("trace.dat")
            else perf_data_system(Path(name))
            if kind == PERF_DATA_KIND
            else NotAvailable(TEXT_NAMES_NONE)
        )
        sample = bytearray(head)
        if kind.startswith("trace.dat"):
            text = _sampled(text, sample)
        if save_text is None:
            yield TraceStream(source, kind, text, records, head, system, sample)
        else:
            # The one writer: a temporary file renamed into place when the trace was read to the end,
            # so a failed run (a full disk, a bad trace) leaves an earlier saved text as it was.
            with open_output(save_text) as out:
                yield TraceStream(str(save_text), kind, _copy_to(text, out), records, head, system, sample)
        if not records:
            records.append(tracked.record())


#: A trace, as a refusal of another command's file names it (collectors/binary_formats.py).
TRACE = TextInput(
    "a trace",
    "the trace",
    "kforensic trace reads ftrace, trace-cmd report or perf script text, a trace.dat, a perf.data of trace events "
    "or an LTTng trace directory",
)


def not_a_trace(name: str, head: bytes) -> InputError | None:
    """What an input refused as a trace is, when its first bytes ``head`` say (the file another command reads, an
    archive, binary bytes), as ``kforensic dmesg`` and ``profile`` say it (collectors/binary_formats.py): the error
    then names it, not its first bytes quoted as a line that is no trace event.  None for text.

    ``head`` is what the read already took (:attr:`TraceStream.head`, decompressed: a gzip'd file is judged by its
    text): the input is never opened again, which for a FIFO would block until a new writer came."""
    refused = refusal(name, head, TRACE)
    if refused is not None:
        return refused
    binary = not_text(head)
    if binary is None:
        return None
    return InputError(
        f"{name}: not a trace: binary, not text ({binary})",
        hint="give the text of /sys/kernel/tracing/trace, `trace-cmd report`, `perf script`, a trace.dat or an "
        "LTTng trace directory",
    )
