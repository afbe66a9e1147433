"""The crashing thread from a dump: backtrace, registers, code bytes, variables, type layouts."""

from __future__ import annotations

import contextlib

import drgn

from detectors.vmcore.findings import KEXEC_PATH
from forensics.model import NotAvailable
from forensics.types.vmcore import CodeBytes, Frame, MemberInfo, RegisterSet, TypeLayout, Variable
from forensics.vmcore.gaps import not_in_dump
from forensics.vmcore.kallsyms import kallsyms_of

#: At most this many bytes of a function are read to disassemble it.
MAX_FUNCTION_BYTES = 16384
#: Layouts are extracted two levels deep (a variable's struct, the structs its pointers point to).
MAX_LAYOUTS = 80


def _module_name(prog: drgn.Program, pc: int) -> str | None:
    try:
        module = prog.module(pc)
    except LookupError:
        return None
    name = module.name
    # drgn names the kernel image's module "kernel"; frames in vmlinux carry no [module] tag.
    return None if name in ("kernel", "vmlinux") else name


def frame_of(prog: drgn.Program, index: int, frame: drgn.StackFrame) -> Frame:
    """Convert a drgn stack frame to a plain :class:`Frame`."""
    pc = frame.pc
    name: str | NotAvailable = frame.name or NotAvailable(f"no symbol for {pc:#x}")
    offset = size = None
    symbol = None
    try:
        sym = frame.symbol()
        if frame.name is None:
            name = sym.name
        # The kernel's own name and size for the pc (kallsyms) where the dump gives them, else the ELF symbol's. A
        # return address is looked up one byte back, as drgn's symbol() and the kernel's %pB do: a call that does not
        # return ends its function, and its return address is the next function's first byte (rest_init+0xd0/0xd0,
        # not kernel_init+0x0).
        held = kallsyms_of(prog).lookup(pc - (0 if frame.interrupted else 1))
        named, start, size = (held.name, held.address, held.size) if held else (sym.name, sym.address, sym.size)
        offset = pc - start
        symbol = named if named != name else None  # an inlined call's offset is its caller's symbol's
    except LookupError:
        pass
    try:
        file, line, _column = frame.source()
    except LookupError:
        file, line = None, None
    return Frame(
        index=index,
        function=name,
        pc=pc,
        offset=offset,
        size=size,
        module=_module_name(prog, pc),
        source_file=file,
        source_line=line or None,
        inline=frame.is_inline,
        interrupted=frame.interrupted,
        symbol=symbol,
    )


def backtrace(prog: drgn.Program, trace: drgn.StackTrace) -> tuple[Frame, ...]:
    """The frames of a stack trace, up to the first that is not a kernel address.

    Past code without unwind information (a module's freed init section, say)
    the unwinder may read stack garbage such as list poison values; those
    frames are dropped.
    """
    out = []
    for i, f in enumerate(trace):
        if f.pc >> 48 != 0xFFFF:
            break
        out.append(frame_of(prog, i, f))
    return tuple(out)


def halted_at(prog: drgn.Program, top: Frame) -> int | None:
    """The address of the ``hlt`` a CPU was stopped in: the instruction that ends where the interrupted pc of its
    stack's #0 (``top``) starts, when that is a ``hlt``.  An interrupted pc is the instruction the CPU was about to
    run (exact, not a return address to step back from, as crash and perf treat it), but ``hlt`` resumes past itself:
    an idle CPU the crash's NMI stopped saved the next one's pc.  The function is decoded from its symbol's start
    (x86 instructions are not decodable backwards); None anywhere this does not show a ``hlt``."""
    from detectors.vmcore.disasm import decode

    arch = prog.platform.arch.name if prog.platform is not None else "UNKNOWN"
    if not top.interrupted or not top.offset or top.offset > MAX_FUNCTION_BYTES or arch != "X86_64":
        return None
    start = top.pc - top.offset
    try:
        data = prog.read(start, top.offset)
    except drgn.FaultError:
        return None
    instructions = decode(CodeBytes(start=start, data=data, fault_pc=top.pc, arch=arch))
    last = instructions[-1] if instructions else None
    if last is None or last.mnemonic != "hlt" or last.address + last.size != top.pc:
        return None
    return last.address


def fault_frame_index(trace: drgn.StackTrace) -> int | None:
    """The innermost frame whose registers were saved by an interrupt or exception.

    A dump taken by kdump straight from the fault has it as frame #0; one taken at
    panic time has the panic path first and the exception frame further out.
    """
    for i, frame in enumerate(trace):
        # The kexec path saves its own registers (crash_setup_regs): not the fault's.
        if frame.pc >> 48 != 0xFFFF:  # user space: the syscall entry frame, not a fault
            break
        if frame.interrupted and not (frame.name or "").startswith(KEXEC_PATH):
            return i
    return None


def registers_of(frame: drgn.StackFrame) -> RegisterSet:
    """The known registers of a frame."""
    return RegisterSet(tuple(sorted(frame.registers().items())))


def code_of(prog: drgn.Program, pc: int) -> CodeBytes | NotAvailable:
    """The bytes of the function containing ``pc``, read from the dump itself."""
    try:
        sym = prog.symbol(pc)
    except LookupError:
        return NotAvailable(f"no symbol covers the fault pc {pc:#x}")
    length = min(sym.size or 0, MAX_FUNCTION_BYTES)
    start = sym.address
    if length == 0 or pc >= start + length:
        start, length = max(sym.address, pc - 256), 320
    try:
        data = prog.read(start, length)
    except drgn.FaultError as exc:
        return NotAvailable(not_in_dump(exc))
    lines = []
    for addr in range(start, start + len(data)):
        # One look-up per instruction start would be enough; reading every byte's
        # location is cheap in drgn and avoids decoding twice.
        if addr < pc - 96 or addr > pc + 32:
            continue
        try:
            loc = prog.source_location(addr)
        except LookupError:
            continue
        if len(loc):
            lines.append((addr, loc[0].filename, loc[0].line))
    arch = prog.platform.arch.name if prog.platform is not None else "UNKNOWN"
    return CodeBytes(start=start, data=data, fault_pc=pc, arch=arch, source_lines=tuple(lines))


def pointee_name(type_: drgn.Type) -> str | None:
    """``struct foo`` for a pointer to a named struct or union, else None."""
    underlying = type_.unaliased()
    if underlying.kind != drgn.TypeKind.POINTER:
        return None
    target = underlying.type.unqualified().unaliased()
    if target.kind in (drgn.TypeKind.STRUCT, drgn.TypeKind.UNION) and target.tag:
        return f"{target.kind.name.lower()} {target.tag}"
    return None


def variables_of(trace: drgn.StackTrace, fault_index: int) -> tuple[Variable, ...]:
    """Locals and parameters of the fault frame and of the frames inlined at the same pc."""
    out: list[Variable] = []
    pc = trace[fault_index].pc
    for i in range(fault_index, len(trace)):
        frame = trace[i]
        if i > fault_index and (frame.pc != pc or not trace[i - 1].is_inline):
            break
        for name in frame.locals():
            try:
                obj = frame[name]
            except (KeyError, LookupError, drgn.FaultError):
                continue
            type_name = obj.type_.type_name()
            value: int | None = None
            if not obj.absent_:
                try:
                    kind = obj.type_.unaliased_kind()
                    if kind in (drgn.TypeKind.POINTER, drgn.TypeKind.INT, drgn.TypeKind.BOOL, drgn.TypeKind.ENUM):
                        value = int(obj.value_())
                except (drgn.FaultError, ValueError, TypeError, drgn.ObjectAbsentError):
                    value = None
            out.append(Variable(frame=i, name=name, type_name=type_name, value=value, pointee=pointee_name(obj.type_)))
    return tuple(out)


def _flatten(type_: drgn.Type, base: int, prefix: str, out: list[MemberInfo], depth: int = 0) -> None:
    for member in type_.members or ():
        offset = base + (member.bit_offset // 8)
        mtype = member.type
        try:
            size = drgn.sizeof(mtype)
        except (TypeError, ValueError):
            size = 0
        name = f"{prefix}{member.name}" if member.name else prefix.rstrip(".")
        kind = mtype.unaliased_kind()
        if member.name:
            out.append(MemberInfo(offset, size, name, mtype.type_name(), pointee_name(mtype)))
        if kind in (drgn.TypeKind.STRUCT, drgn.TypeKind.UNION) and depth < 4:
            _flatten(mtype.unaliased(), offset, f"{name}." if member.name else prefix, out, depth + 1)


def layout_of(type_: drgn.Type) -> TypeLayout:
    """The flattened layout of a struct or union type."""
    members: list[MemberInfo] = []
    _flatten(type_, 0, "", members)
    try:
        size = drgn.sizeof(type_)
    except (TypeError, ValueError):
        size = 0
    return TypeLayout(type_.type_name(), size, tuple(members))


def layouts_for(
    prog: drgn.Program, variables: tuple[Variable, ...], more: tuple[str, ...] = ()
) -> tuple[TypeLayout, ...]:
    """Layouts of the structs the variables point to, and of the structs their pointer members point to.

    ``more`` names further structs (those the callers' pointers point to): only their own layouts.
    """
    wanted = list(dict.fromkeys(v.pointee for v in variables if v.pointee))
    done: dict[str, TypeLayout] = {}
    for level in range(2):
        next_level: list[str] = []
        for name in wanted:
            if name in done or len(done) >= MAX_LAYOUTS:
                continue
            try:
                layout = layout_of(prog.type(name))
            except LookupError:
                continue
            done[name] = layout
            if level == 0:
                next_level += [m.pointee for m in layout.members if m.pointee]
        wanted = list(dict.fromkeys(next_level))
    for name in dict.fromkeys(more):  # after the variables' two levels, which the NULL analysis needs
        if name not in done and len(done) < MAX_LAYOUTS:
            with contextlib.suppress(LookupError):
                done[name] = layout_of(prog.type(name))
    return tuple(done.values())
