"""What a ``kforensic dmesg`` run on a plain kernel log imports: not the scheduling analysis (its rules, harm and
types: ~28-31 M instructions of a run, most of it class making) nor ``decimal`` (the times of a ``dmesg -J`` document),
neither of which such a run uses.  The incident's words for the log's RT throttling read the budget's defaults from
:mod:`forensics.types.rt_budget`, as the scheduling analysis does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from detectors.sched import harm
from forensics.types import rt_budget

ROOT = Path(__file__).resolve().parents[3]


def test_a_plain_logs_run_imports_neither_the_scheduling_analysis_nor_decimal() -> None:
    """Every module the run imports, as ``-X importtime`` lists them (the run may end by ``os._exit``)."""
    log = ROOT / "tests/detectors/dmesg/golden/null_deref_x86.log"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "forensics", "dmesg", "--format", "json", str(log)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]  # (1: findings at --fail-on's severity or above)
    assert '"findings"' in done.stdout  # the run wrote its document
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert {"forensics.types.dmesg", "detectors.incident.hypotheses", "forensics.types.rt_budget"} <= imported
    assert sorted(m for m in imported if m.startswith(("detectors.sched", "forensics.types.sched", "decimal"))) == []


def test_the_rt_budget_is_the_scheduling_analysis() -> None:
    assert (harm.RT_RUNTIME, harm.RT_PERIOD) == (rt_budget.RT_RUNTIME, rt_budget.RT_PERIOD) == (0.95, 1.0)
