"""How a critical report the kernel printed no panic for ended: the machine went down, the kernel went on, or unknown.

No ``Kernel panic - not syncing`` line after an oops does not mean the kernel survived it.  oops_end()
(arch/x86/kernel/dumpstack.c) calls crash_kexec() first when kexec_should_crash() (panic_on_oops, an oops in
interrupt context, init's): with a capture kernel loaded it boots it at once, and panic() never prints.  So what
the log shows is read instead (:class:`forensics.types.dmesg.Aftermath`), in this order (:func:`aftermath`):

1. a ``Kernel panic`` line that began inside the report's own lines: the machine went down while it was printed;
   or, in a log with printk caller ids, oops_end()'s ``Fatal exception`` panic that the report's own task or CPU
   printed after it (other tasks' reports printed between do not break the link);
2. another task ran after it in its boot: a later report or event, or the boot's last line, printed later, none of
   the report's trailer, a blank or panic()'s own lines, and printed by another task (its printk caller id, else the
   PID its header or its user-space ``name[pid]:`` names; not the crashed task's own exit, not an interrupt's: a
   machine wedged after the oops still takes them); in a log without caller ids (the distributions' kernels), a
   kernel line that names no task shows the kernel printed on when it is printed past :data:`GRACE` after the
   report and is none of the crashed task's exit lines (which task printed it is not known, and said so); a damaged
   report's end is not known: never this; a later report's panic in the same boot is that report's, not this
   one's;
3. what the kernel was set to do and where it went: ``oops=panic`` / ``panic_on_oops=N`` on the boot's command
   line (oops_end() takes the machine down); the next boot a capture kernel (kexec gives it ``elfcorehdr=``); the
   log a crash dump's own, the report its last critical one (kdump writes a dump only then); ``Kdump: loaded`` in
   the report's header (dump_stack_print_info()) only beside one of those (alone: without panic_on_oops the task is
   killed);
4. else unknown, with why (a cut capture, a syslog file a panic is never written to, a log that ends at it).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Final, NamedTuple

from detectors.dmesg.interleaved import mixed_dumps
from detectors.dmesg.lines import parse_line, syslog_prefixed
from detectors.dmesg.repeat import origin
from detectors.dmesg.taint import die_line
from forensics import regexcache as rc
from forensics.types.dmesg import Aftermath, KernelReport

#: panic_on_oops set at boot: ``oops=panic`` (oops_setup(), kernel/panic.c), the core parameter ``panic_on_oops=N``
#: and its sysctl form (``sysctl.kernel.panic_on_oops=N``, 5.8 and later); N not 0.
_PANIC_ON_OOPS = rc.compile(r"(?<!\S)(?:oops=panic|(?:sysctl\.kernel\.)?panic_on_oops=0*[1-9]\d*)(?!\S)")
#: kexec's argument to a capture kernel: where the crashed kernel's ELF core header is (kexec-tools).
_CAPTURE = rc.compile(r"(?<!\S)elfcorehdr=\S+")
_KDUMP_LOADED = "Kdump: loaded"
_PANIC_LINE = "Kernel panic - not syncing"


def _start(report: KernelReport) -> int:
    return report.start_line


class LogReports(NamedTuple):
    """A log's reports and events as :func:`aftermath` reads them, made once per log by :func:`in_order`."""

    ordered: Sequence[KernelReport]  # in the order of their first lines
    panicking: frozenset[int]  # id() of each one printing a "Kernel panic - not syncing" line among its lines


_NO_REPORTS: Final = LogReports((), frozenset())


def in_order(reports: Sequence[KernelReport]) -> LogReports:
    """A log's reports and events in the order of their first lines, and which of them print a panic line: read once
    for all of a log's critical reports.  A repeat's lines are those of the report it repeats (times aside), read
    once for all its repeats without making its own (detectors/dmesg/repeat.py)."""
    ordered = sorted(reports, key=_start)
    holds: dict[int, bool] = {}
    panicking = set()
    for r in ordered:
        source = origin(r)
        found = holds.get(id(source))
        if found is None:
            found = holds[id(source)] = _PANIC_LINE in source.excerpt()
        if found:
            panicking.add(id(r))
    return LogReports(ordered, frozenset(panicking))


def _boot_of(boot_lines: Sequence[int], line: int) -> int:
    at = bisect_right(boot_lines, line)
    return boot_lines[at - 1] if at else 0


def _next_boot(boot_lines: Sequence[int], line: int) -> int | None:
    at = bisect_right(boot_lines, line)
    return boot_lines[at] if at < len(boot_lines) else None


def _same_boot(report: KernelReport, reports: Sequence[KernelReport], boot_lines: Sequence[int]) -> list[KernelReport]:
    """The reports of ``report``'s boot but itself, in order: the slice of ``reports`` (in the order of their first
    lines) between its boot's first line and the next boot's.  (Each report's boot found for every critical report
    was a quarter of the corpus x4's run: 45 reports x 2,500, issue 28.)"""
    at = bisect_right(boot_lines, report.start_line)
    lo = bisect_left(reports, boot_lines[at - 1], key=_start) if at else 0
    hi = bisect_left(reports, boot_lines[at], key=_start) if at < len(boot_lines) else len(reports)
    return [r for r in reports[lo:hi] if r is not report]


def aftermath(
    report: KernelReport,
    boot_lines: Sequence[int],
    command_lines: Sequence[tuple[int, str]],
    log_lines: int,
    dumped: bool = False,
    reports: LogReports = _NO_REPORTS,
    boot_tails: Sequence[tuple[int, str]] = (),
) -> Aftermath:
    """What the log shows followed ``report`` (a critical one the kernel printed no panic line for).

    ``boot_lines``: the first line of each boot of the log; ``command_lines``: its command lines that say how a boot
    ends, (line, text) (detectors/dmesg/scanner.py LogScanner.command_lines); ``log_lines``: its number of lines;
    ``dumped``: the log is a crash dump's own and ``report`` its last critical one; ``reports``: the log's reports
    and events in the order of their first lines (:func:`in_order`); ``boot_tails``: the last line with text of each
    boot (LogScanner.boot_tails).

    The evidence is read in order: a panic that began inside the report's lines (the machine went down while it was
    printed), or its own task's panic (by caller id); then what shows another task ran after it in its boot (a later
    report or event, or the boot's last line, printed later by another task and none of the report's trailer or
    panic()'s lines), which outweighs what the kernel was set
    to do (``oops=panic``) and a capture kernel a later panic may have booted; then those settings; else unknown.
    """
    boot = _boot_of(boot_lines, report.start_line)
    after = _next_boot(boot_lines, report.end_line)
    same_boot = _same_boot(report, reports.ordered, boot_lines)
    # Its boot's reports in the order of their first lines: those that start after its last line are past this
    # index (each search below reads only its side: they read every report of the boot for each critical one,
    # ~45 x 1,000 attribute reads of the corpus x4's, half of this function's ~58 M instructions compiled).
    split = bisect_right(same_boot, report.end_line, key=_start)
    # A panic that began inside its lines (another CPU's oops printed at once, its panic among them, with or without
    # caller ids): the machine went down while this one was printed, whichever oops's panic it was.
    own = next(
        (
            (n, t)
            for r in same_boot[:split]
            if r.start_line <= report.end_line and r.end_line > report.start_line
            for n, t in r.lines
            if report.start_line < n <= report.end_line and _PANIC_LINE in t
        ),
        None,
    )
    if own is not None:
        said = own[1][own[1].index(_PANIC_LINE) :].strip()
        return Aftermath(
            True,
            f"a panic began inside its lines ({report.start_line}-{report.end_line}), line {own[0]}: {said}: the "
            "machine went down while it was printed",
            (own,),
        )
    mine = _own_panic(report, same_boot[split:], reports.panicking)
    if mine is not None:
        return Aftermath(
            True,
            f"its own task ({report.context}) printed oops_end()'s panic for it at line {mine[0]} ({_body(mine[1])}), "
            "matched by printk caller id past other tasks' lines",
            (mine,),
        )
    # A damaged report's end is not known: the lines and reports after it may be its own, cut off or interleaved.
    went_on, not_shown = (None, None) if report.corrupted else _went_on(report, same_boot, boot_tails, after, log_lines)
    if went_on is not None:
        return went_on
    # A later report's panic ends the boot (a bare one may be this oops's own; one of a report no other task is shown
    # to have printed may be concurrent with it): whether this one led to it is not shown.  (A damaged report's own
    # reason is said below: the report that cut it may hold its lines.)
    panics = (r for r in same_boot[split:] if _fatal(r) or (r.panicked and not report.corrupted))
    panic = next((r for r in panics if r.start_line > report.end_line), None)
    if panic is not None:
        return Aftermath(
            None,
            f"its boot ends in a panic at line {panic.start_line} ({panic.title}), a report of its own: whether this "
            "one led to it is not shown",
        )
    shown: list[str] = []
    cited: list[tuple[int, str]] = []
    if die_line(report) is not None:  # it went through oops_end(): panic_on_oops applies
        for number, text in command_lines:
            m = _PANIC_ON_OOPS.search(text)
            if m is not None and _boot_of(boot_lines, number) == boot and number < report.start_line:
                shown.append(f"{m.group(0)} (line {number})")
                cited.append((number, text))
                break
    capture = None
    if after is not None:
        capture = next(
            (
                (number, text, m.group(0))
                for number, text in command_lines
                if _boot_of(boot_lines, number) == after and (m := _CAPTURE.search(text)) is not None
            ),
            None,
        )
    kdump = next(((n, t) for n, t in report.lines if _KDUMP_LOADED in t), None)
    if kdump is not None and (shown or capture is not None):
        shown.append(f"{_KDUMP_LOADED} (line {kdump[0]})")
    if capture is not None:
        number, text, word = capture
        shown.append(f"a capture kernel boots at line {after} ({word.split('=')[0]}=, line {number})")
        cited.append((number, text))
    if dumped:
        shown.append("a crash dump of its boot exists (kdump writes one only when the kernel goes down)")
    if shown:
        how = (
            ": oops_end() went to crash_kexec(), which prints no 'Kernel panic' line"
            if kdump is not None or capture is not None or dumped
            else ": oops_end() takes the machine down (to a capture kernel, else panic(); the log shows neither)"
        )
        listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
        return Aftermath(True, listed + how, tuple(cited))
    last = report.lines[-1][1] if report.lines else report.header
    if syslog_prefixed(last):
        return Aftermath(
            None, "a panic is not written to a syslog file or the journal: the console or a dump would show it"
        )
    if log_lines <= report.end_line:
        return Aftermath(
            None, f"the log ends at the report's last line, {report.end_line}: the console or a dump would show it"
        )
    if report.corrupted:
        # Its end is not known: the lines after it may be its own, cut off or interleaved, not the kernel going on.
        return Aftermath(None, f"the report is damaged ({report.corrupted_reason}): the lines after it may be its own")
    if after == report.end_line + 1:
        return Aftermath(
            True,
            f"the next boot starts at line {after}, right after its last line, with no 'Kernel panic' line (a reset, "
            "a watchdog, or a capture kernel the log does not name)",
        )
    stop = log_lines if after is None else after - 1
    lines = f"line {stop}" if stop == report.end_line + 1 else f"lines {report.end_line + 1}-{stop}"
    tail = _tail(boot_tails, report.end_line, stop)
    if tail is not None and _PANIC_TAIL.search(tail[1]) is not None:
        return Aftermath(
            None,
            f"its boot ends in panic()'s closing lines (line {tail[0]}: {_body(tail[1])}) of a panic the log shows "
            f"no start of: whether this report led to it is not shown ({lines} after it)",
        )
    if not_shown is not None:
        return Aftermath(None, f"no line after it in its boot ({lines}) shows another task running: {not_shown}")
    return Aftermath(
        None,
        f"the lines after it in its boot ({lines}) show no later message: the report's own last lines, blanks, or "
        "a log cut off there",
    )


#: What a boot's last line is when it is not the kernel going on: panic()'s closing lines (kernel/panic.c: "Rebooting
#: in", the "---[ end Kernel panic" trailer, smp_send_stop's "Shutting down cpus with NMI", dump_kernel_offset's
#: "Kernel Offset"), checked apart from an oops's own trailer below.
_PANIC_TAIL = rc.compile(
    r"Rebooting in \d+ seconds|---\[ end Kernel panic|Shutting down cpus with NMI|Kernel Offset: "
    r"|Kernel panic - not syncing"
)
#: An oops's own lines after its ``---[ end trace`` (oops_end()'s register summary: ``RIP:``, ``Code:``, ``RSP:``,
#: ``RAX:``...``CR2:``; arm's ``Exception stack(``, stack and frame lines; ``Modules linked in``), which no more show
#: the kernel going on than the report itself.
_REPORT_TAIL = rc.compile(
    r"^\s*(?:[A-Z][A-Z0-9]{1,3}:\s|Code: |Modules linked in|---\[ end |Exception stack|Call [Tt]race|"
    r"\? |<|\[<|\(|[0-9a-f]{8,}[: ]|={8,}|-{8,}|Hardware name|CPU: |Workqueue: |Stack:|Backtrace|"
    r"Kernel panic|Dumping ftrace|irq event stamp|hardirqs |softirqs |Disabling lock debugging|note: )"
)


def _fatal(r: KernelReport) -> bool:
    """Whether ``r`` is a bare panic an oops may have raised (oops_end()'s "Fatal exception", "Fatal exception in
    interrupt"): a panic with a cause of its own (sysrq's, panic_on_warn's) is another report's end."""
    return r.rule.startswith("panic") and "Fatal exception" in r.header


def _own_panic(
    report: KernelReport, later: Sequence[KernelReport], panicking: frozenset[int]
) -> tuple[int, str] | None:
    """The ``Kernel panic - not syncing: Fatal exception`` line (oops_end()'s panic) that the report's own task or CPU
    printed after it in its boot, by the printk caller id (``[T1234]``, ``[C0]``, CONFIG_PRINTK_CALLER), as (number,
    text): other tasks' reports printed between (another CPU's oops at once, corpus 364) do not break the link, nor
    does a report the task raised while printing it (a lockdep splat of the console lock, corpus 352: only oops_end()
    prints "Fatal exception").  None in a log without caller ids (a later bare panic there may be any oops's:
    :func:`aftermath` says unknown), for a report that did not go through oops_end() (no die counter), and when
    another oops of the same task or CPU comes first.  ``panicking``: the reports printing a panic line
    (:class:`LogReports`): only their lines are read (a repeat's made only then).  ``later``: the reports of its boot
    that start after its last line, in the order of their first lines."""
    own = report.context
    if own is None or own == "-" or die_line(report) is None:
        return None
    end = report.end_line
    for r in later:
        # The set's test first, then the context: most later reports print no panic and are of other callers, and
        # each field read of a report from compiled code is a generic attribute look-up (~500 instructions; a
        # critical report of a fuzzer's boot passes every report after it: ~21,000 reads of the corpus x4).
        if id(r) in panicking and r.start_line > end and not r.is_event:
            for n, t in r.lines:
                if n > end and _PANIC_LINE in t and parse_line(n, t).context == own:
                    return (n, t) if "Fatal exception" in t else None
        if r.context == own and r.start_line > end and not r.is_event and die_line(r) is not None:
            return None  # another oops of its own task or CPU comes first: a panic after it is that one's
    return None


def _body(text: str) -> str:
    return parse_line(0, text).body.strip()


def _tail(boot_tails: Sequence[tuple[int, str]], after: int, stop: int) -> tuple[int, str] | None:
    """The boot's last line with text, when it is in lines ``after+1..stop``."""
    return next(((n, t) for n, t in boot_tails if after < n <= stop), None)


def _later(time: float | None, report: KernelReport) -> bool:
    """Whether ``time`` (a printk time) is past the report's last one: printed after it, in the same boot."""
    end = report.end_time
    return time is not None and isinstance(end, float) and time > end


#: How long (s) after a report's last line a kernel line that names no task, in a log without caller ids, is still
#: no evidence the kernel went on: the crashed task prints its end at once (make_task_dead()'s "note: ... exited with
#: irqs disabled", "Fixing recursive fault", do_exit()'s), and a panic() leaves the other CPUs printing until they
#: stop, which native_stop_other_cpus() (arch/x86/kernel/smp.c) waits up to one second for.  Past it, a kernel that
#: went down prints nothing more in the boot (review ue20 #3: an oops, then USB and ext4 lines 2 h later, was
#: "unknown").
GRACE: Final = 1.0
#: The lines the crashed task prints on its way out (kernel/exit.c make_task_dead(), do_exit()'s check_stack_usage()):
#: its own end, whatever time they are printed at.
_OWN_EXIT = rc.compile(r"note: \S+\[\d+\] exited with|Fixing recursive fault|used greatest stack depth")


def _printed_on(report: KernelReport, time: float | None, text: str) -> float | None:
    """How long after ``report``'s last line a kernel line naming no task, of a log without caller ids, was printed
    (``time``), when that shows the kernel printed on: past :data:`GRACE` and none of the crashed task's exit lines;
    else None."""
    end = report.end_time
    if time is None or not isinstance(end, float) or time - end <= GRACE or _OWN_EXIT.search(text) is not None:
        return None
    return time - end


def _printed_on_words(number: int, gap: float, text: str) -> str:
    """The "went on" of a kernel line naming no task (:func:`_printed_on`), worded as what it shows."""
    return (
        f"the kernel printed on: line {number}, {gap:.6f} s after its last line ({text[:80]}); which task printed it "
        "is not known (no printk caller ids)"
    )


#: A line user space wrote to the kernel log through /dev/kmsg (systemd, journald's forwarding, a logger): its
#: ``name[pid]: `` names the task that wrote it, in a log without caller ids.
_USER_LINE = rc.compile(r"[^\s\[\]:]+\[(\d+)\]: ")


def _other_task(report: KernelReport, context: str | None, pid: int | None) -> tuple[bool, str]:
    """Whether a line or report printed after ``report`` was printed by another task than the one that crashed, as
    (yes, who) or (no, why that is not shown): by its printk caller id (``context``, ``T1234`` or ``C2``) where the
    log has them, else by the PID its header or its user-space prefix names (``pid``).

    A line of the crashed task itself (its exit after the oops: ``note: ... exited with irqs disabled``, a lockdep or
    might_sleep splat of do_exit()) and a line printed outside any task (caller id ``C<n>``: an interrupt's, or a
    CPU's with no task; PID 0, the idle task's) do not show the machine went on: a machine wedged after the oops
    still takes interrupts, and its task is printing its own end."""
    if context is not None and context != "-":
        if context.startswith("C"):
            return False, f"caller id {context}: printed outside a task (an interrupt's, or a CPU's with no task)"
        if context == report.context:
            return False, f"caller id {context}: its own task, printing its own end after the oops"
        return True, f"another task, caller id {context}"
    if pid is None:
        return False, (
            "the log has no printk caller ids and the line names no task: its own task's end, an interrupt's "
            f"message or another task's cannot be told apart in its exit lines or within {GRACE:g} s of its last line"
        )
    own = report.pid
    if pid == 0:
        return False, "PID 0: the idle task's, printed from an interrupt"
    if not isinstance(own, int):
        return False, f"PID {pid}, but the report names no PID of its own to tell it from"
    if pid == own:
        return False, f"PID {pid}: its own task, printing its own end after the oops"
    return True, f"another task, PID {pid}"


def _went_on(
    report: KernelReport,
    same_boot: Sequence[KernelReport],
    boot_tails: Sequence[tuple[int, str]],
    after: int | None,
    log_lines: int,
) -> tuple[Aftermath | None, str | None]:
    """ "Went on", where the log shows another task running after the report in its boot: a later report or event,
    or the boot's last line, at a later printk time, neither the report's own trailer nor panic()'s lines, and
    printed by another task (:func:`_other_task`); else None, with why the lines after it do not show it (None: no
    such line to judge)."""
    # A bare "Kernel panic - not syncing" (oops_end()'s "Fatal exception" with panic_on_oops) may be this report's own
    # panic: neither it nor a report whose lines it starts inside (two oopses printed at once) shows this one survived.
    # (The reports after it found by bisection, and each one's bare panics inside its lines: ``same_boot`` is in the
    # order of first lines, and a boot of 2,500 reports walked whole for each critical one cost ~1% of the corpus x4.)
    later = same_boot[bisect_right(same_boot, report.end_line, key=_start) :]
    bare = [r.start_line for r in later if _fatal(r)]
    why: str | None = None
    # The first later line that names no task in a log without caller ids and shows the kernel printed on
    # (:func:`_printed_on`): taken only when no line shows another task ran (that evidence is preferred).
    untold: Aftermath | None = None
    for r in later:
        if (
            _fatal(r)
            or ((at := bisect_right(bare, r.start_line)) < len(bare) and bare[at] <= r.end_line)
            or not _later(r.start_time if isinstance(r.start_time, float) else None, report)
        ):
            continue
        # Without caller ids, the PID of a report whose lines print two dumps may be the other's (interleaved).
        pid = r.pid if isinstance(r.pid, int) and mixed_dumps(r) is None else None
        other, who = _other_task(report, r.context, pid)
        if not other:
            gap = (
                None
                if pid is not None or r.context not in (None, "-")
                else _printed_on(report, r.start_time if isinstance(r.start_time, float) else None, r.header)
            )
            if gap is not None and untold is None:
                went = _printed_on_words(r.start_line, gap, r.title)
                untold = Aftermath(False, went + _led(r))
            why = why or f"a later report of its boot, {r.title} (line {r.start_line}), is no evidence ({who})"
            continue
        went = f"a later report of its boot, {r.title} (line {r.start_line}), was printed after it by {who}" + _led(r)
        # (its line named, not cited: a report is its own finding, and its lines in this one's evidence would make
        # its cause this one's -- a sysrq crash's request read as the survived oops's)
        return Aftermath(False, went), None
    stop = log_lines if after is None else after - 1
    tail = _tail(boot_tails, report.end_line, stop)
    if tail is None:
        return untold, None if untold is not None else why
    line = parse_line(tail[0], tail[1])
    if _PANIC_TAIL.search(line.body) or _REPORT_TAIL.search(line.body) or not _later(line.timestamp, report):
        return untold, None if untold is not None else why
    user = _USER_LINE.match(line.body)
    pid = int(user.group(1)) if user is not None else None
    other, who = _other_task(report, line.context, pid)
    if not other:
        if untold is not None:
            return untold, None
        gap = (
            None
            if pid is not None or line.context not in (None, "-")
            else _printed_on(report, line.timestamp, line.body)
        )
        if gap is not None:
            return Aftermath(False, _printed_on_words(tail[0], gap, line.body.strip()), (tail,)), None
        said = f"its boot's last line, {tail[0]} ({_body(tail[1])[:80]}), printed later, is no evidence ({who})"
        return None, said if why is None else f"{why}; {said}"
    gap = line.timestamp - report.end_time if isinstance(report.end_time, float) and line.timestamp else 0.0
    return Aftermath(
        False,
        f"its boot goes on to line {tail[0]} ({_body(tail[1])[:80]}), printed {gap:.6f} s after its last line by "
        f"{who}, with no 'Kernel panic' line",
        (tail,),
    ), None


def _led(r: KernelReport) -> str:
    """What a later report ``r`` that shows the kernel went on adds: its own panic, when it printed one."""
    if r.panicked:
        return ", and that one's panic took the machine down (whether this one led to it is not shown)"
    return ""


#: The panics out_of_memory() raises in place of a kill (mm/oom_kill.c check_panic_on_oom(), and with no task to kill).
_OOM_PANIC = "Kernel panic - not syncing: Out of memory"


def oom_panic(oom: KernelReport, reports: Sequence[KernelReport], boot_lines: Sequence[int]) -> tuple[int, str] | None:
    """The ``Kernel panic - not syncing: Out of memory ...`` line of the report right after the OOM report ``oom`` in
    its boot, as (number, text): panic_on_oom (or no task to kill) made the OOM a panic; None when none follows."""
    after = [r for r in reports if r.start_line > oom.end_line]
    if not after:
        return None
    following = min(after, key=lambda r: r.start_line)
    if _boot_of(boot_lines, following.start_line) != _boot_of(boot_lines, oom.start_line):
        return None
    return next(((n, t) for n, t in following.lines if _OOM_PANIC in t), None)
