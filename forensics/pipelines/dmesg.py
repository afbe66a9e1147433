"""``kforensic dmesg``: read kernel logs, find and group every report, build the incident."""

from __future__ import annotations

import dataclasses
import gc
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.errors import KforensicError
from forensics.model import (
    BootScope,
    BootTime,
    Clock,
    Evidence,
    Examined,
    Finding,
    Incident,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    SourceRecord,
    Timestamp,
    TimeWindow,
)
from forensics.quoting import shown_path
from forensics.types.dmesg import OCCURRENCE_NAMES
from forensics.types.dmesg_result import DmesgResult, SourceResult
from forensics.units import iso_utc

if TYPE_CHECKING:
    from collectors.inputs import TrackedInput
    from collectors.log_identity import LogIdentity
    from detectors.dmesg.aftermath import LogReports
    from detectors.dmesg.findings import ReportGrouper
    from forensics.types.causes import Cause
    from forensics.types.dmesg import Aftermath, ReportGroup, ReportWhy
    from forensics.types.incident import Hypothesis


#: A first chunk this large is a full one (collectors.kernel_log.CHUNK_SIZE, 1 MiB, less what normalizing dropped).
_LARGE_CHUNK = 1 << 19


def scan_chunks(chunks: Iterable[bytes]) -> tuple[ReportGrouper, int]:
    """Every report and event of one input, grouped as they come, and its number of lines."""
    from detectors.dmesg.findings import ReportGrouper
    from detectors.dmesg.scanner import LogScanner
    from forensics.gcpause import gc_paused

    scanner = LogScanner()
    grouper = ReportGrouper()
    for i, chunk in enumerate(chunks):
        if (i == 0 and len(chunk) >= _LARGE_CHUNK) or i == 1:
            # An input of more than one chunk (a full first one says so, else a second): its buffers of about a chunk
            # each are made and freed at every chunk, fresh pages each time unless the C library keeps them
            # (forensics/heap.py).  A smaller log, most, does not import ctypes for it.
            from forensics.heap import keep_freed_memory

            keep_freed_memory()
        # A chunk of a report-dense log makes ~100 short-lived tuples per report (lines, frames), none
        # in a cycle: the cyclic collector, started every 700 of them, took ~15% of the CPU time on the
        # benchmark's dense log.  It is paused while a chunk is scanned.
        with gc_paused():
            for report in scanner.feed(chunk):
                grouper.add(report)
            _age_survivors()
    with gc_paused():
        for report in scanner.close():
            grouper.add(report)
        _age_survivors()
    grouper.banners.update(scanner.banners)
    grouper.boot_clocks = scanner.boot_clocks
    grouper.boot_lines = scanner.boot_lines()
    grouper.kaslr = scanner.kaslr
    grouper.command_lines = scanner.command_lines
    grouper.boot_tails = scanner.boot_tails
    grouper.suppressed, grouper.suppressed_lines = scanner.suppressed, scanner.suppressed_lines
    return grouper, scanner.lines_seen


def _age_survivors() -> None:
    """Put the objects a chunk's scan leaves (memo entries, kept reports, their parsed lines) in the oldest
    garbage-collector generation, without the young collection that would otherwise walk them all.

    The scan makes no reference cycles: a collection after scanning the benchmark's console and corpus
    inputs with the collector off finds the same ~300 objects (those of its first imports) whatever the
    input's size; the young and middle collections that walked a chunk's survivors found nothing and cost
    0.13 s of the 2 s of the corpus x4 (the document's writing among them).  Whatever cycle there were
    would be freed by the next full collection.  ``freeze`` moves every tracked object to the permanent
    generation and resets the young count; ``unfreeze`` puts them in the oldest generation.
    """
    gc.freeze()
    gc.unfreeze()


def triage_file(name: str) -> SourceResult:
    """Triage one log file (``-`` for standard input)."""
    return _triage_file(name)[0]


def _triage_file(name: str) -> tuple[SourceResult, bytes]:
    """:func:`triage_file`, with the head of the log as read (what :func:`_identities` parses of a log file)."""
    from collectors.kernel_log import open_log

    with open_log(name) as tracked:
        return _triage(tracked)


def _triage(tracked: TrackedInput, refuse: bool = True) -> tuple[SourceResult, bytes]:
    """One opened log triaged, with its head as read (``refuse``: an input without a kernel log line is refused,
    :meth:`collectors.kernel_log.TextCheck.refuse_without_kernel_line`)."""
    from collectors.kernel_log import TextCheck, log_chunks

    head = bytearray()
    check = TextCheck(tracked.source)
    grouper, lines = scan_chunks(log_chunks(tracked, head=head, check=check))
    if refuse and not grouper.groups():
        # Nothing found where nothing could be: an input with no kernel log line (another kind of text, an empty
        # file) is refused, not said to hold no problem.
        check.refuse_without_kernel_line(lines)
    return _explained(tracked.source, tracked.record(), grouper, lines), bytes(head)


def analyse_log_bytes(name: str, data: bytes, dumped: bool = False) -> DmesgResult:
    """``kforensic dmesg`` on one log held in memory, its findings citing it as ``name`` (a dump's kernel log that
    makedumpfile extracted into a temporary file, gone by now: ``name`` says how to make it again; ``dumped``: as
    :func:`analyse_logs`'s)."""
    import io

    from collectors.inputs import TrackedInput
    from collectors.log_identity import parse_identity

    # The dump's own log, however little makedumpfile got of it: what it holds is the dump's, never refused (an
    # empty one is said empty beside the dump's other findings).
    result, head = _triage(TrackedInput(name, io.BytesIO(data)), refuse=False)
    if dumped:
        result = dataclasses.replace(result, dumped=True)
    # No file to read the head of again: what the head says is given as the last result's (build_incident).
    return _merged([result], parse_identity(head))


def triage_live() -> tuple[SourceResult, LogIdentity]:
    """Triage what the kernel ring buffer holds now; with what it says of its kernel and host."""
    from collectors.kernel_log import KMSG_NAME, KmsgDumpReader

    reader = KmsgDumpReader()
    grouper, lines = scan_chunks(reader.chunks())
    return _explained(KMSG_NAME, reader.record(), grouper, lines), reader.identity()


def _explained(name: str, record: SourceRecord, grouper: ReportGrouper, lines: int) -> SourceResult:
    """One input's result with every kept report read (``explain``), the cyclic collector paused meanwhile.

    The reading makes ~100,000 short-lived records, tuples and dicts of a report-dense log, none in a cycle:
    the young collections that walked them cost ~0.04 s of the shared corpus four times over (23 of them).
    """
    from forensics.gcpause import gc_paused

    with gc_paused():
        result = source_result(name, record, grouper, lines, explain=True)
        _age_survivors()
    return result


def source_result(
    name: str, record: SourceRecord, grouper: ReportGrouper, lines: int, explain: bool = False
) -> SourceResult:
    """One input's result from the engine's grouper; with ``explain`` every kept report's body is read (why)."""
    groups = grouper.groups()
    kept = sorted((r for g in groups for r in g.kept), key=lambda r: r.start_line)
    whys: dict[int, ReportWhy] = {}
    group_causes: dict[str, Cause] = {}
    if explain and kept:  # (a log without a report, most healthy logs: no reading, nor its import, ~4 ms)
        from detectors.dmesg.findings import explain_reports, lock_cycle_causes

        whys = explain_reports(kept, grouper.kaslr)
        from detectors.dmesg.interleaved import event_stacks, interleaved_stacks, unread_facts

        if len(kept) > 1:  # facts of lines two reports interleaved in, without caller ids: not this report's
            whys = unread_facts(kept, whys)
            whys = event_stacks(kept, whys)  # a stack an event's task printed amid a report's lines: the event's
        whys = interleaved_stacks(kept, whys)  # an oops's stack amid another task's, without caller ids
        group_causes = lock_cycle_causes(kept, whys)
    return SourceResult(
        name,
        dataclasses.replace(record, boot_lines=grouper.boot_lines) if grouper.boot_lines else record,
        groups,
        [r for r in kept if not r.is_event],
        [r for r in kept if r.is_event],
        lines,
        frozenset(grouper.releases),
        grouper.first_time,
        grouper.last_time,
        grouper.boot_times,
        whys,
        group_causes,
        tuple(sorted(grouper.banners.items())),
        None if grouper.first_wall is None or grouper.last_wall is None else (grouper.first_wall, grouper.last_wall),
        tuple(grouper.wall_steps),
        tuple(grouper.time_steps),
        tuple(grouper.suppressed),
        grouper.suppressed_lines,
        tuple(grouper.boot_clocks),
        grouper.boot_time_lines,
        tuple(grouper.command_lines),
        boot_tails=tuple(grouper.boot_tails),
    )


def _identities(
    results: list[SourceResult], live: LogIdentity | None, heads: list[bytes] | None = None
) -> list[LogIdentity | None]:
    """What the heads of the log files say of their kernel and host, by result (None: not a file).

    ``live``: the ring buffer's, the last result's (:func:`analyse_logs` appends the live read last).  Only its
    own: another input that is no file (standard input, a pipe) said this machine's kernel, and "the log starts
    N s after its boot" where the ring buffer had wrapped.  ``heads``: each file's head as its triage read it
    (:func:`_triage_file`), by result; else each file's head is read again.
    """
    from collectors.log_identity import parse_identity, read_identity

    out = [
        (read_identity(r.record.path) if heads is None or i >= len(heads) else parse_identity(heads[i]))
        if Path(r.record.path).is_file()
        else None
        for i, r in enumerate(results)
    ]
    if live is not None:
        out[-1] = live
    return out


#: The printk time of a boot banner's line (``[    0.000000] Linux version ...``).
_BANNER_TIME = re.compile(r"\[\s*(\d{1,12}\.\d{1,9})\] Linux version ")


def _banner_cited(r: SourceResult, head: bytes | None) -> tuple[Evidence, ...]:
    """The boot banner that names the release of a log no report of which prints it, cited (its first banner's line,
    read again from the log's head when ``head`` is not given): what a contradiction of kernels cites for a clean log
    beside a trace of another kernel, which said nothing of it (ue22 #3)."""
    from collectors.log_identity import banner_line, read_head

    if not r.banners or not Path(r.record.path).is_file():
        return ()
    number, release = r.banners[0]
    try:
        text = banner_line(head if head is not None else read_head(r.record.path), number, release)
    except (OSError, KforensicError):  # gone since its analysis read it: nothing cited
        return ()
    if text is None:
        return ()
    # At its printk time: an input set apart keeps its contradiction on its own lane, at its own time.
    stamp = _BANNER_TIME.search(text)
    at = None if stamp is None else Timestamp(float(stamp.group(1)), Clock.MONOTONIC)
    return (Evidence(r.name, Locator(LocatorKind.LINE, number, name="boot banner"), text, timestamp=at),)


def _local_zone(r: SourceResult) -> tuple[str, ...]:
    """The zone of ``dmesg -T`` times, when a report is timed by one: the line names none, so it is read in this
    machine's (TZ) and printed in UTC; said, since the crashed host's zone may differ by hours.  The same for an ISO
    stamp without an offset, read as UTC."""
    from detectors.dmesg.lines import local_wall_stamp, naive_iso_stamp

    for rep in (*r.reports, *r.events):
        if rep.start_wall is None or not rep.lines:
            continue
        if (iso := naive_iso_stamp(rep.lines[0][1])) is not None:
            return (
                f"the time zone of its times (line {rep.start_line}: {iso}): the stamps name no offset from UTC and "
                "were read as UTC: add the host's offset if its clock was not on UTC",
            )
        if (stamp := local_wall_stamp(rep.lines[0][1])) is None:
            continue
        return (
            f"the time zone of its dmesg -T times (line {rep.start_line}: {stamp}): the crashed host's local time, "
            "which the log does not name: shown as printed (local time, zone unknown), not lined up with UTC inputs "
            "(add the host's offset from UTC to compare); dmesg -T adds the time since boot to the boot's "
            "wall time, and is off by any time suspended (dmesg(1))",
        )
    return ()


def _could_not(r: SourceResult, identity: LogIdentity | None) -> tuple[str, ...]:
    """What a log could not show: anything when empty; reports before its first line when it starts after boot."""
    # What the reading lost (a compressed log cut short: what followed the cut; the ring buffer: records overwritten
    # while it was read) is unknown, and "no findings" must not read as a verdict on it.
    cut = (f"what the reading lost: {r.record.error}",) if r.record.error else ()
    if not r.lines:
        return ("anything: the log is empty", *cut)
    # A time span across a step back of the wall clock (an NTP step, a clock set by hand, another boot's lines)
    # is not a duration: said, not computed as one.
    steps = tuple(
        f"a duration across lines {before}-{after}: the log's wall clock goes back {back:,.0f} s between those "
        "reports (a clock step, or lines of another boot or host)"
        for before, after, back in r.wall_steps[:3]
    )
    cut = (*_time_steps(r), *steps, *_local_zone(r), *_suppressed(r), *_cut_inside(r), *cut)
    if identity is None or identity.starts_after is None:
        return cut
    # The log's first lines' boot: a log whose printk time goes back later holds another boot (or time base) too.
    part = "the log's first part" if r.time_steps else "the log"
    return (
        f"reports before [{identity.starts_after:12.6f}]: {part} starts {identity.starts_after:,.0f} s after its "
        "boot, without the boot banner (its ring buffer wrapped, or it was cut)",
        *cut,
    )


def _time_steps(r: SourceResult) -> tuple[str, ...]:
    """Where the log's printk time goes back between two reports: a duration, a window or an order across it is
    not computed (forensics standards: a figure across a clock jump is flagged, never presented as fact)."""
    return tuple(
        f"a duration or order across lines {before}-{after}: "
        + (
            f"the printk time goes back from [{was:12.6f}] to [{now:12.6f}] (a new boot, a kexec, or a wrapped or "
            "merged log)"
            if now < was
            else f"a new boot begins between them ([{was:12.6f}] then [{now:12.6f}], each since its own boot)"
        )
        + ": its parts are on different clocks"
        for before, after, was, now in r.time_steps[:3]
    )


def _cut_inside(r: SourceResult) -> tuple[str, ...]:
    """The report the log ends inside of (its last line is the log's, and the report is damaged: a capture cut
    mid-report): the rest of it is not in the log, whatever merges it with another input's view of the crash."""
    cut = next((rep for rep in r.reports if rep.end_line >= r.lines and rep.corrupted), None)
    if cut is None:
        return ()
    return (
        f"the rest of the report at lines {cut.start_line}-{cut.end_line} ({cut.title}): the log ends inside it, at "
        f"line {cut.end_line} ({cut.corrupted_reason}); the console or a dump's own log holds the rest",
    )


def _suppressed(r: SourceResult) -> tuple[str, ...]:
    """The log's rate limiting (``N callbacks suppressed``): the messages it dropped are not in the log."""
    if not r.suppressed_lines:
        return ()
    cited = "; ".join(f"line {n}: {said}" for n, said in r.suppressed[:3])
    more = f" and {r.suppressed_lines - 3:,} more" if r.suppressed_lines > 3 else ""
    return (
        f"the messages rate limiting suppressed ({cited}{more}): every count of this log is a lower bound (at least)",
    )


def _untimed(results: list[SourceResult]) -> str:
    """Why reports found have no window: their times have no year (syslog's short format), or they have none."""
    from detectors.dmesg.extract import YEARLESS

    if any(rep.start_time == YEARLESS for r in results for rep in (*r.reports, *r.events)):
        # "Dec 07 07:05:23.004511 web-03 kernel:": a time, only its year (and zone) unknown; the file orders them.
        return (
            "the reports' syslog times have no year (syslog's and journalctl's short format) nor zone: no window is "
            "computed from them; the log's order orders them"
        )
    return "no report has a timestamp"


def _time_window(results: list[SourceResult]) -> TimeWindow | NotAvailable | None:
    """The window since boot of the reports, None when none has a printk time; not available when a log's printk
    time goes back (its reports are of several boots or time bases: a window across them is no span of time)."""
    firsts = [r.first_time for r in results if r.first_time is not None]
    lasts = [r.last_time for r in results if r.last_time is not None]
    if not firsts:
        return None
    stepped = next((r for r in results if r.time_steps), None)
    if stepped is not None:
        before, after, was, now = stepped.time_steps[0]
        if now >= was:
            return NotAvailable(
                f"a new boot of {stepped.name} begins between the reports at lines {before} and {after} ([{was:.6f}] "
                f"then [{now:.6f}], each since its own boot): its reports are on more than one clock"
            )
        return NotAvailable(
            f"the printk time of {stepped.name} goes back between the reports at lines {before} and {after} "
            f"([{was:.6f}] to [{now:.6f}]): its reports are on more than one clock (a new boot, a kexec, or a "
            "wrapped or merged log)"
        )
    return TimeWindow(Timestamp(min(firsts)), Timestamp(max(lasts)))


def build_incident(
    results: list[SourceResult], live: LogIdentity | None = None, heads: list[bytes] | None = None
) -> Incident:
    """All findings of all inputs as one incident (``live``: what the last of ``results``, one that is no file,
    says of its kernel: the ring buffer's read, a log held in memory; ``heads``: the heads of the first results'
    log files as their triage read them)."""
    return ranked_incident(results, live, heads)[0]


def ranked_incident(
    results: list[SourceResult], live: LogIdentity | None = None, heads: list[bytes] | None = None
) -> tuple[Incident, tuple[Hypothesis, ...]]:
    """:func:`build_incident` with its findings' ranked hypotheses: the boot time is of the boot of the report the
    incident is about, the one the best-ranked hypothesis names when no crash ended a boot (:func:`told_line`)."""
    from detectors.dmesg.findings import explained_finding, release_lines, report_boot
    from detectors.incident.hypotheses import rank_hypotheses

    findings = []
    for r in results:
        # A log of several boots (banners, printk time back at 0): each finding says which boot it is of.
        boots = {g.first.start_line: report_boot(g.first) for g in r.groups}
        several = len(set(boots.values())) > 1
        # Where a report of the same boot panicked at or after a report, the machine went down after it: no step of
        # that report asks the live machine (11's first hung task, which khungtaskd reported before the one it
        # panicked on).
        went_down = last_panics(r.groups, boots)
        from detectors.dmesg.aftermath import in_order

        ordered = in_order((*r.reports, *r.events))
        mine = [
            explained_finding(
                r.name,
                g,
                r.whys.get(g.first.start_line),
                r.group_causes.get(g.first.signature),
                r.suppressed_lines > 0,
                boots[g.first.start_line] if several else None,
                _aftermath(r, g, ordered),
                _oom_panic(r, g),
                r.lines,
                down=g.first.start_line <= went_down.get(boots[g.first.start_line], 0),
            )
            for g in r.groups
        ]
        if len(mine) > 1:  # a report raised while another was printed follows from it (its consequence)
            from detectors.dmesg.interrupted import link_interruptions

            mine = link_interruptions(r.name, r.groups, mine)
            from detectors.dmesg.afteroops import link_after_oops  # an oops on a kernel an oops tainted D

            mine = link_after_oops(r.name, r.groups, mine)
        findings += mine
    releases = {x for r in results for x in r.releases}
    reported = len(releases)
    # A log of two boots of different kernels (a release per boot banner) names no one kernel, even where only one
    # boot's reports print their release: its OOM was said to be of the other boot's kernel.
    releases |= {release for r in results for _, release in r.banners}
    since_boot = _time_window(results)
    walls = [r.walls for r in results if r.walls is not None]
    # dmesg -T's local times (or ISO stamps without an offset): a window of them is of a zone not known.
    local = any(rep.wall_zone_unknown for r in results for rep in (*r.reports, *r.events))
    window: TimeWindow | NotAvailable = (
        since_boot
        if since_boot is not None
        # Logs stamped with dated wall-clock prefixes only: the window on the wall clock (a log of printk times
        # beside them keeps the window since boot above: one clock per window).
        else TimeWindow(
            Timestamp(min(w[0] for w in walls), Clock.WALL, local),
            Timestamp(max(w[1] for w in walls), Clock.WALL, local),
        )
        if walls
        else NotAvailable(_untimed(results) if findings else "no report was found")
    )
    identities = _identities(results, live, heads)
    named = [i for i in identities if i is not None]
    if not releases:
        releases = {r for i in named for r in i.releases}  # the boot banner, when no report names it
    hosts = {h for i in named for h in i.hosts}
    release: str | NotAvailable = (
        releases.pop()
        if len(releases) == 1
        else NotAvailable(
            "the reports disagree on the kernel release"
            if reported > 1
            else f"the log holds boots of {len(releases)} kernel releases ({', '.join(sorted(releases))})"
            if releases
            else "no report or boot banner names the release"
        )
    )
    host: str | NotAvailable = (
        hosts.pop()
        if len(hosts) == 1
        else NotAvailable(
            f"the log's syslog lines name {len(hosts)} hosts"
            if hosts
            else "the log has no syslog prefixes naming the host (dmesg output does not)"
        )
    )
    hypotheses = rank_hypotheses(tuple(findings))
    incident = Incident(
        host=host,
        kernel_release=release,
        window=window,
        sources=tuple(_each_boot_dated(r) for r in results),
        findings=tuple(findings),
        tool_version=__version__,
        boot_time=_boot_time(_readings(results), told_line(findings, hypotheses)),
        examined=tuple(
            Examined(
                f"kernel log {r.name}: {r.lines:,} lines, {len(r.reports)} report(s) and {len(r.events)} event(s) kept",
                (
                    "kernel reports: oopses, BUGs, warnings, lockups, hung tasks, OOM kills, RCU stalls, sanitizers; "
                    "events: allocation failures (page allocator and vmalloc, from warn_alloc's header), "
                    "network drops (nf_conntrack table full, TCP out of memory), RT throttling",
                ),
                _could_not(r, identity),
                named_by=release_lines(r.name, r.groups)
                or _banner_cited(r, heads[i] if heads and i < len(heads) else None),
            )
            for i, (r, identity) in enumerate(zip(results, identities, strict=True))
        ),
    )
    return incident, hypotheses


def last_panics(groups: Sequence[ReportGroup], boots: dict[int, str]) -> dict[str, int]:
    """The first line of the last report of each boot (``boots``: by each group's first line) that a group that
    panicked lists: a report at or before it went down with its boot.  One look-up a group, where each group's test
    went through every panicked group (~8,500 steps of the corpus x4)."""
    out: dict[str, int] = {}
    for g in groups:
        if g.panicked:
            boot, at = boots[g.first.start_line], g.last.start_line
            out[boot] = max(at, out.get(boot, at))
    return out


def _aftermath(r: SourceResult, group: ReportGroup, ordered: LogReports) -> Aftermath | None:
    """What the log shows followed the group's last report, when the kernel printed no panic line for a critical one
    (detectors/dmesg/aftermath.py); None for the others.  ``ordered``: the log's reports and events as aftermath reads
    them (aftermath.in_order, once per log)."""
    from forensics.types.dmesg import group_judgement

    last = group.last
    if group.panicked or group_judgement(group)[0] is not Severity.CRITICAL:
        return None
    from detectors.dmesg.aftermath import aftermath

    # A dump's own log: the dump was written after its last critical report (kdump's), not after an earlier one.
    dumped = r.dumped and all(
        g.last.start_line <= last.start_line for g in r.groups if group_judgement(g)[0] is Severity.CRITICAL
    )
    return aftermath(last, r.record.boot_lines, r.command_lines, r.lines, dumped, ordered, r.boot_tails)


def _oom_panic(r: SourceResult, group: ReportGroup) -> tuple[int, str] | None:
    """The panic line right after an OOM group's last report (panic_on_oom), None for the others."""
    from forensics.types.dmesg import ReportKind

    if group.first.kind is not ReportKind.OOM:
        return None
    from detectors.dmesg.aftermath import oom_panic

    return oom_panic(group.last, r.reports, r.record.boot_lines)


def analyse_logs(names: list[str], live: bool, dumped: bool = False) -> DmesgResult:
    """``kforensic dmesg``: triage each log (and the live ring buffer), merge them, rank the hypotheses (``dumped``:
    the logs are a crash dump's own, kdump's beside it: their last boot went down)."""
    triaged = [_triage_file(n) for n in names]
    results = [dataclasses.replace(result, dumped=True) if dumped else result for result, _ in triaged]
    live_identity = None
    if live:
        result, live_identity = triage_live()
        results.append(result)
    return _merged(results, live_identity, [head for _, head in triaged])


def _merged(results: list[SourceResult], live: LogIdentity | None, heads: list[bytes] | None = None) -> DmesgResult:
    """The triaged inputs as one result: their incident (:func:`build_incident`) and its ranked hypotheses."""
    from forensics.gcpause import gc_paused

    # The findings read the kept reports' lines: a remembered report's repeat makes them now (~1,000 of the
    # shared corpus four times over, some 100,000 tuples, none in a cycle); a collection of the oldest
    # generation they set off walked every object of the run for nothing (~0.1 s).
    with gc_paused():
        incident, hypotheses = ranked_incident(results, live, heads)
    return DmesgResult(tuple(results), incident, hypotheses)


#: What a boot clock reading of a log (LogScanner.boot_clocks) read, for the boot time's basis.
_CLOCK_READ = {
    "rtc": "the RTC's time the kernel set its clock to, less that line's printk time",
    "banner": "the boot banner's dated time, less its printk time",
}


def told_line(
    findings: list[Finding], hypotheses: tuple[Hypothesis, ...] = ()
) -> tuple[str, tuple[int, ...], str] | None:
    """Where the report the incident is about is: the lines its log cites (log, lines, the first first; title) of the
    crash that ended its boot, else of the problem the best-ranked hypothesis names (the verdict's main problem,
    :func:`detectors.incident.hypotheses.main_problem`), else of the worst finding (the order of
    :meth:`Incident.sorted_findings`); None without one.

    By severity alone a later high report of another boot was the one the boot time dated where hypothesis 1, the
    verdict's main problem, named a medium WARNING of the boot before it."""
    if not findings:
        return None
    from detectors.incident.hypotheses import ranked_by_finding
    from detectors.incident.timeline import ends_the_boot
    from forensics.model import PROBLEM

    named = ranked_by_finding(hypotheses)

    def likely(f: Finding) -> float:
        """How likely the best hypothesis naming a problem is (as likely: the worse first, as main_problem has it)."""
        h = named.get(f.id)
        return h.confidence if h is not None and f.severity >= PROBLEM else -1.0

    ranked = sorted(
        findings, key=lambda f: (not ends_the_boot(f), -likely(f), -f.severity.rank, -f.confidence, f.title)
    )
    for f in ranked:
        cited = [ev for ev in f.evidence if ev.locator.kind is LocatorKind.LINE]
        # Where the report is printed (each repeat's lines), not every line it cites: its "after it" fact cites the
        # kdump kernel's boot, whose RTC line was pooled with the crashed boot's (01-null-member: ±3.98 s, and the
        # dump's CRASHTIME ±2 s won over the log's ±1 s of the same boot).
        printed = [ev for ev in cited if (ev.locator.name or "").startswith(OCCURRENCE_NAMES)]
        cited = printed or cited
        if cited:
            log = cited[0].source
            return log, tuple(ev.locator.start for ev in cited if ev.source == log), f.title
    return None


def told_report(result: DmesgResult) -> tuple[str, tuple[int, ...], str] | None:
    """Where the report the logs' incident is about is (:func:`told_line`: log, its lines, title): the log whose boot
    the report tells, and whose boot time it gives."""
    from detectors.incident.hypotheses import rank_hypotheses

    findings = result.incident.findings
    return told_line(list(findings), result.hypotheses or rank_hypotheses(findings))


def window_without(result: DmesgResult, apart: Collection[str]) -> Incident:
    """The logs' incident with the window since boot of the logs not in ``apart`` only (other boots' logs): the two
    console logs of two boots made "[2.206535] – [2.212356]", a span across two boots' clocks.  Unchanged when no
    log is apart, all are, or the window is not one since boot."""
    incident = result.incident
    kept = [r for r in result.sources if r.name not in apart]
    window = incident.window
    since_boot = isinstance(window, NotAvailable) or window.start.clock is Clock.MONOTONIC
    if len(kept) in (0, len(result.sources)) or not since_boot:
        return incident
    trimmed = _time_window(kept)
    return incident if trimmed is None else dataclasses.replace(incident, window=trimmed)


def own_boot_times(result: DmesgResult) -> dict[str, BootTime]:
    """Each log's own boot time, where its own lines date it: of the boot of its own told report, from its readings
    only (:func:`_boot_time`).  A log of another boot than the one told is converted with it, never with another
    log's: the second of two console logs had its crash dated with the first log's RTC line, 2 min 38 s off."""
    from detectors.incident.hypotheses import rank_hypotheses

    out = {}
    for r in result.sources:
        findings = [f for f in result.incident.findings if f.evidence and f.evidence[0].source == r.name]
        found = _boot_time(_readings([r]), told_line(findings, rank_hypotheses(tuple(findings))))
        if isinstance(found, BootTime):
            out[r.name] = found
    return out


def _each_boot_dated(r: SourceResult) -> SourceRecord:
    """The log's record with when each of its boots began, where that boot's own readings date it (a log of several
    boots only): the report puts each boot other than the told one on a lane of its own, on its own clock, from the
    record alone (a findings file's too: ``report --from`` renders what the run on the log renders)."""
    record = r.record
    if len(record.boot_lines) < 2 and not (record.boot_lines and record.boot_lines[0] > 1):
        return record  # (one boot: the incident's boot time is its)
    by_boot: dict[int, list[_Reading]] = {}
    for reading in _readings([r]):
        if reading[2]:  # (an estimate of an older writer's, of no known line: of no known boot)
            by_boot.setdefault(record.boot_of(reading[2]), []).append(reading)
    dated = (_boot_time(readings) for _, readings in sorted(by_boot.items()))
    times = tuple(t for t in dated if isinstance(t, BootTime) and t.holds_for is not None)
    return dataclasses.replace(record, boot_times=times) if times else record


#: A reading of when a boot began: (log, its record, line, epoch seconds of the boot, what was read: a key of
#: :data:`_CLOCK_READ`).
_Reading = tuple[str, SourceRecord, int, float, str]


def _readings(results: list[SourceResult]) -> list[_Reading]:
    """Every input's readings of when its boots began: its boot clocks (the RTC's, a dated banner's), then its reports
    whose lines carry both a dated wall time and a printk time, each at its first line."""
    out: list[_Reading] = [(r.name, r.record, *c) for r in results for c in r.boot_clocks]
    for r in results:
        # (an input of an older writer, or one built without them: its estimates without lines are of no known boot)
        lines = r.boot_time_lines if len(r.boot_time_lines) == len(r.boot_times) else [0] * len(r.boot_times)
        out += [(r.name, r.record, line, t, "syslog") for line, t in zip(lines, r.boot_times, strict=True)]
    return out


def _boot_time(
    readings: list[_Reading], told: tuple[str, tuple[int, ...], str] | None = None
) -> BootTime | NotAvailable:
    """When the kernel booted: from the boot's own wall-clock readings (``readings``: the RTC's time the kernel set its
    clock to, a boot banner's dated prefix, and report lines that carry both a dated wall time and a printk time), when
    they agree within a minute; else unknown, with why.

    A reading holds for the boot of the log it was read in (its :class:`BootScope`): of the boot of the report the
    incident is about (``told``: log, line, title, :func:`told_line`), not of another boot of the log, which began at
    another time; a report repeated in boots that began apart leaves it unknown.  The syslog-dated lines' estimates
    too: pooled over a log's boots, two boots two hours apart left it unknown ("several boots?"), and a boot without
    dated lines was dated by the boot before it."""
    if told is not None and readings:
        log, lines, title = told
        where = f"{title} (line {lines[0]} of {shown_path(log)})"
        of = [c for c in readings if c[0] == log]
        if of:
            record = of[0][1]
            boots = {record.boot_of(n) for n in lines}  # the boots the report is printed in
            own = [c for c in of if record.boot_of(c[2]) in boots]
            if not any(record.boot_of(c[2]) == record.boot_of(lines[0]) for c in own):
                return NotAvailable(
                    f"the log's {_said_readings(of)} of another boot than that of {where}, whose start the log does "
                    "not date"
                )
            readings = own
        else:
            # The log told dates nothing: another log's dated lines may be of its boot (a console log beside its boot's
            # kern.log), pooled as before; another log's boot clock reading is of a boot not placed in the log told.
            dated = [c for c in readings if c[4] == "syslog"]
            if not dated:
                return NotAvailable(
                    f"the boot clock readings ({'; '.join(_cited(c) for c in readings[:3])}) are of other logs than "
                    f"that of {where}, which dates no boot"
                )
            readings = dated
    estimates = sorted(c[3] for c in readings)
    if not estimates:
        return NotAvailable(
            "no log line carries both a dated wall-clock time and a printk time, nor the RTC's time the kernel set "
            "its clock to at boot"
        )
    clocks = [c for c in readings if c[4] != "syslog"]
    if estimates[-1] - estimates[0] > 60:
        if len({round(c[3]) for c in clocks}) > 1:
            said = "; ".join(f"{c[0]} line {c[2]}: {iso_utc(c[3])}" for c in clocks[:3])
            return NotAvailable(f"the log's boots began at different times ({said}): which boot is not told")
        return NotAvailable("the logs' wall and printk times disagree by more than a minute (several boots?)")
    # Syslog times have whole seconds at best, the RTC's too, and printk time drifts from the wall clock.
    spread = estimates[-1] - estimates[0]
    read = [f"{_cited(c)}: {_CLOCK_READ[c[4]]}" for c in clocks[:2]]
    dated = [c for c in readings if c[4] == "syslog"]
    if dated:
        read.append(
            f"kernel log: wall time minus the printk time ({len(dated)} report(s), from {_cited(dated[0])})"
            if dated[0][2]
            else "kernel log: wall time minus the printk time"
        )
    basis = "; ".join(read)
    scopes = {(c[0], c[1].boot_of(c[2]), c[1].next_boot(c[2])) for c in readings}
    scope = BootScope(*scopes.pop()) if len(scopes) == 1 and readings[0][2] else None
    if scope is not None and len(readings[0][1].boot_lines) > 1:
        ends = "the log's end" if scope.end is None else str(scope.end - 1)
        basis += f"; it dates the boot of lines {max(scope.first, 1)} to {ends} only, not the log's other boots"
    return BootTime(estimates[len(estimates) // 2], 1.0 + spread, basis, scope)


def _cited(reading: _Reading) -> str:
    return f"{shown_path(reading[0])} line {reading[2]}"


def _said_readings(readings: list[_Reading]) -> str:
    """A log's readings of when its boots began, as an unknown boot time names them: "boot clock reading (LOG line
    14) is", "syslog-dated lines (LOG line 3, 40) are"."""
    clocks = [c for c in readings if c[4] != "syslog"]
    dated = [c for c in readings if c[4] == "syslog"]
    said = []
    if clocks:
        said.append(f"boot clock reading{'s' if len(clocks) > 1 else ''} ({'; '.join(_cited(c) for c in clocks[:3])})")
    if dated:
        more = f" and {len(dated) - 3} more" if len(dated) > 3 else ""
        lines = ", ".join(str(c[2]) for c in dated[:3])
        said.append(f"syslog-dated lines ({shown_path(dated[0][0])} line {lines}{more}, wall time less printk time)")
    return " and ".join(said) + (" is" if len(said) == 1 and clocks and len(clocks) == 1 else " are")
