"""The boots of a kernel log file, as the boot-identity checks compare them with a dump's own log.

A console log holds every boot the serial console printed: the crashed kernel's, then the capture kernel's (kdump),
then the next boot's.  Each boot starts with the banner ``Linux version RELEASE (...)`` at 0.000000 s (init/main.c
start_kernel); a time since boot that goes back by more than :data:`BACKWARDS_SECONDS` starts one too (a banner lost
to a wrapped ring buffer).  Of each boot the reader keeps its ``Command line:`` (arch/x86/kernel/setup.c prints it at
boot), its first RTC line (when the boot began on the wall clock: :func:`boot_clock`), its last ``Kernel panic - not
syncing`` line, its last time, and only the lines at the times asked for (a dump's records'): a log of millions of
lines is not kept.  Lines are read as the log readers read them
(collectors/kernel_log.py: normalized text, ``\\r`` dropped), so that each cited line resolves.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

from collectors.kernel_log import log_chunks, open_log
from forensics.types.boots import LoggedBoot, LoggedLine

#: A stamped line: whatever a log tool put first (``<6>``, a syslog prefix), the printk time, a caller, the message.
_STAMPED = re.compile(rb"[^\[]*\[\s*(\d{1,20}\.\d{1,20})\](?:\[\s*[TC]\d+\])? ?(.*)")
_BANNER = re.compile(r"Linux version (\S+) \(")
COMMAND_LINE = "Command line: "
PANIC = "Kernel panic - not syncing"
#: The RTC's reading at boot (drivers/rtc/class.c rtc_hctosys): "rtc_cmos 00:00: setting system clock to
#: 2026-12-02T20:15:38 UTC (1796242538)", the epoch seconds the kernel set its clock to, at the line's printk time.
_CLOCK_SET = re.compile(r"setting system clock to .{8,40} UTC \((\d{1,12})\)")
#: A time since boot lower than the one before by more than this starts a new boot (its banner was not logged).
BACKWARDS_SECONDS = 1.0


class _Boot:
    """A boot being read."""

    def __init__(self, source: str, first_line: int) -> None:
        self.source = source
        self.first_line = first_line
        self.release: str | None = None
        self.command_line: LoggedLine | None = None
        self.lines: list[LoggedLine] = []
        self.panic: LoggedLine | None = None
        self.last: float | None = None
        self.clock: LoggedLine | None = None
        self.began: float | None = None

    def done(self) -> LoggedBoot:
        return LoggedBoot(
            self.source, self.first_line, self.release, self.command_line, tuple(self.lines), self.panic, self.last,
            self.clock, self.began,
        )  # fmt: skip


def boot_clock(line: LoggedLine) -> float | None:
    """When the boot of ``line`` began on the wall clock (epoch seconds), if it is the RTC's reading at boot: the
    time the kernel set its clock to less the line's printk time; None for any other line."""
    if "setting system clock to " not in line.body:
        return None
    found = _CLOCK_SET.search(line.body)
    return None if found is None else int(found.group(1)) - line.seconds


def _lines(name: str) -> Iterator[bytes]:
    carry = b""
    with open_log(name) as tracked:
        for chunk in log_chunks(tracked):
            parts = (carry + chunk).split(b"\n")
            carry = parts.pop()
            yield from parts
    if carry:
        yield carry


def read_boots(name: str, times: Collection[float] | None, bodies: Collection[str] = ()) -> tuple[LoggedBoot, ...]:
    """The boots of the log ``name``, each with its lines at ``times`` (seconds since boot, to the microsecond) and
    those that print one of ``bodies`` at any time; ``times`` None: every stamped line (a dump's own log, kdump's
    ``dmesg`` file beside it)."""
    wanted = None if times is None else {round(t, 6) for t in times}
    said = frozenset(bodies)
    boots: list[LoggedBoot] = []
    boot: _Boot | None = None
    for number, raw in enumerate(_lines(name), 1):
        m = _STAMPED.match(raw)
        if m is None:
            # A record of several lines: ``dmesg`` and kdump's ``dmesg`` file print the next ones indented without
            # a stamp, the console each with the record's stamp ("[0.019235] Probably due to long platform ...").
            next_line = boot is not None and boot.last is not None and raw[:1] in (b" ", b"\t") and raw.strip()
            if next_line and boot is not None and boot.last is not None and _wanted(wanted, boot.last):
                body = raw.decode("utf-8", "replace").removesuffix("\r").strip()
                boot.lines.append(_line(number, boot.last, raw, body))
            continue
        seconds = float(m.group(1))
        body = m.group(2).decode("utf-8", "replace").removesuffix("\r").strip()
        banner = _BANNER.match(body) if body.startswith("Linux version ") else None
        if (
            boot is None
            or (banner is not None and seconds == 0.0 and boot.last)
            or (boot.last is not None and seconds < boot.last - BACKWARDS_SECONDS)
        ):
            if boot is not None:
                boots.append(boot.done())
            boot = _Boot(name, number)
        boot.last = seconds
        if banner is not None and boot.release is None:
            boot.release = banner.group(1)
        if body.startswith(COMMAND_LINE) and boot.command_line is None:
            boot.command_line = _line(number, seconds, raw, body)
        elif body.startswith(PANIC):
            boot.panic = _line(number, seconds, raw, body)
        elif boot.clock is None and "setting system clock to " in body:
            read = _line(number, seconds, raw, body)
            if (began := boot_clock(read)) is not None:
                boot.clock, boot.began = read, began
        if _wanted(wanted, seconds) or body in said:
            boot.lines.append(_line(number, seconds, raw, body))
    if boot is not None:
        boots.append(boot.done())
    return tuple(boots)


def _wanted(wanted: set[float] | None, seconds: float) -> bool:
    return wanted is None or round(seconds, 6) in wanted


def _line(number: int, seconds: float, raw: bytes, body: str) -> LoggedLine:
    return LoggedLine(number, seconds, raw.decode("utf-8", "replace").removesuffix("\r"), body)
