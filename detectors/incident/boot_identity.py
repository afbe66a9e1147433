"""Whether a kernel log of the dump's kernel release comes from the dumped boot: the dump carries its own log.

A release changes only with a boot, so a log naming another release is set apart by its release
(correlate.other_kernels); a log of the same release may still be another boot (the fixtures' 14 cases all run
6.1.192), and its crash was told as this one's ("First: general protection fault in kf_conn_send. Then: NULL
pointer dereference in kf_null_member_read", the first from another boot).  The dump's printk records are that
boot's own log, so each boot of the log is checked against them, in this order:

1. ``command line``: the boot's ``Command line:`` is not the dump's (``kf_case=use_after_free`` vs
   ``kf_case=null_member``): another boot (two boots may share a command line: an equal one proves nothing);
2. ``same times``: a line printed at a time since boot, to the microsecond, at which the dump's log prints other
   lines only: one boot prints one record at one time (time 0, where the kernel prints its early lines before its
   clock runs, is left out);
3. ``panic``: the boot ended in ``Kernel panic - not syncing`` at a time the dumped kernel was still printing
   (a record later than :data:`AFTER_PANIC_SECONDS` after it), and the dump's log does not print that panic.

A log whose every boot one of them separates is another boot; a boot none separates and that prints a line the
dump's log prints at the same fine-grained time (microseconds not a whole millisecond: the early clock ticks in
milliseconds, and two boots print the same early line at the same millisecond) is the dumped boot's; else the
boot identity is unconfirmed.
"""

from __future__ import annotations

from dataclasses import dataclass

from forensics.model import Clock, Evidence, Locator, LocatorKind, Timestamp
from forensics.types.boots import LoggedBoot, LoggedLine

#: Seconds after a log's panic past which a record of the dump cannot be of the same boot (a panic's own last lines,
#: "---[ end Kernel panic ...", follow it within milliseconds; kdump takes over at once).
AFTER_PANIC_SECONDS = 2.0


@dataclass(frozen=True)
class BootCheck:
    """What the checks say of one log against the dump's log.

    ``other``: True, another boot (``check`` names which check, ``why`` says it with the values, ``evidence`` the
    dump's line and the log's); False, the dumped boot (``why`` how it was confirmed); None, unconfirmed (``why``
    what the checks lacked).
    """

    source: str
    other: bool | None
    check: str
    why: str
    evidence: tuple[Evidence, ...] = ()


def _evidence(line: LoggedLine, source: str) -> Evidence:
    return Evidence(
        source, Locator(LocatorKind.LINE, line.number), line.text, timestamp=Timestamp(line.seconds, Clock.MONOTONIC)
    )


def _fine(seconds: float) -> bool:
    """Whether a time since boot has microseconds of its own (not a whole millisecond of the early clock)."""
    return round(seconds * 1e6) % 1000 != 0


def _separated(dump: LoggedBoot, boot: LoggedBoot, by_time: dict[float, list[LoggedLine]]) -> BootCheck | None:
    """The first check that separates ``boot`` from the dumped boot, None when none does."""
    found = _separating(dump, boot, by_time)
    if found is None:
        return None
    check, why, mine, theirs = found
    return BootCheck(boot.source, True, check, why, (_evidence(mine, dump.source), _evidence(theirs, boot.source)))


def _separating(
    dump: LoggedBoot, boot: LoggedBoot, by_time: dict[float, list[LoggedLine]]
) -> tuple[str, str, LoggedLine, LoggedLine] | None:
    """The check that separates ``boot``, why, and the dump's line and the log's it cites."""
    mine, theirs = dump.command_line, boot.command_line
    if mine is not None and theirs is not None and mine.body != theirs.body:
        return "command line", (
            f"its boot's command line is not the dump's: {theirs.body.removeprefix('Command line: ')!r} (line "
            f"{theirs.number}), the dump's {mine.body.removeprefix('Command line: ')!r}"
        ), mine, theirs  # fmt: skip
    for line in boot.lines:
        at = by_time.get(round(line.seconds, 6))
        if line.seconds > 0 and at and all(d.body != line.body for d in at):
            return "same times", (
                f"at {line.seconds:.6f} s since boot it prints {line.body!r} (line {line.number}), where the dump's "
                f"log prints {at[0].body!r}: one boot prints one record at one time"
            ), at[0], line  # fmt: skip
    panic, last = boot.panic, dump.last
    if panic is None or last is None or last <= panic.seconds + AFTER_PANIC_SECONDS:
        return None
    printed = any(d.body == panic.body for d in by_time.get(round(panic.seconds, 6), ()))
    later = next((d for d in dump.lines if d.seconds > panic.seconds + AFTER_PANIC_SECONDS), None)
    if printed or later is None:
        return None
    return "panic", (
        f"its boot ended in {panic.body!r} at {panic.seconds:.6f} s since boot (line {panic.number}), when the "
        f"dumped kernel was still running: its log prints on until {last:.6f} s"
    ), later, panic  # fmt: skip


def check_boot(dump: LoggedBoot, boots: tuple[LoggedBoot, ...]) -> BootCheck | None:
    """Whether the log of ``boots`` comes from the dumped boot (``dump``: the dump's log, every record in
    ``lines``); None for a log without a stamped line."""
    if not boots:
        return None
    source = boots[0].source
    by_time: dict[float, list[LoggedLine]] = {}
    for d in dump.lines:
        by_time.setdefault(round(d.seconds, 6), []).append(d)
    separated = []
    for boot in boots:
        found = _separated(dump, boot, by_time)
        if found is not None:
            separated.append(found)
            continue
        shared = [
            line
            for line in boot.lines
            if _fine(line.seconds) and any(d.body == line.body for d in by_time.get(round(line.seconds, 6), ()))
        ]
        if shared:
            first = shared[0]
            return BootCheck(
                source, False, "same times",
                f"the dumped boot's: {len(shared)} line(s) printed at the same times since boot as in the dump's log "
                f"(first: line {first.number} at {first.seconds:.6f} s)",
            )  # fmt: skip
    if len(separated) == len(boots):
        head = separated[0]
        starts = ", ".join(str(b.first_line) for b in boots[1:])
        more = (
            ""
            if len(boots) == 1
            else f"; nor is its other boot (from line {starts}) the dumped one"
            if len(boots) == 2
            else f"; nor are its {len(boots) - 1} other boots (from lines {starts})"
        )
        return BootCheck(source, True, head.check, head.why + more, head.evidence)
    return BootCheck(
        source, None, "",
        "unconfirmed: no check separates it from the dumped boot (command line, lines at the same times since boot, "
        "a panic while the dumped kernel ran), and it prints no line the dump's log prints at the same time",
    )  # fmt: skip
