"""Issue #32 item 5: totals never exceed their window when the trace clock steps back and forward.

The recorded ``kf.ftrace.txt`` with every other block of 100 events moved 50 ms
earlier (a clock that steps back, then forward again, every ~100 lines): before
the fix qemu had 602 ms of runtime in a 191 ms window, and CPUs were busy for
longer than the trace.  The reference and the compiled analyzer must agree.
"""

from __future__ import annotations

import re
from pathlib import Path

from forensics.model import NotAvailable
from forensics.types.sched import TraceAnalysis
from tests.detectors.sched.test_input_sanity import _both, _lines, _shift, _write
from tests.forensics.test_cli import run

BLOCK = 100
STEP = 0.05


def _stepped(tmp: Path) -> Path:
    head, body = _lines(tmp)
    shifted = [_shift(line, -STEP) if (i // BLOCK) % 2 else line for i, line in enumerate(body)]
    return _write(tmp, "stepped.txt", head, shifted)


def _window(a: TraceAnalysis) -> float:
    assert not isinstance(a.window, type(None))
    first = min(c.first_ts for c in a.cpus)
    last = max(c.last_ts for c in a.cpus)
    return last - first


def test_totals_and_busy_figures_stay_inside_their_window(tmp_path: Path) -> None:
    analysis, _findings = _both(_stepped(tmp_path))
    assert analysis.clock.back >= 10  # the steps are seen
    window = _window(analysis)
    assert 0.1 < window < 0.3
    for task in analysis.tasks:
        assert task.runtime <= window, (task.comm, task.pid, task.runtime, window)
        assert task.runs.total <= window
        assert all(s.total <= window for s in task.blocked), (task.comm, task.blocked)
    for cpu in analysis.cpus:
        assert cpu.busy + cpu.idle <= window, cpu
        assert cpu.irq_time <= window and cpu.softirq_time <= window, cpu
    assert sum(t.runtime for t in analysis.tasks) <= window * len(analysis.cpus)
    for irq in analysis.irqs:
        assert irq.durations.total <= window * len(analysis.cpus), irq
    # The run and idle time counted is what the CPUs' spans hold, less what fell across a step.
    assert sum(c.busy + c.idle for c in analysis.cpus) < 0.9 * sum(c.last_ts - c.first_ts for c in analysis.cpus)


def test_the_coverage_line_says_what_was_left_out(tmp_path: Path) -> None:
    done = run("trace", _stepped(tmp_path))
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # the header is wrapped at the terminal's width
    found = re.search(
        r"clock: \d+ of \d+ steps .* left out of the totals, which count ([\d.]+) ms of the ([\d.]+) ms", text
    )
    assert found, done.stdout[:2000]
    assert float(found.group(1)) < float(found.group(2))


def test_a_clean_trace_keeps_its_totals(tmp_path: Path) -> None:
    head, body = _lines(tmp_path)
    analysis, _findings = _both(_write(tmp_path, "clean.txt", head, body))
    assert analysis.clock.back == 0
    busiest = analysis.tasks[0]
    assert busiest.runtime > 0.05  # the recorded qemu thread ran for most of the trace


def test_a_cpu_with_unknown_run_and_idle_time_is_no_time_left_out(tmp_path: Path) -> None:
    """The stepped trace without CPU1's sched_switch lines: CPU1's run and idle time are unknown, so its span is
    no time the totals left out (the clock line counted its whole span among what they left out)."""
    head, body = _lines(tmp_path)
    shifted = [_shift(line, -STEP) if (i // BLOCK) % 2 else line for i, line in enumerate(body)]
    cut = _write(tmp_path, "cut.txt", head, [x for x in shifted if not ("[001]" in x and " sched_switch:" in x)])
    analysis, _findings = _both(cut)
    cpu0, cpu1 = analysis.cpus
    assert analysis.clock.back and isinstance(cpu1.busy, NotAvailable) and cpu1.last_ts > cpu1.first_ts
    assert isinstance(cpu0.busy, float) and isinstance(cpu0.idle, float) and isinstance(cpu0.first_ts, float)
    assert isinstance(cpu0.last_ts, float)
    done = run("trace", cut)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    said = f"which count {(cpu0.busy + cpu0.idle) * 1e3:.3f} ms of the {(cpu0.last_ts - cpu0.first_ts) * 1e3:.3f} ms"
    assert said in text, text[:2000]
