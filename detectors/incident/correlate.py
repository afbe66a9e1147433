"""Cross-source correlation: findings of different inputs that show the same problem.

Rules, most specific first (each a function over the findings):

1. the hung task of the log is a D-state task of the dump, whose lock owner the dump names;
2. a slab cache that leaks in the samples is outsized in the dump;
3. a CPU hog of a trace is the task (name and pid) a soft lockup report names;
4. the dump's crash and the log's report have the same title, or the log's report is a line the dump's own
   log prints at the same time since boot (same crash, two views, titled by two conventions).

Correlated findings are merged into one (the richer one's id), keeping the
evidence of both, with the confidence raised and the reason given.  A dump
and a log that disagree on the crash are reported as a contradiction, and so
is an input whose times since boot lie past the crash (another boot), an input
that names another host (:func:`other_hosts`), one that names another kernel
release than the dump (:func:`other_kernels`: another boot), and one whose
wall-clock times all lie after the dump's crash (:func:`after_the_crash`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

from detectors.incident.consequences import HUNG_REPORT, link_consequences
from detectors.incident.deliberate import is_deliberate, mark
from detectors.incident.hypotheses import DUMP_FAULT_ADDRESS, FREE_AT_CRASH, LOG_FAULT_ADDRESS
from detectors.incident.timeline import crash_uptime, ends_the_boot, foreign_sources
from forensics.model import (
    PERF_SCRIPT_LINE,
    Baseline,
    BootTime,
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Incident,
    LocatorKind,
    Severity,
    Subject,
    SubjectKind,
    finding_id,
)
from forensics.types.dmesg import PANICKED, WENT_DOWN
from forensics.types.incident import Correlation, LogCut
from forensics.units import iso_utc

_EVENT_KINDS = (FindingKind.DMESG_OOM, FindingKind.DMESG_ALLOC_FAILURE)
_LOCKUP_KINDS = (FindingKind.DMESG_LOCKUP, FindingKind.DMESG_SOFT_LOCKUP)
_LOCKUP_TASK = re.compile(r"soft lockup - CPU#\d+ stuck for \d+s! \[(.+?):(\d+)\]")
_PRINTK_TIME = re.compile(r"^\[\s*\d+\.\d+\]\s?")


#: The severity of a contradiction that sets an input apart (another boot, host or release): a finding about the
#: inputs given, not harm to the machine, so below medium (``--fail-on medium`` failed on a wrong file given); the
#: verdict and "Examined" still say it.
SET_APART_SEVERITY = Severity.LOW


def _combined(a: float, b: float) -> float:
    """Confidence of a claim two independent sources support."""
    return round(min(0.99, 1 - (1 - a) * (1 - b)), 2)


#: Facts of a merged-away finding that the keeper takes over (values read from another input): a log's report
#: states how long its stall had lasted, which a dump's finding of the same crash does not read.
CARRIED_FACTS = (FREE_AT_CRASH, "stuck seconds", "blocked seconds")


def _carried(base: Finding, other: Finding) -> tuple[Fact, ...]:
    return tuple(f for f in other.facts if f.name in CARRIED_FACTS and base.fact(f.name) is None)


def _judged(base: Finding, other: Finding) -> tuple[Severity, Baseline | None]:
    """The severity of ``base`` merged with ``other`` and the baseline it was judged against: the worse of the two's.

    Harm is counted once: a consequence's at its root (detectors/incident/consequences.py), and a log report's
    panic ("the kernel panicked on it") at the crash the dump shows, so neither raises a dump finding that is not
    the crash itself (a hung task khungtaskd reported before kernel.hung_task_panic: the dump judged its wait).
    """
    if base.consequence_of is not None or (
        base.kind is not FindingKind.CRASH
        and other.baseline is not None
        and other.baseline.name in (PANICKED.name, WENT_DOWN)
    ):
        return base.severity, base.baseline
    return (other.severity, other.baseline) if other.severity > base.severity else (base.severity, base.baseline)


def merge_into(base: Finding, other: Finding, why: str, corroborates: bool = True, short: str = "") -> Finding:
    """``base`` with the evidence of ``other`` and the confidence both give it.

    ``corroborates`` False: ``other`` is the same event but names something else (a crash titled after another
    frame), or holds only its start (``short``: a log cut inside the report, why): merged, with a note, and the
    confidence stays ``base``'s (two views of one line confirm no function; a report's first lines, no report).
    """
    severity, baseline = _judged(base, other)
    if not corroborates:
        note = short or f"it names another frame ({other.title!r}), so it does not corroborate the function"
        same = short or "it names another frame"
        return replace(
            base,
            severity=severity,
            baseline=baseline,
            confidence_reason=f"{base.confidence_reason}; {why}; {note}",
            evidence=tuple(dict.fromkeys(base.evidence + other.evidence)),
            next_steps=tuple(dict.fromkeys(base.next_steps + other.next_steps)),
            facts=(*base.facts, Fact("same event as", f"{other.title} ({other.id}): {same}"),
                   *_carried(base, other)),
            subjects=tuple(dict.fromkeys(base.subjects + other.subjects)),
        )  # fmt: skip
    return replace(
        base,
        severity=severity,
        baseline=baseline,
        confidence=_combined(base.confidence, other.confidence),
        confidence_reason=f"{base.confidence_reason}; corroborated: {why}",
        evidence=tuple(dict.fromkeys(base.evidence + other.evidence)),
        next_steps=tuple(dict.fromkeys(base.next_steps + other.next_steps)),
        facts=(
            *base.facts,
            Fact("corroborated by", f"{other.title} ({other.id})" + (f": {short}" if short else "")),
            *_carried(base, other),
        ),
        subjects=tuple(dict.fromkeys(base.subjects + other.subjects)),
    )


def _is_log_crash(f: Finding) -> bool:
    """A log report that may be the dump's crash: high or worse, or a crash requested with sysrq (low, as the
    dump's finding of it: the two are still one crash)."""
    return (
        f.kind.from_kernel_log
        and f.kind not in _EVENT_KINDS
        and (f.severity >= Severity.HIGH or (f.severity is Severity.LOW and is_deliberate(f)))
    )


def _log_crash_ending_boot(f: Finding) -> bool:
    """A log report of the crash that ended its boot (timeline.ends_the_boot): the kernel panicked on it, or it
    was requested with sysrq."""
    return _is_log_crash(f) and ends_the_boot(f)


Rule = Callable[[dict[str, Finding]], list[tuple[str, str, str]]]


def _message(ev: Evidence) -> tuple[float, str] | None:
    """A cited log line as (time since boot to the microsecond, its text without the printk time), or None."""
    if ev.timestamp is None or ev.timestamp.clock is not Clock.MONOTONIC or ev.locator.kind is not LocatorKind.LINE:
        return None
    return round(ev.timestamp.seconds, 6), _PRINTK_TIME.sub("", ev.excerpt.splitlines()[0], count=1)


def _one_message(a: Finding, b: Finding) -> Evidence | None:
    """``b``'s evidence that is a line ``a`` also cites: the same text printed at the same microsecond since boot.

    The dump's crash and a log's report can be titled differently (a dump without the report titles the crash
    by its panic and crash frame; a log cut short names another frame), and the kernel's own line at one printk
    time is still one event.  Such a merge corroborates no function unless both name it (:func:`same_function`).
    """
    seen = {m for e in a.evidence if (m := _message(e)) is not None}
    return next((e for e in b.evidence if _message(e) in seen), None)


#: The function a crash title names: ``BUG: soft lockup in kf_hw_poll_fn`` -> ``kf_hw_poll_fn``.
_TITLE_FUNCTION = re.compile(r" in ([\w.]+)(?:$|[ :])")


def same_function(a: Finding, b: Finding) -> bool:
    """Whether two findings of one crash name the same function in their titles (equal titles do).

    Only then does the second corroborate the first: the dump and the log printing one line is one event,
    and two titles of it naming different frames confirm neither frame.
    """
    if a.title == b.title:
        return True
    fa, fb = _TITLE_FUNCTION.search(a.title), _TITLE_FUNCTION.search(b.title)
    return fa is not None and fb is not None and fa.group(1) == fb.group(1)


def _same_crash(by_id: dict[str, Finding]) -> list[tuple[str, str, str]]:
    out = []
    for crash in (f for f in by_id.values() if f.kind is FindingKind.CRASH):
        for log in (f for f in by_id.values() if _is_log_crash(f)):
            if log.title == crash.title:
                where = log.evidence[0].cite()
                out.append((crash.id, log.id, f"the dump's crash is the report at {where}"))
            elif (line := _one_message(crash, log)) is not None:
                out.append(
                    (crash.id, log.id, f"the dump's crash is the report at {line.cite()} (titled {log.title!r}): "
                     "the dump's log prints the same line at the same time since boot")
                )  # fmt: skip
    return out


def _cut_of(log: Finding, cuts: Collection[LogCut]) -> LogCut | None:
    """The cut that ends ``log``'s report: a log that ends inside it (its report's first line is the cut's)."""
    spans = {(e.source, e.locator.start) for e in log.evidence if e.locator.name == _REPORT}
    return next((c for c in cuts if (c.source, c.start) in spans), None)


#: The name of the evidence that cites a report's lines, first to last (detectors/dmesg/findings.py).
_REPORT = "report"


def _cut_match(crash: Finding, log: Finding, cut: LogCut) -> tuple[str, bool, str] | None:
    """What a log cut inside its report matched of the dump's crash, and what it could not show: (why, whether it
    corroborates, what the cut leaves out), or None when the dump's own log shows no more of the report than the cut
    log holds (the report ends where the log does).

    A console capture cut after the report's first lines prints the dump's header line at the same time: the same
    report's start, not a second view of the whole crash (its frames, registers and end are not in it).  Only a cut
    log that reaches the call trace and names the crash's function (:func:`same_function`) corroborates the crash,
    saying what it matched and what it lacks; the words are chosen with that answer, so the Correlations section
    and the finding say the same.
    """
    held = cut.end - cut.start + 1
    dumped = next(
        (e for e in crash.evidence if e.locator.name == _REPORT and e.source != cut.source and e.locator.end), None
    )
    whole = None if dumped is None or dumped.locator.end is None else dumped.locator.end - dumped.locator.start + 1
    if cut.damaged is None and (whole is None or whole <= held):
        return None
    matched = ["its header line (printed at the same time since boot)" if _one_message(crash, log) else "its title"]
    function = _TITLE_FUNCTION.search(crash.title)
    if function is not None and same_function(crash, log):
        matched.append(f"the function it names ({function.group(1)})")
    shown = f"{', '.join(matched[:-1])} and {matched[-1]}" if len(matched) > 1 else matched[0]
    lacks = ["its call trace, which would confirm it"] if not cut.trace else []
    lacks.append(
        f"the rest of its {whole} lines ({dumped.cite()}; the log holds {held})"
        if dumped is not None and whole is not None
        else f"the rest of it ({cut.damaged})"
    )
    cr2 = next((e for e in log.evidence if e.locator.name == LOG_FAULT_ADDRESS), None)
    if cr2 is not None:  # the closing CR2 line is the report's last: a cut report's is its register dump's
        lacks.append(f"the fault address of its closing CR2 line (the CR2 at {cr2.cite()} is the register dump's)")
    rest = "; ".join(lacks)
    where = f"{cut.source} lines {cut.start}-{cut.end}"
    if not cut.trace:
        return (
            f"the same report's start: {where} hold {shown}",
            False,
            f"the rest is not in the log (cut at line {cut.end}): {rest}",
        )
    if not same_function(crash, log):
        # The cut trace's frames name another function (04-hung-task cut 7 lines in: "INFO: task hung in corrupted"
        # beside the dump's kf_waiter_update): one report, matched but not corroborated, as correlate merges it
        # (review ue20 #11: the section said "the dump's crash is the report at" where the finding said "same event").
        named = f"the function the dump's crash names ({function.group(1)})" if function else "its crash's title"
        return (
            f"the same report: {where} hold {shown} and the start of its call trace, titled {log.title!r}, not {named}",
            False,
            f"it does not corroborate the function; not in the cut log (cut at line {cut.end}): {rest}",
        )
    # The trace's first frames are in the log; they are not compared with the dump's stack frame by frame.
    said = (
        f"the log is cut at line {cut.end}: it matched {shown}, and holds the start of its call trace; not in the "
        f"cut log: {rest}"
    )
    return f"the dump's crash is the report at {where}; {said}", True, said


def _leak_outsized(by_id: dict[str, Finding]) -> list[tuple[str, str, str]]:
    out = []
    for dump in (f for f in by_id.values() if f.kind is FindingKind.OUTSIZED_SLAB):
        cache = dump.subject(SubjectKind.SLAB_CACHE)
        for leak in (f for f in by_id.values() if f.kind is FindingKind.SLAB_LEAK):
            if cache is not None and leak.subject(SubjectKind.SLAB_CACHE) == cache:
                out.append((leak.id, dump.id, f"{cache.name} grows in the samples and is outsized in the dump"))
    return out


def _hung_task(by_id: dict[str, Finding]) -> list[tuple[str, str, str]]:
    out = []
    for dump in (f for f in by_id.values() if f.kind is FindingKind.HUNG_TASK):
        waiter = dump.subject(SubjectKind.TASK)
        for log in (f for f in by_id.values() if f.kind is FindingKind.DMESG_HANG):
            for ev in log.evidence:
                # The log's side is a verbatim report line: the kernel's own words name the task.
                m = HUNG_REPORT.search(ev.excerpt)
                if m and waiter == Subject(SubjectKind.TASK, m.group(1), int(m.group(2))):
                    out.append((dump.id, log.id, f"the log's hung task {m.group(1)} is the dump's D-state task"))
                    break
    return out


def _hog_lockup(by_id: dict[str, Finding]) -> list[tuple[str, str, str]]:
    out = []
    for log in (f for f in by_id.values() if f.kind in _LOCKUP_KINDS):
        # The report names the task as NAME:PID: another process of the same name (another run, another host)
        # is not the task that locked up.
        tasks = {
            Subject(SubjectKind.TASK, m.group(1), int(m.group(2)))
            for ev in log.evidence
            if (m := _LOCKUP_TASK.search(ev.excerpt))
        }
        for hog in (f for f in by_id.values() if f.kind in (FindingKind.SCHED_CPU_HOG, FindingKind.SCHED_RT_HOG)):
            task = hog.subject(SubjectKind.TASK)
            if task is not None and task in tasks:
                out.append((log.id, hog.id, f"the trace's CPU hog is the task the soft lockup names ({hog.title})"))
    return out


RULES: tuple[tuple[str, Rule], ...] = (
    ("hung-task", _hung_task),
    ("leak-outsized", _leak_outsized),
    ("hog-lockup", _hog_lockup),
    ("same-crash", _same_crash),
)


def _contradictions(
    by_id: dict[str, Finding], away: Callable[[Finding], bool], known: Collection[str] = ()
) -> list[Finding]:
    """The dump and a log that disagree on the crash, and the inputs whose times lie past it.

    A log already set apart (``away``: another boot, host or release) is no view of this crash: its panic is not
    said to "disagree" with the dump's (the other kernel's OOM panic did, at medium, beside its own contradiction).
    ``known``: the inputs a contradiction already sets apart (another release or host), not set apart again by their
    times.
    """
    crashes = [f for f in by_id.values() if f.kind is FindingKind.CRASH]
    logs = [f for f in by_id.values() if _log_crash_ending_boot(f) and not away(f)]
    out = []
    for crash in crashes:
        if logs and not any(log.title == crash.title or _one_message(crash, log) for log in logs):
            other = logs[-1]
            out.append(
                Finding(
                    id=finding_id(FindingKind.CONTRADICTION, crash.title, other.title),
                    kind=FindingKind.CONTRADICTION,
                    title=f"the dump and the log disagree: {crash.title!r} vs {other.title!r}",
                    severity=Severity.MEDIUM,
                    confidence=0.6,
                    confidence_reason="different titles for the crash that panicked the kernel",
                    summary="The log's panicking report is not the dump's crash: the log may come from another "
                    "boot, or the dump from another crash. Check the boot ids and times of both inputs.",
                    evidence=(crash.evidence[0], other.evidence[0]),
                    next_steps=("compare the Linux version and boot time lines of both inputs",),
                    detector="incident",
                    # The log's report of the crash that ended its boot was compared with the dump's crash.
                    baseline=Baseline(
                        "the crash the dump holds, which a log of the dumped boot ends in too",
                        repr(crash.title),
                        f"the dump's crash, {crash.evidence[0].cite()}",
                    ),
                )
            )
    out += _other_boots(tuple(by_id.values()), known)
    return out


def _fault_addresses_differ(crash: Finding, log: Finding) -> Finding | None:
    """A contradiction when the dump's crash and the log's report of it read different fault addresses (CR2), else
    None: one of the two is not this fault's (a nested fault's, read from a register dump; another crash's)."""
    dumped, logged = crash.fact(DUMP_FAULT_ADDRESS), log.fact(LOG_FAULT_ADDRESS)
    if not isinstance(dumped, str) or not isinstance(logged, str):
        return None
    try:
        if int(dumped, 16) == int(logged, 16):
            return None
    except ValueError:
        return None
    cited = next((e for e in log.evidence if e.locator.name == LOG_FAULT_ADDRESS), log.evidence[0])
    return Finding(
        id=finding_id(FindingKind.CONTRADICTION, crash.title, "CR2", dumped, logged),
        kind=FindingKind.CONTRADICTION,
        title=f"the dump and the log disagree on the crash's fault address (CR2): {dumped} vs {logged}",
        severity=Severity.MEDIUM,
        confidence=0.6,
        confidence_reason="two values read for one fault's address",
        summary=f"The dump's log gives the crash's fault address as {dumped}, the log's report of it as {logged} "
        f"({cited.cite()}): one of them is not this fault's (a nested fault's, read from a register dump, or "
        "another crash's). The dump's analysis used its own.",
        evidence=(crash.evidence[0], cited),
        next_steps=("compare the oops's closing CR2: line in the dump's log (crash> log) and in the log",),
        detector="incident",
        baseline=Baseline(
            "the fault address the dump gives for the crash (its log's closing CR2: line)",
            dumped,
            f"the dump's crash, {crash.evidence[0].cite()}",
        ),
    )


def _other_boots(findings: tuple[Finding, ...], known: Collection[str] = ()) -> list[Finding]:
    """An input whose times since boot are past the crash cannot come from the crashed boot, unless a contradiction
    already sets it apart (``known``): a 3.10.31-ltsi trace beside a 6.1.192 dump was set apart twice, as two
    findings, by its release and by its times (review ue23 #12)."""
    out = []
    crash = next((f for f in findings if f.kind is FindingKind.CRASH), None) or next(
        (f for f in findings if _log_crash_ending_boot(f)), None
    )
    for source, (ev, end) in foreign_sources(findings).items():
        if source in known:
            continue
        assert ev.timestamp is not None
        crash_ev = next((e for e in crash.evidence if e.timestamp is not None), None) if crash else None
        out.append(
            Finding(
                id=finding_id(FindingKind.CONTRADICTION, "other boot", source),
                kind=FindingKind.CONTRADICTION,
                title=f"{source} cannot come from the crashed boot: its times start at "
                f"{ev.timestamp.seconds:.3f} s since boot, after the crash at {end:.3f} s",
                severity=SET_APART_SEVERITY,
                confidence=0.9,
                confidence_reason="a kernel that crashed never reached the later uptime; unless its clock "
                "does not count from boot, the input was recorded in another boot",
                summary=f"The input {source} was recorded {ev.timestamp.seconds - end:.1f} s after the crashed "
                "kernel died, counted since boot: it belongs to another boot (or another host). Its findings are "
                "kept on their own clock and not ordered against the crash.",
                evidence=(ev,) if crash_ev is None else (crash_ev, ev),
                next_steps=("compare the boot ids (/proc/sys/kernel/random/boot_id) and host names of the inputs",),
                facts=(Fact("other boot", source), Fact("crash since boot", f"{end:.6f} s")),
                detector="incident",
                # The input's first time since boot was compared with the crash's: the crashed kernel's last.
                baseline=Baseline(
                    "the crashed kernel's last time since boot: a time of its boot is at or before its crash",
                    f"{end:.3f} s",
                    "the crash" if crash_ev is None else f"the crash, {crash_ev.cite()}",
                ),
            )
        )
    return out


def _elsewhere(
    key: tuple[str, ...],
    title: str,
    reason: str,
    summary: str,
    evidence: tuple[Evidence, ...],
    next_step: str,
    facts: tuple[Fact, ...],
    baseline: Baseline,
) -> Finding:
    """A contradiction naming an input of another host or kernel: its findings are not this incident's causes;
    ``baseline``: what the input was compared with (the crashed host's name, the dump's release, its crash time)."""
    return Finding(
        id=finding_id(FindingKind.CONTRADICTION, *key),
        kind=FindingKind.CONTRADICTION,
        title=title,
        severity=SET_APART_SEVERITY,
        confidence=0.9,
        confidence_reason=reason,
        summary=summary,
        evidence=evidence,
        next_steps=(next_step,),
        facts=facts,
        detector="incident",
        baseline=baseline,
    )


def _named_host(incident: Incident) -> str | None:
    host = incident.host
    # "(none)" is the kernel's default nodename: nothing set a host name.
    return host if isinstance(host, str) and host not in ("", "(none)") else None


def other_hosts(incidents: tuple[Incident, ...]) -> list[Finding]:
    """Inputs that name another host than the first input that names one: a contradiction, like another boot.

    The crashed host is the one the first input names (``report`` analyses the dump first); the findings of
    an input from elsewhere are kept in the report but not ranked as causes (see the ``other host`` fact).
    """
    named = [(i, h) for i in incidents if (h := _named_host(i)) is not None]
    if not named:
        return []
    home_incident, home = named[0]
    home_ev = _host_named_by(home_incident, home)
    out = []
    for incident, host in named[1:]:
        if host == home or not incident.findings:
            continue
        source = incident.findings[0].evidence[0].source
        # The records that name each host (a log line whose syslog prefix names it, a perf.data's "# hostname : vm"
        # header line), not a sample line that names none; the input's first evidence where none does.  The home
        # input's first, as a contradiction of kernels cites the crash first: it stands on the told boot's lane.
        other_ev = _host_named_by(incident, host) or incident.findings[0].evidence[0]
        cited = (home_ev, other_ev) if home_ev is not None else (other_ev,)
        out.append(
            _elsewhere(
                ("other host", source, host),
                f"{source} comes from host {host}, not {home}: its findings are not this incident's causes",
                "the inputs name two different host names",
                f"The input {source} was recorded on {host}, the others on {home}. Its findings are "
                "listed but not ordered against the crash nor ranked as its causes.",
                cited,
                "check that every input was copied from the crashed machine",
                (Fact("other host", source), Fact("host", host), Fact("crashed host", home)),
                Baseline(
                    "the host the first input that names one names (report reads the dump first)",
                    home,
                    home_ev.cite() if home_ev is not None else _named_in(home_incident),
                ),
            )
        )
    return out


def _named_in(incident: Incident) -> str:
    """Where an input that names its host with no record cited for it is said to name it: its first input."""
    where = next((s.path for s in incident.sources), None) or next(
        (e.source for f in incident.findings for e in f.evidence), "the first input that names one"
    )
    return f"the host name {where} records"


def _host_named_by(incident: Incident, host: str) -> Evidence | None:
    """A record of ``incident`` that names ``host`` as a word: a header line the analysis says names it
    (:attr:`Examined.named_by`), else a cited line that prints it (a syslog prefix), a timestamped one first."""
    names = re.compile(rf"(?<![\w.-]){re.escape(host)}(?![\w.-])")
    headers = (e for x in incident.examined for e in x.named_by)
    cited = sorted((e for f in incident.findings for e in f.evidence), key=lambda e: e.timestamp is None)
    return next((e for e in (*headers, *cited) if names.search(e.excerpt)), None)


#: What a contradiction of another boot says of the input's findings.
_NOT_OURS = (
    "it belongs to another boot (or another host). Its findings are listed but not ordered against the crash nor "
    "ranked as its causes."
)


def _dump_of(incidents: tuple[Incident, ...]) -> tuple[Incident, Evidence] | None:
    """The dump's incident and its crash's first timestamped evidence (cited beside an input of another boot, so
    that the contradiction stands on the crashed boot's lane); None without a dump."""
    dump = next((i for i in incidents if any(f.kind is FindingKind.CRASH for f in i.findings)), None)
    if dump is None:
        return None
    crash = next(f for f in dump.findings if f.kind is FindingKind.CRASH)
    return dump, next((e for e in crash.evidence if e.timestamp is not None), crash.evidence[0])


@dataclass(frozen=True)
class _Home:
    """The input whose boot the report tells: its incident, its crash's (or first) evidence, and what holds it."""

    incident: Incident
    evidence: Evidence
    holder: str  # "the dump", or the input's path
    dump: bool  # whether it is the dump (a sentence says "the dump 6.1.192", else "LOG names 6.1.192")

    @property
    def names(self) -> str:
        """How a sentence names its release's holder before the release: "the dump" or "LOG names"."""
        return self.holder if self.dump else f"{self.holder} names"


def _home_of(incidents: tuple[Incident, ...]) -> _Home | None:
    """The input whose boot the report tells, its crash's (or first) evidence, and what holds it.

    The dump when there is one; without a dump, the input a critical kernel report is read from (a log's crash),
    else the first input that names its kernel release (``report`` analyses its inputs in a fixed order).
    """
    found = _dump_of(incidents)
    if found is not None:
        return _Home(found[0], found[1], "the dump", dump=True)
    named = [i for i in incidents if isinstance(i.kernel_release, str) and i.findings]
    crashed = [i for i in named if any(map(_log_crash_ending_boot, i.findings))]
    if not (crashed or named):
        # No input has a finding: the first whose record of its release is cited (a clean log's boot banner).
        cited = next(((i, e) for i in incidents if (e := _cited_release(i)) is not None), None)
        return None if cited is None else _Home(cited[0], cited[1], cited[1].source, dump=False)
    home = (crashed or named)[0]
    crash = next(filter(_log_crash_ending_boot, home.findings), home.findings[0])
    ev = next((e for e in crash.evidence if e.timestamp is not None), crash.evidence[0])
    return _Home(home, ev, ev.source, dump=False)


def _cited_release(incident: Incident) -> Evidence | None:
    """What cites the input ``incident`` for its kernel release: its first finding's first evidence, else, without a
    finding, the record that names the release (:attr:`Examined.named_by`: a clean log's boot banner); None when
    nothing does."""
    if incident.findings:
        return incident.findings[0].evidence[0]
    release = incident.kernel_release
    return _release_cited(incident, release) if isinstance(release, str) else None


#: Where an input without a cited line naming its release read it, by the locator its evidence uses.
_RELEASE_READ = {
    LocatorKind.SAMPLE: "the store's run record (the kernel release slab-watch read when it started sampling)",
    LocatorKind.EVENT: "the trace's metadata",
    LocatorKind.ADDRESS: "the dump's VMCOREINFO (OSRELEASE)",
    LocatorKind.LINE: "the log's own lines (a report's 'CPU: ... Tainted: ... RELEASE #N' line or the boot banner "
    "'Linux version RELEASE')",
}


def release_read_at(incident: Incident, release: str, crash: Finding | None = None) -> str:
    """Where ``incident`` read its kernel release: a line that prints it (:func:`_release_cited`: a report's ``CPU:
    ... 6.1.192 #1`` line, a boot banner, a perf.data header's line), else what kind of record holds it."""
    named = _release_cited(incident, release, crash)
    if named is not None:
        line = next((ln for ln in named.excerpt.splitlines() if release in ln), named.excerpt)
        return f"{named.cite()}: {line.strip()!r}"
    evidence = [e for f in incident.findings for e in f.evidence]
    if any(e.locator.name == PERF_SCRIPT_LINE for e in evidence):
        # A perf.data's samples (a saved profile digest keeps no header line): its header names the release.
        return "the perf.data header ('# os release', as perf report --header-only prints it)"
    # A dump's evidence cites its log's lines too: VMCOREINFO is what names its release.
    kinds = sorted({e.locator.kind for e in evidence}, key=_read_rank)
    return next((_RELEASE_READ[k] for k in kinds if k in _RELEASE_READ), "the input's own header")


def _release_cited(incident: Incident, release: str, crash: Finding | None = None) -> Evidence | None:
    """The record that prints ``incident``'s kernel release: ``crash``'s own (its report's ``CPU: ... RELEASE #1``
    line, or the boot banner its finding cites), else one the analysis says names it (:attr:`Examined.named_by`: a
    perf.data header's ``# os release`` line, a log's first report's ``CPU:`` line), else a cited line printing it.

    Not the crash's first line (``kernel BUG at ...``), which does not show the release it is cited for (ue6 10g).
    """
    named = [e for x in incident.examined for e in x.named_by if release in e.excerpt]
    if crash is not None:
        own = [e for e in named if any(_within(e, c) for c in crash.evidence)]
        own += [e for e in crash.evidence if release in e.excerpt]
        if own:
            return own[0]
    cited = (e for f in incident.findings for e in f.evidence if release in e.excerpt)
    return next(iter(named), None) or next(cited, None)


def _within(ev: Evidence, report: Evidence) -> bool:
    """Whether ``ev`` cites a line of the lines ``report`` cites (a report's ``CPU:`` line within its 263-298)."""
    at, span = ev.locator, report.locator
    if ev.source != report.source or at.kind is not LocatorKind.LINE or span.kind is not LocatorKind.LINE:
        return False
    return span.start <= at.start <= (span.end if span.end is not None else span.start)


def _read_rank(kind: LocatorKind) -> int:
    order = list(_RELEASE_READ)
    return order.index(kind) if kind in order else len(order)


def other_kernels(incidents: tuple[Incident, ...], known: frozenset[str] = frozenset()) -> list[Finding]:
    """Inputs that name another kernel release than the dump: recorded in another boot, a contradiction.

    A running kernel's release changes only with a boot, so an input whose one release is not the dump's
    holds nothing of the crashed boot (a store that also holds the crashed boot names both releases, or the
    dump's).  Without a dump, the input of the crash (else the first that names a release) is the home
    (:func:`_home_of`): a 6.1.192 log beside a 6.18 store was told as one story, the log's crash dated at the
    store's boot plus 2 s.  ``known``: sources already said to be elsewhere (another host), not said twice.
    """
    found = _home_of(incidents)
    if found is None or not isinstance(home := found.incident.kernel_release, str):
        return []
    dump, crash_ev, home_name = found.incident, found.evidence, found.names
    # The crash's own line that prints the release is cited for it (the crash's first line does not show it).
    crash = next((f for f in dump.findings if crash_ev in f.evidence), None)
    home_ev = _release_cited(dump, home, crash) or crash_ev
    home_at = release_read_at(dump, home, crash)
    crashed = any(f.kind is FindingKind.CRASH or _log_crash_ending_boot(f) for f in dump.findings)
    boot = "the crashed boot" if crashed else f"the boot of {crash_ev.source}"
    out = []
    for incident in incidents:
        release = incident.kernel_release
        if incident is dump or not isinstance(release, str) or release == home:
            continue
        # An input without findings is set apart too, cited by what names its release (a clean 6.18 log beside a
        # 3.10 trace was "no problem in the inputs from lager", the trace's host, both inputs one boot: ue22 #3).
        first = _cited_release(incident)
        if first is None or first.source in known:
            continue
        read_at = release_read_at(incident, release)
        out.append(
            _elsewhere(
                ("other kernel", first.source, release),
                f"{first.source} cannot come from {boot}: it names kernel {release}, {home_name} {home}",
                "a running kernel's release changes only with a boot",
                f"The input {first.source} was recorded under kernel {release} (read from {read_at}); "
                f"{home_name} {home} (read from {home_at}): " + _NOT_OURS,
                (home_ev, _release_cited(incident, release) or first),
                "check that every input was copied from the crashed machine and boot (boot_id, uname -r)",
                (
                    Fact("other boot", first.source),
                    Fact("kernel", release),
                    Fact("crashed kernel", home),
                    Fact("kernel read from", read_at),
                    Fact("crashed kernel read from", home_at),
                    Fact("crashed kernel of", home_name),
                ),
                Baseline(
                    f"the kernel release {found.holder} names: an input of its boot names the "
                    "same (a release changes only with a boot)",
                    home,
                    home_at,
                ),
            )
        )
    return out


def inputs_named(incidents: tuple[Incident, ...], apart: Collection[str]) -> str:
    """Which input names which kernel release and host, when they name two or more of either: inputs of different
    boots (a release changes only with a boot) or machines, each said as what it names, not all as one host's (a
    clean 6.18 log naming no host beside a 3.10 trace of "lager" was "no problem in the inputs from lager", ue22 #3).
    ``apart``: the inputs set apart from the boot the report tells; "" when the inputs name one of each."""
    named = []
    for incident in incidents:
        cited = _cited_release(incident)
        source = cited.source if cited is not None else next((s.path for s in incident.sources), None)
        release = incident.kernel_release if isinstance(incident.kernel_release, str) else None
        if source is not None and (release is not None or _named_host(incident) is not None):
            named.append((source, release, _named_host(incident)))
    if len({r for _, r, _ in named if r}) < 2 and len({h for _, _, h in named if h}) < 2:
        return ""
    # Inputs that name the same kernel and host are said together: a dump, its dmesg.txt and its console log read as
    # three boots when each was said apart (ue23 #12).
    groups: dict[tuple[str | None, str | None, bool], list[str]] = {}
    for source, release, host in dict.fromkeys(named):
        groups.setdefault((release, host, source in apart), []).append(source)
    said = "; ".join(
        f"{' and '.join(sources)} name{'s' if len(sources) == 1 else ''} "
        f"{'no kernel release' if release is None else f'kernel {release}'} and "
        f"{'no host' if host is None else f'host {host}'}{' (set apart)' if set_apart else ''}"
        for (release, host, set_apart), sources in groups.items()
    )
    return f"The inputs come from different boots or machines: {said}."


#: Seconds past the crash's wall time (beyond the uncertainty of the dump's boot time) a sample may still be of it.
_AFTER_CRASH_WALL_SLACK = 2.0


def after_the_crash(incidents: tuple[Incident, ...], known: frozenset[str] = frozenset()) -> list[Finding]:
    """Inputs on the wall clock whose every time lies after the dump's crash: recorded in a later boot.

    The wall-clock twin of a later uptime: a kernel that crashed at 20:15:58 took no sample at 20:16:30, so a
    store whose samples all come after the crash was recorded in another boot (or on another machine), even
    on the same kernel release.  ``known``: sources already said to be elsewhere, not said twice.
    """
    found = _dump_of(incidents)
    if found is None or not isinstance(boot := found[0].boot_time, BootTime):
        return []
    dump, crash_ev = found
    if (end := crash_uptime(dump.findings)) is None:
        return []
    crash_wall = boot.wall + end
    out = []
    for incident in incidents:
        stamped = [e for f in incident.findings for e in f.evidence if e.timestamp is not None]
        if (
            incident is dump
            or not stamped
            or any(e.timestamp.clock is not Clock.WALL or e.timestamp.zone_unknown for e in stamped if e.timestamp)
        ):  # (a local time of a zone not known is not compared with the dump's UTC)
            continue
        first = min(stamped, key=lambda e: e.timestamp.seconds if e.timestamp else 0.0)
        assert first.timestamp is not None
        if first.source in known or first.timestamp.seconds <= crash_wall + boot.uncertainty + _AFTER_CRASH_WALL_SLACK:
            continue
        starts, crashed = iso_utc(first.timestamp.seconds), f"{iso_utc(crash_wall)} ±{boot.uncertainty:.1f} s"
        out.append(
            _elsewhere(
                ("later boot", first.source),
                f"{first.source} cannot come from the crashed boot: its times start at {starts}, after the crash "
                f"at {crashed}",
                "a kernel that crashed recorded nothing after its crash",
                f"The input {first.source} starts {first.timestamp.seconds - crash_wall:,.0f} s after the crashed "
                "kernel died: " + _NOT_OURS,
                (crash_ev, first),
                "compare the boot ids (/proc/sys/kernel/random/boot_id) and host names of the inputs",
                (Fact("other boot", first.source), Fact("starts at", starts), Fact("crash at", crashed)),
                Baseline(
                    "the crash's wall-clock time (the dump's boot time plus its crash's time since boot): a record of "
                    "its boot is no later",
                    f"{crashed} (+{_AFTER_CRASH_WALL_SLACK:.0f} s of slack)",
                    f"boot time: {boot.basis}; crash: {crash_ev.cite()}",
                ),
            )
        )
    return out


def correlate(
    findings: tuple[Finding, ...], elsewhere: Collection[str] = (), cuts: Collection[LogCut] = ()
) -> tuple[tuple[Finding, ...], tuple[Correlation, ...]]:
    """Merge findings that show one problem; add contradictions; say what was merged and why.

    Rules match on the findings as the inputs gave them, so a log report can
    corroborate both the dump's crash and the dump's hung task; a finding
    merged away is represented by the one that absorbed it.  A finding of an
    input of another boot or host (``elsewhere``, and the inputs whose times
    since boot lie past the crash) corroborates nothing: it is a contradiction,
    never a cause (a store recorded in another boot made the dump's outsized
    cache "corroborated" and its leak the first hypothesis).  ``cuts``: the
    logs that end inside a report; such a report matched with the dump's crash
    says what it matched and what the cut log could not show (:func:`_cut_match`).
    """
    original = {f.id: f for f in findings}
    apart = frozenset(elsewhere) | frozenset(foreign_sources(findings))

    def away(f: Finding) -> bool:
        return bool(f.evidence) and all(e.source in apart for e in f.evidence)

    current = dict(original)
    holder: dict[str, str] = {}
    correlations: list[Correlation] = []

    def home(fid: str) -> str:
        while fid in holder:
            fid = holder[fid]
        return fid

    for rule, find in RULES:
        for keep, drop, why in find(original):
            if away(original[keep]) or away(original[drop]):
                continue
            keep_at = home(keep)
            if keep_at == home(drop) or keep_at not in current:
                continue
            corroborates = rule != "same-crash" or same_function(original[keep], original[drop])
            cut = _cut_of(original[drop], cuts) if rule == "same-crash" else None
            matched = None if cut is None else _cut_match(original[keep], original[drop], cut)
            said, short = (why, "") if matched is None else (matched[0], matched[2])
            corroborates = corroborates and (matched is None or matched[1])
            current[keep_at] = merge_into(current[keep_at], original[drop], said, corroborates, short)
            if drop in current and drop != keep_at:
                del current[drop]
                holder[drop] = keep_at
            correlations.append(Correlation(rule, keep_at, (keep_at, drop), said))
            # A cut report's CR2 is its register dump's (its closing CR2 line is cut off): no fault address of its own.
            if (
                matched is None
                and rule == "same-crash"
                and (differ := _fault_addresses_differ(original[keep], original[drop]))
            ):
                current[differ.id] = differ
                correlations.append(
                    Correlation("contradiction", differ.id, (differ.id,), differ.title, contradiction=True)
                )
    for f in _contradictions(current, away, frozenset(elsewhere)):
        current[f.id] = f
        correlations.append(Correlation("contradiction", f.id, (f.id,), f.title, contradiction=True))
    # The log's reports merged into a dump's consequences stay linked to their root, and a log's report of a
    # consequence not merged is linked too (detectors/incident/consequences.py).  A crash requested with sysrq is
    # said as such, with next steps about who asked (detectors/incident/deliberate.py).
    return tuple(mark(f) for f in link_consequences(current.values())), tuple(correlations)
