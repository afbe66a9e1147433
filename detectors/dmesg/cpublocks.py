"""Which lines of a lockup report are another CPU's dump.

A lockup report runs from the watchdog's line to the panic's last line, and the lines between can hold other
CPUs' dumps: "Sending NMI from CPU 1 to CPUs 0:" then "NMI backtrace for cpu 0" with that CPU's "CPU: 0 PID: ..."
header, registers and call trace (syzkaller's log 264).  The stuck CPU's frames are read from its own lines only:
a frame in CPU 0's backtrace is where CPU 0 was, with another task.  Each "NMI backtrace for cpu N" or
"CPU: N PID:" header starts the dump of CPU N, up to the next such line; the lines before the first are the stuck
CPU's own (the watchdog prints them on it).

Lockdep's irq-state lines ("hardirqs last  enabled at (N): [<...>] f+0x1/0x2") name a function too, but where
interrupts were last switched on or off, not where the CPU was: no frame of it is read from them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import Final

from forensics import regexcache as rc

#: The first line of CPU N's dump: NMI backtrace's marker, or the dump's "CPU: N PID:" header (since 6.10
#: "CPU: N UID: U PID:").
_CPU_START: Final = rc.compile(r"NMI backtrace for cpu (\d+)|\bCPU: (\d+) (?:UID: \d+ )?PID: \d+")
#: Lockdep's irq-state lines (print_irqtrace_events): where interrupts were last switched, not where the CPU was.
_IRQ_STATE: Final = rc.compile(r"\b(?:hard|soft)irqs last\s+(?:en|dis)abled at \(")


def other_cpu_lines(lines: Iterable[tuple[int, str]], cpu: int) -> frozenset[int]:
    """The numbers of ``lines`` (number, text) inside another CPU's dump than ``cpu``'s (see the module's doc)."""
    other = False
    out: set[int] = set()
    for number, text in lines:
        # The substrings first: most lines hold neither (registers, frames).
        if ("NMI backtrace" in text or "PID: " in text) and (m := _CPU_START.search(text)) is not None:
            other = int(m.group(1) or m.group(2)) != cpu
        if other:
            out.add(number)
    return frozenset(out)


def cpu_blocks(lines: Iterable[tuple[int, str]], cpu: int) -> tuple[tuple[int, int], ...]:
    """Each CPU dump of ``lines`` (number, text) as (its first line's number, the CPU), in order: the lines before
    the first "NMI backtrace for cpu N" / "CPU: N PID:" header are ``cpu``'s (see the module's doc)."""
    out: list[tuple[int, int]] = []
    for number, text in lines:
        if not out:
            out.append((number, cpu))
        if ("NMI backtrace" in text or "PID: " in text) and (m := _CPU_START.search(text)) is not None:
            out.append((number, int(m.group(1) or m.group(2))))
    return tuple(out)


def cpu_of(blocks: tuple[tuple[int, int], ...], number: int) -> int | None:
    """The CPU whose dump holds line ``number`` (``blocks`` from :func:`cpu_blocks`), None before the first."""
    at = bisect_right(blocks, number, key=lambda block: block[0])
    return blocks[at - 1][1] if at else None


def is_irq_state(text: str) -> bool:
    """Whether a line is lockdep's "hardirqs/softirqs last enabled/disabled at" line (names no frame of the CPU)."""
    return "irqs last" in text and _IRQ_STATE.search(text) is not None
