"""What an incident's analyses examined, and the verdict when none of its findings is a problem.

One place for the words every renderer uses: "No problem found" is said only
with what was looked at and what the inputs could not show (``Incident.examined``).
"""

from __future__ import annotations

from forensics.model import PROBLEM, Incident


def verdict_line(incident: Incident) -> str:
    """One sentence: no findings, only findings below a problem, or how many problems."""
    problems = incident.problems()
    if problems:
        return f"{len(problems)} problem(s) found; the worst is {problems[0].severity.value}: {problems[0].title}."
    below = len(incident.findings)
    if below:
        return (
            f"No problem found: nothing at {PROBLEM.value} severity or above; "
            f"{below} finding(s) below it are information."
        )
    return "No problem found: no findings."


def examined_lines(incident: Incident) -> list[str]:
    """What was examined (one line each), with what it could and could not have found."""
    out: list[str] = []
    for e in incident.examined:
        out.append(f"examined: {e.what}")
        if e.could_find:
            out.append(f"  could have found: {'; '.join(e.could_find)}")
        out += [f"  could not judge: {why}" for why in e.could_not]
    return out
