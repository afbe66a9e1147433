"""Ranked root-cause hypotheses from findings, and the summary's first sentence.

One ordered rule table (:data:`RULES`) serves ``kforensic vmcore`` (the findings
of one dump) and ``kforensic report`` (the merged findings of every input), so
both rank the same hypotheses from the same findings.  Each rule reads the
findings only: whatever a rule needs (a lock owner, a module, the crash site)
is a fact of a finding, and a detector that establishes a cause from values
states it itself, typed (``Finding.stated``, rule ``stated``).

Findings of an input that cannot belong to the crashed boot or host (see
:func:`detectors.incident.timeline.foreign_sources` and the contradictions of
:mod:`detectors.incident.correlate`) are not ranked as causes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace

from detectors.incident.deliberate import NEXT_STEPS, configured_panic, deliberate_crash, is_deliberate
from detectors.incident.readiness import incident_findings, readiness_only, readiness_sentence
from detectors.incident.timeline import foreign_sources
from forensics.model import (
    KERNEL_LOG_KINDS,
    PROBLEM,
    SET_APART,
    Examined,
    Finding,
    FindingKind,
    InputKind,
    Severity,
    StatedCause,
    SubjectKind,
    below_problem,
    cut_said,
    to_watch,
    unjudged,
    unjudged_count,
    unusable_said,
)
from forensics.types.deliberate import REQUESTED, REQUESTED_FACT, WHO
from forensics.types.dmesg import (
    AFTER_FACT,
    BOOT_FACT,
    KIND_BASELINES,
    PANIC_UNSEEN_FACT,
    PANICKED,
    PRESSURE_FACT,
    WENT_DOWN,
    ReportKind,
)
from forensics.types.incident import Hypothesis
from forensics.types.rt_budget import RT_PERIOD, RT_RUNTIME
from forensics.units import fmt_ms


def _cites(finding: Finding, n: int = 2) -> tuple[str, ...]:
    return tuple(f"{finding.title} — {ev.cite()}" for ev in finding.evidence[:n])


def _of_kind(findings: tuple[Finding, ...], *kinds: FindingKind | frozenset[FindingKind]) -> list[Finding]:
    """Findings of these kinds (members, or sets of them such as ``KERNEL_LOG_KINDS``)."""
    wanted = {k for x in kinds for k in (x if isinstance(x, frozenset) else (x,))}
    return [f for f in findings if f.kind in wanted]


def _step(finding: Finding, default: str, index: int = 0) -> str:
    return finding.next_steps[index] if finding.next_steps else default


def why_hypothesis(finding: Finding, stated: StatedCause) -> Hypothesis:
    """The hypothesis a finding states itself (its :class:`StatedCause`)."""
    return Hypothesis(
        0,
        stated.statement,
        finding.confidence,
        _cites(finding),
        (),
        stated.next_command or _step(finding, ""),
        (finding.id,),
    )


#: Oom-shaped findings: an OOM kill or an allocation failure (a consequence, never a cause by itself); which of them
#: show that memory ran out is :func:`memory_ran_out`'s.
OOM_KINDS = (FindingKind.DMESG_OOM, FindingKind.DMESG_ALLOC_FAILURE)
#: Findings of memory that grew and was not given back: slab caches (alone or growing together) and the meminfo
#: counters.  Without the group, a report of caches leaking together said "No hypothesis", and an OOM beside it
#: "no kernel leak was measured".
LEAK_KINDS = (FindingKind.SLAB_LEAK, FindingKind.SLAB_LEAK_GROUP, FindingKind.KERNEL_MEMORY_LEAK)
#: Findings of a CPU kept from other work.
STARVATION_KINDS = (FindingKind.SCHED_RT_HOG, FindingKind.SCHED_CPU_HOG, FindingKind.SCHED_SOFTIRQ_STARVATION)


def memory_ran_out(findings: tuple[Finding, ...]) -> list[Finding]:
    """The findings that show memory ran out: OOM kills, and the allocation failures whose Mem-Info: dump showed
    memory short (:data:`PRESSURE_FACT` "yes").  An allocation failure alone shows no exhaustion: an 8 GiB vmalloc
    on a 6.2 GiB machine is a size no state of memory could meet, and a failure without its dump in the log shows
    nothing of the memory (corpus syzkaller-linux-dev 198 was "memory exhaustion by a user-space workload")."""
    return [
        f
        for f in _of_kind(findings, *OOM_KINDS)
        if f.kind is not FindingKind.DMESG_ALLOC_FAILURE or str(f.fact(PRESSURE_FACT) or "").startswith("yes")
    ]


def _leaks(findings: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in _of_kind(findings, *LEAK_KINDS) if f.severity >= Severity.MEDIUM]


def _stated(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    return [why_hypothesis(f, f.stated) for f in findings if f.stated is not None and f.stated.statement]


#: What a step on the dump needs, by the input dropped: the dump, or the vmlinux it was given with (another kernel's).
_OPENED = {InputKind.DUMP: "the {} open", InputKind.VMLINUX: "a vmlinux the dump opens with"}
#: The inputs without which no dump's values were read: the dump, or its vmlinux.
DUMP_INPUTS = frozenset(_OPENED)

#: What a cause read from a kernel log alone lacks: a dump's values (named when a dump given could not be used:
#: :func:`_log_alone`).
NO_DUMP_READ = "read from the kernel log alone: no dump was read to confirm the values"


def _log_alone(examined: tuple[Examined, ...]) -> str:
    """:data:`NO_DUMP_READ`, or, when a dump was given and could not be used, which and why (review ue20 #7: "no
    dump was read" beside a --vmcore given with the wrong vmlinux read as if none had been given)."""
    dropped = "; ".join(
        f"the {e.what} given could not be used ({e.unusable.reason})"
        for e in examined
        if e.unusable and e.input in DUMP_INPUTS  # (a trace or store dropped does not confirm a log's values)
    )
    return f"read from the kernel log alone: {dropped}: no dump confirmed the values" if dropped else NO_DUMP_READ


#: The prompts of the sessions a step runs in on the dump itself (crash, drgn): such a step needs the dump opened.
DUMP_PROMPTS = ("crash> ", ">>> ")


def _dump_first(examined: tuple[Examined, ...]) -> str:
    """What to get before a step at a dump's prompt can run, when the dump given could not be used, or was read as
    its kernel log only (no debug info for its kernel): its error's hint ("get the crash dump D open: give the vmcore
    that kdump wrote, ...", "get a vmlinux the dump opens with: install the kernel's debug info: ..."), "" otherwise.
    A ``crash> dis -rl ...`` suggested beside a dump that would not open (another kernel's vmlinux, a file that is
    no dump) read as if it would.  The first such input says it (another kernel's vmlinux, then the dump it left read
    as its log only: one step)."""
    for e in examined:
        if e.input not in DUMP_INPUTS or not (e.unusable or e.hint):
            continue
        what = _OPENED[e.input if e.unusable else InputKind.VMLINUX].format(e.what)
        return f"get {what}: {e.hint}" if e.hint else f"get {what} ({e.unusable})"
    return ""


def _log_cause(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    """The cause a kernel log report's body establishes (its ``LogCause``, read by detectors/dmesg/why.py).

    Worded as the dump words the same cause (forensics/types/causes.py); read from the log alone, so the
    values a dump would confirm are named as not checked.
    """
    out = []
    for f in _of_kind(findings, KERNEL_LOG_KINDS):
        cause = f.log_cause
        if cause is None or not cause.statement:
            continue
        cited = tuple(
            f"{f.title} — {ev.cite()}" for ev in f.evidence if ev.locator.name in ("report", "cause")
        )[:4] or _cites(f)  # fmt: skip
        out.append(Hypothesis(0, cause.statement, cause.confidence, cited,
                              (NO_DUMP_READ,),
                              cause.next_command or _step(f, ""), (f.id,)))  # fmt: skip
    return out


def _requested(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    crash = deliberate_crash(findings)
    if crash is None:
        return []
    return [Hypothesis(0, f"the crash was deliberate: {REQUESTED}, by {WHO}", 0.95, _cites(crash),
                       ("a process may write to /proc/sysrq-trigger by mistake",),
                       # a log's finding of it, without a dump, has the log's steps (forensics/types/deliberate.py)
                       crash.next_steps[0] if crash.fact(REQUESTED_FACT) and crash.next_steps else NEXT_STEPS[0],
                       (crash.id,))]  # fmt: skip


def _null_field(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    return [
        Hypothesis(0, f"{f.title}: a missing NULL check or an object used before it is set up", f.confidence,
                   _cites(f), (), f.fact("next command") or _step(f, "crash> dis -rl <pc>"), (f.id,))
        for f in _of_kind(findings, FindingKind.NULL_FIELD)
    ]  # fmt: skip


def _crash_site(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    out = []
    for f in _of_kind(findings, FindingKind.CRASH):
        if f.fact("crash site") != "exception frame" or is_deliberate(f):
            continue  # a panic the kernel chose (hung task, OOM, sysrq): the cause is elsewhere
        func = f.fact("crashing function") or "the crashing function"
        module = f.fact("module")
        against: tuple[str, ...] = ("the crash site may only be the victim of memory corrupted elsewhere",)
        if any(
            x.kind is FindingKind.CONTRADICTION and not (x.fact("other boot") or x.fact("other host")) for x in findings
        ):
            against += ("the log and the dump disagree on the crash",)
        out.append(Hypothesis(0, f"a bug in {func}" + (f" (module {module})" if module else ""),
                              f.confidence * 0.8, _cites(f), against, _step(f, "crash> bt"), (f.id,)))  # fmt: skip
    return out


def _module(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    """An out-of-tree or unsigned module in the crashing stack."""
    return [
        Hypothesis(0, f"a bug in an out-of-tree module: {f.title}", 0.6, (f.summary,),
                   ("the module may only be a victim of memory corruption elsewhere",), _step(f, "crash> mod"),
                   (f.id,))
        for f in _of_kind(findings, FindingKind.MODULE)
    ]  # fmt: skip


def _lock_owner(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    out = []
    for f in _of_kind(findings, FindingKind.HUNG_TASK):
        owner = f.fact("lock owner")
        if owner:
            # The detector's last step is the owner's backtrace (``crash> bt PID``).
            out.append(Hypothesis(0, f"{owner} holds the lock and never releases it: {f.title}", f.confidence,
                                  _cites(f), (), _step(f, "crash> bt -a", -1), (f.id,)))  # fmt: skip
    return out


def _leak(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    ooms = memory_ran_out(findings)
    out = []
    for f in _leaks(findings):
        doubt: tuple[str, ...] = ("the growth may be a workload that keeps legitimate objects",)
        story = f"memory leak: {f.title}"
        if ooms:
            story += ", which exhausted memory and led to the OOM killer"
        supporting = _cites(f) + tuple(c for o in ooms for c in _cites(o, 1))
        out.append(Hypothesis(0, story, f.confidence * (1.1 if ooms else 1.0), supporting,
                              doubt if f.confidence < 0.7 else (),
                              _step(f, "kforensic leaks --store STORE"),
                              (f.id, *(o.id for o in ooms))))  # fmt: skip
    return out


def _outsized(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    # A cache outsized in a dump (one point in time) is weaker than growth measured over time.
    return [
        Hypothesis(0, f"memory leak: {f.title}", f.confidence * 0.8, (f.summary,),
                   ("a large cache can also be a legitimate workload",), _step(f, "crash> kmem -s"), (f.id,))
        for f in _of_kind(findings, FindingKind.OUTSIZED_SLAB)
    ]  # fmt: skip


def _workload_oom(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    ooms = memory_ran_out(findings)
    if not ooms or _leaks(findings):
        return []
    return [Hypothesis(0, "memory exhaustion by a user-space workload (no kernel leak was measured)", 0.5,
                       _cites(ooms[0]), ("without samples over time a slow kernel leak cannot be ruled out",),
                       "kforensic slab-watch --hours 24", (ooms[0].id,))]  # fmt: skip


def _starvation(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    """Only problems (medium and above, docs/severity.md): a long run nobody waited behind starved nobody."""
    return [
        Hypothesis(0, f"CPU starvation: {f.title}", f.confidence * 0.9, _cites(f), (),
                   _step(f, "kforensic trace FILE --around T"), (f.id,))
        for f in _of_kind(findings, *STARVATION_KINDS) if f.severity >= PROBLEM
    ]  # fmt: skip


def _log_bug(findings: tuple[Finding, ...]) -> list[Hypothesis]:
    if any(x.kind is FindingKind.CRASH for x in findings):
        return []  # the dump's crash finding carries it
    logs = _of_kind(findings, KERNEL_LOG_KINDS)
    # The lowest confidence of a cause a report's body states, by the report's severity: a report of the same
    # severity whose body states no cause is not ranked above it.  Its confidence is the title's (the report is what
    # the log says it is), not a cause's: ranked above a stated cause, a lack of evidence would outrank evidence.
    # A panic's "kernel_panic" cause is a consequence of the report it follows, not a cause that report's lack of
    # one should rank below; and a report that ended the boot (it panicked, or a panic names it as the report it
    # makes fatal) keeps its title's rank: the demotion is only among reports that did not panic (ue14 finding 3).
    stated: dict[Severity, float] = {}
    for f in logs:
        if f.log_cause is not None and f.log_cause.statement and f.log_cause.cls != "kernel_panic":
            stated[f.severity] = min(stated.get(f.severity, 1.0), f.log_cause.confidence)
    made_fatal = {str(x.fact("follows report")) for x in logs if x.fact("follows report")}
    out = []
    for f in logs:
        if (
            f.kind in OOM_KINDS
            or f.severity < Severity.HIGH
            or (f.log_cause and f.log_cause.statement)
            or is_deliberate(f)
            or configured_panic(f)
        ):
            # (a report whose body states its cause has it ranked by the log-cause rule; a panic a setting asked
            # for is no bug: the OOM, WARNING or hang before it is the finding to explain)
            continue
        frame = f.fact("guilty frame")
        statement = f"a kernel bug reported as {f.title}" + (f" (guilty frame {frame})" if frame else "")
        confidence = f.confidence * 0.7
        if f.severity in stated and not (f.fact("then panicked") or f.title in made_fatal):
            confidence = min(confidence, stated[f.severity] - 0.01)
        out.append(Hypothesis(0, statement, confidence, _cites(f),
                              ("only the log was read: no dump to confirm the state",),
                              _step(f, "kforensic vmcore DUMP"), (f.id,)))  # fmt: skip
    return out


Rule = Callable[[tuple[Finding, ...]], list[Hypothesis]]

#: The rules in order.  Ties in confidence keep this order; the same statement from two rules is
#: kept once, as the first rule words it (a detector's own statement is never shadowed by a generic one).
RULES: tuple[tuple[str, Rule], ...] = (
    ("stated", _stated),
    ("requested-crash", _requested),
    ("log-cause", _log_cause),
    ("null-field", _null_field),
    ("crash-site", _crash_site),
    ("module", _module),
    ("lock-owner", _lock_owner),
    ("leak", _leak),
    ("outsized-slab", _outsized),
    ("workload-oom", _workload_oom),
    ("starvation", _starvation),
    ("log-bug", _log_bug),
)


def _ours(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The findings that may be causes: none of an input from another boot or host."""
    foreign = set(foreign_sources(findings))
    contradictions = [f for f in findings if f.kind is FindingKind.CONTRADICTION]  # (one pass; a log has none)
    foreign |= {str(f.fact("other boot")) for f in contradictions if f.fact("other boot")}
    foreign |= {str(f.fact("other host")) for f in contradictions if f.fact("other host")}
    if not foreign:
        return findings
    return tuple(
        f for f in findings if f.kind is FindingKind.CONTRADICTION or not all(e.source in foreign for e in f.evidence)
    )


def rank_hypotheses(findings: tuple[Finding, ...], examined: tuple[Examined, ...] = ()) -> tuple[Hypothesis, ...]:
    """Hypotheses from the findings by :data:`RULES`, most likely first; ``examined``: what the report examined, to
    name a dump given that could not be used where a cause is read from the log alone, and what to get before a
    step on that dump (``first``)."""
    alone = _log_alone(examined)
    first = _dump_first(examined)
    mine = _ours(findings)
    out: dict[str, Hypothesis] = {}
    for _name, rule in RULES:
        for h in rule(mine):
            out.setdefault(h.statement, h)
    ranked = _after_roots(_after_went_down(sorted(out.values(), key=lambda h: -h.confidence), mine), mine)
    # Each made anew with its rank and rounded confidence, as dataclasses.replace makes it (without its look at the
    # fields, ~2.5 us a hypothesis: 292 of the corpus x4's log).
    return tuple(
        Hypothesis(i, h.statement, round(min(h.confidence, 0.99), 2), h.supporting,
                   tuple(alone if a == NO_DUMP_READ else a for a in h.against), h.next_command, h.finding_ids,
                   first if h.next_command.startswith(DUMP_PROMPTS) else "")
        for i, h in enumerate(ranked, 1)
    )  # fmt: skip


def _report_lines(finding: Finding) -> tuple[str, int, int] | None:
    """The source and the first and last lines of a kernel log finding's report (its "report" evidence)."""
    ev = next((e for e in finding.evidence if e.locator.name == "report"), None)
    if ev is None:
        return None
    return ev.source, ev.locator.start, ev.locator.end or ev.locator.start


def _states(down: Finding, side: Finding, start: int) -> bool:
    """Whether ``down``'s report states ``side`` as its cause: its cause is read from ``side``'s header line
    (``start``), or both name one guilty frame (a WARNING raised by the allocation that failed, in its caller)."""
    if any(e.locator.name == "cause" and e.locator.start == start for e in down.evidence):
        return True
    frame = down.fact("guilty frame")
    return frame is not None and frame == side.fact("guilty frame")


def _side_findings(down: Finding, lines: tuple[str, int, int], starts: _ReportStarts) -> dict[str, Finding]:
    """The findings, by id, printed inside ``lines`` (the source, first and last lines of ``down``'s report: their
    header among them) and less severe than it, that its report does not state as its cause."""
    source, first, last = lines
    at, found = starts.get(source, ([], []))
    out = {}
    for i in range(bisect_left(at, first), bisect_right(at, last)):
        f = found[i]
        if f.severity < down.severity and not _states(down, f, at[i]):
            out[f.id] = f
    return out


#: The kernel log findings of each source by their report's first line, ascending: (lines, findings).
_ReportStarts = dict[str, tuple[list[int], list[Finding]]]


def _report_starts(findings: list[Finding]) -> _ReportStarts:
    """:data:`_ReportStarts` of ``findings``: each report's lines are then found by bisection, not by a walk over
    every finding for each report the machine went down on (the corpus x4's: 1.6 M comparisons, +4% of its CPU)."""
    by_source: dict[str, list[tuple[int, int, Finding]]] = {}
    for n, f in enumerate(findings):
        lines = _report_lines(f)
        if lines is not None:
            by_source.setdefault(lines[0], []).append((lines[1], n, f))
    out: _ReportStarts = {}
    for source, rows in by_source.items():
        rows.sort(key=lambda r: (r[0], r[1]))
        out[source] = ([r[0] for r in rows], [r[2] for r in rows])
    return out


def _after_went_down(ranked: list[Hypothesis], findings: tuple[Finding, ...]) -> list[Hypothesis]:
    """``ranked`` (by confidence) with each hypothesis that names only side findings of a report the machine went down
    on (:func:`_side_findings`: printed inside its lines, less severe, not the cause it states) ranked just below that
    report's best hypothesis, its confidence capped below that one's and the reason said against it.

    The report the boot ended on is the crash the log's title names (syzbot's, crash's): an event printed amid its
    lines by another task is no likelier the crash's cause for its own reading's confidence.  Corpus log 218's
    0-byte vmalloc failure, printed inside a WARNING that panicked (panic_on_warn), was hypothesis 1 (0.60) over the
    WARNING (0.50); 346's RCU stall (0.65) over the WARNING that panicked, which the log's title names.
    """
    out = list(ranked)
    logged = _of_kind(findings, KERNEL_LOG_KINDS)
    downs = [
        (f, lines) for f in logged if f.severity is Severity.CRITICAL and _went_down(f) and (lines := _report_lines(f))
    ]
    starts = _report_starts(logged) if downs else {}
    for down, lines in downs:
        side = _side_findings(down, lines, starts)
        top = next((h for h in out if down.id in h.finding_ids), None) if side else None
        if not side or top is None:
            continue
        said = f"it was printed inside the lines of {down.title}, the report the machine went down on"
        moved = [h for h in out[: out.index(top)] if h.finding_ids and all(i in side for i in h.finding_ids)]
        out = [h for h in out if h not in moved]
        at = out.index(top) + 1
        out[at:at] = [
            replace(h, confidence=min(h.confidence, top.confidence - 0.01), against=(*h.against, said)) for h in moved
        ]
    return out


def _after_roots(ranked: list[Hypothesis], findings: tuple[Finding, ...]) -> list[Hypothesis]:
    """``ranked`` with each hypothesis that names only consequences of findings another hypothesis names moved to just
    after the last of those, and the link said against it.

    A consequence is no likelier a cause than the report it followed from, whatever its own reading's confidence:
    a lockdep splat raised by the printing of a BUG (console_owner taken under the BUG's zone->lock, corpus log 352)
    was hypothesis 1 (0.80) over the BUG (0.50), while the table ranked the BUG first (ue22 #4).
    """
    links = {f.id: f.consequence_of for f in findings if f.consequence_of is not None}
    out = list(ranked)
    for h in ranked:
        if not h.finding_ids or any(i not in links for i in h.finding_ids):
            continue
        roots = {link.root for i in h.finding_ids if (link := links[i]) is not None}
        at = out.index(h)
        below = [j for j, g in enumerate(out) if j > at and roots & set(g.finding_ids)]
        first = links[h.finding_ids[0]]
        if not below or first is None:
            continue
        out.pop(at)
        out.insert(below[-1], replace(h, against=(*h.against, f"it followed from {first.title}: {first.how}")))
    return out


#: The key of the leak rows of :data:`_PLAIN`; the words are :func:`_leak_words`'s, from what the finding measured.
LEAKING = "kernel memory was leaking"
EXHAUSTED = "kernel memory leaked until memory ran out"
#: The fact a leak finding carries (detectors/leaks/findings.py ``given_back``): ``no: ...`` when the series never
#: fell back (beyond jitter), ``yes: NAME fell from A (sample i, T) to B (sample j, T2), N% of its rise before it``.
GIVEN_BACK = "given back"


def held_by_process(main: Finding) -> str | None:
    """What a process holds when the finding's memory is kernel objects a process keeps open ("UDP sockets"), read
    from its typed subject (detectors/leaks/findings.py ``held_by_process``); None for a leak inside the kernel."""
    held = main.subject(SubjectKind.HELD_BY_PROCESS)
    return held.name if held is not None else None


def _leak_words(main: Finding) -> str:
    """What the samples show of a leak finding: called (high) or only suspected, and given back or not.

    "Never given back" is said only where the series never fell back; otherwise its largest fall is named.  A
    suspicion (below high: the leak detector's grade suspect) stays one.  Objects a process holds open are said
    held by a process, not leaked by the kernel, and not "never" given back: the process may still run.
    """
    called = main.severity >= Severity.HIGH
    back = main.fact(GIVEN_BACK)
    held = held_by_process(main)
    if held is not None:
        lead = "a process is holding kernel memory" if called else "a process may be holding kernel memory"
        if back and back.startswith("no"):
            grew = "growing, none of it given back while sampled"
        elif back and back.startswith("yes: "):
            grew = f"growing, though it gave memory back: {back.removeprefix('yes: ')}"
        else:
            grew = "growing; whether it was given back was not measured"
        return f"{lead} (suspected: {held}; {grew})"
    lead = LEAKING if called else "a kernel memory leak was suspected"
    if back and back.startswith("no"):
        return f"{lead} (growing and never given back)"
    if back and back.startswith("yes: "):
        return f"{lead} (growing, though it gave memory back: {back.removeprefix('yes: ')})"
    return f"{lead} (growing; whether it was given back was not measured)"


#: The fact a dump's finding carries with the dump's own free-memory figure (``nr_free_pages``, as
#: ``kmem -i`` FREE); see ``detectors.vmcore.findings.free_memory_at_crash``.
FREE_AT_CRASH = "free memory at the crash"
#: The fact of a dump's crash with the fault address its log reports (``detectors.vmcore.findings``), and a log
#: report's (``detectors.dmesg.why``): the two are compared when they are one crash (detectors/incident/correlate.py).
DUMP_FAULT_ADDRESS = "fault address (CR2)"
LOG_FAULT_ADDRESS = "cr2"

#: Free pages in the dump above this share of RAM: far above the zone watermarks (a few percent at
#: most: min_free_kbytes and watermark_scale_factor, Documentation/admin-guide/sysctl/vm.rst), so
#: memory was not used up at the crash. Below it the dump alone cannot tell (page cache is reclaimable).
DUMP_FREE_SHARE = 0.10


def _dump_free(findings: tuple[Finding, ...]) -> tuple[str, bool] | None:
    """The dump's free-memory fact and whether it shows memory was not used up."""
    for f in findings:
        said = f.fact(FREE_AT_CRASH)
        if said:
            share = float(said.split("(", 1)[1].split("%", 1)[0]) / 100
            return f"the dump shows {said.split(' (nr_free', 1)[0]} at the crash", share >= DUMP_FREE_SHARE
    return None


def _memory_text(main: Finding, findings: tuple[Finding, ...]) -> str:
    """Leaking or exhausted, decided from the evidence: OOM reports, MemAvailable at the last
    sample, and the dump's own free pages at the crash."""
    ooms = [
        f
        for f in _of_kind(findings, *OOM_KINDS, FindingKind.OOM_USERS)
        if f.kind not in OOM_KINDS or memory_ran_out((f,))
    ]
    called = main.severity >= Severity.HIGH
    held = held_by_process(main)
    if held is not None:
        ran_out = (
            f"a process held kernel memory until memory ran out (suspected: {held})"
            if called
            else f"memory ran out, with a process suspected of holding kernel memory ({held})"
        )
    else:
        ran_out = EXHAUSTED if called else "memory ran out, with a kernel memory leak suspected"
    if ooms:
        return f"{ran_out} ({ooms[0].title})"
    state = main.fact("memory exhausted")
    dump = _dump_free(findings)
    if state and state.startswith("yes"):
        return f"{ran_out} ({state.removeprefix('yes: ')})"
    leaking = _leak_words(main)
    if state and state.startswith("no"):
        also = f"; {dump[0]}" if dump else ""
        return f"{leaking}, but memory was not used up: {state.removeprefix('no: ')}{also}"
    if dump and dump[1]:
        return f"{leaking}, but memory was not used up: {dump[0]}"
    if dump:
        return f"{leaking}; {dump[0]} (page cache not counted: whether memory ran out is unknown)"
    return f"{leaking}; whether memory ran out is unknown (no OOM report, MemAvailable not sampled)"


K = FindingKind
_PLAIN: tuple[tuple[frozenset[FindingKind], str], ...] = (
    (frozenset({K.DOUBLE_FREE}), "the kernel freed the same memory twice (a double free)"),
    (frozenset({K.USE_AFTER_FREE}), "the kernel used memory after it had been freed (a use-after-free)"),
    (frozenset({K.DEADLOCK}), "tasks waited forever for locks the other held (a deadlock)"),
    (frozenset({K.SPINLOCK_DEADLOCK}), "a CPU spun forever on a lock that was never released"),
    (frozenset({K.NULL_FIELD}), "the kernel followed a pointer that was never set (a NULL pointer)"),
    (frozenset({K.HUNG_TASK}), "a task waited forever for a lock another task never released"),
    (frozenset({K.DMESG_HANG}), "a task was stuck and stopped making progress"),
    (frozenset({K.SLAB_LEAK, K.SLAB_LEAK_GROUP}), LEAKING),
    (frozenset({K.KERNEL_MEMORY_LEAK}), LEAKING),
    (frozenset({K.DMESG_OOM}), "the machine ran out of memory"),
    (frozenset({K.DMESG_SOFT_LOCKUP}), "one CPU was stuck in the kernel and stopped responding"),
    (frozenset({K.SCHED_RT_HOG}), "a real-time task kept a CPU from other tasks"),
    (frozenset({K.SCHED_CPU_HOG}), "a task kept a CPU from other tasks"),
    (
        frozenset({K.DMESG_RT_THROTTLING}),
        # The line prints no figure: the length is the budget's default, said as such (review ue20 #9: "waited up to
        # that long" named no length).
        "real-time tasks ran a CPU's whole RT budget and the kernel throttled them (RT throttling): the CPU's other "
        f"tasks waited up to that budget, {fmt_ms(RT_RUNTIME)} of every {fmt_ms(RT_PERIOD)} by default "
        "(sched_rt_runtime_us / sched_rt_period_us: the log does not print the values in force)",
    ),
    (frozenset({K.CRASH}), "the kernel hit a fatal error"),
    # The kernel log's commonest reports in plain words; every other kind of report is told by the catch-all row.
    (
        frozenset({K.DMESG_RCU_STALL}),
        "RCU made no progress for seconds (an RCU stall: a CPU or the grace-period thread was stuck)",
    ),
    (frozenset({K.DMESG_KASAN}), "the kernel touched memory it must not (caught by KASAN)"),
    (frozenset({K.DMESG_LOCKDEP}), "the lock checker (lockdep) found a locking bug"),
    (frozenset({K.DMESG_NULL_DEREF}), "the kernel followed a NULL pointer"),
    (frozenset({K.DMESG_WARNING}), "the kernel hit a condition its code says must not happen (a WARNING)"),
    (frozenset({K.DMESG_BUG}), "the kernel hit a condition its code says must not happen (a BUG)"),
    (KERNEL_LOG_KINDS, "the kernel reported an error"),
)


#: The lanes of findings on a clock of their own (a trace's) that cannot be tied to the boot the report tells, by
#: source: told as such, never as the machine's problem (``build_story``: every lane but the told one).
ApartLanes = tuple[tuple[str, tuple[Finding, ...]], ...]


#: The row of a root cause a dump's analysis read from values (a :class:`StatedCause`: a loop that reads no memory, a
#: list corruption, a BUG_ON's condition) whose kind :data:`_PLAIN` has no words for: told in its own statement, and
#: ordered before every row (the cause before the consequence).  Without it, the verdict of a soft lockup whose
#: hypothesis 1 (0.85) read "a loop that reads no memory" from the dump passed it over (review ue17 #4).
STATED_ROW = -1


def _plain_row(f: Finding) -> int | None:
    """The row of :data:`_PLAIN` that tells the finding: the first that holds its kind; :data:`STATED_ROW` for a
    root cause read from values that no row tells."""
    row = next((i for i, (kinds, _) in enumerate(_PLAIN) if f.kind in kinds), None)
    return STATED_ROW if row is None and f.stated is not None else row


def _plain_words(f: Finding, row: int) -> str:
    """The words that tell the finding of row ``row`` (:func:`_plain_row`): a hog's, from the task and CPU it names
    (:func:`_hog_words`)."""
    if row == STATED_ROW and f.stated is not None:
        return _one_line(f.stated.statement)
    if f.kind in HOG_KINDS:
        return _hog_words(f, _PLAIN[row][1])
    return _PLAIN[row][1]


#: The scheduling findings about a task that kept a CPU from others: the task's doing (a user process's loop, a
#: SCHED_FIFO busy-wait), the kernel's only when the task is a kernel thread (:data:`KERNEL_RUN_FACT`).
HOG_KINDS = frozenset({FindingKind.SCHED_CPU_HOG, FindingKind.SCHED_RT_HOG})


def kernel_side(f: Finding) -> bool:
    """Whether a finding the verdict tells is about the kernel: every kind but a hog of a task that is not a kernel
    thread (a user task starving others is the task's problem; the kernel did what it promises) and the kernel log's
    RT throttling (the kernel stopping real-time tasks that ran their whole budget, as it promises)."""
    if f.kind is FindingKind.DMESG_RT_THROTTLING:
        return False
    if f.kind not in HOG_KINDS:
        return True
    # Imported where a scheduling finding is told: a kernel log's run does not import the scheduling types.
    from forensics.types.sched import KERNEL_RUN_FACT

    return f.fact(KERNEL_RUN_FACT) is not None


def _hog_words(f: Finding, generic: str) -> str:
    """What a hog finding says in plain words, from its values: "a real-time task, rthog (pid 22126), kept CPU1
    from other tasks for 950.845 ms"; ``generic`` (the :data:`_PLAIN` row's) where it names no task."""
    task = f.subject(SubjectKind.TASK)
    if task is None:
        return generic
    from forensics.types.sched import KERNEL_RUN_FACT

    rt = "real-time " if f.kind is FindingKind.SCHED_RT_HOG else ""
    kind = f"a {rt}kernel thread" if f.fact(KERNEL_RUN_FACT) is not None else f"a {rt}task"
    who = task.name if task.pid is None else f"{task.name} (pid {task.pid})"
    cpu = f.subject(SubjectKind.CPU)
    # Its longest run as the fact holds it: "for at least 572.208 ms" when the run was still open where the
    # recording or the window ends (Fact.lower_bound; until 2026-12-07 "for 572.208 ms", as if it had ended).
    longest = next((x for x in f.shown_facts if x.name == "longest run"), None)
    return f"{kind}, {who}, kept {'a CPU' if cpu is None else f'CPU{cpu.name}'} from other tasks" + (
        f" for {longest.said}" if longest else ""
    )


@dataclass(frozen=True)
class MainProblem:
    """The problem the verdict is about (:func:`main_problem`): the finding, its :data:`_PLAIN` row's words, the
    best-ranked hypothesis that names it, and the more severe problem the ranking put below it, if any."""

    finding: Finding
    words: str
    hypothesis: Hypothesis | None  # None: no hypothesis names any problem: the worst severity chose it
    worse: Finding | None = None  # a problem of higher severity the hypotheses rank below it (told with why)
    worse_hypothesis: Hypothesis | None = None  # the best-ranked hypothesis naming ``worse`` (None: none does)
    passed_over: str = ""  # why hypothesis 1 does not name it, when ``hypothesis`` is ranked below it
    through: Finding | None = None  # the consequence of it that ``hypothesis`` names (its harm counted at the root)


def ranked_by_finding(hypotheses: tuple[Hypothesis, ...]) -> dict[str, Hypothesis]:
    """The best-ranked hypothesis naming each finding, by the finding's id (``hypotheses`` ranked, best first)."""
    out: dict[str, Hypothesis] = {}
    for h in hypotheses:
        for fid in h.finding_ids:
            out.setdefault(fid, h)
    return out


def main_problem(
    findings: tuple[Finding, ...],
    skip: frozenset[str] = frozenset(),
    hypotheses: tuple[Hypothesis, ...] | None = None,
) -> MainProblem | None:
    """The main problem of these findings: among those at medium or above that :data:`_PLAIN` can tell (``skip``:
    ids told otherwise: a crash asked for, another boot's), the one the best-ranked hypothesis names (``hypotheses``:
    the ranking the report shows, :func:`rank_hypotheses` of the findings when None); without one, the finding of
    highest severity.

    The headline follows the ranking the tool shows: chosen by severity it named a later BUG the main problem where
    hypothesis 1 read the cause in the lockdep splat before it.  Where a finding of higher severity is ranked below
    it, that finding and its rank are kept (``worse``), so that the verdict says why.  By severity, ties go to the
    ranking, then to the order of :data:`_PLAIN` (the cause before the consequence); a leak counts with the severity
    of the OOM reports it tells (``_memory_text``: "leaked until memory ran out").
    """
    rows = [(f, row) for f in findings if f.id not in skip and (row := _plain_row(f)) is not None]
    hits = [(f, row) for f, row in rows if f.severity >= Severity.MEDIUM]
    if not hits:
        return None
    ooms = max((f.severity.rank for f in memory_ran_out(findings)), default=0)

    def weight(f: Finding, row: int) -> int:
        return max(f.severity.rank, ooms) if row != STATED_ROW and _PLAIN[row][1] == LEAKING else f.severity.rank

    hypotheses = rank_hypotheses(findings) if hypotheses is None else hypotheses
    ranked = ranked_by_finding(hypotheses)
    # A consequence whose root is a candidate too is told through its root, which its harm is counted at
    # (docs/severity.md): a hypothesis reading the consequence's report names the root's problem.  Corpus log 214's
    # general protection fault, raised while KASAN's wild-memory-access was printed, headlined over it as "this
    # cause" (review ue18 #4).
    ids = {f.id for f, _ in hits}
    roots = {
        f.id: f.consequence_of.root for f, _ in hits if f.consequence_of is not None and f.consequence_of.root in ids
    }
    through: dict[str, Finding] = {}
    for f, _ in hits:
        root = roots.get(f.id)
        if root is not None and f.id in ranked and (root not in ranked or ranked[f.id].rank < ranked[root].rank):
            ranked[root], through[root] = ranked[f.id], f
    hits = [(f, row) for f, row in hits if f.id not in roots]
    last = len(ranked) + 1
    top = max(weight(f, row) for f, row in hits)
    worst, worst_row = min(
        ((f, row) for f, row in hits if weight(f, row) == top),
        key=lambda x: (ranked[x[0].id].rank if x[0].id in ranked else last, x[1]),
    )
    named = [(f, row) for f, row in hits if f.id in ranked]
    if not named:
        return MainProblem(worst, _plain_words(worst, worst_row), None)
    # Hypotheses as likely (one confidence) are a tie the ranking's order does not settle (it keeps the findings'
    # order): the more severe of them, then the better ranked.
    main, row = min(named, key=lambda x: (-ranked[x[0].id].confidence, -weight(*x), ranked[x[0].id].rank, x[1]))
    worse = worst if weight(worst, worst_row) > weight(main, row) else None
    first = hypotheses[0]
    passed = "" if ranked[main.id].rank == first.rank else _passed_over(first, findings, skip)
    return MainProblem(
        main,
        _plain_words(main, row),
        ranked[main.id],
        worse,
        ranked.get(worst.id) if worse is not None else None,
        passed,
        through.get(main.id),
    )


def _passed_over(first: Hypothesis, findings: tuple[Finding, ...], skip: frozenset[str]) -> str:
    """Why the best-ranked hypothesis is not the main problem's: what the findings it names are."""
    by_id = {f.id: f for f in findings}
    named = [by_id[i] for i in first.finding_ids if i in by_id]
    if not named:
        return "it names a finding of an input told apart (a trace on its own clock, another boot or host)"
    if all(f.id in skip for f in named):
        return f"it names {named[0].title}, of another boot of the log or a crash asked for"
    f = next(f for f in named if f.id not in skip)
    if f.severity < Severity.MEDIUM:
        return f"it names {f.title}, below {Severity.MEDIUM.value} severity ({f.severity.value})"
    if _plain_row(f) is not None:
        return f"it names {f.title} ({f.severity.value}), as likely (confidence {first.confidence:.2f}) but less severe"
    return f"it names {f.title}, which the verdict does not tell in plain words"


def ranking_said(found: MainProblem) -> str:
    """Where the main problem's words cite the hypothesis that named it, and why a more severe problem is not the
    main one ("" without a hypothesis: the worst severity chose it, as said)."""
    h = found.hypothesis
    if h is None:
        return ""
    # By rank and confidence only: its statement is the report's Hypotheses list, printed once there (quoted here
    # too, the report printed each hypothesis twice: test_one_severity.py).
    by = f" through {found.through.title}, which followed from it" if found.through is not None else ""
    said = f" Hypothesis {h.rank} of the ranking (confidence {h.confidence:.2f}) names it{by}."
    if found.passed_over:
        said += f" Hypothesis 1 is passed over: {found.passed_over}."
    worse = found.worse
    if worse is None:
        return said
    other = found.worse_hypothesis
    below = (
        f"it is hypothesis {other.rank}, confidence {other.confidence:.2f}"
        if other is not None
        else "no hypothesis names it as a cause"
    )
    return (
        f"{said} The more severe {worse.title} ({worse.severity.value}) is not the main problem: the hypotheses rank "
        f"this cause above it ({below})."
    )


def _one_line(text: str) -> str:
    return " ".join(text.split()).rstrip(".")


def plain_summary(
    findings: tuple[Finding, ...],
    host: str,
    examined: tuple[Examined, ...] = (),
    apart: ApartLanes = (),
    hypotheses: tuple[Hypothesis, ...] | None = None,
) -> str:
    """The report's first sentence, for someone who does not read kernel logs.

    It names the crash when there was one and the main problem found, without
    claiming that one caused the other unless they are the same finding.  Without a problem, an analysis that could
    have found nothing (``examined``: a store of too few samples) is said as "could not judge", not "no problem".
    ``apart``: the findings of a trace on its own clock beside the inputs told (:data:`ApartLanes`): not the machine's
    problem; when the inputs told have none, the trace's problem is said first, as the trace's.  ``hypotheses``: the
    ranking the report shows (:func:`rank_hypotheses` of ``findings`` when None): the main problem is the one it
    ranks first, cited by its rank (:func:`main_problem`).  An input that could not be used (a dump that is none,
    given beside a log) is said after it, with why; so is what of an input was not read because its file is cut short
    (an LTTng stream file ending inside a packet, a truncated perf.data): a verdict holds for the part read only.
    A kdump check's readiness findings are no event of the boot told: left out here (the verdict says them after
    the story: :func:`detectors.incident.readiness.readiness_sentence`), unless a check is all there is to tell.
    """
    if readiness_only(findings, examined):
        return f"On {host}, {readiness_sentence(findings)}" + cut_said(examined) + unusable_said(examined)
    told = incident_findings(findings)
    return _summary(told, host, examined, apart, hypotheses) + cut_said(examined) + unusable_said(examined)


def _summary(
    findings: tuple[Finding, ...],
    host: str,
    examined: tuple[Examined, ...],
    apart: ApartLanes,
    hypotheses: tuple[Hypothesis, ...] | None,
) -> str:
    """:func:`plain_summary` but the inputs that could not be used."""
    if deliberate_crash(findings) is not None:
        return _told(findings, host, examined, others=False, hypotheses=hypotheses)
    # A trace's problem more severe than any of the inputs told is said first, as the trace's, then theirs: beside a
    # kernel log whose only finding was "sched: RT throttling activated" (medium), the trace's high RT hog was left
    # to "20 finding(s) on its own clock" (review ue19 #6).
    worst = max((f.severity for f in findings), default=Severity.INFO)
    for name, lane in apart:
        found = main_problem(lane, hypotheses=hypotheses)
        if found is None or found.finding.severity <= worst:
            continue
        f, text = found.finding, found.words
        said = _memory_text(f, lane) if text == LEAKING else text
        # The findings below a problem are counted over every input but the trace told (as the table lists them).
        others = (*findings, *(g for n, other in apart if n != name for g in other))
        return (
            f"The trace {name} shows a problem on its own clock, which cannot be tied to the other inputs: {said}. "
            f"The finding: {f.title} ({f.severity.value}).{ranking_said(found)} "
            f"{_told(others, host, examined, others=True, hypotheses=hypotheses)}"
        )
    if worst >= PROBLEM:
        return _told(findings, host, examined, others=False, hypotheses=hypotheses)
    # No problem anywhere: the findings below one are counted over every input, the traces on their own clocks too
    # (review 11 #4: "1 finding(s) below medium: 1 info", the profile's, above a table of 20, 9 of them low).
    return _told((*findings, *(f for _name, lane in apart for f in lane)), host, examined, others=False)


def _not_judged(blind: str, examined: tuple[Examined, ...]) -> str:
    """What the inputs could not judge, after a verdict: each thing with why where no analysis judged anything, else
    how many (a kdump check's checks whose files were not read: no problem, never left unsaid)."""
    if blind:
        return f" It could not judge: {blind}."
    apart = unjudged_count(examined)
    return f" Apart from that, {apart} (see what was examined)." if apart else ""


def _told(
    findings: tuple[Finding, ...],
    host: str,
    examined: tuple[Examined, ...],
    others: bool,
    hypotheses: tuple[Hypothesis, ...] | None = None,
) -> str:
    """:func:`plain_summary` of the inputs told (``others``: beside a trace whose problem was said first)."""
    # Beside an input set apart (another boot, host or kernel), the host is the told boot's: "from lager" of a clean
    # 6.18 log naming no host beside lager's 3.10 trace claimed the log for lager (ue22 #3).
    told = (
        "the inputs of the boot this report tells," if any(e.standing.startswith(SET_APART) for e in examined) else ""
    )
    inputs = "the other inputs" if others else told or "the inputs"
    blind = unjudged(examined)
    watch = to_watch(findings)
    if blind and all(e.blind for e in examined) and all(f.severity < PROBLEM for f in findings):
        below = "; ".join(x for x in (watch, below_problem(findings) if findings else "") if x)
        return f"kforensic could not judge {inputs} from {host}: {blind}." + (
            f" {below[:1].upper()}{below[1:]}." if below else ""
        )
    if not findings:
        said = f"kforensic found no known kernel problem in {inputs} from {host}."
        return said + _not_judged(blind, examined)
    worst = max(f.severity for f in findings)
    requested = deliberate_crash(findings)
    if worst < PROBLEM and requested is not None:  # a crash asked for is no problem, but it is what happened
        return (
            f"The Linux kernel on {host} was crashed on request with sysrq ({requested.title}): a kdump test, an "
            f"operator, a watchdog or a write to /proc/sysrq-trigger by mistake. No problem at {PROBLEM.value} "
            "severity or above was found."
        )
    if worst < PROBLEM and watch:  # a low finding is below a problem but worth a look: named, not "no problem"
        said = (
            f"kforensic found nothing at {PROBLEM.value} severity or above in {inputs} from {host}; {watch}; "
            f"{below_problem(findings)}."
        )
        return said + _not_judged(blind, examined)
    if worst < PROBLEM:  # docs/severity.md: below medium a finding is information, not a problem
        said = (
            f"kforensic found no problem in {inputs} from {host}: no finding at {PROBLEM.value} severity or "
            f"above; {below_problem(findings)}."
        )
        return said + _not_judged(blind, examined)
    # A log's critical report crashed the kernel only when it panicked (or the log shows the boot end: an unexpected
    # reboot); an oops with no "Kernel panic" line after it is said as such, not "crashed".
    crash = next((f for f in findings if f.kind is FindingKind.CRASH), None) or next(
        (f for f in findings if f.kind.from_kernel_log and f.severity is Severity.CRITICAL and _went_down(f)), None
    )
    survived = (
        next((f for f in findings if f.kind.from_kernel_log and f.severity is Severity.CRITICAL), None)
        if crash is None and requested is None
        else None
    )
    if survived is not None:
        crash = survived
    # A syslog file or the journal cannot hold a panic, nor a capture cut at the oops: there, no 'Kernel panic' line
    # says nothing (the finding's PANIC_UNSEEN_FACT, detectors/dmesg/findings.py panic_unseen).
    unseen = survived.fact(PANIC_UNSEEN_FACT) if survived is not None else None
    # What the log shows followed it (detectors/dmesg/aftermath.py): the kernel went on, or, in a finding made
    # before that was read, nothing said.
    after = survived.fact(AFTER_FACT) if survived is not None else None
    # A log's report the machine went down on without a panic line: what shows it, said (oops=panic, kdump's boot).
    down = crash.fact(AFTER_FACT) if crash is not None and survived is None else None
    went = (
        ("crashed" if down is None else f"crashed ({down})")
        if survived is None
        else f"oopsed; whether it then went down is {unseen}"
        if unseen is not None
        else f"oopsed and {after}"
        if after is not None
        else "oopsed; whether it then went down is unknown (the log's lines after it were not read)"
    )
    crashed = (
        f"was crashed on request with sysrq ({requested.title}): a kdump test, an operator, a watchdog or a write "
        "to /proc/sysrq-trigger by mistake"
        if requested is not None
        else f"{went} ({crash.title})"
        if crash is not None
        else ""
    )
    # The main problem is the one the best-ranked hypothesis names, the crash too (a lockdep splat it ranks above the
    # BUG that followed is the main problem, not the BUG); where no hypothesis names one, beside a crash it is another
    # finding (the crash is named already), else the crash itself.  In a log of several boots, one of the crash's
    # boot: an earlier boot's WARNING was "the main problem" of a crash that a reboot separates from it.
    asked = frozenset(() if requested is None else (requested.id,))
    boot = crash.fact(BOOT_FACT) if crash is not None else None
    if boot is not None:
        asked |= {f.id for f in findings if f.fact(BOOT_FACT) not in (None, boot)}
    found = main_problem(findings, asked, hypotheses)
    if crash is not None and found is not None and found.hypothesis is None:
        found = main_problem(findings, asked | {crash.id}, hypotheses) or found
    if found is not None and crash is not None and found.worse is not None and found.worse.id == crash.id:
        found = replace(found, worse=None, worse_hypothesis=None)  # the crash is named already, as what happened
    if found is not None:
        main, text = found.finding, found.words
        said = _memory_text(main, findings) if text == LEAKING else text
        ranking = ranking_said(found)
        # Short sentences: what happened, then what was found, then the finding's own words and its own severity,
        # then the hypothesis that names it.
        if crash is None and ((text == LEAKING and held_by_process(main) is not None) or not kernel_side(main)):
            # Kernel memory a process keeps (its sockets, files, mappings), a task that kept a CPU from the others
            # (a SCHED_FIFO busy loop the kernel throttled as it promises): the task's doing, not the kernel's.
            return f"On {host}, {said}. The finding: {main.title} ({main.severity.value}).{ranking}"
        if crash is None and requested is not None:
            # The crash that happened was asked for (a sysrq crash after a BUG the kernel went on from): it is what
            # took the machine down, said first; the problem is the finding.
            return (
                f"The Linux kernel on {host} {crashed}. The main problem found: {said}. The finding: {main.title} "
                f"({main.severity.value})." + ranking
            )
        if crash is None:
            return (
                f"The Linux kernel on {host} had a problem: {said}. The finding: {main.title} ({main.severity.value})."
                + ranking
            )
        of = f" In {boot} of the log." if boot is not None else ""
        if main.id == crash.id:
            return f"The Linux kernel on {host} {went}: {said}. The report: {main.title}.{of}{ranking}"
        return (
            f"The Linux kernel on {host} {crashed}. The main problem found: {said}. The finding: {main.title}.{of}"
            + ranking
        )
    if requested is not None:
        return f"The Linux kernel on {host} {crashed}. No other problem at medium or above was found."
    top = max(findings, key=lambda f: (f.severity.rank, f.confidence))
    # Problems are the findings at PROBLEM or above: a kdump check's 12 info "blocked" lines made a healthy machine's
    # report say "16 problem(s)" (review ue15 #4); those follow from a root cause, counted there, and are said so.
    problems = sum(1 for f in findings if f.severity >= PROBLEM)
    follow = sum(1 for f in findings if f.severity < PROBLEM and f.consequence_of is not None)
    said = f"kforensic found {problems} problem(s) on {host}. The worst: {top.title} ({worst.value})."
    said = f"{said} {follow} finding(s) below {PROBLEM.value} follow from them." if follow else said
    return said + _not_judged(unjudged(examined), examined)  # a check whose input was not read: said apart


def _went_down(finding: Finding) -> bool:
    """Whether a kernel log's critical finding ended its boot: the kernel panicked on it, or the next boot's banner
    followed without a shutdown (an unexpected reboot), or the log shows it went down without a panic line (to kdump:
    detectors/dmesg/aftermath.py)."""
    # By name: the panic's baseline cites its report's own 'Kernel panic' line (forensics/types/dmesg.py).
    names = (PANICKED.name, WENT_DOWN, KIND_BASELINES[ReportKind.REBOOT].name)
    return finding.baseline is not None and finding.baseline.name in names
