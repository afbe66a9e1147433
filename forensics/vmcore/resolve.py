"""Reading evidence back from a dump: resolvers for frame, register and address locators (an instruction, memory
words, a slab cache, a module's held global mutex).

They open nothing themselves: give them a drgn program on the dump (opened
independently of the analysis, so a check does not trust the analysis).
"""

from __future__ import annotations

import itertools

import drgn

from detectors.vmcore.disasm import decode
from detectors.vmcore.findings import MEMORY_WORDS, memory_excerpt, register_excerpt
from forensics.evidence import Resolver
from forensics.model import Evidence, LocatorKind
from forensics.types.vmcore import CodeBytes
from forensics.vmcore import layouts
from forensics.vmcore.extract import backtrace, fault_frame_index
from forensics.vmcore.modlocks import MAX_WAITERS


def _trace_for(prog: drgn.Program, name: str | None) -> drgn.StackTrace:
    if name and name.startswith("pid "):
        from drgn.helpers.linux.pid import find_task

        return prog.stack_trace(find_task(prog, int(name.removeprefix("pid "))))
    return prog.crashed_thread().stack_trace()


def _global_mutex(prog: drgn.Program, address: int, name: str) -> str | None:
    """How a module's held global mutex is cited (detectors/vmcore/heldlocks.py), read again at its address;
    None when ``name`` is not the variable there."""
    try:
        symbol = prog.symbol(address)
    except LookupError:
        return None
    if symbol.name != name or symbol.address != address:
        return None
    lock = drgn.Object(prog, "struct mutex", address=address)
    owner = layouts.mutex_owner(lock)
    if owner is None:
        return f"mutex {name}: free"
    waiting = 0
    try:
        for _ in itertools.islice(layouts.mutex_waiters(lock), MAX_WAITERS):
            waiting += 1
    except (drgn.FaultError, LookupError):
        pass  # counted up to where the dump (or the kernel's layout) stops the list, as the extraction does
    return f"mutex {name}: owner task_struct {owner.value_():#x}, {waiting} waiting"


def dump_resolvers(prog: drgn.Program) -> dict[LocatorKind, Resolver]:
    """Resolvers for the dump-only locator kinds used by :mod:`detectors.vmcore.findings`."""

    def frame(ev: Evidence) -> str | None:
        trace = _trace_for(prog, ev.locator.name)
        frames = backtrace(prog, trace)
        return frames[ev.locator.start].label() if ev.locator.start < len(frames) else None

    def register(ev: Evidence) -> str | None:
        trace = prog.crashed_thread().stack_trace()
        index = ev.locator.start
        if index >= len(trace) or ev.locator.name is None:
            return None
        if fault_frame_index(trace) is None and index != 0:
            return None
        value = trace[index].registers().get(ev.locator.name)
        return None if value is None else register_excerpt(ev.locator.name, value)

    def address(ev: Evidence) -> str | None:
        start = ev.locator.start
        if ev.locator.name == "struct kmem_cache":
            from drgn.helpers.linux.slab import slab_cache_usage

            cache = drgn.Object(prog, "struct kmem_cache *", start)
            usage = slab_cache_usage(cache)
            name = cache.name.string_().decode(errors="replace")
            return f"{name} {usage.active_objs} {usage.num_objs} {int(cache.object_size.value_())}"
        words = MEMORY_WORDS.fullmatch(ev.locator.name or "")
        if words is not None:  # memory words a finding states (a lock word, a list entry, an object's first words)
            width, count = int(words.group(1)) // 8, int(words.group(2) or 1)
            try:
                data = prog.read(start, width * count)
            except drgn.FaultError:
                return None
            return memory_excerpt(
                [int.from_bytes(data[k : k + width], "little") for k in range(0, len(data), width)], width
            )
        if ev.locator.name is not None:  # a module's global lock, named by its variable
            return _global_mutex(prog, start, ev.locator.name)
        try:
            data = prog.read(start, 16)
        except drgn.FaultError:
            return None
        arch = prog.platform.arch.name if prog.platform is not None else "X86_64"
        insns = decode(CodeBytes(start=start, data=data, fault_pc=start, arch=arch))
        return insns[0].text() if insns else None

    return {LocatorKind.FRAME: frame, LocatorKind.REGISTER: register, LocatorKind.ADDRESS: address}
