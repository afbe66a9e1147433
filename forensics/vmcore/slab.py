"""The slab objects a crash's addresses point into: state, SLUB's alloc/free tracks, who still points at them.

Only reads (drgn); :mod:`detectors.vmcore.slab` judges what they mean.  A track
SLUB did not keep (no ``slub_debug=U`` for the cache), a stack-depot pool the
dump lacks or a type the debug info lacks is recorded as such, never guessed.
"""

from __future__ import annotations

import contextlib

import drgn

from forensics.model import NotAvailable
from forensics.types.vmcore import AddressInfo, Frame, SlabObject, SlabTrack
from forensics.vmcore import layouts
from forensics.vmcore.extract import backtrace
from forensics.vmcore.gaps import not_in_dump

#: Objects whose tracks are read per dump (the crash touches a handful).
MAX_OBJECTS = 8
#: Module variables scanned for pointers into the objects.
MAX_MODULE_WORDS = 4096
#: Bytes of each object read whole (a free object's poison is checked for writes after the free); kmalloc-4k.
MAX_CONTENTS = 4096


def _track_base(cache: drgn.Object, start: int) -> int:
    """Where SLUB stores the tracks of the object at ``start``: ``get_track()`` in mm/slub.c.

    ``get_info_end()``: the free pointer lives behind the object when it may not
    overlap it (poisoning, RCU, a constructor), and the tracks follow it.
    """
    inuse = int(cache.inuse.value_())
    outside = int(cache.offset.value_()) >= inuse
    return start + inuse + (8 if outside else 0)


def _stack(prog: drgn.Program, track: drgn.Object) -> tuple[tuple[Frame, ...], str | None]:
    try:
        handle = track.handle
    except AttributeError:
        # Before Linux 5.19 (commit 788691464c29 "mm/slub: use stackdepot to save stack trace in
        # objects") the track held the return addresses itself, zero-terminated.
        try:
            pcs = [int(a) for a in track.addrs.value_() if a]
        except AttributeError:
            return (), "struct track holds no stack (CONFIG_STACKTRACE off)"
        return tuple(backtrace(prog, prog.stack_trace_from_pcs(pcs))), None
    try:
        record = layouts.depot_stack(prog, int(handle.value_()))
    except drgn.FaultError as exc:
        return (), f"stack depot record {not_in_dump(exc, 'the stack depot record')}"
    if isinstance(record, NotAvailable):
        return (), record.reason
    return tuple(backtrace(prog, prog.stack_trace_from_pcs(list(record.pcs)))), None


def allocation_state(prog: drgn.Program, info: object) -> bool | None:
    """Whether a slab object is allocated (True), free (False) or unknown (None).

    drgn walks the slab's free lists; a list that runs through a page the dump lacks ends its walk
    (then drgn says None).  The heads of the lists live in metadata the dump keeps — struct slab's
    freelist and each CPU's kmem_cache_cpu.freelist for the slab it works on — so an object at a head
    is still known to be free.
    """
    from drgn.helpers.linux.cpumask import for_each_online_cpu
    from drgn.helpers.linux.percpu import per_cpu_ptr

    allocated = getattr(info, "allocated", None)
    if allocated is not None:
        return bool(allocated)
    start, slab, cache = int(info.address), info.slab, info.slab_cache  # type: ignore[attr-defined]
    with contextlib.suppress(LookupError, AttributeError, drgn.FaultError):
        if int(slab.freelist.value_()) == start:
            return False
    # kmem_cache_cpu names its slab by struct slab since v5.17 (commit "mm/slub: Convert
    # most struct page to struct slab by spatch"), by struct page before.
    member = "slab" if layouts.has_member(prog, "struct kmem_cache_cpu", "slab") else "page"
    with contextlib.suppress(LookupError, AttributeError, drgn.FaultError):
        for cpu in for_each_online_cpu(prog):
            c = per_cpu_ptr(cache.cpu_slab, cpu)
            if int(c.member_(member).value_()) == int(slab.value_()) and int(c.freelist.value_()) == start:
                return False
    return None


def _caller(prog: drgn.Program, address: int) -> str | None:
    if not address:
        return None
    try:
        sym = prog.symbol(address)
    except LookupError:
        return f"{address:#x}"
    return f"{sym.name}+{address - sym.address:#x}"


def cache_flags(prog: drgn.Program, cache: drgn.Object) -> tuple[bool | None, bool | None, str | None]:
    """Whether the cache keeps alloc/free tracks (SLAB_STORE_USER) and poisons free objects (SLAB_POISON).

    None for a flag whose bit this kernel's debug info does not give, with the reason.
    """
    flags = int(cache.flags.value_())
    out: list[bool | None] = []
    why = None
    for name in ("SLAB_STORE_USER", "SLAB_POISON"):
        bit = layouts.slab_flag(prog, name)
        if isinstance(bit, NotAvailable):
            out.append(None)
            why = why or bit.reason
        else:
            out.append(bool(flags & bit))
    return out[0], out[1], why


def _room_for_tracks(prog: drgn.Program, cache: drgn.Object, size: int) -> bool:
    """Whether the cache's object layout leaves room for two tracks behind the object's metadata."""
    end = _track_base(cache, 0) + 2 * size
    return int(cache.size.value_()) >= end


def read_tracks(prog: drgn.Program, cache: drgn.Object, start: int) -> tuple[tuple[SlabTrack, ...], str | None]:
    """The alloc and free tracks of an object, or why there are none."""
    name = cache.name.string_().decode(errors="replace")
    store_user, _poison, why = cache_flags(prog, cache)
    try:
        track_type = prog.type("struct track")
    except LookupError:
        track_type = None
    if store_user is None:
        return (), f"not read: whether cache {name} keeps alloc/free tracks is {why}"
    if not store_user:
        return (), (
            f"not recorded: cache {name} keeps no alloc/free tracks (slub_debug=U was off for it; "
            f"boot with slub_debug=FZPU,{name} to record them)"
        )
    if track_type is None:
        return (), "struct track is not in the kernel's debug info"
    size = drgn.sizeof(track_type)
    if not _room_for_tracks(prog, cache, size):
        # The flag says tracks are kept but the object layout has no room for them: the flag bit
        # read does not mean SLAB_STORE_USER on this kernel; nothing is read from the guess.
        return (), (
            f"not read: cache {name}'s flags say it keeps tracks but its objects ({int(cache.size.value_())} "
            f"bytes) leave no room for two struct track ({size} bytes each): the flag bit is unknown on this kernel"
        )
    base = _track_base(cache, start)
    out = []
    for kind in ("alloc", "free"):
        index = layouts.track_index(prog, kind)
        if isinstance(index, NotAvailable):
            out.append(SlabTrack(kind, None, None, None, None, missing=index.reason))
            continue
        track = drgn.Object(prog, track_type, address=base + index * size)
        try:
            addr = int(track.addr.value_())
            pid, cpu, when = int(track.pid.value_()), int(track.cpu.value_()), int(track.when.value_())
        except drgn.FaultError as exc:
            what = f"the {kind} track of the {name} object {start:#x}"
            out.append(SlabTrack(kind, None, None, None, None, missing=f"track {not_in_dump(exc, what)}"))
            continue
        if not addr:
            out.append(SlabTrack(kind, None, None, None, None, missing=f"no {kind} recorded for this object yet"))
            continue
        frames, missing = _stack(prog, track)
        out.append(SlabTrack(kind, _caller(prog, addr), pid, cpu, when, frames, missing))
    return tuple(out), None


def _module_words(prog: drgn.Program, symbols: tuple[drgn.Symbol, ...]) -> list[tuple[str, int]]:
    """(name, value) of the modules' pointer-sized variables."""
    out = []
    for sym in symbols:
        if sym.kind != drgn.SymbolKind.OBJECT or sym.size != 8:
            continue
        with contextlib.suppress(drgn.FaultError):
            out.append((sym.name, prog.read_u64(sym.address)))
        if len(out) >= MAX_MODULE_WORDS:
            break
    return out


def slab_objects(
    prog: drgn.Program, addresses: tuple[AddressInfo, ...], module_symbols: tuple[drgn.Symbol, ...]
) -> tuple[SlabObject, ...]:
    """Every slab object the crash's addresses point into, with its tracks and the module variables naming it."""
    from drgn.helpers.linux.slab import slab_object_info

    seen: dict[int, list[AddressInfo]] = {}
    for a in addresses:
        if a.kind == "slab" and a.object_start is not None:
            seen.setdefault(a.object_start, []).append(a)
    words: list[tuple[str, int]] | None = None
    out = []
    for start, infos in list(seen.items())[:MAX_OBJECTS]:
        try:
            info = slab_object_info(prog, start)
        except (LookupError, ValueError, drgn.FaultError, TypeError):
            info = None
        if info is None:
            continue
        cache = info.slab_cache
        first = infos[0]
        tracks, why = read_tracks(prog, cache, start)
        if words is None:
            words = _module_words(prog, module_symbols)
        size = first.object_size or int(cache.object_size.value_())
        holders = tuple(name for name, value in words if start <= value < start + size)
        store_user, poisoned, _why = cache_flags(prog, cache)
        try:  # the whole object: a free one's poison shows what was written after the free
            contents = prog.read(start, min(size, MAX_CONTENTS))
        except drgn.FaultError:
            contents = b""
        out.append(
            SlabObject(
                start, str(first.cache), first.cache_aliases, size, allocation_state(prog, info),
                bool(store_user), bool(poisoned), tracks, why, holders,
                tuple(a.origin for a in infos), next((a.missing for a in infos if a.missing), None), contents,
            )
        )  # fmt: skip
    return tuple(out)
