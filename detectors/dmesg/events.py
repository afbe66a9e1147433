"""Resource events: OOM killer invocations, page allocation failures, packets the network stack dropped.

These are not kernel bugs but resource events: the kernel did what it is
meant to do.  They are reported apart from crash reports (``is_event``) with
what an operator needs: who asked for memory, under which constraint, which
task was killed, and the memory state printed with them.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from detectors.dmesg.extract import (
    ALLOC_FAILURE_WORDS,
    foreign_trace,
    frames_below_cut,
    guilty_frame,
    line_context,
    report_extent,
    signature,
    wall_time,
)
from detectors.dmesg.lines import LogLine, Window
from detectors.dmesg.rules import CALL_TRACE, TRACE, StackSpec
from forensics import regexcache as rc
from forensics.model import NotAvailable, Severity
from forensics.types.dmesg import OOM_KILLED, Frame, KernelReport, ReportKind

OOM_INVOKED = rc.compile(
    r"(?<!\S)(\S+) invoked oom-killer: gfp_mask=(\S++).*?order=(-?\d+)(?:, oom_score_adj=(-?\d+))?"
)
# The task starts at a word's start ((?<!\S)): tried from every character of a long run of non-space characters, the
# search was quadratic (a 60 KB line of digits and colons before the header: 82.8 s of CPU, a hostile log's hang).
ALLOC_FAILURE = rc.compile(r"(?<!\S)(\S+): page allocation failure: order:(\d+), mode:([^\s,]+)")
#: vmalloc's warn_alloc() line: up to 5.12 "comm: vmalloc: allocation failure: N bytes, mode:..." (before 4.10 "vmalloc:
#: allocation failure: N bytes" alone, warn_alloc_failed's "comm: page allocation failure: order:0, ..." on the next
#: line), from 5.13 "comm: vmalloc error: size N, <what failed>, mode:..." (mm/vmalloc.c).  Groups: the task, the
#: size (either wording), what failed (5.13+), the mode.
VMALLOC_FAILURE = rc.compile(
    r"(?:(?<!\S)(\S+): )?vmalloc(?:: allocation failure: (\d+) bytes| error: size (\d+)(?:, (?!mode:)([^,]+))?)"
    r"(?:, mode:([^\s,]+))?"
)
KILLED = rc.compile(OOM_KILLED)
CONSTRAINT = rc.compile(r"oom-kill:constraint=(\w+)")
MEM_INFO = "Mem-Info:"
_ALLOC_STACK = StackSpec(
    ((CALL_TRACE, TRACE),),
    skip=("warn_alloc", "^_*alloc_pages", "^_*alloc_frozen_pages", "kmalloc", "^_*kmem_cache", "^_*v[mz]?alloc",
          "^kv[mz]alloc", "get_free_pages", "get_page_from_freelist", "slab", "^dma_alloc", "^_*dma_direct_alloc",
          "^alloc_slab", "^allocate_slab", "^new_slab"),
)  # fmt: skip


# ALLOC_FAILURE_WORDS (extract's): in the scanner's trigger automaton, so that the header itself opens the event,
# whether its Mem-Info: dump follows or not.
_EVENT_HEADERS = ("invoked oom-killer:", *ALLOC_FAILURE_WORDS)
_EVENT_HEADER_BYTES = tuple(h.encode() for h in _EVENT_HEADERS)


def find_event_header(lines: Sequence[LogLine]) -> int | None:
    """Index of the last OOM or allocation-failure header among ``lines`` (looking back from Mem-Info)."""
    if isinstance(lines, Window):
        # The lines joined and searched from the end with rfind (C), not one regex search per line:
        # only the lines that hold a header's text are parsed, the last first.
        blob = b"\n".join(lines.raw)
        end = len(blob)
        while (at := max(blob.rfind(h, 0, end) for h in _EVENT_HEADER_BYTES)) >= 0:
            i = blob.count(b"\n", 0, at)
            if any(h in lines[i].body for h in _EVENT_HEADERS):
                return i
            end = blob.rfind(b"\n", 0, at) + 1  # search the lines above this one
        return None
    for i in range(len(lines) - 1, -1, -1):
        body = lines[i].body
        if any(h in body for h in _EVENT_HEADERS):
            return i
    return None


def build_event(window: Sequence[LogLine]) -> tuple[KernelReport, int] | None:
    """The OOM or allocation-failure event starting at ``window[0]``, with the resume index."""
    head = window[0]
    if m := OOM_INVOKED.search(head.body):
        return _oom(window, m), 1
    if KILLED.search(head.body):
        return _oom(window, None), 1
    if (m := alloc_failure(head.body)) is not None:
        context = line_context(head)
        own, end, resume = report_extent(window, context)
        # Another event's header (a failure printed again at once, an OOM) is not this one's line, nor what follows.
        if (cut := next((k for k in range(1, len(own)) if _MEM_INFO_STOP.search(own[k].body)), None)) is not None:
            own = own[:cut]
            end = own[-1].number - head.number
            resume = min(resume, end + 1)
        frame, trace = guilty_frame(own, _ALLOC_STACK)
        if foreign_trace(own, trace):
            # Its own trace is not in the log (cut off): the lines below its header are the other report's.
            frame, trace = None, []
            own, end, resume = own[:1], 0, 1
        elif frame is None and trace and (below := frames_below_cut(window, end, context)):
            # Its trace cut short by another CPU's report printed at once: its caller is among the frames below.
            whole = [*own, *(window[i] for i in below)]
            if (found := guilty_frame(whole, _ALLOC_STACK))[0] is not None:
                (frame, trace), own, end = found, whole, below[-1]
        details: tuple[tuple[str, str], ...]
        if m.re is ALLOC_FAILURE:
            title = f"page allocation failure: order:{m.group(2)} in {frame or 'corrupted'}"
            details = (("gfp", m.group(3)),)
        else:
            # No syzbot title to follow: syzkaller's pkg/report takes "vmalloc: allocation failure:" for a message with
            # a stack that is no report of its own.  The kernel's words up to 5.12, one title for both wordings.
            title = f"vmalloc: allocation failure in {frame or 'corrupted'}"
            size = ("size", f"{m.group(2) or m.group(3)} bytes")  # one of the two wordings' sizes: always there
            details = (size, *((k, v) for k, v in (("failed", m.group(4)), ("gfp", m.group(5))) if v))
        block = _mem_info_block(window, end, context)
        if block:
            own = [*own, *(window[i] for i in block)]
            end = block[-1]
            summary = next((window[i].body.strip() for i in block if "active_anon:" in window[i].body), None)
            if summary is not None:
                details = (*details, ("memory", summary))
        return _event(title, ReportKind.ALLOC_FAILURE, Severity.MEDIUM, own, end, window, frame, details, trace), resume
    return None


def alloc_failure(body: str) -> re.Match[str] | None:
    """warn_alloc()'s header in ``body`` (page allocator's or vmalloc's), None when it holds none."""
    if "allocation failure:" not in body and "vmalloc error:" not in body:
        return None
    if "page allocation failure:" in body and (m := ALLOC_FAILURE.search(body)) is not None:
        return m
    return VMALLOC_FAILURE.search(body) if "vmalloc" in body else None


#: How far below its header an allocation failure's Mem-Info: dump is looked for (lines): warn_alloc() prints it
#: right after the call trace, but another CPU's report printed at the same time (no caller ids to tell them apart)
#: can stand between them: an oops's ~100-300 lines.
MEM_INFO_REACH = 400
#: The search's words: Mem-Info: (found), or another event's header (whose own Mem-Info: follows it), SysRq-m's, a
#: boot banner (none for this failure).
_MEM_INFO_WORDS = (
    r"Mem-Info:|page allocation failure:|vmalloc: allocation failure:|vmalloc error:|invoked oom-killer:"
    r"|Show Memory|Linux version "
)
_MEM_INFO_SEARCH = rc.compile(_MEM_INFO_WORDS.encode())
_MEM_INFO_STOP = rc.compile(_MEM_INFO_WORDS)
#: The lines of show_mem()'s dump (mm/show_mem.c, lib/show_mem.c before 6.0): the summary and its continuation lines,
#: the per-node and per-zone lines, the buddy lists (pr_cont()'d: interleaved, each piece is a line of its own), the
#: totals.  Only they are taken from the lines below Mem-Info:, which other CPUs' output may interleave.
_SHOW_MEM_LINE = rc.compile(
    r"\s*(?:active_anon:|active_file:|unevictable:|slab_reclaimable:|kernel_misc_reclaimable:|mapped:|free:"
    r"|sec_pagetables:|Node \d+|(?:DMA32|DMA|Normal|HighMem|Movable|Device)(?: free:|: )|lowmem_reserve\[\]:"
    r"|\d+ total pagecache pages|\d+ pages (?:in swap cache|RAM|HighMem|reserved|cma reserved|hwpoisoned)"
    r"|Swap cache stats:|Free swap|Total swap|CPU\s+\d+: hi:|(?:\d+\*\d+kB ?|\([A-Z]+\) ?|= \d+kB|\d+)+\s*$)"
)
_MEM_INFO_QUIET = 8  # lines of the failure's context without a show_mem line that end its dump


def _mem_info_block(window: Sequence[LogLine], end: int, context: str | None) -> list[int]:
    """Indices in ``window`` of the Mem-Info: dump of the allocation failure whose lines end at ``window[end]``; none
    when the log holds none for it within :data:`MEM_INFO_REACH` lines (warn_alloc ratelimits it; a cut log).

    Its dump is the first Mem-Info: line of the failure's context below it, unless another event's header (or a boot)
    comes first, then the show_mem lines of that context that follow.  The raw bytes are searched: only the lines
    holding a word are parsed.
    """
    stop = min(len(window), MEM_INFO_REACH + 1)
    found = None
    if isinstance(window, Window):
        blob = b"\n".join(window.raw[end + 1 : stop])
        line, prev = end + 1, 0
        for hit in _MEM_INFO_SEARCH.finditer(blob):
            line += blob.count(b"\n", prev, hit.start())
            prev = hit.start()
            if line_context(window[line]) == context:
                found = line if hit.group() == b"Mem-Info:" else -1
                break
        if found is None:
            window.mark_read(stop)  # every raw line was searched: all count (the lines parsed are counted as read)
    else:
        for i in range(end + 1, stop):
            if line_context(x := window[i]) == context and (said := _MEM_INFO_STOP.search(x.body)) is not None:
                found = i if said.group() == "Mem-Info:" else -1
                break
    if found is None or found < 0:
        return []
    block = [found]
    quiet = 0
    for i in range(found + 1, len(window)):
        x = window[i]
        if line_context(x) != context:
            continue
        if _MEM_INFO_STOP.search(x.body) is not None:
            break  # another dump's or event's
        if _SHOW_MEM_LINE.match(x.body) is None:
            quiet += 1
            if quiet > _MEM_INFO_QUIET:
                break
            continue
        block.append(i)
        quiet = 0
    return block


# Bytes one of the lines _oom looks at has; the other lines of the (long) OOM dump are not decoded.
# No token starts inside another or inside itself, so their occurrences never overlap.
_OOM_TOKENS = (b"Mem-Info:", b"oom", b"Kill", b"allocation failure", b"Kernel panic")


def _token_hits(blob: bytes) -> Iterator[tuple[int, bytes]]:
    """Every occurrence of an :data:`_OOM_TOKENS` token in ``blob``, in order, found lazily.

    bytes.find runs at memory speed; a regex alternation of the tokens would step
    through the (tens of kilobytes of) OOM dump one position at a time.
    """
    heap = [(at, token) for token in _OOM_TOKENS if (at := blob.find(token)) >= 0]
    heapq.heapify(heap)
    while heap:
        at, token = heap[0]
        yield at, token
        nxt = blob.find(token, at + len(token))
        if nxt >= 0:
            heapq.heapreplace(heap, (nxt, token))
        else:
            heapq.heappop(heap)


def _oom_lines(window: Sequence[LogLine]) -> Iterator[tuple[int, LogLine]]:
    """The lines of ``window`` that may matter to an OOM event, with their index.

    An OOM dump runs to hundreds of lines (per-zone counters, the task table);
    only a handful say anything the event reports, so the raw bytes are
    searched in one piece and just those lines are parsed.
    """
    if not isinstance(window, Window):
        yield from enumerate(window)
        return
    raw = window.raw
    blob = b"\n".join(raw)
    line = prev = 0
    last = -1  # the last line yielded
    pending = -1  # the line after Mem-Info: (the memory summary), yielded in its turn
    for at, token in _token_hits(blob):
        line += blob.count(b"\n", prev, at)  # matches come in order: count the newlines between
        prev = at
        if last < pending < line:
            yield pending, window[pending]
            last = pending
        if line > last:
            yield line, window[line]
            last = line
        if token == _MEM_INFO_RAW:
            pending = line + 1
    if last < pending < len(raw):
        yield pending, window[pending]


_MEM_INFO_RAW = MEM_INFO.encode()


class OneLineEvent(NamedTuple):
    """A resource event the kernel states in one line: the words the scanner looks for, then the line's own pattern,
    the event's title, its kind and its severity as one line (a group's count and span may raise it:
    forensics/types/dmesg.py group_judgement)."""

    words: str
    pattern: re.Pattern[str]
    title: str
    kind: ReportKind
    severity: Severity


#: The one-line events, in the order tried.  The network stack's reports of what it dropped (each net_ratelimit()ed:
#: "net_ratelimit: N callbacks suppressed" says how many more there were) are low as one line: their group's count
#: and span make them medium (net_drop_judgement).  RT throttling's line says real-time tasks ran a CPU's whole
#: budget (950 ms of each second by default) and the scheduler stopped them for the rest of the period: the CPU's
#: other tasks (kworkers, ksoftirqd, every CFS task) got nothing for up to 950 ms, a freeze someone sees: medium.
#: The kernel protected itself as it promises (no fault of its own) and prints it once a boot, without the task.
ONE_LINE_EVENTS: tuple[OneLineEvent, ...] = (
    # nf_conntrack_alloc(): the table holds nf_conntrack_max entries; a new connection's packet is dropped.
    OneLineEvent("table full, dropping packet",
                 rc.compile(r"nf_conntrack: (?:nf_conntrack: )?table full, dropping packet"),
                 "nf_conntrack: table full, dropping packet", ReportKind.NET_DROP, Severity.LOW),
    # tcp_out_of_memory() (tcp_check_oom): sockets' memory past net.ipv4.tcp_mem; the socket is aborted (reset).
    OneLineEvent("TCP: out of memory", rc.compile(r"TCP: out of memory -- consider tuning tcp_mem"),
                 "TCP: out of memory -- consider tuning tcp_mem", ReportKind.NET_DROP, Severity.LOW),
    # sched_rt_runtime_exceeded() (kernel/sched/rt.c): printk_deferred_once.
    OneLineEvent("RT throttling activated", rc.compile(r"sched: RT throttling activated"),
                 "sched: RT throttling activated", ReportKind.RT_THROTTLING, Severity.MEDIUM),
)  # fmt: skip
ONE_LINE_WORDS = tuple(e.words for e in ONE_LINE_EVENTS)


def build_one_line_event(window: Sequence[LogLine]) -> KernelReport | None:
    """The event of a one-line report at ``window[0]`` (:data:`ONE_LINE_EVENTS`), None when it is none."""
    body = window[0].body
    for event in ONE_LINE_EVENTS:
        if event.words in body and event.pattern.search(body) is not None:
            return _event(event.title, event.kind, event.severity, [window[0]], 0, window, None, (), ())
    return None


def _oom(window: Sequence[LogLine], invoked: re.Match[str] | None) -> KernelReport:
    details: list[tuple[str, str]] = []
    if invoked is not None:
        details += [("invoker", invoked.group(1)), ("gfp_mask", invoked.group(2)), ("order", invoked.group(3))]
    own: list[LogLine] = [window[0]]
    victim = None
    end = 0
    for i, line in _oom_lines(window):
        body = line.body
        # Substring checks first: these patterns open with \S+ and would be tried at every position.
        if i > 0 and (
            ("invoked oom-killer:" in body and OOM_INVOKED.search(body))
            or ("page allocation failure:" in body and ALLOC_FAILURE.search(body))
        ):
            end = max(end, i - 1)  # the dump up to the next event's header is this one's
            break
        if "oom-kill:" in body and (c := CONSTRAINT.search(body)) is not None:
            details.append(("constraint", c.group(1)))
            own.append(line)
            end = i
        if body.startswith(MEM_INFO) and i + 1 < len(window):
            details.append(("memory", window[i + 1].body.strip()))
        if i > 0 and body.startswith("Kernel panic"):
            # panic_on_oom, or a crash while the dump was printed: nothing after it belongs to this event,
            # and the rest of the window (up to 1000 lines of the next boot) need not be searched.
            end = max(end, i - 1)  # the dump (Mem-Info, the task table) ends just above the panic
            break
        if "Kill" in body and (k := KILLED.search(body)) is not None:
            victim = k.group(3)
            details += [("killed_pid", k.group(2)), ("killed", victim)]
            if k.group(1):
                details.append(("scope", "memory cgroup"))
            if i > 0:
                own.append(line)
            end = i
            break
    else:
        if isinstance(window, Window):
            window.mark_read()  # no line ended the event: every raw line was searched, all count
    # The event's lines are the whole dump of its context from the header to its end (the task table, the
    # zones' free memory and the kill are what detectors.dmesg.why reads), not only the lines searched here.
    context = line_context(window[0])
    own = [window[0], *(x for j in range(1, end + 1) if line_context(x := window[j]) == context)]
    title = f"OOM kill of {victim}" if victim else "OOM killer invoked"
    if invoked is not None:
        title += f" (invoked by {invoked.group(1)})"
    return _event(title, ReportKind.OOM, Severity.HIGH, own, end, window, None, tuple(details), ())


def _event(
    title: str,
    kind: ReportKind,
    severity: Severity,
    own: Sequence[LogLine],
    end: int,
    window: Sequence[LogLine],
    frame: str | None,
    details: tuple[tuple[str, str], ...],
    trace: Sequence[Frame],
) -> KernelReport:
    head = window[0]
    times = [line.timestamp for line in own if line.timestamp is not None]
    # A log stamped with dated wall-clock times only: the event's time is its first line's.
    wall, zone_unknown, untimed = wall_time(head, own, bool(times))
    no = "not printed with this event"
    return KernelReport(
        title=title,
        kind=kind,
        severity=severity,
        rule=kind.value,
        corrupted=False,
        corrupted_reason=None,
        frame=frame if frame else NotAvailable("events have no guilty frame"),
        trace=tuple(trace),
        cpu=NotAvailable(no),
        pid=NotAvailable(no),
        comm=NotAvailable(no),
        taint=NotAvailable(no),
        taint_flags=(),
        kernel_release=NotAvailable(no),
        hardware=NotAvailable(no),
        start_time=times[0] if times else untimed,
        end_time=times[-1] if times else untimed,
        start_line=head.number,
        end_line=window[end].number,
        header=head.text,
        lines=tuple((line.number, line.text) for line in own),
        context=head.context,
        panicked=False,
        signature=signature(title, frame),
        is_event=True,
        details=details,
        start_wall=wall,
        wall_zone_unknown=zone_unknown,
    )
