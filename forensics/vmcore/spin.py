"""The spinlock a lockup's CPU spins on: its address, symbol, lock word, owner and who takes it.

Only reads (drgn); :mod:`detectors.vmcore.locks` judges it.  Without
CONFIG_DEBUG_SPINLOCK a qspinlock records no owner: that is said, not guessed.
"""

from __future__ import annotations

import contextlib

import drgn

from forensics.model import NotAvailable
from forensics.types.vmcore import CodeBytes, Frame, SpinLockState
from forensics.vmcore import layouts
from forensics.vmcore.gaps import not_in_dump

#: Functions of a module scanned for references to the lock (a small module has a few dozen).
MAX_FUNCTIONS = 400


def _spin_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The spinlock function the interrupted frame of a lockup runs in (inlined cpu_relax() skipped)."""
    from detectors.vmcore.findings import KEXEC_PATH, SPIN_FUNCTIONS, physical_frame

    for frame in frames:
        if frame.interrupted and isinstance(frame.function, str) and not frame.function.startswith(KEXEC_PATH):
            real = physical_frame(frames, frame)
            return real if real.function in SPIN_FUNCTIONS else None
    return None


def _symbol(prog: drgn.Program, address: int) -> str | None:
    try:
        sym = prog.symbol(address)
    except LookupError:
        return None
    return f"{sym.name}+{address - sym.address:#x}"


def _takers(
    prog: drgn.Program, address: int, frames: tuple[Frame, ...], symbols: tuple[drgn.Symbol, ...]
) -> tuple[str, ...]:
    """Functions of the spinner's module whose code names the lock's address (they take or release it)."""
    from detectors.vmcore.disasm import addresses_named

    module = next((f.module for f in frames if f.module), None)
    if module is None:
        return ()
    arch = prog.platform.arch.name if prog.platform is not None else "X86_64"
    out = []
    for sym in symbols[:MAX_FUNCTIONS]:
        if sym.kind != drgn.SymbolKind.FUNC or not sym.size:
            continue
        with contextlib.suppress(LookupError):
            if prog.module(sym.address).name != module:
                continue
        try:
            data = prog.read(sym.address, sym.size)
        except drgn.FaultError:
            continue
        if address in addresses_named(CodeBytes(sym.address, data, sym.address, arch)):
            out.append(sym.name)
    return tuple(sorted(set(out)))


def spinlock_state(
    prog: drgn.Program,
    trace: drgn.StackTrace,
    frames: tuple[Frame, ...],
    module_symbols: tuple[drgn.Symbol, ...],
) -> SpinLockState | NotAvailable:
    """The lock the crashed CPU spins on, when a lockup caught it in a spinlock function."""
    frame = _spin_frame(frames)
    if frame is None:
        return NotAvailable("the interrupted frame is not a spinlock function")
    found_via = f"lock (frame #{frame.index} {frame.function})"
    address: int | None = None
    with contextlib.suppress(KeyError, LookupError):
        lock = trace[frame.index]["lock"]
        if not lock.absent_:
            address = int(lock.value_())
    if address is None:
        # The lock argument has no DWARF location here: the spin loop polls it through rdi, the
        # register the slowpath keeps its argument in (arch/x86 qspinlock: the first argument).
        with contextlib.suppress(LookupError):
            address = int(trace[frame.index].register("rdi"))
            found_via = f"rdi (frame #{frame.index} {frame.function}: the lock argument is optimized out)"
    if address is None:
        return NotAvailable(f"the lock {frame.function} spins on is optimized out and no register holds it")
    symbol = _symbol(prog, address)
    try:
        word: int | None = prog.read_u32(address)
        missing = None
    except drgn.FaultError as exc:
        word, missing = None, f"lock word {not_in_dump(exc, 'the lock word')}"
    owner = owner_cpu = owner_cpu_missing = None
    with contextlib.suppress(LookupError, AttributeError, drgn.FaultError):
        # CONFIG_DEBUG_SPINLOCK adds owner and owner_cpu to raw_spinlock_t; without it there are none.
        raw = drgn.Object(prog, "raw_spinlock_t", address=address)
        task = raw.owner
        try:
            owner_cpu = int(raw.owner_cpu.value_())
        except drgn.FaultError as exc:  # the owner is still named when its task_struct is in the dump
            owner_cpu_missing = f"owner_cpu {not_in_dump(exc, 'the lock')}"
        if int(task.value_()) not in (0, 0xFFFFFFFFFFFFFFFF):
            task = drgn.cast("struct task_struct *", task)
            owner = f"{task.comm.string_().decode(errors='replace')} (pid {int(task.pid.value_())})"
    layout = layouts.qspinlock_layout(prog)
    if isinstance(layout, NotAvailable):
        missing = missing or f"lock word not decoded: {layout.reason}"
        shifts: tuple[int | None, int, int | None] = (None, 8, None)
    else:
        shifts = (layout.pending_shift, layout.pending_bits, layout.tail_cpu_shift)
    return SpinLockState(
        address, symbol, found_via, word, owner, owner_cpu, _takers(prog, address, frames, module_symbols), missing,
        *shifts, owner_cpu_missing=owner_cpu_missing,
    )  # fmt: skip
