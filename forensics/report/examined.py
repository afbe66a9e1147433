"""What an incident's analyses examined, and the verdict when none of its findings is a problem.

One place for the words every renderer uses: "No problem found" is said only
with what was looked at and what the inputs could not show (``Incident.examined``).
"""

from __future__ import annotations

from forensics.model import PROBLEM, Incident, below_problem, cut_said, to_watch, unjudged, unjudged_count


def verdict_line(incident: Incident) -> str:
    """One sentence: no findings, only findings below a problem, or how many problems; an analysis that could have
    found nothing (too few samples) makes it "could not judge", not "no problem".

    "No problem found" is said only where no finding asks to be watched: beside a low finding (worth a look) the
    verdict says there is nothing at medium or above and names the low ones, which a plain "No problem found"
    contradicted ("SUnreclaim grows ... watch it" listed under it).  What of an input was not read because its file
    is cut short follows it (a verdict holds for the part read only).
    """
    return _verdict(incident) + cut_said(incident.examined)


def _verdict(incident: Incident) -> str:
    problems = incident.problems()
    if problems:
        said = f"{len(problems)} problem(s) found; the worst is {problems[0].severity.value}: {problems[0].title}."
        apart = unjudged_count(incident.examined)
        return f"{said} Apart from that, {apart} (see what was examined)." if apart else said
    blind = unjudged(incident.examined)
    watch = to_watch(incident.findings)
    below = "; ".join(x for x in (watch, below_problem(incident.findings) if incident.findings else "") if x)
    if blind and all(e.blind for e in incident.examined):
        return f"Could not judge: {blind}." + (f" {below[:1].upper()}{below[1:]}." if below else "")
    apart = unjudged_count(incident.examined)  # what a partly judged analysis could not judge, counted apart
    where = " in what could be judged" if blind else ""
    if watch:
        said = f"Nothing at {PROBLEM.value} severity or above{where}; {below}."
    elif incident.findings:
        said = f"No problem found{where}: nothing at {PROBLEM.value} severity or above; {below}."
    else:
        said = f"No problem found{where}: no findings."
    if blind:
        return f"{said} Could not judge: {blind}."
    return f"{said} {apart[:1].upper()}{apart[1:]} (see what was examined)." if apart else said


def examined_items(incident: Incident) -> list[tuple[str, tuple[str, ...]]]:
    """What was examined, one item per analysis: its line, and under it how it stands to the boot told, what it could
    have found and what it could not judge (a list's items and sub-items, as the renderers show them)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for e in incident.examined:
        under: tuple[str, ...] = (e.standing,) if e.standing else ()
        if e.could_find:
            under += (f"could have found: {'; '.join(e.could_find)}",)
        under += tuple(f"could not judge: {why}" for why in e.could_not)
        # An input that could not be used: not examined, with why (the message its own command gives).
        head = (
            f"examined: {e.what}" if e.unusable is None else f"not examined: {e.what}: could not be used ({e.unusable})"
        )
        out.append((head, under))
    return out


def examined_lines(incident: Incident) -> list[str]:
    """What was examined (one line each), with what it could and could not have found (indented under it)."""
    return [line for head, under in examined_items(incident) for line in (head, *(f"  {x}" for x in under))]
