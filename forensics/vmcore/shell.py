"""``kforensic vmcore DUMP --shell``: drgn's own interactive console on the dump, the analysis' objects bound.

The console is drgn's (``drgn.cli.run_interactive``): the same globals, helpers, completion,
history and ``%`` commands as ``drgn -c DUMP``, plus names for what the analysis found: the
crashed task and its stack, the crash frame and its variables, the BUG/WARN frame, the slab
object the crash touched, the spinlock spun on, the tasks and locks of a wait cycle, the top
memory user. The banner lists every name with what it is; a name that could not be made on
this dump is listed with why, never bound to a guess.

As with ``drgn -c DUMP``, a terminal gets the interactive console, and a pipe or a file on stdin
is run as a Python script with the same names (``echo 'print(task.comm)' | kforensic vmcore DUMP
--shell``; print what you want to see; the names are listed on stderr). Any other stdin
(``/dev/null``, a closed descriptor: a cron job or CI step) is refused in one line, exit 2, before
the analysis runs. A script that raises shows its own traceback and exits 3.
"""

from __future__ import annotations

import keyword
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import drgn

from forensics.errors import InputError, UsageError
from forensics.model import NotAvailable
from forensics.types.vmcore import CrashSnapshot
from forensics.vmcore.request import DebugInfoRequest


def check_stdin(stream: Any = None) -> None:
    """Refuse (exit 2) a stdin that is neither a terminal nor a pipe or file of commands."""
    stream = sys.stdin if stream is None else stream
    try:
        fd = stream.fileno()
        if os.isatty(fd):
            return
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, AttributeError):
        mode = None
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        return
    what = "closed" if mode is None else "/dev/null or another device" if stat.S_ISCHR(mode) else "not readable"
    raise UsageError(
        f"--shell needs a terminal, or drgn commands piped to stdin (stdin is {what})",
        hint="run it in a terminal, or: echo 'print(task.comm)' | kforensic vmcore DUMP --shell",
    )


@dataclass(frozen=True)
class Binding:
    """A name the console gets: what it is (for the banner) and how to make it from the program."""

    name: str
    what: str
    make: Callable[[drgn.Program], object]


def _frame_of(index: int) -> Callable[[drgn.Program], object]:
    return lambda prog: prog.crashed_thread().stack_trace()[index]


def _task(pid: int) -> Callable[[drgn.Program], object]:
    def make(prog: drgn.Program) -> object:
        from drgn.helpers.linux.pid import find_task

        task = find_task(prog, pid)
        if not task:
            raise LookupError(f"no task with pid {pid}")
        return task

    return make


def _variable(frame: int, name: str) -> Callable[[drgn.Program], object]:
    return lambda prog: prog.crashed_thread().stack_trace()[frame][name]


def _symbol_address(symbol: str) -> Callable[[drgn.Program], object]:
    return lambda prog: prog[symbol].address_of_()


def _lock_name(blocked_on: str) -> str | None:
    """``kf_stats_lock`` of ``mutex kf_stats_lock``: a global's name, when the wait names one."""
    name = blocked_on.rsplit(maxsplit=1)[-1] if blocked_on.split() else ""
    return name if name.isidentifier() else None


def bindings(snap: CrashSnapshot, crash_frame: int | None) -> list[Binding]:
    """The names of the analysis' key objects on this dump, most general first."""
    crashed = f"the crashed task: {snap.crashed_comm} (pid {snap.crashed_pid})"
    out = [
        Binding("task", crashed, lambda p: p.crashed_thread().object),
        Binding("trace", "its stack trace", lambda p: p.crashed_thread().stack_trace()),
    ]
    if crash_frame is not None and crash_frame < len(snap.backtrace):
        label = snap.backtrace[crash_frame].label()
        out.append(Binding("frame", f"the crash frame: trace[{crash_frame}] {label}", _frame_of(crash_frame)))
        out.append(Binding("regs", "its registers (frame.registers())", _registers(crash_frame)))
    site = snap.bug_site
    if not isinstance(site, NotAvailable) and site.frame != crash_frame:
        out.append(
            Binding("bug_frame", f"the BUG/WARN trap: trace[{site.frame}] {site.function}", _frame_of(site.frame))
        )
    taken = {b.name for b in out} | {"prog", "drgn"}
    frames = {crash_frame, None if isinstance(site, NotAvailable) else site.frame}
    for fv in snap.frame_values:
        if fv.frame not in frames:
            continue
        for v in fv.variables:
            name = v.expression
            if not name.isidentifier() or keyword.iskeyword(name) or name in taken or v.missing is not None:
                continue
            taken.add(name)
            what = f"{v.type_name} {name} of trace[{fv.frame}] {fv.function}"
            out.append(Binding(name, what, _variable(fv.frame, name)))
    for i, obj in enumerate(snap.slab_objects):
        name = "slab_object" if i == 0 else f"slab_object{i + 1}"
        state = "allocated" if obj.allocated else "FREE"
        out.append(Binding(name, f"slab_object_info() of {obj.start:#x} ({obj.cache}, {state})", _slab_info(obj.start)))
    freed = next((o for o in snap.slab_objects if not o.allocated), None)
    if freed is not None:
        what = f"the free object the crash used: slab_object_info() of {freed.start:#x} ({freed.cache})"
        out.append(Binding("freed_object", what, _slab_info(freed.start)))
    if not isinstance(snap.spinlock, NotAvailable):
        lock = snap.spinlock
        what = f"the spinlock spun on: {lock.symbol or hex(lock.address)} ({lock.found_via})"
        out.append(Binding("spinlock", what, _qspinlock(lock.address)))
    blocked = [t for t in snap.tasks if t.state == "D"]
    for t in blocked[:8]:
        what = f"task {t.comm} (pid {t.pid}, D) waits on {t.blocked_on or '?'}"
        out.append(Binding(f"waiter_{t.pid}", what, _task(t.pid)))
        owner = f"owner_{t.lock_owner_pid}"
        if t.lock_owner_pid and owner not in {b.name for b in out}:
            what = f"task {t.lock_owner_text()} holds what waiter_{t.pid} waits on"
            out.append(Binding(owner, what, _task(t.lock_owner_pid)))
    locks = dict.fromkeys(n for t in blocked if t.blocked_on and (n := _lock_name(t.blocked_on)))
    for name in locks:
        out.append(Binding(f"lock_{name}", f"&{name}, a lock blocked tasks wait on", _symbol_address(name)))
    users = snap.memory_users if not isinstance(snap.memory_users, NotAvailable) else ()
    top = next((u for u in users if u.kind == "task" and u.pid is not None), None)
    if top is not None and top.pid is not None:
        out.append(Binding("top_user", f"the top memory user: {top.name} (pid {top.pid})", _task(top.pid)))
    return out


def _registers(index: int) -> Callable[[drgn.Program], object]:
    return lambda prog: prog.crashed_thread().stack_trace()[index].registers()


def _slab_info(address: int) -> Callable[[drgn.Program], object]:
    def make(prog: drgn.Program) -> object:
        from drgn.helpers.linux.slab import slab_object_info

        info = slab_object_info(prog, address)
        if info is None:
            raise LookupError(f"{address:#x} is not in a slab object")
        return info

    return make


def _qspinlock(address: int) -> Callable[[drgn.Program], object]:
    return lambda prog: drgn.Object(prog, "struct qspinlock *", value=address)


def _bind(prog: drgn.Program, wanted: list[Binding]) -> tuple[dict[str, object], list[str]]:
    """The names made, and one banner line per name (what it is, or why it is not bound)."""
    made: dict[str, object] = {}
    lines = [f"  {'prog':<14} the program (drgn.Program) on the dump"]
    for b in wanted:
        try:
            made[b.name] = b.make(prog)
        except (drgn.FaultError, drgn.ObjectAbsentError, LookupError, ValueError, TypeError, KeyError) as exc:
            lines.append(f"  {b.name:<14} not bound: {b.what}: {str(exc).splitlines()[0][:120]}")
            continue
        lines.append(f"  {b.name:<14} {b.what}")
    return made, lines


def run_shell(
    dump: Path, request: DebugInfoRequest, snap: CrashSnapshot, crash_frame: int | None, headline: str
) -> None:
    """Open the dump again with the debug info the analysis used and run drgn's console on it."""
    from drgn.cli import run_interactive

    from forensics.vmcore.dumpfile import read_dump_header
    from forensics.vmcore.lazyhelpers import complete_linux_helpers
    from forensics.vmcore.locate import locate_dump
    from forensics.vmcore.program import open_dump

    # drgn's console reads the helpers package's __all__ from its __dict__: load them all now.
    complete_linux_helpers()

    follow = snap.follow_up
    if not isinstance(follow, NotAvailable) and not isinstance(follow.vmlinux, NotAvailable):
        # The files the analysis found (a place, a cache, debuginfod): no second search or download.
        request = replace(
            request,
            vmlinux=Path(follow.vmlinux),
            module_debug=tuple(Path(p) for _, p in follow.modules) or request.module_debug,
            debuginfod=(),
        )
    location = locate_dump(dump)
    opened = open_dump(location.dump, read_dump_header(location.dump), request)
    made, lines = _bind(opened.prog, bindings(snap, crash_frame))
    banner_head = [
        f"kforensic: drgn on {location.dump} (Linux {snap.kernel_release}): {headline}",
        "The analysis' objects (see `kforensic vmcore DUMP` for the report):",
        *lines,
    ]

    if not sys.stdin.isatty():
        # As ``drgn -c DUMP < script.py``: the script runs with drgn's globals and the names above.
        print("\n".join(banner_head), file=sys.stderr)
        _run_script(opened.prog, made)
        return

    def banner(default: str) -> str:
        return "\n".join(banner_head) + "\n" + default

    def add_names(names: dict[str, Any]) -> dict[str, Any]:
        names.update(made)
        return names

    run_interactive(opened.prog, banner_func=banner, globals_func=add_names)


def _run_script(prog: drgn.Program, made: dict[str, object]) -> None:
    """Run stdin as a Python script the way drgn does; its own error is shown as Python shows it, exit 3."""
    import traceback

    from drgn.cli import default_globals

    names = default_globals(prog)
    names.update(made)
    names["__file__"] = "<stdin>"
    drgn.set_default_prog(prog)
    try:
        exec(compile(sys.stdin.read(), "<stdin>", "exec"), names)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<stdin>":
            tb = tb.tb_next  # the script's own frames only: kforensic's are no news to its author
        sys.stderr.write("".join(traceback.format_exception(type(exc), exc, tb)))
        raise InputError(f"the --shell script on stdin failed: {type(exc).__name__}: {exc}") from None
