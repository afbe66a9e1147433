"""Whether a kernel log of the dump's kernel release comes from the dumped boot: the dump carries its own log.

Without a dump, a slab-watch store's kernel log records of its boot stand for it, else the log of the report the
incident tells (:class:`Reference`): two console logs of two boots of one kernel were told as one boot, the second
log's crash dated with the first log's boot time.

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
3. ``same message``: beside a reference that holds every record over a span (a slab-watch store's records read
   without a gap), a line printed within that span with a message the reference prints once, at another time, and
   not at that time (a log whose every printk time is 3.5 s off the store's);
4. ``panic``: the boot ended in ``Kernel panic - not syncing`` at a time the dumped kernel was still printing
   (a record later than :data:`AFTER_PANIC_SECONDS` after it), and the dump's log does not print that panic;
5. ``boot time``: the boot began, by its RTC line ("setting system clock to ... UTC (EPOCH)" less its printk
   time), more than :data:`BOOT_CLOCK_SECONDS` apart from the dumped boot by its own: the usual case of two logs of
   one machine (kern.log.1 and kern.log across a reboot), whose command lines are the same.

A log whose every boot one of them separates is another boot; a boot none separates and that prints a line the
dump's log prints at the same fine-grained time (microseconds not a whole millisecond: the early clock ticks in
milliseconds, and two boots print the same early line at the same millisecond) is the dumped boot's; else the
boot identity is unconfirmed.
"""

from __future__ import annotations

from dataclasses import dataclass

from forensics.model import BootScope, BootTime, Clock, Evidence, Locator, LocatorKind, SourceRecord, Timestamp
from forensics.types.boots import LoggedBoot, LoggedLine
from forensics.units import iso_utc

#: Seconds after a log's panic past which a record of the dump cannot be of the same boot (a panic's own last lines,
#: "---[ end Kernel panic ...", follow it within milliseconds; kdump takes over at once).
AFTER_PANIC_SECONDS = 2.0
#: Seconds two RTC readings of one boot's start may differ by: each is a whole second of the RTC (±1 s), and the
#: printk time drifts from it by well under a second at the line (a reboot takes longer than that).
BOOT_CLOCK_SECONDS = 3.0


@dataclass(frozen=True)
class Reference:
    """How the checks' sentences name the boot a log is checked against: the dump's (the default), or, without a
    dump, the told log's boot (:func:`log_reference`)."""

    owner: str = "the dump's"  # whose command line: "is not the dump's"
    log: str = "the dump's log"  # where that boot's lines are: "where the dump's log prints"
    boot: str = "the dumped boot"
    kernel: str = "the dumped kernel"
    where: str = "the dump's own log"  # where the line a check compared with stands: "in the dump's own log"


#: The dump's own log, the reference beside a dump.
DUMP = Reference()


def log_reference(log: str, first_line: int) -> Reference:
    """The boot of line ``first_line`` on of the log ``log`` (as shown) as the reference of the checks."""
    boot = f"the boot of {log} from line {first_line}"
    return Reference(f"{log}'s", log, boot, f"the kernel of {boot}", f"the told log {log}")


@dataclass(frozen=True)
class OtherBoot:
    """A boot of a log of the dumped (or told) boot that a check or its boot banner separates from it: the log's lines
    ``first`` to before ``end`` (None: the log's end), why, and when it began by its own lines (``began``: its RTC
    line's reading, of its lines only).  A kern.log.1 holds the boot before the crash's and the first lines of the
    crash's own; one kern.log across a reboot, every boot."""

    first: int
    end: int | None
    why: str
    began: BootTime | None = None


@dataclass(frozen=True)
class BootCheck:
    """What the checks say of one log against the dump's log.

    ``other``: True, another boot (``check`` names which check, ``why`` says it with the values, ``evidence`` the
    dump's line and the log's); False, the dumped boot (``why`` how it was confirmed); None, unconfirmed (``why``
    what the checks lacked).  ``against``: the boot it was checked against (the dump's, else the told log's);
    ``others``: of a log of the dumped boot, its other boots a check separates (:class:`OtherBoot`).
    """

    source: str
    other: bool | None
    check: str
    why: str
    evidence: tuple[Evidence, ...] = ()
    against: Reference = DUMP
    others: tuple[OtherBoot, ...] = ()


def _evidence(line: LoggedLine, source: str) -> Evidence:
    return Evidence(
        source, Locator(LocatorKind.LINE, line.number), line.text, timestamp=Timestamp(line.seconds, Clock.MONOTONIC)
    )


def _fine(seconds: float) -> bool:
    """Whether a time since boot has microseconds of its own (not a whole millisecond of the early clock)."""
    return round(seconds * 1e6) % 1000 != 0


def _separated(
    dump: LoggedBoot, boot: LoggedBoot, by_time: dict[float, list[LoggedLine]], ref: Reference
) -> BootCheck | None:
    """The first check that separates ``boot`` from the dumped boot (``ref``), None when none does."""
    found = _separating(dump, boot, by_time, ref)
    if found is None:
        return None
    check, why, mine, theirs = found
    evidence = (_evidence(mine, dump.source), _evidence(theirs, boot.source))
    return BootCheck(boot.source, True, check, why, evidence, ref)


def _separating(
    dump: LoggedBoot, boot: LoggedBoot, by_time: dict[float, list[LoggedLine]], ref: Reference
) -> tuple[str, str, LoggedLine, LoggedLine] | None:
    """The check that separates ``boot``, why, and the dump's line and the log's it cites."""
    mine, theirs = dump.command_line, boot.command_line
    if mine is not None and theirs is not None and mine.body != theirs.body:
        # (the reference's line is cited when it is a log's: two logs' lines are told apart by their numbers)
        cited = "" if ref == DUMP else f" (line {mine.number})"
        return "command line", (
            f"its boot's command line is not {ref.owner}: {theirs.body.removeprefix('Command line: ')!r} (line "
            f"{theirs.number}), {ref.owner} {mine.body.removeprefix('Command line: ')!r}"
            f"{cited}"
        ), mine, theirs  # fmt: skip
    for line in boot.lines:
        at = by_time.get(round(line.seconds, 6))
        if line.seconds > 0 and at and all(d.body != line.body for d in at):
            return "same times", (
                f"at {line.seconds:.6f} s since boot it prints {line.body!r} (line {line.number}), where {ref.log} "
                f"prints {at[0].body!r}: one boot prints one record at one time"
            ), at[0], line  # fmt: skip
    found = _moved(dump, boot, ref) or _panicked(dump, boot, by_time, ref)
    return found if found is not None else _began_apart(dump, boot, ref)


def moved_bodies(dump: LoggedBoot) -> dict[str, LoggedLine]:
    """The messages the reference prints once, at a fine-grained time within the span over which it holds every
    record (:attr:`LoggedBoot.complete`; none without one), by message: those the ``same message`` check compares."""
    if dump.complete is None:
        return {}
    seen: dict[str, list[LoggedLine]] = {}
    for line in dump.lines:
        seen.setdefault(line.body, []).append(line)
    return {body: lines[0] for body, lines in seen.items() if len(lines) == 1 and _fine(lines[0].seconds) and body}


def _moved(dump: LoggedBoot, boot: LoggedBoot, ref: Reference) -> tuple[str, str, LoggedLine, LoggedLine] | None:
    """The same message check: the boot prints, within the span over which the reference holds every record, a
    message the reference prints once at another time, and does not print it at that time: one boot prints one record
    at one time (a log 3.5 s off a store's records printed "sched: RT throttling activated" at 19184.668376 s, the
    store's record of that boot at 19181.168376 s)."""
    once = moved_bodies(dump)
    if not once or dump.complete is None:
        return None
    first, last = dump.complete
    at = {(line.body, round(line.seconds, 6)) for line in boot.lines}
    for line in boot.lines:
        mine = once.get(line.body)
        if mine is None or not first <= line.seconds <= last or not _fine(line.seconds):
            continue
        if round(line.seconds, 6) != round(mine.seconds, 6) and (mine.body, round(mine.seconds, 6)) not in at:
            return "same message", (
                f"it prints {line.body!r} at {line.seconds:.6f} s since boot (line {line.number}), which {ref.log} "
                f"prints once, at {mine.seconds:.6f} s, holding every record from {first:.6f} to {last:.6f} s: one "
                "boot prints one record at one time"
            ), mine, line  # fmt: skip
    return None


def _began_apart(dump: LoggedBoot, boot: LoggedBoot, ref: Reference) -> tuple[str, str, LoggedLine, LoggedLine] | None:
    """The boot time check: the two boots' RTC readings of when they began, apart by more than the readings' slack."""
    if dump.clock is None or boot.clock is None or dump.began is None or boot.began is None:
        return None
    gap = boot.began - dump.began
    if abs(gap) <= BOOT_CLOCK_SECONDS:
        return None
    return "boot time", (
        f"its boot began at {iso_utc(boot.began)} (line {boot.clock.number}: the RTC's time the kernel set its clock "
        f"to, less the line's printk time), {abs(gap):.0f} s {'before' if gap < 0 else 'after'} {ref.boot}, which "
        f"began at {iso_utc(dump.began)} (line {dump.clock.number}): one boot begins once"
    ), dump.clock, boot.clock  # fmt: skip


def _panicked(
    dump: LoggedBoot, boot: LoggedBoot, by_time: dict[float, list[LoggedLine]], ref: Reference
) -> tuple[str, str, LoggedLine, LoggedLine] | None:
    """The panic check: the boot ended in a panic while the dumped kernel still printed."""
    panic, last = boot.panic, dump.last
    if panic is None or last is None or last <= panic.seconds + AFTER_PANIC_SECONDS:
        return None
    printed = any(d.body == panic.body for d in by_time.get(round(panic.seconds, 6), ()))
    later = next((d for d in dump.lines if d.seconds > panic.seconds + AFTER_PANIC_SECONDS), None)
    if printed or later is None:
        return None
    return "panic", (
        f"its boot ended in {panic.body!r} at {panic.seconds:.6f} s since boot (line {panic.number}), when "
        f"{ref.kernel} was still running: its log prints on until {last:.6f} s"
    ), later, panic  # fmt: skip


def _began(boot: LoggedBoot, end: int | None) -> BootTime | None:
    """When ``boot`` began by its own RTC line (its lines up to ``end`` only), None when it prints none."""
    if boot.clock is None or boot.began is None:
        return None
    basis = f"{boot.source} line {boot.clock.number}: the RTC's time the kernel set its clock to, less that line's "
    basis += "printk time"
    return BootTime(boot.began, 1.0, basis, BootScope(boot.source, boot.first_line, end))


def _lines(first: int, end: int | None) -> str:
    """Lines ``first`` (0: the log's start) to before ``end`` (None: the log's end), for a sentence."""
    return f"{max(first, 1)}-{end - 1}" if end is not None else f"{max(first, 1)} to the log's end"


def told_logs_boots(record: SourceRecord, told: BootScope, boot: str) -> tuple[OtherBoot, ...]:
    """The boots of the told log (``record``) other than the told one (``told``: the lines the incident's boot time
    holds for; ``boot``: how sentences name it), each dated by its own readings (``record.boot_times``).

    One kern.log across a reboot: its boot banner begins each boot, so the boot before the crash's is another boot,
    as the same lines in a kern.log.1 beside it are (a check of that log says so); it was the told boot's lane's
    "2.212 s since boot", above a clock jump row, not dated by its own RTC line.
    """
    starts = [*record.boot_lines]
    if starts and starts[0] > 1:
        starts.insert(0, 0)  # (the boot the log starts in, whose banner it lacks)
    ends = [*starts[1:], None]
    dated = {t.holds_for.first: t for t in record.boot_times if t.holds_for is not None}
    out = []
    for first, end in zip(starts, ends, strict=True):
        if first == told.first:
            continue
        # (where the log goes from one to the other: the later of the two boots' starts)
        why = (
            f"its lines {_lines(first, end)} are of another boot than {boot} (lines {_lines(told.first, told.end)}): "
            f"a boot begins at line {max(first, told.first)} (a boot banner, or the printk time back at zero)"
        )
        out.append(OtherBoot(first, end, why, dated.get(first)))
    return tuple(out)


def check_boot(dump: LoggedBoot, boots: tuple[LoggedBoot, ...], ref: Reference = DUMP) -> BootCheck | None:
    """Whether the log of ``boots`` comes from the dumped boot (``dump``: the dump's log, every record in
    ``lines``; or the told log's boot, named by ``ref``); None for a log without a stamped line."""
    if not boots:
        return None
    source = boots[0].source
    by_time: dict[float, list[LoggedLine]] = {}
    for d in dump.lines:
        by_time.setdefault(round(d.seconds, 6), []).append(d)
    separated: list[BootCheck] = []
    apart: list[OtherBoot] = []  # (every boot is checked: those after the dumped one too)
    confirmed = None
    ends = [*(b.first_line for b in boots[1:]), None]
    for boot, end in zip(boots, ends, strict=True):
        found = _separated(dump, boot, by_time, ref)
        if found is not None:
            separated.append(found)
            apart.append(OtherBoot(boot.first_line, end, found.why, _began(boot, end)))
            continue
        shared = [
            line
            for line in boot.lines
            if _fine(line.seconds) and any(d.body == line.body for d in by_time.get(round(line.seconds, 6), ()))
        ]
        if shared and confirmed is None:
            first = shared[0]
            confirmed = BootCheck(
                source, False, "same times",
                f"{ref.boot}'s: {len(shared)} line(s) printed at the same times since boot as in {ref.log} "
                f"(first: line {first.number} at {first.seconds:.6f} s)", against=ref,
            )  # fmt: skip
    if confirmed is not None:
        starts = ", ".join(str(o.first) for o in apart)
        why = confirmed.why + (
            f"; not its boot{'s' if len(apart) > 1 else ''} from line{'s' if len(apart) > 1 else ''} {starts}: "
            f"{apart[0].why}"
            if apart
            else ""
        )
        return BootCheck(confirmed.source, False, confirmed.check, why, against=ref, others=tuple(apart))
    if len(separated) == len(boots):
        head = separated[0]
        starts = ", ".join(str(b.first_line) for b in boots[1:])
        more = (
            ""
            if len(boots) == 1
            else f"; nor is its other boot (from line {starts}) {'the dumped one' if ref == DUMP else ref.boot}"
            if len(boots) == 2
            else f"; nor are its {len(boots) - 1} other boots (from lines {starts})"
        )
        return BootCheck(source, True, head.check, head.why + more, head.evidence, ref)
    return BootCheck(
        source, None, "",
        f"unconfirmed: no check separates it from {ref.boot} (command line, lines at the same times since boot, "
        f"a panic while {ref.kernel} ran), and it prints no line {ref.log} prints at the same time", against=ref,
    )  # fmt: skip
