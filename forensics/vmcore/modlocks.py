"""Held sleeping locks that are modules' global variables: owner and waiters, by task_struct address.

The wait-for graph of :func:`forensics.vmcore.system.tasks` starts from blocked tasks, so it needs
their task_structs (state, stack pointer).  A filtered dump can lack them: makedumpfile 1.7.2 at
dump level 31 drops 6.10+ slab pages whose ``page->mapping`` word happens to be odd, task_struct
pages among them (:mod:`forensics.vmcore.gaps`).  A module's ``static DEFINE_MUTEX()`` lives in
the module's data, never in a slab, so its owner word survives; so do its waiters, which
``__mutex_lock()`` puts on the waiting tasks' own stacks (vmalloc'd, not slab).  The owner and
waiters are then known by task_struct address; the PID table names their pids without reading
the task_structs, and what the dump lacks of them is said, never guessed.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import replace

import drgn

from forensics.types.vmcore import GlobalLock, LockTaskRef
from forensics.vmcore import gaps, layouts
from forensics.vmcore.system import pids_and_tasks

#: More waiters than this on one lock are not followed (a corrupted list could cycle).
MAX_WAITERS = 64


def task_pids(prog: drgn.Program) -> dict[int, int]:
    """task_struct address -> pid, from the PID table alone (``struct pid`` points at the task).

    The PID table's own gaps are said by the task list (:func:`forensics.vmcore.system.tasks`).
    """
    return {int(task.value_()): nr for nr, task in pids_and_tasks(prog, []) if nr is not None}


def _task(prog: drgn.Program, address: int, pids: dict[int, int]) -> LockTaskRef:
    from drgn.helpers.linux.sched import task_state_to_char

    task = drgn.Object(prog, "struct task_struct *", address)
    try:
        comm = task.comm.string_().decode(errors="replace")
        state = task_state_to_char(task)
        pid = int(task.pid.value_())
    except drgn.FaultError as exc:
        return LockTaskRef(address, pids.get(address), missing=gaps.not_in_dump(exc, "its task_struct"))
    return LockTaskRef(address, pid, comm, state)


#: Return addresses kept of a waiter's stack (its lock wait and its callers: a few frames).
STACK_TEXT_MAX = 24


def stack_text(prog: drgn.Program, entry: int) -> tuple[str, ...]:
    """The text addresses on a stack from ``entry`` (a wait-list entry on it) to the stack's top.

    Kernel stacks are THREAD_SIZE-aligned, so the top is the next multiple of it.  Only words that
    fall inside a function (not at its start: a return address follows a call) are kept, as
    ``func+0x1b``; which of them are live frames is not known (crash's ``bt -t`` has the same limit),
    so they serve to recognise a stack, not as a backtrace.  () when the stack cannot be read.
    """
    size = layouts.thread_size(prog)
    if size is None or not entry:
        return ()
    top = (entry // size + 1) * size
    try:
        data = prog.read(entry, top - entry)
    except drgn.FaultError:
        return ()
    out: list[str] = []
    for (word,) in struct.iter_unpack("<Q", data[: len(data) // 8 * 8]):
        if word >> 31 != 0x1FFFFFFFF:  # the kernel image and modules live in the top 2 GiB
            continue
        try:
            sym = prog.symbol(word)
        except LookupError:
            continue
        if sym.kind != drgn.SymbolKind.FUNC or word == sym.address:
            continue
        out.append(f"{sym.name}+{word - sym.address:#x}")
        if len(out) >= STACK_TEXT_MAX:
            break
    return tuple(out)


def _module_mutexes(prog: drgn.Program, symbols: tuple[drgn.Symbol, ...]) -> list[tuple[str, str, drgn.Object]]:
    """(module, variable, object) of each global ``struct mutex`` of the loaded modules with debug info."""
    out = []
    for sym in symbols:
        if sym.kind != drgn.SymbolKind.OBJECT:
            continue
        try:
            obj = prog.object(sym.name)
            module = prog.module(sym.address).name
        except (LookupError, ValueError):
            continue  # no debug info for it (no type): which variables are locks is unknown
        if obj.address_ != sym.address or obj.type_.unqualified().type_name() != "struct mutex":
            continue
        out.append((module, sym.name, obj))
    return out


def global_locks(prog: drgn.Program, module_symbols: tuple[drgn.Symbol, ...]) -> tuple[GlobalLock, ...]:
    """The modules' global mutexes that are held, with their owners and waiters."""
    found = _module_mutexes(prog, module_symbols)
    if not found:
        return ()
    pids: dict[int, int] | None = None
    out = []
    for module, name, lock in found:
        try:
            owner = layouts.mutex_owner(lock)
        except (LookupError, drgn.FaultError):
            continue
        if owner is None:
            continue
        if pids is None:
            pids = task_pids(prog)
        waiters: list[LockTaskRef] = []
        missing = None
        try:
            entries = layouts.mutex_waiters(lock)
            for waiter in itertools.islice(entries, MAX_WAITERS):
                ref = _task(prog, int(waiter.task.value_()), pids)
                waiters.append(replace(ref, stack_text=stack_text(prog, int(waiter.value_()))))
        except drgn.FaultError as exc:
            missing = f"the wait list stops after {len(waiters)}: {gaps.not_in_dump(exc, 'a waiter')}"
        except LookupError as exc:
            missing = layouts.unknown("the waiters", f"no mutex wait list ({exc})").reason
        out.append(
            GlobalLock(name, module, "mutex", int(lock.address_ or 0), _task(prog, int(owner.value_()), pids),
                       tuple(waiters), missing)
        )  # fmt: skip
    return tuple(out)
