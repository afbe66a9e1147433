"""Everything that differs between kernel versions, read from the dumped kernel's own debug info.

The analysis never assumes a flag bit, an enumerator, a member or an encoding of one kernel
version: it asks here.  Each read tries the layout of the kernel that dumped (a constant, an
enumerator, a member and its offset, the type of a member) and falls back to the older layout
only when the kernel's debug info shows it is that older one (EAFP, with a comment naming the
kernel commit that changed it).  When the debug info cannot tell, the answer is a
:class:`~forensics.model.NotAvailable` that reads "unknown on this kernel (why)" — a confident
statement is only ever made from a value read.

What differs, and where it is read:

* slab cache flags (``SLAB_POISON``, ``SLAB_STORE_USER``): bits of ``enum _slab_flag_bits`` since v6.9,
  fixed macros before (:func:`slab_flag`);
* SLUB's track order (``enum track_item``) and the track's stack: a stack depot handle since v5.19,
  return addresses in the track before (:func:`track_index`, :func:`depot_stack`);
* stack depot handles (``union handle_parts``): the pool index field renamed in v6.3, offset by one
  since v6.9; every decoded record is checked against the handle it stores (:func:`depot_stack`);
* mutex and rw-semaphore owners: tagged ``atomic_long_t`` words since v4.10 / v5.3, a reader-owned
  rwsem names only its last reader (:func:`mutex_owner`, :func:`rwsem_owner`); a mutex's waiters
  (:func:`mutex_waiters`: a list, not PREEMPT_RT's tree);
* the qspinlock word: where the pending bit and the queue tail lie (:func:`qspinlock_layout`);
* vmalloc areas: one list before v6.9, per-node lists since (:func:`vmap_areas`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import drgn

from forensics.model import NotAvailable
from forensics.types.release import release_version as version_of


def unknown(what: str, why: str) -> NotAvailable:
    """The typed answer for a read this kernel's debug info cannot settle."""
    return NotAvailable(f"{what}: {unknown_read(why).reason}")


def unknown_read(why: str) -> NotAvailable:
    """:func:`unknown` for a record's field, whose name the record's reader says (``its done count not read:
    unknown on this kernel (why)``)."""
    return NotAvailable(f"unknown on this kernel ({why})")


def release_version(prog: drgn.Program) -> tuple[int, int] | None:
    """``(major, minor)`` of the dumped kernel's ``uname -r``, None when the dump does not say."""
    try:
        release = prog["init_uts_ns"].name.release.string_().decode(errors="replace")
    except (LookupError, drgn.FaultError):
        return None
    return version_of(release)


def has_member(prog: drgn.Program, type_name: str, member: str) -> bool:
    """Whether the kernel's ``type_name`` has ``member`` (False when the type itself is unknown)."""
    try:
        return bool(prog.type(type_name).has_member(member))
    except LookupError:
        return False


def _constant(prog: drgn.Program, name: str) -> int | None:
    try:
        return int(prog.constant(name).value_())
    except LookupError:
        return None


# ---------------------------------------------------------------- slab flags

#: The SLAB_* cache flags as the macros of include/linux/slab.h defined them before v6.9 (unchanged
#: since v2.6.x).  They are macros, which DWARF does not record, so these values are used only for a
#: kernel older than v6.9 — one whose debug info lacks ``enum _slab_flag_bits`` for that reason.
LEGACY_SLAB_FLAGS = {
    "SLAB_CONSISTENCY_CHECKS": 0x00000100,
    "SLAB_RED_ZONE": 0x00000400,
    "SLAB_POISON": 0x00000800,
    "SLAB_STORE_USER": 0x00010000,
    "SLAB_TYPESAFE_BY_RCU": 0x00080000,
}
#: The first release whose slab flags are bits numbered by ``enum _slab_flag_bits``.
SLAB_FLAG_ENUM_SINCE = (6, 9)


def slab_flag(prog: drgn.Program, name: str) -> int | NotAvailable:
    """The value of a ``SLAB_*`` cache flag (``SLAB_STORE_USER``, ``SLAB_POISON``, ...) on this kernel."""
    # Since v6.9 (commit "mm, slab: use an enum to define SLAB_ cache creation flags") each flag is
    # 1 << _<NAME>, an enumerator of enum _slab_flag_bits whose values depend on the configuration
    # (6.12 moved SLAB_STORE_USER from 0x10000 to another bit): read the enumerator.
    bit = _constant(prog, f"_{name}")
    if bit is not None:
        return 1 << bit
    version = release_version(prog)
    if version is None:
        return unknown(f"{name}'s bit", "no enum _slab_flag_bits in the debug info and no kernel release to date it")
    if version >= SLAB_FLAG_ENUM_SINCE:
        return unknown(
            f"{name}'s bit",
            f"Linux {version[0]}.{version[1]} numbers the slab flags by enum _slab_flag_bits, which its debug "
            "info lacks",
        )
    if name not in LEGACY_SLAB_FLAGS:
        return unknown(f"{name}'s bit", f"a macro before v6.9 that kforensic does not know ({name})")
    return LEGACY_SLAB_FLAGS[name]


def track_index(prog: drgn.Program, kind: str) -> int | NotAvailable:
    """The index of SLUB's ``alloc`` or ``free`` track behind an object (``enum track_item``)."""
    # enum track_item { TRACK_ALLOC, TRACK_FREE } has been in mm/slub.c since SLUB came (v2.6.22).
    value = _constant(prog, f"TRACK_{kind.upper()}")
    if value is None:
        return unknown(f"the {kind} track's place", "no enum track_item in the debug info")
    return value


# ---------------------------------------------------------------- stack depot

#: Records start at multiples of 1 << DEPOT_STACK_ALIGN in a pool: 4 since the stack depot came
#: (v4.6, commit cd11016e5f52 "mm, kasan: stackdepot implementation", then STACK_ALLOC_ALIGN).
#: A macro; every record found through it is checked against the handle it stores.
DEPOT_STACK_ALIGN = 4


@dataclass(frozen=True)
class DepotRecord:
    """The stack a depot handle names, or why it cannot be read."""

    pcs: tuple[int, ...]
    pool: int  # the pool index the handle decodes to
    record: int  # address of the struct stack_record


def _depot_pools(prog: drgn.Program) -> tuple[drgn.Object, str]:
    # Renamed in commit 961c949b012f ("lib/stackdepot: rename slab to pool") (v6.3).
    for name in ("stack_pools", "stack_slabs"):
        try:
            return prog[name], name
        except KeyError:
            continue
    raise LookupError("neither stack_pools nor stack_slabs")


def _depot_pool_count(prog: drgn.Program) -> int | None:
    """How many pools the depot has filled: ``pools_num`` (v6.8+), ``pool_index`` (v6.3-v6.7), ``depot_index``."""
    # pools_num counts the pools; pool_index and, before v6.3, depot_index are the index of the
    # last one (lib/stackdepot.c's own bound checks in stack_depot_fetch() read them so).
    for name, plus in (("pools_num", 0), ("pool_index", 1), ("depot_index", 1)):
        try:
            return int(prog[name].value_()) + plus
        except (KeyError, drgn.FaultError):
            continue
    return None


def _handle_fields(parts: drgn.Object) -> list[tuple[int, str]]:
    """The pool indexes a handle may mean on this kernel: [(index, how it was read)]."""
    # pool_index_plus_1 since commit a6c1d9cb9a68 ("stackdepot: rename pool_index to pool_index_plus_1")
    # (v6.9; commit 3ee34eabac2a "lib/stackdepot: fix first entry having a 0-handle" made the index
    # 1-based under the old name in v6.9-rc1 and 6.8.3): both readings of "pool_index" are tried and
    # the record's own handle decides.
    for member, shifts in (("pool_index_plus_1", (1,)), ("pool_index", (0, 1)), ("slabindex", (0,))):
        try:
            raw = int(parts.member_(member).value_())
        except LookupError:
            continue
        return [(raw - shift, f"{member} - {shift}" if shift else member) for shift in shifts]
    return []


def _same_record(parts: drgn.Object, stored: drgn.Object) -> bool:
    """Whether a record's stored handle names the same pool and offset as the handle looked up.

    The bitfields are compared one by one, all but ``extra`` (v6.3: bits a caller may set in its
    copy of a handle, never stored in the record).
    """
    compared = 0
    for field in ("pool_index_plus_1", "pool_index", "slabindex", "offset", "valid"):
        try:
            mine, theirs = int(parts.member_(field).value_()), int(stored.member_(field).value_())
        except LookupError:
            continue
        if mine != theirs:
            return False
        compared += 1
    return compared >= 2


def depot_stack(prog: drgn.Program, handle: int) -> DepotRecord | NotAvailable:
    """The return addresses the stack depot keeps for ``handle``, checked against the record's own handle.

    Raises :class:`drgn.FaultError` when the pool or the record is not in the dump (the caller says so).
    """
    if not handle:
        return NotAvailable("no stack saved (a depot handle of 0: the stack depot was full or not initialised)")
    try:
        parts = drgn.Object(prog, "union handle_parts", value={"handle": handle})
    except (LookupError, TypeError, ValueError) as exc:
        return unknown("the stack depot handle encoding", f"union handle_parts: {exc}")
    try:
        pools, pools_name = _depot_pools(prog)
    except LookupError as exc:
        return unknown("the stack depot", str(exc))
    count = _depot_pool_count(prog)
    readings = _handle_fields(parts)
    if not readings:
        return unknown("the stack depot handle encoding", "union handle_parts has no pool index field kforensic knows")
    offset = int(parts.offset.value_())
    tried = []
    for index, how in readings:
        if index < 0 or (count is not None and index >= count):
            tried.append(f"{how} = {index}: no such pool ({count} filled)")
            continue
        pool = int(pools[index].value_())
        if not pool:
            tried.append(f"{how} = {index}: {pools_name}[{index}] is NULL")
            continue
        address = pool + (offset << DEPOT_STACK_ALIGN)
        record = drgn.Object(prog, "struct stack_record", address=address)
        if not _same_record(parts, record.handle):
            tried.append(f"{how} = {index}: the record there stores another handle")
            continue
        size = int(record.size.value_())
        capacity = len(record.entries) if record.entries.type_.length else size
        pcs = tuple(int(record.entries[i].value_()) for i in range(min(size, capacity)))
        return DepotRecord(pcs, index, address)
    return NotAvailable(f"the stack depot has no record for handle {handle:#x} ({'; '.join(tried)})")


# ---------------------------------------------------------------- loadable modules


def module_ranges(module: drgn.Object) -> list[tuple[int, int]]:
    """The [start, end) ranges of a ``struct module``'s memory: ``mem[]`` since commit ac3b43283923
    ("module: replace module_layout with module_memory", v6.4), ``core_layout``/``init_layout`` before."""
    try:
        regions = [module.mem[i] for i in range(len(module.mem))]
    except (LookupError, AttributeError, TypeError):
        regions = [module.core_layout, module.init_layout]
    out = []
    for region in regions:
        base, size = int(region.base.value_()), int(region.size.value_())
        if base and size:
            out.append((base, base + size))
    return out


# ---------------------------------------------------------------- the crashed CPU's registers

#: ELF note type of a prstatus (the registers of a CPU at the crash).
NT_PRSTATUS = 1


def panic_cpu(prog: drgn.Program) -> int | NotAvailable:
    """The CPU that panicked or entered kdump: ``panic_cpu``, an ``atomic_t`` since commit 1717f2096b54
    ("panic, x86: Fix re-entrance problem due to panic on NMI", v4.5); crash_kexec() sets it too."""
    try:
        value = int(prog["panic_cpu"].counter.value_())
    except (LookupError, AttributeError) as exc:
        return unknown("the crashed CPU", f"no atomic_t panic_cpu ({exc})")
    if value < 0:
        return NotAvailable("the crashed CPU: panic_cpu is not set (no CPU panicked or entered kdump)")
    return value


#: The x86-64 NT_PRSTATUS gregset up to ``ss`` (``struct user_regs_struct``'s order; the core file ABI).
_X86_64_GREGS = ("r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx", "si", "di",
                 "orig_ax", "ip", "cs", "flags", "sp", "ss")  # fmt: skip


def crash_registers(prog: drgn.Program, cpu: int) -> drgn.Object | NotAvailable:
    """The registers crash_save_cpu() stored for ``cpu`` as a ``struct pt_regs``, read from the kernel's memory.

    The kernel writes each CPU's registers at the crash into the per-CPU ``crash_notes`` buffer as an
    ELF note (``NT_PRSTATUS``, name ``CORE``) whose ``struct elf_prstatus.pr_reg`` is the
    ``elf_gregset_t`` of ``struct user_regs_struct``.  Per-CPU memory is no slab page: a filtered dump
    keeps it where it lost the task_struct.  The gregset is taken as a pt_regs only when every member
    ``struct pt_regs`` names lies at the offset ``struct user_regs_struct`` gives it (x86-64: the first
    21 words are the same; elf_core_copy_regs() copies them in order).
    """
    from drgn.helpers.linux.percpu import per_cpu_ptr

    try:
        note = int(per_cpu_ptr(prog["crash_notes"], cpu).value_())
        prstatus = prog.type("struct elf_prstatus")
        regs = prog.type("struct pt_regs")
        offset = next(m.offset for m in prstatus.members if m.name == "pr_reg")
    except (LookupError, StopIteration) as exc:
        return unknown("the crashed CPU's saved registers", f"no crash_notes or prstatus layout ({exc})")
    try:
        user = {m.name: m.bit_offset for m in prog.type("struct user_regs_struct").members if m.name}
    except LookupError:
        # A kernel built without ptrace's users of it has no user_regs_struct in its DWARF; the gregset's
        # order is the core file ABI (what gdb reads), fixed per architecture.
        if prog.platform is None or prog.platform.arch != drgn.Architecture.X86_64:
            return unknown("the crashed CPU's saved registers", "no struct user_regs_struct to lay them out")
        user = {name: 64 * i for i, name in enumerate(_X86_64_GREGS)}
    if any(m.name and user.get(m.name) != m.bit_offset for m in regs.members):
        return unknown("the crashed CPU's saved registers", "struct pt_regs is not laid out as user_regs_struct")
    head = prog.read(note, 12)
    namesz, _descsz, kind = struct.unpack_from("<III", head)
    name = prog.read(note + 12, namesz)
    if kind != NT_PRSTATUS or name.rstrip(b"\0") != b"CORE":
        return NotAvailable(f"CPU {cpu}'s crash note holds no registers (note type {kind}): it did not save them")
    desc = note + 12 + ((namesz + 3) & ~3)
    return drgn.Object.from_bytes_(prog, regs, prog.read(desc + offset, int(regs.size or 0)))


# ---------------------------------------------------------------- sleeping locks

#: The low bits of struct mutex::owner that are flags, not the owner: MUTEX_FLAGS (0x07) since commit
#: 3ca0ff571b09 ("locking/mutex: Rework mutex::owner") (v4.10); the task_struct alignment keeps them free.
MUTEX_FLAGS = 0x07
#: The flag bits of rw_semaphore::owner below the task pointer: at most the low three (0x7 from v5.3 to
#: v5.10, 0x3 since commit 617f3ef95177 "locking/rwsem: Remove reader optimistic spinning" (v5.11)).
RWSEM_OWNER_FLAGS = 0x07


def _owner_word(lock: drgn.Object) -> int:
    owner = lock.owner
    # atomic_long_t since v4.10 (mutex) / commit 94a9717b3c40 ("locking/rwsem: Make rwsem->owner an
    # atomic_long_t") (v5.3); a plain task pointer before.
    if owner.type_.unaliased_kind() == drgn.TypeKind.POINTER:
        return int(owner.value_())
    return int(owner.counter.value_())


def mutex_owner(lock: drgn.Object) -> drgn.Object | None:
    """The task holding a ``struct mutex`` (``lock`` a pointer or the struct), None when it is free."""
    lock = lock[0] if lock.type_.unaliased_kind() == drgn.TypeKind.POINTER else lock
    word = _owner_word(lock)
    if lock.owner.type_.unaliased_kind() != drgn.TypeKind.POINTER:
        word &= ~MUTEX_FLAGS
    return drgn.Object(lock.prog_, "struct task_struct *", word) if word else None


def mutex_waiters(lock: drgn.Object) -> Iterator[drgn.Object]:
    """The ``struct mutex_waiter`` entries of a mutex's wait list, in queue order (each on its task's stack).

    ``wait_list`` of ``struct mutex_waiter`` (``list``, ``task``) on every kernel with the owner word
    (v4.10+).  On PREEMPT_RT a mutex is an rt_mutex (commit bb630f9f7a7d "locking/rtmutex: Add mutex
    variant for RT", v5.15), whose waiters sit in a tree instead: LookupError, the caller says so.
    """
    from drgn.helpers.linux.list import list_for_each_entry

    lock = lock[0] if lock.type_.unaliased_kind() == drgn.TypeKind.POINTER else lock
    head = lock.member_("wait_list").address_of_()
    lock.prog_.type("struct mutex_waiter").member("task")
    return list_for_each_entry("struct mutex_waiter", head, "list")


def thread_size(prog: drgn.Program) -> int | None:
    """THREAD_SIZE, the size (and alignment) of a kernel stack (x86-64: 16 KiB, 32 KiB with KASAN).

    A macro, so not in the debug info; what it sizes is: ``union thread_union`` when a unit uses it,
    else the init task's stack between the linker symbols that bound it (``INIT_TASK_DATA`` places
    ``__end_init_stack`` THREAD_SIZE after ``__start_init_stack``; ``__end_init_task`` after
    ``init_thread_union`` before the symbols' rename to "init_stack" in the v6.x linker scripts).
    None when neither is there.
    """
    try:
        return int(prog.type("union thread_union").size or 0) or None
    except LookupError:
        pass
    for start, end in (("__start_init_stack", "__end_init_stack"), ("init_thread_union", "__end_init_task")):
        try:
            size = int(prog.symbol(end).address) - int(prog.symbol(start).address)
        except LookupError:
            continue
        if size > 0 and size & (size - 1) == 0:
            return size
    return None


@dataclass(frozen=True)
class RwsemOwner:
    """Who holds a rw-semaphore: nobody, a writer (``task``), or readers (no owner: see below)."""

    held: bool
    task: drgn.Object | None  # the writer; None when free or read-held
    readers: bool


def rwsem_owner(sem: drgn.Object) -> RwsemOwner:
    """Who holds a ``struct rw_semaphore``: its count says whether and how it is held, the owner word who.

    A read-held rwsem names only its last reader in the owner word, and keeps that name after
    the reader left (for debugging): no owner is taken from it, and a free rwsem is free whatever
    the owner word still says.
    """
    from drgn.helpers.linux.locking import RwsemLocked, rwsem_locked

    pointer = sem if sem.type_.unaliased_kind() == drgn.TypeKind.POINTER else sem.address_of_()
    # drgn reads the count the way the kernel of the dump encodes it (RWSEM_WRITER_LOCKED since
    # commit 64489e78004c "locking/rwsem: Implement a new locking scheme" (v5.3)).
    state = rwsem_locked(pointer)
    if state == RwsemLocked.UNLOCKED:
        return RwsemOwner(False, None, False)
    if state == RwsemLocked.READ_LOCKED:
        return RwsemOwner(True, None, True)
    task = _owner_word(pointer[0]) & ~RWSEM_OWNER_FLAGS
    return RwsemOwner(True, drgn.Object(sem.prog_, "struct task_struct *", task) if task else None, False)


# ---------------------------------------------------------------- qspinlock


@dataclass(frozen=True)
class QspinlockLayout:
    """Where the fields of a qspinlock word lie: the locked byte, the pending bit(s), the queue tail."""

    pending_shift: int
    pending_bits: int
    tail_cpu_shift: int  # the tail holds cpu + 1 from this bit on (two bits of per-CPU node index below)


#: _Q_TAIL_IDX_BITS: two bits of MCS node index (task, softirq, hardirq, NMI) below the tail CPU,
#: unchanged since queued spinlocks came (v4.2, commit a33fda35e3a7 "locking/qspinlock: Introduce a
#: simple generic 4-byte queued spinlock").  A macro.
Q_TAIL_IDX_BITS = 2


def qspinlock_layout(prog: drgn.Program) -> QspinlockLayout | NotAvailable:
    """The qspinlock word layout of this kernel, from struct qspinlock and the size of a cpumask.

    The pending field is a whole byte (bits 8-15) unless NR_CPUS >= 16K (then one bit, and the tail
    starts at bit 9): the length of ``struct cpumask``'s bit array says how large NR_CPUS is.
    """
    try:
        lock = prog.type("struct qspinlock")
        bits = prog.type("struct cpumask").member("bits").type
    except LookupError as exc:
        return unknown("the qspinlock layout", str(exc))
    if not lock.has_member("pending"):
        return unknown("the qspinlock layout", "struct qspinlock has no pending field")
    if bits.length is None:
        return unknown("the qspinlock layout", "struct cpumask's bit array has no length (NR_CPUS)")
    nr_cpus = bits.length * 8 * drgn.sizeof(bits.type)
    pending_shift = lock.member("pending").offset * 8
    pending_bits = 8 if nr_cpus < 1 << 14 else 1
    return QspinlockLayout(pending_shift, pending_bits, pending_shift + pending_bits + Q_TAIL_IDX_BITS)


# ---------------------------------------------------------------- vmalloc


def vmap_areas(prog: drgn.Program) -> Iterator[drgn.Object]:
    """Every ``struct vmap_area`` (raises LookupError when this kernel keeps them in a way drgn does not know)."""
    # drgn's helper knows both layouts: one vmap_area_list before commit d093602919ad ("mm: vmalloc:
    # remove global vmap_area_root rb-tree") (v6.9), per-node busy lists (vmap_nodes) since.
    from drgn.helpers.linux.mm import for_each_vmap_area

    try:
        yield from for_each_vmap_area(prog)
    except KeyError as exc:
        raise LookupError(f"neither vmap_nodes nor vmap_area_list ({exc})") from None
