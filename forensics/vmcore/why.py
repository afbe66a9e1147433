"""The values that explain a crash, read from the dump: frame values, the BUG/WARN site and its
condition operands, what suspicious addresses point into, polled words and the top memory users.

Only reads: every judgement on these values is made by :mod:`detectors.vmcore.why`.
A value drgn cannot locate is recorded as ``optimized out``; a page the dump lacks as
``not in dump``; nothing is guessed.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import re
from collections.abc import Iterable
from pathlib import Path

import drgn

from detectors.vmcore import cexpr
from forensics.model import NotAvailable
from forensics.types.vmcore import (
    LEADING_BYTES,
    AddressInfo,
    BugSite,
    CodeBytes,
    EarlierFree,
    Frame,
    FrameValues,
    LoopSite,
    MemoryUser,
    PolledWord,
    SourceLine,
    ValueRead,
)
from forensics.vmcore import gaps
from forensics.vmcore.extract import pointee_name as _pointee
from forensics.vmcore.gaps import not_in_dump

#: Frames from the crash frame outwards whose values are read.
VALUE_FRAMES = 6
#: At most this many members of a struct are shown for a pointer without source.
MEMBERS_WITHOUT_SOURCE = 8
#: At most this many members of a struct or union value (a local ``struct fd f``) are shown in its value.
AGGREGATE_MEMBERS = 4
#: Addresses identified per dump (registers, pointers of the frames, the log's addresses).
MAX_ADDRESSES = 48
#: Distribution layouts of kernel sources, searched after --source-dir and the DWARF path.
DISTRIBUTION_SOURCE_GLOBS = ("/usr/src/linux-source-*", "/usr/src/linux-*", "/usr/src/kernels/*")
#: The lowest address of x86-64's kernel half (and arm64's with 48-bit VAs): integers from there are addresses.
KERNEL_HALF = 0xFFFF_8000_0000_0000
#: VM_ALLOC in struct vm_struct.flags (include/linux/vmalloc.h).
VM_ALLOC = 0x2
#: BUGFLAG_WARNING in struct bug_entry.flags (include/asm-generic/bug.h).
BUGFLAG_WARNING = 1 << 0
_SCALARS = (drgn.TypeKind.INT, drgn.TypeKind.BOOL, drgn.TypeKind.ENUM, drgn.TypeKind.POINTER)
_DEFINITION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\(")
#: A head in the XFS style, the name starting the line under its return type (``STATIC int`` / ``xfs_iflush(``).
_NAME_FIRST = re.compile(r"^([A-Za-z_]\w*)\s*\(")
#: A line holding a return type alone (``static int``, ``struct xfs_buf *``), as above an XFS-style head.
_TYPE_ALONE = re.compile(r"^[A-Za-z_][\w \t\*]*$")
#: A C comment, one left open at the end of the text included (a head's comment that goes on below it).
_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*", re.DOTALL)
#: Functions a macro defines, its first argument NAME: (the macro, the names a frame of it carries).  A system call's
#: SYSCALL_DEFINEn(NAME, ...) is sys_NAME with its __se_sys_NAME and __do_sys_NAME (inlined into it) and, where the
#: architecture wraps system calls, its entry __x64_sys_NAME (__ia32_, __arm64_, __riscv_, __s390x_...:
#: include/linux/syscalls.h, arch/*/include/asm/syscall_wrapper.h); COMPAT_SYSCALL_DEFINEn's are compat_sys_NAME's;
#: a BPF helper's BPF_CALL_n(NAME, ...) is NAME with the ____NAME it calls (include/linux/filter.h).
_SYSCALL_PREFIXES = ("", "__se_", "__do_", "__x64_", "__ia32_", "__x32_", "__arm64_", "__riscv_", "__s390x_", "__s390_")
_MACRO_FUNCTIONS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"SYSCALL_DEFINE[0-6]"), tuple(f"{p}sys_{{}}" for p in _SYSCALL_PREFIXES)),
    (re.compile(r"COMPAT_SYSCALL_DEFINE[0-6]"), tuple(f"{p}compat_sys_{{}}" for p in _SYSCALL_PREFIXES)),
    (re.compile(r"BPF_CALL_[0-5]"), ("{}", "____{}")),
)
#: A head of a function a macro defines: the macro and its first argument (``SYSCALL_DEFINE3(write,``).
_MACRO_HEAD = re.compile(r"((?:COMPAT_)?SYSCALL_DEFINE[0-6]|BPF_CALL_[0-5])\s*\(\s*(\w+)\s*[,)]")


def value_of(expression: str, obj: drgn.Object, depth: int = 0) -> ValueRead:
    """A drgn object as a plain :class:`ValueRead`: its integer and how to show it (a struct or union by its first
    members, ``{.file = 0xffff8880... , .flags = 0}``; one nested in it (``depth`` 1) as ``{...}``)."""
    type_name = obj.type_.type_name()
    address = obj.address_
    pointee = _pointee(obj.type_)
    if obj.absent_:
        return ValueRead(expression, type_name, None, "", "optimized out", address, pointee)
    kind = obj.type_.unaliased_kind()
    try:
        if kind in _SCALARS:
            value = int(obj.value_())
            text = str(value)
            # A pointer, or an unsigned integer holding a kernel address (6.1's set_freepointer: ``unsigned long
            # freeptr_addr``), in hex: its decimal says nothing.  Signed integers never (-9 is an error code).
            if kind == drgn.TypeKind.POINTER or value >= KERNEL_HALF:
                text = f"{value:#x}"
                with contextlib.suppress(LookupError):
                    sym = obj.prog_.symbol(value)
                    text += f" ({sym.name}+{value - sym.address:#x})"
            elif kind == drgn.TypeKind.ENUM:
                names = [e.name for e in obj.type_.unaliased().enumerators or () if e.value == value]
                text = f"{names[0]} ({value})" if names else str(value)
            elif value > 9 or value < -9:
                text = f"{value} ({value & 0xFFFFFFFFFFFFFFFF:#x})"
            return ValueRead(expression, type_name, value, text, None, address, pointee)
        if kind == drgn.TypeKind.ARRAY and obj.type_.unaliased().type.unaliased_kind() == drgn.TypeKind.INT:
            raw = obj.string_()[:64] if drgn.sizeof(obj.type_.unaliased().type) == 1 else b""
            return ValueRead(expression, type_name, None, repr(raw.decode(errors="replace")), None, address)
        if kind in (drgn.TypeKind.STRUCT, drgn.TypeKind.UNION) and depth == 0:
            return ValueRead(expression, type_name, None, _aggregate_text(obj), None, address)
        return ValueRead(expression, type_name, None, "{...}" if depth else f"({type_name})", None, address)
    except drgn.FaultError as exc:
        return ValueRead(expression, type_name, None, "", not_in_dump(exc), address)
    except drgn.ObjectAbsentError:
        return ValueRead(expression, type_name, None, "", "optimized out", address)


def _aggregate_text(obj: drgn.Object) -> str:
    """A struct or union value as drgn prints one, its first named members only: ``{.word = 0xffff9d98c0a1b2c0}``.

    Its type alone (``(struct fd)``) said nothing of what the frame held.
    """
    members = [m for m in obj.type_.unaliased().members or () if m.name]
    parts = []
    for member in members[:AGGREGATE_MEMBERS]:
        assert member.name is not None
        read = value_of(member.name, obj.member_(member.name), depth=1)
        parts.append(f".{member.name} = {read.text if read.missing is None else read.missing}")
    more = ", ..." if len(members) > AGGREGATE_MEMBERS else ""
    return "{" + ", ".join(parts) + more + "}"


def _lookup(prog: drgn.Program, frame: drgn.StackFrame | None, name: str) -> drgn.Object:
    if frame is not None:
        with contextlib.suppress(KeyError, LookupError):
            return frame[name]
    with contextlib.suppress(LookupError):
        return prog.object(name)
    return prog.constant(name)


def evaluate_node(prog: drgn.Program, frame: drgn.StackFrame | None, node: cexpr.Node) -> drgn.Object:
    """The drgn object an operand of a condition names (raises LookupError, FaultError, ...)."""
    if node.kind == "name":
        return _lookup(prog, frame, node.text)
    if node.kind == "num":
        return drgn.Object(prog, "long", node.value)
    if node.kind == "member":
        base = evaluate_node(prog, frame, node.parts[0])
        name = cexpr.member_name(node)
        return base.member_(name) if not cexpr.is_arrow(node) else base[0].member_(name)
    if node.kind == "index":
        base = evaluate_node(prog, frame, node.parts[0])
        index = evaluate_node(prog, frame, node.parts[1])
        return base[int(index.value_())]
    if node.kind == "unary" and node.op == "*":
        return evaluate_node(prog, frame, node.parts[0])[0]
    if node.kind == "unary" and node.op == "&":
        return evaluate_node(prog, frame, node.parts[0]).address_of_()
    if node.kind == "call" and node.parts:
        arg = node.parts[0]
        target = arg.parts[0] if arg.kind == "unary" and arg.op == "&" else None
        if node.op in cexpr.COUNTER_CALLS:
            obj = evaluate_node(prog, frame, target) if target else evaluate_node(prog, frame, arg)[0]
            with contextlib.suppress(LookupError):
                obj = obj.member_("refs") if node.op == "refcount_read" else obj
            return obj.member_("counter")
        if node.op in cexpr.TRANSPARENT_CALLS:
            return evaluate_node(prog, frame, arg)
        if node.op == "test_bit" and len(node.parts) == 2:
            bit = int(evaluate_node(prog, frame, node.parts[0]).value_())
            word = evaluate_node(prog, frame, node.parts[1])[0]
            return drgn.Object(prog, "int", (int(word.value_()) >> bit) & 1)
    raise LookupError(f"cannot evaluate {node.text}")


def read_operand(prog: drgn.Program, frame: drgn.StackFrame | None, node: cexpr.Node) -> ValueRead:
    """An operand's value, or why there is none (optimized out, not in dump, unknown name)."""
    try:
        obj = evaluate_node(prog, frame, node)
    except drgn.ObjectAbsentError:
        return ValueRead(node.text, "?", None, "", "optimized out")
    except drgn.FaultError as exc:
        return ValueRead(node.text, "?", None, "", not_in_dump(exc))
    except (LookupError, KeyError) as exc:
        if node.kind == "name" and node.text in cexpr.KNOWN_MACROS:
            return ValueRead(node.text, "macro", cexpr.KNOWN_MACROS[node.text], f"{cexpr.KNOWN_MACROS[node.text]:#x}")
        return ValueRead(node.text, "?", None, "", f"not available: {str(exc).strip(chr(39))}")
    except (TypeError, ValueError) as exc:
        return ValueRead(node.text, "?", None, "", f"not available: {exc}")
    return value_of(node.text, obj)


# ---------------------------------------------------------------- source lines


class SourceFiles:
    """The source files one analysis reads, each read once by path: the culprit's file is read for the BUG/WARN
    site, each frame's statement, the busy-wait loop and the earlier free (one per use, it was read again each time).
    Made per run and passed down: a file edited between two runs is read anew."""

    def __init__(self) -> None:
        self._read: dict[Path, list[str] | str | None] = {}

    def lines(self, path: Path) -> list[str] | str | None:
        """The lines of ``path``; None when no file is there; why it cannot be read (a directory, no permission)."""
        if path not in self._read:
            self._read[path] = self._lines_of(path)
        return self._read[path]

    @staticmethod
    def _lines_of(path: Path) -> list[str] | str | None:
        from collectors.inputs import open_input
        from forensics.errors import InputError

        try:
            if not path.exists():
                return None
            with open_input(str(path)) as tracked:
                return tracked.stream.read().decode(errors="replace").splitlines()
        except (OSError, InputError) as exc:
            return str(exc)


def _candidates(file: str, dwarf_path: str | None, source_dirs: tuple[Path, ...]) -> Iterable[tuple[Path, str]]:
    rel = file.lstrip("./") if not file.startswith("/") else file
    parts = Path(dwarf_path or file).parts
    for d in source_dirs:
        if not rel.startswith("/"):
            yield d / rel, "--source-dir"
        # An absolute DWARF path: try its trailing components under the directory.
        for i in range(1, len(parts)):
            if parts[i] != "/":
                yield d.joinpath(*parts[i:]), "--source-dir"
    if dwarf_path and dwarf_path.startswith("/"):
        yield Path(dwarf_path), "DW_AT_comp_dir"
    if not rel.startswith("/"):
        for pattern in DISTRIBUTION_SOURCE_GLOBS:
            for tree in sorted(glob.glob(pattern)):
                yield Path(tree) / rel, pattern


def _statement(lines: list[str], line: int) -> str:
    """The statement starting at ``line`` (1-based), up to 6 lines until its parentheses balance."""
    text = ""
    for i in range(line - 1, min(len(lines), line + 5)):
        text += (" " if text else "") + lines[i].strip()
        if text.count("(") <= text.count(")"):
            break
    return text


def _head_at(lines: list[str], index: int) -> str | None:
    """The function a definition starting at ``lines[index]`` defines: its head, joined over lines until its
    parentheses close (``static ssize_t kf_write(struct file *file,`` / ``...)``), comments left out, not ending in
    ``;`` or ``,`` (a prototype, a declaration).  Whatever follows the parentheses (``{``, a comment, an attribute
    such as ``__cold``) is the head's; the name may start the line when the line above holds the type (XFS's
    ``STATIC int`` / ``xfs_iflush_cluster(``).  A function a macro defines is named as the source spells it,
    ``SYSCALL_DEFINE3(write)`` (its head has no type before the name: it was no head, and the line taken to lie in
    the function above); :func:`_defines` says which frames' functions it is."""
    code = _COMMENT.sub(" ", lines[index])
    macro = _MACRO_HEAD.match(code)
    m = macro or _DEFINITION.match(code)
    if m is None:
        m = _NAME_FIRST.match(code)
        above = _COMMENT.sub(" ", lines[index - 1]).strip() if index > 0 else ""
        if m is None or not _TYPE_ALONE.match(above) or above.split()[0] in ("return", "else", "goto", "case", "do"):
            return None
    if "=" in code.split("(")[0]:
        return None
    name = m.group(1) if macro is None else f"{macro.group(1)}({macro.group(2)})"
    for end in range(index + 1, min(len(lines), index + 6) + 1):
        head = _COMMENT.sub(" ", "\n".join(lines[index:end])).strip()
        if head.count("(") <= head.count(")"):
            return name if head.count("(") == head.count(")") and not head.endswith((";", ",")) else None
    return None


def _defines(head: str, function: str) -> bool:
    """Whether the function a head defines (:func:`_head_at`'s name) is ``function`` (a frame's, clone suffix
    removed): the same name, or one of the functions its macro makes (``SYSCALL_DEFINE3(write)``:
    ``__do_sys_write``, ``__se_sys_write``, ``__x64_sys_write``...)."""
    if head == function:
        return True
    macro, _, rest = head.partition("(")
    name = rest.removesuffix(")")
    return any(
        pattern.fullmatch(macro) is not None and function in (f.format(name) for f in names)
        for pattern, names in _MACRO_FUNCTIONS
    )


def copy_fits(lines: list[str], locations: Iterable[tuple[int, str | None]]) -> str | None:
    """Why a copy of a source file (its ``lines``) is not the one the kernel was built from, None when every
    location the debug info puts in it (line, function) checks: the line exists and lies in that function (the
    nearest definition at or above it).  A location of an unknown function only has to exist; a copy with no
    location to check is not taken as the build's.
    """
    checked = False
    for line, function in locations:
        if line > len(lines):
            return f"it has only {len(lines)} line{'' if len(lines) == 1 else 's'}, the debug info cites line {line}"
        if function is None:
            continue
        # A compiler's clone (kf_put.constprop.0, kf_put.cold) is the function of its source name.
        name = function.split(".", 1)[0]
        at = next((f for i in range(line - 1, -1, -1) if (f := _head_at(lines, i)) is not None), None)
        if at is None or not _defines(at, name):
            where = "no function" if at is None else at if at.endswith(")") else f"{at}()"
            return f"line {line} lies in {where}, not in {name}()"
        checked = True
    return None if checked else "no line of a known function to check it against"


def read_source_line(
    file: str,
    line: int,
    function: str,
    dwarf_path: str | None,
    source_dirs: tuple[Path, ...],
    trap: bool,
    files: SourceFiles | None = None,
) -> SourceLine | NotAvailable:
    """Find ``file`` in the source trees, read its statement at ``line`` and check it fits the build.

    The line fits when it lies inside ``function`` (the nearest definition at or above it, as :func:`copy_fits`
    judges a copy found via --source-dir) and, for a BUG/WARN trap, holds an assertion macro or ``BUG()``.
    ``files``: the run's reader, which reads each file once (a new one when not given).
    """
    files = files if files is not None else SourceFiles()
    unreadable: list[str] = []
    for path, via in _candidates(file, dwarf_path, source_dirs):
        lines = files.lines(path)
        if lines is None:
            continue
        if isinstance(lines, str):  # a directory, no permission: say so, keep looking
            unreadable.append(lines)
            continue
        if line > len(lines):
            return SourceLine(str(path), line, "", via, False, f"{path} has only {len(lines)} lines: another version")
        how = f"{via} ({'; '.join(unreadable)})" if unreadable else via
        text = _statement(lines, line)
        # copy_fits's judgement of the line (ue6 #4): a head spread over lines is joined (one line at a time, its
        # first line's trailing comma hid it and the previous function was blamed), a line above every function lies
        # in none (it was taken as fitting), a compiler's clone (.constprop.0) is its source name's function.
        misplaced = copy_fits(lines, ((line, function),))
        problems = [] if misplaced is None else [misplaced]
        if trap and not (cexpr.find_assertion(text) or re.search(r"\b(BUG|WARN\w*)\s*\(", text)):
            problems.append(f"line {line} holds no BUG/WARN: `{text[:80]}`")
        mismatch = "; ".join(problems) + " — this source is not the one the kernel was built from" if problems else None
        return SourceLine(str(path), line, text, how, not problems, mismatch)
    tarballs = sorted(glob.glob("/usr/src/linux-source-*.tar.*"))
    dirs = ", ".join(str(d) for d in source_dirs) or "none given"
    why = f"source of {file} not found (--source-dir: {dirs}; DWARF path {dwarf_path or 'none'}"
    if tarballs and not file.startswith("/"):
        # Debian's linux-source package ships a tarball: reading one file out of it takes longer than
        # the whole analysis, so say how to unpack it once instead (a hint: the file is still not found).
        why += f"; {tarballs[-1]} is packed: unpack it (tar -xf) and pass --source-dir to the tree)"
    else:
        why += "; /usr/src/linux-source-* none)" if not any(glob.glob(p) for p in DISTRIBUTION_SOURCE_GLOBS) else ")"
    if unreadable:
        why = f"source of {file} not readable: {'; '.join(unreadable)}"
    return NotAvailable(why + "; pass --source-dir DIR (the kernel or module source tree)")


#: The functions a double free's second free can call (6.1's kfree tail-calls __kmem_cache_free: its frame is the
#: one below the caller's), and a call of one on a pointer: ``kfree(msg);``.
FREE_FUNCTIONS = ("kfree", "kvfree", "kfree_sensitive", "kmem_cache_free", "__kmem_cache_free")
_FREE_CALL = re.compile(r"\b(?:kfree|kvfree|kfree_sensitive|kmem_cache_free)\s*\(([^;]*)\)\s*;")
_IF_OPENS = re.compile(r"^\s*if\s*\((.*)\)\s*\{\s*(?://.*|/\*.*\*/\s*)?$")


def earlier_free(
    frames: tuple[Frame, ...],
    values: tuple[FrameValues, ...],
    source_dirs: tuple[Path, ...],
    files: SourceFiles | None = None,
) -> EarlierFree | None:
    """The first free of a double free, where the source of the second free's function shows it (the one other call
    freeing the same pointer above it), and every ``if`` around it holds by the frame's values; None wherever this
    is not read: no source, two candidates, a block other than an ``if``, an operand not read, a condition false.
    ``files``: the run's reader (the culprit's file was read for its frame's values)."""
    from detectors.vmcore.findings import crash_frame, culprit_frame

    culprit = culprit_frame(frames, crash_frame(frames))
    if culprit is None or not culprit.source_file or not culprit.source_line or culprit.index == 0:
        return None
    if frames[culprit.index - 1].function not in FREE_FUNCTIONS or not isinstance(culprit.function, str):
        return None
    files = files if files is not None else SourceFiles()
    lines = next(
        (read for path, _via in _candidates(culprit.source_file, culprit.source_file, source_dirs)
         if isinstance(read := files.lines(path), list)),
        None,
    )  # fmt: skip
    second = culprit.source_line
    if lines is None or second > len(lines) or not (call := _FREE_CALL.search(lines[second - 1])):
        return None
    name = culprit.function.split(".", 1)[0]
    start = next((i for i in range(second - 1, -1, -1) if _head_at(lines, i) is not None), None)
    if start is None or not _defines(_head_at(lines, start) or "", name):
        return None
    same = [
        i for i in range(start + 1, second - 1) if (m := _FREE_CALL.search(lines[i])) and m.group(0) == call.group(0)
    ]
    if len(same) != 1:
        return None
    conditions = _enclosing_ifs(lines, start, same[0])
    if conditions is None:
        return None
    # The frame holds an operand's value at the second free: one assigned after the first if's line (an else's
    # ``ret = 1``) may not be the value the if read.
    after = "\n".join(lines[start + 1 : second - 1])
    at = after.find("if (" + conditions[0]) if conditions else -1
    checked = after[at:] if at >= 0 else after
    reads = {v.expression: v for fv in values if fv.frame == culprit.index for v in fv.variables}
    operands: list[ValueRead] = []
    for condition in conditions:
        try:
            node = cexpr.parse(condition)
        except cexpr.ParseError:
            return None
        if any(re.search(rf"(?:\b{re.escape(o.text)}\s*(?:[-+*/%|&^]|<<|>>)?=(?!=)|\+\+\s*{re.escape(o.text)}\b|"
                         rf"\b{re.escape(o.text)}\s*(?:\+\+|--)|&\s*{re.escape(o.text)}\b)", checked)
               for o in cexpr.operands(node)):  # fmt: skip
            return None
        used = [reads.get(o.text) for o in cexpr.operands(node)]
        known = {r.expression: r.value for r in used if r is not None and r.value is not None}
        if len(known) != len(used) or not cexpr.evaluate(node, known):  # C's if: any value but 0 (None: unknown)
            return None
        operands += [r for r in used if r is not None]
    return EarlierFree(culprit.source_file, same[0] + 1, call.group(0), tuple(conditions), tuple(operands))


def _enclosing_ifs(lines: list[str], start: int, at: int) -> list[str] | None:
    """The conditions of the ``if`` blocks around ``lines[at]`` up to the function's body, outermost first; None
    when a block around it is not an ``if`` (a loop, a switch, an else) or its braces are not on its lines."""
    conditions: list[str] = []
    depth = 0
    for i in range(at - 1, start - 1, -1):
        if "}" in lines[i] and "{" in lines[i]:
            return None  # "} else {": which branch ran is not read here
        depth += lines[i].count("}") - lines[i].count("{")
        if depth >= 0:
            continue
        if (i <= start + 1 and lines[i].strip() in ("{", "")) or _head_at(lines, i) is not None:
            return conditions[::-1]  # the function's own body
        m = _IF_OPENS.match(lines[i])
        if m is None:
            return None
        conditions.append(m.group(1).strip())
        depth = 0
    return None


# ---------------------------------------------------------------- frames


def _members_used(text: str, variable: str) -> list[cexpr.Node]:
    """``variable->a``, ``variable->a.b``, ``variable->a->b`` chains a statement reads."""
    out: dict[str, cexpr.Node] = {}
    for m in re.finditer(rf"(?<![\w.>]){re.escape(variable)}((?:\s*(?:->|\.)\s*\w+|\[\w+\])+)", text):
        chain = variable + re.sub(r"\s+", "", m.group(1))
        with contextlib.suppress(cexpr.ParseError):
            node = cexpr.parse(chain)
            # Every prefix of a chain is read too: dev->sensor of dev->sensor->ops.
            while node.kind in ("member", "index"):
                out.setdefault(node.text, node)
                node = node.parts[0]
    return sorted(out.values(), key=lambda n: n.text)


def frame_values(
    prog: drgn.Program,
    trace: drgn.StackTrace,
    frames: tuple[Frame, ...],
    first: int,
    sources: dict[int, str],
) -> tuple[FrameValues, ...]:
    """Arguments and locals of frame ``first`` and its callers up to user space.

    For each pointer to a struct, the members the frame's source statement
    (``sources``: frame index to text) reads, or, without the source, the
    first scalar members of the struct.
    """
    out: list[FrameValues] = []
    for i in range(first, min(len(frames), first + VALUE_FRAMES)):
        frame, info = trace[i], frames[i]
        if not isinstance(info.function, str) or info.function.startswith(("entry_SYSCALL", "do_syscall")):
            break
        variables: list[ValueRead] = []
        members: list[ValueRead] = []
        statement = sources.get(i)
        for name in frame.locals():
            try:
                obj = frame[name]
            except (KeyError, LookupError):
                continue
            read = value_of(name, obj)
            variables.append(read)
            pointee = _pointee(obj.type_)
            if pointee is None or read.value is None or read.value == 0:
                continue
            if statement is not None:
                members += [read_operand(prog, frame, node) for node in _members_used(statement, name)]
            elif i == first or info.module is not None:
                # Without the source, the struct's first members, for the crash frame and module code.
                members += _first_members(name, obj)
        out.append(FrameValues(i, info.function, info.where(), tuple(variables), tuple(members)))
    return tuple(out)


def _first_members(name: str, pointer: drgn.Object) -> list[ValueRead]:
    out: list[ValueRead] = []
    try:
        target = pointer[0]
        for member in target.type_.unaliased().members or ():
            if member.name is None or member.type.unaliased_kind() not in _SCALARS:
                continue
            out.append(value_of(f"{name}->{member.name}", target.member_(member.name)))
            if len(out) >= MEMBERS_WITHOUT_SOURCE:
                break
    except (drgn.FaultError, LookupError, TypeError, ValueError) as exc:
        out.append(ValueRead(f"*{name}", "?", None, "", f"not available: {exc}"))
    return out


# ---------------------------------------------------------------- BUG/WARN


def _bug_entries(prog: drgn.Program, pc: int) -> tuple[drgn.Object, str] | None:
    """The ``struct bug_entry`` of the trap at ``pc`` from the module's or the kernel's bug table."""
    entry_type = prog.type("struct bug_entry")
    size = drgn.sizeof(entry_type)
    tables: list[tuple[int, int, str]] = []
    try:
        module = prog.module(pc)
    except LookupError:
        module = None
    if module is not None and module.name not in ("kernel", "vmlinux"):
        from drgn.helpers.linux.module import find_module

        mod = find_module(prog, module.name)
        if mod:
            tables.append((int(mod.bug_table.value_()), int(mod.num_bugs.value_()), f"module {module.name}"))
    else:
        start = prog.symbol("__start___bug_table").address
        stop = prog.symbol("__stop___bug_table").address
        tables.append((start, (stop - start) // size, "vmlinux __bug_table"))
    for base, count, label in tables:
        data = prog.read(base, count * size)
        disp_off = entry_type.member("bug_addr_disp").offset
        for n in range(count):
            at = base + n * size
            disp = int.from_bytes(data[n * size + disp_off : n * size + disp_off + 4], "little", signed=True)
            if at + disp_off + disp == pc:
                return drgn.Object(prog, entry_type, address=at), label
    return None


_SOURCE_PATH = re.compile(r"^[\w./+-]+\.(?:c|h|S|rs)$")


def _bug_file(prog: drgn.Program, entry: drgn.Object, dwarf_file: str | None) -> str | None:
    """The file a bug table entry names, whichever way this kernel's x86 ``_BUG_FLAGS`` encoded it.

    ``file_disp`` is relative to the field itself on 6.1 and later (``lib/bug.c``: ``&bug->file_disp +
    bug->file_disp``) and relative to the entry on 5.10 (``bug + bug->file_disp``; ``__BUG_REL`` was
    ``.long x - 2b``).  Neither is in DWARF: the reading that spells a source path is taken, the one that
    agrees with the frame's DWARF file first; None when neither does.
    """
    field = entry.file_disp.address_
    start = entry.address_
    if field is None or start is None:
        return None
    disp = int(entry.file_disp.value_())
    found: list[str] = []
    for base in (field, start):
        try:
            text = prog.read(base + disp, 256).split(b"\0", 1)[0].decode("ascii")
        except (drgn.FaultError, UnicodeDecodeError):
            continue
        if _SOURCE_PATH.match(text):
            found.append(text)

    def same(path: str) -> bool:  # whole path components: "lub.c" is no match for "mm/slub.c"
        if not dwarf_file:
            return False
        return f"/{dwarf_file}".endswith(f"/{path}") or f"/{path}".endswith(f"/{dwarf_file}")

    agreeing: list[str] = [f for f in found if same(f)]
    if agreeing:
        # The longest: the reading 4 bytes late is the string's own tail ("list_debug.c" of "lib/list_debug.c",
        # 5.10), which ends the DWARF path as well; 4 bytes early holds the previous string's NUL, so never longer.
        return max(agreeing, key=len)
    return found[0] if len(found) == 1 else None  # two readings and nothing to choose: not guessed


def bug_site(
    prog: drgn.Program,
    trace: drgn.StackTrace,
    frames: tuple[Frame, ...],
    source_dirs: tuple[Path, ...],
    files: SourceFiles | None = None,
) -> BugSite | NotAvailable:
    """The BUG()/WARN() trap of the crashed thread: the interrupted frame whose pc is a ``ud2``."""
    for i, info in enumerate(frames):
        if not info.interrupted or not isinstance(info.function, str):
            continue
        try:
            if prog.read(info.pc, 2) != b"\x0f\x0b":
                continue
        except drgn.FaultError:
            continue
        file, line, warning, table = info.source_file, info.source_line, False, "no bug table entry"
        line_missing = None
        try:
            found = _bug_entries(prog, info.pc)
        except (LookupError, drgn.FaultError, ValueError) as exc:
            found, table = None, f"bug table not readable: {exc}"
        if found is not None:
            entry, table = found
            try:
                file = _bug_file(prog, entry, info.source_file) or file
                line = int(entry.line.value_())
            except drgn.FaultError as exc:
                line_missing = f"its bug table entry {not_in_dump(exc, 'the bug table entry')}"
            except LookupError as exc:
                line_missing = f"its bug table entry has no line: {exc}"
            warning = bool(int(entry.flags.value_()) & BUGFLAG_WARNING)
        # Said where the report prints the line: the entry's read failure, else that neither source has one.
        line_missing = None if line is not None else line_missing or f"DWARF has no line for the pc, and {table}"
        if file is None or line is None:
            source: SourceLine | NotAvailable = NotAvailable("neither the bug table nor DWARF give a file and line")
        else:
            source = read_source_line(file, line, info.function, info.source_file, source_dirs, True, files)
        operands: tuple[ValueRead, ...] = ()
        if not isinstance(source, NotAvailable):
            assertion = cexpr.find_assertion(source.text)
            if assertion is not None:
                with contextlib.suppress(cexpr.ParseError):
                    node = cexpr.parse(assertion.condition)
                    operands = tuple(read_operand(prog, trace[i], n) for n in cexpr.operands(node))
        return BugSite(i, info.pc, info.function, file, line, warning, table, source, operands, line_missing)
    return NotAvailable("no BUG/WARN trap (ud2) in the crashed thread's exception frames")


_WHILE = re.compile(r"\bwhile\s*\(")


def loop_site(
    prog: drgn.Program,
    trace: drgn.StackTrace,
    frames: tuple[Frame, ...],
    index: int,
    code: CodeBytes | NotAvailable,
    source_dirs: tuple[Path, ...],
    files: SourceFiles | None = None,
) -> LoopSite | NotAvailable:
    """The ``while (cond)`` an interrupted frame spins in (a lockup), with the condition's operands."""
    from detectors.vmcore.disasm import decode
    from detectors.vmcore.findings import physical_frame

    # An inlined cpu_relax() is not the loop: the function it was inlined into is.
    frame = physical_frame(frames, frames[index])
    index = frame.index
    if not isinstance(frame.function, str) or frame.source_file is None or frame.source_line is None:
        return NotAvailable("the interrupted frame has no line information")
    reads: bool | None = None
    body: tuple[int, int] | None = None
    if not isinstance(code, NotAvailable):
        insns = decode(code)
        # The loop body: from the backward jump's target to the jump, around the pc.
        for insn in insns:
            if insn.mnemonic.startswith("j") and insn.address >= code.fault_pc:
                with contextlib.suppress(ValueError):
                    target = int(insn.op_str, 16)
                    if target <= code.fault_pc:
                        reads = any(i.memory is not None for i in insns if target <= i.address <= insn.address)
                        body = (target, insn.address)
                        break
    files = files if files is not None else SourceFiles()  # up to 4 lines of one file: read once
    for back in range(0, 4):
        line = frame.source_line - back
        if line < 1:
            break
        found = read_source_line(frame.source_file, line, frame.function, frame.source_file, source_dirs, False, files)
        if isinstance(found, NotAvailable):
            # Without the source the machine code still shows the loop (and whether it reads memory): kept, the
            # condition said not available and why (what --source-dir adds).
            return found if body is None else LoopSite(index, frame.function, found, found, (), reads, body)
        m = _WHILE.search(found.text)
        if m is None:
            continue
        close = cexpr.balanced(found.text, m.end() - 1)
        if close is None:
            continue
        condition = " ".join(found.text[m.end() : close].split())
        try:
            node = cexpr.parse(condition)
        except cexpr.ParseError as exc:
            return NotAvailable(f"cannot parse the loop condition {condition!r}: {exc}")
        operands = tuple(read_operand(prog, trace[index], n) for n in cexpr.operands(node))
        return LoopSite(index, frame.function, found, condition, operands, reads, body)
    return NotAvailable(f"no while loop at or above {frame.where()}")


# ---------------------------------------------------------------- addresses


def identify(prog: drgn.Program, address: int, origin: str, aliases: dict[str, str] | None = None) -> AddressInfo:
    """What ``address`` points into: a slab object (with its state) or a symbol, and its first words.

    ``aliases`` maps the names of caches SLUB merged away to the cache that took them in.
    """
    from drgn.helpers.linux.slab import slab_object_info

    from forensics.vmcore.slab import allocation_state

    words: tuple[int, ...] = ()
    missing = None
    try:
        data = prog.read(address & ~7, 32)
        words = tuple(int.from_bytes(data[k : k + 8], "little") for k in range(0, 32, 8))
    except drgn.FaultError as exc:
        missing = not_in_dump(exc)
    try:
        info = slab_object_info(prog, address)
    except (LookupError, ValueError, drgn.FaultError, TypeError, NotImplementedError) as exc:
        info = None
        if missing is None and isinstance(exc, drgn.FaultError):
            # A guess only where the reason names no cause: a page lost to a cut, or filtered at a named level,
            # is said as such (the guess once followed "lies past the cut").
            guess = "" if gaps.cause_known(exc) else " (slab pages filtered out?)"
            missing = f"slab state {not_in_dump(exc)}{guess}"
    if info is not None:
        cache = info.slab_cache
        name = cache.name.string_().decode(errors="replace")
        merged = tuple(sorted(alias for alias, target in (aliases or {}).items() if target == name))
        start = int(info.address)
        leading = b""
        with contextlib.suppress(drgn.FaultError):
            first = max(start, address - LEADING_BYTES)
            leading = prog.read(first, address - first) if address > first else b""
        return AddressInfo(
            address, origin, "slab", name, merged, start, int(cache.object_size.value_()),
            address - start, allocation_state(prog, info), words=words, missing=missing, leading=leading,
        )  # fmt: skip
    try:
        sym = prog.symbol(address)
        return AddressInfo(address, origin, "symbol", symbol=f"{sym.name}+{address - sym.address:#x}", words=words)
    except LookupError:
        if missing is None and info is None and _in_direct_map(prog, address):
            # RAM no slab cache holds now: a stack, a page of the page allocator, or the slab of a
            # cache that was destroyed since; which one the dump alone does not say.
            missing = "in no slab cache now (page-allocator memory: a stack, a page, or a destroyed cache's slab)"
        return AddressInfo(address, origin, "unknown", words=words, missing=missing)


#: Log lines whose addresses are evidence: corruption reports, faults, KASAN/KFENCE/SLUB reports.
_ADDRESS_LINES = re.compile(
    r"corruption|unable to handle page fault for address|general protection fault|KASAN|KFENCE"
    r"|Object already free|double free|Poison overwritten|Redzone overwritten|use-after-free|Freelist Pointer"
)


def _in_direct_map(prog: drgn.Program, address: int) -> bool:
    from drgn.helpers.linux.mm import in_direct_map

    try:
        return bool(in_direct_map(prog, address))
    except (LookupError, ValueError, drgn.FaultError, TypeError):
        return False


def _kernel_pointer(value: int) -> bool:
    return 0xFFFF800000000000 <= value < 0xFFFFFFFFFF000000


def interesting_addresses(
    prog: drgn.Program, registers: dict[str, int], values: tuple[FrameValues, ...], log_text: str
) -> tuple[AddressInfo, ...]:
    """Identify the kernel pointers in the fault's registers, the frames' pointers and the crash log."""
    seen: dict[int, str] = {}
    # Only the lines that name a culprit address: the register dumps of stack traces are full of
    # stale values, and a freed object in one of them proves nothing.
    for line in log_text.splitlines():
        if _ADDRESS_LINES.search(line):
            for text in re.findall(r"\b(ffff[0-9a-f]{12})\b", line):
                seen.setdefault(int(text, 16), "log")
    for name, value in registers.items():
        if _kernel_pointer(value) and name not in ("rip", "rsp", "rbp"):
            seen.setdefault(value, name)
    for fv in values:
        for read in fv.variables:
            if read.value is not None and _kernel_pointer(read.value) and read.type_name.endswith("*"):
                seen.setdefault(read.value, f"{read.expression} (frame #{fv.frame})")
    aliases: dict[str, str] = {}
    if seen:
        from drgn.helpers.linux.slab import get_slab_cache_aliases

        with contextlib.suppress(LookupError, ValueError, drgn.FaultError, AttributeError, TypeError):
            aliases = dict(get_slab_cache_aliases(prog))
    out = []
    for address, origin in list(seen.items())[:MAX_ADDRESSES]:
        try:
            out.append(identify(prog, address, origin, aliases))
        except (drgn.FaultError, LookupError, ValueError) as exc:
            out.append(AddressInfo(address, origin, "unknown", missing=str(exc)))
    return tuple(out)


# ---------------------------------------------------------------- polled words


def polled_words(prog: drgn.Program, code: CodeBytes) -> tuple[PolledWord, ...]:
    """Words the fault function reads by rip-relative or absolute address, with their values."""
    from detectors.vmcore.disasm import decode

    out = []
    for insn in decode(code):
        mem = insn.memory
        if mem is None or mem.index or mem.segment or mem.base not in ("rip", None):
            continue
        address = (insn.address + insn.size + mem.disp if mem.base == "rip" else mem.disp) & 0xFFFFFFFFFFFFFFFF
        symbol = None
        with contextlib.suppress(LookupError):
            sym = prog.symbol(address)
            symbol = f"{sym.name}+{address - sym.address:#x}"
        try:
            out.append(PolledWord(insn.address, address, symbol, prog.read_u64(address)))
        except drgn.FaultError as exc:
            out.append(PolledWord(insn.address, address, symbol, None, not_in_dump(exc)))
    return tuple(out[:64])


# ---------------------------------------------------------------- memory users


def memory_users(prog: drgn.Program, page_size: int, notes: list[str] | None = None) -> tuple[MemoryUser, ...]:
    """Tasks by resident memory, vmalloc space by caller and the page cache.

    What could not be read is appended to ``notes`` (said in the report, not silently left out).
    """
    from forensics.vmcore.layouts import vmap_areas
    from forensics.vmcore.system import pids_and_tasks

    out: list[MemoryUser] = []
    seen: set[int] = set()
    lost: list[str] = []
    # The PID table's gaps are said once, by the task list (system.tasks), which walks it too.
    unlisted: list[str] = []
    lost_tasks = 0
    for nr, task in pids_and_tasks(prog, unlisted):
        try:
            task.pid.value_()
        except drgn.FaultError:
            lost_tasks += 1  # its task_struct is missing: the task list says which and why
            continue
        try:
            mm = task.mm
            if not mm or int(mm.value_()) in seen:
                continue
            seen.add(int(mm.value_()))
            try:
                counters = mm.rss_stat.count
                pages = sum(int(counters[k].counter.value_()) for k in range(len(counters)))
            except (AttributeError, LookupError, TypeError):
                # percpu_counters since "mm: convert mm's rss stats into percpu_counter" (v6.2).
                from drgn.helpers.linux.percpu import percpu_counter_sum

                pages = sum(int(percpu_counter_sum(c)) for c in mm.rss_stat)
            name = task.comm.string_().decode(errors="replace")
        except drgn.FaultError as exc:
            lost.append(f"pid {nr}: {not_in_dump(exc)}")
            continue
        out.append(MemoryUser("task", name, max(pages, 0) * page_size, int(task.pid.value_())))
    if lost_tasks and notes is not None:
        notes.append(f"memory users: {lost_tasks} tasks not counted: the dump lacks their task_struct (said below)")
    if lost and notes is not None:
        notes += [f"memory users: a task not counted: {note}" for note in lost]
    callers: dict[str, int] = {}
    walk_notes: list[str] = []
    try:
        areas = list(itertools.islice(gaps.walk(vmap_areas(prog), "the vmalloc areas", walk_notes), 50001))
    except LookupError as exc:
        walk_notes.append(f"vmalloc users not read: {exc}")
        areas = []
    if notes is not None:
        notes += [f"memory users: {n}" for n in walk_notes]
    for va in areas:
        try:
            vm = va.vm
            # Only memory vmalloc allocated (VM_ALLOC): ioremap'ed device space holds no RAM.
            if not vm or not int(vm.flags.value_()) & VM_ALLOC:
                continue
            caller = int(vm.caller.value_())
            pages = int(vm.nr_pages.value_())
        except drgn.FaultError as exc:
            if notes is not None:
                missing = not_in_dump(exc, "its vmap_area or vm_struct")
                notes.append(f"memory users: a vmalloc area not counted: {missing}")
            continue
        try:
            sym = prog.symbol(caller)
            label = sym.name
        except LookupError:
            label = f"{caller:#x}"
        callers[label] = callers.get(label, 0) + pages * page_size
    out += [MemoryUser("vmalloc", label, size) for label, size in callers.items()]
    from drgn.helpers.linux.vmstat import global_node_page_state

    with contextlib.suppress(LookupError):
        # NR_FILE_PAGES counts shmem too (tmpfs, SysV shm, a tmpfs rootfs holding the initramfs): said apart, since
        # shmem pages can only be swapped, not dropped, when memory runs out.
        files = int(global_node_page_state(prog["NR_FILE_PAGES"]))
        try:
            shmem = int(global_node_page_state(prog["NR_SHMEM"]))
        except LookupError:
            out.append(MemoryUser("page-cache", "page cache (files and shmem)", files * page_size))
        else:
            out.append(MemoryUser("page-cache", "page cache (files)", max(files - shmem, 0) * page_size))
            out.append(MemoryUser("shmem", "shmem and tmpfs", shmem * page_size))
    return tuple(sorted(out, key=lambda u: -u.bytes))
