"""Typed snapshot of a kernel crash dump, as the drgn adapter extracts it.

These records hold plain values only (no drgn objects), so the detectors in
:mod:`detectors.vmcore` can reason about a dump without drgn, and tests can
build them from any source.  Importing this module never imports drgn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from forensics.model import Finding, NotAvailable
from forensics.quoting import shell_word, shown_path

# Registers and code bytes live apart so that ``kforensic dmesg`` reads a log's register dump and Code: line
# without making this module's two dozen records (~20 ms of start-up); they are this module's names too
# (``X as X``: PEP 484's explicit re-export, which mypy --strict needs).
from forensics.types.registers import CodeBytes as CodeBytes  # noqa: PLC0414
from forensics.types.registers import Instruction
from forensics.types.registers import RegisterSet as RegisterSet  # noqa: PLC0414

if TYPE_CHECKING:
    from forensics.types.incident import Hypothesis


#: Where a frame's symbol, offset and size come from when the kernel's kallsyms are read from the dump.
FRAMES_FROM_KALLSYMS = "the kernel's kallsyms in the dump, as its stack dump prints them"
#: The same when they are not: the ELF symbol tables, whose sizes are the functions' own.
FRAMES_FROM_ELF = (
    "the core kernel's from the ELF symbol table of vmlinux, whose sizes are the functions' own (the dump's kallsyms "
    "table was not read; the kernel's stack dump measures up to the next symbol and may name a label inside the "
    "function), the modules' from their kallsyms in the dump"
)


#: The suffixes GCC gives a copy of a function it specialised (constant arguments, scalarised ones, an LTO-private
#: copy): the symbol is a whole clone of the function, not a part of it as ``.cold`` and ``.part.N`` are.
CLONE_SUFFIXES = (".constprop.", ".isra.", ".lto_priv.", ".specialized.")


def _held_by_how(symbol: str, function: str) -> str:
    """How the symbol holding a frame's pc stands to its function: "a compiler clone of" (``__mutex_lock.constprop.0``
    of ``__mutex_lock``), else "part of" (``kf_msg_submit.cold``, a label such as entry_SYSCALL_64_after_hwframe)."""
    rest = symbol.removeprefix(function)
    return "a compiler clone of" if rest != symbol and any(rest.startswith(c) for c in CLONE_SUFFIXES) else "part of"


@dataclass(frozen=True)
class Frame:
    """One frame of a backtrace (``#0`` is the innermost)."""

    index: int
    function: str | NotAvailable
    pc: int
    offset: int | None  # pc minus the start of the symbol that holds it (``symbol``, else the function's)
    size: int | None  # that symbol's size as the kernel's stack dump gives it (up to the next symbol, kallsyms)
    module: str | None  # None for the kernel image (vmlinux)
    source_file: str | None
    source_line: int | None
    inline: bool = False  # an inlined call, sharing the pc of the frame below
    interrupted: bool = False  # registers come from an interrupt/exception frame
    # The symbol that holds the pc as the kernel names it, when it is not ``function``: the function an inlined call
    # was inlined into (the inlined function has no symbol of its own), a function's part the compiler moved out
    # (``kf_msg_submit.cold``), a label inside an assembly function (``entry_SYSCALL_64_after_hwframe``).
    # ``offset`` and ``size`` are this symbol's.
    symbol: str | None = None

    def label(self) -> str:
        """``func+0x1a/0x40 [module]`` as the kernel prints it; a pc in another symbol than its function is named
        by that symbol, as the kernel and crash name it, then its function: ``kf_msg_submit.cold+0x18/0x39
        [kf_buggy] (part of kf_msg_submit)``; an inlined call as drgn shows it: ``default_idle+0x13/0x15 in
        native_irq_disable (inlined)``."""
        name = str(self.function) if isinstance(self.function, NotAvailable) else self.function
        held_by = self.symbol if self.symbol and self.symbol != name else None
        text = held_by or name
        if self.offset is not None and not isinstance(self.function, NotAvailable):
            text += f"+{self.offset:#x}" + (f"/{self.size:#x}" if self.size else "")
        if self.module:
            text += f" [{self.module}]"
        if held_by:
            text += f" in {name}" if self.inline else f" ({_held_by_how(held_by, name)} {name})"
        return text + (" (inlined)" if self.inline else "")

    def code_symbol(self) -> str | NotAvailable:
        """The symbol whose code holds the pc (``kf_msg_submit.cold``), else the function: what ``dis -l``
        disassembles to show the pc (``dis -l kf_msg_submit`` does not show its .cold part)."""
        return self.symbol or self.function

    def where(self) -> str | None:
        """``file:line`` of the frame, when known."""
        if self.source_file is None:
            return None
        return f"{self.source_file}:{self.source_line}" if self.source_line else self.source_file


@dataclass(frozen=True)
class MemberInfo:
    """A member of a struct or union at a byte offset (nested members are flattened)."""

    offset: int
    size: int
    name: str  # dotted path for nested members, e.g. ``dev.ops``
    type_name: str
    pointee: str | None = None  # for pointer members, the pointed-to type's name


@dataclass(frozen=True)
class TypeLayout:
    """The flattened layout of a struct or union type."""

    name: str  # e.g. ``struct kf_sensor``
    size: int
    members: tuple[MemberInfo, ...]

    def member_at(self, offset: int) -> MemberInfo | None:
        """The innermost member that covers ``offset`` (the deepest, then the narrowest)."""
        covering = [m for m in self.members if m.offset <= offset < m.offset + max(m.size, 1)]
        if not covering:
            return None
        return max(covering, key=lambda m: (m.name.count("."), -m.size))


@dataclass(frozen=True)
class Variable:
    """A local variable or parameter of a frame, as DWARF describes it at the frame's pc."""

    frame: int
    name: str
    type_name: str
    value: int | None  # the integer or pointer value; None when optimized out or not scalar
    pointee: str | None = None  # for pointers, the pointed-to type's name
    parameter: bool = False


#: Functions a task sleeps in on no lock, and what it then waits for; the first of them its stack holds, in this
#: order (a completion's wait sleeps in schedule_timeout too).
WAIT_FRAMES = (
    ("wait_for_completion", "a completion"),
    ("__wait_for_common", "a completion"),
    ("do_wait_for_common", "a completion"),
    ("msleep", "a timer (msleep)"),
    ("io_schedule", "I/O"),
    ("schedule_timeout", "a timeout"),
)


@dataclass(frozen=True)
class CompletionWait:
    """The struct completion a task sleeps on, read from the ``x`` of its wait's frame (``__wait_for_common``)."""

    frame: int  # the frame it was read in
    function: str
    address: int
    done: int | NotAvailable  # its done count (0: not completed yet), or why it was not read
    other_waiters: tuple[int, ...] | NotAvailable  # pids of the other tasks on its wait queue, or why not read

    @property
    def missing(self) -> str | None:
        """Why its done count or its waiters were not read, each named (the JSON record's ``not_available``, where
        both are null or one is); None when both were read.  The finding says each reason at the value it stands
        for, from the same records."""
        unread = (("its done count", self.done), ("its waiters", self.other_waiters))
        reasons = [f"{what}: {value.reason}" for what, value in unread if isinstance(value, NotAvailable)]
        return "; ".join(reasons) or None


@dataclass(frozen=True)
class LastRun:
    """When a task last ran, read from the dump: its ``sched_info.last_arrival`` (when it last got a CPU,
    CONFIG_SCHED_INFO) or else its ``se.exec_start`` (when its run time was last accounted, on the CPU)."""

    address: int  # of the field, for the citation (``crash> rd -64 ADDRESS``)
    ns: int  # nanoseconds on the run-queue clock (sched_clock, which printk's times read too)
    field: str  # the task_struct member read: ``sched_info.last_arrival`` or ``se.exec_start``

    @property
    def seconds(self) -> float:
        """Seconds since boot, on the clock of the kernel log's times."""
        return self.ns / 1e9


@dataclass(frozen=True)
class TaskInfo:
    """A task of the dumped kernel."""

    pid: int
    comm: str
    state: str  # one letter as ps prints it: R, S, D, T, t, X, Z, I
    cpu: int | None
    on_cpu: bool
    last_run_ns: int | None  # how long ago (ns, on its CPU's run-queue clock) it last ran, when known
    stack: tuple[Frame, ...] = ()
    blocked_on: str | None = None  # e.g. ``mutex kf_lock`` when the stack shows a lock wait
    lock_owner_pid: int | None = None
    lock_owner_comm: str | None = None
    completion: CompletionWait | None = None  # the completion it waits on, when its wait's frame shows it
    lock_owner_missing: str | None = None  # why ``lock_owner_comm`` is None while ``lock_owner_pid`` is known
    # A task on a CPU stopped in ``hlt``: the hlt's address.  ``hlt`` resumes past itself, so the pc the crash's NMI
    # saved (its stack's #0) is the next instruction's, one the CPU never ran (6.12's default_idle: the ``cli`` of
    # ``raw_local_irq_disable()``, whose inline frame #0 names).
    halted_at: int | None = None
    # When it last ran (:class:`LastRun`); None where it was not read, or its clock is not printk's.
    last_run: LastRun | None = None

    def lock_owner_text(self) -> str | None:
        """``kf_holder (pid 42)``; a name not read says "unknown (why)"; None when no owner is known."""
        if self.lock_owner_pid is None:
            return None
        if self.lock_owner_comm is None:
            return f"pid {self.lock_owner_pid}, name unknown ({self.lock_owner_missing or 'not read'})"
        return f"{self.lock_owner_comm} (pid {self.lock_owner_pid})"

    def halt_text(self) -> str | None:
        """``hlt at default_idle+0x12``: where a CPU stopped in ``hlt`` halted, by the symbol of its stack's #0; None
        when it was not halted (or its stack has no symbol)."""
        top = self.stack[0] if self.stack else None
        if self.halted_at is None or top is None or top.offset is None:
            return None
        name = top.code_symbol()
        if isinstance(name, NotAvailable):
            return None
        return f"hlt at {name}+{top.offset - (top.pc - self.halted_at):#x}" + (f" [{top.module}]" if top.module else "")

    def waits_for(self) -> str:
        """What a sleeping task waits for: its lock, else the kind of wait its stack shows (``a completion (in
        do_wait_for_common)``), else ``unknown`` and why."""
        if self.blocked_on:
            return self.blocked_on
        names = [f.function for f in self.stack if isinstance(f.function, str)]
        for prefix, what in WAIT_FRAMES:
            hit = next((n for n in names if n.startswith(prefix)), None)
            if hit is not None:
                return f"{what} (in {hit})"
        return "unknown (no lock, and no wait its stack shows)" if names else "unknown (its stack was not read)"

    def completion_wait(self) -> CompletionWait | NotAvailable | None:
        """The completion it waits on, read from its wait's frame; not available (why) where its stack shows a
        completion's wait but none was read, or its stack was not read; None where it waits on a lock or on no
        completion its stack shows."""
        if self.completion is not None:
            return self.completion
        if self.blocked_on:
            return None
        names = [f.function for f in self.stack if isinstance(f.function, str)]
        if not names:
            return NotAvailable("its stack was not read")
        waits = [n for n in names if any(n.startswith(p) for p, what in WAIT_FRAMES if what == "a completion")]
        if not waits:
            return None
        # forensics/vmcore/system.py reads x in the first frame of these that DWARF keeps it in.
        return NotAvailable(f"not read: no frame of its completion's wait ({', '.join(waits)}) keeps a readable x")


@dataclass(frozen=True)
class SlabCacheInfo:
    """Usage of one slab cache."""

    name: str
    address: int  # of its struct kmem_cache
    object_size: int
    active_objects: int | None  # in use as /proc/slabinfo counts them (objects on per-CPU freelists count as used)
    total_objects: int | None
    total_bytes: int | None
    owner_module: str | None = None  # the module that created it, when one did
    # Why ``active_objects`` is None (a slab page not in the dump, not counted); ``total_objects`` too when None: the
    # reader has it from the same slab walk when the per-node counters do not give it.
    active_missing: str | None = None

    def active_text(self) -> str:
        """The in-use count as the reports print it: the number, else "unknown (why)"."""
        if self.active_objects is not None:
            return str(self.active_objects)
        return f"unknown ({self.active_missing or 'not counted'})"

    def total_text(self) -> str:
        """The total count as the reports print it: the number, else "unknown (why)"."""
        if self.total_objects is not None:
            return str(self.total_objects)
        return f"unknown ({self.active_missing or 'not counted'})"


@dataclass(frozen=True)
class MemoryTotals:
    """Memory totals as ``kmem -i`` shows them, in bytes."""

    total: int | NotAvailable
    free: int | NotAvailable
    slab_reclaimable: int | NotAvailable
    slab_unreclaimable: int | NotAvailable
    page_tables: int | NotAvailable
    kernel_stack: int | NotAvailable


@dataclass(frozen=True)
class ModuleInfo:
    """A loaded module."""

    name: str
    taints: str  # taint letters of the module, e.g. ``O`` for out-of-tree, ``E`` unsigned
    debug_info: bool


@dataclass(frozen=True)
class LogRecord:
    """A printk record from the dump's log buffer; ``seconds`` is its time as printk printed it."""

    seconds: float
    text: str

    @classmethod
    def from_printk(cls, ts_nsec: int, text: str) -> LogRecord:
        """The record of a ``ts_nsec`` time as printk prints it: whole microseconds, truncated (``ts_nsec / 1000``).
        2359122682 ns is ``[    2.359122]`` on the console and in makedumpfile's dmesg.txt; rounded, it was
        ``2.359123``, a line the kernel never printed, and the same record had two times in one report."""
        return cls((ts_nsec // 1000) / 1_000_000, text)

    def stamp(self) -> str:
        """The record's time as printk prefixes its line: ``[    2.359122]``."""
        return f"[{self.seconds:12.6f}]"


@dataclass(frozen=True)
class ValueRead:
    """One value read from the dump: a variable, a member chain, a condition operand.

    ``value`` is the integer (pointers, integers, enums, bools); ``text`` is how
    drgn prints it (an enum's name, a symbol, a string); ``missing`` says why
    there is no value (``optimized out``, ``not in dump ...``), never a guess.
    """

    expression: str  # ``buf->refcount``, ``state``
    type_name: str
    value: int | None
    text: str
    missing: str | None = None
    address: int | None = None  # where it lives in memory, when it does
    pointee: str | None = None  # for pointers to structs, the struct's name

    def shown(self) -> str:
        """``64``, ``KF_IDLE (0)``, or ``optimized out``."""
        if self.missing is not None:
            return self.missing
        return self.text


@dataclass(frozen=True)
class FrameValues:
    """Arguments and locals of one frame, and the struct members the frame's source line reads."""

    frame: int
    function: str
    location: str | None  # file:line
    variables: tuple[ValueRead, ...]
    members: tuple[ValueRead, ...] = ()  # ``buf->refcount`` for pointer variables of the frame


@dataclass(frozen=True)
class SourceLine:
    """The source statement of a frame, as read from a source tree, with how it was found."""

    path: str  # file that was read
    line: int
    text: str  # the statement (one or more lines, joined)
    found_via: str  # ``--source-dir``, ``DW_AT_comp_dir``, ``/usr/src/linux-source-*``
    matches_build: bool
    mismatch: str | None = None  # why the line does not look like the build's


@dataclass(frozen=True)
class BugSite:
    """The BUG()/WARN() that trapped: its bug table entry, source and condition operands."""

    frame: int  # the frame whose pc is the ud2
    pc: int
    function: str
    file: str | None  # from the bug table entry (or DWARF when the table has none)
    line: int | None
    warning: bool  # BUGFLAG_WARNING: a WARN, not a BUG
    table: str  # where the entry was found: ``module kf_buggy``, ``vmlinux``, or why not
    source: SourceLine | NotAvailable
    operands: tuple[ValueRead, ...] = ()
    line_missing: str | None = None  # why ``line`` is None (the bug table entry not in the dump, no DWARF line)

    def where(self, why: bool = True) -> str:
        """``drivers/kf/kf.c:42``; a line the dump does not give says "unknown (why)" (``why``: with its reason,
        which can be long, for a fact; without, for a title); ``unknown line`` without a file."""
        if not self.file:
            return "unknown line"
        if self.line is None:
            return f"{self.file}, line unknown" + (f" ({self.line_missing or 'not read'})" if why else "")
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class EarlierFree:
    """The free that came first in a double free, read from the second free's function in its source: the one
    earlier call freeing the same pointer, and the ``if`` conditions it runs under, each true by the frame's values
    (none: the function's body itself)."""

    source_file: str  # as the debug info names it (the report cites the --source-dir copy)
    line: int
    text: str  # the call, as written: ``kfree(msg);``
    conditions: tuple[str, ...]  # the enclosing ``if`` conditions, outermost first
    operands: tuple[ValueRead, ...]  # their operands as the frame holds them


@dataclass(frozen=True)
class LoopSite:
    """The busy-wait loop an interrupted frame spins in: its source condition and the operands' values.

    Without the source (no --source-dir, the usual distribution debug info) the loop is still its machine code's
    backward jump around the pc: ``source`` and ``condition`` say why they are not available, ``operands`` is empty.
    """

    frame: int
    function: str
    source: SourceLine | NotAvailable
    condition: str | NotAvailable  # the ``while (...)`` condition as written
    operands: tuple[ValueRead, ...]
    loop_reads_memory: bool | None  # whether the machine code around the pc reads memory at all
    body: tuple[int, int] | None = None  # the loop's first and last instruction (its backward jump), when decoded


@dataclass(frozen=True)
class AddressInfo:
    """What an address points into: a slab object (cache, start, offset, state), a symbol, nothing."""

    address: int
    origin: str  # where the address was seen: ``rdi``, ``log``, ``entry (frame #1)``
    kind: str  # slab, symbol, unknown
    cache: str | None = None
    cache_aliases: tuple[str, ...] = ()  # other caches SLUB merged with it
    object_start: int | None = None
    object_size: int | None = None
    offset: int | None = None
    allocated: bool | None = None
    symbol: str | None = None
    words: tuple[int, ...] = ()  # the first words at the address (for poison / text checks)
    missing: str | None = None
    # the slab object's bytes before the address (at most LEADING_BYTES): the text an overflow wrote up to it
    leading: bytes = b""


#: How many bytes of a slab object before an address are kept (the member an overflow came from).
LEADING_BYTES = 256


@dataclass(frozen=True)
class PolledWord:
    """A memory word a function reads by absolute or rip-relative address, with its value."""

    instruction: int  # address of the instruction that reads it
    address: int
    symbol: str | None  # ``kf_hw_status+0x0``
    value: int | None
    missing: str | None = None


@dataclass(frozen=True)
class MemoryUser:
    """A consumer of memory in the OOM view: a task, a vmalloc caller, the page cache."""

    kind: str  # task, slab, vmalloc, page-cache, shmem
    name: str
    bytes: int
    pid: int | None = None


@dataclass(frozen=True)
class SlabTrack:
    """One of the two tracks SLUB keeps with an object when ``slub_debug=U`` is on (alloc or free)."""

    kind: str  # ``alloc`` or ``free``
    caller: str | None  # the symbol of ``track.addr`` (the caller of kmalloc/kfree), ``kf_conn_open+0x1e``
    pid: int | None
    cpu: int | None
    when: int | None  # jiffies at the alloc/free
    stack: tuple[Frame, ...] = ()  # from the stack depot (6.1) or the track's own addrs[] (older)
    missing: str | None = None  # why there is no stack (a handle of 0, a depot pool not in the dump)

    # The reader reads pid and CPU with the track's address: a track it could not read has neither, and
    # its ``missing`` says why (track_text prints that instead); any other record did not read them.
    WHO_MISSING: ClassVar[str] = "not read with the track"

    def unread(self) -> bool:
        """The track itself was not read (or not recorded): its ``missing`` is all track_text says of it."""
        return self.missing is not None and not self.stack

    def who(self) -> str:
        """``pid 42, CPU 1``; a pid or CPU the track does not give says "unknown (why)", not None."""
        pid = str(self.pid) if self.pid is not None else f"unknown ({self.WHO_MISSING})"
        cpu = str(self.cpu) if self.cpu is not None else f"unknown ({self.WHO_MISSING})"
        return f"pid {pid}, CPU {cpu}"

    def functions(self) -> tuple[str, ...]:
        """The stack's function names, innermost first."""
        return tuple(f.function for f in self.stack if isinstance(f.function, str))


@dataclass(frozen=True)
class SlabObject:
    """A slab object an address of the crash points into, with its state and history."""

    start: int
    cache: str
    cache_aliases: tuple[str, ...]  # other caches SLUB merged into it
    object_size: int
    allocated: bool | None  # None: unknown (its slab's free list runs through memory the dump lacks)
    store_user: bool  # SLAB_STORE_USER (slub_debug=U): the cache keeps alloc/free tracks
    poisoned: bool  # SLAB_POISON (slub_debug=P): free objects are filled with 0x6b
    tracks: tuple[SlabTrack, ...] = ()
    tracks_missing: str | None = None  # why no tracks were read
    referenced_by: tuple[str, ...] = ()  # module variables that still hold its address (``kf_active_conn``)
    seen_in: tuple[str, ...] = ()  # where the crash's addresses into it were seen (``rax``, ``log``)
    missing: str | None = None  # why its memory could not be read (a page filtered out of the dump)
    contents: bytes = b""  # the object's bytes as the dump holds them (up to 4 KiB), b"" when not read

    def track(self, kind: str) -> SlabTrack | None:
        """The alloc or free track, when read."""
        return next((t for t in self.tracks if t.kind == kind), None)


@dataclass(frozen=True)
class LockTaskRef:
    """A task a sleeping lock names (its owner or a waiter), by the address of its task_struct.

    The address comes from the lock itself (the owner word, the waiter on the wait list), so it is
    known even when the dump lacks the task_struct; the pid then comes from the PID table (whose
    struct pid points at the task_struct) and the name and state are None, ``missing`` saying why.
    """

    address: int
    pid: int | None
    comm: str | None = None
    state: str | None = None
    missing: str | None = None  # why the task_struct (name, state) could not be read
    # A waiter's return addresses on its stack above its wait-list entry, innermost first, as
    # ``func+0x1b`` (crash's ``bt -t``): where it waits, and which of the log's reports is its.
    stack_text: tuple[str, ...] = ()


@dataclass(frozen=True)
class GlobalLock:
    """A sleeping lock that is a global variable of a module (``static DEFINE_MUTEX(...)``), as held.

    Module data is never slab memory, so a level-31 dump keeps it whatever it filtered; the wait
    list's entries live on the waiting tasks' stacks (vmalloc'd), which it keeps too.
    """

    name: str  # the variable: ``kf_dev_lock``
    module: str
    kind: str  # ``mutex``
    address: int
    owner: LockTaskRef | None  # None: the lock is free
    waiters: tuple[LockTaskRef, ...] = ()
    missing: str | None = None  # why the wait list could not be followed to its end


@dataclass(frozen=True)
class SpinLockState:
    """The spinlock a spinning CPU waits for, decoded from its lock word (a qspinlock on x86-64)."""

    address: int
    symbol: str | None  # ``kf_hw_lock+0x0`` or the slab object it lies in
    found_via: str  # ``lock (frame #1 native_queued_spin_lock_slowpath)`` or ``rdi``
    word: int | None
    owner: str | None = None  # CONFIG_DEBUG_SPINLOCK's owner task, when the kernel records one
    owner_cpu: int | None = None
    takers: tuple[str, ...] = ()  # functions of the spinner's module that take this lock
    missing: str | None = None
    # Where the word's fields lie on this kernel (read from its struct qspinlock and NR_CPUS):
    # the pending bit(s) and the first bit of the queue tail's CPU; None when unknown.
    pending_shift: int | None = 8
    pending_bits: int = 8
    tail_cpu_shift: int | None = 18
    owner_cpu_missing: str | None = None  # why ``owner_cpu`` is None while ``owner`` is known

    def owner_text(self) -> str | None:
        """``worker (pid 77) on CPU 0``, the CPU "unknown (why)" when not read; None when no owner is recorded."""
        if self.owner is None:
            return None
        cpu = self.owner_cpu if self.owner_cpu is not None else f"unknown ({self.owner_cpu_missing or 'not read'})"
        return f"{self.owner} on CPU {cpu}"

    @property
    def locked(self) -> bool | None:
        """The locked byte (bits 0-7) is set."""
        if self.word is None or self.pending_shift is None:
            return None
        return bool(self.word & 0xFF)

    @property
    def pending(self) -> bool | None:
        """A first waiter spins with the pending bit set."""
        if self.word is None or self.pending_shift is None:
            return None
        return bool(self.word >> self.pending_shift & ((1 << self.pending_bits) - 1))

    @property
    def tail_cpu(self) -> int | None:
        """The CPU of the last queued waiter (the tail holds cpu + 1), None when no one queues or unknown."""
        if self.word is None or self.tail_cpu_shift is None or self.word >> self.tail_cpu_shift == 0:
            return None
        return (self.word >> self.tail_cpu_shift) - 1


@dataclass(frozen=True)
class CrashReach:
    """Which kernels one crash release is known to open (x86-64 kdump dumps), and where that is said."""

    crash: tuple[int, int, int]  # the release: (8, 0, 2)
    opens: tuple[int, int] | None  # the newest kernel (major, minor) it opens, and so every older one
    fails: tuple[int, int] | None  # the oldest kernel it does not open, and so no newer one
    source: str  # who says so


#: What crash releases open, as measured or reported, oldest release first.  A later release opens what an earlier
#: one opens (upstream keeps crash backwards-compatible: Ubuntu's crash SRU policy, wiki.ubuntu.com/CrashUpdates,
#: "Upstream policy enforces backwards compatibility"), and an earlier one does not open what a later one does not:
#: a pair of (crash, kernel) outside both is unknown, said so, never assumed.  crash's release notes per version
#: (crash-utility.github.io) were not found in the stored copies searched; add a row with its source when known.
CRASH_REACH: tuple[CrashReach, ...] = (
    CrashReach(
        (8, 0, 2),
        (6, 1),
        (6, 12),
        "measured on the fixtures with Debian 12's crash 8.0.2: the 5.10 and 6.1 dumps open, no 6.12 one (\"seek "
        'error: kernel virtual address ... page_offset_base"; docs/vmcore.md, Follow-up)',
    ),
    CrashReach(
        (9, 0, 2),
        None,
        (7, 0),
        'crash-utility/crash issue #232, "crash does not work with kernel 7.0" (crash 9.0.2 on a 7.0 vmcore, 2026-04)',
    ),
)


def _kernel_version(release: str | NotAvailable) -> tuple[int, int] | NotAvailable:
    """(major, minor) of a dump's kernel release; not available, saying why, where it was not read or has none."""
    if isinstance(release, NotAvailable):
        return NotAvailable(f"the dump's kernel release is unknown ({release.reason})")
    m = re.match(r"(\d+)\.(\d+)", release)
    if m is None:
        return NotAvailable(f"the dump's kernel release {release!r} has no version")
    return int(m.group(1)), int(m.group(2))


def crash_version_text(crash: tuple[int, ...]) -> str:
    """``8.0.2``."""
    return ".".join(map(str, crash))


def crash_opens(release: str | NotAvailable, crash: tuple[int, ...] | NotAvailable) -> bool | NotAvailable:
    """Whether the crash release ``crash`` (the installed one's version) opens a dump of kernel ``release``, by
    :data:`CRASH_REACH`; not available, saying why, where that is not known: crash not installed or its version not
    read, the release not read, no record that says it for this pair."""
    if isinstance(crash, NotAvailable):
        return crash
    kernel = _kernel_version(release)
    if isinstance(kernel, NotAvailable):
        return kernel
    if any(r.opens is not None and r.crash <= crash and kernel <= r.opens for r in CRASH_REACH):
        return True
    if any(r.fails is not None and crash <= r.crash and kernel >= r.fails for r in CRASH_REACH):
        return False
    return NotAvailable(
        f"no record of whether crash {crash_version_text(crash)} opens {kernel[0]}.{kernel[1]} dumps "
        "(forensics/types/vmcore.py, CRASH_REACH)"
    )


def opened_by_some_crash(release: str | NotAvailable) -> bool | NotAvailable:
    """Whether some crash release of :data:`CRASH_REACH` is recorded to open a dump of kernel ``release`` (the steps'
    choice where the installed crash is not known); not available where the release has no version."""
    kernel = _kernel_version(release)
    if isinstance(kernel, NotAvailable):
        return kernel
    return any(r.opens is not None and kernel <= r.opens for r in CRASH_REACH)


@dataclass(frozen=True)
class FollowUp:
    """How to go on by hand on this dump, with real paths: the sessions the report's next commands run in.

    A next command ``crash> CMD`` runs at the prompt of :meth:`crash` after :meth:`crash_setup`;
    ``>>> EXPR`` at the prompt of :meth:`drgn` (or of ``kforensic vmcore DUMP --shell``).
    """

    dump: str  # absolute path of the dump
    vmlinux: str | NotAvailable  # absolute path of an uncompressed vmlinux with DWARF (crash cannot read xz)
    debug_info_via: str  # how the kernel's debug info was found ("--vmlinux", a place, debuginfod ...)
    modules: tuple[tuple[str, str], ...] = ()  # (module name, absolute path of its uncompressed debug file)
    sources: tuple[tuple[str, str], ...] = ()  # (source path in the debug info, the local file: --source-dir)
    # Copies found via --source-dir that are not the source the kernel was built from, never cited in the debug
    # info's place: (source path in the debug info, the local file, why: "line 156 lies in kf_setup_device() ...").
    unused_sources: tuple[tuple[str, str, str], ...] = ()
    # The installed crash's version (``crash --version``), which decides whether the follow-up's crash opens the dump.
    crash_version: tuple[int, ...] | NotAvailable = field(default=NotAvailable("crash's version not read"))

    def crash_parts(self) -> tuple[str, ...] | NotAvailable:
        """The shell command that opens the dump in crash, in parts (joined by spaces, or line continuations)."""

        if isinstance(self.vmlinux, NotAvailable):
            return self.vmlinux
        return (f"crash -s {shell_word(self.vmlinux)}", shell_word(self.dump))

    def crash_setup(self) -> tuple[str, ...]:
        """The crash commands that load the modules' debug info (crash does not find them itself)."""

        return tuple(f"mod -s {name} {shell_word(path)}" for name, path in self.modules)

    def drgn_parts(self) -> tuple[str, ...] | NotAvailable:
        """The shell command that opens the dump in drgn with the same debug info, in parts."""

        if isinstance(self.vmlinux, NotAvailable):
            return self.vmlinux
        files = (f"-s {shell_word(p)}" for p in (self.vmlinux, *(path for _, path in self.modules)))
        return (f"drgn -c {shell_word(self.dump)}", *files)

    def shell_parts(self) -> tuple[str, ...]:
        """``kforensic vmcore --shell`` on this dump with the same debug info, in parts."""

        vmlinux = () if isinstance(self.vmlinux, NotAvailable) else (f"--vmlinux {shell_word(self.vmlinux)}",)
        modules = tuple(f"--module-debug {shell_word(path)}" for _, path in self.modules)
        return (f"kforensic vmcore {shell_word(self.dump)}", *vmlinux, *modules, "--shell")

    def crash(self) -> str | NotAvailable:
        """The crash command line in one line."""
        parts = self.crash_parts()
        return parts if isinstance(parts, NotAvailable) else " ".join(parts)

    def drgn(self) -> str | NotAvailable:
        """The drgn command line in one line."""
        parts = self.drgn_parts()
        return parts if isinstance(parts, NotAvailable) else " ".join(parts)

    def shell(self) -> str:
        """The ``--shell`` command line in one line."""
        return " ".join(self.shell_parts())

    def local_source(self, path: str) -> str:
        """The local copy of a source file the debug info names (found via --source-dir), else the path itself."""
        return next((local for dwarf, local in self.sources if dwarf == path), path)

    def found_source(self, path: str) -> str | None:
        """Where the reader opens a source file the debug info names, when that is another file (found via
        --source-dir): relative to the working directory below it, as the directory was given, else absolute.

        The build machine's path the debug info names (``/build/kf/kf.c``) does not exist here.
        """
        import os

        local = next((local for dwarf, local in self.sources if dwarf == path), None)
        if local is None:
            return None
        try:
            shown = os.path.relpath(local)
        except ValueError:  # another drive (Windows): no relative path
            shown = local
        if shown.startswith(os.pardir):
            shown = local
        return None if shown == path else shown

    def unused_source(self, path: str) -> tuple[str, str] | None:
        """The copy of a source file found via --source-dir that is not cited (not the build's), and why."""
        return next(((local, why) for dwarf, local, why in self.unused_sources if dwarf == path), None)

    def module_file(self, name: str) -> str | None:
        """The debug file of a module, when one was loaded."""
        return next((path for module, path in self.modules if module == name), None)


@dataclass(frozen=True)
class TaskListBreak:
    """Where a walk of the list of tasks (``init_task.tasks``) stopped: a task_struct the dump lacks."""

    direction: str  # "forward" (->next) or "backward" (->prev), from init_task
    after_pid: int  # the last task the walk read before it (0: init_task itself)
    address: int  # the task_struct it could not read
    reason: str  # why the dump lacks it (page frame, what filtered it out)

    def text(self) -> str:
        return f"{self.direction} after pid {self.after_pid} at {self.address:#x} ({self.reason})"


@dataclass(frozen=True)
class TaskCensus:
    """How complete the dump's list of tasks is, and how that was found out.

    The PID table (one struct pid per pid) is the census; a struct pid the dump lacks hides its task,
    which the list of thread-group leaders (``init_task.tasks``) may give back.  A task neither gave is
    not counted: its state is unknown, and the count of tasks read is then a lower bound.
    """

    hidden: int = 0  # struct pids of the PID table the dump lacks (each hid its task)
    recovered: int = 0  # tasks the list of tasks gave among those hidden
    left_out: int = 0  # tasks found whose task_struct could not be read
    breaks: tuple[TaskListBreak, ...] = ()  # where the walks of the list of tasks stopped
    pid_table: str | None = None  # why the walk of the PID table itself stopped, when it did

    @property
    def complete(self) -> bool:
        return not (self.hidden > self.recovered or self.left_out or self.pid_table)

    def unseen(self) -> int | NotAvailable:
        """How many tasks were not read (each of their states unknown); not available when the PID table's
        own walk stopped, as then how many pids follow is unknown."""
        if self.pid_table is not None:
            return NotAvailable(f"the walk of the PID table stopped: {self.pid_table}")
        return max(0, self.hidden - self.recovered) + self.left_out

    def why_incomplete(self) -> str:
        """How the gap was detected and where the walks broke, in one sentence."""
        parts = []
        if self.hidden:
            parts.append(
                f"{self.hidden} struct pids of the PID table are not in the dump and the list of tasks "
                f"(init_task.tasks) gave back {self.recovered} of their tasks"
            )
        if self.breaks:
            # both walks usually stop on the same filtered page: its explanation is said once
            reasons = {re.sub(r" at 0x[0-9a-f]+", "", b.reason) for b in self.breaks}
            if len(reasons) == 1:
                where = " and ".join(f"{b.direction} after pid {b.after_pid} at {b.address:#x}" for b in self.breaks)
                parts.append(f"the list of tasks breaks {where} ({self.breaks[0].reason})")
            else:
                parts.append("the list of tasks breaks " + "; ".join(b.text() for b in self.breaks))
        elif self.hidden > self.recovered:
            # a whole list read: the others are threads (not on it) or pids that outlived their task
            parts.append("the list of tasks was read whole: the others are threads or pids kept after their task")
        if self.left_out:
            parts.append(f"{self.left_out} task_structs named by the PID table are not in the dump")
        if self.pid_table is not None:
            parts.append(f"the walk of the PID table stopped: {self.pid_table}")
        return "; ".join(parts)


@dataclass(frozen=True)
class CrashSnapshot:
    """Everything the adapter extracted from one dump."""

    dump_path: str
    dump_format: str
    vmlinux_path: str | NotAvailable
    kernel_release: str | NotAvailable
    build_id: str | NotAvailable
    machine: str | NotAvailable
    crash_time: float | NotAvailable  # seconds since the epoch
    uptime: float | NotAvailable  # seconds since boot at the crash
    panic_message: str | NotAvailable
    crashed_cpu: int | NotAvailable
    crashed_pid: int | NotAvailable
    crashed_comm: str | NotAvailable
    taint_mask: int | NotAvailable
    cpus: int | NotAvailable
    memory_bytes: int | NotAvailable
    backtrace: tuple[Frame, ...]
    registers: RegisterSet | NotAvailable  # of the innermost interrupted frame (the fault)
    code: CodeBytes | NotAvailable
    variables: tuple[Variable, ...]
    layouts: tuple[TypeLayout, ...]
    other_cpus: tuple[tuple[int, TaskInfo], ...]
    tasks: tuple[TaskInfo, ...]
    memory: MemoryTotals
    slab_caches: tuple[SlabCacheInfo, ...]
    modules: tuple[ModuleInfo, ...]
    log: tuple[LogRecord, ...]
    filtered: str | NotAvailable  # what makedumpfile excluded, e.g. "dump level 31: ..."
    warnings: tuple[str, ...] = field(default=())
    frame_values: tuple[FrameValues, ...] = ()  # the crash frame and its callers in kernel code
    bug_site: BugSite | NotAvailable = field(default=NotAvailable("no BUG/WARN trap in the crashed thread"))
    addresses: tuple[AddressInfo, ...] = ()  # addresses from registers, frames and the log, identified
    polled: tuple[PolledWord, ...] = ()  # words the fault function reads by fixed address
    loop: LoopSite | NotAvailable = field(default=NotAvailable("no busy-wait loop found"))
    memory_users: tuple[MemoryUser, ...] | NotAvailable = ()  # top memory users (OOM view)
    slab_objects: tuple[SlabObject, ...] = ()  # objects the addresses point into, with SLUB's tracks
    spinlock: SpinLockState | NotAvailable = field(default=NotAvailable("the crashed CPU spins on no spinlock"))
    global_locks: tuple[GlobalLock, ...] = ()  # modules' global sleeping locks that are held
    follow_up: FollowUp | NotAvailable = field(default=NotAvailable("not recorded"))  # how to go on by hand
    # The crashed kernel's sysctl_hung_task_timeout_secs (0: the detector was off); not available without
    # CONFIG_DETECT_HUNG_TASK, or where it was not read.
    hung_task_timeout: int | NotAvailable = field(default=NotAvailable("not read"))
    task_census: TaskCensus = field(default=TaskCensus())  # how complete ``tasks`` is
    # A double free's first free, where the source of the second's function shows it (None: not shown)
    earlier_free: EarlierFree | None = None
    # What a dump cut short lacks (the file's share, the page frames lost), None for a whole dump
    cut: str | None = None
    # Where the frames' symbols, offsets and sizes come from (FRAMES_FROM_KALLSYMS or FRAMES_FROM_ELF)
    frame_symbols: str = "not recorded"

    def where(self, frame: Frame) -> str | None:
        """``file:line`` of a frame as a reader opens it: the copy found via --source-dir where the debug info's
        path is the build machine's (:meth:`Frame.where` keeps that one), else the debug info's."""
        return self.cite(frame.source_file, frame.source_line)

    def cite(self, file: str | None, line: int | None) -> str | None:
        """``file:line`` of a location the debug info names, as :meth:`where` cites a frame's."""
        if file is None:
            return None
        found = None if isinstance(self.follow_up, NotAvailable) else self.follow_up.found_source(file)
        shown = shown_path(found or file)  # a newline in a --source-dir is shown escaped, not as a line break
        return f"{shown}:{line}" if line else shown

    def cite_with_origin(self, file: str | None, line: int | None) -> str | None:
        """:meth:`cite`, saying where a local copy was found and the path the debug info names (a fact's value:
        ``kf.c:446 (found via --source-dir; the debug info names /build/kf/kf.c)``), or why the copy found is not
        cited (not the source the kernel was built from)."""
        shown = self.cite(file, line)
        if file is None or isinstance(self.follow_up, NotAvailable):
            return shown
        if self.follow_up.found_source(file) is not None:
            return f"{shown} (found via --source-dir; the debug info names {shown_path(file)})"
        unused = self.follow_up.unused_source(file)
        if unused is not None:
            return f"{shown} (the copy found via --source-dir, {shown_path(unused[0])}, is not cited: {unused[1]})"
        return shown

    def layout(self, type_name: str) -> TypeLayout | None:
        """The layout of a type extracted with the snapshot, by name."""
        for layout in self.layouts:
            if layout.name == type_name:
                return layout
        return None


@dataclass(frozen=True)
class Taint:
    """The crashed kernel's taint: ``tainted_mask``, its letters in the kernel's order and what each means."""

    mask: int
    letters: str
    flags: tuple[str, ...]  # "O: externally-built (out-of-tree) module was loaded", ...


# ---------------------------------------------------------------- the fault analysis (detectors/vmcore/nullfield.py)


@dataclass(frozen=True)
class FieldRef:
    """A member of a struct: ``struct kf_sensor.ops`` at 0x18."""

    struct: str
    member: MemberInfo

    def __str__(self) -> str:
        return f"{self.struct}.{self.member.name} (offset {self.member.offset:#x}, {self.member.type_name})"


#: Below this a pointer is NULL plus an offset: nothing is ever mapped in the lowest page (x86-64, arm64).
NULL_PAGE_LIMIT = 0x1000


@dataclass(frozen=True)
class FaultAnalysis:
    """What the faulting instruction did, and which NULL field it went through (or why nothing faulted there)."""

    instruction: Instruction
    window: tuple[Instruction, ...]  # the instructions around the fault, for display
    base_register: str | None
    base_value: int | None
    displacement: int | None
    effective_address: int | None
    fault_address: int | None  # CR2 as the log reports it
    address_agrees: bool | None  # effective address == CR2
    null_expression: str | NotAvailable  # e.g. ``sensor->ops``
    null_field: FieldRef | NotAvailable  # the member that held NULL
    read_member: FieldRef | NotAvailable  # the member read through the NULL pointer
    confidence: float
    steps: tuple[str, ...]
    # Why nothing faulted at the instruction (a BUG/WARN trap, the interrupt a lockup detector took), None for a
    # fault: then there are no steps, the instruction is only where the CPU stopped.
    stopped: str | None = None

    def confidence_text(self) -> str:
        """What ``confidence`` is of: the reading of a NULL pointer the fault went through.  A base register that
        holds no NULL-page pointer leaves no such reading to weigh: the steps are then the instruction's arithmetic
        on the saved registers, and no figure is given for them."""
        if isinstance(self.null_expression, str):
            what = f"{self.null_expression} is the NULL pointer the fault read through"
            return f"Confidence {self.confidence:.2f} that {what}."
        if self.base_value is not None and self.base_value < NULL_PAGE_LIMIT:
            return (
                f"Confidence {self.confidence:.2f} that the fault read through a NULL pointer ({self.base_register} = "
                f"{self.base_value:#x}); which pointer is unknown: {self.null_expression.reason}."
            )
        return (
            f"No NULL pointer to weigh ({self.null_expression.reason}): the steps are the instruction's arithmetic on "
            "the saved registers, exact as far as the registers are; what the address held is in the Why above."
        )


@dataclass(frozen=True)
class VmcoreAnalysis:
    """detectors/vmcore's result: the dump's findings, their ranked hypotheses, the crash and culprit frames."""

    findings: tuple[Finding, ...]
    hypotheses: tuple[Hypothesis, ...]
    crash_frame: Frame | None  # where the crash happened (the exception frame, or the caller of panic)
    culprit_frame: Frame | None  # the first frame from there that is not generic infrastructure
