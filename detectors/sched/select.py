"""``kforensic trace --task``: the analysis narrowed to the tasks a comm or pid names."""

from __future__ import annotations

from forensics.types.sched import (
    TraceAnalysis,
)


def task_matcher(spec: str) -> tuple[int | None, str]:
    """``--task`` as (pid, name): a number is a pid, anything else a comm."""
    return (int(spec), "") if spec.isdigit() else (None, spec)


def select_tasks(a: TraceAnalysis, spec: str) -> TraceAnalysis:
    """Keep only the tasks that ``spec`` names (pid, or comm exactly or as a prefix)."""
    pid, name = task_matcher(spec)
    if pid is not None:
        tasks = tuple(t for t in a.tasks if t.pid == pid)
    else:
        tasks = tuple(t for t in a.tasks if t.comm == name) or tuple(t for t in a.tasks if t.comm.startswith(name))
    return a._replace(tasks=tasks)
