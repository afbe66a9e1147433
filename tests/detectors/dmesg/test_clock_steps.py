"""A log whose printk time goes back (a new boot without its banner, a kexec, a wrapped or merged log).

A reviewer's log held a WARNING at [3600.000110], then, from the next line, another at [12.500010] (another site),
then a hung task at [3700]: the two WARNINGs, both "WARNING in corrupted" (their frames on the skip lists), were one
bug counted twice; the window ran from 12.5 s to 3700 s and `report` said "for 59.8 min", across the jump.  Now the
two are two bugs, the window is not computed across the jump and what the log could not show names it.
"""

from __future__ import annotations

from pathlib import Path

from forensics.model import NotAvailable
from forensics.pipelines.dmesg import analyse_logs


def _warning(t: float, cpu: int, pid: int, site: str, function: str, caller: str) -> list[str]:
    """A WARNING as __warn() prints it (kernel/panic.c), a short trace of frames syzbot's title skips."""
    body = [
        "------------[ cut here ]------------",
        f"WARNING: CPU: {cpu} PID: {pid} at {site} {function}+0x3c1/0x4f0",
        f"CPU: {cpu} PID: {pid} Comm: kworker/{cpu}:1 Not tainted 6.6.30 #1",
        f"RIP: 0010:{function}+0x3c1/0x4f0",
        "Call Trace:",
        " <TASK>",
        f" {caller}+0x41/0x50",
        " </TASK>",
        "---[ end trace 0000000000000000 ]---",
    ]
    return [f"[{t + i * 1e-5:12.6f}] {line}" for i, line in enumerate(body)]


def _log(tmp_path: Path) -> Path:
    lines = [
        *_warning(3600.0001, 0, 10, "kernel/workqueue.c:1726", "__queue_work", "queue_work_on"),
        *_warning(12.5, 1, 22, "mm/page_alloc.c:4402", "__alloc_pages", "kmalloc_large"),
    ]
    path = tmp_path / "kern.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_two_warnings_of_different_sites_are_two_bugs(tmp_path: Path) -> None:
    result = analyse_logs([str(_log(tmp_path))], live=False)
    (source,) = result.sources
    assert [(g.first.title, g.count, g.first.start_line) for g in source.groups] == [
        ("WARNING in corrupted", 1, 2),
        ("WARNING in corrupted", 1, 11),
    ]
    first, second = result.incident.findings
    assert first.id != second.id  # `report` merges findings by id


def test_a_printk_time_going_back_is_no_window_and_is_said(tmp_path: Path) -> None:
    result = analyse_logs([str(_log(tmp_path))], live=False)
    window = result.incident.window
    assert isinstance(window, NotAvailable)
    assert "goes back between the reports at lines 2 and 11 ([3600.000110] to [12.500010])" in window.reason
    (examined,) = result.incident.examined
    assert any(
        "a duration or order across lines 2-11: the printk time goes back from [ 3600.000110] to [   12.500010]" in x
        for x in examined.could_not
    ), examined.could_not
    # The first part's start after its boot is the first part's, not the log's.
    assert any(x.startswith("reports before [") and "the log's first part starts" in x for x in examined.could_not)
