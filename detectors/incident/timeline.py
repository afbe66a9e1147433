"""One time axis per clock for the findings of every source, and the verdict told in short sentences.

Kernel logs and dumps count seconds since boot (monotonic); samples and
journal lines carry wall-clock times.  With the boot time known, both go on
one wall-clock axis and every time carries the uncertainty of the
conversion; without it, each clock keeps its own lane.  A trace keeps its own
lane always: its clock (ftrace ``local``/``global``, perf) is not printk's,
and the trace may come from another boot.

Each finding is one row: an interval from its first to its last timestamped
evidence on its lane's clock (of the evidence that bounds what its title
states, for a kind whose later evidence cites what it caused:
:data:`INTERVAL_EVIDENCE`).  An input whose times since boot lie after the
crash of the boot the dump and log describe cannot come from that boot: it is
named by :func:`foreign_sources` (the correlator turns that into a
contradiction finding) and its lane says so; so is any other input a contradiction
names (another host, another kernel release: :func:`elsewhere_inputs`), on a lane
of its own, never a step of the crashed boot's story.
"""

from __future__ import annotations

import itertools
from bisect import bisect_right
from collections.abc import Mapping, Sequence

from detectors.incident.boot_identity import OtherBoot
from forensics.model import (
    PROBLEM,
    BootTime,
    Clock,
    Evidence,
    Finding,
    FindingKind,
    LocatorKind,
    NotAvailable,
    Severity,
    Timestamp,
)
from forensics.types.deliberate import FORCED
from forensics.types.dmesg import OCCURRENCE_NAMES
from forensics.types.incident import (
    BOOT_LANE,
    INPUT_LANE,
    TRACE_LANE,
    UPTIME_LANE,
    WALL_LANE,
    ClockJump,
    Lane,
    LaneKey,
    TimelineEvent,
)
from forensics.units import iso_utc, utc_datetime

# A log or dump line can be printed a little after the crash report starts (the panic's own lines).
_AFTER_CRASH_SLACK = 2.0


def _is_trace(ev: Evidence) -> bool:
    return ev.locator.kind is LocatorKind.EVENT or (ev.timestamp is not None and ev.timestamp.clock is Clock.TRACE)


def boot_lane_name(source: str, other: OtherBoot) -> str:
    """The lane of another boot of a log of the told boot: the log and where that boot starts in it."""
    return f"{source} (its boot from line {other.first})"


def split_boots(split: Mapping[str, Sequence[OtherBoot]] | None) -> tuple[dict[str, str], dict[str, BootTime]]:
    """The lanes of the other boots of logs of the told boot (``split``: their boots a check separates, by log): why
    each is another boot, and its own boot time where its RTC line gives it (its lines only)."""
    why: dict[str, str] = {}
    began: dict[str, BootTime] = {}
    for source, others in (split or {}).items():
        for other in others:
            name = boot_lane_name(source, other)
            why[name] = other.why
            if other.began is not None:
                began[name] = other.began
    return why, began


def _within_boots(
    jumps: dict[str, tuple[ClockJump, ...]], split: Mapping[str, Sequence[OtherBoot]]
) -> dict[str, tuple[ClockJump, ...]]:
    """The jumps of each log bar those at a start or end of its boots on lanes of their own (``split``): the rows
    either side are on two lanes, each on its own clock (kept, the told boot's lane began with a "clock jump" row
    with no row above it)."""
    out = {}
    for source, found in jumps.items():
        bounds = {b for o in split.get(source, ()) for b in (o.first, o.end) if b is not None}
        kept = tuple(j for j in found if not any(j.before < b <= j.after for b in bounds))
        if kept:
            out[source] = kept
    return out


def _lane_key(
    ev: Evidence,
    ts: Timestamp,
    boot: BootTime | NotAvailable,
    elsewhere: dict[str, str],
    unsure: Mapping[str, str] = {},  # (read only)
    split: Mapping[str, Sequence[OtherBoot]] = {},  # (read only)
) -> LaneKey:
    """A trace's own lane; an input not of the crashed boot (another boot, host or kernel), or not known to be of it
    (``unsure``), on its own, unless a trace; a line of another boot of a log of the told boot (``split``) on that
    boot's own; else the boot's clock."""
    if _is_trace(ev):
        return LaneKey(TRACE_LANE, ev.source)
    if ev.source in split and ev.locator.kind is LocatorKind.LINE:
        line = ev.locator.start
        other = next((o for o in split[ev.source] if o.first <= line and (o.end is None or line < o.end)), None)
        if other is not None:
            return LaneKey(INPUT_LANE, boot_lane_name(ev.source, other))
    if ev.source in elsewhere or ev.source in unsure or ts.zone_unknown:  # (a local time of no known zone: no clock)
        return LaneKey(INPUT_LANE, ev.source)
    if isinstance(boot, BootTime):
        return LaneKey(BOOT_LANE)
    return LaneKey(WALL_LANE if ts.clock is Clock.WALL else UPTIME_LANE)


def ends_the_boot(f: Finding) -> bool:
    """The dump's crash, or a kernel log's report of the crash that ended its boot: one the kernel panicked on
    (critical), or a crash requested with sysrq (low against FORCED, forensics/types/dmesg.py group_judgement)."""
    return f.kind is FindingKind.CRASH or (
        f.kind.from_kernel_log and (f.severity is Severity.CRITICAL or f.baseline == FORCED)
    )


def crash_uptime(findings: tuple[Finding, ...]) -> float | None:
    """When the boot the dump and the log describe ended: the crash's last time since boot, if any."""
    times = [
        ev.timestamp.seconds
        for f in findings
        if ends_the_boot(f)
        for ev in f.evidence
        if ev.timestamp is not None and ev.timestamp.clock is Clock.MONOTONIC and not _is_trace(ev)
    ]
    return max(times) if times else None


def foreign_sources(findings: tuple[Finding, ...]) -> dict[str, tuple[Evidence, float]]:
    """Inputs that cannot belong to the crashed boot: all their times since boot are after the crash.

    Returns, per such input, its earliest evidence and the crash's time since boot.
    A kernel that crashed at 100 s after boot never reached 797 s: a trace or log
    whose times start there was recorded in another boot (or on a clock that does
    not count from boot), so its times cannot be put next to the crash.
    """
    crash_sources = {ev.source for f in findings if ends_the_boot(f) for ev in f.evidence}
    if {ev.source for f in findings for ev in f.evidence} <= crash_sources:
        return {}  # every input is one a crash is read from (one log: its ~5,000 pieces of evidence not each looked at)
    end = crash_uptime(findings)  # (after the test above, which needs no time: ~0.3 ms of the corpus x4's log)
    if end is None:
        return {}
    earliest: dict[str, Evidence] = {}
    for f in findings:
        for ev in f.evidence:
            ts = ev.timestamp
            if ts is None or ts.clock is not Clock.MONOTONIC or ev.source in crash_sources:
                continue
            seen = earliest.get(ev.source)
            if seen is None or (seen.timestamp is not None and ts.seconds < seen.timestamp.seconds):
                earliest[ev.source] = ev
    return {
        source: (ev, end)
        for source, ev in sorted(earliest.items())
        if ev.timestamp is not None and ev.timestamp.seconds > end + _AFTER_CRASH_SLACK
    }


def elsewhere_inputs(findings: tuple[Finding, ...]) -> dict[str, str]:
    """Inputs that cannot belong to the crashed boot, with why: a contradiction names them (``other host``, ``other
    boot``: another kernel), else their times since boot lie after the crash (:func:`foreign_sources`).  A trace of
    another kernel and host was "cannot come from the crashed boot: its times start at 7633.691 s since boot" where
    its release, set apart first, says it outright (review ue23 #12)."""
    out: dict[str, str] = {}
    for f in findings:
        if f.kind is not FindingKind.CONTRADICTION:
            continue
        if (other := f.fact("other boot")) is not None and (why := f.fact("set apart because")) is not None:
            out.setdefault(str(other), str(why))  # a boot check (detectors/incident/boot_identity.py)
        elif (host := f.fact("other host")) is not None and f.fact("host") is not None:
            out.setdefault(str(host), f"it comes from host {f.fact('host')}, not {f.fact('crashed host')}")
        elif (other := f.fact("other boot")) is not None and f.fact("kernel") is not None:
            home = f.fact("crashed kernel of") or "the dump"
            out.setdefault(str(other), f"it names kernel {f.fact('kernel')}, {home} {f.fact('crashed kernel')}")
        elif (other := f.fact("other boot")) is not None and f.fact("crash at") is not None:
            out.setdefault(
                str(other), f"its times start at {f.fact('starts at')}, after the crash at {f.fact('crash at')}"
            )
    for source, (ev, end) in foreign_sources(findings).items():
        assert ev.timestamp is not None
        out.setdefault(
            source, f"its times start at {ev.timestamp.seconds:.3f} s since boot, after the crash at {end:.3f} s"
        )
    return out


def told_boot(crashed: bool) -> str:
    """How sentences name the boot the report tells: "the crashed boot", or "the boot" of crash-free inputs."""
    return "the crashed boot" if crashed else "the boot this report tells"


def _lane_of(
    key: LaneKey,
    boot: BootTime | NotAvailable,
    elsewhere: dict[str, str],
    on_wall: bool,
    crashed: bool = True,
    profiles: frozenset[str] = frozenset(),
    local: bool = False,
    own: Mapping[str, BootTime] | None = None,
    unsure: str | None = None,
) -> Lane:
    """``profiles``: the sources of profile findings (perf's samples, on perf's clock: a lane as a trace's);
    ``local``: the lane's times are wall-clock times of a zone the log does not name (``dmesg -T``); ``own``: the
    boot times of inputs of other boots (:func:`build_timeline`)."""
    source = key.source
    if key.clock == TRACE_LANE and source in profiles:
        label = f"profile {source}: perf's clock (seconds since boot of the recorded kernel)"
        return Lane(key, f"Profile {source}", label, False, elsewhere.get(source), noun="profile")
    if key.clock == TRACE_LANE:
        label = f"trace {source}: its own clock (seconds since boot of the traced kernel)"
        return Lane(key, f"Trace {source}", label, False, elsewhere.get(source))
    if key.clock == INPUT_LANE:
        against = "the crashed boot's" if crashed else "those of the boot this report tells"
        began = own.get(source) if own is not None and on_wall else None
        why = f" (its boot identity is unknown: {unsure.removeprefix('unconfirmed: ')})" if unsure else ""
        if began is not None:  # (its times since boot, converted with its own boot's reading)
            label = (
                f"{source}: wall clock (UTC); its times since boot converted with its own boot at {iso_utc(began.wall)}"
                f" ±{began.uncertainty:.1f} s ({began.basis}), not with {against}{why}"
            )
            return Lane(key, f"Input {source}", label, True, elsewhere.get(source), began=began, unsure=unsure)
        # (dmesg -T's local times were labelled "seconds since boot of its kernel")
        clock = (
            "wall clock (UTC)"
            if on_wall
            else "local wall-clock time of a zone the log does not name, as printed"
            if local
            else "seconds since boot of its kernel"
        )
        label = f"{source}: its own times ({clock}), not ordered against {against}{why}"
        return Lane(key, f"Input {source}", label, on_wall, elsewhere.get(source), unsure=unsure)
    if key.clock == BOOT_LANE:
        assert isinstance(boot, BootTime)
        when = iso_utc(round(boot.wall))  # rounded, as the times converted with it (forensics/types/incident.py)
        return Lane(key, "Boot (wall clock)", f"wall clock (UTC); times since boot converted with the boot at {when} ±"
                    f"{boot.uncertainty:.1f} s ({boot.basis})", True, began=boot)  # fmt: skip
    if key.clock == WALL_LANE:
        return Lane(key, "Wall clock", "wall clock (UTC)", True)
    return Lane(
        key, "Since boot", "seconds since boot (the boot time is unknown: not converted to wall-clock time)", False
    )


def timeline_lanes(events: tuple[TimelineEvent, ...], findings: tuple[Finding, ...], boot: BootTime | NotAvailable,
                   crashed: bool = True, own: Mapping[str, BootTime] | None = None,
                   unsure: Mapping[str, str] | None = None,
                   split: Mapping[str, Sequence[OtherBoot]] | None = None) -> tuple[Lane, ...]:  # fmt: skip
    """The lanes the events use, in the timeline's order (``crashed``: an input of the boot told shows a crash;
    ``own``, ``unsure``: the boot times of inputs of other boots, the inputs not known to be of the told one,
    :func:`build_timeline`)."""
    why, began = split_boots(split)
    elsewhere = {**elsewhere_inputs(findings), **why}
    own = {**(own or {}), **began}
    keys = dict.fromkeys(e.lane for e in events)
    profiles = frozenset(ev.source for f in findings if f.kind is FindingKind.PROFILE for ev in f.evidence)
    # (an input lane is on its own boot's clock when one of its times since boot was converted with it)
    dated = {e.lane for e in events if e.wall is not None and e.when.clock is Clock.MONOTONIC}
    return tuple(_lane_of(k, boot, elsewhere, any(e.wall is not None for e in events if e.lane == k), crashed,
                          profiles, any(e.when.zone_unknown for e in events if e.lane == k),
                          own if k in dated else None, (unsure or {}).get(k.source) if k.clock == INPUT_LANE else None)
                 for k in keys)  # fmt: skip


def _lane_rank(key: LaneKey) -> tuple[int, str]:
    """The boot's clocks first, then the traces' and other inputs' lanes in the order of their keys' text."""
    order = {BOOT_LANE: 0, WALL_LANE: 1, UPTIME_LANE: 2}
    return (order.get(key.clock, 3), str(key))


#: A printk time lower than the one of the line before it by more than this is a jump of the log's clock, not two
#: CPUs' lines stored a few milliseconds out of order (detectors/dmesg/findings.py TIME_STEP_SECONDS, the same rule).
JUMP_SECONDS = 1.0


def clock_jumps(
    findings: tuple[Finding, ...], boots: Mapping[str, Sequence[int]] | None = None
) -> dict[str, tuple[ClockJump, ...]]:
    """Where, in each source's line order, the printk times its findings cite go back, or a new boot begins between
    two of them (:class:`ClockJump`).

    A log holding a second boot (its banner, or a time back at 0 without it), a kexec or a clock reset counts from
    another zero after the jump: [12.5] after [3600.0] is not earlier.  Read from the cited lines themselves, so a
    log read by any input (``--dmesg``, a findings file) and a dump's own log say it alike; and from the first lines
    of the boots of each source (``boots``: its record's ``boot_lines``): [5000.0] in the boot after [100.0]'s is not
    4,900 s later.
    """
    boots = boots or {}
    points: dict[str, list[tuple[int, float]]] = {}
    for f in findings:
        for ev in f.evidence:
            ts = ev.timestamp
            if ts is None or ts.clock is not Clock.MONOTONIC or ev.locator.kind is not LocatorKind.LINE:
                continue
            points.setdefault(ev.source, []).append((ev.locator.start, ts.seconds))
    out = {}
    for source, cited in points.items():
        cited.sort()
        starts = boots.get(source, ())
        jumps = []
        for (before, was), (after, now) in itertools.pairwise(cited):
            at = bisect_right(starts, after) - 1  # the last boot that starts at or before ``after``
            boot = starts[at] if at >= 0 and starts[at] > before else None
            if boot is not None or now < was - JUMP_SECONDS:
                jumps.append(ClockJump(source, before, after, was, now, boot))
        if jumps:
            out[source] = tuple(jumps)
    return out


def _segment(ev: Evidence, jumps: dict[str, tuple[ClockJump, ...]]) -> ClockJump | None:
    """The jump the segment of ``ev``'s source it stands in starts at (None: the source's first segment)."""
    if ev.locator.kind is not LocatorKind.LINE:
        return None
    return next((j for j in reversed(jumps.get(ev.source, ())) if ev.locator.start >= j.after), None)


def _dated(ev: Evidence, boot: BootTime, jump: ClockJump | None, segment: int) -> bool:
    """Whether ``ev``'s time since boot is converted with ``boot``: a line of the boot it was read in
    (:attr:`BootTime.holds_for`), on that boot's first clock (no jump within it); without a scope, a time before any
    jump of its log (after one, which boot or clock it is of is not known)."""
    scope = boot.holds_for
    if scope is None or ev.source != scope.source or ev.locator.kind is not LocatorKind.LINE:
        return not segment
    return scope.covers(ev.source, ev.locator.start) and (jump is None or jump.before < scope.first)


def _event(
    finding: Finding,
    boot: BootTime | NotAvailable,
    elsewhere: dict[str, str],
    jumps: dict[str, tuple[ClockJump, ...]] | None = None,
    own: Mapping[str, BootTime] | None = None,
    unsure: Mapping[str, str] | None = None,
    split: Mapping[str, Sequence[OtherBoot]] | None = None,
) -> TimelineEvent | None:
    """The finding as one interval on the lane of its first timestamped evidence that can be converted, in the clock
    segment of its first evidence (``jumps``: :func:`clock_jumps`; ``own``: the boot times of inputs set apart, each
    read from its own lines, by lane; ``unsure``: the inputs whose boot identity is unconfirmed, on lanes of their own;
    ``split``: the other boots of logs of the told boot, each on a lane of its own)."""
    by_lane: dict[LaneKey, list[tuple[int, float, Timestamp, Evidence, ClockJump | None, bool]]] = {}
    jumps = jumps or {}
    own = own or {}
    evidence = finding.evidence
    if finding.kind is FindingKind.CONTRADICTION and any(e.source in elsewhere for e in evidence):
        # An input set apart is no event of the crash: its contradiction sits in that input's lane, at the input's
        # own time, or nowhere (the lane's label states it); it was an "instant" at the crash, cited by the Oops.
        evidence = tuple(e for e in evidence if e.source in elsewhere)
    evidence = evidence[: INTERVAL_EVIDENCE.get(finding.kind, len(evidence))]
    for ev in evidence:
        ts = ev.timestamp
        if ts is None:
            continue
        key = _lane_key(ev, ts, boot, elsewhere, unsure or {}, split or {})
        jump = _segment(ev, jumps)
        segment = 0 if jump is None else jumps[jump.source].index(jump) + 1
        # One axis: wall seconds on the boot lane, the source's own seconds elsewhere.  A time since boot after a
        # jump of its log's printk clock is not converted with the boot time: which boot (or clock) that time is
        # of is not known (it is shown as printed, since its clock's zero).  An input of another boot is converted
        # with its own boot time only (``own``), never the told boot's.
        clock = boot if key.clock == BOOT_LANE else own.get(key.source) if key.clock == INPUT_LANE else None
        if key.clock == INPUT_LANE and ts.clock is not Clock.MONOTONIC:
            clock = None
        dated = isinstance(clock, BootTime) and _dated(ev, clock, jump, segment)
        at = clock.to_wall(ts) if dated and isinstance(clock, BootTime) else ts.seconds
        by_lane.setdefault(key, []).append((segment, at, ts, ev, jump, dated))
    if not by_lane:
        return None
    # A finding merged from a log and a trace sits where the other findings of the boot are.
    key = min(by_lane, key=_lane_rank)
    first = min(by_lane[key], key=lambda p: (p[0], p[1]))
    # Its interval is of one clock: a repeat after a jump of the printk time (a group's "last of N" in the next
    # boot) is no end of it (a duration across a jump is no fact).
    points = [p for p in by_lane[key] if p[0] == first[0]]
    # A kernel report's lines are printed in milliseconds whatever it reports (3.3 ms for a soft lockup "stuck for
    # 8s"): their times are no duration; the headers of a report's repeats (a group's "last of N") and a trace's or
    # a series' evidence merged into it are.  The duration the report states is said instead (``stated``).
    spans = [p for p in points if finding.detector not in PRINTED_DETECTORS or _spans_time(p[3])] or [first]
    read = any(_read_time(p[3]) for p in points)
    if read:
        # A time the dump read (when a blocked task last ran) starts an interval that lasts to the finding's last
        # cited time (khungtaskd's report, the crash): crash's `ps -m`, not an instant at the report.
        spans = points
    last = max(spans, key=lambda p: p[1])
    converted = (
        (key.clock in (BOOT_LANE, INPUT_LANE) and first[5])
        or key.clock == WALL_LANE
        or (key.clock == INPUT_LANE and first[2].clock is Clock.WALL and not first[2].zone_unknown)
    )  # (a local time of a zone not known is no UTC time: shown as printed, Timestamp.__str__)
    unc = 0.0
    if converted and key.clock == BOOT_LANE and isinstance(boot, BootTime):
        unc = boot.uncertainty if any(p[2].clock is Clock.MONOTONIC for p in points) else 0.0
    elif converted and key.clock == INPUT_LANE and first[5]:
        unc = own[key.source].uncertainty
    # Two views of one moment (a dump's and a log's stamps of the same panic differ by a microsecond) are
    # an instant, not an interval "for 0.001 ms".
    instant = last[1] - first[1] < INSTANT_SECONDS
    return TimelineEvent(
        when=first[2],
        wall=first[1] if converted else None,
        uncertainty=unc,
        finding_id=finding.id,
        title=finding.title,
        cite=first[3].cite(),
        excerpt=first[3].excerpt.split("\n", 1)[0],
        end=None if instant else last[2],
        wall_end=None if instant or not converted else last[1],
        lane=key,
        severity=finding.severity,
        end_cite=None if instant else last[3].cite(),
        kind=finding.kind,
        stated=_stated_duration(finding),
        segment=first[0],
        jump=first[4],
        printed=finding.detector in PRINTED_DETECTORS and not read,
        # ue21 #2's report: "First (32800.063 s since boot, for 799.274 ms): RT hog ... ran at least 572.208 ms",
        # an interval cut by the recording's end, told as one that ended there
        open_end=any(x.lower_bound for x in finding.facts),
    )


#: Findings whose first evidence bound the interval their title states, with how many: the rest cite what it caused.
#: An RT hog cites its longest run's switch-in and switch-out (detectors/sched/findings.py rt_hogs), then the waits
#: behind it; its row spanned them all until 2026-12-07 (kf.ftrace.txt: "31.182 ms" from its first run's start to a
#: victim's switch-in, two runs and the gap between, for a title "ran 8.090 ms", ue24 F8), where a CPU hog's, which
#: cites its run only, is the run.
INTERVAL_EVIDENCE: Mapping[FindingKind, int] = {FindingKind.SCHED_RT_HOG: 2}

#: Detectors whose findings are kernel reports: their evidence times are when the kernel printed them (a merged
#: finding keeps its first detector: a dump's crash corroborated by its log is "vmcore").
PRINTED_DETECTORS = frozenset({"dmesg", "vmcore"})


def _spans_time(ev: Evidence) -> bool:
    """Whether a kernel report's evidence marks a time its finding lasts to: a repeat's header, or a trace's event or
    a series' sample merged into it (not a line printed within the same report, nor the dump's own moment)."""
    if ev.locator.kind in (LocatorKind.EVENT, LocatorKind.SAMPLE):
        return True
    name = ev.locator.name or ""
    return ev.locator.kind is LocatorKind.LINE and name.startswith(OCCURRENCE_NAMES)


def _read_time(ev: Evidence) -> bool:
    """Whether the evidence is a time read from memory (a task's ``sched_info.last_arrival``), not a printed line."""
    return ev.locator.kind is LocatorKind.ADDRESS and ev.timestamp is not None


#: The facts in which a report states how long its stall had lasted when it was printed, and their words.
STATED_DURATIONS = (("stuck seconds", "stuck for {} s when reported"), ("blocked seconds", "blocked for more than {} s "
                    "when reported"))  # fmt: skip


def _stated_duration(finding: Finding) -> str:
    """What the report says of its own duration ("stuck for 8 s when reported"), "" when it says nothing."""
    for name, words in STATED_DURATIONS:
        fact = finding.fact(name)
        if fact is not None:
            return words.format(fact)
    return ""


#: Evidence times closer than this are one moment (kernel log stamps have microseconds).
INSTANT_SECONDS = 1e-5
#: Findings that are statements about the analysis, not events of the incident.
NOT_EVENTS = (FindingKind.LEAK_COVERAGE,)


def build_timeline(
    findings: tuple[Finding, ...],
    boot: BootTime | NotAvailable,
    boots: Mapping[str, Sequence[int]] | None = None,
    own: Mapping[str, BootTime] | None = None,
    unsure: Mapping[str, str] | None = None,
    split: Mapping[str, Sequence[OtherBoot]] | None = None,
) -> tuple[TimelineEvent, ...]:
    """One event per finding with a timestamped evidence, lane by lane, each lane in time order.

    The boot's lane (wall clock) comes first; lanes that cannot be converted
    (no boot time, a trace's clock) follow, each in its own order.  What an
    analysis examined (:data:`NOT_EVENTS`) is not an event.  ``boots``: the first
    lines of each log's boots (:func:`clock_jumps`); ``own``: the boot time of an
    input of another boot, read from its own lines (its lane is on the wall clock
    with it); ``unsure``: inputs whose boot identity against the told log is
    unconfirmed, with why (without a dump: on lanes of their own, not ordered
    against the told boot, yet not set apart); ``split``: the boots of logs of the
    told boot that a check separates from it (kern.log.1's boot before the
    crash's), each on a lane of its own, on its own boot's clock.
    """
    why, began = split_boots(split)
    elsewhere = {**elsewhere_inputs(findings), **why}
    own = {**(own or {}), **began}
    jumps = _within_boots(clock_jumps(findings, boots), split or {})
    events = [
        e
        for f in findings
        if f.kind not in NOT_EVENTS and (e := _event(f, boot, elsewhere, jumps, own, unsure, split)) is not None
    ]
    # By clock segment, then time: a log whose printk time goes back (a second boot) has its rows after the jump
    # after those before it, not interleaved as if on one clock (:func:`clock_jumps`).
    return tuple(sorted(events, key=lambda e: (_lane_rank(e.lane), e.segment, _at(e), e.title)))


def _at(e: TimelineEvent) -> float:
    """An event's time on its lane's axis: the wall clock when converted, else its source's own seconds."""
    return e.when.seconds if e.wall is None else e.wall


def _brief_time(e: TimelineEvent, with_date: bool) -> str:
    """A time for a sentence: the time of day (UTC) on the wall clock, with the duration of an interval."""
    if e.wall is not None:
        stamp = utc_datetime(e.wall)
        text = (
            iso_utc(e.wall)
            if stamp is None
            else stamp.strftime("%Y-%m-%d %H:%M:%S UTC" if with_date else "%H:%M:%S UTC")
        )
        text += f" ±{e.uncertainty:.1f} s" if e.uncertainty > 0 else ""
    elif e.when.clock is Clock.WALL:  # a local time of a zone not known, as printed
        text = str(e.when)
    else:
        text = f"{e.when.seconds:.3f} s since boot"
    if e.stated and (e.end is None or e.printed):  # the report's own figure, not "for" its printing's span
        return f"{text}, {e.duration_text()}"
    return text + (f", for {e.duration_text()}" if e.end is not None else "")


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].upper() + text[1:] + "."


#: The least severity of a step of the story: below it a finding is context (a reclaimable cache growing beside the
#: leak), listed on the timeline but not told as what happened.
STEP_SEVERITY = Severity.LOW


def story_steps(events: list[TimelineEvent]) -> list[TimelineEvent]:
    """The steps of the story: the problems (:data:`PROBLEM` or above) where there are some, else the findings that
    matter (:data:`STEP_SEVERITY` or above; all, when none does), by time, then the worse first at one time, then by
    title.

    The info findings of a store (reclaimable caches at the same instant, in name order) were told as the
    incident's first steps while its high leak was not a step at all; beside a trace's high RT hog, two low waits of
    ordinary load on the other CPU, seconds before it, were told as its lead-up ("First ... python3 waited 82.897
    ms"), the hog fourth (review ue19 #8): the lows stay on the timeline, as context.
    """
    floor = PROBLEM if any(e.severity >= PROBLEM for e in events) else STEP_SEVERITY
    steps = [e for e in events if e.severity >= floor] or events
    return sorted(steps, key=lambda e: (e.segment, _at(e), -e.severity.rank, e.title))


def verdict(
    summary: str, events: tuple[TimelineEvent, ...], lanes: tuple[Lane, ...], limit: int = 4, crashed: bool = True
) -> tuple[str, ...]:
    """The verdict paragraph as sentences: the summary, then the story in plain short sentences, one per step."""
    return (_sentence(summary), *narrative_sentences(events, lanes, limit, crashed))


#: The root causes a dump's analysis reads from its values (detectors/vmcore/why.py and findings.py): states that
#: held before the crash (a NULL field, a lock cycle, a loop that reads no memory, a freed object), timed by the
#: crash's own lines only.  Told as steps they came after the crash they explain ("Then: NULL pointer: dev->sensor
#: was NULL"; a deadlock as step 3 of 4: review ue17 #4); the story tells them as "Why" (:func:`narrative_sentences`).
DUMP_CAUSE_KINDS = frozenset(
    {
        FindingKind.NULL_FIELD,
        FindingKind.DEADLOCK,
        FindingKind.SPINLOCK_DEADLOCK,
        FindingKind.USE_AFTER_FREE,
        FindingKind.DOUBLE_FREE,
        FindingKind.LIST_CORRUPTION,
        FindingKind.BUFFER_OVERFLOW,
        FindingKind.LOCKUP_LOOP,
        FindingKind.BUG_CONDITION,
    }
)
#: The most root causes told as "Why" in the story (the timeline lists the rest).
WHY_LIMIT = 2


def _is_cause(e: TimelineEvent) -> bool:
    """A root cause read from the dump, at medium or above (a BUG_ON's condition not evaluated is low: no cause)."""
    return e.kind in DUMP_CAUSE_KINDS and e.severity >= Severity.MEDIUM


def _why_after(steps: list[TimelineEvent]) -> int:
    """The index of the step the story's root causes explain: the crash (a critical step: the one the verdict named),
    else the first."""
    return next((i for i, e in enumerate(steps) if e.severity is Severity.CRITICAL), 0)


def told_lane(events: tuple[TimelineEvent, ...]) -> LaneKey:
    """The lane whose events are the story: events come lane by lane, the boot's lane first; an input of another boot
    or host is never the story (a trace is when its lane is the only one, or the boot's clocks have no event)."""
    return next((e.lane for e in events if e.lane.clock != INPUT_LANE), events[0].lane)


def traces_apart(events: tuple[TimelineEvent, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    """The traces on a clock of their own beside the told lane (:func:`told_lane`), each with its findings' ids:
    the verdict tells them as the trace's, not as a problem of the machine the other inputs describe."""
    if not events:
        return ()
    told = told_lane(events)
    lanes: dict[LaneKey, set[str]] = {}
    for e in events:
        # A profile's findings say where the CPU of the machine went (its own clock only orders them): they stay the
        # machine's (a medium spinlock finding beside a store was dropped from the headline).
        if e.lane.clock == TRACE_LANE and e.lane != told and e.kind is not FindingKind.PROFILE:
            lanes.setdefault(e.lane, set()).add(e.finding_id)
    return tuple((key.source, frozenset(ids)) for key, ids in lanes.items())


def narrative_sentences(
    events: tuple[TimelineEvent, ...], lanes: tuple[Lane, ...], limit: int = 4, crashed: bool = True
) -> list[str]:
    """The timeline told in short sentences: the first steps of the incident's boot, then the other lanes.

    ``crashed``: an input of the boot told shows a crash; else that boot is "the boot" (two crash-free inputs of two
    releases were said to be of "the crashed boot").  The root causes a dump's values show (:data:`DUMP_CAUSE_KINDS`)
    are told as "Why", after the step they explain (:func:`_why_after`), the worst first, not as later steps.
    """
    ours = told_boot(crashed)
    apart = "apart from the crash" if crashed else "apart from the others"
    if not events:
        return ["No input carries times to order the events."]
    by_key = {lane.key: lane for lane in lanes}
    first_lane = told_lane(events)
    main = [e for e in events if e.lane == first_lane]
    out = []
    # A contradiction is told with its lane, below, not as a step of the story.
    told = [e for e in main if e.kind is not FindingKind.CONTRADICTION]
    steps = story_steps([e for e in told if not _is_cause(e)]) or story_steps(told)
    reasons = sorted((e for e in told if _is_cause(e) and e not in steps), key=lambda e: -e.severity.rank)
    reasons = reasons[:WHY_LIMIT]
    after = _why_after(steps[:limit])
    for i, e in enumerate(steps[:limit]):
        lead = "First" if i == 0 else "Then"
        if i and e.jump is not None and e.jump != steps[i - 1].jump:  # (on another clock: no order by time)
            lead += f", {e.jump.brief()}, on a new clock"
        out.append(_sentence(f"{lead} ({_brief_time(e, with_date=i == 0)}): {e.title}"))
        if i == after:
            out += [_sentence(f"Why, from values read in the dump: {c.title}") for c in reasons]
    shown = min(limit, len(steps)) + len(reasons)
    if len(told) > shown:
        out.append(f"The timeline lists {len(told) - shown} more finding(s) on this clock.")
    # (the inputs a contradiction sets apart: another boot; not an input merely unconfirmed, nor one of local times)
    others = [
        k
        for k in dict.fromkeys(e.lane for e in events if e.lane != first_lane)
        if k.clock == INPUT_LANE and k in by_key and by_key[k].contradiction
    ]
    if others and first_lane.clock != INPUT_LANE:
        out.append(_boots_sentence(events, first_lane, others))
    told_began = by_key[first_lane].began if first_lane in by_key else None
    for key in dict.fromkeys(e.lane for e in events if e.lane != first_lane):
        lane = by_key.get(key)
        n = sum(1 for e in events if e.lane == key and e.kind is not FindingKind.CONTRADICTION)  # (its lane's own)
        name = key.source
        if key.clock == INPUT_LANE and lane is not None and lane.unsure and not lane.contradiction:
            out.append(f"The input {name} may be of another boot than {ours}: its boot identity is {lane.unsure}.")
            out.append(f"Its {n} finding(s) are shown on its own clock, not ordered against it.")
            out.append(_boot_order(name, lane.began, told_began, ours))
            continue
        if key.clock == INPUT_LANE:
            why = f": {lane.contradiction}" if lane is not None and lane.contradiction else ""
            out.append(f"The input {name} cannot come from {ours}{why}.")
            # (an input without findings is on a lane by the record that names its release: a clean log's banner)
            out.append(f"Its {n} finding(s) are shown on its own clock, {apart}." if n else "It has no finding.")
            if any(e.when.clock is Clock.MONOTONIC for e in events if e.lane == key):
                out.append(_boot_order(name, lane.began if lane is not None else None, told_began, ours))
            continue
        if key.clock != TRACE_LANE:
            out.append(f"{n} finding(s) carry times since boot only; without the boot time they are not ordered "
                       "against the wall-clock ones.")  # fmt: skip
            continue
        noun = lane.noun if lane is not None else "trace"
        if lane is not None and lane.contradiction:
            out.append(f"The {noun} {name} cannot come from {ours}: {lane.contradiction}.")
            out.append(f"Its {n} finding(s) are shown on its own clock, {apart}.")
        else:
            out.append(f"The {noun} {name} has {n} finding(s) on its own clock, apart from the others.")
    return out


def _boots_sentence(events: tuple[TimelineEvent, ...], told: LaneKey, others: list[LaneKey]) -> str:
    """Which input is of which boot: the told lane's inputs tell the story; each input of another boot (host or
    kernel) is told on its own clock.  Two inputs set apart may be of one other boot: "at least"."""
    # (a trace's lane is its own source: its events' cites name streams and events, no line)
    mine = (
        told.source
        if told.clock == TRACE_LANE
        else ", ".join(dict.fromkeys(e.cite.split(" line ", 1)[0].split("#", 1)[0] for e in events if e.lane == told))
    )
    count = "two" if len(others) == 1 else "at least two"
    names = ", ".join(k.source for k in others)
    return f"The inputs come from {count} different boots: the story above is of the boot of {mine}; {names} of " + (
        "another, told apart below." if len(others) == 1 else "others, each told apart below."
    )


def _boot_order(name: str, began: BootTime | None, told: BootTime | None, ours: str) -> str:
    """Whether the boot of the input ``name`` began before or after the told one: from the two boot times, each
    read from its own inputs (an order and a gap within their uncertainties is not said); unknown, with why."""
    if began is None or told is None:
        lacking = (
            f"neither {name} nor the inputs of {ours} date their boot"
            if began is None and told is None
            else f"{name} does not date its boot (no RTC line nor dated line of it)"
            if began is None
            else f"the inputs of {ours} do not date it"
        )
        return f"Which of the two boots came first is unknown: {lacking}; its times are seconds since its own boot."
    gap = began.wall - told.wall
    slack = began.uncertainty + told.uncertainty
    said = f"{iso_utc(began.wall)} ±{began.uncertainty:.1f} s, {ours} at {iso_utc(told.wall)} ±{told.uncertainty:.1f} s"
    if abs(gap) <= slack:
        return f"Its boot began at {said}: which came first is unknown (within the two readings' uncertainty)."
    # ("the boot this report tells's" was said of crash-free inputs)
    theirs = f"{ours}'s" if ours.endswith("boot") else f"that of {ours}"
    return f"Its boot began {abs(gap):.0f} s {'before' if gap < 0 else 'after'} {theirs} ({said})."


def narrative(events: tuple[TimelineEvent, ...], limit: int = 4) -> str:
    """The timeline as short sentences (without the lanes' contradictions: see :func:`narrative_sentences`)."""
    return " ".join(narrative_sentences(events, (), limit))
