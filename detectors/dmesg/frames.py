"""Call traces: parsing frame lines and choosing the guilty frame.

A kernel stack dump is a list of ``func+0xoff/0xsize [module]`` lines, possibly
with ``[<address>]`` columns (older kernels, arm), ``?`` marks for frames the
unwinder is not sure about, and ``<IRQ>``/``<NMI>``/``<TASK>`` markers where
the dump crosses from one stack to another.  The *guilty frame* of a report is
the first reliable frame that is not generic infrastructure: the skip lists
below name the functions that only report, lock, allocate, copy or dispatch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple, TypeVar, cast

from ahocorasick_rs import AhoCorasick, MatchKind

from detectors.dmesg.lines import LogLine
from forensics import regexcache as rc
from forensics.types.dmesg import Frame
from forensics.units import log_hex

_FRAME: Final = rc.compile(
    r"^\s*(?:\[\s*<?(?:0x)?[0-9a-fA-F]+>?\]\s*){0,2}"  # [<ffffffff81000000>] columns (old x86, arm)
    r"(\?\s+)?"  # the unwinder's "unreliable" mark
    r"(?:\d+:)?"
    r"\.?"  # ppc64 ELFv1 names functions by their entry point, ".func"
    r"([A-Za-z_][A-Za-z0-9_.$]*)\+(0x[0-9a-fA-F]+)/(0x[0-9a-fA-F]+)"
    r"(?:\s+\[([A-Za-z0-9_\-]+)\])?"
)
# arm (32-bit) prints "[<pc>] (callee) from [<lr>] (caller+0x1c/0x40)": the line stands for the
# return address, in the caller (the callee has a line of its own above).
#: 32-bit arm's ``[<pc>] (callee) from [<lr>] (caller+off/size)``; symbolized (syzbot) with `` file:line`` before
#: the parenthesis closes.  A caller without an offset (``(f file:line [inline])``) is not a frame.
_ARM_FRAME: Final = rc.compile(
    r"^\s*\[<[0-9a-f]+>\] \([^)]*\) from \[<[0-9a-f]+>\] \(([A-Za-z_][A-Za-z0-9_.$]*)\+(0x[0-9a-f]+)/(0x[0-9a-f]+)"
    r"(?: [^)]*)?\)"
)
_UNRELIABLE_SUFFIX: Final = " (unreliable)"  # powerpc marks unreliable frames at the end
#: A context marker (``<IRQ>``, ``</TASK>``) opening a line, alone or followed by a frame: x86 before v4.10 printed
#: the first frame of each context on the marker's own line (" <IRQ>  [<ffffffff8170cafa>] _sched_show_task+0x31a/
#: 0x325", " <EOI>  [<ffffffff814f00eb>] ? debug_lockdep_rcu_enabled+0x3b/0x90"), each marker on a line of its own
#: since ("x86/dumpstack: Print stack identifier on its own line", v4.10).  Those kernels closed an exception stack
#: (``<NMI>``, ``<#DF>``) with ``<<EOE>>``, and a console that did not join the marker's printk with the next one
#: printed a second stamp after it (" <IRQ> [  420.408595]  [<ffffffff814249f9>] sched_show_task+0x..").
#: The markers' names, one pattern's alternatives (also :mod:`detectors.dmesg.stacks`' lines inside a stack).
MARKER_NAMES: Final = r"IRQ|NMI|TASK|SOFTIRQ|EOI|#[A-Z]+|<EOE>"
_MARKER: Final = rc.compile(rf"^\s*<(/?)({MARKER_NAMES})>(?:\s+\[\s*\d+\.\d+\])?(?:\s*$|\s+(?=\S))")
#: The markers that go back to the task's stack when they open (the others open a stack of their name).
_BACK_TO_TASK: Final = ("eoi", "<eoe>")
_EXCEPTION: Final = rc.compile(r"^\s*--- interrupt: ([0-9a-fx]+)|^\s*(?:Exception stack|irq event stamp)")

#: Lines that start a new list of frames (a new stack inside one report).
STACK_START = rc.compile(
    r"Call [Tt]race:|^\s*Backtrace:|Allocated by task \d+:|Freed by task \d+:|Allocated:|Freed:|(?<!stack) backtrace:|"
    r"^\s*backtrace(?: \(crc [0-9a-f]+\))?:|Last potentially related work creation:|Second to last potentially|"
    r"(?:allocated|freed) by task \d+ on cpu \d+|Uninit was stored to memory at|Uninit was created at|"
    r"Local variable .* created at:"
)


#: Words one of which every line STACK_START finds holds.
STACK_START_WORDS = ("race:", "acktrace", "by task", "potentially", "llocated:", "reed:", "Uninit was",
                     "Local variable")  # fmt: skip


#: The words in one automaton (a regex alternation of them is tried at every character: ~2 us for a frame line).
_STACK_START_HINT: Final = AhoCorasick(list(STACK_START_WORDS), matchkind=MatchKind.LeftmostFirst)


def starts_stack(body: str) -> bool:
    """Whether a line opens a list of frames (``Call Trace:``, ``Allocated by task 1:``, ...)."""
    # Substring checks first: this runs on every line of every report.
    return bool(_STACK_START_HINT.find_matches_as_indexes(body)) and STACK_START.search(body) is not None


#: Mangled C++ (Itanium ``_Z``) and Rust (legacy ``_ZN..E``, v0 ``_R``) symbols; kCFI adds ``__cfi_``.
_MANGLED = rc.compile(r"^(?:__cfi_)?_[ZR][A-Za-z0-9_$]")


@functools.lru_cache(maxsize=16384)
def demangle(symbol: str) -> str:
    """The source-level name of a C++ or Rust symbol, without parameters; other symbols unchanged.

    Rust in the kernel (binder, drivers) and C++ in firmware or user-space
    helpers print mangled names; titles must name ``<Type>::method`` as
    developers write it.  ``pydemumble`` wraps LLVM's demanglers (Itanium C++,
    Rust legacy and v0); the legacy Rust hash (``::h0123..``) and C++ parameter
    lists are dropped, as they change with every build.
    """
    if _MANGLED.match(symbol) is None:
        return symbol
    import pydemumble

    name: str = pydemumble.demangle(symbol.removeprefix("__cfi_"))
    if not name or name == symbol:
        return symbol
    return _RUST_HASH.sub("", _strip_params(name))


_RUST_HASH = rc.compile(r"::h[0-9a-f]{16}$")


def _strip_params(name: str) -> str:
    """``ns::f(int, char*) const`` -> ``ns::f`` (the parameter list of a demangled C++ name)."""
    name = name.removesuffix(" const")
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return name[:i] if i > 0 else name
    return name


def function_name(symbol: str) -> str:
    """The function a printed symbol names: compiler suffixes and system call wrappers removed, demangled."""
    dot = symbol.find(".")
    function = symbol if dot < 0 else symbol[:dot]
    if function[:1] != "_":
        return function  # most names: no wrapper's prefix, nothing to demangle
    # System call wrappers: __se_sys_X and __do_sys_X name the system call X.
    function = function.removeprefix("__se_sys_").removeprefix("__do_sys_")
    # Only a name the mangled pattern may take is looked up (demangle gives any other as it is): ~2,500
    # instructions a frame line's first look went to the cache's call, compiled.
    return demangle(function) if function[:2] in ("_Z", "_R") or function.startswith("__cfi_") else function


#: How each kernel and architecture names a system call's entry point (SYSCALL_DEFINE wrappers,
#: per-arch pt_regs stubs, compat entries, the ksys_ helpers the syscalls call).  A title names
#: the system call as syzbot does: the shortest name left after taking off one of these.
SYSCALL_PREFIXES = ("SYSC_", "SyS_", "sys_", "__x64_", "__ia32_", "__arm64_", "__s390x_", "__s390_", "__riscv_",
                    "__powerpc_", "____sys_", "___sys_", "__sys_", "__se_", "__se_sys_", "__do_sys_",
                    "compat_SYSC_", "compat_SyS_", "ksys_")  # fmt: skip


def title_name(function: str) -> str:
    """The name a title uses for a guilty function: system call entry prefixes normalised."""
    best = function
    for prefix in SYSCALL_PREFIXES:
        if function.startswith(prefix) and len(function) - len(prefix) < len(best):
            best = function[len(prefix) :]
    return best or function


def parse_frame(body: str, line: int = 0, stack: str = "task") -> Frame | None:
    """Parse one frame line (message body), or None when the line is not a frame."""
    fields = _frame_fields(body)
    # tuple.__new__: the named tuple's own constructor is a Python function with keywords (~1 us a frame more).
    return None if fields is None else _new_tuple(_FRAME_TYPE, (*fields, stack, line))


def is_frame(body: str) -> bool:
    """Whether a line (message body) is a frame: ``parse_frame(body) is not None``, no frame made."""
    return _frame_fields(body) is not None


_new_tuple: Final = tuple.__new__
#: The class as a Final name: compiled, a static read, where its own name is a look-up in the module's dict (a frame).
_FRAME_TYPE: Final = Frame


FrameFields = tuple[str, str, int, int, str | None, bool]


#: How many distinct lines each per-line dict below holds before it is emptied.  Dicts, not functools.lru_cache:
#: compiled, a look-up in one is a native dict look-up, where a call of the cache was ~1,000-1,800 instructions
#: (~100,000 calls of the corpus x4).  Emptied when full: the answers are the same whenever they are made.
LINES_REMEMBERED: Final = 16384

_T = TypeVar("_T")

#: What a per-line dict gives for a line it does not hold (one look-up: a test of ``in`` and then an index could
#: miss a line another thread's :func:`remember` dropped between the two).
ABSENT: Final = object()


def after_marker(body: str) -> str | None:
    """The text after a context marker that opens the line and has more after it (x86 before v4.10: ``<IRQ>  [<...>]
    f+0x1a/0x30``, see :data:`_MARKER`), else None."""
    m = _MARKER.match(body) if "<" in body else None
    return body[m.end() :] if m is not None and m.end() < len(body) else None


def remember(cache: dict[str, _T], body: str, value: _T) -> _T:
    """``value``, kept in one of the per-line dicts under its line's ``body`` (emptied first when full)."""
    if len(cache) >= LINES_REMEMBERED:
        cache.clear()
    cache[body] = value
    return value


#: :func:`_frame_fields` by line body (frame lines recur from report to report).
_FIELDS: Final[dict[str, FrameFields | None]] = {}


def _frame_fields(body: str) -> FrameFields | None:
    """Function, symbol, offset, size, module and reliability of a frame line (remembered: frames recur).

    Read from the line's bytes (:func:`read_frame`) when it has the common shape, else by the patterns.
    """
    got = _FIELDS.get(body, ABSENT)
    if got is not ABSENT:
        return cast("FrameFields | None", got)
    if "+0x" not in body:
        # Every frame holds its offset's "+0x" (read_frame's shape and both patterns ask for it): a call trace's
        # other lines (registers, RIP:, lock lines) are not read twice (~3,000 of the shared corpus).
        return remember(_FIELDS, body, None)
    fields = _read_frame(body, True)
    if fields[1]:
        return remember(_FIELDS, body, fields)
    return remember(_FIELDS, body, None if fields[2] == _NO_FRAME[2] else _frame_fields_by_pattern(body))


def _frame_fields_by_pattern(body: str) -> FrameFields | None:
    """:func:`_frame_fields` by the frame patterns (``_FRAME``, then 32-bit arm's): the meaning of a frame line."""
    m = _FRAME.match(body)
    if m is None:
        arm = _ARM_FRAME.match(body)
        if arm is None:
            return None
        offset, size = log_hex(arm.group(2)), log_hex(arm.group(3))
        if offset is None or size is None:
            return None  # an offset or size past 64 bits: no frame a kernel prints
        return (function_name(arm.group(1)), arm.group(1), offset, size, None, True)
    symbol = m.group(2)
    reliable = m.group(1) is None and not body.endswith(_UNRELIABLE_SUFFIX)
    offset, size = log_hex(m.group(3)), log_hex(m.group(4))
    if offset is None or size is None:
        return None  # as above
    return (function_name(symbol), symbol, offset, size, m.group(5), reliable)


# --- frame lines read from their bytes ----------------------------------------------------------
# A frame line's fields read byte by byte, compiled, where the line has the shape nearly every frame line has:
# blanks, maybe ``[<address>]`` columns, maybe ``?`` and blanks, a symbol, ``+0x`` hex ``/0x`` hex, and what
# follows.  A regex match, its groups and two ``int(x, 16)`` were most of the ~10,000 instructions of each
# distinct frame line's first look (``_frame_fields``, ``stacks.parse_stack_frame``: ~260 M of the corpus x4's
# 4,050 M).  Any other line, and any byte a pattern might take otherwise (a digit or dot before the symbol, a byte
# past ASCII, a word where the pattern has none), is left to the patterns (``_UNSURE``): the reader says only what
# the pattern would say.


def _table(*ranges: bytes) -> bytes:
    """A byte class as a 256-byte table (1: in the class), from ``b"az"``-style ranges and single bytes."""
    out = bytearray(256)
    for r in ranges:
        for c in range(r[0], r[-1] + 1):
            out[c] = 1
    return bytes(out)


#: ``[A-Za-z_]``, ``[A-Za-z0-9_.$]`` (a symbol's first and other bytes), ``[0-9a-fA-F]``, ``[A-Za-z0-9_\-]`` (a
#: module's name), ``[A-Za-z0-9_\-./]`` (a source path), ``[A-Za-z]``, ``[0-9]``; and the blanks, what ``\s`` takes
#: of ASCII in a ``str`` pattern (the space, tab to carriage return, the four separators 0x1c-0x1f).
SYMBOL_START_BYTES: Final = _table(b"AZ", b"az", b"_")
SYMBOL_BYTES: Final = _table(b"AZ", b"az", b"09", b"_", b".", b"$")
HEX_BYTES: Final = _table(b"09", b"af", b"AF")
MODULE_BYTES: Final = _table(b"AZ", b"az", b"09", b"_", b"-")
PATH_BYTES: Final = _table(b"AZ", b"az", b"09", b"_", b"-", b".", b"/")
LETTER_BYTES: Final = _table(b"AZ", b"az")
DIGIT_BYTES: Final = _table(b"09")
BLANK_BYTES: Final = _table(b" ", b"\t\r", b"\x1c\x1f")

#: What a reader returns when the line is not of the shape it reads: the patterns decide (never a frame's fields).
#: Told by its empty symbol (compiled, a typed tuple is a C struct, boxed anew where returned: no identity).
_UNSURE: Final[FrameFields] = ("", "", -1, -1, None, False)
#: What the scan's reader returns for a line it reads as no frame (:func:`read_frame`'s None; told by its offset: a
#: typed tuple is returned as a C struct, an optional one boxed at every return).
_NO_FRAME: Final[FrameFields] = ("", "", -2, -2, None, False)


def frame_start(raw: bytes) -> int:
    """Where the symbol of a frame line starts, times two, plus one when the ``?`` mark is there; -1 when the line
    is not of the shape the readers read.  Before the symbol: blanks, up to two ``[<address>]`` columns (each
    ``[``, blanks, maybe ``<``, maybe ``0x``, hex, maybe ``>``, ``]``, blanks), ``?`` and blanks."""
    n = len(raw)
    i = blanks_end(raw, 0)
    for _ in range(2):
        if i >= n or raw[i] != 91:  # "["
            break
        i = blanks_end(raw, i + 1)
        if i < n and raw[i] == 60:  # "<"
            i += 1
        if i + 2 < n and raw[i] == 48 and raw[i + 1] == 120 and HEX_BYTES[raw[i + 2]]:  # "0x" and a digit
            i += 2
        h = i
        while i < n and HEX_BYTES[raw[i]]:
            i += 1
        if i == h:
            return -1
        if i < n and raw[i] == 62:  # ">"
            i += 1
        if i >= n or raw[i] != 93:  # "]"
            return -1
        i = blanks_end(raw, i + 1)
    marked = 0
    if i < n and raw[i] == 63:  # "?", then a blank or more
        j = blanks_end(raw, i + 1)
        if j == i + 1:
            return -1
        i = j
        marked = 1
    if i >= n or not SYMBOL_START_BYTES[raw[i]]:
        return -1  # a digit, a dot, ...: the patterns' way
    return i * 2 + marked


def blanks_end(raw: bytes, i: int) -> int:
    """Where the run of blanks (``\\s``'s ASCII bytes) from ``raw[i]`` ends."""
    n = len(raw)
    while i < n and BLANK_BYTES[raw[i]]:
        i += 1
    return i


def frame_symbol(body: str) -> tuple[bytes, int, int]:
    """A frame line's bytes, :func:`frame_start` of them and where the symbol ends; a start of -1 when the line
    is past ASCII (its bytes' offsets would not be its characters') or not of the shape the readers read."""
    if not body.isascii():
        return b"", -1, 0
    raw = body.encode()
    start = frame_start(raw)
    return raw, start, symbol_end(raw, start >> 1) if start >= 0 else 0


def symbol_end(raw: bytes, i: int) -> int:
    """Where the symbol that starts at ``raw[i]`` ends."""
    n = len(raw)
    i += 1
    while i < n and SYMBOL_BYTES[raw[i]]:
        i += 1
    return i


def hex_after(raw: bytes, i: int, lead: int) -> int:
    """The end of ``lead`` (a byte), ``0x`` and one hex digit or more at ``raw[i]``; -1 when they are not there."""
    n = len(raw)
    if i + 3 < n and raw[i] == lead and raw[i + 1] == 48 and raw[i + 2] == 120 and HEX_BYTES[raw[i + 3]]:
        i += 4
        while i < n and HEX_BYTES[raw[i]]:
            i += 1
        return i
    return -1


def past_16_digits(start: int, off_end: int, size_end: int) -> bool:
    """Whether ``+0xOFF/0xSIZE`` (from ``start``, ends as :func:`hex_after` finds them) has a number of more than
    16 hex digits: the readers leave such a line to the patterns, which take leading zeros and refuse a number
    past 64 bits (:func:`forensics.units.log_hex`)."""
    return off_end - start - 3 > 16 or size_end - off_end - 3 > 16


def hex_value(raw: bytes, i: int, end: int) -> int:
    """The number the hex digits ``raw[i:end]`` write."""
    value = 0
    while i < end:
        c = raw[i]
        value = value * 16 + (c - 48 if c <= 57 else (c | 32) - 87)
        i += 1
    return value


def read_frame(body: str) -> FrameFields | None:
    """``_frame_fields_by_pattern(body)`` for a line of the common shape, read from its bytes; ``_UNSURE`` else.

    The pattern's way: blanks, columns, ``?`` and blanks (unreliable), a symbol, ``+0x`` hex ``/0x`` hex, then
    maybe blanks and a ``[module]``; the rest of the line is not looked at (a prefix match).  Where the symbol is
    found and no ``+0x`` hex ``/0x`` hex follows it: None, as the patterns say (the symbol can start nowhere else:
    see :func:`_read_frame`).
    """
    fields = _read_frame(body, False)
    return None if fields[2] == _NO_FRAME[2] else fields


def _read_frame(body: str, share: bool) -> FrameFields:
    """:func:`read_frame`; with ``share``, the stacks' reading of the line (:func:`read_stack_frame`) kept in
    :data:`STACK_FIELDS` as well where it is sure, read on from where this reader's ends (the same bytes up to
    there: a distinct frame line is read once for the scan and the report's reading, not twice)."""
    raw, start, e = frame_symbol(body)
    if start < 0:
        return _UNSURE
    s = start >> 1
    # Where frame_start finds a symbol, the frame pattern's symbol starts there too (the columns it passes over and
    # the "?" mark cannot start one, nor be left out for one to start at them), and, as the symbol's bytes hold no
    # "+", it must be followed right there by "+0x" hex "/0x" hex; 32-bit arm's pattern needs a "(" where
    # frame_start finds a symbol.  Without them the line is no frame: "RIP: 0010:f+0x1/0x2", "PC is at f+0x1/0x2"
    # (~7,900 instructions each by the patterns, ~420 distinct lines of the corpus x4).
    off_end = hex_after(raw, e, 43)  # "+0x..."
    if off_end < 0:
        return _NO_FRAME
    size_end = hex_after(raw, off_end, 47)  # "/0x..."
    if size_end < 0:
        return _NO_FRAME
    if past_16_digits(e, off_end, size_end):
        return _UNSURE  # leading zeros the pattern takes, or a number past 64 bits: the patterns decide
    n = len(raw)
    module: str | None = None
    j = blanks_end(raw, size_end)
    if j > size_end and j < n and raw[j] == 91:  # " [module]"
        k = j + 1
        while k < n and MODULE_BYTES[raw[k]]:
            k += 1
        if k > j + 1 and k < n and raw[k] == 93:
            module = body[j + 1 : k]
    symbol = body[s:e]
    reliable = not (start & 1) and not body.endswith(_UNRELIABLE_SUFFIX)
    offset = hex_value(raw, e + 3, off_end)
    size = hex_value(raw, off_end + 3, size_end)
    function = function_name(symbol)
    if share:
        stack = _stack_tail(raw, body, size_end, start, e, offset, size, symbol, function)
        if stack is None or stack[1]:
            remember(STACK_FIELDS, body, stack)
    return (function, symbol, offset, size, module, reliable)


# --- frame lines as the stacks read them -------------------------------------------------------------
# :mod:`detectors.dmesg.stacks` reads a frame line whole (its source place, ``[inline]``, a second module), where
# the scan's frames read a prefix; both readers are here so that the scan's reading of a distinct frame line gives
# the stacks' too (:data:`STACK_FIELDS`), its bytes encoded, its symbol found and its numbers read once.

#: A frame line's fields as the stacks read them: function, symbol, offset, size, module, source, inline, reliable.
StackFields = tuple[str, str, int | None, int | None, str | None, str | None, bool, bool]

#: ``stacks.parse_stack_frame``'s answers by line body (see :data:`LINES_REMEMBERED`), filled by it and by the
#: scan's frame reader (:func:`_frame_fields`), which reads the whole line where it has the common shape.
STACK_FIELDS: Final[dict[str, StackFields | None]] = {}

#: What :func:`read_stack_frame` returns for a line it does not read: the patterns decide.  Told by its empty
#: symbol (compiled, a typed tuple is a C struct, boxed anew where returned: no identity).
_STACK_UNSURE: Final[StackFields] = ("", "", -1, -1, None, None, False, False)
_SUFFIX_MARKS: Final = b"PCLKTUF"  # arm64's "(P)", "(C)", ... after a frame


def read_stack_frame(body: str) -> StackFields | None:
    """``stacks._stack_frame_by_pattern(body)`` for a line of the common shape, read from its bytes;
    ``_STACK_UNSURE`` else.

    The shape (the pattern's, less its corners): blanks, ``[<address>]`` columns, ``?`` and blanks, a symbol, maybe
    ``+0x`` hex ``/0x`` hex, then words apart by blanks up to the end: ``[module]``, a source (``path/file.c:12``,
    ``:12:5``), ``[module]``, ``[inline]``, ``(unreliable)`` or arm64's ``(P)``, each where the pattern's group
    would take it (the first group in the pattern's order that takes a word does: that is the pattern's first way
    through the line).  A word the next groups do not take, a word not apart from the one before, a digit or a dot
    before the symbol, a byte past ASCII: ``_STACK_UNSURE`` (see :func:`read_frame`).  Right after the symbol or
    its offset a byte that is no blank and no ``(``: None, as the patterns say.
    """
    raw, start, e = frame_symbol(body)
    if start < 0:
        return _STACK_UNSURE
    offset: int | None = None
    size: int | None = None
    i = e
    if i < len(raw) and raw[i] == 43:  # "+0x.../0x..."
        off_end = hex_after(raw, i, 43)
        size_end = hex_after(raw, off_end, 47) if off_end >= 0 else -1
        if size_end < 0 or past_16_digits(i, off_end, size_end):
            return _STACK_UNSURE
        offset, size = hex_value(raw, i + 3, off_end), hex_value(raw, off_end + 3, size_end)
        i = size_end
    return _stack_tail(raw, body, i, start, e, offset, size, "", "")


def _stack_tail(
    raw: bytes,
    body: str,
    i: int,
    start: int,
    e: int,
    offset: int | None,
    size: int | None,
    symbol: str,
    function: str,
) -> StackFields | None:
    """:func:`read_stack_frame` from ``raw[i]``, past the symbol (``start``: :func:`frame_start`'s, ``e``: the
    symbol's end) and its offset and size where it has them; ``symbol`` and its ``function`` where the caller made
    them ("" else: made here where the line is a frame)."""
    n = len(raw)
    if i < n and not BLANK_BYTES[raw[i]] and raw[i] != 40:
        # Right after the symbol (or its offset) a byte that neither pattern takes there: the frame pattern's
        # symbol, found where this reader finds it, is followed by a "+0x" offset, a blank, a "(" mark or the end
        # (its offset by a blank, a "(" or the end), and arm's "[<pc>] (" line has no symbol where this reader
        # finds one.  Not a frame: a register line ("RSP: 0018:..."), "kworker/u4:2 ...": ~4,000 of the 5,100
        # distinct lines of the corpus x1's readings this reader left to the patterns (~6,500 instructions each).
        return None
    module: str | None = None
    module2: str | None = None
    source: str | None = None
    inline = False
    slot = 0  # the next group that may take a word: [module] 0, source 1, [module] 2, [inline] 3, a mark 4, none 5
    while True:
        j = blanks_end(raw, i)
        if j == n:
            break
        if j == i or slot == 5:
            return _STACK_UNSURE
        k = j
        while k < n and not BLANK_BYTES[raw[k]]:
            k += 1
        if raw[j] == 91 and raw[k - 1] == 93 and k - j > 2 and _all_in(raw, j + 1, k - 1, MODULE_BYTES):
            name = body[j + 1 : k - 1]
            if slot == 0:
                module, slot = name, 1
            elif slot <= 2:
                module2, slot = name, 3
            elif slot == 3 and name == "inline":
                inline, slot = True, 4
            else:
                return _STACK_UNSURE
        elif slot <= 1 and _is_source(raw, j, k):
            source, slot = body[j:k], 2
        elif (k - j == 3 and raw[j] == 40 and raw[j + 2] == 41 and raw[j + 1] in _SUFFIX_MARKS) or (
            raw[j] == 40 and body[j:k] == "(unreliable)"
        ):
            slot = 5
        else:
            return _STACK_UNSURE
        i = k
    if offset is None and source is None:
        return None  # a bare word is not a frame
    if not symbol:
        symbol = body[start >> 1 : e]
        function = function_name(symbol)
    reliable = not (start & 1) and not body.rstrip().endswith("(unreliable)")
    if (module or module2) == "inline" and not inline:
        module = module2 = None
        inline = True
    return (function, symbol, offset, size, module or module2, source, inline, reliable)


def _all_in(raw: bytes, i: int, end: int, table: bytes) -> bool:
    """Whether every byte of ``raw[i:end]`` is in the class ``table``."""
    while i < end:
        if not table[raw[i]]:
            return False
        i += 1
    return True


def _is_source(raw: bytes, i: int, end: int) -> bool:
    r"""Whether ``raw[i:end]`` is all a source place as the pattern reads it: ``[A-Za-z0-9_\-./]+\.[A-Za-z]+:\d+``,
    maybe ``:\d+`` (the path's run cannot hold the colon, so its dot is the last one before it)."""
    p = i
    while p < end and PATH_BYTES[raw[p]]:
        p += 1
    if p >= end or raw[p] != 58:  # ":"
        return False
    d = p - 1
    while d > i and LETTER_BYTES[raw[d]]:
        d -= 1
    if not (i < d < p - 1 and raw[d] == 46):  # a dot with a byte before it and a letter or more after it
        return False
    for _ in range(2):  # ":12", then maybe ":5"
        q = p + 1
        while q < end and DIGIT_BYTES[raw[q]]:
            q += 1
        if q == p + 1:
            return False
        if q == end:
            return True
        if raw[q] != 58:
            return False
        p = q
    return False


#: What :func:`parse_trace` asks of a line it has not looked at before, as bits: the line opens another stack
#: (:func:`starts_stack`); it holds a text the marker or exception pattern needs (else neither is tried).  With
#: TRACE_FRAME (:func:`is_frame`), what a caller that read the lines before gives for each (``kinds``).  The report
#: builder's own bits for the same (``extract._line_kind``): its answers are given as they stand.
TRACE_OPENS: Final = 32
TRACE_MARK: Final = 128
TRACE_FRAME: Final = 16


def trace_hints(body: str) -> int:
    """:data:`TRACE_OPENS` and :data:`TRACE_MARK` of a line, found here (the report builder gives its own, read
    with the rest of what it knows of the line)."""
    bits = TRACE_OPENS if starts_stack(body) else 0
    if "<" in body or "--- interrupt: " in body or "Exception stack" in body or "irq event stamp" in body:
        bits |= TRACE_MARK
    return bits


def parse_trace(
    lines: Sequence[LogLine],
    start: int,
    hints: Callable[[str], int] = trace_hints,
    kinds: Sequence[int] | None = None,
    stack: str = "task",
) -> tuple[list[Frame], int]:
    """Frames from ``lines[start:]`` up to the next stack start; return them and the index after.

    Non-frame lines (register dumps, ``RIP:`` lines) inside the trace are passed
    over; ``<IRQ>`` and similar markers set the stack of the frames after them.  ``hints``: what
    :func:`trace_hints` says of a line, asked of a line not looked at before (the report builder's answer,
    remembered with the rest of what it read of the line: a dict look-up, not an automaton pass and four ``in``
    tests).  ``kinds``: for each line, its :data:`TRACE_OPENS`, :data:`TRACE_MARK` and :data:`TRACE_FRAME` bits,
    when the caller has them (see :func:`_trace_line_known`).  ``stack``: the stack of the frames before the first
    marker (:func:`stack_at` for a trace read from its middle).
    """
    frames: list[Frame] = []
    i = start
    while i < len(lines):
        line = lines[i]
        what, value = _trace_line(line.body, hints) if kinds is None else _trace_line_known(line.body, kinds[i], hints)
        if what == _STOP:
            break
        if what == _STACK:
            stack = value
        elif what in (_FRAME_LINE, _MARKED_FRAME):  # compared with ==, as the constants are (see below)
            if what == _MARKED_FRAME:
                stack, value = cast("tuple[str, object]", value)  # the stack its marker opens, then the frame
            # The fields and the line's number taken as the objects they are: compiled, an ``int`` read as such is
            # unboxed, then boxed again as a new object in the frame (the offset, the size and the number: ~32,000
            # ints of the shared corpus x1, made and held).
            f = cast("tuple[object, ...]", value)
            number = cast("tuple[object, ...]", line)[0]
            frames.append(_new_tuple(_FRAME_TYPE, (f[0], f[1], f[2], f[3], f[4], f[5], stack, number)))
        i += 1
    return frames, i


def stack_at(
    lines: Sequence[LogLine], start: int, hints: Callable[[str], int] = trace_hints, kinds: Sequence[int] | None = None
) -> str:
    """The stack a frame at ``lines[start]`` is in by the markers above it, back to its trace's start: a trace read
    from its middle (after a rule's anchor: an old x86 stall's "apic_timer_interrupt" frames before ``<EOI>``) is
    not the task's from there on."""
    i = start - 1
    while i >= 0:
        body = lines[i].body
        what, value = _trace_line(body, hints) if kinds is None else _trace_line_known(body, kinds[i], hints)
        if what == _STOP:
            break
        if what == _STACK:
            return cast(str, value)
        if what == _MARKED_FRAME:
            return cast(str, value[0])
        i -= 1
    return "task"


def trace_names(
    lines: Sequence[LogLine],
    start: int,
    names: list[str],
    hints: Callable[[str], int] = trace_hints,
    kinds: Sequence[int] | None = None,
) -> int:
    """The functions of the reliable frames :func:`parse_trace` reads from ``lines[start:]``, appended to
    ``names`` in order, and the index after: its reading without the frames' records (~1,000 instructions each),
    for a caller that wants the names only."""
    i = start
    while i < len(lines):
        body = lines[i].body
        what, value = _trace_line(body, hints) if kinds is None else _trace_line_known(body, kinds[i], hints)
        if what == _STOP:
            break
        if what in (_FRAME_LINE, _MARKED_FRAME):
            # Compared with ==, as the constants are (see below); a marked frame's value is (stack, fields).
            fields = cast("FrameFields", value if what == _FRAME_LINE else value[1])
            if fields[5]:
                names.append(fields[0])
        i += 1
    return i


# What a line is to parse_trace.  Final: compiled, each is a constant where it is read (three look-ups in the
# module's dict a line of every call trace otherwise); compared with ==, which a constant's identity does not decide.
_STOP: Final = "stop"
_STACK: Final = "stack"
_FRAME_LINE: Final = "frame"
_OTHER: Final = "other"
_MARKED_FRAME: Final = "marked frame"  # a marker and a frame on one line: the stack it opens and the frame's fields


#: :func:`_trace_line` by line body.
_TRACE_LINES: Final[dict[str, tuple[str, Any]]] = {}


def _trace_line(body: str, hints: Callable[[str], int] = trace_hints) -> tuple[str, Any]:
    """What a line is inside a trace, and its value: the start of another stack, a marker or exception line and
    the stack it opens, a frame and its fields (:func:`_frame_fields`), or another line.  Remembered: frame lines
    recur from report to report (one look-up a line instead of a stack-start test, two matches and a parse).
    ``hints``: :func:`trace_hints` or a function that gives the same answer."""
    got = _TRACE_LINES.get(body)
    return got if got is not None else remember(_TRACE_LINES, body, _trace_line_of(body, hints))


def _trace_line_known(body: str, bits: int, hints: Callable[[str], int]) -> tuple[str, Any]:
    """:func:`_trace_line` of a line whose bits are known (:data:`TRACE_OPENS`, :data:`TRACE_MARK`,
    :data:`TRACE_FRAME`): a frame's fields are the one look-up, another line needs none (where each line was
    looked up by body in the trace lines' dict, and a line seen first in the hints' and the frames' dicts as well:
    ~10% of the scan's time went to such look-ups, mostly cache misses).  A line with a marker's text is rare: its
    answer is remembered as before."""
    if bits & TRACE_OPENS:
        return _STOP, None
    if bits & TRACE_MARK:
        return _trace_line(body, hints)
    if bits & TRACE_FRAME:
        return _FRAME_LINE, _frame_fields(body)
    return _OTHER, None


def _trace_line_of(body: str, hints: Callable[[str], int] = trace_hints) -> tuple[str, Any]:
    """:func:`_trace_line`, not remembered."""
    bits = hints(body)
    if bits & TRACE_OPENS:
        return _STOP, None
    # Each pattern is tried only on a line holding the text every match of it holds (none: TRACE_MARK unset).
    if bits & TRACE_MARK:
        if "<" in body and (m := _MARKER.match(body)) is not None:
            opening, name = m.group(1) == "", m.group(2).lower()
            stack = (name if name not in _BACK_TO_TASK else "task") if opening else "task"
            fields = _frame_fields(body[m.end() :]) if m.end() < len(body) else None
            return (_STACK, stack) if fields is None else (_MARKED_FRAME, (stack, fields))
        if ("--- interrupt: " in body or "Exception stack" in body or "irq event stamp" in body) and _EXCEPTION.match(
            body
        ):
            return _STACK, "exception"
    fields = _frame_fields(body)
    return (_OTHER, None) if fields is None else (_FRAME_LINE, fields)


# --- skip lists -------------------------------------------------------------------------------
# Each entry is a regular expression searched in the function name.  A frame whose function
# matches is infrastructure: it reports, locks, allocates, copies or dispatches, and the bug is
# in a caller.  Grouped by subject so that a rule can add its own on top.

SKIP_SANITIZERS = ("__sanitizer", "__asan", "hwasan", "kasan", "__msan", "kmsan", "kcsan", "ubsan", "kfence",
                   "check_memory_region", "read_word_at_a_time", "print_address_description",
                   "__kcov", "instrument_")  # fmt: skip
SKIP_REPORTING = ("panic", "invalid_op", "report_bug", "fixup_bug", "do_error", "do_trap", "error_trap", "^trap_",
                  "_trap$", "dump_stack", "^print_\\w+_bug", "check_noncircular", "check_prevs?_add", "validate_chain",
                  "print_tainted", "local_bh_enable",
                  "show_stack", "warn_slowpath", "warn_alloc", "__warn", "debug_object", "timer_is_static_object",
                  "work_is_static_object", "handle_bug", "exc_invalid_op", "asm_exc_", "^die$", "^__die", "^oops_",
                  "^bug$", "^__bug$", "__might_resched", "__might_sleep", "___might_sleep", "__cant_sleep",
                  "program_check_exception", "program_check_common", "^do_trap", "^brk_handler",
                  "el1h_64_sync", "el1_abort", "el1_dbg", "^bug_handler", "^call_break_hook", "check_heap_object",
                  "check_object", "walk_stack", "imbalance_bug", "print_unlock", "hex_dump", "^get_taint$",
                  # lockdep's IRQ-safety checker and KASAN's reporter, printing their own report (not the task's)
                  "^check_irq_usage", "^check_usage", "^print_bad_irq_dependency", "^end_report$",
                  "^start_report$")  # fmt: skip
SKIP_LOCKING = ("lockdep", "lock_acquire", "lock_release", "lock_class", "reacquire_held_locks", "spin_lock",
                "spin_trylock", "spin_unlock", "raw_read_lock", "raw_read_trylock", "raw_write_lock",
                "raw_write_trylock", "^down$", "^down_", "^__down", "up_read", "up_write", "mutex_lock",
                "mutex_trylock", "mutex_unlock", "mutex_remove_waiter", "osq_lock", "osq_unlock",
                "rwsem_down", "rwsem_wake", "rt_mutex", "seqcount_lockdep", "^_raw_", "^__raw_",
                "^do_raw_", "queued_spin", "queued_read", "queued_write", "native_queued", "ww_mutex", "bh_enable",
                "bh_disable", "mark_lock", "held_locks", "raw_spin_rq", "(?:read|write)_(?:try)?lock",
                "(?:read|write)_unlock", "^_*mutex_", "owner_on_cpu", "^(?:un)?lock_page")  # fmt: skip
# Atomic and bit operations: they only touch the memory the caller gave them.
SKIP_ATOMICS = ("^_*atomic(?:64|_long)?_(?:dec|inc|read|set|or|xor|and|add|sub|fetch|xchg|cmpxchg|try)",
                "(?:set|clear|change|test)_bit", "^kref_", "^refcount_", "(?:read|write)_once_.*nocheck")  # fmt: skip
#: Printing helpers: they format what the caller asked to print.
SKIP_PRINTING = ("^_*printk", "^vprintk", "^console_(?:unlock|flush)", "^_*dev_printk",
                 "^_dev_(?:info|notice|warn|err|alert|crit|emerg)$", "^netdev_(?:info|notice|warn|err|printk)$",
                 "^pr_cont", "^_*warn_printk")  # fmt: skip
#: Page-owner and stack-depot bookkeeping: they record the allocation, the allocator's caller made it.
#: Not the stack depot itself: a crash inside it (a corrupted free list) is its own (syzbot titles it there), and
#: page-owner stacks reach it through set_page_owner, skipped above it.
SKIP_PAGE_OWNER = ("^_*set_page_owner", "^_*reset_page_owner", "^stack_trace_save",
                   "^save_stack$", "^prep_new_page$", "^post_alloc_hook$")  # fmt: skip
#: Sanitizer internals beyond the names with the sanitizer in them.
SKIP_SANITIZER_INTERNALS = ("^memory_is_poisoned", "^check_region_inline", "^__check_object_size",
                            "^check_stack_object", "^__tsan_", "^__hwasan_")  # fmt: skip
#: Library leaf functions: bit and checksum helpers that work on what the caller passed.
SKIP_LIBRARY = ("^_*find_(?:first|next|last)_(?:zero_)?bit", "^csum_partial", "^_*bitmap_", "^sort_r?$", "^bsearch$",
                "^_*sw_hweight", "^strncpy_from_user$", "^strnlen_user$", "^memcpy_(?:to|from)io$",
                "^__memcpy", "^__memset", "^__memmove")  # fmt: skip
#: Workqueue and kthread plumbing on the queueing side: it hands work to another context (the
#: frames that run the work, process_one_work and kthread, are the stall and hang extractors'
#: dispatch points and name the crash site when the crash is in them, so they are not skipped).
SKIP_WORKQUEUE = ("^_*queue_work", "^insert_work$", "^_*queue_delayed_work", "^mod_delayed_work", "^kthread_queue_work",
                  "^kthread_create", "^_*kthread_create_on_node", "^wake_up_process$", "^try_to_wake_up$",
                  "^_*schedule_work$", "^schedule_delayed_work")  # fmt: skip
SKIP_TRACING = ("perf_trace", "(?:trace|lockdep)_(?:hard|soft)irqs?", "^__traceiter")
SKIP_WAKE = ("__wake_up", "^complete$", "wait_for_completion", "finish_wait")
SKIP_REFCOUNT = ("refcount_add", "refcount_sub", "refcount_inc", "refcount_dec", "refcount_set",
                 "refcount_read", "refcount_warn")  # fmt: skip
SKIP_STRINGS = ("memcpy", "memcmp", "memset", "memchr", "memmove", "strcmp", "strncmp", "strcpy", "strlcpy",
                "strncpy", "strscpy", "strlen", "strnstr", "strnlen", "strchr", "string", "pointer", "snprintf",
                "scnprintf", "kasprintf", "kvasprintf", "printk", "va_format", "^vsprintf",
                "^dev_(?:info|notice|warn|err|alert|crit|emerg|printk)", "_indirect_thunk_",
                "^__x86_return_thunk", "strstr", "strn?dup")  # fmt: skip
SKIP_USERCOPY = ("copy_to_user", "copy_from_user", "put_user", "get_user", "might_fault", "might_sleep",
                 "copy_(?:to|from)_iter", "copy_(?:page|folio)_(?:to|from)_iter", "copy_user_", "^copyin$",
                 "^copyout$")  # fmt: skip
SKIP_LISTS = ("list_add", "list_del", "list_replace", "list_move", "list_splice", "__list_", "^_*rb_", "^klist_",
              "^xas_", "^xa_", "^idr_", "^test_and_(?:set|clear)_bit", "^crc", "^skb_(?:put|push|pull)$",
              "^skb_(?:over|under)_panic")  # fmt: skip
#: Generic helpers that check their callers' use (a WARN in drop_nlink is a bug of the file system calling it).
#: arm64's el1_* exception entry is fault plumbing, but not el1_interrupt: the IRQ entry a hung task was preempted
#: in is where syzbot names it ("INFO: task hung in el1_interrupt").
SKIP_HELPERS = ("^(?:drop|inc|clear|set)_nlink$", "^mark_buffer_dirty", "^(?:fast_)?dput$", "^iput", "ref_tracker",
                "assert_?fail", "^folio_(?:unlock|put|lock)$", "^warn_", "dump_backtrace", "walk_stackframe",
                "stack_trace_", "arch_stack_walk", "^unwind_", "print_report", "show_regs", "^_*queue_work",
                "^insert_work", "atomic_dec_and", "lock_timer_base", "mutex_optimistic_spin", "find_lock_entries",
                "copy_page_(?:to|from)_iter", "^_*do_kernel_fault", "^do_mem_abort", "^do_tag_check_fault",
                "^do_bad_area", "^do_translation_fault", "^do_debug_exception", "^do_slb_fault", "^el1_(?!interrupt)",
                "fortify", "queue_delayed_work", "truncate_inode_pages", "mod_timer", "^add_timer",
                "task_rq_lock", "_common$", "^logic_(?:in|out)", "^ihold$", "cleanup_srcu_struct",
                "rhashtable_lookup", "extract_(?:user|iter)_to_sg", "__phys_addr", "seqprop_assert",
                "^(?:read|write)[bwlq]$", "dput$")  # fmt: skip
SKIP_ALLOCATORS = ("^kfree", "kfree_skb", "free_large_kmalloc", "^_*alloc_pages", "^_*alloc_frozen_pages",
                   "^_*kmem_cache_alloc", "^_*kmalloc", "^_*kmem_cache_free", "slab_free", "_noprof$", "^kvfree",
                   "^_*kvmalloc", "^_*vmalloc", "^v[zm]alloc", "^_*kvzalloc", "^memdup", "^kstrdup",
                   "^kmemdup", "alloc_page", "^k?v?[mzc]alloc", "krealloc", "kmem_cache", "allocate_slab", "slab_",
                   "^_*folio_alloc", "filemap_alloc_folio", "filemap_get_folio", "find_or_create_page",
                   "read_cache_page", "do_read_cache_folio", "pagecache_get_page", "grab_cache_page")  # fmt: skip
SKIP_DEVICE_CORE = ("del_timer", "flush_work", "__cancel_work_timer", "cancel_work_sync", "try_to_grab_pending",
                    "flush_workqueue", "drain_workqueue", "destroy_workqueue", "kthread_stop", "kobject_del",
                    "kobject_put", "kobject_uevent_env", "add_uevent_var", "get_device_parent", "device_add",
                    "device_del", "device_unregister", "device_destroy", "device_release", "devres_release_all",
                    "hwrng_unregister", "i2c_del_adapter", "__unregister_client", "device_for_each_child",
                    "rollback_registered", "unregister_netdev", "sysfs_remove", "device_remove_file",
                    "tty_unregister_device", "dummy_urb_enqueue", "usb_kill_urb", "usb_kill_anchored_urbs",
                    "usb_control_msg", "usb_hcd_submit_urb", "usb_submit_urb", "kobject_", "queue_work",
                    "^put_device$", "ida_free", "timer_delete_sync", "sk_stop_timer_sync")  # fmt: skip

#: The skip list every rule starts from.
BASE_SKIP: tuple[str, ...] = (
    SKIP_SANITIZERS
    + SKIP_SANITIZER_INTERNALS
    + SKIP_REPORTING
    + SKIP_PRINTING
    + SKIP_PAGE_OWNER
    + SKIP_LIBRARY
    + SKIP_WORKQUEUE
    + SKIP_LOCKING
    + SKIP_TRACING
    + SKIP_WAKE
    + SKIP_REFCOUNT
    + SKIP_ATOMICS
    + SKIP_STRINGS
    + SKIP_USERCOPY
    + SKIP_LISTS
    + SKIP_ALLOCATORS
    + SKIP_DEVICE_CORE
    + SKIP_HELPERS
)


class SkipMatcher:
    """The base skip list and a rule's own entries: ``search(name)`` is truthy when either matches.

    The base list (~350 patterns) is matched once per function name for all rules and stack sections
    (:func:`_base_skipped`), not once per rule with its few entries appended.
    """

    __slots__ = ("_extra", "_names")

    def __init__(self, extra: tuple[str, ...]) -> None:
        self._extra = rc.compile("|".join(f"(?:{p})" for p in extra)) if extra else None
        self._names: dict[str, bool] = {}  # skipped()'s answers by name (see LINES_REMEMBERED)

    def search(self, name: str) -> bool:
        """Whether the function ``name`` is infrastructure (a match anywhere in it, as ``re.search``)."""
        return _base_skipped(name) or (self._extra is not None and self._extra.search(name) is not None)

    def skipped(self, name: str) -> bool:
        """:meth:`search`, remembered by name: the functions of a log's stacks recur from report to report."""
        got = self._names.get(name)
        return got if got is not None else remember(self._names, name, self.search(name))


def required_text(pattern: str, flags: int = 0) -> str:
    """The longest run of plain characters that every match of ``pattern`` holds, or "" when none is found.

    A run of literal characters at the top level of the pattern's concatenation is matched as it stands by every
    match (its start, or further in: lockdep's ``(?:WARNING|INFO): possible
    circular locking dependency detected`` holds ``: possible circular ...``).  Read from the pattern's text: a
    group, a class, an escape of a letter or digit, ``.``, ``^`` or ``$`` ends a run; a quantified character is
    dropped from it (kept, and the run ended, after ``+``); an alternation at the top level, or a flag that changes
    what a character matches (case, verbose), gives "".
    """
    if flags & (re.IGNORECASE | re.VERBOSE) or re.search(r"\\[xuUN0-9]", pattern):
        return ""  # a character matched other than as written (a code, a back reference): no run read here
    runs: list[str] = []
    run: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n and not pattern[i + 1].isalnum():
            run.append(pattern[i + 1])  # an escaped mark stands for itself
            i += 2
            continue
        if c in "*?{":
            if run:
                run.pop()  # optional or repeated: not in every match as written
            i = _past_quantifier(pattern, i)
            if i < 0:
                return ""
        elif c == "+":
            i += 1  # the character before is there at least once; the run ends after it
        elif c == "|":
            return ""  # an alternation at the top level: no text every match holds
        elif c == "(":
            i = _past_group(pattern, i)
        elif c == "[":
            i = _past_class(pattern, i)
        elif c in ".^$)]}\\":
            i += 2 if c == "\\" else 1  # an escaped letter is a class or an anchor
        else:
            run.append(c)
            i += 1
            continue
        runs.append("".join(run))
        run = []
    runs.append("".join(run))
    return max(runs, key=len)


_REPEAT: Final = rc.compile(r"\{\d*(?:,\d*)?\}")


def _past_quantifier(pattern: str, i: int) -> int:
    """Where the quantifier at ``pattern[i]`` (``*``, ``?``, ``{m,n}``, maybe lazy) ends; -1 for a ``{`` that is no
    repeat (the regex engine reads it as itself: what follows is not read here)."""
    if pattern[i] == "{":
        m = _REPEAT.match(pattern, i)
        if m is None:
            return -1
        i = m.end() - 1
    i += 1
    return i + 1 if i < len(pattern) and pattern[i] in "?+" else i


def _past_class(pattern: str, i: int) -> int:
    """Where the character class at ``pattern[i]`` (``[``) ends."""
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a leading "]" is a member
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _past_group(pattern: str, i: int) -> int:
    """Where the group at ``pattern[i]`` (``(``) ends, its nested groups, classes and escapes passed over."""
    depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _past_class(pattern, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


class _BaseSkip(NamedTuple):
    """:data:`BASE_SKIP` taken apart: what ``re.search`` of the patterns' alternation says, found faster.

    Of the ~350 patterns, ~290 are plain text: anywhere in the name (one Aho-Corasick pass), at its start
    (``^text``: ``str.startswith``), at its end (``text$``) or the whole name (``^text$``); function names
    hold no newline, so ``^`` and ``$`` mean just that.  The other patterns stay regexes: those that begin
    with ``^`` one ``match`` at the start, the rest one ``search``.  A search of the whole alternation took
    20-60 us for a name it does not match (every branch is tried at every character), ~2 us now.  Of these,
    the patterns with a text every match holds (:func:`required_text`) are tried only on a name holding one of
    their texts: the same automaton pass finds them (after the plain patterns, ``hinted`` of them those of the
    ``^`` patterns); the search of the others, ~1 us a name, was half of a distinct name's look-up.
    """

    anywhere: Any  # ahocorasick_rs.AhoCorasick of the plain patterns, then the regex patterns' texts
    plain: int  # how many of its patterns are the plain ones
    hinted: int  # then how many are the texts of the ``^`` patterns (the rest the others')
    starts: dict[str, tuple[str, ...]]  # the texts of the ``^text`` patterns by their first ``head`` characters
    head: int  # the length of the shortest of them
    ends: tuple[str, ...]
    whole: frozenset[str]
    at_start: re.Pattern[str] | None  # the ``^`` patterns with a text, without the ``^``: tried at the start only
    at_start_always: re.Pattern[str] | None  # those without one
    other: re.Pattern[str] | None  # the other patterns with a text: searched
    other_always: re.Pattern[str] | None  # those without one


_REGEX_CHARS = frozenset(".^$*+?{}[]\\|()")


def _alternation(patterns: list[str]) -> re.Pattern[str] | None:
    """The patterns as one alternation (None for none)."""
    return rc.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None


@functools.cache
def _base_skip() -> _BaseSkip:
    anywhere: list[str] = []
    starts: list[str] = []
    ends: list[str] = []
    whole: set[str] = set()
    at_start: list[str] = []
    other: list[str] = []
    for pattern in BASE_SKIP:
        first = pattern.startswith("^")
        last = pattern.endswith("$") and not pattern.endswith("\\$")
        text = pattern[1 if first else 0 : -1 if last else None]
        if _top_level_bar(pattern):
            other.append(pattern)  # "^a|b": the anchor holds for the first branch only
        elif not text or any(c in _REGEX_CHARS for c in text):
            (at_start if first else other).append(pattern[1:] if first else pattern)
        elif first and last:
            whole.add(text)
        elif first:
            starts.append(text)
        elif last:
            ends.append(text)
        else:
            anywhere.append(text)
    texts: list[str] = []
    split: list[tuple[list[str], list[str]]] = []
    for group in (at_start, other):
        hinted: list[str] = []
        always: list[str] = []
        for pattern in group:
            text = required_text(pattern)
            (hinted if text else always).append(pattern)
            if text:
                texts.append(text)
        split.append((hinted, always))
    head = min((len(text) for text in starts), default=0)
    return _BaseSkip(
        AhoCorasick([*anywhere, *texts], matchkind=MatchKind.Standard),
        len(anywhere),
        len(split[0][0]),
        _by_head(starts, head),
        head,
        tuple(ends),
        frozenset(whole),
        _alternation(split[0][0]),
        _alternation(split[0][1]),
        _alternation(split[1][0]),
        _alternation(split[1][1]),
    )


def _by_head(texts: list[str], head: int) -> dict[str, tuple[str, ...]]:
    """``texts`` (none shorter than ``head``) by their first ``head`` characters: a name starts with one of them
    only if it starts with one of those under its own first ``head`` characters (one ``startswith`` of a tuple of
    the ~56 texts was ~4,800 instructions a name, a look-up and a test of the few under its head ~400)."""
    out: dict[str, list[str]] = {}
    for text in texts:
        out.setdefault(text[:head], []).append(text)
    return {key: tuple(group) for key, group in out.items()}


def _top_level_bar(pattern: str) -> bool:
    """Whether a pattern has a ``|`` outside parentheses and classes."""
    return len(_branches(pattern)) > 1


@functools.lru_cache(maxsize=65536)
def _base_skipped(name: str) -> bool:
    """Whether a function name matches the base skip list (cached: a name is met in many reports and stacks)."""
    base = _base_skip()
    if name in base.whole or name.startswith(base.starts.get(name[: base.head], ())) or name.endswith(base.ends):
        return True
    # Overlapping: every pattern held is found, a plain one (a match) not hidden by a text that overlaps it.
    at_start = other = False
    for index, _, _ in base.anywhere.find_matches_as_indexes(name, overlapping=True):
        if index < base.plain:
            return True
        if index < base.plain + base.hinted:
            at_start = True
        else:
            other = True
    return (
        (at_start and base.at_start is not None and base.at_start.match(name) is not None)
        or (base.at_start_always is not None and base.at_start_always.match(name) is not None)
        or (other and base.other is not None and base.other.search(name) is not None)
        or (base.other_always is not None and base.other_always.search(name) is not None)
    )


#: :func:`skip_matcher`'s matchers by their entries (tuples of the code's skip lists, never of input).
_MATCHERS: Final[dict[tuple[str, ...], SkipMatcher]] = {}


def skip_matcher(extra: tuple[str, ...]) -> SkipMatcher:
    """The matcher for the base skip list plus a rule's own entries (one per entries: its answers are kept).

    A dict, not ``functools.cache``: compiled, a look-up in it is a native one, where a call of the cache went
    through the interpreter's call protocol.
    """
    got = _MATCHERS.get(extra)
    return got if got is not None else _MATCHERS.setdefault(extra, SkipMatcher(extra))


def is_skipped(extra: tuple[str, ...], name: str) -> bool:
    """Whether a function is infrastructure for a rule with these extra skips (remembered: names repeat).

    A caller that tests the names of a stack one after another takes :func:`skip_matcher` once and asks its
    :meth:`SkipMatcher.skipped` of each (the ``extra`` tuple hashed once, not once a name: ~1,500 instructions a
    name through ``functools.lru_cache``, ~100 a look-up in the matcher's dict).
    """
    return skip_matcher(extra).skipped(name)


# --- extractors for stalls and hangs ----------------------------------------------------------
# A stall or lockup is caught at a random point of a loop, so the top frame differs between
# reports of one bug.  The frame just above a known dispatch point (syscall entry, workqueue,
# timer, softirq) names the operation that loops.
STALL_ANCHORS = rc.compile(
    r"process_one_work|do_syscall_|do_fast_syscall_|sysenter_dispatch|tracesys_phase2|netif_receive_skb|"
    r"do_softirq|call_timer_fn|_run_timers|run_timer_softirq|run_ksoftirqd|smpboot_thread_fn|^kthread$|"
    r"start_secondary|cpu_startup_entry|ret_from_fork|vfs_write|vfs_read|vfs_iter_read|vfs_iter_write|"
    r"tasklet_action|tasklet_hi_action|new_sync_read|new_sync_write|invoke_syscall|el0_svc|ret_fast_syscall|"
    r"hrtimer_run|^netlink_dump|^(?:sys_)?(?:socketpair|connect|ioctl|setsockopt|listen|accept)$|"
    r"do_iter_read|do_iter_write|vfs_ioctl|ksys_ioctl|compat_ioctl|compat_sys_ioctl|blkdev_driver_ioctl|"
    r"blkdev_ioctl|^call_read_iter|^call_write_iter|do_iter_readv_writev|^call_mmap|mmap_region|do_mmap|"
    r"do_dentry_open|vfs_open|^sock_sendmsg|^sock_recvmsg|^sock_release|^__sock_release|__sys_setsockopt|"
    r"kernel_setsockopt|sock_common_setsockopt|__sys_listen|kernel_listen|sk_common_release|^sock_mmap|"
    r"__sys_accept|kernel_accept|^sock_do_ioctl|^sock_ioctl|^compat_sock_ioctl|^nfnetlink_rcv_msg|"
    r"^rtnetlink_rcv_msg|^(?:compat_)?(?:SYSC|SyS|__sys|___sys|__do_sys|__se_sys|__x64_sys)_(?:socketpair|connect|ioctl)|"
    r"__fput|task_work_run|exit_to_usermode|"
    r"smp_call_function"
)

# Hung tasks wait on someone else; these waits say on what, and group hangs on one cause.
_HUNG_ANCHORS = (("rtnl_lock", None), ("synchronize_rcu", "synchronize_rcu"), ("synchronize_srcu", "synchronize_rcu"),
                 ("synchronize_net", "synchronize_rcu"), ("synchronize_sched", "synchronize_rcu"))  # fmt: skip
_HUNG_SKIP = rc.compile(
    # "wait" but not "waiter": a task named for waiting is the code under test, not a wait primitive.
    r"sched|_lock|_slowlock|^_*down|rwsem|completion|^kthread|wait(?!er)|"
    r"synchronize|context_switch|__switch_to|cancel_delayed_work|rcu_barrier|flush_work|"
    r"cancel_work|ret_from_fork"
)


#: A switched-out task's stack starts in the scheduler: the frames of the switch itself (skips, for the first frame of
#: such a stack that is the task's own).
SWITCHED_OUT = ("^__switch_to", "^context_switch$", "^_*schedule(?:_loop|_timeout|_preempt_disabled)?$",
                "^preempt_schedule", "^schedule_hrtimeout")  # fmt: skip
#: The NMI backtrace machinery a CPU's dump starts with (khungtaskd's "NMI backtrace for cpu N"): the dumping
#: CPU's own frame is the one that asked for the dump (check_hung_uninterruptible_tasks).
NMI_BACKTRACE = ("^nmi_cpu_backtrace$", "^nmi_trigger_cpumask_backtrace$", "^_*trigger_(?:all|single)_cpu_backtrace",
                 "^arch_trigger_cpumask_backtrace$")  # fmt: skip
#: A hung task's report: the switch and the waits, the frames a hung task's title skips (as one skip pattern), and
#: khungtaskd's own NMI backtrace.
HUNG_SKIPS = (*SWITCHED_OUT, _HUNG_SKIP.pattern, *NMI_BACKTRACE)


#: Whether :data:`STALL_ANCHORS` is in a function name, by name (see ``LINES_REMEMBERED``): the stalls of one kernel
#: pass through the same dispatch points, and the pattern, an alternation, is tried at every character (~10,000
#: instructions a name: 25 M of the corpus x4, ~2,400 names of 80 stalls).
_ANCHORED: Final[dict[str, bool]] = {}


def _branches(pattern: str) -> list[str]:
    """The top-level branches of an alternation (``|`` outside parentheses and classes)."""
    out: list[str] = []
    depth = start = 0
    escaped = in_class = False
    for i, c in enumerate(pattern):
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c in "()":
            depth += 1 if c == "(" else -1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    out.append(pattern[start:])
    return out


class _StallSplit(NamedTuple):
    """:data:`STALL_ANCHORS` taken apart, as :class:`_BaseSkip` takes the skip list: its plain texts found anywhere
    in one automaton pass, its ``^`` branches (which can match at the start only) one ``match``, any other branch a
    ``search`` (none now).  ``search`` of the whole alternation took ~34,000 instructions a distinct name (~9 M of the
    shared corpus x1's scan: each branch tried at every character), the parts ~5,000."""

    texts: Any  # ahocorasick_rs.AhoCorasick of the plain texts
    at_start: re.Pattern[str] | None
    other: re.Pattern[str] | None


@functools.cache
def _stall_split() -> _StallSplit:
    branches = _branches(STALL_ANCHORS.pattern)
    texts = [b for b in branches if b and not any(c in _REGEX_CHARS for c in b)]
    at_start = [b for b in branches if b.startswith("^") and b not in texts]
    other = [b for b in branches if b not in texts and b not in at_start]
    return _StallSplit(
        AhoCorasick(texts, matchkind=MatchKind.LeftmostFirst), _alternation(at_start), _alternation(other)
    )


def _stall_anchor(name: str) -> bool:
    """Whether :data:`STALL_ANCHORS` is found in the function ``name`` (remembered)."""
    got = _ANCHORED.get(name)
    if got is not None:
        return got
    split = _stall_split()
    found = (
        bool(split.texts.find_matches_as_indexes(name))
        or (split.at_start is not None and split.at_start.match(name) is not None)
        or (split.other is not None and split.other.search(name) is not None)
    )
    return remember(_ANCHORED, name, found)


def stall_frame(functions: Sequence[str]) -> str | None:
    """The frame just above the first dispatch point, or None when there is none."""
    if not functions:
        return None
    prev = functions[0]
    for name in functions:
        if _stall_anchor(name):
            if "smp_call_function" in name:
                prev = "smp_call_function"
            return prev  # the caller normalises system call names (title_name), once
        prev = name
    return None


def hung_frame(functions: Sequence[str]) -> str | None:
    """The wait a hung task is stuck in, grouped by cause; None when every frame is generic."""
    for name in functions:
        for anchor, replacement in _HUNG_ANCHORS:
            if anchor in name:
                return replacement or name
    for name in functions:
        if not _HUNG_SKIP.search(name):
            return name
    return None
