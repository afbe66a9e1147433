"""Findings of a CPU profile: the classes of the rule table that hold a real share, and the top hotspot.

Pure: stacks and hotspots in, :class:`forensics.model.Finding` out.  Evidence cites the header line
of the heaviest sample of each finding (its line in the ``perf script`` text), with the sample
count and the call chain as facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from detectors.profile.hotspots import Hotspots
from detectors.profile.rules import MIN_SHARE, RULES, Rule, classify
from forensics.model import Evidence, Fact, Finding, FindingKind, Locator, LocatorKind, Severity, finding_id
from forensics.types.profile import Profile, ProfileFrame, ProfileStack, frame_names


@dataclass(frozen=True)
class ClassShare:
    """How much of the profile one rule classes, and its heaviest stack."""

    rule: Rule
    period: int
    samples: int
    share: float
    heaviest: ProfileStack
    symbols: tuple[tuple[str, int], ...]  # leaf symbols in the class, by period


def class_shares(stacks: list[ProfileStack], total_period: int) -> list[ClassShare]:
    """Every rule's share of the profile (each stack counted once, by its first matching rule)."""
    acc: dict[str, tuple[Rule, list[int], list[ProfileStack], dict[str, int]]] = {}
    # Per frames tuple (equal chains share one); the tuple is kept so that its id stays its own.
    seen: dict[int, tuple[tuple[ProfileFrame, ...], tuple[str, ...], Rule | None]] = {}
    for s in stacks:
        got = seen.get(id(s.frames))
        if got is None:
            names = frame_names(s.frames)
            got = seen[id(s.frames)] = (s.frames, names, classify(names, s.frames[-1].kernel if s.frames else None))
        _, names, rule = got
        if rule is None:
            continue
        slot = acc.setdefault(rule.name, (rule, [0, 0], [s], {}))
        slot[1][0] += s.period
        slot[1][1] += s.samples
        if s.period > slot[2][0].period:
            slot[2][0] = s
        slot[3][names[-1]] = slot[3].get(names[-1], 0) + s.period
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
    return sorted(out, key=lambda c: -c.period)


def _evidence(profile: Profile, stack: ProfileStack) -> Evidence:
    if profile.kind == "perf.data":
        # The lines are those of `perf script -i FILE`, not of the binary file itself.
        locator = Locator(LocatorKind.SAMPLE, stack.first_line, name="perf script line")
    else:
        locator = Locator(LocatorKind.LINE, stack.first_line)
    return Evidence(profile.source, locator, stack.first_header.strip() or stack.first_header)


def _chain(stack: ProfileStack, limit: int = 8) -> str:
    names = [f.name for f in stack.frames]
    shown = names if len(names) <= limit else ["..", *names[-limit:]]
    return " <- ".join(reversed(shown))


def profile_findings(
    profile: Profile, stacks: list[ProfileStack], hot: Hotspots, classes: list[ClassShare] | None = None
) -> list[Finding]:
    """A finding per rule class with at least :data:`MIN_SHARE` percent, and one for the top hotspot."""
    findings: list[Finding] = []
    event = hot.event or "samples"
    for c in classes if classes is not None else class_shares(stacks, hot.total_period):
        if c.share < MIN_SHARE:
            continue
        sev = c.rule.severity
        if sev is not Severity.INFO and c.share >= 30.0:
            sev = Severity.MEDIUM if sev is Severity.LOW else Severity.HIGH
        top = ", ".join(f"{n} {100.0 * p / hot.total_period:.1f}%" for n, p in c.symbols[:3])
        findings.append(
            Finding(
                id=finding_id("profile", c.rule.name),
                kind=FindingKind.PROFILE,
                title=f"{c.share:.1f}% of CPU in {c.rule.title}",
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
            )
        )
    if hot.self_symbols:
        top_row = hot.self_symbols[0]
        paths = hot.paths.get(top_row.key, ())
        heaviest = next(
            (
                s
                for s in stacks
                if s.frames and s.frames[-1].name == top_row.key and paths and s.first_line == paths[0].first_line
            ),
            None,
        )
        if heaviest is not None and top_row.share >= MIN_SHARE:
            rule = classify(frame_names(heaviest.frames), heaviest.frames[-1].kernel)
            meaning = f"classed as {rule.title}" if rule else "not in a known overhead class: the program's own work"
            findings.append(
                Finding(
                    id=finding_id("profile", "top-hotspot", top_row.key),
                    kind=FindingKind.PROFILE,
                    title=f"Top hotspot: {top_row.key} ({top_row.share:.1f}% self)",
                    severity=Severity.INFO,
                    confidence=0.9 if top_row.samples >= 50 else 0.5,
                    confidence_reason=f"{top_row.samples} of {hot.total_samples} samples end in it",
                    summary=f"{top_row.key} ({'kernel' if top_row.kernel else 'user'}, {top_row.dso or 'unknown DSO'}) "
                    f"is where the CPU was in {top_row.share:.1f}% of the {event} period; {meaning}.",
                    evidence=(_evidence(profile, heaviest),),
                    next_steps=(
                        f"`perf annotate --stdio -s {top_row.key}` shows the hot instructions; "
                        "the call paths in the table show who calls it",
                    ),
                    facts=(
                        Fact("share", f"{top_row.share:.2f}%"),
                        Fact("samples", str(top_row.samples)),
                        Fact("event", event),
                        Fact("stack", _chain(heaviest)),
                    ),
                    detector="profile.hotspots",
                )
            )
    return findings


__all__ = ["RULES", "ClassShare", "class_shares", "profile_findings"]
