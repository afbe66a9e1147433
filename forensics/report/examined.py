"""What an incident's analyses examined, and the verdict when none of its findings is a problem.

One place for the words every renderer uses: "No problem found" is said only
with what was looked at and what the inputs could not show (``Incident.examined``).
"""

from __future__ import annotations

from forensics.model import PROBLEM, Incident, below_problem, unjudged


def verdict_line(incident: Incident) -> str:
    """One sentence: no findings, only findings below a problem, or how many problems; an analysis that could have
    found nothing (too few samples) makes it "could not judge", not "no problem"."""
    problems = incident.problems()
    if problems:
        return f"{len(problems)} problem(s) found; the worst is {problems[0].severity.value}: {problems[0].title}."
    blind = unjudged(incident.examined)
    if blind and all(e.blind for e in incident.examined):
        below = f" {below_problem(incident.findings)}." if incident.findings else ""
        return f"Could not judge: {blind}.{below}"
    found = "No problem found in what could be judged" if blind else "No problem found"
    said = (
        f"{found}: nothing at {PROBLEM.value} severity or above; {below_problem(incident.findings)}."
        if incident.findings
        else f"{found}: no findings."
    )
    return f"{said} Could not judge: {blind}." if blind else said


def examined_lines(incident: Incident) -> list[str]:
    """What was examined (one line each), with what it could and could not have found."""
    out: list[str] = []
    for e in incident.examined:
        out.append(f"examined: {e.what}")
        if e.standing:
            out.append(f"  {e.standing}")
        if e.could_find:
            out.append(f"  could have found: {'; '.join(e.could_find)}")
        out += [f"  could not judge: {why}" for why in e.could_not]
    return out
