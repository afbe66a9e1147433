"""One boot's kernel log as the boot-identity checks read it: its command line, its lines at given times, its panic.

Made by collectors/log_boots.py (a kernel log file, split at each boot banner) and by the report's pipeline from a
dump's printk records (forensics/pipelines/report.py); compared by detectors/incident/boot_identity.py, which says
whether a log given beside a dump of the same kernel release (or beside the told log, without a dump) comes from the
dumped boot.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoggedLine:
    """One line of a log (or one printk record of a dump): where it stands, its time since boot, its text.

    ``text`` is the line as it stands in its source (cited verbatim), ``body`` the kernel's message without the
    printk time, the prefixes of log tools and surrounding blanks (what two views of one record share: a console
    prints a record's next lines with its stamp and a blank, ``dmesg`` indented without one).
    """

    number: int  # 1-based line (or record) number in its source
    seconds: float
    text: str
    body: str


@dataclass(frozen=True)
class LoggedBoot:
    """One boot of a kernel log: its ``Command line:``, its lines at the times asked for, the panic that ended it.

    ``lines`` holds only the lines at the times the reader was asked for (a dump's records' times): a log of
    millions of lines is not kept.  ``panic``: the boot's last ``Kernel panic - not syncing`` line; ``last`` the
    time of its last stamped line.
    """

    source: str
    first_line: int
    release: str | None
    command_line: LoggedLine | None
    lines: tuple[LoggedLine, ...]
    panic: LoggedLine | None
    last: float | None
    # The boot's first RTC line, "setting system clock to ... UTC (EPOCH)" (collectors/log_boots.py boot_clock): the
    # wall-clock time its boot began, EPOCH less the line's printk time (None: the boot prints no such line).
    clock: LoggedLine | None = None
    began: float | None = None
    # The span of times since boot (first, last) over which ``lines`` hold every record of the boot: a store's kernel
    # log records read without a gap (forensics/pipelines/store_log.py); None: not known to (a log, a dump's log).
    complete: tuple[float, float] | None = None
