"""Reading CPU profiles: ``perf.data`` (through ``perf script``), ``perf script`` text and folded stacks.

The reader streams its input in chunks and keeps one counter per distinct (thread, event, call chain
text), so memory grows with the number of distinct stacks, never with the number of samples.  Each
distinct call chain is parsed once, the way Brendan Gregg's ``stackcollapse-perf.pl`` parses it (the
folded output is byte-for-byte the script's: same frame names, same tidying, periods summed as
counts), so the hot loop per sample is a header match and a dictionary update.

The result is a :class:`Profile`: typed stacks with sample counts and period sums, the events seen,
the time span, and notes on what was skipped (other events, lines that are not samples, samples
without a call chain).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, chain, compress, repeat
from operator import add, attrgetter, is_, itemgetter, sub
from pathlib import Path
from typing import Any, NamedTuple

from collectors.binary_formats import TextInput, not_text, refusal
from forensics.errors import InputError, UsageError
from forensics.types.profile import (
    EXITED_COMM,
    INLINED_DSO,
    PerfDataCut,
    Profile,
    ProfileFrame,
    ProfileStack,
    SampleLoss,
    StackColumns,
    StackCount,
    StackTable,
    Thread,
    made_stacks,
    sums,
)
from forensics.units import log_dec

#: ``perf.data`` files start with this magic (perf's own header, version 2).
PERF_DATA_MAGIC = b"PERFILE2"
GZIP_MAGIC = b"\x1f\x8b"

# stackcollapse-perf.pl's header rule: a command name (at least two characters, may hold spaces),
# then the pid (and /tid when perf prints both).  The script writes ``(\d+)*`` where these write ``(\d+)?``: the
# same matches and groups (a digit run must end before whitespace either way, and the first way tried is the whole
# run), without trying every split of a run that is not followed by one (2^n ways: 4 s for 26 digits).
_HEADER = re.compile(rb"^(\S.+?)\s+(\d+)/*(\d+)?\s+")
# ... its event rule: ``[period] event:`` at the end of the header line.
_EVENT = re.compile(rb":\s*(\d+)?\s+(\S+):\s*$")
# A tracepoint's sample line ends with its payload (``... [000] 62329.6: sched:sched_switch: prev_comm=...``), which
# the rule above cannot see past (stackcollapse-perf.pl counts such samples with the first event it names).  Its
# event is read where perf script prints it, right after the pid/tid, the CPU, the time and the period (when printed;
# a tracepoint's is not): a ``subsystem:name:`` field, followed by more text or by nothing (``perf script -F
# comm,tid,time,event,ip,sym,dso`` prints no payload: ``sh 4382 74681.4: sched:sched_process_exec: ``, which the
# rule above would name as an ordinary event, met first the one analysed).  Matched where _HEADER ends, never
# inside the payload, which may hold anything ("comm=a: b:", numbers, times).  ``cycles:ppp:`` (perf's modifiers)
# is no tracepoint: a sample line without call chain (``cycles:ppp:  ffffffff81 sym (dso)``) is read as it was.
# The modifiers are perf's (tools/perf/util/parse-events.l modifier_event: R since perf 6.x, X since).
_PAYLOAD_EVENT = re.compile(
    rb"(?:\[\d+\]\s+)?\d+\.\d+:\s+(?:(\d+)\s+)?([A-Za-z_]\w*:(?![ukhIGHpPSDWebRX]+:)[A-Za-z_]\w*(?::[ukhIGHpPSDWebRX]+)?):"
    rb"(?:\s+\S|\s*$)"
)
_TIME = re.compile(rb"\s(\d+\.\d+):\s")
# A call chain line: address, symbol(+offset), (DSO).
_FRAME = re.compile(rb"^\s*(\w+)\s*(.+) \((.*)\)")
_OFFSET = re.compile(r"\+0x[\da-f]+$")
_ARGS = re.compile(r"\((?!anonymous namespace\)).*")
# The sample line of ``perf script`` without callchains: ``... event: ip sym+off (dso)``.
_FLAT = re.compile(rb"^.*\s(\S+):\s+([0-9a-f]+)\s+(.+) \((.*)\)\s*$")
_FOLDED = re.compile(rb"^(.*\S) (\d+)$")
#: A line longer than this is no line of perf script or folded stacks (a folded stack of 1000 frames is 100 KB):
#: its first _CUT_LINE_HEAD bytes are kept (:func:`_cut_line`) and the rest dropped.
MAX_LINE_BYTES = 1 << 24
_CUT_LINE_HEAD = 4096
#: Most blank text kept as it is before the first line of a profile (past it, only its newlines).
BLANK_HEAD_MAX = 1 << 26


def _cut_line(line: bytes) -> bytes:
    """The head of a line too long to be a profile's, as a line that reads as no sample but as itself when skipped.

    Indented, it is no sample header (stackcollapse-perf.pl's rule needs a command name first) and, ending in
    NUL, no line of a sample without call chain, no folded stack: the cut never makes a sample of a part of a line.
    """
    return b" " + line[:_CUT_LINE_HEAD] + b"\0"


# The maps perf names in brackets that are user-space memory (perf's util/map.c: the vDSO and its data page, the
# vsyscall page, anonymous, heap and stack mappings, the uprobes page, arm's sigpage and vectors): user-mode code,
# which perf counts as user time (`perf report --sort dso,sym` marks their symbols [.]).
_USER_MAP = re.compile(
    r"\[(?:vdso(?:32|x32)?|vvar(?:_vclock)?|vsyscall|heap|stack(?::\d+)?|anon(?::[^\]]*)?|uprobes|sigpage|vectors)\]$"
)
_KERNEL_FILE = re.compile(r"(?:vmlinux|\.ko(?:\.xz|\.zst|\.gz)?)$")


def _kernel_dso(dso: str, pc: str) -> bool:
    """Whether a frame is kernel code, as perf decides it: by the map perf named, else by the address.

    perf script's default text carries no cpumode per frame, so the map's name decides where it is one perf
    gives only to kernel or only to user maps; for any other (``[unknown]``, a module perf shows as ``[ext4]``,
    ``[bpf_prog]``) the address does, as perf's machine__kernel_ip: the kernel half (x86-64, arm64).
    """
    if dso.startswith("[kernel.kallsyms]") or dso.startswith("[guest.kernel.kallsyms") or _KERNEL_FILE.search(dso):
        return True
    if _USER_MAP.match(dso) or dso.startswith(("/", "//anon")):
        return False
    # An unresolved kernel address is still a kernel address (x86-64 and arm64 kernel halves).
    return len(pc) == 16 and pc[0] in "f" and pc.startswith("ffff")


_JIT_MAP = re.compile(r"perf-\d+\.map$")
_JAVA_ARGS = re.compile(r"\.\(.*\)\.")


def _jit_dso(dso: str) -> bool:
    return bool(_JIT_MAP.search(dso)) or "jitted-" in dso or dso.startswith("//anon")


_SYMBOLS: dict[tuple[bytes, bytes, bool, bool], tuple[ProfileFrame, ...]] = {}


def parse_frame_line(line: bytes, java: bool) -> tuple[ProfileFrame, ...] | None:
    """The frames of one call chain line (several when perf shows inlined ones as ``a->b``), or None."""
    m = _FRAME.match(line)
    if m is None:
        return None
    raw_b = m.group(2)
    plus = raw_b.rfind(b"+0x")
    if plus > 0 and len(raw_b) > plus + 3 and not raw_b[plus + 3 :].strip(b"0123456789abcdef"):  # +0x[0-9a-f]+$
        raw_b = raw_b[:plus]
    dso_b = m.group(3)
    pc = m.group(1)
    # The kernel half of the address space matters only when the DSO does not say (an unknown one).
    high = len(pc) == 16 and pc.startswith(b"ffff")
    return _cached_symbol(raw_b, dso_b, java, high)


def _symbol_frames(raw_b: bytes, dso_b: bytes, java: bool, high: bool) -> tuple[ProfileFrame, ...]:
    raw = raw_b.decode("utf-8", "surrogateescape")
    dso = dso_b.decode("utf-8", "surrogateescape")
    if raw.startswith("("):
        return ()
    if dso == "deleted)" and " (" in raw:
        # perf's "(/path (deleted))" for an unlinked file: the frame rule, as stackcollapse-perf.pl's, cuts at
        # the inner " (" (the symbol keeps its "(/path" tail, as the Perl script's does); the DSO is the path.
        dso = raw.rsplit(" (", 1)[1] + " (deleted)"
    inlined = dso == "inlined"
    if inlined:
        dso = INLINED_DSO  # "inlined" is perf's marker where the DSO goes, not a file
    kernel = _kernel_dso(dso, "ffff000000000000" if high else "")
    jit = _jit_dso(dso)
    frames: list[ProfileFrame] = []
    parts = raw.split("->")
    while parts and not parts[-1]:
        # Perl's split, which stackcollapse-perf.pl splits inlined frames with, drops trailing empty fields: a C++
        # ``operator->`` is one frame ``operator``, not ``operator`` and an empty one.
        parts.pop()
    for part in parts:
        name = part
        if name == "[unknown]":
            name = "[" + (dso.rsplit("/", 1)[-1] if dso != "[unknown]" else "unknown") + "]"
        name = name.replace(";", ":")
        if not _JAVA_ARGS.search(name):
            name = _ARGS.sub("", name, count=1)
        name = name.replace('"', "").replace("'", "")
        if java and "/" in name and name.startswith("L"):
            name = name[1:]
        frames.append(ProfileFrame(name, dso, kernel, jit, bool(frames) or inlined))
    return tuple(frames)


def _line_frames(line: bytes, java: bool) -> tuple[ProfileFrame, ...] | None:
    """The frames of one line of a call chain text: empty for blank and comment lines, None if not a frame."""
    if not line or line[:1] == b"#":
        return ()
    if line[:1].isspace():
        return parse_frame_line(line, java)
    return None


#: New frame lines from which a batch is keyed by numpy (:mod:`collectors.perf_frames`), not parsed line by line.
KEYED_FROM = 1024
# A frame key (collectors.perf_frames: flags, symbol, NUL, DSO) -> its frames; bounded as _SYMBOLS is.
_KEYED: dict[bytes, tuple[ProfileFrame, ...]] = {}


def _parse_keyed(lines: list[bytes], java: bool, cache: dict[bytes, tuple[ProfileFrame, ...] | None]) -> None:
    """:func:`_line_frames` of each line into ``cache``, each distinct symbol parsed once.

    Lines that differ only in their address and offset share one key (see
    :func:`collectors.perf_frames.frame_keys`); lines without a key are parsed one by one.
    """
    from collectors.perf_frames import frame_keys, key_flag

    keys = frame_keys(lines, java)
    high_flag = key_flag(java, True)
    fresh = {}
    for key in set(keys).difference(_KEYED):
        if key is not None:
            raw, _, dso = key[1:].partition(b"\0")
            fresh[key] = _symbol_frames(raw, dso, java, key[0] == high_flag)
    table: dict[Any, tuple[ProfileFrame, ...]] = _KEYED
    if len(_KEYED) + len(fresh) <= 1 << 20:  # bounded: a profile has far fewer distinct symbols
        _KEYED.update(fresh)
    else:
        table = {**_KEYED, **fresh}
    cache.update(zip(lines, map(table.get, keys), strict=True))
    for line in compress(lines, map(is_, keys, repeat(None))):
        cache[line] = _line_frames(line, java)


#: Distinct (thread, event, call chain text) from which a bulk reader that counted them text by text reads the
#: texts through the compiled chunk pass (:mod:`collectors.perf_chains`); below, loading it costs more than it saves.
COMPILED_FROM = 4096
#: Call chain texts split and looked up at a time by :func:`_chains_of`.
CHAIN_BATCH = 4096


def _chains_of(
    bodies: list[bytes], java: bool, cache: dict[bytes, tuple[ProfileFrame, ...] | None], keyed: bool = False
) -> tuple[list[tuple[ProfileFrame, ...]], list[int]]:
    """Root-to-leaf frames of each call chain text, and its number of lines that are not frames.

    All texts are split in one pass (joined, then split at every newline), their lines looked up in
    ``cache`` in one C-level map (the same frame line recurs in many chains: only lines not met
    before are parsed), and the list reversed once: each text's frames are then one slice of it,
    leaf-last.  ``cache`` maps a line to its frames (see :func:`_line_frames`) for one ``java`` value.
    ``keyed``: parse the lines not met before through :func:`_parse_keyed` when there are many (numpy
    is loaded: the reader took its numpy path).
    """
    if len(bodies) > CHAIN_BATCH:  # in batches: the lists of lines stay small (RSS), the speed is the same
        out: list[tuple[ProfileFrame, ...]] = []
        bad: list[int] = []
        for at in range(0, len(bodies), CHAIN_BATCH):
            got_out, got_bad = _chains_of(bodies[at : at + CHAIN_BATCH], java, cache, keyed)
            out += got_out
            bad += got_bad
        return out, bad
    if not bodies:
        return [], []
    lines = b"\n".join(bodies).split(b"\n")
    new = set(lines).difference(cache)
    if keyed and len(new) >= KEYED_FROM:
        _parse_keyed(list(new), java, cache)
    else:
        for line in new:
            cache[line] = _line_frames(line, java)
    got = list(map(cache.__getitem__, lines))
    got.reverse()  # the last text first, each one leaf first... reversed: root first
    sizes = list(map(bytes.count, bodies, repeat(b"\n")))
    sizes.reverse()
    out = []
    bad = []
    at = 0
    if None not in got:
        # Each text's slice of the lines, joined into one tuple: C-level maps, no Python per text.
        ends = list(accumulate(map(_PLUS_ONE, sizes)))
        parts = map(got.__getitem__, map(slice, chain((0,), ends), ends))
        out = list(map(tuple, map(chain.from_iterable, parts)))  # type: ignore[arg-type]
        bad = [0] * len(bodies)
    else:
        for size in sizes:
            nxt = at + size + 1
            part = got[at:nxt]
            n_bad = part.count(None)
            if n_bad:
                part = [g for g in part if g is not None]
            out.append(tuple(chain.from_iterable(part)))  # type: ignore[arg-type]
            bad.append(n_bad)
            at = nxt
    out.reverse()
    bad.reverse()
    return out, bad


def _chain_interner(size: int) -> Any:
    """The compiled chunk pass (:mod:`collectors.perf_chains_aot`), to read call chain texts counted text by text
    (``size`` bytes of input), or None: the Python path then reads the same.

    Loaded when built (``make compile``, :data:`forensics.jit.BUILD_HINT`).  Not built yet, it is built now only
    for an input whose reading the build pays for (:data:`forensics.jit.COLD_INPUT_BYTES`, as the trace
    kernels; the build takes 8-15 s of CPU and saves about 0.5 s per 50 MB of distinct stacks) or when
    ``KFORENSIC_COMPILED=yes``; otherwise stderr says once how to build it (unless a build failed before or
    ``KFORENSIC_AOT=no``/``KFORENSIC_COMPILED=no``).
    """
    import sys

    from collectors.perf_chains_aot import GROUP, chunk_kernel
    from forensics import aot
    from forensics.jit import AOT_ENV, BUILD_HINT, COLD_INPUT_BYTES, COMPILED_ENV, switch

    forced = switch(COMPILED_ENV)
    if forced is False:
        return None
    found = chunk_kernel()
    if found is not None or forced or size >= COLD_INPUT_BYTES:
        return found if found is not None else chunk_kernel(build=True)
    if switch(AOT_ENV) is not False and not aot.failed(GROUP):
        print(
            f"kforensic: reading the call chains without compiled code (not built for this install yet; "
            f"`{BUILD_HINT}` builds it once, then inputs of many distinct stacks read faster)",
            file=sys.stderr,
            flush=True,
        )
    return None


_AUTO: Any = object()  # ScriptParser's scanner: the one built ahead of time, when it is


def _chunk_kernel() -> Any:
    """The compiled chunk pass (:mod:`collectors.perf_chunk_kernel`) when built, or None: the numpy passes run.

    Never built here unless ``KFORENSIC_COMPILED=yes`` (the module is built, or its absence said,
    when a reader that counted its samples text by text closes: :func:`_chain_interner`); ``KFORENSIC_AOT=no`` or
    ``KFORENSIC_COMPILED=no``: never loaded.
    """
    from collectors.perf_chains_aot import chunk_kernel
    from forensics.jit import COMPILED_ENV, switch

    forced = switch(COMPILED_ENV)
    if forced is False:
        return None
    return chunk_kernel(build=forced is True)


#: A symbol without any of these is its frame's one name (:func:`_symbol_frames`: no inlined frames ``a->b``, no
#: arguments or ``(...)``, no ``;`` or quotes to replace, not ``[unknown]``, not the ``(deleted)`` form).
_NOT_PLAIN = re.compile(r"[-(;\"'\[]")


def _key_names(symbol: str, dso: str, high: bool) -> str | None:
    """The names of the frames of a frame key (decoded; not a Java thread's) joined by ``;``, as the folded stacks
    join them; None when it names no frame.  :func:`_cached_symbol`'s names, without frames made where the symbol
    is its one name (most are)."""
    if _NOT_PLAIN.search(symbol) is None:
        return symbol
    raw, dso_b = symbol.encode("utf-8", "surrogateescape"), dso.encode("utf-8", "surrogateescape")
    frames = _cached_symbol(raw, dso_b, False, high)
    return ";".join(f.name for f in frames) if frames else None


def _cached_symbol(raw: bytes, dso: bytes, java: bool, high: bool) -> tuple[ProfileFrame, ...]:
    """:func:`_symbol_frames` through the cache :func:`parse_frame_line` keeps."""
    key = (raw, dso, java, high)
    frames = _SYMBOLS.get(key)
    if frames is None:
        frames = _symbol_frames(raw, dso, java, high)
        if len(_SYMBOLS) < 1 << 20:  # bounded: a profile has far fewer distinct symbols
            _SYMBOLS[key] = frames
    return frames


def _chains_compiled(
    bodies: list[bytes], java: bool, run: Any, cache: dict[bytes, tuple[ProfileFrame, ...] | None]
) -> tuple[list[tuple[ProfileFrame, ...]], list[int]]:
    """:func:`_chains_of` (keyed) through the compiled chunk pass ``run`` (:mod:`collectors.perf_chains`)."""
    from collectors.perf_chains import chains_compiled

    return chains_compiled(
        bodies,
        run,
        lambda raw, dso, high: _cached_symbol(raw, dso, java, high),
        lambda odd: _chains_of(odd, java, cache, True),
    )


def _first_met(raw: Any) -> tuple[Any, Any]:
    """Numbers ``raw`` renumbered in the order first met (0, 1, ...), and the raw number of each new one."""
    import numpy as np

    values, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank[inverse.reshape(-1)], values[order]


def _numbered_table(
    fast: _FastCounters, chain_of: Any, chains: list[tuple[ProfileFrame, ...]], te: Any, te_thread: list[Thread]
) -> StackTable | None:
    """:func:`forensics.types.profile.stack_table` of the stacks of ``fast`` made from numbers (``chain_of``: each
    one's frames tuple in ``chains``; ``te``: its (thread, event) number, whose thread ``te_thread`` gives); None
    when a sum may not fit int64.  Chains and threads are numbered in the order the stacks first meet them, as
    ``stack_table`` numbers them.
    """
    import numpy as np

    if fast.period.dtype != np.int64 or fast.samples.dtype != np.int64:
        return None  # counts as Python integers: stack_table of the stacks says what it says of them
    number: dict[int, int] = {}
    of_te = np.fromiter((number.setdefault(id(th), len(number)) for th in te_thread), np.int64, len(te_thread))
    by_number = list({id(th): th for th in te_thread}.values())
    chain_no, chain_at = _first_met(chain_of)
    thread_no, thread_at = _first_met(of_te[te])
    return StackTable(
        list(map(chains.__getitem__, chain_at.tolist())),
        chain_no,
        list(map(by_number.__getitem__, thread_at.tolist())),
        thread_no,
        fast.period,
        fast.samples,
    )


class _FastCounters(NamedTuple):
    """The counters of the slots counted by number (:meth:`ScriptParser._fast_counters`), in their order."""

    te_keys: list[tuple[bytes, bytes, bytes | None, bytes]]  # comm, pid, tid, event of each (thread, event) number
    te: Any  # each counter's (thread, event) number (int64 array, as the next ones)
    body: Any  # its call chain text's number in ``bodies``
    samples: Any  # (int64, or Python integers in an object array)
    period: Any
    lines: Any  # its first sample's line
    headers: _Headers  # and header line, verbatim
    slots: Any  # its first slot
    bodies: Any  # collectors.perf_chunks.Bodies: the call chain texts numbered by the chunk pass, with their chains


class _Pending(NamedTuple):
    """The slots counted by number with their counts taken (:meth:`ScriptParser._fast_pending`), not grouped into
    counters yet: what the folded sums need (:meth:`ScriptParser._pending_folded`), in the slots' order."""

    fast: Any  # the slots' numbers
    hdr: Any  # each one's header number
    count: Any  # its samples
    te_ids: dict[tuple[bytes, bytes, bytes | None, bytes], int]  # the (thread, event) keys numbered
    te: Any  # each one's (thread, event) number
    body: Any  # its call chain text's number
    period: Any  # its period (int64: a header's period below _FAST_PERIOD, times its count)


class _Headers:
    """The verbatim first header lines of counters, each written when it is read (:meth:`text`) or all at once.

    A counter of the compiled chunk pass keeps its masked header's number and its time's digits (one integer):
    the header is written back from the header's parts around the time (:meth:`ScriptParser._fast_counters`);
    the others (``more``: counters of the per-sample code) are strings already.  ``of``: counter ``i``'s entry
    (the first ``len(heads)`` entries those of the compiled pass, then ``more``); None: ``i`` itself.
    """

    __slots__ = ("heads", "more", "of", "parts", "wholes")

    def __init__(
        self, parts: dict[int, tuple[str, int, int, str]], heads: Any, wholes: Any, more: list[str], of: Any = None
    ) -> None:
        self.parts, self.heads, self.wholes, self.more, self.of = parts, heads, wholes, more, of

    def __len__(self) -> int:
        return len(self.heads) + len(self.more) if self.of is None else len(self.of)

    def _write(self, head: int, whole: int) -> str:
        before, dot, digits, after = self.parts[head]
        d = str(whole).zfill(digits)
        return before + d[:dot] + "." + d[dot:] + after

    def text(self, i: int) -> str:
        """Counter ``i``'s header."""
        at = i if self.of is None else int(self.of[i])
        n = len(self.heads)
        return self._write(int(self.heads[at]), int(self.wholes[at])) if at < n else self.more[at - n]

    def every(self) -> list[str]:
        """Every counter's header, in order."""
        written = list(map(self._write, self.heads.tolist(), self.wholes.tolist())) + self.more
        return written if self.of is None else list(map(written.__getitem__, self.of.tolist()))

    def picked(self, more: list[str], of: Any) -> _Headers:
        """These headers and ``more`` after them (entries numbered on), counter ``i`` being entry ``of[i]``."""
        assert self.of is None and not self.more
        return _Headers(self.parts, self.heads, self.wholes, more, of)


_PLUS_ONE = (1).__add__
# Parts of a text partitioned at its first newline, and fields of a parsed header (_Header).
_HEAD_OF, _BODY_OF = itemgetter(0), itemgetter(2)
_FIRST_BYTE = itemgetter(slice(0, 1))
_IDS_OF, _EVENT_OF, _PERIOD_OF = itemgetter(0, 1, 2, 3), itemgetter(3), itemgetter(4)


def _count_first(
    counts: dict[Any, StackCount], keys: list[Any], periods: list[int], lines: list[int], headers: list[bytes]
) -> list[StackCount]:
    """Count one sample of each key (thread, event, chain) in ``counts``; the counter of each.

    A key not counted before gets a counter made from its first line and header here, all of them in
    C-level maps; keys met before (or twice here: two CPUs) are added to one by one.
    """
    found = list(map(counts.get, keys))
    todo = dict.fromkeys(compress(keys, map(is_, found, repeat(None))))  # keys to make, in the order met
    made_at: list[int] = []
    if len(todo) == len(keys):
        made_at = list(range(len(keys)))  # every key new and met once (a recording of distinct stacks): in order
    elif todo:
        first_at = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1), strict=True))
        made_at = list(map(first_at.__getitem__, todo))
    if made_at:
        decoded = map(bytes.decode, map(headers.__getitem__, made_at), repeat("utf-8"), repeat("replace"))
        made = map(StackCount, repeat(1), map(periods.__getitem__, made_at), map(lines.__getitem__, made_at), decoded)
        counts.update(zip(todo, made, strict=True))
    if len(made_at) < len(keys):
        for i in set(range(len(keys))).difference(made_at):
            sc = counts[keys[i]]
            sc.samples += 1
            sc.period += periods[i]
    return list(map(counts.__getitem__, keys))


_FIRST_THREE = itemgetter(0, 1, 2)  # comm, pid, tid of a counter's key
_BODY = itemgetter(4)  # its call chain text
_EVENT_KEY = itemgetter(3)  # its event
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_EVENT_OF_TE = itemgetter(3)  # the event of a (comm, pid, tid, event) key
_SAMPLES_OF, _PERIOD_OF_COUNT = attrgetter("samples"), attrgetter("period")  # of a StackCount
_LINE_OF, _HEADER_OF = attrgetter("first_line"), attrgetter("first_header")

_NOT_BULK = object()
#: Periods below this are counted as int64 numbers by the compiled chunk pass (sums of 2**32 samples fit); a
#: header with a larger one is counted as a Python integer, the other way.
_FAST_PERIOD = 1 << 31
#: Counts of the per-sample code's counters below this are summed as int64 with the others (a sum of two fits).
_FAST_SUM = 1 << 60
#: Counters of per-sample code (``_counts``) merged among those counted by number without sorting them all: each is a
#: pass over the others' numbers (a recording of distinct stacks has a handful; sorting 93k counters took 10 ms).
_FEW_COUNTED = 64
# A header whose command name or pid holds the time (see ScriptParser._header); told by identity.
_TIMED: tuple[bytes, bytes, bytes | None, bytes, int] = (b"", b"", None, b"", -1)


#: The start of what :data:`_HEADER` reads as the command name of an exited task's sample: perf prints comm ``:-1``
#: and pid (or pid/tid) ``-1``, which the rule cannot read as a number, so it reads on to the period.
_EXITED = re.compile(rb":-1\s+(-1)(/-1)?\s")


def _thread(comm: bytes, a: bytes, b: bytes | None) -> Thread:
    """The thread of a header's comm and numbers as :data:`_HEADER` reads them (stackcollapse-perf.pl's rule: one
    number is the tid, perf's default; two are pid/tid); an exited task's is comm ``:-1``, tid -1, with the
    rule's name kept for the folded stacks."""
    comm_s = comm.decode("utf-8", "surrogateescape")
    if comm[:4] == b":-1 " and (m := _EXITED.match(comm)) is not None:
        return Thread(EXITED_COMM, -1 if m[2] else None, -1, folded=comm_s)
    return Thread(comm_s, None, int(a)) if b is None else Thread(comm_s, int(a), int(b))


def _parse_header(text: bytes, m: re.Match[bytes], traced: set[bytes]) -> _Header | None:
    """comm, pid, tid, event and period of a header; None when a number is past 64 bits (perf prints none such:
    not a header, skipped as one it cannot read).  An event named by its payload's place (:data:`_PAYLOAD_EVENT`:
    a tracepoint's) is added to ``traced``."""
    if not _ids_fit(m):
        return None
    e = _PAYLOAD_EVENT.match(text, m.end())
    if e is not None:
        traced.add(e.group(2))
    else:
        e = _EVENT.search(text)
    if e is None:
        return (m.group(1), m.group(2), m.group(3), b"", 1)
    period = log_dec(e.group(1).decode()) if e.group(1) else 1
    return None if period is None else (m.group(1), m.group(2), m.group(3), e.group(2), period)


#: The most digits of a number perf prints (64 bits); a pid or tid longer is not one (forensics.units.log_dec).
_DIGITS = 20


def _flat_tracepoint(line: bytes) -> bool:
    """Whether ``line`` (its indent stripped) is a tracepoint's sample printed without call chain."""
    m = _HEADER.match(line)
    return m is not None and _PAYLOAD_EVENT.match(line, m.end()) is not None


def _ids_fit(m: re.Match[bytes]) -> bool:
    """Whether the pid (and tid) :data:`_HEADER` read are numbers perf prints (at most 64 bits)."""
    tid = m.group(3)
    return len(m.group(2)) <= _DIGITS and (tid is None or len(tid) <= _DIGITS)


#: A step back of the sample times this large (seconds) or larger says the span is not the recording's length.
BACK_SECONDS = 0.001
#: A step forward between two samples this large (seconds) or larger, and :data:`GAP_TIMES` their usual interval,
#: says the span counts a gap (a recording of a process that slept a while has steps of seconds, not of days).
GAP_SECONDS = 1.0
GAP_TIMES = 1000.0
#: Bytes read at a time: large enough that per-chunk work (numpy calls) is small, small enough that the
#: passes over a chunk (mask, split, hash) find it in the CPU cache (4 MiB chunks were 20% slower).
CHUNK = 512 << 10
#: Input bytes read with the regular-expression bulk path before the numpy keyer (its import costs) takes over.
NUMPY_FROM = 8 << 20
_Header = tuple[bytes, bytes, bytes | None, bytes, int]  # comm, pid, tid, event, period
# The time of a sample header (perf script prints `` 123.456789: ``); the bulk reader checks there is
# exactly one per sample.  It starts with a literal space, which keeps the regex engine's scan fast.
_BULK_TIME = re.compile(rb" (\d+\.\d+): ")
_NOT_PARSED: Any = object()  # a cache miss (None is cached: "not a frame")
_ELSEWHERE: Any = object()  # a masked header without exactly one time: parse the original text


def _strip_leading(block: bytes, start_line: int) -> tuple[bytes, int]:
    """A block without its leading empty and comment lines, and the line number it now starts at."""
    while block[:1] == b"\n" or block[:1] == b"#":
        nl = block.find(b"\n")
        if nl < 0:
            return b"", start_line
        block = block[nl + 1 :]
        start_line += 1
    return block, start_line


def _original(rest: bytes, view: memoryview, lo: int, hi: int) -> bytes:
    """Bytes ``lo:hi`` of ``rest + view``, without joining the two."""
    r = len(rest)
    if lo >= r:
        return view[lo - r : hi - r].tobytes()
    if hi <= r:
        return rest[lo:hi]
    return rest[lo:] + view[: hi - r].tobytes()


def _grown(array: Any, size: int) -> Any:
    """A numpy array of ``size`` elements: ``array`` followed by zeros."""
    import numpy as np

    out = np.zeros(size, array.dtype)
    out[: len(array)] = array
    return out


class _Steps:
    """The times of the samples counted, in the order the text gives them: how many, the last one, and the largest
    step back and forward from one to the next (what says a span was measured across a clock step or a gap)."""

    __slots__ = ("back", "count", "gap", "last")

    def __init__(self) -> None:
        self.count = 0
        self.last = 0.0
        self.back = 0.0
        self.gap = 0.0

    def one(self, t: float) -> None:
        """One more time."""
        if self.count:
            if t < self.last:
                self.back = max(self.back, self.last - t)
            else:
                self.gap = max(self.gap, t - self.last)
        self.count += 1
        self.last = t

    def run(self, count: int, steps: tuple[float, float, float, float]) -> None:
        """``count`` more times, whose first, last, largest step back and forward are ``steps``."""
        first, last, back, gap = steps
        self.one(first)
        self.count += count - 1
        self.back = max(self.back, back)
        self.gap = max(self.gap, gap)
        self.last = last

    def of(self, times: list[float]) -> None:
        """The times of a chunk, in order."""
        if len(times) > 1:
            step = list(map(sub, times[1:], times[:-1]))
            back, forward = -min(step), max(step)
            self.run(len(times), (times[0], times[-1], max(back, 0.0), max(forward, 0.0)))
        elif times:
            self.one(times[0])


class ScriptParser:
    """Streaming parser of ``perf script`` text; feed bytes, then :meth:`close`."""

    def __init__(
        self,
        source: str,
        window: tuple[float, float] | None = None,
        kind: str = "perf script",
        bulk: bool = False,
        scanner: Any = _AUTO,
        expected: int = 0,
        folded: bool = False,
        event: str | None = None,
    ) -> None:
        """``bulk``: use the numpy path from the first byte (the input is known to be large); ``expected``: its
        size, when known; ``folded``: the folded stacks' sums wanted (:attr:`Profile.folded`: made from numbers
        when the stacks were counted by number, the stacks themselves then made only when read); ``event``: the
        event asked for (``--event``): a tracepoint recorded alone is then named apart (:meth:`_event_names`).

        ``scanner``: the compiled chunk pass of that path (:mod:`collectors.perf_chunk_kernel`); by default the
        one built ahead of time when it is (:func:`_chunk_kernel`); None: the numpy passes (the same results).
        """
        self.source = source
        self.kind = kind
        self.window = window
        self._wanted = None if event is None else event.encode("utf-8", "surrogateescape")
        self._rest = b""
        self._cutting = False  # in a line longer than MAX_LINE_BYTES, dropping its bytes up to its newline
        self._line = 1  # line number of the first line of ``_rest``
        self._cut_at: int | None = None  # the line of a last sample without its blank line (a cut input)
        self._counts: dict[tuple[bytes, bytes, bytes | None, bytes, bytes], StackCount] = {}
        self._events_raw: dict[bytes, int] = {}
        self._traced: set[bytes] = set()  # the events named by a tracepoint's field (_PAYLOAD_EVENT)
        self._seen: dict[bytes, tuple[StackCount, int, bytes] | None] = {}
        # The numpy path: masked sample text -> slot; slot 0 is "counts nothing" (empty pieces).
        self._ids: dict[bytes, int] = {b"": 0}
        self._slots: list[tuple[StackCount, int, bytes] | None] = [None]
        # Numpy arrays per slot, made when the numpy path starts (_start_bulk).
        self._slot_counts: Any = None
        self._slot_length: Any = None
        self._slot_lines: Any = None
        self._slot_timed: Any = None
        self._any_timed = False
        self._bulk = bulk
        self._scanner = scanner
        self._chunk_slots: Any = None  # collectors.perf_chunks.ChunkSlots, when the compiled chunk pass runs
        # The compiled chunk pass's counters as numbers (_fast_new): per slot its masked header's number + 1 (0:
        # a slot counted in _counts), the length of that header, its first line and its time's digits; per
        # header number its fields and event number.  The counters are made from them when the reader closes.
        self._slot_hdr1: Any = None
        self._slot_first: Any = None
        self._slot_whole: Any = None
        self._slot_body: Any = None  # per slot its call chain text's number (ChunkSlots' bodies)
        self._hdr_fields: list[_Header | None] = []
        self._hdr_ok: Any = None
        self._hdr_timed: Any = None  # per header number: its fields hold the time (_TIMED: read sample by sample)
        self._hdr_event: list[int] = []
        self._hdr_period: list[int] = []
        self._event_ids: dict[bytes, int] = {}
        # (the first slot of a batch of counted-by-number slots, len(_counts) then): orders them among _counts.
        self._fast_batches: list[tuple[int, int]] = []
        self._table: StackTable | None = None  # the stacks numbered by chain and thread, when counted by number
        self._chains: dict[tuple[ProfileFrame, ...], tuple[ProfileFrame, ...]] = {}  # one tuple per equal chain
        self._expected = expected
        self._folded = folded
        self._fed = 0
        self._shapes: dict[bytes, tuple[bytes, bytes, bytes | None, bytes, int] | None] = {}
        # The numpy path's header cache: a masked header -> its parsed fields (or _ELSEWHERE: not one time).
        self._masked_shapes: dict[bytes, Any] = {}
        self._start: float | None = None
        self._end: float | None = None
        self._flat_of: dict[bytes, int] = {}  # the samples without a call chain by event (as the headers name it)
        self._skipped = 0
        self._first_skipped: tuple[int, str] | None = None
        self._outside = 0
        self._outside_span: tuple[float, float] | None = None  # the times of the samples --window left out
        self._untimed = 0
        self._steps = _Steps()

    def feed(self, chunk: bytes) -> None:
        """Parse every whole sample in ``chunk`` (plus what was left of the previous one)."""
        if self._cutting:  # the rest of a line too long to be perf script's: dropped up to its newline
            nl = chunk.find(b"\n")
            if nl < 0:
                return
            chunk = chunk[nl:]
            self._cutting = False
        rest = self._rest
        at = chunk.rfind(b"\n\n")
        # The last blank line of rest + chunk (rest holds none): in the chunk, or across the seam.
        cut = len(rest) + at if at >= 0 else len(rest) - 1 if rest[-1:] == chunk[:1] == b"\n" else -1
        if cut < 0:
            data = rest + chunk
            self._rest = data
            if len(data) > MAX_LINE_BYTES:
                # No blank line in 16 MiB: samples without call chains (one line each).
                cut = data.rfind(b"\n")
                if cut >= 0:
                    self._blocks(data[: cut + 1])
                    self._rest = data[cut + 1 :]
                if len(self._rest) > MAX_LINE_BYTES:
                    # One line of 16 MiB (no newline: a 2 GB one held 3 GB and took minutes, each chunk joined to
                    # it): its head is kept, to be skipped as a line of no sample, its rest dropped.
                    self._rest = _cut_line(self._rest)
                    self._cutting = True
            return
        end = cut + 2 - len(rest)  # where the whole samples end in the chunk
        if self.window is None:
            self._fed += cut + 2
            # Importing numpy costs more than it saves on small inputs.
            if self._bulk or self._fed > NUMPY_FROM:
                self._bulk = True
                # rest and chunk are masked into one new buffer: no join of the two first.
                self._blocks_bulk(rest, memoryview(chunk)[:end])
            else:
                self._blocks_counted(rest + chunk[:end])
        else:
            self._blocks(rest + chunk[:end])
        self._rest = chunk[end:]

    def close(self) -> Profile:
        """Parse what is left (a last sample without its blank line is dropped, as stackcollapse-perf.pl does)."""
        if self._rest.strip():
            self._blocks(self._rest, last=True)
        self._rest = b""
        return self._profile()

    def _skip(self, line_no: int, text: bytes) -> None:
        self._skipped += 1
        if self._first_skipped is None:
            self._first_skipped = (line_no, text.decode("utf-8", "replace")[:200])

    def _header(self, shape: bytes) -> _Header | None:
        """comm, pid, tid, event and period of a header whose time was replaced by ``0.0``.

        :data:`_TIMED` when those fields hold the time: perf prints ``:-1    -1 [000]  12.5: ...``
        for a task it lost, and stackcollapse-perf.pl's rule then takes everything up to the period
        as the command name, time included; such headers are parsed as they are, sample by sample.
        """
        m = _HEADER.match(shape)
        if m is None:
            return None
        at = shape.find(b"0.0:")
        if 0 <= at < m.end():
            return _TIMED
        return _parse_header(shape, m, self._traced)

    def _real_header(self, header: bytes) -> _Header | None:
        """:meth:`_header` of a header as it is (its time included)."""
        m = _HEADER.match(header)
        return None if m is None else _parse_header(header, m, self._traced)

    def _blocks_counted(self, data: bytes) -> None:
        """:meth:`_blocks_bulk` without numpy: times masked by ``re.subn``, ``Counter`` counts."""

        shaped, replaced = _BULK_TIME.subn(b" 0.0: ", data)
        pieces = shaped.split(b"\n\n")
        if replaced != len(pieces) - pieces.count(b""):
            # Not one time per sample (no times, or a frame line that looks like one): the slow way.
            self._blocks(data)
            return
        counted = Counter(pieces)
        seen = self._seen
        new = [b for b in counted if b not in seen and b]
        if new:
            fresh = set(new)
            first: dict[bytes, tuple[int, int]] = {}
            line = self._line
            for i, piece in enumerate(pieces):
                if piece in fresh:
                    first[piece] = (i, line)
                    fresh.discard(piece)
                    if not fresh:
                        break
                line += piece.count(b"\n") + 2
            parsed = [self._bulk_parse(block, first[block][1]) for block in new]
            # A text that is all comments (its time is in a comment) would still count in the span.
            if any(p is _NOT_BULK or p is _TIMED or p is None for p in parsed):
                self._blocks(data)
                return
            originals = data.split(b"\n\n")
            for block, got in zip(new, parsed, strict=True):
                i, line = first[block]
                seen[block] = None if got is None else self._bulk_count(got, originals[i], line)  # type: ignore[arg-type]
                counted[block] -= 1  # the first occurrence was counted when it was parsed
        self._line += shaped.count(b"\n")
        times = list(map(float, _BULK_TIME.findall(data)))
        self._steps.of(times)
        if times:
            lo = min(times)
            hi = max(times)
            if self._start is None or lo < self._start:
                self._start = lo
            if self._end is None or hi > self._end:
                self._end = hi
        events = self._events_raw
        for block, n in counted.items():
            if not n or not block:
                continue
            slot = seen[block]
            if slot is None:
                continue
            sc, period, event = slot
            sc.samples += n
            sc.period += n * period
            events[event] += n

    def _blocks_bulk(self, rest: bytes, view: memoryview) -> None:
        """The same as :meth:`_blocks` on ``rest + view`` (whole samples: it ends with a blank line), in bulk.

        Samples differ from each other mostly in their time: :func:`collectors.perf_scan.mask_times`
        writes zeros over the times, a dictionary gives each distinct text a slot (one look-up per
        sample, in C), numpy counts the slots, and only texts not seen before go through the
        per-sample code, which parses them and finds their line and verbatim header (masking keeps
        every offset, so the original text is at the same place).  A chunk where a new text holds
        other than exactly one time (no ``-g``, garbage, no times) goes to :meth:`_blocks`.  A text
        seen before needs no such check: where the times are depends only on the masked text
        (:mod:`collectors.perf_scan`), and a text gets its slot only once it has passed.
        """
        if self._slot_counts is None:
            from forensics.jit import import_numpy

            import_numpy()  # without OpenBLAS's thread pool
            if self._scanner is _AUTO:
                self._scanner = _chunk_kernel()
            if self._scanner is not None:
                from collectors.perf_chunks import ChunkSlots

                self._chunk_slots = ChunkSlots(self._scanner, self._expected)
                self._start_bulk()
        if self._chunk_slots is not None:
            self._blocks_scanned(rest, view)
            return
        import numpy as np

        from collectors.perf_scan import mask_times

        masked = mask_times(rest, view)
        if masked is None:
            self._blocks(rest + view.tobytes())
            return
        pieces = masked.text.split(b"\n\n")
        n = len(pieces)
        ids = self._ids
        # Each piece's slot (-1: a text not seen before), one C-level look-up each.
        slots = np.fromiter(map(ids.get, pieces, repeat(-1)), np.int64, n)
        if self._slot_counts is None:
            self._start_bulk()
        missing = np.flatnonzero(slots < 0)
        counted: list[int] = []
        if len(missing):
            got = self._new_texts(pieces, slots, missing, masked.colons, rest, view)
            if got is None:
                self._blocks(rest + view.tobytes())
                return
            counted = got
        newlines = self._slot_lines[slots]
        if self._any_timed:
            timed = np.flatnonzero(self._slot_timed[slots])
            if len(timed):
                # Samples whose header fields hold their time: each is its own stack, as in the script.
                lines = (self._line + np.cumsum(newlines + 2) - newlines - 2)[timed].tolist()
                lengths = self._slot_length[slots]
                ends = (np.cumsum(lengths + 2))[timed]  # each with its blank line
                self._timed_again(lines, (ends - lengths[timed] - 2).tolist(), ends.tolist(), rest, view)
        self._count_chunk(slots, counted, int(newlines.sum()), len(masked.colons), masked.steps, masked.lo, masked.hi)

    def _timed_again(self, lines: list[int], los: list[int], his: list[int], rest: bytes, view: memoryview) -> None:
        """Read again, each as its own stack at its own line, the samples whose header fields hold their time
        (``rest`` + ``view`` bytes ``los[i]:his[i]``, from line ``lines[i]``), as the script makes them."""
        line0 = self._line
        for line, lo, hi in zip(lines, los, his, strict=True):
            self._line = line
            self._blocks(_original(rest, view, lo, hi), steps=False)
        self._line = line0

    def _count_chunk(
        self, slots: Any, counted: list[int], newlines: int, colons: int, steps: Any, lo: float | None, hi: float | None
    ) -> None:
        """Count a chunk's slotted samples (those in ``counted`` were counted when their text was parsed), its
        lines (``newlines`` and a blank line between samples), clock steps and time span."""
        import numpy as np

        self._line += newlines + 2 * (len(slots) - 1)
        counts = np.bincount(slots, minlength=len(self._slots))
        counts[counted] -= 1  # first occurrences, counted when their text was parsed
        self._slot_counts[: len(counts)] += counts
        if steps is not None:
            self._steps.run(colons, steps)
        if lo is not None and hi is not None:
            if self._start is None or lo < self._start:
                self._start = lo
            if self._end is None or hi > self._end:
                self._end = hi

    def _new_texts(
        self, pieces: list[bytes], slots: Any, missing: Any, colons: Any, rest: bytes, view: memoryview
    ) -> list[int] | None:
        """Give the texts not seen before (at ``missing``) their slots; None (nothing changed) if one is odd.

        Each new text is parsed once, from its first piece here (its line, its verbatim header), and
        that piece is counted then: the slots of those counted first pieces are returned.
        """
        import numpy as np

        at_missing = missing.tolist()
        new = list(map(pieces.__getitem__, at_missing))
        # Each new text once, in the order met, and its first piece in this chunk (C-level maps: a
        # dictionary of the reversed pairs keeps each text's first index).
        blocks = list(dict.fromkeys(new))
        first_at = dict(zip(reversed(new), reversed(at_missing), strict=True))
        lengths = self._slot_length[slots]  # index -1 for the new ones: overwritten next
        lengths[missing] = np.fromiter(map(len, new), np.int64, len(new))
        newlines = self._slot_lines[slots]
        newlines[missing] = np.fromiter(map(bytes.count, new, repeat(b"\n")), np.int64, len(new))
        ends = np.cumsum(lengths + 2) - 2  # where each piece ends (its blank line follows)
        starts = ends - lengths
        at = np.fromiter(map(first_at.__getitem__, blocks), np.int64, len(blocks))
        # Exactly one time in each new text (known ones had theirs checked when they were new).
        times = np.searchsorted(colons, ends[at]) - np.searchsorted(colons, starts[at])
        if not (times == 1).all():
            return None
        lines = (self._line + np.cumsum(newlines + 2) - newlines - 2)[at].tolist()
        base = len(self._slots)
        counted = self._slot_new(blocks, lines, at.tolist(), starts[at].tolist(), len(pieces), rest, view, True)
        if counted is None:
            return None
        self._slot_length[base : len(self._slots)] = lengths[at]
        self._slot_lines[base : len(self._slots)] = newlines[at]
        slots[missing] = np.fromiter(map(self._ids.__getitem__, new), np.int64, len(new))
        return counted

    def _slot_new(
        self,
        blocks: list[bytes],
        lines: list[int],
        at: list[int],
        starts: list[int],
        n_pieces: int,
        rest: bytes,
        view: memoryview,
        register: bool,
    ) -> list[int] | None:
        """Give the new ``blocks`` the next slots, in order; the slots counted (None: nothing changed, one is odd).

        ``at``, ``starts`` and ``lines``: each one's first piece, where it starts in ``rest + view`` and its
        line.  ``register``: key the slots by their texts in ``_ids`` (the numpy path; the compiled chunk pass
        keeps its own table).
        """
        stacks = self._slots
        counted = self._count_new_at_once(blocks, lines, starts, rest, view, register)
        timed: list[int] = []
        if counted is None:
            parsed = self._parse_new(blocks, lines, at, starts, n_pieces, rest, view)
            if parsed is None:
                return None
            counted = []
            for block, line, piece, got in parsed:
                slot = len(stacks)
                if register:
                    self._ids[block] = slot
                if got is _TIMED:
                    stacks.append(None)  # read sample by sample, every time
                    timed.append(slot)
                else:
                    stacks.append(self._bulk_count(got, piece, line))  # type: ignore[arg-type]
                    counted.append(slot)
        self._grow_slots(len(stacks))
        if timed:
            self._slot_timed[timed] = True
            self._any_timed = True
        return counted

    def _blocks_scanned(self, rest: bytes, view: memoryview) -> None:
        """:meth:`_blocks_bulk` through the compiled chunk pass (:mod:`collectors.perf_chunks`): the same counts.

        The kernel masks the times, splits the text and gives each piece its slot; only the texts not seen
        before are made as bytes and parsed (:meth:`_slot_new`), as on the numpy path.
        """
        import numpy as np

        got = self._chunk_slots.scan(rest, view)
        counted: list[int] | None = []
        if got is not None and len(got.new_at):
            at = got.new_at
            # Exactly one time in each new text (known ones had theirs checked when they were new).
            if (got.times[at] == 1).all():
                lines_at = (self._line + np.cumsum(got.lines + 2) - got.lines - 2)[at]
                counted = self._fast_new(got, lines_at)
                if counted is None:
                    starts = got.starts[at].tolist()
                    counted = self._slot_new(
                        got.new_texts, lines_at.tolist(), at.tolist(), starts, len(got.slots), rest, view, False
                    )
            else:
                counted = None
            if counted is None:
                self._chunk_slots.forget()
        if got is None or counted is None:
            self._blocks(rest + view.tobytes())
            return
        slots = got.slots
        if self._any_timed:
            timed = np.flatnonzero(self._slot_timed[slots])
            if len(timed):
                # Samples whose header fields hold their time: each is its own stack, as in the script.
                lines_of = (self._line + np.cumsum(got.lines + 2) - got.lines - 2)[timed].tolist()
                los = got.starts[timed]
                his = los + got.lengths[timed] + 2  # each with its blank line
                self._timed_again(lines_of, los.tolist(), his.tolist(), rest, view)
        self._count_chunk(slots, counted, int(got.lines.sum()), len(got.colons), got.steps, got.lo, got.hi)

    def _fast_new(self, got: Any, lines_at: Any) -> list[int] | None:
        """Slot the new texts of a scanned chunk as numbers, counted when the reader closes; None (nothing slotted)
        when one is not a header with its one time and a call chain (:meth:`_count_new_at_once`'s test) or a
        header whose fields hold the time (:data:`_TIMED`).

        Each new text's masked header line and call chain text were numbered by the kernel
        (:class:`collectors.perf_chunks.ChunkSlots`); each header is parsed once; per slot only numbers are kept
        (its header, the header's length, its call chain text, its first line, its time's digits): no object per
        sample text.  ``lines_at``: the first line of each.  A
        :data:`_TIMED` text's slot is read sample by sample (:attr:`_slot_timed`), as :meth:`_slot_new` slots it:
        a lost task's few samples (``:-1    -1``) no longer send their whole chunk the per-text way.
        """
        import numpy as np

        at = got.new_at
        starts = got.starts[at]
        ends = starts + got.lengths[at]
        nl = got.newlines
        nxt = np.append(nl, np.int64(1 << 62))[np.searchsorted(nl, starts)]
        hend = np.minimum(nxt, ends)
        if self._chunk_slots.headers > len(self._hdr_fields):  # (those of forgotten chunks too: all in order)
            self._new_headers(len(self._hdr_fields), self._chunk_slots.headers)
        ids = got.headers
        timed = self._hdr_timed[ids]
        if not (self._hdr_ok[ids] | timed).all():
            return None
        # After the header line, a call chain: nothing, or a line starting with whitespace (bytes.isspace).
        first = got.masked[np.minimum(hend + 1, len(got.masked) - 1)]
        if not ((hend + 1 >= ends) | (first == 32) | ((first >= 9) & (first <= 13)) | timed).all():
            return None
        base = len(self._slots)
        n = len(at)
        self._slots.extend(repeat(None, n))
        self._grow_slots(base + n)
        self._slot_hdr1[base : base + n] = np.where(timed, 0, ids + 1)  # 0: not counted by number
        if timed.any():
            self._slot_timed[base + np.flatnonzero(timed)] = True
            self._any_timed = True
            ids = ids[~timed]
        self._slot_first[base : base + n] = lines_at
        self._slot_whole[base : base + n] = got.wholes[(np.cumsum(got.times) - got.times)[at]]
        self._slot_body[base : base + n] = got.bodies
        if not self._fast_batches or self._fast_batches[-1][1] != len(self._counts):
            self._fast_batches.append((base, len(self._counts)))
        # The events in the order first met (their counts are added when the reader closes).
        raw = self._events_raw
        names = list(self._event_ids)
        _, first_at = np.unique(ids, return_index=True)
        for hid in ids[np.sort(first_at)].tolist():
            raw.setdefault(names[self._hdr_event[hid]], 0)
        return []

    def _new_headers(self, lo: int, hi: int) -> None:
        """Parse the masked header lines numbered ``lo..hi-1`` as :meth:`_count_new_at_once` parses them."""
        import numpy as np

        masked_shapes = self._masked_shapes
        ok = []
        timed = []
        for k in range(lo, hi):
            head = self._chunk_slots.header_text(k)
            h = masked_shapes.get(head, _NOT_PARSED)
            if h is _NOT_PARSED:
                if not head or head[:1] == b"#":
                    h = _ELSEWHERE
                else:
                    shape, times = _BULK_TIME.subn(b" 0.0: ", head)
                    h = self._shape_header(shape) if times == 1 else _ELSEWHERE
                masked_shapes[head] = h
            fine = type(h) is tuple and h is not _TIMED and h[4] < _FAST_PERIOD
            self._hdr_fields.append(h if fine else None)
            ok.append(fine)
            timed.append(h is _TIMED)
            if fine:
                event = h[3]
                self._hdr_event.append(self._event_ids.setdefault(event, len(self._event_ids)))
                self._hdr_period.append(h[4])
            else:
                self._hdr_event.append(-1)
                self._hdr_period.append(0)
        old = self._hdr_ok if self._hdr_ok is not None else np.zeros(0, bool)
        self._hdr_ok = np.concatenate((old, np.array(ok, bool)))
        old = self._hdr_timed if self._hdr_timed is not None else np.zeros(0, bool)
        self._hdr_timed = np.concatenate((old, np.array(timed, bool)))

    def _count_new_at_once(
        self,
        blocks: list[bytes],
        lines: list[int],
        starts: list[int],
        rest: bytes,
        view: memoryview,
        register: bool = True,
    ) -> list[int] | None:
        """Slot and count the new ``blocks`` as :meth:`_parse_new` and :meth:`_bulk_count` do, with C-level maps.

        For the usual chunk, where every new text is a header with its one time and a call chain:
        None (nothing changed) when one is not, for the text-by-text way.  ``starts``: where each
        text starts in ``rest + view``; ``lines``: its line number; ``register``: as :meth:`_slot_new`.
        """
        parts = list(map(bytes.partition, blocks, repeat(b"\n")))
        heads = list(map(_HEAD_OF, parts))
        masked_shapes = self._masked_shapes
        for head in set(heads).difference(masked_shapes):
            if not head or head[:1] == b"#":
                masked_shapes[head] = _ELSEWHERE  # as _parse_new: such a text is parsed from its original
            else:
                shape, times = _BULK_TIME.subn(b" 0.0: ", head)
                masked_shapes[head] = self._shape_header(shape) if times == 1 else _ELSEWHERE
        hs = list(map(masked_shapes.__getitem__, heads))
        # Sentinels and tuples compare unequal (a parsed header is never _TIMED's empty command).
        if None in hs or _ELSEWHERE in hs or _TIMED in hs:
            return None
        bodies = list(map(_BODY_OF, parts))
        firsts = list(map(_FIRST_BYTE, bodies))
        if sum(map(bytes.isspace, firsts)) + firsts.count(b"") != len(firsts):
            return None  # a line in column 0 after the header: not a call chain
        data = b"".join((rest, view))  # one copy
        # The headers as they are (not masked), for the evidence.
        headers = list(map(data.__getitem__, map(slice, starts, map(add, starts, map(len, heads)))))
        periods = list(map(_PERIOD_OF, hs))
        events = list(map(_EVENT_OF, hs))
        scs = _count_first(self._counts, list(map(add, map(_IDS_OF, hs), zip(bodies))), periods, lines, headers)
        raw = self._events_raw
        for event, n in Counter(events).items():  # in the order first met, as one by one
            raw[event] = raw.get(event, 0) + n
        base = len(self._slots)
        if register:
            self._ids.update(zip(blocks, range(base, base + len(blocks)), strict=True))
        self._slots.extend(zip(scs, periods, events, strict=True))
        return list(range(base, base + len(blocks)))

    def _parse_new(
        self,
        blocks: list[bytes],
        lines: list[int],
        at: list[int],
        starts: list[int],
        n_pieces: int,
        rest: bytes,
        view: memoryview,
    ) -> list[tuple[bytes, int, bytes, object]] | None:
        """Each new text's line, verbatim header and parse, one by one; None if one is odd."""
        originals: list[bytes] | None = None
        parsed: list[tuple[bytes, int, bytes, object]] = []
        masked_shapes = self._masked_shapes
        for block, line, i, lo in zip(blocks, lines, at, starts, strict=True):
            # The masked text's header is the key: its time is the only difference between samples of
            # one thread on one CPU, and the body is the original's (the text's one time is in the header).
            nl = block.find(b"\n")
            head = block if nl < 0 else block[:nl]
            h = masked_shapes.get(head, _NOT_PARSED) if block[:1] != b"#" and nl != 0 else _ELSEWHERE
            if h is _NOT_PARSED:
                shape, times = _BULK_TIME.subn(b" 0.0: ", head)
                h = masked_shapes[head] = self._shape_header(shape) if times == 1 else _ELSEWHERE
            if h is _ELSEWHERE:
                if originals is None:
                    # The original texts: masking moves no blank line, so they split into the same pieces.
                    originals = (rest + view.tobytes()).split(b"\n\n")
                    if len(originals) != n_pieces:
                        return None
                piece = originals[i]
                got = self._bulk_parse_piece(piece, line)
            else:
                body = b"" if nl < 0 else block[nl + 1 :]
                if h is None or h is _TIMED or (body and not body[:1].isspace()):
                    got = _NOT_BULK if h is not _TIMED else _TIMED
                else:
                    got = (line, body, h)
                piece = _original(rest, view, lo, lo + len(head))  # the header as it is, for the evidence
            if got is _NOT_BULK or got is None:  # None: all comments, its time would count in the span
                return None
            parsed.append((block, line, piece, got))
        return parsed

    def _start_bulk(self) -> None:
        """The per-slot arrays of the numpy path (slot 0: the empty text, which counts nothing)."""
        import numpy as np

        rows = 1024
        if self._chunk_slots is not None:
            from collectors.perf_chunks import PRESIZE, STORE_RESERVED

            # Room at first for a slot per PRESIZE bytes of the input, as the chunk pass's tables: np.zeros takes
            # pages only as they are written, where growing by doubling copied each array into new pages (1.1k page
            # faults, ~3 ms, per 50 MB of distinct stacks).
            rows = max(rows, min(self._expected, STORE_RESERVED) // PRESIZE)
        self._slot_length = np.zeros(rows, np.int64)  # length of each slot's masked text
        self._slot_lines = np.zeros(rows, np.int64)  # its newlines
        self._slot_timed = np.zeros(rows, bool)  # read sample by sample (see _TIMED)
        self._slot_counts = np.zeros(rows, np.int64)  # repeats not yet added to the slot's counter
        if self._chunk_slots is not None:
            self._slot_hdr1 = np.zeros(rows, np.int64)
            self._slot_first = np.zeros(rows, np.int64)
            self._slot_whole = np.zeros(rows, np.int64)
            self._slot_body = np.zeros(rows, np.int64)

    def _grow_slots(self, size: int) -> None:
        """Make the per-slot arrays hold at least ``size`` slots (doubling, so that growth is amortised)."""
        if len(self._slot_length) >= size:
            return
        new = max(size, 2 * len(self._slot_length))
        self._slot_length = _grown(self._slot_length, new)
        self._slot_lines = _grown(self._slot_lines, new)
        self._slot_timed = _grown(self._slot_timed, new)
        self._slot_counts = _grown(self._slot_counts, new)
        if self._slot_hdr1 is not None:
            self._slot_hdr1 = _grown(self._slot_hdr1, new)
            self._slot_first = _grown(self._slot_first, new)
            self._slot_whole = _grown(self._slot_whole, new)
            self._slot_body = _grown(self._slot_body, new)

    def _flush_slots(self) -> None:
        """Add the bulk reader's counts of repeated samples to their stacks and events."""
        if self._slot_counts is None:
            return
        import numpy as np

        slots = self._slots
        counts = self._slot_counts[: len(slots)]
        at = np.flatnonzero(counts)  # (those counted by number were taken: a recording of distinct stacks has few)
        for i, n in zip(at.tolist(), counts[at].tolist(), strict=True):
            slot = slots[i]
            if slot is None:
                continue
            sc, period, event = slot
            sc.samples += n
            sc.period += n * period
            self._events_raw[event] += n
        self._slot_counts[: len(slots)] = 0  # (no slot past them counts: pages never written stay untouched)

    def _shape_header(self, shape: bytes) -> _Header | None:
        """:meth:`_header` of a header with its time as ``0.0``, cached per shape."""
        h = self._shapes.get(shape, _NOT_PARSED)
        if h is _NOT_PARSED:
            h = self._shapes[shape] = self._header(shape)
        return h  # type: ignore[no-any-return]

    def _bulk_parse_piece(self, piece: bytes, start_line: int) -> tuple[int, bytes, _Header] | object | None:
        """:meth:`_bulk_parse` of an original text (its one time not masked yet).

        The time is masked in the header line only, the line that holds it (a text holds exactly one
        time, checked before); a text whose time is elsewhere goes through the whole-text way.
        """
        if piece[:1] != b"\n" and piece[:1] != b"#":
            head, _, body = piece.partition(b"\n")
            shape, times = _BULK_TIME.subn(b" 0.0: ", head)
            if times == 1:
                h = self._shape_header(shape)
                if h is None or h is _TIMED or (body and not body[:1].isspace()):
                    return _NOT_BULK if h is not _TIMED else _TIMED
                return (start_line, body, h)
        return self._bulk_parse(_BULK_TIME.sub(b" 0.0: ", piece), start_line)

    def _bulk_parse(self, block: bytes, start_line: int) -> tuple[int, bytes, _Header] | object | None:
        """A new sample shape's header line, body and parsed header; None to ignore, _NOT_BULK if odd."""
        if block[:1] == b"\n" or block[:1] == b"#":
            block, start_line = _strip_leading(block, start_line)
            if not block:
                return None
        nl = block.find(b"\n")
        shape = block if nl < 0 else block[:nl]
        body = b"" if nl < 0 else block[nl + 1 :]
        if shape in self._shapes:
            h = self._shapes[shape]
        else:
            h = self._shapes[shape] = self._header(shape)
        if h is None or h is _TIMED or (body and not body[:1].isspace()):
            return _NOT_BULK if h is not _TIMED else _TIMED
        return (start_line, body, h)

    def _bulk_count(
        self, parsed: tuple[int, bytes, _Header], piece: bytes, piece_line: int
    ) -> tuple[StackCount, int, bytes]:
        """Count the first occurrence of a new sample shape; its counter, period and event for the next ones."""
        start_line, body, (comm, pid, tid, event, period) = parsed
        self._events_raw[event] = self._events_raw.get(event, 0) + 1
        key = (comm, pid, tid, event, body)
        sc = self._counts.get(key)
        if sc is None:
            skip = start_line - piece_line  # leading blank and comment lines
            header = piece.split(b"\n", skip + 1)[skip] if skip else piece.partition(b"\n")[0]
            sc = self._counts[key] = StackCount(1, period, start_line, header.decode("utf-8", "replace"))
        else:
            sc.samples += 1
            sc.period += period
        return (sc, period, event)

    def _blocks(self, data: bytes, last: bool = False, steps: bool = True) -> None:
        """Count the samples of ``data`` one by one (``last``: it ends without its blank line; ``steps``: its times
        join the sequence of times, False for samples re-read after the chunk that held them counted their times)."""
        # The hot loop: per sample, one search for the time, two dictionary look-ups.  Headers differ
        # only in their time (and CPU), so they are parsed once per shape, with the time as "0.0".
        counts = self._counts
        shapes = self._shapes
        events = self._events_raw
        time_re = _TIME.search
        window = self.window
        line = self._line
        start_line = line
        for piece in data.split(b"\n\n"):
            block = piece
            start_line = line
            line += piece.count(b"\n") + 2
            if not block:
                continue
            if block[:1] == b"\n" or block[:1] == b"#":
                block, start_line = _strip_leading(block, start_line)
                if not block:
                    continue
            nl = block.find(b"\n")
            header = block if nl < 0 else block[:nl]
            body = b"" if nl < 0 else block[nl + 1 :]
            t = time_re(header)
            shape = header if t is None else header[: t.start(1)] + b"0.0" + header[t.end(1) :]
            if shape in shapes:
                h = shapes[shape]
            else:
                h = shapes[shape] = self._header(shape)
            if h is _TIMED:
                h = self._real_header(header)
            if h is None:
                if header[:1].isspace() and (_FLAT.search(header) or _flat_tracepoint(header.lstrip())):
                    # perf script without -g right-aligns the command name: one sample per line (a tracepoint's
                    # line ends with its payload, no address: review ue8 #11).
                    self._flat_block(block, start_line)
                else:
                    self._skip(start_line, header)
                continue
            if body and not body[:1].isspace():
                # Lines that all start in column 0: perf script without callchains (or garbage).
                self._flat_block(block, start_line)
                continue
            if last:
                # The sample had no blank line after it: stackcollapse-perf.pl never counts it.  perf script ends
                # every sample with one, so the input was cut there: said (a note), not dropped silently.
                self._cut_at = start_line
                break
            comm, pid, tid, event, period = h
            events[event] = events.get(event, 0) + 1
            if t is not None:
                ts = float(t.group(1))
                if window is not None and not window[0] <= ts <= window[1]:
                    self._outside += 1
                    self._left_out(ts)
                    continue
                if steps:
                    self._steps.one(ts)
                if self._start is None or ts < self._start:
                    self._start = ts
                if self._end is None or ts > self._end:
                    self._end = ts
            elif window is not None:
                self._untimed += 1
                continue
            key = (comm, pid, tid, event, body)
            sc = counts.get(key)
            if sc is None:
                counts[key] = StackCount(1, period, start_line, header.decode("utf-8", "replace"))
            else:
                sc.samples += 1
                sc.period += period
        # The last piece is what follows the last blank line: the next chunk's text starts there.
        self._line = start_line

    def _left_out(self, ts: float) -> None:
        """Widen the span of the samples --window left out to ``ts`` (what an empty window is told against)."""
        span = self._outside_span
        self._outside_span = (ts, ts) if span is None else (min(span[0], ts), max(span[1], ts))

    @property
    def _flat(self) -> int:
        """The samples without a call chain, of every event."""
        return sum(self._flat_of.values())

    def _flat_block(self, block: bytes, start_line: int) -> None:
        """Samples printed one per line (no ``-g``): count them with a one-frame stack."""
        flat_of = self._flat_of
        for i, text in enumerate(block.split(b"\n")):
            if not text.strip():
                continue
            stripped = text.lstrip()
            m = _HEADER.match(stripped)
            f = _FLAT.search(text) if m is not None else None
            # A tracepoint's sample (its event where perf prints it, :data:`_PAYLOAD_EVENT`): its payload ends the
            # line, no address follows unless -F asked for one without the payload.
            e = _PAYLOAD_EVENT.match(stripped, m.end()) if m is not None else None
            period = None
            if e is not None:
                period = log_dec(e.group(1).decode()) if e.group(1) else 1
                self._traced.add(e.group(2))
                if f is not None and f.group(1) != e.group(2):
                    f = None  # "(...)" at the end of its payload, not a frame
            elif f is not None:
                p = re.search(rb":\s*(\d+)\s+\S+:\s+\w+\s", text)
                period = log_dec(p.group(1).decode()) if p else 1
            if m is None or (f is None and e is None) or period is None or not _ids_fit(m):
                self._skip(start_line + i, text)
                continue
            event = e.group(2) if e is not None else f.group(1)  # type: ignore[union-attr]
            flat_of[event] = flat_of.get(event, 0) + 1
            self._events_raw[event] = self._events_raw.get(event, 0) + 1
            t = _TIME.search(text)
            if t is not None:
                ts = float(t.group(1))
                if self.window is not None and not self.window[0] <= ts <= self.window[1]:
                    self._outside += 1
                    self._left_out(ts)
                    continue
                self._steps.one(ts)
                self._start = ts if self._start is None else min(self._start, ts)
                self._end = ts if self._end is None else max(self._end, ts)
            body = b"" if f is None else b"\t" + f.group(2) + b" " + f.group(3) + b" (" + f.group(4) + b")"
            key = (m.group(1), m.group(2), m.group(3), event, body)
            sc = self._counts.get(key)
            if sc is None:
                self._counts[key] = StackCount(1, period, start_line + i, text.decode("utf-8", "replace"))
            else:
                sc.samples += 1
                sc.period += period

    def _fast_counters(self) -> _FastCounters | None:
        """The counters of the slots counted by number (:meth:`_fast_new`), summed with numpy; None when none is.

        A counter is a (thread, event, call chain text): the slots' call chain texts (after their header line: a
        text's one time is in its header) were numbered by the chunk pass, the slots are grouped by (header's
        thread and event, text number), in the order of their first slots (the order the samples first met them).
        The verbatim header of each counter's first sample is its masked header with the time's digits written
        back.
        """
        pending = self._fast_pending()
        return None if pending is None else self._fast_grouped(pending)

    def _fast_pending(self) -> _Pending | None:
        """The slots counted by number, their counts taken from the slots and added to the events; None when none is
        (:meth:`_fast_counters` groups them)."""
        if self._slot_hdr1 is None:
            return None  # not read by the compiled chunk pass (nothing imported: a small input runs without numpy)
        import numpy as np

        n = len(self._slots)
        fast = np.flatnonzero(self._slot_hdr1[:n])
        if not len(fast):
            return None
        hdr = self._slot_hdr1[fast] - 1
        count = self._slot_counts[fast].copy()
        self._slot_counts[fast] = 0
        te_ids: dict[tuple[bytes, bytes, bytes | None, bytes], int] = {}
        hdr_te = np.array([-1 if h is None else te_ids.setdefault(h[:4], len(te_ids)) for h in self._hdr_fields])
        te = hdr_te[hdr]
        period = np.array(self._hdr_period, np.int64)[hdr] * count
        per_event = sums(np.array(self._hdr_event, np.int64)[hdr], len(self._event_ids), count).tolist()
        for event, c in zip(self._event_ids, per_event, strict=True):
            self._events_raw[event] += c
        return _Pending(fast, hdr, count, te_ids, te, self._slot_body[fast], period)

    def _fast_grouped(self, pending: _Pending) -> _FastCounters:
        """The counters of :meth:`_fast_counters` from the slots of :meth:`_fast_pending`."""
        import numpy as np

        fast, hdr, count, te_ids, te, body, period = pending
        cs = self._chunk_slots
        bodies = cs.bodies()
        _, first, inverse = np.unique(te * len(bodies) + body, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # the counters in the order of their first slots
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        of = rank[inverse.reshape(-1)]
        first = first[order]
        at = fast[first]
        parts = {}
        for h in set(hdr[first].tolist()):  # (np.unique of one array imports numpy.ma: 10-20 ms)
            text = cs.header_text(h)
            m = _BULK_TIME.search(text)
            assert m is not None  # the header's one time (checked when it was numbered)
            dot = m.group(1).index(b".")
            parts[h] = (
                text[: m.start(1)].decode("utf-8", "replace"),
                dot,
                len(m.group(1)) - 1,
                text[m.end(1) :].decode("utf-8", "replace"),
            )
        return _FastCounters(
            list(te_ids),
            te[first],
            body[first],
            sums(of, len(order), count),
            sums(of, len(order), period),
            self._slot_first[at],
            _Headers(parts, hdr[first], self._slot_whole[at], []),
            at,
            bodies,
        )

    def _with_counted(self, fast: _FastCounters) -> _FastCounters:
        """``fast`` with the counters of :attr:`_counts` put among its own, in the order the samples met them.

        A counter made by number from a first slot of a batch (:attr:`_fast_batches`) comes after the counters
        of ``_counts`` made before that batch; a key met both ways is one counter, where it was first met (its
        counts summed).  The call chain texts of ``_counts`` are numbered in ``fast.bodies`` with the others.
        """
        import numpy as np

        keys = list(self._counts)
        counters = list(self._counts.values())
        te_keys = list(fast.te_keys)
        te_ids = {k: i for i, k in enumerate(te_keys)}
        te_more = [te_ids.setdefault(k[:4], len(te_ids)) for k in keys]
        te_keys += list(te_ids)[len(te_keys) :]
        texts = list(map(_BODY, keys))
        joined = b"".join(texts)
        ends = np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)))
        body_more = fast.bodies.number(
            np.frombuffer(joined, np.uint8), ends - np.fromiter(map(len, texts), np.int64, len(texts)), ends
        )
        n = len(fast.te)
        te = np.concatenate((fast.te, np.array(te_more, np.int64)))
        body = np.concatenate((fast.body, body_more))
        # The order the samples met them: (len(_counts) when made, then by number, then by first slot).
        bases = np.array([b for b, _ in self._fast_batches], np.int64)
        made = np.array([c for _, c in self._fast_batches], np.int64)
        slots = fast.slots
        fast_before = made[np.searchsorted(bases, slots, side="right") - 1]
        codes = te * len(fast.bodies) + body
        more_codes = codes[n:].tolist()
        if len(keys) <= _FEW_COUNTED and len(set(more_codes)) == len(keys) and not np.isin(codes[:n], more_codes).any():
            # A few counters of _counts, none met by number too (a recording of distinct stacks has a handful): each
            # its own group, put among the others in the same order without sorting them all. The counters by number
            # are in the order of their first slots, ``fast_before`` nondecreasing with it; counter k of _counts goes
            # after those with ``fast_before`` <= k (made before it, or in its batch: by number first), as below.
            at_more = np.searchsorted(fast_before, np.arange(len(keys)), side="right")
            keep = np.insert(np.arange(n, dtype=np.int64), at_more, np.arange(n, n + len(keys), dtype=np.int64))
            order = keep
            first = np.arange(len(keep))
            group = np.arange(len(keep))
        else:
            before = np.concatenate((fast_before, np.arange(len(keys))))
            way = np.concatenate((np.zeros(n, np.int64), np.ones(len(keys), np.int64)))
            order = np.lexsort((np.concatenate((slots, np.zeros(len(keys), np.int64))), way, before))
            _, first, inverse = np.unique(codes[order], return_index=True, return_inverse=True)
            ranked = np.argsort(first, kind="stable")
            rank = np.empty(len(ranked), np.int64)
            rank[ranked] = np.arange(len(ranked), dtype=np.int64)
            group = rank[inverse.reshape(-1)]  # each counter's group (in ``order``), groups in the order first met
            keep = order[first[ranked]]  # each group's first counter
        more_samples = list(map(_SAMPLES_OF, counters))
        more_period = list(map(_PERIOD_OF_COUNT, counters))
        # Python integers (an object array) when a count of _counts may not add up in int64.
        bounded = all(0 <= v < _FAST_SUM for v in chain(more_samples, more_period))
        kind: Any = np.int64 if bounded else object
        samples = np.concatenate((fast.samples.astype(kind), np.array(more_samples, kind)))
        period = np.concatenate((fast.period.astype(kind), np.array(more_period, kind)))
        got_samples, got_period = samples[keep], period[keep]
        others = np.ones(len(order), bool)
        others[first] = False
        for at in np.flatnonzero(others).tolist():  # keys met both ways: their counts summed
            g, c = group[at], order[at]
            got_samples[g] += samples[c]
            got_period[g] += period[c]
        return _FastCounters(
            te_keys,
            te[keep],
            body[keep],
            got_samples,
            got_period,
            np.concatenate((fast.lines, np.array(list(map(_LINE_OF, counters)), np.int64)))[keep],
            fast.headers.picked(list(map(_HEADER_OF, counters)), keep),
            np.zeros(0, np.int64),
            fast.bodies,
        )

    def _profile(self) -> Profile:
        pending = self._fast_pending()
        self._flush_slots()
        names, events, first = self._event_names()
        line_caches: dict[bool, dict[bytes, tuple[ProfileFrame, ...] | None]] = {False: {}, True: {}}
        # Stacks of one thread share its Thread, equal call chains share one frames tuple (chains that
        # differ only in addresses parse to equal frames): later stages may group by identity.
        threads: dict[tuple[bytes, bytes, bytes | None], Thread] = {}
        chains: dict[tuple[ProfileFrame, ...], tuple[ProfileFrame, ...]] = {}
        summed = self._pending_folded(pending, names, first) if pending is not None and self._folded else None
        if summed is not None:
            assert pending is not None
            folded, count, used = summed
            when_read = self._stacks_when_read(pending, count, used, line_caches)
            profile = self._profile_of(when_read, names, events, first, 0)
            profile.folded = folded
            return profile
        fast = None if pending is None else self._fast_grouped(pending)
        if fast is not None and self._counts:
            fast = self._with_counted(fast)
        if fast is not None:
            columns, bad = self._fast_stacks(fast, names, line_caches)
            return self._profile_of(columns, names, events, first, bad)
        keys = list(self._counts)
        # The thread of each counter: per (comm, pid, tid) first, so that a thread's texts share it.
        by_ids = {k[:3]: None for k in keys}
        for ids in by_ids:
            threads[ids] = _thread(*ids)
        thread_of = list(map(threads.__getitem__, map(_FIRST_THREE, keys)))
        java_of = [th.comm.startswith("java") for th in thread_of]
        bodies = list(map(_BODY, keys))
        # Each distinct (body, java) parsed once, all of them in one batch per java value.
        frames_of: dict[bytes, tuple[tuple[ProfileFrame, ...], int]] = {}
        java_frames_of: dict[bytes, tuple[tuple[ProfileFrame, ...], int]] = {}
        run = _chain_interner(self._fed) if self._bulk and len(self._counts) >= COMPILED_FROM else None
        for java, out in ((False, frames_of), (True, java_frames_of)):
            todo = list(dict.fromkeys(bodies if not any(java_of) else compress(bodies, (j is java for j in java_of))))
            if todo:
                frames_list, bads = (
                    _chains_compiled(todo, java, run, line_caches[java])
                    if run is not None
                    else _chains_of(todo, java, line_caches[java], self._bulk)
                )
                setdefault = chains.setdefault
                out.update(zip(todo, zip(map(setdefault, frames_list, frames_list), bads, strict=True), strict=True))
            if not any(java_of):
                break
        got = (
            list(map(frames_of.__getitem__, bodies))
            if not java_frames_of
            else [(java_frames_of if j else frames_of)[body] for body, j in zip(bodies, java_of, strict=True)]
        )
        # One stack per counter, each field through a C-level map (no Python per stack).
        counters = list(self._counts.values())
        samples = list(map(_SAMPLES_OF, counters))
        bad_bodies = sum(compress(samples, map(_SECOND, got)))
        stacks = made_stacks(
            len(keys),
            thread_of,
            map(names.__getitem__, map(_EVENT_KEY, keys)),
            map(_FIRST, got),
            samples,
            map(_PERIOD_OF_COUNT, counters),
            map(_LINE_OF, counters),
            map(_HEADER_OF, counters),
        )
        return self._profile_of(stacks, names, events, first, bad_bodies)

    def _event_names(self) -> tuple[dict[bytes, str], dict[str, int], str | None]:
        """Each event's name, the samples per name (in the order first met) and the event the stacks are of.

        stackcollapse-perf.pl keeps the first event it names (and the samples whose header names none).  A
        tracepoint's samples, named by their field (:data:`_PAYLOAD_EVENT`), are another event beside one the rule
        names, never that first one: ``-e sched:sched_switch -e cpu-clock`` keeps the cpu-clock samples (perf report
        --event cpu-clock's), the sched_switch ones left out and said, whichever was met first.  In a recording of
        tracepoints only they name none, as before: counted together, their event told by the perf.data header or
        their field (detectors.profile.events); unless one of them is the event asked for (``--event``), which
        then names each apart.
        """
        raw = self._events_raw
        traced = self._traced
        alone = all(not e or e in traced for e in raw) and self._wanted not in traced
        names = {e: "" if alone and e in traced else e.decode("utf-8", "replace") for e in raw}
        events: dict[str, int] = {}
        for e, n in raw.items():
            events[names[e]] = events.get(names[e], 0) + n
        return names, events, next((names[e] for e in raw if e and e not in traced), None)

    def _fast_stacks(
        self,
        fast: _FastCounters,
        names: dict[bytes, str],
        line_caches: dict[bool, dict[bytes, tuple[ProfileFrame, ...] | None]],
    ) -> tuple[StackColumns, int]:
        """The stacks of the counters counted by number, and the samples whose chains hold lines that are not frames.

        The chunk pass numbered the distinct call chain texts' chains as it read them (``fast.bodies``): each key is
        parsed and each chain's frames made once here, and only the texts holding a line it does not key are read
        (line by line); threads and events are per (thread, event) number, and the stacks'
        :class:`forensics.types.profile.StackTable` is made from those numbers (:attr:`_table`).
        """
        import numpy as np

        threads: dict[tuple[bytes, bytes, bytes | None], Thread] = {}
        te_thread = []
        for comm, a, b, _ in fast.te_keys:
            th = threads.get((comm, a, b))
            if th is None:
                th = threads[(comm, a, b)] = _thread(comm, a, b)
            te_thread.append(th)
        java_te = [th.comm.startswith("java") for th in te_thread]
        bodies = fast.bodies
        n_bodies = len(bodies)
        # Each text's chain: an index into ``made`` (the chains' frames, then those of texts read line by line).
        # The chunk pass numbered the chains as it read the texts (each line keyed once); the keys' frames are
        # parsed here, each once, and each chain's frames made once.
        keyed = bodies.chains()
        n_chains = int(keyed.max(initial=-1)) + 1
        made = bodies.frames(lambda raw, dso, high: _cached_symbol(raw, dso, False, high), np.arange(n_chains))
        body_chain = keyed.copy()
        body_bad = np.zeros(n_bodies, np.int64)
        at_odd = np.flatnonzero(keyed < 0).tolist()
        if at_odd:  # texts holding a line the kernel does not key: read line by line
            got_frames, got_bad = _chains_of(list(map(bodies.text, at_odd)), False, line_caches[False], True)
            body_chain[at_odd] = np.arange(len(made), len(made) + len(at_odd))
            made += got_frames
            body_bad[at_odd] = got_bad
        te, body = fast.te, fast.body
        chain_raw = body_chain[body]
        bad = body_bad[body]
        if any(java_te):
            java_at = np.flatnonzero(np.array(java_te, bool)[te])
            todo = list(dict.fromkeys(body[java_at].tolist()))
            # Java threads name their frames another way: the same keys parsed with java=True.
            of_todo = keyed[todo]
            ok = of_todo >= 0
            java_keyed = list(dict.fromkeys(of_todo[ok].tolist()))
            frames_java = bodies.frames(lambda raw, dso, high: _cached_symbol(raw, dso, True, high), java_keyed)
            java_chain_of = dict(zip(java_keyed, range(len(made), len(made) + len(java_keyed)), strict=True))
            made += frames_java
            odd_todo = [t for t, k in zip(todo, ok.tolist(), strict=True) if not k]
            odd_frames, odd_bad = _chains_of(list(map(bodies.text, odd_todo)), True, line_caches[True], True)
            odd_chain = dict(zip(odd_todo, range(len(made), len(made) + len(odd_todo)), strict=True))
            odd_bads = dict(zip(odd_todo, odd_bad, strict=True))
            made += odd_frames
            for i in java_at.tolist():
                text_at = int(body[i])
                k = int(keyed[text_at])
                chain_raw[i] = java_chain_of[k] if k >= 0 else odd_chain[text_at]
                bad[i] = 0 if k >= 0 else odd_bads[text_at]
        # Equal chains share one frames tuple (chains that differ only in addresses parse to equal frames).
        setdefault = self._chains.setdefault
        canonical = list(map(setdefault, made, made))
        number: dict[int, int] = {}
        objects: list[tuple[ProfileFrame, ...]] = []
        for c in canonical:
            if number.setdefault(id(c), len(number)) == len(objects):
                objects.append(c)
        of_made = np.fromiter(map(number.__getitem__, map(id, canonical)), np.int64, len(canonical))
        chain_of = of_made[chain_raw]  # each stack's frames tuple, by number
        event_te = [names[e] for *_, e in fast.te_keys]
        bad_bodies = sum(compress(fast.samples.tolist(), bad.tolist()))  # Python integers, as the stacks hold them
        self._table = _numbered_table(fast, chain_of, objects, te, te_thread)
        headers = fast.headers

        def one(i: int) -> ProfileStack:
            t = int(te[i])
            return ProfileStack(
                te_thread[t],
                event_te[t],
                objects[int(chain_of[i])],
                int(fast.samples[i]),
                int(fast.period[i]),
                int(fast.lines[i]),
                headers.text(i),
            )

        def every() -> list[ProfileStack]:
            te_list = te.tolist()
            return made_stacks(
                len(te_list),
                map(te_thread.__getitem__, te_list),
                map(event_te.__getitem__, te_list),
                map(objects.__getitem__, chain_of.tolist()),
                fast.samples.tolist(),
                fast.period.tolist(),
                fast.lines.tolist(),
                headers.every(),
            )

        events = frozenset(map(event_te.__getitem__, np.flatnonzero(np.bincount(te, minlength=len(event_te))).tolist()))
        return StackColumns(len(te), one, every, events, fast.lines), bad_bodies

    def _pending_folded(
        self, pending: _Pending, names: dict[bytes, str], first: str | None
    ) -> tuple[list[tuple[str, str, int]], int, frozenset[str]] | None:
        """The folded stacks' sums (:attr:`Profile.folded`) from the numbers of the slots counted by number and of the
        per-sample counters: per (command, chain) with numpy, each key's names and each chain's joined once, no
        counters grouped in order, no frames tuple, stack or table made; with how many counters (distinct thread,
        event and call chain text) they make and their events.  None where the stacks are needed (samples without
        a call chain, counts that may not fit int64, a Java thread, a text the chunk pass did not key, an event other
        than the first: the stacks' way).
        """
        import numpy as np

        if self._flat:
            return None
        te_keys = list(pending.te_ids)
        te, body, period = pending.te, pending.body, pending.period
        bodies = self._chunk_slots.bodies()
        if self._counts:  # the per-sample code's counters: numbered as _with_counted numbers them
            keys = list(self._counts)
            counters = list(self._counts.values())
            more_period = list(map(_PERIOD_OF_COUNT, counters))
            if not all(0 <= v < _FAST_SUM for v in chain(map(_SAMPLES_OF, counters), more_period)):
                return None
            te_ids = dict(pending.te_ids)
            te_more = [te_ids.setdefault(k[:4], len(te_ids)) for k in keys]
            te_keys = list(te_ids)
            texts = list(map(_BODY, keys))
            ends = np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)))
            starts = ends - np.fromiter(map(len, texts), np.int64, len(texts))
            body_more = bodies.number(np.frombuffer(b"".join(texts), np.uint8), starts, ends)
            te = np.concatenate((te, np.array(te_more, np.int64)))
            body = np.concatenate((body, body_more))
            period = np.concatenate((period, np.array(more_period, np.int64)))
        keyed = bodies.chains()
        chain_of = keyed[body]
        if not len(chain_of) or int(chain_of.min()) < 0:
            return None
        used = np.flatnonzero(np.bincount(te, minlength=len(te_keys))).tolist()
        used_keys = list(map(te_keys.__getitem__, used))
        if any(names[event] not in (first, "") for event in set(map(_EVENT_OF_TE, used_keys))):
            return None
        # Per distinct command, not per thread (15k threads, 20 ms through _thread): a thread's name in the folded
        # stacks is its command decoded as _thread decodes it (an exited task's too), a Java thread's starts "java".
        comm_bytes = list(map(_FIRST, used_keys))
        distinct = list(dict.fromkeys(comm_bytes))
        if any(c.startswith(b"java") for c in distinct):
            return None
        number = {c: i for i, c in enumerate(distinct)}
        comm_no = np.zeros(len(te_keys), np.int64)
        comm_no[used] = np.fromiter(map(number.__getitem__, comm_bytes), np.int64, len(comm_bytes))
        comm_names = [c.decode("utf-8", "surrogateescape") for c in distinct]
        # The counters the stacks would be: distinct (thread and event, text) numbers (a sort: numpy 2.4's unique
        # hashes, slower here).
        codes = np.sort(te * len(bodies) + body)
        count = int(np.count_nonzero(codes[1:] != codes[:-1])) + 1
        n_chains = int(keyed.max()) + 1  # every chain the chunk pass numbered (those of no counter are few)
        pairs, inverse = np.unique(comm_no[te] * n_chains + chain_of, return_inverse=True)
        total = sums(inverse.reshape(-1), len(pairs), period)
        joined = bodies.joined(list(map(_key_names, *bodies.key_texts())), np.arange(n_chains))
        folded = list(
            zip(
                map(comm_names.__getitem__, (pairs // n_chains).tolist()),
                map(joined.__getitem__, (pairs % n_chains).tolist()),
                total.tolist(),
                strict=True,
            )
        )
        return folded, count, frozenset(names[te_keys[t][3]] for t in used)

    def _stacks_when_read(
        self,
        pending: _Pending,
        count: int,
        events: frozenset[str],
        line_caches: dict[bool, dict[bytes, tuple[ProfileFrame, ...] | None]],
    ) -> StackColumns:
        """The ``count`` stacks of :meth:`_fast_stacks`, their counters grouped and the stacks made when one (or their
        first lines) is first read: the folded sums did not need them."""
        made: list[StackColumns] = []

        def columns() -> StackColumns:
            if not made:
                fast = self._fast_grouped(pending)
                if self._counts:
                    fast = self._with_counted(fast)
                names = self._event_names()[0]
                made.append(self._fast_stacks(fast, names, line_caches)[0])
            return made[0]

        return StackColumns(
            count, lambda i: columns()[i], lambda: list(columns()), events, lambda: columns().first_lines
        )

    def _profile_of(
        self,
        stacks: Sequence[ProfileStack],
        names: dict[bytes, str],
        events: dict[str, int],
        first: str | None,
        bad_bodies: int,
    ) -> Profile:
        """The profile of ``stacks`` with the reader's notes (``names``: each event's name, :meth:`_event_names`)."""
        notes: list[str] = []
        if len([e for e in events if e]) > 1 and first is not None:
            others = ", ".join(f"{e or '(unnamed)'}: {n} samples" for e, n in events.items() if e != first)
            # A tracepoint met first is not the first the samples' rule names (_event_names).
            which = "the first" if first == next(e for e in events if e) else "the first that is not a tracepoint"
            notes.append(
                f"several events in one input; hotspots and flame graph use {which}, {first} ({others} left out)"
            )
        # The samples without a call chain of the event analysed (--event's, else the first: the one the hotspots
        # count, with those naming none, as selected_stacks keeps them): other events' were counted too ("2,344
        # samples carry no call chain" of cpu-clock's 2,233 beside 111 sched_switch ones).
        analysed = first if self._wanted is None else self._wanted.decode("utf-8", "surrogateescape")
        flat = sum(n for e, n in self._flat_of.items() if analysed is None or names.get(e) in (analysed, ""))
        paths = flat and any(
            len(s.frames) > 1 for s in stacks if s.frames and (analysed is None or s.event in (analysed, ""))
        )
        if flat and not paths:
            notes.append(f"{flat} samples carry no call chain (recorded without -g): flat hotspots only, no call paths")
        elif flat:
            notes.append(f"{flat} samples carry no call chain; they count as one-frame stacks")
        if self._skipped and self._first_skipped is not None:
            line_no, text = self._first_skipped
            notes.append(
                f"{self._skipped} lines are not perf script samples and were skipped (first: line {line_no}: {text!r})"
            )
        if bad_bodies:
            notes.append(f"{bad_bodies} samples have call chain lines that are not frames (ignored in their stacks)")
        if self._outside:
            notes.append(f"{self._outside} samples outside the --window were left out")
        if self._untimed:
            notes.append(f"{self._untimed} samples without a timestamp were left out by --window")
        if self._cut_at is not None:
            notes.append(
                f"the input ends inside the sample at line {self._cut_at} (no blank line after it: a cut file?); "
                "that sample is not counted, as stackcollapse-perf.pl does not count it"
            )
        doubt = self._span_doubt(notes)
        return Profile(
            source=self.source,
            kind=self.kind,
            stacks=stacks,
            events=events,
            first_event=first,
            start=self._start,
            end=self._end,
            lines=self._line,
            notes=notes,
            flat_samples=self._flat,
            skipped_lines=self._skipped,
            first_skipped=self._first_skipped,
            table=self._table,
            span_doubt=doubt,
            outside_span=self._outside_span,
            tracepoints=tuple(e.decode("utf-8", "replace") for e in self._events_raw if e in self._traced),
        )

    def _span_doubt(self, notes: list[str]) -> str | None:
        """What makes the span of the times no measure of the recording's length, said in ``notes``; None if nothing.

        perf script prints the samples in time order, so a time before the previous one is a clock set back (or
        texts joined); a step forward of :data:`GAP_SECONDS` and more, and :data:`GAP_TIMES` the samples' usual
        interval, is a stretch where nothing was sampled or the clock jumped (a system clock set forward, a
        suspended machine).  Either way the span counts what the recording did not see.
        """
        steps, start, end = self._steps, self._start, self._end
        if start is None or end is None or steps.count < 2:
            return None
        doubts = []
        if steps.back >= BACK_SECONDS:
            notes.append(
                f"the sample times step back by {steps.back:.6f} s at one point (the clock was set back, or recordings "
                f"were joined): the span {start:.6f}-{end:.6f} s is not the length of the recording"
            )
            doubts.append(f"a step back of {steps.back:.3f} s")
        usual = max(end - start - steps.gap, 0.0) / max(steps.count - 2, 1)
        if steps.gap >= GAP_SECONDS and steps.gap >= GAP_TIMES * usual:
            notes.append(
                f"two successive samples are {steps.gap:.3f} s apart, the others {1000 * usual:.3f} ms on average "
                f"(nothing sampled in between, or the clock jumped forward): the span of {end - start:.3f} s counts "
                "that gap"
            )
            doubts.append(f"a gap of {steps.gap:.3f} s")
        return " and ".join(doubts) or None


def parse_folded(chunks: Iterable[bytes], source: str) -> Profile:
    """Folded stacks (``comm;a;b;c 42``): the first frame is taken as the command name."""
    rest = b""
    counts: dict[str, list[int]] = {}
    first_text: dict[str, str] = {}  # the line that first named each stack, verbatim (evidence)
    line_no = 0
    skipped = 0
    first_skipped: tuple[int, str] | None = None

    def lines() -> Iterator[bytes]:
        nonlocal rest
        cutting = False  # in a line longer than MAX_LINE_BYTES: its head kept, the rest dropped
        for piece in chunks:
            chunk = piece
            if cutting:
                nl = chunk.find(b"\n")
                if nl < 0:
                    continue
                chunk, cutting = chunk[nl:], False
            data = rest + chunk
            parts = data.split(b"\n")
            rest = parts.pop()
            if len(rest) > MAX_LINE_BYTES:
                rest, cutting = _cut_line(rest), True
            yield from parts
        if rest:
            yield rest

    for raw in lines():
        line_no += 1
        text = raw.rstrip(b"\r")
        if not text.strip() or text.startswith(b"#"):
            continue
        m = _FOLDED.match(text)
        if m is None or len(m.group(2).lstrip(b"0")) > _DIGITS:  # a count past 64 bits: not a folded line
            skipped += 1
            if first_skipped is None:
                first_skipped = (line_no, text.decode("utf-8", "replace")[:200])
            continue
        stack = m.group(1).decode("utf-8", "replace")
        slot = counts.get(stack)
        if slot is None:
            counts[stack] = [int(m.group(2)), line_no]
            first_text[stack] = text.decode("utf-8", "replace")
        else:
            slot[0] += int(m.group(2))
    stacks = []
    for stack, (count, first) in counts.items():
        names = stack.split(";")
        comm, frames = (names[0], names[1:]) if len(names) > 1 else ("", names)
        stacks.append(
            ProfileStack(
                Thread(comm, None, None),
                "",
                tuple(ProfileFrame(n, "", n.endswith("_[k]"), n.endswith("_[j]"), n.endswith("_[i]")) for n in frames),
                count,
                count,
                first,
                first_text[stack],
            )
        )
    notes = []
    if first_skipped is not None:
        notes.append(
            f"{skipped} lines are not folded stacks and were skipped "
            f"(first: line {first_skipped[0]}: {first_skipped[1]!r})"
        )
    notes.append("folded stacks carry no threads, events or times: per-thread and DSO tables are not available")
    return Profile(
        source,
        "folded",
        stacks,
        {"": sum(s.samples for s in stacks)},
        None,
        None,
        None,
        line_no,
        notes,
        skipped_lines=skipped,
        first_skipped=first_skipped,
    )


def perf_data_cut(head: bytes, file_size: int) -> PerfDataCut | None:
    """Where a perf.data file is cut short of what its header says (perf script reads a cut file silently); None
    for a complete one, or for what is not a perf.data.

    The header (perf's ``struct perf_file_header``) holds the offset and size of the data section at bytes 40 and
    48, little-endian; perf writes the size when the recording ends.
    """
    if len(head) < 56 or head[:8] != PERF_DATA_MAGIC:
        return None
    offset = int.from_bytes(head[40:48], "little")
    size = int.from_bytes(head[48:56], "little")
    if size != 0 and offset + size <= file_size:
        return None
    return PerfDataCut(file_size, offset, size)


def perf_data_notes(cut: PerfDataCut | None) -> list[str]:
    """The note of a perf.data file cut short (:func:`perf_data_cut`)."""
    if cut is None:
        return []
    if cut.data_size == 0:
        return ["the perf.data header was never finished (perf record interrupted?): samples may be missing"]
    return [
        f"the perf.data file is truncated: its header announces {cut.announced:,} bytes, the file has "
        f"{cut.size:,}; the samples after the cut are missing"
    ]


def find_perf() -> str | None:
    """The perf binary: ``perf`` on PATH when it runs, else Debian's versioned ``/usr/bin/perf_X.Y``."""
    candidates = [shutil.which("perf"), *sorted(str(p) for p in Path("/usr/bin").glob("perf_*"))]
    for c in candidates:
        if not c:
            continue
        try:
            ok = subprocess.run([c, "--version"], capture_output=True, timeout=20, check=False).returncode == 0
        except OSError:
            ok = False
        if ok:
            return c
    return None


#: perf's summary of what its ring buffer lost (tools/perf/util/session.c, perf_session__warn_about_errors): the
#: PERF_RECORD_LOST records ("chunks", said whenever there is one) and the lost samples (said above 5% only).
_LOST_CHUNKS = re.compile(r"^Processed (\d+) events and lost (\d+) chunks!")
_LOST_SHARE = re.compile(r"^Processed (\d+) samples and lost (\d+(?:\.\d+)?)%!")
#: What perf adds around them: its "Warning:" heading and its advice.
_LOSS_WORDS = ("Warning:", "Check IO/CPU overload!")


def _said_loss(said: list[str]) -> tuple[SampleLoss | None, list[str]]:
    """The loss perf script's stderr lines say (None: none), and the lines that say something else."""
    chunks = lost = seen = None
    rest = []
    for line in said:
        if m := _LOST_CHUNKS.match(line):
            chunks = int(m.group(2))
        elif m := _LOST_SHARE.match(line):
            processed, share = int(m.group(1)), float(m.group(2))
            lost = round(processed * share / 100)
            seen = processed - lost
        elif line not in _LOSS_WORDS:
            rest.append(line)
    if chunks is None and lost is None:
        return None, said
    return SampleLoss(lost, seen, chunks, None, "perf script's summary"), rest


#: ``perf report --stats``: an event's own section (``cpu-clock:ppp stats:``) and its counts in it.
_STATS_EVENT = re.compile(r"^(\S.*) stats:$")
_STATS_COUNT = re.compile(r"^\s*(SAMPLE|LOST_SAMPLES) events:\s+(\d+)")


def perf_event_stats(path: Path, perf: str | None) -> dict[str, dict[str, int]]:
    """Per event, its counts in ``perf report --stats -i PATH`` (``SAMPLE``, ``LOST_SAMPLES``: each event's own
    section, as ``perf report``'s ``Total Lost Samples`` sums them); empty when perf cannot say (an older perf
    prints no per-event section)."""
    said = _perf_report(path, perf, "--stats")
    if said is None:
        return {}
    counts: dict[str, dict[str, int]] = {}
    section = None
    for line in said.decode("utf-8", "replace").splitlines():
        if m := _STATS_EVENT.match(line):
            section = counts.setdefault(m.group(1), {})
        elif section is not None and (m := _STATS_COUNT.match(line)):
            section[m.group(1)] = int(m.group(2))
    return counts


def counted_loss(said: SampleLoss, stats: dict[str, dict[str, int]], event: str | None) -> SampleLoss:
    """``said`` (perf script's summary: rounded, of all events together) with the exact counts of ``event`` (the
    event analysed) from :func:`perf_event_stats`; ``said`` itself when they do not name it."""
    got = stats.get(event) if event is not None else None
    if got is None or "SAMPLE" not in got:
        return said
    return SampleLoss(got.get("LOST_SAMPLES", 0), got["SAMPLE"], said.chunks, event, "perf report --stats")


def perf_script_chunks(
    path: Path,
    perf: str | None = None,
    warnings: list[str] | None = None,
    label: str | None = None,
    loss: list[SampleLoss] | None = None,
    extra: tuple[str, ...] = (),
) -> Iterator[bytes]:
    """``perf script -i PATH`` output, streamed; raises :class:`InputError` when perf fails or is missing.

    ``extra``: options of perf script (``--show-lost-events``).

    ``label`` names the input in errors when ``path`` is a decompressed copy of it.

    What perf says on stderr when it still succeeds (a truncated file it read up to the cut) is
    appended to ``warnings``; what it says was lost while recording (its summary), to ``loss``.
    """
    binary = perf or find_perf()
    if binary is None:
        raise InputError(
            f"{label or path} is a perf.data file and perf is not installed",
            hint="install perf (apt-get install linux-perf) or give `perf script` text made where perf is",
        )
    import tempfile

    # stderr goes to a file: a pipe could fill up (a damaged file makes perf complain at length) and
    # block perf while this reads its stdout.
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            [binary, "script", *extra, "-i", str(path)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors
        )
        assert proc.stdout is not None
        produced = 0
        try:
            while chunk := proc.stdout.read(1 << 20):
                produced += len(chunk)
                yield chunk
        finally:
            proc.stdout.close()
            rc = proc.wait()
        errors.seek(0)
        said = [x.strip() for x in errors.read(1 << 20).decode("utf-8", "replace").splitlines() if x.strip()]
    said_loss, said = _said_loss(said) if rc == 0 else (None, said)
    if said_loss is not None and loss is not None:
        loss.append(said_loss)
    if said:
        reason = said[0][:200]
    elif rc < 0:  # killed by a signal: a file cut short makes perf read past its mapping (SIGBUS)
        reason = f"perf was killed by signal {-rc} ({signal_name(-rc)})"
    else:
        reason = f"exit status {rc}"
    if rc != 0 and (warnings is None or not produced):
        raise InputError(
            f"{label or path}: perf script failed: {reason}",
            hint="the perf.data file may be truncated or from another perf; re-record, or give `perf script` text",
        )
    if warnings is not None and rc != 0:
        warnings.append(f"perf script stopped part way ({reason}): the samples after that point are missing")
    elif warnings is not None and said:
        warnings.append(f"perf script said: {reason}" + (f" (+{len(said) - 1} more lines)" if len(said) > 1 else ""))


#: The lines of perf's header (``perf report --header-only``, ``perf script --header``) that name the system, and the
#: command line that recorded it.
_SYSTEM_LINE = re.compile(rb"^# (hostname|os release|cmdline) : (.*\S)\s*$", re.MULTILINE)
#: A recorded event of the header (``# event : name = sched:sched_switch, , id = { 1, 2 }, type = 2, ...``).
_EVENT_LINE = re.compile(rb"^# event : name = ([^,\n]+),", re.MULTILINE)


#: What :func:`header_system` reads: host, kernel release, the header lines naming them, the ``# cmdline`` line, and
#: the events recorded (their names, perf's ``dummy`` event of side-band records left out).
class PerfHeader(NamedTuple):
    """What :func:`header_system` reads from perf's header lines."""

    host: str | None
    kernel: str | None
    lines: tuple[str, ...]  # the header lines naming them
    cmdline: str | None
    events: tuple[str, ...]  # the events recorded, perf's dummy left out
    release_line: int | None  # the line number of ``# os release : ...`` in the header text read
    host_line: int | None  # the line number of ``# hostname : ...`` in the header text read


_NO_HEADER = PerfHeader(None, None, (), None, (), None, None)


def signal_name(number: int) -> str:
    """``SIGBUS`` for 7; the number itself where Python does not know it."""
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _inlined_names(profile: Profile) -> set[str]:
    """The names of the frames perf script printed as ``(inlined)`` with no DSO (:data:`INLINED_DSO`)."""
    chains = profile.table.chains if profile.table is not None else {id(s.frames): s.frames for s in profile.stacks}
    found = chains if isinstance(chains, list) else list(chains.values())
    return {f.name for c in found for f in c if f.dso == INLINED_DSO}


#: Samples read at most, each way, to find the DSO of the frames perf printed without one.
INLINED_SAMPLES_MAX = 20_000


def _inlined_dsos(path: Path, names: set[str], perf: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """The DSO perf counts each of ``names`` in (frames perf script printed as ``(inlined)``), and the symbol table's
    name of the symbol at that address (``pthread_spin_lock@@GLIBC_2.34`` for ``__pthread_spin_lock``: the name
    ``perf annotate -s`` takes), where one is found: two maps by name, DSOs and symbols.

    perf script prints no DSO for a function debug info names other than the symbol table; with ``--no-inline``
    it prints the symbol table's frame at the same address, with its DSO.  Both are read in step, sample by sample
    (``-F time,ip,sym,dso``: the same samples in the same order), until each name has its DSO or
    :data:`INLINED_SAMPLES_MAX` samples were read.  A name met in several DSOs is left out of the DSOs, and one met
    in several symbols out of the symbols (not one answer): glibc inlines ``lll_mutex_lock_optimized`` into more
    than one function of libc, whose DSO is still one answer.
    """
    binary = perf or find_perf()
    if not names or binary is None or not path.exists():
        return {}, {}
    fields = ["-F", "time,ip,sym,dso"]
    both = [
        subprocess.Popen(
            [binary, "script", "-i", str(path), *extra, *fields],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        for extra in ([], ["--no-inline"])
    ]
    seen: dict[str, set[tuple[str, str]]] = {}
    try:
        samples = zip(*(_samples(p.stdout) for p in both), strict=False)
        for n, ((head_a, lines_a), (head_b, lines_b)) in enumerate(samples):
            if head_a != head_b or n >= INLINED_SAMPLES_MAX:
                break  # not the same sample: the two readings are no longer in step
            if not any(b"(inlined)" in line for line in lines_a):
                continue
            real: dict[bytes, tuple[str, str]] = {}
            for line in lines_b:
                m = _FRAME.match(line)
                if m is not None:
                    symbol = _OFFSET.sub("", m.group(2).decode("utf-8", "surrogateescape"))
                    real.setdefault(m.group(1), (m.group(3).decode("utf-8", "surrogateescape"), symbol))
            for line in lines_a:
                m = _FRAME.match(line)
                if m is None or m.group(3) != b"inlined" or m.group(1) not in real:
                    continue
                for f in parse_frame_line(line, False) or ():  # the names as the reader made them
                    seen.setdefault(f.name, set()).add(real[m.group(1)])
            if names <= seen.keys():
                break
    finally:
        for p in both:
            p.kill()
            p.wait()
            if p.stdout is not None:
                p.stdout.close()
    dsos = {name: {dso for dso, _ in got} for name, got in seen.items() if name in names}
    symbols = {name: {symbol for _, symbol in got} for name, got in seen.items() if name in names}
    return (
        {name: got.pop() for name, got in dsos.items() if len(got) == 1},
        {name: got.pop() for name, got in symbols.items() if len(got) == 1},
    )


# The header of a sample in ``perf script -F time,ip,sym,dso``: its time alone, which perf right-aligns in 12
# columns (``%12s: ``): indented by spaces under 10,000 s of uptime (``  795.085854: ``), not past it.
_TIME_HEAD = re.compile(rb"^\s*\d+\.\d+:\s*$")


def _samples(stream: Any) -> Iterator[tuple[bytes, list[bytes]]]:
    """(header, call chain lines) of each sample of ``perf script -F time,ip,sym,dso`` output.

    A header is told by its form (:data:`_TIME_HEAD`), not by starting in column 0: a frame line is indented (a
    tab), but so is a time under 10,000 s, whose lines were all read as frames of no sample (none found).
    """
    head: bytes | None = None
    lines: list[bytes] = []
    for line in stream:
        if not line.strip():
            continue
        if _TIME_HEAD.match(line) is None:
            lines.append(line)
        else:
            if head is not None:
                yield head, lines
            head, lines = line.strip(), []
    if head is not None:
        yield head, lines


def header_system(text: bytes) -> PerfHeader:
    """The host and kernel release a perf header names, the header lines that name them, and its ``# cmdline``
    line (how it was recorded: ``perf record -g ...``).

    ``text``: perf's header lines (``# hostname : vm``, ``# os release : 6.1.0``), read up to the first line
    that is not a comment (in ``perf script --header`` text, the first sample).
    """
    found: dict[bytes, bytes] = {}
    lines: list[str] = []
    cmdline = None
    numbers: dict[bytes, int] = {}  # the line number of each system line taken
    end = re.search(rb"^[^#\n]", text, re.MULTILINE)
    stop = end.start() if end else len(text)
    for m in _SYSTEM_LINE.finditer(text, 0, stop):
        if m.group(1) == b"cmdline":
            cmdline = cmdline or m.group(0).decode("utf-8", "replace").strip()
        elif m.group(1) not in found:
            found[m.group(1)] = m.group(2)
            lines.append(m.group(0).decode("utf-8", "replace").strip())
            numbers[m.group(1)] = text.count(b"\n", 0, m.start()) + 1
    host, kernel = found.get(b"hostname"), found.get(b"os release")
    # perf adds a "dummy" software event (dummy:HG, dummy:u) that samples nothing: it carries mmap and comm records.
    events = (m.group(1).decode("utf-8", "replace").strip() for m in _EVENT_LINE.finditer(text, 0, stop))
    return PerfHeader(
        host.decode("utf-8", "replace") if host is not None else None,
        kernel.decode("utf-8", "replace") if kernel is not None else None,
        tuple(lines),
        cmdline,
        tuple(e for e in events if not e.startswith("dummy")),
        numbers.get(b"os release"),
        numbers.get(b"hostname"),
    )


def _take_header(profile: Profile, header: PerfHeader) -> None:
    """The header's system, command line and events, into the profile."""
    profile.host, profile.kernel_release, profile.header = header.host, header.kernel, header.lines
    profile.recorded_by, profile.recorded_events = header.cmdline, header.events
    profile.release_line, profile.host_line = header.release_line, header.host_line


def perf_data_system(path: Path, perf: str | None = None) -> PerfHeader:
    """:func:`header_system` of ``perf report --header-only -i PATH`` (an argument list, no shell); nothing when
    perf cannot read it."""
    said = _perf_report(path, perf, "--header-only")
    return header_system(said) if said is not None else _NO_HEADER


def _perf_report(path: Path, perf: str | None, option: str) -> bytes | None:
    """What ``perf report OPTION -i PATH`` prints (an argument list, no shell); None when perf cannot say."""
    binary = perf or find_perf()
    if binary is None:
        return None
    try:
        proc = subprocess.run(
            [binary, "report", option, "-i", str(path)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=600,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _is_folded(text: bytes) -> bool:
    # from its first line that is not blank: the blank text before it may be of any length (_past_blank_text)
    head = text[text.rfind(b"\n", 0, len(text) - len(text.lstrip())) + 1 :]
    parts = head.split(b"\n", 50)  # the first 50 lines (and the rest): the head may be a whole chunk
    lines = [x for x in parts[:50] if x.strip() and not x.startswith(b"#")]
    if len(parts) > 1 and not head.endswith(b"\n"):
        lines = lines[:-1]
    return bool(lines) and all(_FOLDED.match(x.rstrip(b"\r")) and not x[:1].isspace() for x in lines)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while reading, and what the reader made put in its oldest generation.

    The reader makes many small tuples (frames, counters, stacks), none in a cycle.  Left young, they
    would all be walked by the first collection after the reader (0.1-0.2 s on 100k distinct stacks);
    ``freeze`` moves every tracked object to the permanent generation without walking them, ``unfreeze``
    puts them in the oldest one (as the dmesg pipeline does after a chunk).
    """
    import gc

    from forensics.gcpause import gc_paused

    with gc_paused():
        try:
            yield
        finally:
            gc.freeze()
            gc.unfreeze()


def read_profile(
    name: str,
    window: tuple[float, float] | None = None,
    perf: str | None = None,
    *,
    hashed: bool = True,
    folded: bool = False,
    event: str | None = None,
) -> Profile:
    """Read one profile input (a path, or ``-`` for stdin), told from its content.

    ``hashed=False``: no sha256 of the input in its source record (the folded stacks alone cite nothing);
    ``folded``: the folded stacks' sums wanted (:attr:`Profile.folded`, when the reader can sum them by number);
    ``event``: the event asked for (:class:`ScriptParser`'s).
    """
    from collectors.inputs import open_input

    _refuse_trace_directory(name)
    with open_input(name, hashed=hashed) as tracked, _collector_paused():
        # A large file is read by the numpy path from its first byte (the switch at NUMPY_FROM would
        # parse its first distinct texts twice: the two paths key samples differently).
        stored = _stored_size(tracked.stream)
        bulk = stored >= NUMPY_FROM
        chunks = tracked.read_chunks(CHUNK)
        first = next(chunks, b"")
        if first.startswith(PERF_DATA_MAGIC):
            if name == "-":
                raise UsageError("perf.data on stdin is not supported", hint="give the perf.data path")
            with contextlib.ExitStack() as cleanup:
                data_path = Path(name)
                if tracked.compression is not None:
                    # perf script reads only a plain perf.data: spool the decompressed one to a private file.
                    import tempfile

                    spool = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="kforensic-perf-")))
                    data_path = spool / "perf.data"
                    try:
                        with open(data_path, "wb") as out:
                            out.write(first)
                            for chunk in chunks:
                                out.write(chunk)
                    except OSError as exc:
                        raise InputError(
                            f"{tracked.name}: cannot decompress it into {spool}: {exc.strerror or exc}",
                            hint="free space in the temporary directory (TMPDIR), or give the perf.data decompressed",
                        ) from None
                for _ in chunks:  # hash the whole file for the source record
                    pass
                record = tracked.record()
                size = data_path.stat().st_size  # of the perf.data itself, decompressed
                # perf script's text is larger than the perf.data it comes from.
                parser = ScriptParser(
                    tracked.name, window, kind="perf.data", bulk=size >= NUMPY_FROM, folded=folded, event=event
                )
                warnings: list[str] = []
                said_loss: list[SampleLoss] = []
                for chunk in perf_script_chunks(data_path, perf, warnings, tracked.name, said_loss):
                    parser.feed(chunk)
                system = perf_data_system(data_path, perf)
                stats = perf_event_stats(data_path, perf) if said_loss else {}
            profile = parser.close()
            if said_loss:
                profile.loss = counted_loss(said_loss[0], stats, event or profile.first_event)
            profile.inlined_dsos, profile.inlined_symbols = _inlined_dsos(data_path, _inlined_names(profile), perf)
            _take_header(profile, system)
            profile.cut = perf_data_cut(first, size)
            profile.read_on = os.uname().nodename  # perf script named the frames here
            profile.notes[:0] = warnings + perf_data_notes(profile.cut) + tracked.notes
            profile.record = record
            return _checked(profile, window)

        if (refused := refusal(tracked.name, first, PROFILE)) is not None:
            raise refused  # a slab store, a dump: named with the command that reads it, not quoted as a sample

        def rest() -> Iterator[bytes]:
            yield first
            yield from chunks

        stream: Iterator[bytes] = rest()  # already decompressed by the input layer (gzip, xz, zstd, bzip2)
        head = next(stream, b"")
        lead: list[bytes] = []  # blank text before ``head`` that is not in it
        if not head.strip():
            head, lead = _past_blank_text(head, stream)
            if not head.strip():
                raise InputError(
                    f"{tracked.name}: the profile is empty",
                    hint="record with `perf record -g -- CMD` and give the perf.data or `perf script` output",
                )

        def all_chunks() -> Iterator[bytes]:
            yield from lead
            yield head
            yield from stream

        # A compressed text is named as its findings cite it: lines count in the decompressed text (`PATH (gunzipped)`,
        # as kforensic dmesg and trace name theirs; collectors.inputs.SOURCE_SUFFIX).
        if _is_folded(head):
            profile = parse_folded(all_chunks(), tracked.source)
        else:
            # The stored size bounds the text only when it is not compressed.
            parser = ScriptParser(
                tracked.source,
                window,
                bulk=bulk,
                expected=stored * (tracked.compression is None),
                folded=folded,
                event=event,
            )
            for chunk in all_chunks():
                parser.feed(chunk)
            profile = parser.close()
            # `perf script --header` text starts with the perf.data header.
            _take_header(profile, header_system(head))
        profile.record = tracked.record()
        profile.notes.extend(tracked.notes)  # a compressed stream cut short: read up to the cut, and said
    return _checked(profile, window, not_text(first), name)


def _refuse_trace_directory(name: str) -> None:
    """An LTTng (CTF) trace directory is a trace, not a profile: exit 3 naming the command that reads it (it was
    "cannot read DIR: it is a directory / hint: give a file inside it", and no file inside is a profile)."""
    path = Path(name)
    if name == "-" or not path.is_dir():
        return
    try:
        ctf = (path / "metadata").is_file() or next(path.rglob("metadata"), None) is not None
    except OSError:  # (unreadable below: open_input says what it can)
        return
    if ctf:
        raise InputError(
            f"{name}: an LTTng (CTF) trace directory, not a profile",
            hint=f"read it with `kforensic trace {name}`; kforensic profile reads perf.data, perf script text or "
            "folded stacks",
        )


#: A line of ftrace's text output (``comm-pid [cpu] flags ts: event:``): a trace, not a profile (_checked's hint).
#: The first line of ``trace-cmd report`` text: the number of CPUs the trace.dat holds.
_TRACE_CMD_HEAD = re.compile(r"^cpus=\d+\s*$")
_FTRACE_LINE = re.compile(r"^\s*\S.*-\d+\s+(?:\(\s*\S+\)\s+)?\[\d+\]\s+(?:\S{4,5}\s+)?\d+\.\d+: \w")


#: A profile, as a refusal of another command's file names it (collectors/binary_formats.py).
PROFILE = TextInput(
    "a profile",
    "the perf.data or perf script text",
    "kforensic profile reads perf.data, perf script text or folded stacks",
)


def _past_blank_text(head: bytes, stream: Iterator[bytes]) -> tuple[bytes, list[bytes]]:
    """(the text up to the end of the first chunk that is not blank, the blank text before it, when not in it).

    The format is told from the first line, so blank text is read up to it; it was all held at once (2 GB of
    newlines: 3.8 GB of memory).  Up to BLANK_HEAD_MAX it is kept as it is, in the text returned; past it
    only its newlines (what its lines count for) and its last partial line are, as newlines to give first.
    """
    kept, size, spilled, newlines, tail = [head], len(head), False, 0, b""
    for chunk in stream:
        if chunk.strip():
            if not spilled:
                return b"".join([*kept, chunk]), []
            lead = [*kept, *(b"\n" * min(CHUNK, newlines - at) for at in range(0, newlines, CHUNK))]
            return tail + chunk, lead
        size += len(chunk)
        spilled = spilled or size > BLANK_HEAD_MAX
        if not spilled:
            kept.append(chunk)
            continue
        nl = chunk.rfind(b"\n")
        newlines += chunk.count(b"\n")
        tail = (tail + chunk if nl < 0 else chunk[nl + 1 :])[:MAX_LINE_BYTES]
    return b"".join(kept), []


def _stored_size(stream: Any) -> int:
    """The size of a regular file behind ``stream`` (0 for a pipe or a terminal)."""
    import os
    import stat

    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _checked(
    profile: Profile, window: tuple[float, float] | None, binary: str | None = None, name: str = ""
) -> Profile:
    """The profile, or a one-line error when it holds no sample; ``binary``: why the input's start is no text;
    ``name``: the input as given (the command its hint names)."""
    if profile.stacks:
        return profile
    if window is not None and any("--window" in n for n in profile.notes):
        # The recording is fine, the selection is empty: usage, told against the times the recording has.
        asked = f"--window {window[0]:g}:{window[1]:g}"
        if profile.outside_span is None:
            raise UsageError(
                f"{asked} keeps no sample of {profile.source}: its samples carry no timestamps",
                hint="leave out --window, or give perf script text printed with the time field",
            )
        lo, hi = profile.outside_span
        raise UsageError(
            f"{asked} keeps no sample of {profile.source}: its samples span {lo:.6f} to {hi:.6f} s",
            hint="give T0:T1 within that span (perf's seconds, as perf script prints them after the pid)",
        )
    if binary is not None:
        # Its "first line" would be bytes quoted as text (a line of mojibake): say what it is instead.
        raise InputError(
            f"{profile.source}: not a profile: binary, not text ({binary}), and not a perf.data (no PERFILE2 magic)",
            hint="give `perf script` output, folded stacks (a;b;c 42) or a perf.data file",
        )
    if profile.kind == "perf.data":  # it is one (its magic said so): perf recorded no sample (perf report: "has no
        # samples!"); it was "no samples: not perf script text, folded stacks or perf.data" (review 11, 12a)
        raise InputError(
            f"{profile.source}: a perf.data with no samples (perf script prints none)",
            hint="record a longer run or more often (perf record -F 999 -g -- COMMAND); "
            f"`perf report --header-only -i {profile.source}` shows what was recorded",
        )
    where = f" (line {profile.first_skipped[0]}: {profile.first_skipped[1][:60]!r})" if profile.first_skipped else ""
    # trace-cmd report's text opens with its "cpus=N" line, then ftrace lines (review ue19 #15: "line 1: 'cpus=2'"
    # alone did not say what the file was).
    if profile.first_skipped and _TRACE_CMD_HEAD.match(profile.first_skipped[1]):
        raise InputError(
            f"{profile.source}: no samples: trace-cmd report text (a trace, not a profile){where}",
            hint=f"read it with `kforensic trace {name or profile.source}`; kforensic profile reads perf.data, "
            "perf script text or folded stacks",
        )
    if profile.first_skipped and _FTRACE_LINE.match(profile.first_skipped[1]):
        raise InputError(
            f"{profile.source}: no samples: an ftrace text trace, not a profile{where}",
            hint=f"read it with `kforensic trace {name or profile.source}`; kforensic profile reads perf.data, "
            "perf script text or folded stacks",
        )
    raise InputError(
        f"{profile.source}: no samples: not perf script text, folded stacks or perf.data{where}",
        hint="give `perf script` output, folded stacks (a;b;c 42) or a perf.data file",
    )


def read_gzip_text(path: Path) -> bytes:
    """A whole (possibly gzipped) text file; for tests and tools."""
    data = path.read_bytes()
    return gzip.decompress(data) if data.startswith(GZIP_MAGIC) else data


__all__ = ["ScriptParser", "find_perf", "parse_folded", "read_profile"]


def perf_script_lines(path: Path, perf: str | None = None) -> list[str]:
    """The lines of ``perf script -i PATH``, for resolving the evidence of a perf.data input (sample locators)."""
    text = b"".join(perf_script_chunks(path, perf))
    return text.decode("utf-8", "replace").split("\n")
