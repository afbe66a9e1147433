"""``kforensic report``: every input through its own pipeline, merged, correlated, ranked: the incident story."""

from __future__ import annotations

import itertools
import json
import shlex
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from forensics import __version__
from forensics.errors import InputError
from forensics.model import (
    SET_APART,
    BootScope,
    BootTime,
    Clock,
    Examined,
    Finding,
    FindingKind,
    Incident,
    LocatorKind,
    NotAvailable,
    Timestamp,
    TimeWindow,
)
from forensics.types.dmesg_result import DmesgResult
from forensics.types.incident import Correlation, Hypothesis, LogCut
from forensics.types.profile_result import ProfileResult
from forensics.types.results import IncidentStory, SourceAnalysis
from forensics.types.trace_result import TraceResult

if TYPE_CHECKING:
    from detectors.incident.boot_identity import BootCheck, OtherBoot


def load_findings_file(path: Path) -> Incident:
    """Read a findings file written by any kforensic command with ``--format json``."""
    from collectors.inputs import open_input, read_whole
    from forensics.serialize import incident_from_dict

    with open_input(str(path)) as tracked:
        data = read_whole(tracked, "a findings file")
        record = tracked.record()
    if not data.strip():  # the parser's "Expecting value: line 1 column 1 (char 0)" said nothing of it
        raise InputError(
            f"{path}: it is empty: no findings in it", hint="give files written by kforensic ... --format json"
        )
    try:
        doc = json.loads(data)
    except ValueError as exc:  # not UTF-8, not JSON, an integer of more than 4300 digits (sys.int_info)
        from collectors.binary_formats import binary_format, signature
        from collectors.kernel_log import text_reader

        hint = "give files written by kforensic ... --format json"
        known = binary_format(data[:512])
        if known is not None:  # a trace.dat or perf.data given as findings (review ue19 #15: the codec's words)
            # (an ELF file is a dump, a vmlinux or a program: its reader's command line says which goes where; a
            # kdump-compressed or flattened dump is a dump only: `report --vmcore` reads it, review ue20 #10)
            reads = {"trace": "--trace", "profile": "--profile", "leaks": "--store"}
            if known.magic != b"\x7fELF":
                reads["vmcore"] = "--vmcore"
            words = known.reader.split()
            reader = reads.get(words[1]) if not known.archive and words[0] == "kforensic" else None
            instead = (
                f"give it as `kforensic report {reader} {shlex.quote(str(path))}`"
                if reader is not None
                else f"read it with `{known.reader}`"
            )
            raise InputError(
                f"{path}: not a JSON document: {known.what} ({signature(known)})", hint=f"{instead}; or {hint}"
            ) from None
        kind = text_reader(data[: 16 << 10])
        if kind is not None:  # a log or a trace given as findings: the option that reads it (not the parser's words)
            option = {"kforensic dmesg": "--dmesg", "kforensic trace": "--trace", "kforensic profile": "--profile"}
            instead = f"give it as `kforensic report {option[kind[1]]} {shlex.quote(str(path))}`; or {hint}"
            raise InputError(f"{path}: not a JSON document: it looks like {kind[0]}", hint=instead) from None
        raise InputError(f"{path}: not a JSON document ({exc})", hint=hint) from None
    except RecursionError:
        raise InputError(
            f"{path}: JSON nested too deeply to be a kforensic findings file",
            hint="give files written by kforensic ... --format json",
        ) from None
    _refuse_fleet(doc, path)
    incident = incident_from_dict(doc, str(path))
    # The findings file itself is an input of the merged report.
    return replace(incident, sources=(*incident.sources, record))


def _refuse_fleet(doc: object, path: Path) -> None:
    """A fleet document of several hosts is refused: a report tells one machine's incident.

    ``dmesg --signatures`` over the 14 fixture guests' logs, given to ``report --from``, was told as one machine's
    story: 'First (2.207 s since boot): general protection fault ... Then: kernel BUG ...', each from another
    guest, and 'The Linux kernel on the machine was crashed on request with sysrq'.
    """
    from forensics.types.fleet import FLEET_LEAKS_SCHEMA, SIGNATURES_SCHEMA

    if not isinstance(doc, dict):
        return
    schema = doc.get("schema")
    if schema == SIGNATURES_SCHEMA:
        hosts = doc.get("hosts")
        command = "kforensic dmesg LOG --format json"
    elif schema == FLEET_LEAKS_SCHEMA:
        instances = doc.get("instances")
        hosts = len(instances) if isinstance(instances, list) else None
        command = "kforensic leaks --prometheus URL --match '{instance=\"NAME\"}' --format json"
    else:
        return
    if isinstance(hosts, int) and not isinstance(hosts, bool) and hosts <= 1:
        return
    many = f"{hosts} hosts" if isinstance(hosts, int) and not isinstance(hosts, bool) else "many hosts"
    raise InputError(
        f"{path}: a fleet document ({schema}) of {many}: a report tells one machine's incident, and their findings"
        " are not one story",
        hint=f"give one host's findings ({command}), or read the fleet as its own command renders it (-f md or html)",
    )


def host_label(incident: Incident) -> str:
    """The host for prose: its name, or "the machine" when unknown."""
    host = incident.host
    # "(none)" is the kernel's default nodename: nothing set a host name.
    return host if isinstance(host, str) and host not in ("", "(none)") else "the machine"


def _crashed_boot(
    incident: Incident, incidents: list[Incident], elsewhere: frozenset[str], original: list[Incident]
) -> Incident:
    """``incident`` with the host, kernel, boot time and window of the inputs of the crashed boot only.

    An input of another boot or host (``elsewhere``: every source of its findings is) does not name the machine
    that crashed: a store recorded two days later on "vm" made the verdict "The Linux kernel on vm crashed" of a
    dump that names no host, and its boot time made the dump's "inputs come from different boots".  ``incidents``:
    each input's, a run over several logs with the window of its logs of the crashed boot (``original``: as
    analysed; unchanged when no input is set apart, the merged incident is kept).
    """
    ours = [i for i in incidents if not _elsewhere(i, elsewhere)]
    if not elsewhere or ours == original or not ours:
        return incident
    home = Incident.merge(ours, tool_version=incident.tool_version)
    return replace(
        incident, host=home.host, kernel_release=home.kernel_release, boot_time=home.boot_time, window=home.window
    )


def _without_traces(
    incident: Incident, parts: list[SourceAnalysis], told: list[Incident], elsewhere: frozenset[str]
) -> Incident:
    """``incident`` with the host and boot time of the told boot's inputs that are no trace, when there are some.

    A trace keeps its own clock beside a kernel log, a dump or a store (detectors/incident/timeline.py): nothing
    shows it is of their boot, so its clock's offset dates none of their times and its host names none of their
    machine (ue23 #1: a 2015 user-space LTTng session of "qemu1" dated this machine's RT throttling "2015-12-15
    20:38:44 UTC ±1.0 s" and the headline said "On qemu1", beside "the trace ... on its own clock, apart from the
    others").  A profile is on its own clock too: its perf header's host named a log that names none (ue24 F1: "On
    qemu1, real-time tasks ran ..." from a perf.data of qemu1 beside this machine's dmesg).  ``told``: each input's
    incident, the parts' first (:func:`build_story`).  Traces and profiles without another input still name their
    boot, as alone.
    """
    kept = [(k, t) for k, t in enumerate(told) if not _elsewhere(t, elsewhere)]
    own_clock = [k < len(parts) and isinstance(parts[k].details, ProfileResult | TraceResult) for k in range(len(told))]
    traces = [(parts[k].title, t) for k, t in kept if own_clock[k]]
    home = [t for k, t in kept if not own_clock[k]]
    if not traces or not home:
        return incident
    ours = Incident.merge(home, tool_version=incident.tool_version)
    host, boot = ours.host, ours.boot_time
    # Why the trace's names are not used, where the told inputs name nothing themselves.
    named = [(title, t.host) for title, t in traces if isinstance(t.host, str) and t.host not in ("", "(none)")]
    if isinstance(host, NotAvailable) and named:
        said = "; ".join(f"the {title} names {name}" for title, name in named)
        host = NotAvailable(f"{host.reason} ({said}, on its own clock: not shown to be of this boot)")
    dated = [title for title, t in traces if isinstance(t.boot_time, BootTime)]
    if isinstance(boot, NotAvailable) and dated:
        said = ", ".join(dated)
        boot = NotAvailable(f"{boot.reason} (the {said} dates its own clock only: not shown to be of this boot)")
    return replace(incident, host=host, boot_time=boot)


def _elsewhere(incident: Incident, elsewhere: frozenset[str]) -> bool:
    """Whether the input of ``incident`` is set apart: every source of its findings is; without findings, the record
    that names its release is (a clean 6.18 log beside a 3.10 trace: its release made the Kernel row "inputs
    disagree", the trace's host its host, ue22 #3)."""
    if incident.findings:
        return all(e.source in elsewhere for f in incident.findings for e in f.evidence)
    named = [e.source for x in incident.examined for e in x.named_by]
    return bool(named) and all(s in elsewhere for s in named)


def build_story(
    parts: list[SourceAnalysis], loaded: list[Incident], command: str, unused: tuple[Incident, ...] = ()
) -> IncidentStory:
    """The story of the analysed inputs and the findings files: merged, correlated, timed and ranked.

    ``command`` is the command line that reproduces the report (last of the story's commands); ``unused``: the inputs
    that could not be used (a dump that is none, a log that is missing: sources.Unusable), said first under "Examined".
    """
    from detectors.incident.boot_identity import DUMP
    from detectors.incident.correlate import after_the_crash, correlate, inputs_named, other_hosts, other_kernels
    from detectors.incident.hypotheses import plain_summary, rank_hypotheses
    from detectors.incident.readiness import readiness_after
    from detectors.incident.timeline import (
        build_timeline,
        elsewhere_inputs,
        ends_the_boot,
        narrative_sentences,
        timeline_lanes,
        traces_apart,
        verdict,
    )
    from forensics.pipelines.boot_identity import check_logs, other_boot_finding

    incidents = [p.incident for p in parts] + loaded
    merged = Incident.merge([*unused, *incidents], tool_version=__version__)
    # Another host, or another kernel release than the dump's (another boot), is a contradiction, like a later uptime;
    # found first, so that no finding of such an input corroborates one of the crashed boot (correlate).
    elsewhere = other_hosts(tuple(incidents))
    hosts_said = frozenset(str(f.fact("other host")) for f in elsewhere)
    elsewhere += other_kernels(tuple(incidents), hosts_said)
    elsewhere += after_the_crash(tuple(incidents), hosts_said | {str(f.fact("other boot")) for f in elsewhere})
    # A log of the dump's own release may still be another boot: the dump's own log and command line say which.
    checks = check_logs(parts, hosts_said | {str(f.fact("other boot")) for f in elsewhere})
    elsewhere += [other_boot_finding(c) for c in checks if c.other]
    # A findings file (``--from``) brings the contradictions that set its inputs apart when it was written: without
    # them, 01-null-member's merged incident with 10-use-after-free's console log read again made "the dump and the
    # log disagree" (medium) of the other guest's fault, ranked with the crash's findings.
    said = tuple(f for i in loaded for f in i.findings if f.kind is FindingKind.CONTRADICTION)
    findings, correlations = correlate(merged.findings, elsewhere_inputs((*elsewhere, *said)), log_cuts(parts))
    findings += tuple(elsewhere)
    correlations += tuple(Correlation("contradiction", f.id, (f.id,), f.title, contradiction=True) for f in elsewhere)
    apart = elsewhere_inputs(findings)
    # Without a dump, a log whose boot no check ties to the told log's is not ordered against it either (two syzbot
    # logs, no command line nor RTC line: "First (29.027 s since boot) ... Then (733.821 s since boot)"), yet, maybe
    # of the told boot, not set apart: its own lane, still ranked; the told boot's window is not of its times.
    unsure = {c.source: c.why for c in checks if c.other is None and c.against != DUMP and c.source not in apart}
    told = [_told_window(p, {**apart, **unsure}) for p in parts] + loaded
    incident = _crashed_boot(replace(merged, findings=findings), told, frozenset(apart) | unsure.keys(), incidents)
    incident = _without_traces(incident, parts, told, frozenset(apart) | unsure.keys())
    examined = (*(e for i in unused for e in i.examined), *_examined(parts, loaded, apart, checks))
    incident = replace(incident, examined=examined)
    apart_why = tuple(
        (f.id, next(apart[e.source] for e in f.evidence if e.source in apart)) for f in findings if _set_apart(f, apart)
    )
    apart_ids = frozenset(i for i, _ in apart_why)
    own = tuple(f for f in incident.sorted_findings() if f.id not in apart_ids)
    crashed = any(ends_the_boot(f) for f in own)
    boots = {s.path: s.boot_lines for s in incident.sources if s.boot_lines}
    clocks = _own_boot_times(parts, {**apart, **unsure})
    # A log of the told boot may hold other boots too (kern.log.1: the boot before the crash's, then the crash's
    # first lines): those a check separates are each on a lane of their own, on their own clock.
    split = {c.source: c.others for c in checks if c.other is False and c.others}
    # The headline's main problem is the one the ranking shown below puts first, cited by its rank there.
    hypotheses = rank_hypotheses(incident.sorted_findings(), incident.examined)
    scope, others = _told_logs_boots(incident, (own, hypotheses), {*split, *apart}, crashed)
    if others:
        assert scope is not None
        split[scope.source] = others
        incident = _told_boot_window(incident, own, scope)
    timeline = build_timeline(incident.sorted_findings(), incident.boot_time, boots, clocks, unsure, split)
    # The first sentence is of the boot told: an input set apart named "the main problem" (another boot's fault), and
    # a trace on its own clock beside a kernel log "the machine's" problem, over the log's high RCU stall.
    traces = traces_apart(timeline)
    beside = frozenset(i for _, ids in traces for i in ids)
    apart_lanes = tuple((name, tuple(f for f in own if f.id in ids)) for name, ids in traces)
    said = tuple(f for f in own if f.id not in beside)
    host = _host_of_problem(incident, said, hypotheses, unsure, parts)
    summary = plain_summary(said, host, incident.examined, apart_lanes, hypotheses)
    # Inputs of different kernels or hosts: which names which, not all one host's (ue22 #3).
    named = inputs_named(tuple(incidents), apart)
    summary = f"{summary} {named}" if named else summary
    lanes = timeline_lanes(timeline, incident.findings, incident.boot_time, crashed, clocks, unsure, split)
    return IncidentStory(
        incident=incident,
        summary=summary,
        timeline=timeline,
        lanes=lanes,
        narrative=tuple(narrative_sentences(timeline, lanes, crashed=crashed)),
        story=verdict(summary, timeline, lanes, crashed=crashed),
        correlations=correlations,
        hypotheses=hypotheses,
        details=tuple(parts),
        plots=tuple(plot for p in parts for plot in p.plots),
        commands=(*(p.command for p in parts), command),
        apart=apart_ids,
        apart_why=apart_why,
        crashed=crashed,
        readiness=readiness_after(own, incident.examined),
    )


def _told_logs_boots(
    incident: Incident,
    ranked: tuple[tuple[Finding, ...], tuple[Hypothesis, ...]],
    known: Collection[str],
    crashed: bool,
) -> tuple[BootScope | None, tuple[OtherBoot, ...]]:
    """The other boots of the log of the told boot, each on a lane of its own, on its own clock: the boot the
    incident's boot time dates (its ``holds_for``), else, undated, the boot of the report the findings not set apart
    tell, as ranked (``ranked``: those findings and the report's hypotheses).  Read from the incident alone, so that a
    findings file (``report --from``) gives them as the log itself does.  ``known``: the logs a boot check already
    split, or set apart.  Returns the told boot's lines and the others."""
    from detectors.incident.boot_identity import told_logs_boots
    from detectors.incident.timeline import told_boot

    boot = incident.boot_time
    scope = boot.holds_for if isinstance(boot, BootTime) else _undated_told_boot(incident, *ranked)
    if scope is None or scope.source in known:
        return None, ()
    record = next((s for s in incident.sources if s.path == scope.source), None)
    if record is None or not record.boot_lines:
        return None, ()
    return scope, told_logs_boots(record, scope, told_boot(crashed))


def _told_boot_window(incident: Incident, own: tuple[Finding, ...], scope: BootScope) -> Incident:
    """``incident`` with the window since boot of the told boot's reports (``scope``: its lines of its log), where the
    log's window spanned its boots' clocks ("the printk time of kern.log goes back ...": not available): its two
    halves given as kern.log.1 and kern.log gave the told one's.  Unchanged when another input has times since boot,
    or the printk time goes back within the told boot too (:data:`JUMP_SECONDS`)."""
    from detectors.incident.timeline import JUMP_SECONDS
    from forensics.types.dmesg import OCCURRENCE_NAMES

    if not isinstance(incident.window, NotAvailable):
        return incident
    points = []
    for ev in (e for f in own for e in f.evidence):
        ts = ev.timestamp
        if ts is None or ts.clock is not Clock.MONOTONIC or ev.locator.kind is not LocatorKind.LINE:
            continue
        if ev.source != scope.source:
            return incident  # (another input's times since boot: the window is not this log's alone)
        if scope.covers(ev.source, ev.locator.start) and (ev.locator.name or "").startswith(OCCURRENCE_NAMES):
            points.append((ev.locator.start, ts.seconds))
    points.sort()
    if not points or any(now < was - JUMP_SECONDS for (_, was), (_, now) in itertools.pairwise(points)):
        return incident
    times = [t for _, t in points]
    return replace(incident, window=TimeWindow(Timestamp(min(times)), Timestamp(max(times))))


def _undated_told_boot(
    incident: Incident, own: tuple[Finding, ...], ranked: tuple[Hypothesis, ...]
) -> BootScope | None:
    """The lines of the boot of the report the findings ``own`` tell (by the ``ranked`` hypotheses), in a log of
    several boots that dates none of them (the one the boot time would be of: forensics/pipelines/dmesg.py
    told_line); None when no log of several boots holds it."""
    from forensics.pipelines.dmesg import told_line

    if not any(s.boot_lines for s in incident.sources):  # (most inputs: one boot, nothing to look for)
        return None
    told = told_line(list(own), ranked)
    record = None if told is None else next((s for s in incident.sources if s.path == told[0]), None)
    if told is None or record is None or not record.boot_lines:  # (a log of one boot: none other to split)
        return None
    return BootScope(told[0], record.boot_of(told[1][0]), record.next_boot(told[1][0]))


def _host_of_problem(
    incident: Incident,
    said: tuple[Finding, ...],
    hypotheses: tuple[Hypothesis, ...],
    unsure: Mapping[str, str],
    parts: list[SourceAnalysis],
) -> str:
    """The host the verdict names: the told boot's (:func:`host_label`), unless its main problem is of a log whose
    boot identity is unconfirmed and that names no host itself: the told inputs' host is not shown to be its
    machine (ue24 F13: "On vm, real-time tasks ran ..." of a log 3.5 s off the store of vm's own records)."""
    from detectors.incident.hypotheses import main_problem

    main = main_problem(said, hypotheses=hypotheses) if unsure else None
    if main is None or not _set_apart(main.finding, unsure):
        return host_label(incident)
    named = [
        p.incident.host
        for p in parts
        if isinstance(p.details, DmesgResult) and unsure.keys() & {s.name for s in p.details.sources}
    ]
    return next((h for h in named if isinstance(h, str) and h not in ("", "(none)")), "the machine")


def _told_window(part: SourceAnalysis, apart: Mapping[str, str]) -> Incident:
    """An input's incident, a run over several logs with the window since boot of its logs not set apart
    (:func:`window_without`)."""
    from forensics.pipelines.dmesg import window_without

    return window_without(part.details, apart.keys()) if isinstance(part.details, DmesgResult) else part.incident


def _own_boot_times(parts: list[SourceAnalysis], apart: Mapping[str, str]) -> dict[str, BootTime]:
    """The boot time of each kernel log set apart, read from its own lines (:func:`own_boot_times`): its lane's
    times since boot are converted with it, never with the told boot's."""
    from forensics.pipelines.dmesg import own_boot_times

    return {
        name: began
        for p in parts
        if isinstance(p.details, DmesgResult)
        for name, began in own_boot_times(p.details).items()
        if name in apart
    }


#: How a report's call trace starts (x86's "Call Trace:", arm64's "Call trace:").
_TRACE_START = "call trace:"


def log_cuts(parts: list[SourceAnalysis]) -> tuple[LogCut, ...]:
    """The reports each kernel log ends inside (the report's last line is the log's): what of each the log holds.

    A console capture cut after a report's first lines was said to "corroborate" the dump's crash it printed the
    header line of, at the same time, without its frames, registers or end (detectors/incident/correlate.py).
    """
    return tuple(
        LogCut(
            r.name,
            rep.start_line,
            rep.end_line,
            any(_TRACE_START in text.lower() for _, text in rep.lines),
            rep.corrupted_reason if rep.corrupted else None,
        )
        for p in parts
        if isinstance(p.details, DmesgResult)
        for r in p.details.sources
        for rep in r.reports
        if rep.end_line >= r.lines
    )


def _set_apart(f: Finding, apart: Mapping[str, str]) -> bool:
    """A finding of an input set apart: every evidence of it is (a contradiction cites the crash's too: it stays)."""
    return bool(f.evidence) and all(e.source in apart for e in f.evidence)


def _examined(
    parts: list[SourceAnalysis], loaded: list[Incident], apart: Mapping[str, str], checks: list[BootCheck]
) -> tuple[Examined, ...]:
    """What each input's analysis examined, input by input (the dump first: ``report`` analyses it first), each
    with how it stands to the boot the report tells: set apart and why, or what the boot check found."""
    checked = {c.source: c for c in checks}

    def standing(sources: list[str]) -> str:
        why = next((apart[s] for s in sources if s in apart), None)
        if why is not None:
            return f"{SET_APART}{why}"
        check = next((checked[s] for s in sources if s in checked), None)
        return "" if check is None else f"boot: {check.why}"

    out: list[Examined] = []
    for part in parts:
        examined = part.incident.examined
        if isinstance(part.details, DmesgResult) and len(part.details.sources) == len(examined):
            # one entry per log, in the order of its sources (forensics/pipelines/dmesg.py build_incident)
            out += [
                replace(e, standing=standing([r.name])) for e, r in zip(examined, part.details.sources, strict=True)
            ]
            continue
        # (an input without findings, by the record that names its release: a trace's metadata)
        sources = [e.source for f in part.incident.findings for e in f.evidence] or [
            e.source for x in examined for e in x.named_by
        ]
        out += [replace(e, standing=standing(sources)) for e in examined]
    for incident in loaded:
        sources = [e.source for f in incident.findings for e in f.evidence]
        out += [replace(e, standing=standing(sources)) for e in incident.examined]
    return tuple(dict.fromkeys(out))
