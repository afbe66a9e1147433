"""Reading a log the test wrote that holds one report: its title and why, and where its lines stand."""

from __future__ import annotations

from pathlib import Path

from forensics.pipelines.dmesg import triage_file
from forensics.types.dmesg import ReportWhy


def only_report_why(tmp_path: Path, text: str) -> tuple[str, ReportWhy]:
    """The title and the why of the one report of ``text`` (written to a file, triaged as a user's log is)."""
    path = tmp_path / "console.log"
    path.write_text(text)
    result = triage_file(str(path))
    (report,) = result.reports
    return report.title, result.whys[report.start_line]


def offset(text: str, header: str, words: str) -> int:
    """The offset of the first line holding ``words`` from the report's header (the first line holding ``header``),
    as a fact cites it."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if header in line)
    return next(i for i, line in enumerate(lines) if words in line) - first


#: The frames of a hung task asleep in a mutex's wait (above the frames a test gives it).
MUTEX_WAIT = (
    " schedule_preempt_disabled+0x13/0x30 kernel/sched/core.c:6846\n"
    " __mutex_lock+0x724/0xe80 kernel/locking/mutex.c:747\n"
)


def hung_report(comm: str, pid: int, frames: str, wait: str = MUTEX_WAIT) -> str:
    """khungtaskd's report of task ``comm``/``pid`` (6.x format): asleep in ``wait`` (a mutex's, by default), called
    from ``frames``."""
    return (f"INFO: task {comm}:{pid} blocked for more than 143 seconds.\n"
            "      Not tainted 6.16.0 #0\n"
            f"task:{comm}     state:D stack:21240 pid:{pid}     tgid:{pid}     ppid:2\n"
            "Call Trace:\n <TASK>\n"
            " __schedule+0x16f5/0x4d00 kernel/sched/core.c:6696\n"
            " schedule+0x165/0x360 kernel/sched/core.c:6789\n"
            f"{wait}{frames}"
            " kthread+0x70e/0x8a0 kernel/kthread.c:463\n"
            " ret_from_fork+0x3fc/0x770 arch/x86/kernel/process.c:148\n"
            " </TASK>\n")  # fmt: skip
