"""Ranked root-cause hypotheses from the merged findings, and the summary's first sentence."""

from __future__ import annotations

from dataclasses import dataclass

from forensics.model import Finding, Severity


@dataclass(frozen=True)
class Hypothesis:
    """A possible root cause: what, how sure, the evidence for and against, how to confirm."""

    rank: int
    statement: str
    confidence: float
    supporting: tuple[str, ...]  # finding ids and citations
    against: tuple[str, ...]
    next_command: str


def _cites(finding: Finding, n: int = 2) -> tuple[str, ...]:
    return tuple(f"{finding.title} — {ev.cite()}" for ev in finding.evidence[:n])


def _of_kind(findings: tuple[Finding, ...], *prefixes: str) -> list[Finding]:
    return [f for f in findings if f.kind.startswith(prefixes)]


def why_hypothesis(finding: Finding) -> Hypothesis:
    """The hypothesis a finding states itself (its ``hypothesis`` and ``next command`` facts).

    Detectors that establish a root cause from values (``kforensic vmcore``'s BUG
    conditions, list corruption, lock cycles, ...) state it; ``kforensic vmcore``
    and ``kforensic report`` both rank it by the finding's confidence.
    """
    return Hypothesis(
        0,
        finding.fact("hypothesis") or finding.title,
        finding.confidence,
        _cites(finding),
        (),
        finding.fact("next command") or (finding.next_steps[0] if finding.next_steps else ""),
    )


def rank_hypotheses(findings: tuple[Finding, ...]) -> tuple[Hypothesis, ...]:
    """Hypotheses built from the kinds of findings present, most likely first."""
    out: list[tuple[float, str, tuple[str, ...], tuple[str, ...], str]] = []
    for f in findings:
        if f.fact("hypothesis"):
            h = why_hypothesis(f)
            out.append((h.confidence, h.statement, h.supporting, h.against, h.next_command))
    leaks = _of_kind(findings, "slab-leak", "meminfo")
    leaks = [f for f in leaks if f.severity >= Severity.MEDIUM]
    ooms = _of_kind(findings, "dmesg.oom", "dmesg.alloc-failure")
    for f in _of_kind(findings, "null-field"):
        out.append((f.confidence, f"{f.title}: a missing NULL check or an object used before it is set up",
                    _cites(f), (), f.next_steps[0] if f.next_steps else "crash> dis -rl <pc>"))  # fmt: skip
    for f in _of_kind(findings, "crash"):
        if f.fact("crash site") != "exception frame":
            continue  # a panic the kernel chose (hung task, OOM, sysrq): the cause is elsewhere
        func = f.fact("crashing function") or "the crashing function"
        module = f.fact("module")
        against: tuple[str, ...] = ("the crash site may only be the victim of memory corrupted elsewhere",)
        if any(x.kind == "contradiction" for x in findings):
            against += ("the log and the dump disagree on the crash",)
        out.append((f.confidence * 0.8, f"a bug in {func}" + (f" (module {module})" if module else ""),
                    _cites(f), against, f.next_steps[0] if f.next_steps else "crash> bt"))  # fmt: skip
    for f in _of_kind(findings, "hung-task"):
        owner = f.fact("lock owner")
        if owner:
            pid = owner.split("pid ", 1)[-1].split(",", 1)[0].rstrip(")")
            step = f"crash> bt {pid}"
            out.append((f.confidence, f"{owner} holds the lock and never releases it: {f.title}", _cites(f),
                        (), step))  # fmt: skip
    for f in leaks:
        doubt: tuple[str, ...] = ("the growth may be a workload that keeps legitimate objects",)
        against = doubt if f.confidence < 0.7 else ()
        story = f"memory leak: {f.title}"
        if ooms:
            story += ", which exhausted memory and led to the OOM killer"
        supporting = _cites(f) + tuple(c for o in ooms for c in _cites(o, 1))
        out.append((f.confidence * (1.1 if ooms else 1.0), story, supporting, against,
                    f.next_steps[0] if f.next_steps else "kforensic leaks --store STORE"))  # fmt: skip
    for f in _of_kind(findings, "outsized-slab"):
        # A cache outsized in a dump (one point in time): worded and weighed as kforensic vmcore does.
        out.append((f.confidence * 0.8, f"memory leak: {f.title}", (f.summary,),
                    ("a large cache can also be a legitimate workload",),
                    f.next_steps[0] if f.next_steps else "crash> kmem -s"))  # fmt: skip
    if ooms and not leaks:
        o = ooms[0]
        out.append((0.5, "memory exhaustion by a user-space workload (no kernel leak was measured)", _cites(o),
                    ("without samples over time a slow kernel leak cannot be ruled out",),
                    "kforensic slab-watch --hours 24"))  # fmt: skip
    for f in _of_kind(findings, "sched-rt-hog", "sched-cpu-hog", "sched-softirq-starvation"):
        out.append((f.confidence * 0.9, f"CPU starvation: {f.title}", _cites(f), (),
                    f.next_steps[0] if f.next_steps else "kforensic trace FILE --around T"))  # fmt: skip
    for f in _of_kind(findings, "dmesg."):
        if f.kind in ("dmesg.oom", "dmesg.alloc-failure") or f.severity < Severity.HIGH:
            continue
        if any(x.kind == "crash" for x in findings):
            continue  # the dump's crash finding carries it
        frame = f.fact("guilty frame")
        statement = f"a kernel bug reported as {f.title}" + (f" (guilty frame {frame})" if frame else "")
        out.append((f.confidence * 0.7, statement, _cites(f), ("only the log was read: no dump to confirm the state",),
                    f.next_steps[0] if f.next_steps else "kforensic vmcore DUMP"))  # fmt: skip
    ranked = sorted(dict((s, (c, s, sup, ag, nxt)) for c, s, sup, ag, nxt in out).values(), key=lambda h: -h[0])
    return tuple(
        Hypothesis(i, s, round(min(c, 0.99), 2), sup, ag, nxt) for i, (c, s, sup, ag, nxt) in enumerate(ranked, 1)
    )


_PLAIN = (
    ("null-field", "the kernel followed a pointer that was never set (a NULL pointer)"),
    ("hung-task", "a task waited forever for a lock another task never released"),
    ("dmesg.hang", "a task was stuck and stopped making progress"),
    ("slab-leak", "kernel memory was used up and never given back (a memory leak)"),
    ("dmesg.oom", "the machine ran out of memory"),
    ("dmesg.soft-lockup", "one CPU was stuck in the kernel and stopped responding"),
    ("sched-rt-hog", "a high-priority task kept a CPU busy and starved other work"),
    ("sched-cpu-hog", "a task kept a CPU busy for too long"),
    ("crash", "the kernel hit a fatal error"),
    ("dmesg.", "the kernel reported an error"),
)


def plain_summary(findings: tuple[Finding, ...], host: str) -> str:
    """The report's first sentence, for someone who does not read kernel logs.

    It names the crash when there was one and the main problem found, without
    claiming that one caused the other unless they are the same finding.
    """
    if not findings:
        return f"kforensic found no known kernel problem in the inputs from {host}."
    worst = max(f.severity for f in findings)
    crash = next((f for f in findings if f.kind == "crash"), None) or next(
        (f for f in findings if f.kind.startswith("dmesg.") and f.severity is Severity.CRITICAL), None
    )
    for kind, text in _PLAIN:
        hits = [f for f in findings if f.kind.startswith(kind) and f.severity >= Severity.MEDIUM]
        if not hits:
            continue
        main = hits[0]
        # Short sentences: what happened, then what was found, then the finding's own words.
        if crash is None:
            return f"The Linux kernel on {host} had a problem: {text}. The finding: {main.title} ({worst.value})."
        if main.id == crash.id:
            return f"The Linux kernel on {host} crashed: {text}. The report: {main.title}."
        return (
            f"The Linux kernel on {host} crashed ({crash.title}). The main problem found: {text}. "
            f"The finding: {main.title}."
        )
    top = max(findings, key=lambda f: (f.severity.rank, f.confidence))
    return f"kforensic found {len(findings)} problem(s) on {host}. The worst: {top.title} ({worst.value})."
