"""The state of the whole dumped system: summary, tasks and locks, memory, slabs, modules, log."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar

import drgn
from drgn.helpers.linux.cpumask import num_online_cpus
from drgn.helpers.linux.module import for_each_module, module_taints
from drgn.helpers.linux.panic import panic_message
from drgn.helpers.linux.printk import get_printk_records
from drgn.helpers.linux.sched import task_cpu, task_state_to_char

from forensics.model import NotAvailable
from forensics.types.vmcore import (
    CompletionWait,
    Frame,
    LastRun,
    LogRecord,
    MemoryTotals,
    ModuleInfo,
    SlabCacheInfo,
    TaskCensus,
    TaskInfo,
    TaskListBreak,
)
from forensics.vmcore import gaps, layouts
from forensics.vmcore.extract import backtrace, halted_at
from forensics.vmcore.gaps import not_in_dump
from forensics.vmcore.pages import page_size

_T = TypeVar("_T")

#: Functions in a blocked task's stack that mean "waiting for this kind of lock".
_LOCK_WAITS = (
    ("__mutex_lock", "mutex"),
    ("mutex_lock", "mutex"),
    ("rwsem_down_read_slowpath", "rwsem"),
    ("rwsem_down_write_slowpath", "rwsem"),
)


def attempt(what: str, read: Callable[[], _T]) -> _T | NotAvailable:
    """Run one extraction; a failure becomes a typed "not available" naming what and why."""
    try:
        return read()
    except drgn.FaultError as exc:
        return NotAvailable(f"{what}: {not_in_dump(exc)}")
    except (LookupError, AttributeError, ValueError, TypeError, drgn.ObjectAbsentError) as exc:
        return NotAvailable(f"{what}: {exc}")


def kernel_release(prog: drgn.Program) -> str:
    """``uname -r`` of the dumped kernel."""
    return str(prog["init_uts_ns"].name.release.string_().decode())


def machine(prog: drgn.Program) -> str:
    """``uname -m`` of the dumped kernel."""
    return str(prog["init_uts_ns"].name.machine.string_().decode())


def hung_task_timeout(prog: drgn.Program) -> int:
    """The crashed kernel's ``kernel.hung_task_timeout_secs`` (0: khungtaskd reports nothing)."""
    try:
        return int(prog["sysctl_hung_task_timeout_secs"].value_())
    except KeyError:  # kernel/hung_task.c is built only with CONFIG_DETECT_HUNG_TASK
        raise LookupError("the kernel has no hung-task detector (CONFIG_DETECT_HUNG_TASK is off)") from None


def hostname(prog: drgn.Program) -> str:
    """The host name of the dumped kernel."""
    name = str(prog["init_uts_ns"].name.nodename.string_().decode())
    if name in ("", "(none)"):  # the kernel's default: nothing ever set a host name
        raise LookupError("the dumped kernel has no host name set")
    return name


def vmcoreinfo_value(prog: drgn.Program, key: str) -> str | None:
    """A ``KEY=value`` line of the dump's VMCOREINFO note, when the dump carries one."""
    try:
        data = prog["vmcoreinfo_data"]
        size = int(prog["vmcoreinfo_size"].value_())
        text = prog.read(data.value_(), size).decode(errors="replace")
    except (LookupError, drgn.FaultError):
        return None
    for line in text.splitlines():
        if line.startswith(f"{key}="):
            return str(line.split("=", 1)[1])
    return None


def the_panic_message(prog: drgn.Program) -> str:
    """The message the kernel logged when it panicked (or the oops header)."""
    message = panic_message(prog)
    if message is None:
        # drgn's patterns miss x86's general protection fault header (die_addr(): an oops that
        # goes straight to kdump logs no "Kernel panic" line): take the last such header.
        from drgn.helpers.linux.printk import get_dmesg

        found = _GPF_HEADER.findall(get_dmesg(prog, timestamps=False))
        if not found:
            raise LookupError("the kernel did not record a panic message")
        message = found[-1]
    return bytes(message).decode(errors="replace").strip()


_GPF_HEADER = re.compile(rb"general protection fault.*|stack segment: .*")


def memory_bytes(prog: drgn.Program) -> int:
    """Total RAM the kernel manages, in bytes."""
    from drgn.helpers.linux.mm import totalram_pages

    return int(totalram_pages(prog)) * page_size(prog)


def _has(prog: drgn.Program, name: str) -> bool:
    try:
        prog[name]
    except LookupError:
        return False
    return True


def _vm_counter(prog: drgn.Program, *names: str) -> int:
    """A global zone or node counter by its enum item name, the first name this kernel has.

    Items moved between the zone and node counters over the years, and the slab
    counters became byte-exact ``*_B`` in v5.9 (commit d42f3245c7e2); the item's
    enum type says which array holds it.
    """
    from drgn.helpers.linux.vmstat import global_node_page_state, global_zone_page_state

    for name in names:
        try:
            item = prog[name]
        except LookupError:
            continue
        if "zone_stat_item" in item.type_.type_name():
            return int(global_zone_page_state(prog, item))
        return int(global_node_page_state(prog, item))
    raise LookupError(f"none of {', '.join(names)} in this kernel")


def memory_totals(prog: drgn.Program) -> MemoryTotals:
    """Totals as ``kmem -i`` shows them."""
    from drgn.helpers.linux.vmstat import nr_free_pages

    page = page_size(prog)
    return MemoryTotals(
        total=attempt("total memory", lambda: memory_bytes(prog)),
        free=attempt("free memory", lambda: int(nr_free_pages(prog)) * page),
        slab_reclaimable=attempt(
            "reclaimable slab", lambda: _vm_counter(prog, "NR_SLAB_RECLAIMABLE_B", "NR_SLAB_RECLAIMABLE") * page
        ),
        slab_unreclaimable=attempt(
            "unreclaimable slab", lambda: _vm_counter(prog, "NR_SLAB_UNRECLAIMABLE_B", "NR_SLAB_UNRECLAIMABLE") * page
        ),
        page_tables=attempt("page tables", lambda: _vm_counter(prog, "NR_PAGETABLE") * page),
        # NR_KERNEL_STACK_KB counts kilobytes, not pages.
        kernel_stack=attempt("kernel stacks", lambda: _vm_counter(prog, "NR_KERNEL_STACK_KB") * 1024),
    )


def cache_owners(prog: drgn.Program, module_symbols: tuple[drgn.Symbol, ...]) -> dict[int, str]:
    """Which module holds a pointer to which ``struct kmem_cache`` in a global variable.

    A module that creates a cache keeps it in a ``static struct kmem_cache *``;
    that pointer, read from the module's data, names the cache's owner.
    """
    owners: dict[int, str] = {}
    for sym in module_symbols:
        if sym.size != 8 or sym.kind != drgn.SymbolKind.OBJECT:
            continue
        try:
            value = prog.read_u64(sym.address)
            module = prog.module(sym.address).name
        except (drgn.FaultError, LookupError):
            continue
        owners.setdefault(value, module)
    return owners


#: Active objects (which needs walking partial lists and per-CPU freelists) are counted
#: for this many of the largest caches only; the totals come from cheap node counters.
SLAB_USAGE_TOP = 15


def _node_total_objects(prog: drgn.Program, cache: drgn.Object) -> int:
    """A SLUB cache's object count from its per-node counters (CONFIG_SLUB_DEBUG)."""
    from drgn.helpers.linux.nodemask import for_each_online_node

    total = 0
    for nid in for_each_online_node(prog):
        node = cache.node[nid]
        if node:
            total += int(node.total_objects.counter.value_())
    return total


def slab_caches(
    prog: drgn.Program, owners: dict[int, str] | None = None, notes: list[str] | None = None
) -> tuple[SlabCacheInfo, ...]:
    """Usage of every slab cache, largest first, with the module that owns it when one does.

    The object totals come from the per-node counters, which cost one read per
    node; the active objects, which need walking free lists, only for the
    :data:`SLAB_USAGE_TOP` largest caches (on a big machine walking every cache
    takes far longer than the rest of the analysis).
    """
    from drgn.helpers.linux.slab import for_each_slab_cache, slab_cache_usage

    notes = [] if notes is None else notes
    rows = []
    for cache in gaps.walk(for_each_slab_cache(prog), "the slab cache list", notes):
        try:
            cache.size.value_()
            cache.name.string_()
        except drgn.FaultError as exc:
            notes.append(f"a slab cache left out: {gaps.not_in_dump(exc, 'its struct kmem_cache')}")
            continue
        try:
            total: int | None = _node_total_objects(prog, cache)
        except (LookupError, AttributeError, ValueError, TypeError, drgn.FaultError):
            total = None  # not SLUB with SLUB_DEBUG: the usage walk below counts them
        rows.append((cache, total))
    rows.sort(key=lambda r: -(r[1] or 0) * int(r[0].size.value_()))
    out = []
    for rank, (cache, counted) in enumerate(rows):
        name = cache.name.string_().decode(errors="replace")
        total = counted
        active: int | None = None
        missing: str | None = f"not counted: only the {SLAB_USAGE_TOP} largest caches' slabs are walked"
        if rank < SLAB_USAGE_TOP or counted is None:
            try:
                usage = slab_cache_usage(cache)
                active, total, missing = int(usage.active_objs), int(usage.num_objs), None
            except drgn.FaultError as exc:  # a slab page makedumpfile left out: its free objects cannot be counted
                missing = gaps.not_in_dump(exc, "a slab page of the cache")
            except (LookupError, ValueError, TypeError, AttributeError) as exc:
                missing = f"not counted: {exc}"
        total_bytes = None if total is None else total * int(cache.size.value_())
        address = int(cache.value_())
        owner = (owners or {}).get(address)
        object_size = int(cache.object_size.value_())
        out.append(SlabCacheInfo(name, address, object_size, active, total, total_bytes, owner, missing))
    return tuple(sorted(out, key=lambda c: -(c.total_bytes or 0)))


def modules(prog: drgn.Program) -> tuple[ModuleInfo, ...]:
    """Loaded modules with their taint letters and whether debug info was found."""
    out = []
    for mod in for_each_module(prog):
        name = mod.name.string_().decode()
        try:
            loaded = prog.module(
                int(mod.mem[0].base.value_()) if _has_member(mod, "mem") else int(mod.core_layout.base.value_())
            )
            debug = loaded.debug_file_path is not None
        except (LookupError, AttributeError, ValueError):
            debug = False
        out.append(ModuleInfo(name, module_taints(mod), debug))
    return tuple(out)


def _has_member(obj: drgn.Object, member: str) -> bool:
    try:
        obj.member_(member)
    except LookupError:
        return False
    return True


def log_records(prog: drgn.Program) -> tuple[LogRecord, ...]:
    """The printk records in the dump's log buffer, timed as printk printed them (:meth:`LogRecord.from_printk`)."""
    return tuple(
        LogRecord.from_printk(r.timestamp, bytes(r.text).decode(errors="replace")) for r in get_printk_records(prog)
    )


_CLONE_SUFFIX = re.compile(r"(?:\.(?:constprop|isra|part|cold|llvm)(?:\.\d+)?)+$")


def base_function(name: str) -> str:
    """A function's name without the suffix of a compiler clone (``__mutex_lock.constprop.0``)."""
    return _CLONE_SUFFIX.sub("", name)


#: Functions whose ``x`` is the struct completion the task waits on (drgn reads it where DWARF keeps it: 6.1 and 6.12
#: keep it in do_wait_for_common and __wait_for_common, not in the outer wait_for_completion*).
_COMPLETION_WAITS = ("do_wait_for_common", "__wait_for_common", "wait_for_common", "wait_for_completion")


def _completion_wait(pid: int, trace: drgn.StackTrace) -> CompletionWait | None:
    """The completion a task sleeps on, its done count and the other tasks on its wait queue, from the first frame
    of a completion's wait whose ``x`` is readable."""
    from drgn.helpers.linux.list import list_for_each_entry

    for index, frame in enumerate(trace):
        name = base_function(frame.name or "")
        if not name.startswith(_COMPLETION_WAITS):
            continue
        try:
            x = frame["x"]
        except (KeyError, LookupError):
            continue
        if x.absent_:
            continue
        address = int(x.value_())
        done: int | NotAvailable
        waiters: tuple[int, ...] | NotAvailable
        try:
            done = int(x.done.value_())
        except drgn.FaultError as exc:
            done = NotAvailable(not_in_dump(exc, "struct completion"))
        except LookupError as exc:
            done = layouts.unknown_read(str(exc))
        try:
            # completions wait on a simple wait queue since 5.7 (swait_queue_head; each entry a struct swait_queue)
            head = x.wait.task_list.address_of_()
            pids = (int(w.task.pid.value_()) for w in list_for_each_entry("struct swait_queue", head, "task_list"))
            waiters = tuple(p for p in pids if p != pid)
        except drgn.FaultError as exc:
            waiters = NotAvailable(not_in_dump(exc, "its wait queue"))
        except (LookupError, ValueError) as exc:
            # before 5.7 (a5c6234e1028, "completion: Use simple wait queues") the queue is a wait_queue_head
            waiters = layouts.unknown_read(f"no simple wait queue in struct completion ({exc})")
        return CompletionWait(index, name, address, done, waiters)
    return None


def _lock_wait(prog: drgn.Program, trace: drgn.StackTrace) -> tuple[str | None, int | None, str | None, str | None]:
    """What a blocked task waits for, the lock's owner (pid, name) and why its name is not read, from its stack."""
    for frame in trace:
        name = base_function(frame.name or "")
        for function, kind in _LOCK_WAITS:
            if name != function:
                continue
            for var in ("lock", "sem"):
                try:
                    lock = frame[var]
                except (KeyError, LookupError):
                    continue
                if lock.absent_:
                    continue
                address = int(lock.value_())
                try:
                    label = prog.symbol(address).name
                except LookupError:
                    label = f"{address:#x}"
                try:
                    if kind == "mutex":
                        owner = layouts.mutex_owner(lock)
                    else:
                        held = layouts.rwsem_owner(lock)
                        if held.readers:
                            # A read-held rwsem records only its last reader, who may be gone: no owner.
                            return (
                                f"{kind} {label} (held by readers: which ones, the rwsem does not record)",
                                None,
                                None,
                                None,
                            )
                        owner = held.task
                except (LookupError, ValueError, TypeError, drgn.FaultError):
                    return f"{kind} {label}", None, None, None
                if not owner:
                    return f"{kind} {label}", None, None, None
                pid = int(owner.pid.value_())
                try:
                    return f"{kind} {label}", pid, owner.comm.string_().decode(errors="replace"), None
                except drgn.FaultError as exc:  # the owner is still named by its pid
                    return f"{kind} {label}", pid, None, not_in_dump(exc, "the owner's task_struct")
            return kind, None, None, None
    return None, None, None, None


@dataclass
class TaskWalk:
    """What a walk of the tasks met on its way: filled by :func:`pids_and_tasks`, read as a :class:`TaskCensus`."""

    hidden: int = 0
    recovered: int = 0
    left_out: int = 0
    breaks: list[TaskListBreak] = field(default_factory=list)
    pid_table: str | None = None

    def census(self) -> TaskCensus:
        return TaskCensus(self.hidden, self.recovered, self.left_out, tuple(self.breaks), self.pid_table)


def pids_and_tasks(
    prog: drgn.Program, notes: list[str], walk: TaskWalk | None = None
) -> Iterator[tuple[int | None, drgn.Object]]:
    """(pid, task) of every task in the initial PID namespace, as far as the dump holds the PID table.

    A struct pid the dump lacks hides its task from the PID table.  Then the list of thread-group
    leaders (``init_task.tasks``, linked through the task_structs themselves, walked both ways from
    ``init_task`` so that one missing task_struct costs only the tasks between two gaps) gives the
    tasks whose task_struct is there; threads other than leaders hidden that way stay unknown.
    ``walk`` records how many were hidden and given back and where the list broke.
    """
    from drgn.helpers.linux.pid import for_each_pid, pid_task

    walk = TaskWalk() if walk is None else walk
    pidtype = prog["PIDTYPE_PID"]
    seen: set[int] = set()
    stopped: list[str] = []
    for pid in gaps.walk(for_each_pid(prog), "the PID table", stopped):
        try:
            nr: int | None = int(pid.numbers[0].nr.value_())
            task = pid_task(pid, pidtype)
        except drgn.FaultError as exc:
            notes.append(f"a task: its struct pid at {int(pid.value_()):#x} {gaps.not_in_dump(exc, 'struct pid')}")
            walk.hidden += 1
            continue
        if task:
            seen.add(int(task.value_()))
            yield nr, task
    notes.extend(stopped)
    walk.pid_table = stopped[0] if stopped else None
    if walk.hidden:
        for task in _task_list(prog, seen, walk.breaks):
            walk.recovered += 1
            yield int(task.pid.value_()), task
        # the census line (Tasks) says why each break's task_struct is missing; here only where
        where = " and ".join(f"{b.direction} after pid {b.after_pid} at {b.address:#x}" for b in walk.breaks)
        unseen = walk.hidden - walk.recovered
        breaks = f"; it breaks {where} (task_structs not in the dump)" if walk.breaks else ""
        breaks += f", so {unseen} tasks are not read (state unknown)" if unseen > 0 else ""
        notes.append(
            f"the PID table: {walk.hidden} struct pids are not in the dump; the list of tasks (init_task.tasks) "
            f"gave {walk.recovered} tasks it hid{breaks}"
        )


#: Bound on a walk of the task list (a damaged list could cycle without reaching init_task again).
TASK_LIST_MAX = 1 << 20


def _task_list(prog: drgn.Program, seen: set[int], breaks: list[TaskListBreak]) -> Iterator[drgn.Object]:
    """Thread-group leaders on ``init_task.tasks`` not in ``seen``, forward then backward to a gap (in ``breaks``)."""
    from drgn.helpers.linux.list import list_empty

    head = prog["init_task"].tasks.address_of_()
    if list_empty(head):
        return
    visited = {int(head.value_())}
    for direction, way in (("next", "forward"), ("prev", "backward")):
        node = head.member_(direction)
        after = 0
        for _ in range(TASK_LIST_MAX):
            try:
                address = int(node.value_())
            except drgn.FaultError as exc:  # the previous task_struct's link itself is not in the dump
                breaks.append(TaskListBreak(way, after, int(getattr(exc, "address", 0)), not_in_dump(exc)))
                break
            if address in visited:
                break
            visited.add(address)
            task = drgn.container_of(node, "struct task_struct", "tasks")
            try:
                following = node.member_(direction)
                pid = int(task.pid.value_())
            except drgn.FaultError as exc:
                # a task_struct the dump lacks: the other direction goes on from init_task
                breaks.append(
                    TaskListBreak(way, after, int(task.value_()), not_in_dump(exc, "a word of its task_struct"))
                )
                break
            if int(task.value_()) not in seen:
                yield task
            after = pid
            node = following


def tasks(
    prog: drgn.Program, with_stacks: set[str], notes: list[str] | None = None, walk: TaskWalk | None = None
) -> tuple[TaskInfo, ...]:
    """Every task; those in a state of ``with_stacks`` (or on a CPU) with their stack and lock wait.

    A task whose task_struct the dump lacks is left out, ``notes`` says which and why, and ``walk`` counts
    it with what the walk of the PID table and of the list of tasks could not read.
    """
    notes = [] if notes is None else notes
    walk = TaskWalk() if walk is None else walk
    out = []
    for nr, task in pids_and_tasks(prog, notes, walk):
        try:
            state = task_state_to_char(task)
            pid = int(task.pid.value_())
            comm = task.comm.string_().decode(errors="replace")
        except drgn.FaultError as exc:
            what = f"task_struct of pid {nr}"
            notes.append(f"task pid {nr} left out: {gaps.not_in_dump(exc, what)}")
            walk.left_out += 1
            continue
        cpu = attempt("cpu", partial(_task_int, task_cpu, task))
        on_cpu = bool(int(task.on_cpu.value_())) if _has_member(task, "on_cpu") else False
        last = attempt("time since it ran", partial(_task_int, since_last_ran_ns, task))
        ran = attempt("when it last ran", partial(last_run, task))
        stack: tuple[Frame, ...] = ()
        blocked = owner_pid = owner_comm = owner_missing = None
        completion = None
        if state in with_stacks or on_cpu:
            try:
                trace = prog.stack_trace(task)
                stack = backtrace(prog, trace)
                if state == "D":
                    blocked, owner_pid, owner_comm, owner_missing = _lock_wait(prog, trace)
                    if blocked is None:
                        completion = _completion_wait(pid, trace)
            except (ValueError, LookupError, drgn.FaultError):
                stack = ()
        out.append(
            TaskInfo(
                pid=pid,
                comm=comm,
                state=state,
                cpu=None if isinstance(cpu, NotAvailable) else cpu,
                on_cpu=on_cpu,
                last_run_ns=None if isinstance(last, NotAvailable) else last,
                last_run=None if isinstance(ran, NotAvailable) else ran,
                stack=stack,
                blocked_on=blocked,
                lock_owner_pid=owner_pid,
                lock_owner_comm=owner_comm,
                completion=completion,
                lock_owner_missing=owner_missing,
            )
        )
    # A lock owner's stack says why it does not release the lock, whatever its state.
    owners = {t.lock_owner_pid for t in out if t.lock_owner_pid is not None}
    return tuple(_with_stack(prog, t) if t.pid in owners and not t.stack else t for t in out)


def _with_stack(prog: drgn.Program, task: TaskInfo) -> TaskInfo:
    from drgn.helpers.linux.pid import find_task

    try:
        return replace(task, stack=backtrace(prog, prog.stack_trace(find_task(prog, task.pid))))
    except (ValueError, LookupError, drgn.FaultError):
        return task


def since_last_ran_ns(task: drgn.Object) -> int:
    """Nanoseconds since the task last ran, on its CPU's run-queue clock.

    ``sched_info.last_arrival`` needs CONFIG_SCHED_INFO; without it the CFS
    entity's ``exec_start`` (when it was last put on the CPU) bounds the time
    from above.
    """
    from drgn.helpers.linux.sched import task_rq, task_since_last_arrival_ns

    try:
        return int(task_since_last_arrival_ns(task))
    except (AttributeError, LookupError):
        return int(task_rq(task).clock.value_()) - int(task.se.exec_start.value_())


def last_run(task: drgn.Object) -> LastRun:
    """When the task last ran, and where that was read: ``sched_info.last_arrival`` (CONFIG_SCHED_INFO), on the
    run-queue clock; else ``se.exec_start``, on the run queue's task clock, taken only where that clock equals the
    run-queue clock at the crash (no IRQ or steal time taken out of it: the two clocks, and printk's, then agree)."""
    from drgn.helpers.linux.sched import task_rq

    try:
        field, name = task.sched_info.last_arrival, "sched_info.last_arrival"
    except AttributeError:
        rq = task_rq(task)
        if int(rq.clock.value_()) != int(rq.clock_task.value_()):
            why = "no sched_info.last_arrival, and se.exec_start's clock (clock_task) is not rq->clock"
            raise ValueError(why) from None
        field, name = task.se.exec_start, "se.exec_start"
    return LastRun(int(field.address_of_().value_()), int(field.value_()), name)


def _task_int(read: Callable[[drgn.Object], object], task: drgn.Object) -> int:
    value = read(task)
    if not isinstance(value, int):
        raise TypeError(f"expected an integer, got {type(value).__name__}")
    return value


def online_cpus(prog: drgn.Program) -> int:
    """Number of CPUs online at the crash."""
    return int(num_online_cpus(prog))


def other_cpu_tasks(
    prog: drgn.Program, crashed_cpu: int | NotAvailable, notes: list[str] | None = None
) -> tuple[tuple[int, TaskInfo], ...]:
    """The task each other online CPU was running (idle tasks included), with its stack."""
    from drgn.helpers.linux.cpumask import for_each_online_cpu
    from drgn.helpers.linux.sched import cpu_curr

    notes = [] if notes is None else notes
    out = []
    for cpu in for_each_online_cpu(prog):
        if cpu == crashed_cpu:
            continue
        try:
            task = cpu_curr(prog, cpu)
            task.comm.string_()
        except drgn.FaultError as exc:
            notes.append(f"CPU {cpu}'s current task: {gaps.not_in_dump(exc, 'its task_struct')}")
            continue
        try:
            stack = backtrace(prog, prog.stack_trace(task))
        except (ValueError, LookupError, drgn.FaultError):
            stack = ()
        info = TaskInfo(
            pid=int(task.pid.value_()),
            comm=task.comm.string_().decode(errors="replace"),
            state=task_state_to_char(task),
            cpu=cpu,
            on_cpu=True,
            last_run_ns=None,
            stack=stack,
            halted_at=halted_at(prog, stack[0]) if stack else None,
        )
        out.append((cpu, info))
    return tuple(out)
