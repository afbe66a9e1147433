"""``kforensic trace``: read a trace, run the scheduling engine and the span analysis, build the incident."""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.errors import InputError, UsageError
from forensics.model import (
    BootTime,
    Clock,
    Evidence,
    Examined,
    Finding,
    FindingKind,
    Incident,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    SubjectKind,
    Timestamp,
    TimeWindow,
)
from forensics.pipelines.spans import SpanOptions
from forensics.types.trace import ASIDE_SYSCALLS, Kind, StreamCut
from forensics.types.trace_result import TraceResult
from forensics.units import first_of

if TYPE_CHECKING:
    from collections.abc import Iterable

    from collectors.ctf.feed import CtfRead
    from collectors.ctf.reader import Session
    from collectors.span_windows import WindowKeeper
    from collectors.spans import KernelKeeper
    from collectors.trace_columns import Scan
    from collectors.trace_input import NamedSystem
    from detectors.sched.analyzer import BatchAnalyzer
    from detectors.sched.engine import FastAnalyzer
    from forensics.aot import Group
    from forensics.types.figures import Figure
    from forensics.types.sched import ParseSummary, Thresholds, TraceAnalysis
    from forensics.types.spans import SpanReport
    from forensics.types.syscalls import SyscallLatency
    from forensics.types.trace import ParseCounts


#: A text input where more than this share of the non-comment lines are not events is not a trace.
NOT_TRACE_SHARE = 0.5

#: A `perf script` sample header: ``comm pid [cpu] time: period event:`` (a sampling event, not a tracepoint).
PERF_SAMPLE_HEADER = re.compile(r"\[\d+\]\s+\d+\.\d+:\s+\d+\s+[\w.-]+(?::[A-Za-z]*)?:\s*$")


def _cr_only(head: bytes) -> bool:
    """Whether the text's first bytes ``head`` are lines ended by a lone CR (none by LF)."""
    return b"\n" not in head and head.count(b"\r") >= 2


def check_trace_text(name: str, counts: ParseCounts, head: bytes) -> None:
    """Refuse (exit 3) a text in which most lines are not trace events: a kernel log, a report, a CSV.

    ``head``: the text's first bytes as the read took them (:attr:`TraceStream.head`); the input is not opened again
    (a FIFO would block)."""
    content = counts.lines - counts.comments
    if counts.lines <= 2 and _cr_only(head):
        # Lines ended by a lone CR are one line to the reader: "enable the events" misled, or its first event
        # was analysed and the rest dropped in silence ("1 events", "No problem found").
        raise InputError(
            f"{name}: its lines end in a carriage return alone (\\r, no \\n), so it reads as one line",
            hint=f"convert the line ends: tr '\\r' '\\n' < {'FILE' if name == '<stdin>' else name} > trace.txt, then "
            "kforensic trace trace.txt",
        )
    if counts.events == 0 and counts.malformed == 0 and content <= 0:
        # Nothing to judge: "no findings" here would be an absence stated without the power to see anything.
        said = "an empty file" if counts.lines == 0 else f"{counts.lines:,} lines of headers, comments or blanks only"
        raise InputError(
            f"{name}: holds no trace events ({said}): nothing was recorded, or the events were not enabled",
            hint="enable the events and record again (trace-cmd record -e sched -e irq, or echo 1 > "
            "/sys/kernel/tracing/events/sched/enable), then give the trace text, a trace.dat or an LTTng directory",
        )
    if content <= 0 or counts.malformed <= NOT_TRACE_SHARE * content:
        return
    example = (
        f" (line {counts.first_malformed[0][0]}: {counts.first_malformed[0][1][:60]!r})"
        if counts.first_malformed
        else ""
    )
    if counts.first_malformed and counts.first_malformed[0][1].startswith("PERFILE2"):  # compressed perf.data
        raise InputError(
            f"{name}: a compressed perf.data file: perf reads it uncompressed",
            hint="decompress it, then kforensic trace FILE (a recording of the scheduler: perf record -e 'sched:*' "
            "-a); for CPU samples: kforensic profile FILE",
        )
    if head.startswith(b"PERFILE2"):  # read with perf script: samples, not trace events
        raise InputError(
            f"{name}: a perf.data without trace events{example}: the scheduler analysis needs sched events",
            hint=f"for its hotspots and flame graph: kforensic profile {name}; for `trace`, record the scheduler: "
            "perf record -e 'sched:*' -a (or trace-cmd record -e sched -e irq)",
        )
    from collectors.trace_input import not_a_trace

    what = not_a_trace(name, head)
    if what is not None:  # an ELF file, an archive, random bytes: named, not quoted as a line
        raise what
    if any(PERF_SAMPLE_HEADER.search(line) for _, line in counts.first_malformed):
        raise InputError(
            f"{name}: `perf script` text of samples{example}, not of trace events: the scheduler analysis "
            "needs sched events",
            hint=f"for its hotspots and flame graph: kforensic profile {name}; for `trace`, record the scheduler: "
            "perf record -e 'sched:*' -a (or trace-cmd record -e sched -e irq), then perf script",
        )
    from collectors.kernel_log import read_with, text_reader

    expected = (
        "give the text of /sys/kernel/tracing/trace, `trace-cmd report`, `perf script`, a trace.dat or an LTTng "
        "trace directory"
    )
    kind = text_reader(head)
    # A log another command reads (a kernel log: kforensic dmesg), named with that command, as leaks --store and
    # report --from name it; a trace's own text (a reader of traces) falls to the generic line.
    if kind is not None and kind[1] not in ("kforensic trace", "kforensic profile"):
        raise InputError(
            f"{name}: {counts.malformed:,} of {content:,} lines are not trace events{example}: it looks like {kind[0]}",
            hint=f"{read_with(kind, name)}; for `trace`, {expected}",
        )
    raise InputError(
        f"{name}: {counts.malformed:,} of {content:,} lines are not trace events{example}: not an ftrace, trace-cmd "
        "report or perf script text",
        hint=expected,
    )


def trace_range(trace_file: str) -> tuple[float, float] | None:
    """The first and last timestamps of a text trace (one pass of the parser), None when it has no events."""
    from collectors.trace_columns import BatchParser, read_batches, text_size
    from collectors.trace_input import open_trace
    from forensics.jit import compiled_pays

    lo, hi = math.inf, -math.inf
    parser = BatchParser(compiled=compiled_pays(text_size(trace_file), trace_kernels))
    with (
        open_trace(trace_file) as stream,
        contextlib.closing(read_batches(stream.chunks, parser, threading.Event())) as batches,
    ):
        for batch in batches:
            if len(batch.ts):
                lo, hi = min(lo, float(batch.ts.min())), max(hi, float(batch.ts.max()))
    return (lo, hi) if lo <= hi else None


def check_window(
    trace_file: str,
    name: str,
    span: tuple[float, float],
    analysis: TraceAnalysis,
    ctf: bool,
) -> None:
    """A --window/--around entirely outside the trace is a usage error (exit 2) naming the trace's time range.

    One inside that range is answered even when no event falls in it: each CPU's state at its start (the task
    running there, or idle) is carried through it, and the coverage note says that no event fell in it.
    """
    read = analysis.events_read
    if read is not None and read[0] <= span[1] and span[0] <= read[1]:
        return  # inside the trace (the reading went past the window's end, or ended in it)
    before = read is not None and span[1] < read[0]
    held = read if read is not None and not before else None  # after the window: the trace was read to its end
    if held is None and not ctf and trace_file != "-":  # before it: the reading stopped at its first event
        held = trace_range(trace_file)
    if held is not None:
        where = f"the trace holds {held[0]:.6f} .. {held[1]:.6f} (trace seconds)"
    elif read is not None:  # an LTTng session or standard input, read only up to its first event
        where = f"the trace's first event is at {read[0]:.6f} (trace seconds)"
    else:
        where = "it holds no scheduling, IRQ or workqueue events"
    side = "it ends before the trace begins; " if before else "it starts after the trace ends; " if read else ""
    raise UsageError(
        f"the window {span[0]:.6f} .. {span[1]:.6f} is outside {name}: {side}{where}",
        hint="give --around TS[:MS] or --window T0:T1 inside the trace's time range",
    )


#: A CPU whose first event is this much after the trace's start (seconds, and share of the trace) is named in
#: what the trace could not judge.
LATE_START_S = 0.01
LATE_START_SHARE = 0.01


def examined_trace(
    name: str,
    analysis: TraceAnalysis,
    parse: ParseSummary,
    spans: SpanReport | None = None,
    slow_ms: float | None = None,
    syscalls: SyscallLatency | None = None,
    cuts: tuple[StreamCut, ...] = (),
) -> Examined:
    """What the trace let the analysis see, and what it could not judge for lack of events.

    ``spans``: the request spans analysed beside it (an LTTng UST session's marks, ``--span``, ``--spans``):
    "no problem found" on a user-space session listed only the kernel figures it could not judge.  ``cuts``: the
    LTTng stream files that end inside a packet, each a thing it could not judge (Examined.cut: a report's verdict
    names them).
    """
    win = analysis.window
    cpus = len(analysis.coverage.cpus_seen)
    # Without a window there is no span to state: "on 0 CPU(s) over not available: ..." read as broken English.
    span = (
        f" on {cpus} CPU(s) over {win[1] - win[0]:.3f} s ({win[0]:.6f} .. {win[1]:.6f})"
        if isinstance(win, tuple)
        else f", no time span ({win.reason})"
    )
    switches = sum(c.switches for c in analysis.cpus)
    kinds = [
        ("sched_switch", switches > 0),
        (str(analysis.latency_source), not isinstance(analysis.latency_source, NotAvailable)),
        ("irq_handler_entry/exit", bool(analysis.irqs)),
        ("softirq_raise/entry/exit", bool(analysis.softirqs)),
        ("workqueue_execute_start/end", bool(analysis.works)),
    ]
    offs = [o for o in analysis.offtimes if not isinstance(o.source, NotAvailable)]
    present = [k for k, seen in kinds if seen] + [str(o.source) for o in offs]
    # A window in which no CPU has an event: what ran there is the state carried in (runs from earlier switches).
    quiet = isinstance(win, tuple) and all(isinstance(c.first_ts, NotAvailable) for c in analysis.cpus)
    could, could_not = [], []
    # With a window, whether the trace can show a kind of problem is judged on the kinds of all the events read
    # (a window without an IRQ in a trace that has them found no long IRQ handler: it could have).
    read = frozenset(analysis.kinds_read)
    if switches or any(isinstance(v, float) and v for c in analysis.cpus for v in (c.busy, c.idle)):
        could.append("CPU hogs, RT hogs and D-state blocking (sched_switch)")
        # A task blocked on a lock (flock, a futex, a pipe) sleeps in S, as an idle one does: no rule judges it, and
        # "nothing at medium" over a 2.7 s flock wait read as the lock cleared (review ue19 #7).
        could_not.append(
            "waits in interruptible sleep (state S: locks such as flock, futexes and pipes, and waits for I/O in S): "
            "a trace does not tell them from idle waits; each task's S time is in the task table (--task PID), "
            "its wakeups say who ended them"
        )
    elif Kind.SWITCH in read:
        could_not.append("runs, hogs and D state: no sched_switch before or in the window")
    else:
        could_not.append("runs, hogs and D state: needs sched_switch events")
    if isinstance(analysis.latency_source, NotAvailable):
        could_not.append("wakeup latency: needs sched_waking or sched_wakeup events")
    else:
        could.append(f"wakeup latency (from {analysis.latency_source})")
    for what, found, needs, shown_by in (
        ("long IRQ handlers", analysis.irqs, "irq_handler_entry/exit", (Kind.IRQ_ENTRY, Kind.IRQ_EXIT)),
        (
            "softirq starvation",
            analysis.softirqs,
            "softirq_raise/entry/exit",
            (Kind.SOFTIRQ_RAISE, Kind.SOFTIRQ_ENTRY, Kind.SOFTIRQ_EXIT),
        ),
    ):
        if found:
            could.append(what)
        elif read.intersection(shown_by):
            could.append(f"{what} (none in the window)")
        else:
            could_not.append(f"{what}: needs {needs} events")
    note = analysis.preemption_note
    if switches and analysis.preemption:
        could.append(
            f"RT wakeup latency on a kernel of preemption model {analysis.preemption}" + (f" ({note})" if note else "")
        )
    elif switches:
        could_not.append(
            "the kernel's preemption model"
            + (f" ({note})" if note else "")
            + ": an RT task's wait behind a CFS task gets the severity that holds under "
            "either model (low up to 100 ms; medium from 1 ms on a preemptible kernel) "
            "(--preempt none|voluntary|full|lazy|rt, or its kernel log beside the trace in kforensic report)"
        )
    read_calls = dict(parse.aside).get(ASIDE_SYSCALLS, 0)
    if syscalls is not None and syscalls.paired:  # a table, no finding: no rule names a baseline for a syscall
        could.append(f"syscall latency ({syscalls.paired:,} syscalls paired)")
    elif read_calls:
        could_not.append(f"syscall latency: no syscall entry paired with its exit ({read_calls:,} syscall events read)")
    if offs:
        could.append("irqs-off/preempt-off sections")
    else:
        could_not.append("irqs-off/preempt-off sections: needs preemptirq events or the irqsoff tracer")
    if spans is not None and spans.stats:
        names = first_of([f"{st.count:,} {st.name!r}" for st in spans.stats], 5, ", ")
        against = f"over --slow-ms {slow_ms:g} ms" if slow_ms is not None else "against their name's median"
        could.append(f"slow request spans ({names}; judged {against})")
    elif spans is None and (marked := dict(parse.unknown).get("tracing_mark_write", 0)):
        # trace_marker lines are request spans only when asked for (the kernel rows a breakdown reads are kept
        # then): said, with how to have them (review 11 #5: a 36 ms request, 18x its median, went unmentioned).
        could_not.append(
            f"request spans: {marked:,} trace_marker line(s) were not paired (`kforensic trace {name} --slow-ms MS`"
            " or `--span NAME` pairs them and explains the slow ones)"
        )
    cov = analysis.coverage
    # A ring buffer read after it wrapped keeps each CPU's latest events: before them nothing is known.  Said
    # when it matters (10 ms and 1% of the trace): an idle CPU is often silent for the first few milliseconds.
    late = ", ".join(
        f"CPU{r.cpu} before {r.ts:.6f}"
        for r in cov.started
        if isinstance(win, tuple) and r.ts - win[0] > max(LATE_START_S, LATE_START_SHARE * (win[1] - win[0]))
    )
    if late:
        could_not.append(
            f"anything on {late}: its buffer starts there (overwritten, or the CPU was silent); figures that "
            "begin earlier are not findings"
        )
    if cov.lost_events or cov.lost_markers:
        # An absence is stated only for what was recorded: the tracer's gaps hide whatever ran in them.
        lost = f"{cov.lost_events:,} events" if cov.lost_events else "events"
        share = cov.lost_events / (cov.lost_events + parse.events) if cov.lost_events else 0.0
        of_all = f" ({share:.0%} of what was traced)" if share >= 0.005 else ""
        # Where each gap is on its CPU (the first few; the trace's table and JSON list them all)
        shown = [g for g in analysis.clock.losses if g.before is not None or g.after is not None]
        where = first_of([g.said(analysis.by_line) for g in shown], 3)
        could_not.append(
            f"anything inside the tracer's {cov.lost_markers:,} gap(s): {lost} lost{of_all} (a full ring buffer, or "
            "a packet lost on its way to the file)" + (f": {where}" if where else "") + "; "
            "record with larger buffers (trace-cmd record -b, perf record -m, lttng enable-channel --subbuf-size) or "
            "fewer events"
        )
    elif cov.lost_unknown:
        could_not.append(f"whether events were lost: unknown ({cov.lost_unknown})")
    cut = tuple(c.said() for c in cuts)
    could_not.extend(cut)
    kinds_said = f"; event kinds: {', '.join(present) or 'none the analysis uses'}"
    if read:  # a window: the kinds read in the trace, and which of them give figures in the window
        in_window = [
            k
            for k, seen in kinds
            if seen and (k != str(analysis.latency_source) or any(t.wakeup.n for t in analysis.tasks))
        ] + [str(o.source) for o in offs]
        kinds_said = (
            f"; event kinds read: {', '.join(_kinds_named(read, analysis)) or 'none the analysis uses'} "
            f"(with figures in the window: {', '.join(in_window) or 'none'})"
        )
    return Examined(
        f"trace {name}: {parse.events:,} events ({parse.used:,} analysed){span}"
        + (
            "; no event falls in the window: each CPU's state at its start carried through it"
            if quiet and analysis.cpus
            else kinds_said
        ),
        tuple(could),
        tuple(could_not),
        cut=cut,
    )


#: The kinds of events read, named in the "examined" line as its kinds with figures are (the wakeups by the
#: latency source), in that order.
_KIND_NAMES: tuple[tuple[str, frozenset[int]], ...] = (
    ("sched_switch", frozenset({Kind.SWITCH})),
    ("", frozenset({Kind.WAKING, Kind.WAKEUP, Kind.WAKEUP_NEW})),
    ("irq_handler_entry/exit", frozenset({Kind.IRQ_ENTRY, Kind.IRQ_EXIT})),
    ("softirq_raise/entry/exit", frozenset({Kind.SOFTIRQ_RAISE, Kind.SOFTIRQ_ENTRY, Kind.SOFTIRQ_EXIT})),
    ("workqueue_execute_start/end", frozenset({Kind.WORK_START, Kind.WORK_END})),
    ("preemptirq events", frozenset({Kind.IRQ_DISABLE, Kind.IRQ_ENABLE, Kind.PREEMPT_DISABLE, Kind.PREEMPT_ENABLE})),
)


def _kinds_named(read: frozenset[int], analysis: TraceAnalysis) -> list[str]:
    """The names of the kinds of events read (``TraceAnalysis.kinds_read``) and of the tracer's own output."""
    source = analysis.latency_source
    named = [
        (name or (source if isinstance(source, str) else "sched_waking/sched_wakeup"))
        for name, kinds in _KIND_NAMES
        if read & kinds
    ]
    return named + [
        str(o.source) for o in analysis.offtimes if isinstance(o.source, str) and o.source != "preemptirq events"
    ]


def _is_ctf(trace_file: str) -> bool:
    """collectors.ctf.reader.is_ctf, imported only for a directory or a metadata file."""
    path = Path(trace_file)
    # os.path.isdir, not Path.is_dir: that raises PermissionError (exit 4) in a directory the user may not enter
    if trace_file == "-" or not (path.name == "metadata" or os.path.isdir(path)):
        return False
    from collectors.ctf.reader import is_ctf

    return is_ctf(trace_file)


def engine_kernels() -> tuple[object, ...]:
    """The compiled kernels of the scheduling engine (importing them imports numba, nothing is compiled)."""
    from detectors.sched import engine_kernels as k

    return (k.run_batch, k.new_maps, k.state_refs)


def trace_kernels() -> tuple[object, ...]:
    """The compiled kernels of the text trace path: the scanner and the engine."""
    from collectors.trace_scan import scan

    return (scan, *engine_kernels())


def _unsized(chunks: Iterable[bytes]) -> tuple[Iterable[bytes], bool]:
    """Standard input or a FIFO, whose size is known once read: the same chunks, and whether to run compiled.

    What ends under the small-input bound runs without compiled code, as a file of its size would (a first
    `trace -` of a few lines compiled for 34 s); only a longer stream is judged as one of unknown size.
    """
    from forensics.jit import SMALL_INPUT_BYTES, compiled_pays

    rest = iter(chunks)
    head: list[bytes] = []
    size = 0
    for chunk in rest:
        head.append(chunk)
        size += len(chunk)
        if size >= SMALL_INPUT_BYTES:
            return itertools.chain(head, rest), compiled_pays(None, trace_kernels, built=_text_built)
    return head, compiled_pays(size, trace_kernels, built=_text_built)


def _built(*groups: Group) -> bool:
    """True when all these groups are compiled ahead of time for the current sources (a run needs no numba)."""
    from forensics.aot import load

    return all(load(group) is not None for group in groups)


def _ctf_built() -> bool:
    """The LTTng decoder and the engine are built ahead of time."""
    from collectors.ctf import decode_aot
    from detectors.sched import engine_aot

    return _built(decode_aot.GROUP, engine_aot.GROUP)


def _text_built() -> bool:
    """The ftrace text scanner and the engine are built ahead of time."""
    from collectors import trace_scan_aot
    from detectors.sched import engine_aot

    return _built(trace_scan_aot.GROUP, engine_aot.GROUP)


def _text_scanner(compiled: bool) -> Scan | None:
    """The text scanner compiled ahead of time (built now, announced, when it is not yet) for a compiled run;
    None: numba's (not compiled, or the build failed)."""
    if not compiled:
        return None
    from collectors import trace_scan_aot

    return trace_scan_aot.kernels(build=True)


def _analyzer(
    compiled: bool, options: tuple[Thresholds, tuple[float, float], float | None, bool]
) -> BatchAnalyzer | FastAnalyzer:
    """The engine: compiled, or the reference analyzer fed in batches (the same results).

    Compiled: ahead of time when it can be (built now, announced, when it is not yet), else by numba.
    """
    if compiled:
        from detectors.sched import engine_aot
        from detectors.sched.engine import FastAnalyzer

        return FastAnalyzer(*options, kernels=engine_aot.kernels(build=True))
    from detectors.sched.analyzer import BatchAnalyzer, SchedAnalyzer

    return BatchAnalyzer(SchedAnalyzer(*options))


def _ctf_keeper(
    analyzer: BatchAnalyzer | FastAnalyzer, trace_file: str, session: Session, opts: SpanOptions
) -> KernelKeeper | WindowKeeper:
    """What keeps an LTTng session's kernel rows for the span breakdown.

    The spans from the session's own marks first (its user-space streams alone): then only the kernel rows
    their breakdown reads are kept (collectors/span_windows.py), not every row (about 50 bytes a kernel
    row).  With other span sources or a Gantt chart, every row.  The marks are let go before the kernel
    events are read (about 500 bytes a mark: 8 MB for the x176 benchmark session) and made again after.
    """
    from collectors.spans import KernelKeeper, ust_marks
    from forensics.pipelines.spans import span_windows

    windows = span_windows(ust_marks(session, *session.ust_rows())[0], opts)
    if windows is None:
        keeper: KernelKeeper | WindowKeeper = KernelKeeper(analyzer, trace_file)
    else:
        from collectors.span_windows import WindowKeeper

        keeper = WindowKeeper(analyzer, trace_file, windows)
    keeper.where = session.where  # the span breakdown's events named as the evidence names them
    return keeper


def _named_preemption(session: Session | None, declared: str, release: str) -> tuple[str, str]:
    """The preemption model: ``declared`` (--preempt, or the kernel log beside the trace), else the one an LTTng
    kernel trace's metadata states (env.kernel_version: the kernel's ``uname -v``), with where it was read, or ""
    and why it is not settled there (TraceAnalysis.preemption_note)."""
    if declared or session is None:
        return declared, ""
    from collectors.ctf.reader import named_uts_version
    from collectors.log_identity import uts_preemption

    uts = named_uts_version(session)
    if isinstance(uts, NotAvailable):
        return "", uts.reason
    built = uts_preemption(uts, release)
    said = f"the trace's metadata, env.kernel_version {uts!r}"
    return built.model, f"read from {said}" if built.model else f"{said}: {built.why}"


def _named_system(
    ctf: CtfRead | None, system: NamedSystem | NotAvailable
) -> tuple[str | NotAvailable, str | NotAvailable, BootTime | NotAvailable | None]:
    """The host, kernel release and boot time the trace names: an LTTng trace's metadata names the first two
    (env.hostname, env.kernel_release), its clock's offset the boot's UTC; a trace.dat the first two (``system``: its
    UNAME option); a text trace none (boot: None, the incident's own "no input records when the kernel booted")."""
    if ctf is None:
        if isinstance(system, NotAvailable):
            return system, system, None
        return system.host, system.release, None
    from collectors.ctf.reader import named_system, session_boot_time

    host, kernel = named_system(ctf.session)
    return host, kernel, session_boot_time(ctf.session)


#: The ``env`` entries of an LTTng trace's metadata that name its kernel release and host, cited for the trace.
_NAMING_ENV = ("kernel_release", "hostname")


def _env_cited(ctf: CtfRead | None) -> tuple[Evidence, ...]:
    """The lines of each LTTng trace's metadata (``kernel_release = "3.10.31-ltsi";``) that name its kernel release
    and host, cited by their bytes in the metadata file (verbatim in a packetized one's text too): what a
    contradiction of kernels or hosts cites for a trace without findings, which was never set apart (ue22 #3)."""
    if ctf is None:
        return ()
    out = []
    for trace in ctf.session.traces:
        path = trace.path / "metadata"
        try:
            raw = path.read_bytes()
        except OSError:  # (read moments ago: gone since, nothing cited)
            continue
        for key in _NAMING_ENV:
            value = trace.meta.env.get(key)
            said = f'{key} = "{value}";'
            at = raw.find(said.encode()) if isinstance(value, str) and value else -1
            if at >= 0:
                out.append(Evidence(str(path), Locator(LocatorKind.BYTE, at, name="metadata env"), said))
    return tuple(out)


def _uname_cited(source: str, system: NamedSystem | NotAvailable) -> tuple[Evidence, ...]:
    """A trace.dat's UNAME option (``Linux vm 6.18.44-fc-v1300 x86_64``), cited by its line of ``trace-cmd dump
    --options``: what sets apart a trace.dat of another kernel without findings (its release was said in
    "Examined" only, uncited, and the trace was not set apart: "Kernel: inputs disagree")."""
    if isinstance(system, NotAvailable) or not system.line:
        return ()
    from collectors.trace_input import OPTIONS_LINE

    return (Evidence(source, Locator(LocatorKind.LINE, system.line, name=OPTIONS_LINE), system.text),)


def _with_system(examined: Examined, system: NamedSystem | NotAvailable) -> Examined:
    """``examined`` citing where the host and kernel release it names were read (a trace.dat's UNAME option)."""
    if isinstance(system, NotAvailable):
        return examined
    said = f"; host {system.host}, kernel {system.release} read from {system.where}"
    return replace(examined, what=examined.what + said)


def _syscall_latency(ctf: CtfRead, analysis: TraceAnalysis) -> SyscallLatency | None:
    """An LTTng session's syscall latency table (None: it declares no syscall event), its threads named by the
    tasks of the whole trace (not only --task's)."""
    if ctf.syscall_pairs is None:
        return None
    comms = {t.pid: t.comm for t in analysis.tasks}
    return ctf.syscall_pairs.result(lambda tid: comms.get(tid, ""))


def _uncovered(analysis: TraceAnalysis) -> tuple[tuple[float, float, str], ...]:
    """The times the trace does not cover (KernelTable.gaps): each CPU's lost events, each hole in the recording."""
    by_line = analysis.by_line
    losses = tuple((g.start, g.end, g.said(by_line)) for g in analysis.clock.losses)
    holes = tuple(
        (
            h.before.ts,
            h.after.ts,
            f"no events on any CPU from {h.before.said(by_line)} to {h.after.said(by_line)} (a hole in the recording)",
        )
        for h in analysis.clock.holes
    )
    return losses + holes


def _waits_named(findings: Iterable[Finding]) -> frozenset[int]:
    """The pids whose wait a wakeup-latency finding (low or above) names: the picture marks them apart from the waits
    it shows that no finding names (forensics/report/cpu_timeline.py wait_marks)."""
    return frozenset(
        s.pid
        for f in findings
        if f.kind is FindingKind.SCHED_WAKEUP_LATENCY and f.severity > Severity.INFO
        for s in f.subjects
        if s.kind is SubjectKind.TASK and s.pid is not None
    )


def _kernel_said(kernel: str | NotAvailable, declared: str) -> str | NotAvailable:
    """The trace's kernel release; where it names none, the release the analysis judged with (--kernel-release, a
    report's kernel log) said beside "not available", which alone read as if none had been used (ue24 F4).  Not the
    trace's own, so never its kernel_release."""
    if isinstance(kernel, NotAvailable) and declared:
        return NotAvailable(f"{kernel.reason}; judged as kernel {declared} (declared, not read from the trace)")
    return kernel


def analyse_trace_file(
    trace_file: str,
    *,
    thresholds: Thresholds | None = None,
    span: tuple[float, float] = (-math.inf, math.inf),
    bucket: float | None = None,
    task: str | None = None,
    png: Path | None = None,
    save_text: Path | None = None,
    span_opts: SpanOptions | None = None,
    preemption: str = "",
    kernel_release: str = "",
) -> TraceResult:
    """Read and analyse one trace (what ``kforensic trace`` does before rendering); the PNGs asked for, to draw."""
    from forensics.jit import import_numpy

    import_numpy()  # first, without OpenBLAS's thread pool
    from detectors.sched.findings import detect
    from detectors.sched.select import select_tasks, shown_findings
    from forensics.jit import compiled_pays
    from forensics.types.sched import Thresholds as DefaultThresholds

    # A small input is read and analysed without compiled code (the same results, no compile to wait for).
    ctf_input = _is_ctf(trace_file)
    if ctf_input:  # an LTTng session: its size on disk decides for its decoder and the engine both
        from collectors.ctf.reader import COLD_SESSION_BYTES, decoder_kernels, session_bytes

        compiled = compiled_pays(
            session_bytes(trace_file),
            lambda: (*decoder_kernels(), *engine_kernels()),
            cold_bytes=COLD_SESSION_BYTES,
            built=_ctf_built,
        )
    else:
        from collectors.trace_columns import text_size  # (the text reader: not imported for an LTTng session)

        size = text_size(trace_file)
        compiled = (
            compiled_pays(size, trace_kernels, built=_text_built) if size is not None else False
        )  # unsized: below
    options = (thresholds or DefaultThresholds(), span, bucket, png is not None)
    analyzer = _analyzer(compiled, options)
    opts = span_opts or SpanOptions()
    ctf = None
    keeper: KernelKeeper | WindowKeeper | None = None
    windowed = False  # the LTTng session's kernel rows kept in the spans' windows only, its marks read again
    if ctf_input:
        from collectors.ctf.feed import feed_session
        from collectors.ctf.reader import Session

        if save_text is not None:
            raise UsageError("--save-text is for text traces", hint="a CTF trace is cited by stream file and byte")
        session = Session(trace_file, compiled)
        spans_on = opts.wanted or any(t.meta.domain == "ust" for t in session.traces)
        if spans_on:
            keeper = _ctf_keeper(analyzer, trace_file, session, opts)
            windowed = hasattr(keeper, "inside")  # a WindowKeeper (as feed_session tells it)
        ctf = feed_session(session, keeper or analyzer, keep=spans_on, user=not windowed)  # type: ignore[arg-type]
        stream = ctf.stream
        counts = ctf.counts
    else:
        from collectors.trace_columns import BatchParser, read_batches
        from collectors.trace_input import PERF_DATA_KIND, open_trace, shared_buffers

        with open_trace(trace_file, save_text) as stream:
            chunks: Iterable[bytes] = stream.chunks
            if size is None:
                chunks, compiled = _unsized(chunks)
                analyzer = _analyzer(compiled, options)
            parser = BatchParser(compiled=compiled, scan=_text_scanner(compiled))
            if opts.wanted:
                from collectors.spans import KernelKeeper

                keeper = KernelKeeper(analyzer, trace_file)
            stop = threading.Event()
            with contextlib.closing(read_batches(chunks, parser, stop)) as batches:
                for batch in batches:
                    (keeper or analyzer).feed(batch)
                    if analyzer.done:
                        break
            counts = parser.counts
            if stream.kind == PERF_DATA_KIND:  # perf script was asked to show the losses: none shown, none lost
                counts.loss_unknown = ""
            counts.shared_buffers, counts.shared_events = shared_buffers(bytes(stream.sample))
            # Inside the stream's block: a refused input leaves no --save-text file behind.
            shown = "<stdin>" if trace_file == "-" else trace_file  # the input, not the --save-text copy
            check_trace_text(shown, counts, stream.head)
            analysis = analyzer.result(counts)
            if math.isfinite(span[0]) or math.isfinite(span[1]):
                check_window(trace_file, shown, span, analysis, False)
        if keeper is not None:
            keeper.source = stream.name
    if ctf is not None:
        from collectors.ctf.feed import per_packet

        analysis = analyzer.result(counts)
        # a UST stream's losses one row per gap, with its packets' window (the analysis adds them up per CPU)
        clock = per_packet(analysis.clock, ctf.session.packet_losses(), analysis.coverage.cpus_seen, analysis.window)
        # Where a stream file is cut: its CPU's silence after the cut is the cut's (the coverage finding says it)
        analysis = analysis._replace(clock=clock, coverage=analysis.coverage._replace(cuts=ctf.session.cuts()))
        if math.isfinite(span[0]) or math.isfinite(span[1]):
            check_window(trace_file, trace_file, span, analysis, True)
    parse = analyzer.summary(counts)
    syscall_table = None if ctf is None else _syscall_latency(ctf, analysis)
    cuts = () if ctf is None else ctf.session.cuts()
    judged = analysis  # --task narrows what is shown; the findings are judged on every task (select.py)
    if task:
        analysis = select_tasks(analysis, task)
        if not analysis.tasks:
            windowed = math.isfinite(span[0]) or math.isfinite(span[1])
            raise UsageError(
                f"--task {task!r} matches no task "
                + (f"active in the window {span[0]:.6f} .. {span[1]:.6f} of" if windowed else "in")
                + f" {trace_file}",
                hint="give a comm or pid from the task table" + (" (or widen the window)" if windowed else ""),
            )
    span_report = None
    findings: list[Finding] = []
    figures: tuple[Figure, ...] = ()
    if keeper is not None:
        from forensics.pipelines.spans import run_spans

        syscalls = threads = None
        if ctf is not None:
            from collectors.spans import ctf_syscalls, statedump_threads

            syscalls = ctf_syscalls(ctf.session, ctf.syscalls())
            threads = statedump_threads(ctf)
        table = keeper.table(syscalls, threads)
        table.gaps = _uncovered(analysis)
        asked = span if math.isfinite(span[0]) or math.isfinite(span[1]) else None
        span_report, span_found, figures = run_spans(trace_file, opts, table, ctf, windowed, asked)
        findings = [*findings, *span_found]
    # Threads that serve request spans are latency-sensitive waiters (detectors/sched/harm.py).
    tids = frozenset(s.tid for s in span_report.spans) if span_report is not None else frozenset()
    host, kernel, boot = _named_system(ctf, stream.system)
    # The kernel's preemption model (declared, or from the kernel log beside the trace) sets an RT task's promise;
    # its release, when named, whether the fair class is CFS or EEVDF (a CFS task's yardstick).
    # The release the trace names (an LTTng session's) over one declared (--kernel-release, a report's kernel log).
    named = kernel if isinstance(kernel, str) else kernel_release
    preemption, note = _named_preemption(ctf.session if ctf is not None else None, preemption, named)
    analysis = analysis._replace(preemption=preemption, kernel_release=named, preemption_note=note)
    # ``asked``: the tasks --task asks about, their waits within their promise said at info (findings.py)
    focus = frozenset(t.pid for t in analysis.tasks) if task else frozenset()
    judged = judged._replace(
        preemption=preemption, kernel_release=named, preemption_note=note, span_tids=tids, asked=focus
    )
    sched_found = detect(judged, stream.name)
    findings = [*(shown_findings(sched_found, analysis) if task else sched_found), *findings]
    # An LTTng event cited by its stream file, number and time, as babeltrace2 finds it.
    findings = findings if ctf is None else ctf.session.cite(findings)
    win = analysis.window
    incident = Incident(
        host=host,
        kernel_release=_kernel_said(kernel, kernel_release),
        window=win
        if isinstance(win, NotAvailable)
        else TimeWindow(Timestamp(win[0], Clock.TRACE), Timestamp(win[1], Clock.TRACE)),
        sources=tuple(stream.records),
        findings=tuple(findings),
        tool_version=__version__,
        examined=(
            replace(
                _with_system(
                    examined_trace(stream.name, analysis, parse, span_report, opts.slow_ms, syscall_table, cuts),
                    stream.system,
                ),
                named_by=_env_cited(ctf) or _uname_cited(stream.name, stream.system),
            ),
        ),
    )
    incident = incident if boot is None else replace(incident, boot_time=boot)
    if png is not None:
        from forensics.types.figures import CpuTimelineFigure, FigureDirectory  # here: only --png draws one

        title = f"kforensic trace {stream.name}"
        figures += (
            FigureDirectory(png.parent),
            CpuTimelineFigure(
                png, analysis, [*(analyzer.timeline or []), *analysis.window_runs], title, _waits_named(findings)
            ),
        )
    notes: tuple[str, ...] = ()
    ctf_info = None
    if ctf is not None:
        from collectors.ctf.reader import describe

        ctf_info = describe(ctf.session)
        notes = tuple(ctf.session.notes())
    events = None if ctf is None else ctf.session.stream_event
    return TraceResult(
        stream.name,
        stream.kind,
        analysis,
        parse,
        incident,
        notes,
        ctf_info,
        span_report,
        figures,
        events,
        syscall_table,
        cuts,
    )
