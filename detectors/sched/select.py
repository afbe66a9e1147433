"""``kforensic trace --task``: what is shown narrowed to the tasks a comm or pid names.

``--task`` narrows what is shown, never what is judged: the findings are made from the whole analysis (a victim's
wait is judged against every task that ran meanwhile: the RT task that held its CPU, the CFS tasks it shared it
with), then those about other tasks are left out (:func:`shown_findings`).  Until 2026-12-07 the other tasks were
dropped before judging: with ``--task victim`` an RT hog's 947.733 ms victim was judged "only CFS tasks ran
meanwhile" against "1 runnable task(s)", and the hog's own next step (``--task PID --around ...``) said "No problem
found".
"""

from __future__ import annotations

from collections.abc import Iterable

from forensics.model import Finding, SubjectKind
from forensics.types.sched import (
    TraceAnalysis,
)


def task_matcher(spec: str) -> tuple[int | None, str]:
    """``--task`` as (pid, name): a number is a pid, anything else a comm."""
    return (int(spec), "") if spec.isdigit() else (None, spec)


def select_tasks(a: TraceAnalysis, spec: str) -> TraceAnalysis:
    """Keep only the tasks that ``spec`` names (pid, or comm exactly or as a prefix): the analysis to show."""
    pid, name = task_matcher(spec)
    if pid is not None:
        tasks = tuple(t for t in a.tasks if t.pid == pid)
    else:
        tasks = tuple(t for t in a.tasks if t.comm == name) or tuple(t for t in a.tasks if t.comm.startswith(name))
    return a._replace(tasks=tasks)


def shown_findings(findings: Iterable[Finding], shown: TraceAnalysis) -> list[Finding]:
    """The findings about the tasks of ``shown`` (:func:`select_tasks`), and those about no task (an IRQ line, a
    softirq vector: they stay, as their tables do); each judged before on the whole analysis."""
    pids = {t.pid for t in shown.tasks}
    out = []
    for f in findings:
        tasks = [s.pid for s in f.subjects if s.kind is SubjectKind.TASK]
        if not tasks or any(p in pids for p in tasks):
            out.append(f)
    return out
