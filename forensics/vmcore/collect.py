"""Extract a :class:`CrashSnapshot` from an opened dump."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import drgn

from forensics.model import NotAvailable
from forensics.types.vmcore import (
    BugSite,
    CodeBytes,
    CrashSnapshot,
    EarlierFree,
    Frame,
    FrameValues,
    LoopSite,
    MemoryUser,
    PolledWord,
    RegisterSet,
    SpinLockState,
    TypeLayout,
    Variable,
)
from forensics.vmcore import extract, gaps, layouts, modlocks, slab, spin, system
from forensics.vmcore import why as reads
from forensics.vmcore.kallsyms import kallsyms_of
from forensics.vmcore.pages import page_size
from forensics.vmcore.program import OpenedDump

#: Task states whose stacks are extracted (D: uninterruptible, the hung-task state).
STACK_STATES = {"D"}

Progress = Callable[[str], None]
_T = TypeVar("_T")


def _crashed(opened: OpenedDump) -> tuple[drgn.Thread | None, str | None]:
    try:
        return opened.prog.crashed_thread(), None
    except drgn.FaultError as exc:
        return None, f"the crashed task: {gaps.not_in_dump(exc, 'its task_struct')}"
    except (ValueError, LookupError) as exc:
        return None, str(exc)


def _without_fault(what: str, read: str, get: Callable[[], _T]) -> _T | NotAvailable:
    """``get()``, or why not when it reads a page the dump lacks (a cut dump's per-CPU or kernel data pages)."""
    try:
        return get()
    except drgn.FaultError as exc:
        return NotAvailable(f"{what}: {gaps.not_in_dump(exc, read)}")


def _trace_without_task(
    prog: drgn.Program, why: str, warnings: list[str]
) -> tuple[drgn.StackTrace | None, int | NotAvailable, int | NotAvailable]:
    """The crashed CPU's backtrace when the dump lacks the crashed task's task_struct.

    The registers the kernel saved at the crash (``crash_notes``, per-CPU memory the dump keeps) still
    unwind the stack, which is no slab memory either; the pid comes from the PID table when it has
    the task (the task_struct itself is not read).
    """
    from drgn.helpers.linux.sched import cpu_curr

    cpu = _without_fault("the crashed CPU", "panic_cpu", lambda: layouts.panic_cpu(prog))
    if isinstance(cpu, NotAvailable):
        warnings.append(f"no backtrace for the crashed thread: {why}; {cpu.reason}")
        return None, cpu, NotAvailable(why)
    regs = _without_fault(
        "the crashed CPU's saved registers", "its crash note", lambda: layouts.crash_registers(prog, cpu)
    )
    if isinstance(regs, NotAvailable):
        warnings.append(f"no backtrace for the crashed thread: {why}; {regs.reason}")
        return None, cpu, NotAvailable(why)
    try:
        trace = prog.stack_trace(regs)
    except (ValueError, LookupError, drgn.FaultError) as exc:
        warnings.append(f"no backtrace for the crashed thread: {why}; from CPU {cpu}'s saved registers: {exc}")
        return None, cpu, NotAvailable(why)
    warnings.append(
        f"{why}: its name is unknown; the backtrace is unwound from the registers CPU {cpu} saved at the crash "
        "(crash_notes)"
    )
    pid: int | NotAvailable = NotAvailable("the crashed task's pid: neither its task_struct nor the PID table has it")
    try:
        address = int(cpu_curr(prog, cpu).value_())
        found = modlocks.task_pids(prog).get(address)
    except (LookupError, drgn.FaultError):
        found = None
    if found is not None:
        pid = found
    return trace, cpu, pid


def collect_snapshot(
    opened: OpenedDump, dump_path: str, progress: Progress | None = None, source_dirs: tuple[Path, ...] = ()
) -> CrashSnapshot:
    """Read everything the detectors need from the dump; missing parts become NotAvailable.

    A read of memory the dump lacks says which page and why (:mod:`forensics.vmcore.gaps`).
    """
    pages = gaps.DumpPages(Path(dump_path), opened.header)
    with gaps.explaining(opened.prog, pages):
        return _collect(opened, dump_path, progress, source_dirs)


def _collect(
    opened: OpenedDump, dump_path: str, progress: Progress | None, source_dirs: tuple[Path, ...]
) -> CrashSnapshot:
    say = progress or (lambda _msg: None)
    prog = opened.prog
    warnings = list(opened.warnings)
    say("crashed thread")
    thread, why = _crashed(opened)
    frames: tuple[Frame, ...] = ()
    registers: RegisterSet | NotAvailable = NotAvailable(why or "no crashed thread")
    code: CodeBytes | NotAvailable = NotAvailable(why or "no crashed thread")
    variables: tuple[Variable, ...] = ()
    layouts: tuple[TypeLayout, ...] = ()
    crashed_pid: int | NotAvailable = NotAvailable(why or "no crashed thread")
    crashed_comm: str | NotAvailable = NotAvailable(why or "no crashed thread")
    crashed_cpu: int | NotAvailable = NotAvailable(why or "no crashed thread")
    values: tuple[FrameValues, ...] = ()
    site: BugSite | NotAvailable = NotAvailable(why or "no crashed thread")
    earlier: EarlierFree | None = None
    polled: tuple[PolledWord, ...] = ()
    loop: LoopSite | NotAvailable = NotAvailable("no exception frame to look for a busy-wait loop")
    spinlock: SpinLockState | NotAvailable = NotAvailable("no exception frame to look for a spinlock wait")
    trace: drgn.StackTrace | None = None
    if thread is not None:
        task = thread.object
        crashed_pid = int(thread.tid)
        crashed_comm = system.attempt("crashed task name", lambda: task.comm.string_().decode(errors="replace"))
        from drgn.helpers.linux.sched import task_cpu

        crashed_cpu = system.attempt("crashed CPU", lambda: int(task_cpu(task)))
        try:
            trace = thread.stack_trace()
        except (ValueError, LookupError, drgn.FaultError) as exc:
            warnings.append(f"no backtrace for the crashed thread: {exc}")
    elif why is not None and why.startswith("the crashed task: not in dump"):
        trace, crashed_cpu, crashed_pid = _trace_without_task(prog, why, warnings)
        crashed_comm = NotAvailable("name unknown: the dump lacks its task_struct (why: see the warnings)")
    if trace is not None:
        frames = extract.backtrace(prog, trace)
        index = extract.fault_frame_index(trace)
        if index is None:
            why_not = "no exception frame: the dump was taken at panic time, not at a fault"
            registers, code = NotAvailable(why_not), NotAvailable(why_not)
        else:
            registers = extract.registers_of(trace[index])
            code = extract.code_of(prog, trace[index].pc)
            say("variables and types at the fault")
            variables = extract.variables_of(trace, index)
        say("BUG/WARN site and frame values")
        files = reads.SourceFiles()  # the run's source reader: a file cited by several reads is read once
        site = reads.bug_site(prog, trace, frames, source_dirs, files)
        values = _frame_values(prog, trace, frames, site, source_dirs, files)
        earlier = reads.earlier_free(frames, values, source_dirs, files)
        if not isinstance(code, NotAvailable):
            polled = reads.polled_words(prog, code)
        if index is not None and isinstance(site, NotAvailable):
            spinlock = spin.spinlock_state(prog, trace, frames, opened.module_symbols)
            if isinstance(spinlock, NotAvailable):  # a spinlock's slowpath is no busy-wait of its caller's
                loop = reads.loop_site(prog, trace, frames, index, code, source_dirs, files)
        layouts = extract.layouts_for(prog, variables, tuple(_pointees(values)))
    log = system.attempt("kernel log", lambda: system.log_records(prog))
    if isinstance(log, NotAvailable):
        warnings.append(str(log))
        log = ()
    say("addresses")
    log_text = "\n".join(r.text for r in log[-400:])
    addresses = reads.interesting_addresses(
        prog, registers.as_dict() if isinstance(registers, RegisterSet) else {}, values, log_text
    )
    objects = system.attempt("slab objects", lambda: slab.slab_objects(prog, addresses, opened.module_symbols))
    if isinstance(objects, NotAvailable):
        warnings.append(str(objects))
        objects = ()
    users: tuple[MemoryUser, ...] | NotAvailable = system.attempt(
        "memory users", lambda: reads.memory_users(prog, page_size(prog), warnings)
    )
    say("tasks")
    walk = system.TaskWalk()
    all_tasks = system.attempt("tasks", lambda: system.tasks(prog, STACK_STATES, warnings, walk))
    if isinstance(all_tasks, NotAvailable):
        warnings.append(str(all_tasks))
        walk.pid_table = walk.pid_table or str(all_tasks)  # no census: how many tasks there were is unknown
        all_tasks = ()
    other = system.attempt("other CPUs", lambda: system.other_cpu_tasks(prog, crashed_cpu, warnings))
    if isinstance(other, NotAvailable):
        warnings.append(str(other))
        other = ()
    held = system.attempt("modules' global locks", lambda: modlocks.global_locks(prog, opened.module_symbols))
    if isinstance(held, NotAvailable):
        warnings.append(str(held))
        held = ()
    say("memory and slab caches")
    owners = system.attempt("slab cache owners", lambda: system.cache_owners(prog, opened.module_symbols))
    if isinstance(owners, NotAvailable):
        warnings.append(str(owners))
        owners = {}
    caches = system.attempt("slab caches", lambda: system.slab_caches(prog, owners, warnings))
    if isinstance(caches, NotAvailable):
        warnings.append(str(caches))
        caches = ()
    mods = system.attempt("modules", lambda: system.modules(prog))
    if isinstance(mods, NotAvailable):
        warnings.append(str(mods))
        mods = ()
    crash_time = system.attempt("crash time", lambda: _crash_time(prog, opened))
    uptime: float | NotAvailable = (
        log[-1].seconds if log else NotAvailable("no kernel log in the dump to date the crash")
    )
    build_id: str | NotAvailable = NotAvailable("the dump carries no build ID")
    with contextlib.suppress(LookupError):
        raw = prog.main_module().build_id
        if raw:
            build_id = raw.hex()
    return CrashSnapshot(
        dump_path=dump_path,
        dump_format=opened.header.format.value,
        vmlinux_path=opened.vmlinux or NotAvailable("no vmlinux was loaded"),
        kernel_release=system.attempt("kernel release", lambda: system.kernel_release(prog)),
        build_id=build_id,
        machine=system.attempt("machine", lambda: system.machine(prog)),
        crash_time=crash_time,
        uptime=uptime,
        panic_message=system.attempt("panic message", lambda: system.the_panic_message(prog)),
        crashed_cpu=crashed_cpu,
        crashed_pid=crashed_pid,
        crashed_comm=crashed_comm,
        taint_mask=system.attempt("taint", lambda: int(prog["tainted_mask"].value_())),
        cpus=system.attempt("CPUs", lambda: system.online_cpus(prog)),
        memory_bytes=system.attempt("memory size", lambda: system.memory_bytes(prog)),
        backtrace=frames,
        frame_symbols=kallsyms_of(prog).source,
        registers=registers,
        code=code,
        variables=variables,
        layouts=layouts,
        other_cpus=other,
        tasks=all_tasks,
        task_census=walk.census(),
        memory=system.memory_totals(prog),
        slab_caches=caches,
        modules=mods,
        log=log,
        filtered=opened.header.filtered(),
        warnings=tuple(gaps.condense(warnings)),
        frame_values=values,
        bug_site=site,
        earlier_free=earlier,
        addresses=addresses,
        polled=polled,
        loop=loop,
        memory_users=users,
        slab_objects=objects,
        spinlock=spinlock,
        global_locks=held,
        hung_task_timeout=system.attempt("hung-task timeout", lambda: system.hung_task_timeout(prog)),
    )


def _frame_values(
    prog: drgn.Program,
    trace: drgn.StackTrace,
    frames: tuple[Frame, ...],
    site: BugSite | NotAvailable,
    source_dirs: tuple[Path, ...],
    files: reads.SourceFiles,
) -> tuple[FrameValues, ...]:
    """Values of the crash frame and its callers, with the members their source statements read."""
    from detectors.vmcore.findings import crash_frame

    first = crash_frame(frames)
    if first is None:
        return ()
    start = first.index
    # The inlined frames at the crash frame's pc are part of it: start at the innermost.
    while start > 0 and frames[start - 1].pc == first.pc and frames[start - 1].inline:
        start -= 1
    sources: dict[int, str] = {}
    for f in frames[start : start + reads.VALUE_FRAMES]:
        if not isinstance(site, NotAvailable) and f.index == site.frame and not isinstance(site.source, NotAvailable):
            sources[f.index] = site.source.text
        elif f.source_file and f.source_line and isinstance(f.function, str):
            line = reads.read_source_line(
                f.source_file, f.source_line, f.function, f.source_file, source_dirs, False, files
            )
            if not isinstance(line, NotAvailable) and line.matches_build:
                sources[f.index] = line.text
    return reads.frame_values(prog, trace, frames, start, sources)


def _pointees(values: tuple[FrameValues, ...]) -> list[str]:
    """Structs the pointers of the crash frame and its first callers point to (where list heads live).

    Every frame whose values were read counts: inlined helpers are frames of their own, and their
    number changes between kernels (6.6 made __list_add_valid() an inline wrapper of the checker).
    """
    return [v.pointee for fv in values for v in fv.variables if v.pointee and v.value]


def _crash_time(prog: drgn.Program, opened: OpenedDump) -> float:
    value = system.vmcoreinfo_value(prog, "CRASHTIME")
    if value is not None:
        return float(value)
    if opened.header.crash_time is not None:
        return opened.header.crash_time
    raise LookupError("neither VMCOREINFO nor the dump header records the crash time")
