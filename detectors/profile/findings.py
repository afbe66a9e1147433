"""Findings of a CPU profile: the classes of the rule table that hold a real share, and the top hotspot.

Pure: stacks and hotspots in, :class:`forensics.model.Finding` out.  Evidence cites the header line
of the heaviest sample of each finding (its line in the ``perf script`` text), with the sample
count and the call chain as facts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import replace
from operator import attrgetter, itemgetter

from detectors.profile.rules import MIN_SHARE, RULES, classify, classify_chains
from forensics.model import (
    PERF_SCRIPT_LINE,
    Baseline,
    Clock,
    Evidence,
    Fact,
    Finding,
    FindingKind,
    Locator,
    LocatorKind,
    Severity,
    Timestamp,
    finding_id,
)
from forensics.types.profile import (
    CPU_TIME,
    UNKNOWN_FRAME,
    VECTOR_FROM,
    ClassShare,
    HotspotRule,
    Hotspots,
    Profile,
    ProfileFrame,
    ProfileStack,
    SampledEvent,
    SampleLoss,
    StackColumns,
    StackTable,
    frame_names,
    sample_at,
    stack_table,
    sums,
)

_FRAMES = attrgetter("frames")
_NAME = itemgetter(0)  # a ProfileFrame's name
_PERIOD = attrgetter("period")
_SPACE_WORD = {True: "kernel", False: "user", None: "no frame: neither kernel nor user"}


def class_shares(
    stacks: Sequence[ProfileStack], total_period: int, table: StackTable | None = None
) -> list[ClassShare]:
    """Every rule's share of the profile (each stack counted once, by its first matching rule).

    From :data:`VECTOR_FROM` stacks, summed per chain by number (``table``: the stacks' :func:`stack_table`,
    made here when not given); the same shares, heaviest stacks and order as stack by stack.
    """
    if len(stacks) >= VECTOR_FROM:
        return _class_shares_table(stacks, total_period, table or stack_table(stacks))
    acc: dict[str, tuple[HotspotRule, list[int], list[ProfileStack], dict[str, int]]] = {}
    # Per frames tuple (equal chains share one): its leaf name and rule; the tuple is kept so that its
    # id stays its own.  The loop over the stacks reads three attributes each, through C-level maps.
    seen: dict[int, tuple[tuple[ProfileFrame, ...], str, HotspotRule | None]] = {}
    all_frames = list(map(_FRAMES, stacks))
    ids = list(map(id, all_frames))
    for ident, frames in dict(zip(ids, all_frames, strict=True)).items():  # each chain once, in C
        names = frame_names(frames)
        rule = classify(names, frames[-1].kernel if frames else None)
        seen[ident] = (frames, names[-1] if names else "", rule)
    for s, ident, period in zip(stacks, ids, map(_PERIOD, stacks), strict=True):
        _, leaf, rule = seen[ident]
        if rule is None:
            continue
        slot = acc.get(rule.name)
        if slot is None:
            slot = acc[rule.name] = (rule, [0, 0], [s], {})
        slot[1][0] += period
        slot[1][1] += s.samples
        if period > slot[2][0].period:
            slot[2][0] = s
        slot[3][leaf] = slot[3].get(leaf, 0) + period
    out = [
        ClassShare(
            rule,
            nums[0],
            nums[1],
            100.0 * nums[0] / total_period if total_period else 0.0,
            heavy[0],
            tuple(sorted(syms.items(), key=lambda kv: (-kv[1], kv[0]))),
        )
        for rule, nums, heavy, syms in acc.values()
    ]
    return sorted(map(_reading, out), key=lambda c: -c.period)


def _class_shares_table(stacks: Sequence[ProfileStack], total_period: int, table: StackTable) -> list[ClassShare]:
    """:func:`class_shares` by numbers: each chain classed once, the sums numpy's, no loop over the stacks.

    The heaviest stack of a class is its first stack of the largest period (the loop keeps the first it
    meets); classes come in the order their first stack is met, then by period (a stable sort), as the loop's.
    """
    import numpy as np

    chains = table.chains
    names = table.names
    # Each chain's rule (classify_chains: the same rule as classify, all chains at once), the rules numbered in
    # the order their first chains are met.
    # A class is a rule's name (two rules share "lock"), held by the first rule of that name met.
    by_index = classify_chains(names, np.fromiter((bool(c) and c[-1].kernel for c in chains), bool, len(chains)))
    name_no = {name: i for i, name in enumerate(dict.fromkeys(r.name for r in RULES))}
    name_of = np.array([*(name_no[r.name] for r in RULES), -1], np.int64)  # index -1 (no rule): -1
    met = np.flatnonzero(by_index >= 0)
    found, first = np.unique(name_of[by_index[met]], return_index=True)
    order = np.argsort(first, kind="stable")
    rules: list[HotspotRule] = [RULES[i] for i in by_index[met[first[order]]].tolist()]
    at_of = np.full(len(name_no) + 1, -1, np.int64)
    at_of[found[order]] = np.arange(len(order), dtype=np.int64)
    rule_of_chain = at_of[name_of[by_index]]  # -1 (no rule) reads the last entry, -1
    leaf_of = np.full(len(chains), -1, np.int64)
    full = names.lengths > 0
    leaf_of[full] = names.flat[names.starts[full] + names.lengths[full] - 1]
    leaves = [names.names[i] if i >= 0 else "" for i in leaf_of.tolist()]
    rule_of = rule_of_chain[table.chain_of]
    classed = np.flatnonzero(rule_of >= 0)
    if not len(classed):
        return []
    of, period = rule_of[classed], table.period[classed]
    periods = sums(of, len(rules), period).tolist()
    samples = sums(of, len(rules), table.samples[classed]).tolist()
    chain_period = sums(table.chain_of, len(chains), table.period).tolist()
    symbols: list[dict[str, int]] = [{} for _ in rules]
    for c in np.flatnonzero(rule_of_chain >= 0).tolist():
        syms = symbols[rule_of_chain[c]]
        syms[leaves[c]] = syms.get(leaves[c], 0) + chain_period[c]
    # Each class's first stack, and its first stack of the largest period.
    order = np.lexsort((classed, -period, of))  # by class, then the largest period, then the first met
    starts = np.flatnonzero(np.r_[True, of[order][1:] != of[order][:-1]])
    heaviest = dict(zip(of[order][starts].tolist(), classed[order][starts].tolist(), strict=True))
    first_met = np.unique(of, return_index=True)[1]
    out = [
        ClassShare(
            rules[r],
            periods[r],
            samples[r],
            100.0 * periods[r] / total_period if total_period else 0.0,
            stacks[heaviest[r]],
            tuple(sorted(symbols[r].items(), key=lambda kv: (-kv[1], kv[0]))),
        )
        for r in np.argsort(first_met, kind="stable").tolist()
    ]
    return sorted(map(_reading, out), key=lambda c: -c.period)


def _reading(c: ClassShare) -> ClassShare:
    """The class read as its rule's ``work`` when one function outside the rule's own pattern holds at least half
    of it (a system call class whose time is one kernel function's work, not entry and exit); else as it is."""
    work = c.rule.work
    if work is None or not c.symbols:
        return c
    name, period = c.symbols[0]
    if 2 * period < c.period or c.rule.pattern.search(name):
        return c
    return replace(c, rule=work)


_SYSCALL_FRAME = re.compile(r"^(?:__(?:x64|ia32|x32|arm64|se|do)_sys|ksys)_(\w+)$")


def _work_title(c: ClassShare, total_period: int) -> str:
    """``: most in SYMBOL (N%), under CALL()``: the heaviest symbol of a work class and the system call of its
    heaviest stack (the outermost ``__x64_sys_*``/``ksys_*`` frame), where the chain names one."""
    name, period = c.symbols[0]
    calls = [m.group(1) for f in c.heaviest.frames if (m := _SYSCALL_FRAME.match(f.name))]
    under = f", under {calls[0]}()" if calls else ""
    return f": most in {name} ({100.0 * period / total_period:.1f}%){under}"


def _of_line(stacks: Sequence[ProfileStack], line: int | None) -> Iterable[ProfileStack]:
    """The stacks whose first line is ``line``, in order (of the reader's columns, only those are made)."""
    if line is None:
        return ()
    if isinstance(stacks, StackColumns):
        import numpy as np

        return map(stacks.__getitem__, np.flatnonzero(stacks.first_lines == line).tolist())
    return (s for s in stacks if s.first_line == line)


def _evidence(profile: Profile, stack: ProfileStack) -> Evidence:
    if profile.kind == "perf.data":
        # The lines are those of `perf script -i FILE`, not of the binary file itself.
        locator = Locator(LocatorKind.SAMPLE, stack.first_line, name=PERF_SCRIPT_LINE)
    else:
        locator = Locator(LocatorKind.LINE, stack.first_line)
    # The sample's time, on perf's clock (its own, as a trace's): the report gives the profile a lane of its own;
    # with its CPU, what finds it in the recording (perf script --time T,T+0.000001 -C N: T is cut to the µs).
    ts, cpu = sample_at(stack.first_header)
    stamp = Timestamp(ts, Clock.TRACE) if ts is not None else None
    return Evidence(profile.source, locator, stack.first_header.strip() or stack.first_header, stamp, cpu)


def _chain(stack: ProfileStack, limit: int = 8) -> str:
    names = [f.name for f in stack.frames]
    shown = names if len(names) <= limit else ["..", *names[-limit:]]
    return " <- ".join(reversed(shown))


#: A waste class (lock contention: CPUs spinning without progress) taking this share of the profile is high.
WASTE_HIGH = 30.0
#: A profile whose call chains are mostly ``[unknown]`` frames (weighted by period) says so.
UNKNOWN_SHARE = 50.0
UNKNOWN = UNKNOWN_FRAME


def _unknown_table(stacks: Sequence[ProfileStack], table: StackTable) -> tuple[int, int, int, ProfileStack | None]:
    """:func:`unknown_frames`'s sums by numbers: all frames and unknown ones (by period), samples, worst stack."""
    import numpy as np

    names = table.names
    per_chain = np.zeros(len(table.chains), np.int64)
    full = np.flatnonzero(names.lengths > 0)
    if UNKNOWN in names.names and len(full):
        per_chain[full] = np.add.reduceat(
            (names.flat == names.names.index(UNKNOWN)).astype(np.int64), names.starts[full]
        )
    unknown_of = per_chain[table.chain_of]
    length_of = np.fromiter(map(len, table.chains), np.int64, len(table.chains))[table.chain_of]
    weighted = unknown_of * table.period
    worst_at = int(weighted.argmax())  # the first of the largest, as the loop keeps
    worst = stacks[worst_at] if weighted[worst_at] > 0 else None
    total = int((length_of * table.period).sum())
    return total, int(weighted.sum()), int(table.samples[unknown_of > 0].sum()), worst


#: Bound of the period sums counted in int64 by :func:`_unknown_table` (the loop's Python integers beyond it).
_INT64_SAFE = 1 << 62


def unknown_frames(
    profile: Profile, stacks: Sequence[ProfileStack], table: StackTable | None = None, sampled: SampledEvent = CPU_TIME
) -> Finding | None:
    """A finding when most frames of the call chains are ``[unknown]``: the chains cannot be trusted.

    perf unwinds user stacks by frame pointers unless told otherwise; code built without them
    (``-fomit-frame-pointer``, the default of most distributions' Python and libc) unwinds to
    ``[unknown]``, and so does JIT code without a perf map.  From :data:`VECTOR_FROM` stacks, summed by
    chain number (``table``, made here when not given) when the sums fit in int64.
    """
    total = unknown = samples = 0
    worst: ProfileStack | None = None
    worst_unknown = 0
    if len(stacks) >= VECTOR_FROM:
        table = table or stack_table(stacks)
        longest = max(map(len, table.chains), default=0)
        periods = table.period.tolist()
        if sum(periods) * max(longest, 1) < _INT64_SAFE and min(periods, default=0) >= 0:
            total, unknown, samples, worst = _unknown_table(stacks, table)
            stacks = []  # counted
    # Per frames tuple (equal chains share one); the tuple is kept so that its id stays its own.
    counted: dict[int, tuple[tuple[ProfileFrame, ...], int]] = {}
    for s in stacks:
        got = counted.get(id(s.frames))
        if got is None:
            got = counted[id(s.frames)] = (s.frames, frame_names(s.frames).count(UNKNOWN))
        n = got[1]
        total += len(s.frames) * s.period
        if n:
            unknown += n * s.period
            samples += s.samples
            if n * s.period > worst_unknown:
                worst, worst_unknown = s, n * s.period
    share = 100.0 * unknown / total if total else 0.0
    if worst is None or share <= UNKNOWN_SHARE:
        return None
    where = "the CPU was" if sampled.cpu_time else f"the {sampled.unit} happened"
    return Finding(
        id=finding_id(FindingKind.PROFILE, "unknown-frames"),
        kind=FindingKind.PROFILE,
        title=f"{share:.0f}% of call-chain frames are [unknown]: the call paths cannot be trusted",
        severity=Severity.LOW,
        confidence=0.95,
        confidence_reason="counted over every frame of every sampled call chain, weighted by period",
        summary=(
            f"{share:.1f}% of the frames perf recorded could not be named. The leaf symbols still say where "
            f"{where}, but callers, the flame graph's shape and the classes that look at the whole chain "
            "(futex waits, syscalls, page faults) are incomplete. Code without frame pointers unwinds to "
            "[unknown]; so does JIT code without a perf map."
        ),
        evidence=(_evidence(profile, worst),),
        next_steps=(
            "record again with DWARF unwinding: perf record --call-graph dwarf -g ...",
            "or build the program with -fno-omit-frame-pointer (Python 3.12+: PYTHONPERFSUPPORT=1 or "
            "python -X perf names Python frames); install the debug symbols (debuginfod)",
        ),
        facts=(
            Fact("unknown frames", f"{share:.1f}%"),
            Fact("samples", str(samples)),
            Fact("stack", _chain(worst)),
        ),
        detector="profile.frames",
        baseline=Baseline(
            "share of frames perf could name, below which call paths are unreliable",
            f"{UNKNOWN_SHARE:.0f}%",
            "perf-record(1) --call-graph: fp needs frame pointers, dwarf unwinds without them",
        ),
    )


def _share_baseline(judged: str, value: str) -> Baseline:
    """The baseline of a finding judged by its share of the profile's samples (a class's, the top hotspot's)."""
    return Baseline(
        f"share of the samples: {judged}", value, "the profile's own samples (perf record -F); docs/severity.md"
    )


def profile_findings(
    profile: Profile,
    stacks: Sequence[ProfileStack],
    hot: Hotspots,
    classes: list[ClassShare] | None = None,
    table: StackTable | None = None,
) -> list[Finding]:
    """A finding per rule class with at least :data:`MIN_SHARE` percent, and one for the top hotspot.

    ``table``: the stacks' :func:`forensics.types.profile.stack_table` when the caller has it.
    """
    findings: list[Finding] = []
    event = hot.event or "samples"
    unknown = unknown_frames(profile, stacks, table, hot.sampled)
    if unknown is not None:
        findings.append(unknown)
    if classes is None:
        # The classes judge CPU time: the samples of another event (context switches, page faults) are none.
        classes = class_shares(stacks, hot.total_period, table) if hot.sampled.cpu_time else []
    # How each class was read (a system call class as the work of the calls): the top hotspot's class says the same.
    read_as = {r.name: c.rule for c in classes for r in RULES if r.work is c.rule}
    for c in classes:
        if c.share < MIN_SHARE:
            continue
        # Where the CPU went is information (info: it hurt nobody by itself, docs/severity.md; it was low, "to
        # watch", though nothing promised was exceeded); only waste, CPUs spinning or waiting on locks without
        # progress, is a problem (the rule's own medium), and high when it takes a large share.
        sev = c.rule.severity
        if sev >= Severity.MEDIUM and c.share >= WASTE_HIGH:
            sev = Severity.HIGH
        top = ", ".join(f"{n} {100.0 * p / hot.total_period:.1f}%" for n, p in c.symbols[:3])
        findings.append(
            Finding(
                id=finding_id(FindingKind.PROFILE, c.rule.name),
                kind=FindingKind.PROFILE,
                title=f"{c.share:.1f}% of CPU in {c.rule.title}"
                + (_work_title(c, hot.total_period) if c.rule.names_work else ""),
                severity=sev,
                confidence=0.8 if c.samples >= 50 else 0.5,
                confidence_reason=f"{c.samples} samples of {hot.total_samples}"
                + ("" if c.samples >= 50 else " (few samples: the share is rough)"),
                summary=f"{c.rule.why}. Heaviest symbols: {top}.",
                evidence=(_evidence(profile, c.heaviest),),
                next_steps=(c.rule.next_step,),
                facts=(
                    Fact("class", c.rule.name),
                    Fact("share", f"{c.share:.2f}%"),
                    Fact("samples", str(c.samples)),
                    Fact("event", event),
                    Fact("stack", _chain(c.heaviest)),
                ),
                detector="profile.rules",
                baseline=_share_baseline(
                    "reported from MIN_SHARE; lock contention is high from WASTE_HIGH"
                    if c.rule.severity >= Severity.MEDIUM
                    else "where the CPU went, not harm by itself (reported from MIN_SHARE)",
                    f"{MIN_SHARE:.0f}%" + (f" / {WASTE_HIGH:.0f}%" if c.rule.severity >= Severity.MEDIUM else ""),
                ),
            )
        )
    if hot.self_symbols:
        top_row = hot.self_symbols[0]
        paths = hot.paths.get(top_row.key, ())
        heaviest = next(
            (
                s
                for s in _of_line(stacks, paths[0].first_line if paths else None)
                if s.frames and s.frames[-1].name == top_row.key
            ),
            None,
        )
        if heaviest is not None and top_row.share >= MIN_SHARE:
            what = f"{top_row.key} ({_SPACE_WORD[top_row.kernel]}, {top_row.dso or 'unknown DSO'})"
            if hot.sampled.cpu_time:
                rule = classify(frame_names(heaviest.frames), heaviest.frames[-1].kernel)
                rule = read_as.get(rule.name, rule) if rule else None
                meaning = (
                    f"classed as {rule.title}" if rule else "not in a known overhead class: the program's own work"
                )
                title = f"Top hotspot: {top_row.key} ({top_row.share:.1f}% self)"
                summary = f"{what} is where the CPU was in {top_row.share:.1f}% of the {event} period; {meaning}."
            else:
                # perf report's "Samples: N of event 'E'": a share of the event's count, not of CPU time.
                unit = hot.sampled.unit
                title = f"{top_row.share:.1f}% of {unit} ({event}) sampled in {top_row.key}"
                summary = (
                    f"{what} is where {top_row.share:.1f}% of the {unit} were sampled (the {event} event count). "
                    f"The samples count {event} events, not CPU time: the shares say where the {unit} happen, "
                    "not where the CPU was, and no overhead class judges them."
                    + (
                        " A task that switches out is off the CPU: the call paths say from where (a futex wait, a "
                        "read, a sleep), the per-thread table which tasks switch most."
                        if unit == "context switches"
                        else ""
                    )
                )
            findings.append(
                Finding(
                    id=finding_id(FindingKind.PROFILE, "top-hotspot", top_row.key),
                    kind=FindingKind.PROFILE,
                    title=title,
                    severity=Severity.INFO,
                    confidence=0.9 if top_row.samples >= 50 else 0.5,
                    confidence_reason=f"{top_row.samples} of {hot.total_samples} samples end in it",
                    summary=summary,
                    evidence=(_evidence(profile, heaviest),),
                    next_steps=(
                        _hot_instructions_step(profile, top_row.key, top_row.dso)
                        if hot.sampled.cpu_time
                        else _event_paths_step(profile, hot.sampled.unit),
                    ),
                    facts=(
                        Fact("share", f"{top_row.share:.2f}%"),
                        Fact("samples", str(top_row.samples)),
                        Fact("event", event),
                        Fact("stack", _chain(heaviest)),
                    ),
                    detector="profile.hotspots",
                    # ue15 #13: it had none ("baseline": null in JSON), the one finding of a profile without it.
                    baseline=_share_baseline(
                        "where the CPU went, not harm by itself: the top self symbol is said from MIN_SHARE"
                        if hot.sampled.cpu_time
                        else f"where the {hot.sampled.unit} happen, not CPU time nor harm: the top symbol is said "
                        "from MIN_SHARE",
                        f"{MIN_SHARE:.0f}%",
                    ),
                )
            )
    return [_lossy(f, profile.loss) for f in findings] if profile.loss is not None else findings


#: The confidence of a share read from a recording that lost samples: below 5% lost (perf's own warning threshold,
#: util/session.c) a share is rough, above it the bursts lost may hold what the shares miss.
_LOSSY_CONFIDENCE = ((5.0, 0.75), (100.0, 0.5))


def _lossy(finding: Finding, loss: SampleLoss) -> Finding:
    """``finding`` of a profile that lost samples while recording: its shares are of the samples seen, its
    confidence lowered (review 11 #3: 23.65% lost, and the confidences stayed at 0.9/0.8)."""
    share = loss.share
    cap = next((c for limit, c in _LOSSY_CONFIDENCE if share is not None and share <= limit), 0.5)
    said = f"; perf lost {loss.said()} while recording: the shares are of the samples seen"
    return replace(finding, confidence=min(finding.confidence, cap), confidence_reason=finding.confidence_reason + said)


def _event_paths_step(profile: Profile, unit: str) -> str:
    """Where the events of a recording that is not of CPU time come from: the callers, by task (the hot
    instructions of a tracepoint's sampled function are where the tracepoint fires, nothing to annotate)."""
    where = f" -i {shlex.quote(profile.source)}" if profile.kind == "perf.data" else ""
    return (
        f"`perf report{where} --stdio --no-children --sort comm,sym -G` shows the call paths of each task's {unit}; "
        "for where the CPU went, record CPU time: `perf record -g -F 999`"
    )


def _hot_instructions_step(profile: Profile, key: str, dso: str | None) -> str:
    """How to see the hot instructions of ``key``: ``perf annotate -i FILE -s SYMBOL``; for the samples of a DSO perf
    could not name (``[gzip]``: its addresses, no symbol), perf annotate finds nothing ("The perf.data data has no
    samples!"): perf report sorted by symbol lists their addresses.  A perf.data of another host is named from its
    files, not this machine's: its symbols come from there (``perf archive``), not from a -dbgsym package here."""
    where = f" -i {shlex.quote(profile.source)}" if profile.kind == "perf.data" else ""
    if dso and key == "[" + dso.rsplit("/", 1)[-1] + "]":
        listed = f"`perf report{where} --stdio --dsos {shlex.quote(dso)} --sort sym` lists its hot addresses"
        if profile.recorded_elsewhere:
            return (
                f"{listed}: the recording is from host {profile.host} and was read on {profile.read_on}, where perf "
                f"found no symbols for {dso}; they must come from {profile.host}: run `perf archive` on the perf.data "
                f"there and unpack the archive into ~/.debug here (or give its files with --symfs DIR)"
            )
        return (
            f"{listed}: {dso} has no symbols perf could read (install its debug symbols, e.g. the -dbgsym package, "
            "to name them)"
        )
    # perf annotate -s looks the name up in the symbol table: a name perf script took from debug info (glibc's
    # internal ``__pthread_spin_lock``, printed "(inlined)") is not there, its symbol's name is.
    symbol = profile.inlined_symbols.get(key, key)
    return (
        f"`perf annotate{where} --stdio -s {shlex.quote(symbol)}` shows the hot instructions; "
        "the call paths in the table show who calls it"
    )


__all__ = ["RULES", "ClassShare", "class_shares", "profile_findings"]
