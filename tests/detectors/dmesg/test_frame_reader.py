"""Frame lines read from their bytes (``frames.read_frame``, ``stacks.read_stack_frame``) say what the patterns say.

Each reader handles the shape nearly every frame line has and answers ``_UNSURE`` (an empty symbol) for any
other line, which the frame patterns then read: so wherever a reader answers, its answer must be the
pattern's (``_frame_fields_by_pattern``, ``_stack_frame_by_pattern``), on the project's logs, on made corners and
on lines made of frame pieces at random; and it must answer for most frame lines, or it would only cost time.
The compiled readers are compared with their source in ``test_native.py`` (made frame lines there).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg import frames, stacks
from detectors.dmesg.lines import LogLine, decode, parse_line
from tests.vmcore_cases import console_logs

HERE = Path(__file__).parent

Reader = Callable[[str], object]
READERS: list[tuple[Reader, Reader]] = [
    (frames.read_frame, frames._frame_fields_by_pattern),
    (stacks.read_stack_frame, stacks._stack_frame_by_pattern),
]


def _unsure(got: object) -> bool:
    return isinstance(got, tuple) and not got[1]


def _bodies() -> list[str]:
    """Every distinct line body of the project's dmesg test logs and fixture consoles."""
    paths = [*sorted(HERE.glob("golden/*.log")), *sorted(HERE.glob("corpora/**/*.log")), *console_logs()]
    bodies: set[str] = set()
    for path in paths:
        for raw in path.read_bytes().split(b"\n"):
            bodies.add(parse_line(1, decode(raw)).body)
    return sorted(bodies)


def test_the_readers_say_what_the_patterns_say_on_every_line_of_the_test_logs() -> None:
    bodies = _bodies()
    assert len(bodies) > 3000
    for read, by_pattern in READERS:
        frames_read = frames_seen = 0
        for body in bodies:
            got, meant = read(body), by_pattern(body)
            if meant is not None:
                frames_seen += 1
            if _unsure(got):
                continue
            assert got == meant, body
            frames_read += meant is not None
        # Nearly every frame line of these logs has the shape the readers read (arm's "(f) from [<lr>]" has not).
        assert frames_seen > 1000 and frames_read > 0.9 * frames_seen, (read.__name__, frames_read, frames_seen)


def test_the_scans_reading_of_a_frame_line_is_the_stacks_reading_of_it() -> None:
    # The scan's frame reader (frames._frame_fields) keeps the stacks' reading of each line it reads whole
    # (frames.STACK_FIELDS), which stacks.parse_stack_frame then gives without reading the line again: it must be
    # what the stacks' own reader and their patterns say, and be kept for nearly every frame line.
    bodies = _bodies()
    frames._FIELDS.clear()
    frames.STACK_FIELDS.clear()
    shared = 0
    for body in bodies:
        frames._frame_fields(body)
        got = frames.STACK_FIELDS.pop(body, frames.ABSENT)
        if got is not frames.ABSENT:
            shared += got is not None
            assert got == stacks.read_stack_frame(body) == stacks._stack_frame_by_pattern(body), body
    frames._FIELDS.clear()
    assert shared > 0.9 * sum(stacks._stack_frame_by_pattern(b) is not None and "+0x" in b for b in bodies)


def _log_lines() -> list[list[LogLine]]:
    """The parsed lines of each of the project's dmesg test logs."""
    paths = [*sorted(HERE.glob("golden/*.log")), *sorted(HERE.glob("corpora/**/*.log"))]
    return [[parse_line(n, decode(raw)) for n, raw in enumerate(p.read_bytes().split(b"\n"), 1)] for p in paths]


def test_the_names_of_a_trace_are_its_reliable_frames_functions() -> None:
    # frames.trace_names reads what parse_trace reads, without the frames' records: the same functions, the same end.
    for lines in _log_lines():
        for start in range(0, len(lines), 5):
            names: list[str] = []
            got, end = frames.parse_trace(lines, start)
            assert frames.trace_names(lines, start, names) == end
            assert names == [f.function for f in got if f.reliable]


def test_the_first_function_past_the_skips_is_the_guilty_frame_of_the_first_extractor() -> None:
    # extract.first_unskipped (a stall's culprit) is guilty_frame with the "first" extractor, its frames not made.
    from detectors.dmesg.extract import first_unskipped, guilty_frame
    from detectors.dmesg.rules import RULES

    specs = {rule.stack for rule in RULES if rule.stack is not None}
    found = 0
    for lines in _log_lines():
        for spec in specs:
            first = first_unskipped(lines, spec)
            assert first == guilty_frame(lines, spec._replace(extractor="first"))[0]
            found += first is not None
    assert found > 100


@pytest.mark.parametrize(
    ("body", "fields", "stack_fields"),
    [
        (" kasan_report+0x12/0x340", ("kasan_report", "kasan_report", 0x12, 0x340, None, True),
         ("kasan_report", "kasan_report", 0x12, 0x340, None, None, False, True)),
        ("\t ? __x64_sys_ioctl+0x18F/0x210 [kf_buggy] fs/ioctl.c:856",
         ("__x64_sys_ioctl", "__x64_sys_ioctl", 0x18F, 0x210, "kf_buggy", False),
         ("__x64_sys_ioctl", "__x64_sys_ioctl", 0x18F, 0x210, "kf_buggy", "fs/ioctl.c:856", False, False)),
        ("    [<000000005ec5fd9f>] do_syscall_64+0x7c/0x180",
         ("do_syscall_64", "do_syscall_64", 0x7C, 0x180, None, True),
         ("do_syscall_64", "do_syscall_64", 0x7C, 0x180, None, None, False, True)),
        ("[c000000010f93a50] [d0000000008d3b64] ipr_init+0x5c/0x74 [ipr] (unreliable)",
         ("ipr_init", "ipr_init", 0x5C, 0x74, "ipr", False),
         ("ipr_init", "ipr_init", 0x5C, 0x74, "ipr", None, False, False)),
        # "[inline]" where the pattern's module group takes it: no module, an inlined frame.
        (" __do_sys_ioctl fs/ioctl.c:871 [inline]", None,
         ("ioctl", "__do_sys_ioctl", None, None, None, "fs/ioctl.c:871", True, True)),
        (" f+0x1/0x2 [inline]", ("f", "f", 1, 2, "inline", True), ("f", "f", 1, 2, None, None, True, True)),
        (" el1_abort+0x40/0x6c arch/arm64/kernel/entry-common.c:432:5 (P)",
         ("el1_abort", "el1_abort", 0x40, 0x6C, None, True),
         ("el1_abort", "el1_abort", 0x40, 0x6C, None, "arch/arm64/kernel/entry-common.c:432:5", False, True)),
        ("  vfs_ioctl", None, None),  # a bare word: the pattern matches, then it is no frame
    ],
)  # fmt: skip
def test_made_frame_lines_are_read(body: str, fields: object, stack_fields: object) -> None:
    if fields is None:
        assert frames.read_frame(body) is None and frames._frame_fields(body) is None
    else:
        assert frames.read_frame(body) == fields == frames._frame_fields_by_pattern(body)
    assert stacks.read_stack_frame(body) == stack_fields == stacks._stack_frame_by_pattern(body)


@pytest.mark.parametrize(
    "body",
    [
        "",
        " ?foo+0x1/0x2",  # no blank after the mark
        " .foo+0x1/0x2",  # ppc64's dot before the symbol
        " 12:foo+0x1/0x2",
        " foo+0x1/0x",  # a size with no digit
        " fóo+0x1/0x2",  # past ASCII
        " foo+0x1/0x2\u2003[m]",  # a blank past ASCII, which \s takes
        " [<zz>] foo+0x1/0x2",
        " foo+0x1/0x2 x.c:12a",
        " foo+0x1/0x2(unreliable)",  # a word not apart from the one before: the stack reader's pattern decides
        "[<8011218c>] (unwind_backtrace) from [<8010e300>] (show_stack+0x18/0x1c)",  # 32-bit arm
    ],
)
def test_a_line_not_of_the_shape_is_left_to_the_patterns(body: str) -> None:
    assert _unsure(stacks.read_stack_frame(body))
    assert stacks.parse_stack_frame(body) == stacks._stack_frame_by_pattern(body)
    assert frames._frame_fields(body) == frames._frame_fields_by_pattern(body)


@pytest.mark.parametrize(
    "body",
    [
        "RSP: 0018:ffffc90000a1be48 EFLAGS: 00010246",  # a register line
        "R13: ffffffff85f34520 R14: 1ffff1103ab0df98 R15: dffffc0000000000",
        "kworker/u4:2    R  running task    25560    32      2 0x00000008",
        "lowmem_reserve[]: 0 0 0",
        " foo+0x1/0x2:",  # after the offset
        " ? foo+0x1/0x2[m]",
    ],
)
def test_a_symbol_followed_by_a_byte_no_pattern_takes_there_is_no_frame(body: str) -> None:
    # The stack reader answers itself (None) where the symbol it finds, or its offset, is followed by a byte that
    # is no blank and no "(": the patterns say the same.
    assert stacks.read_stack_frame(body) is None
    assert stacks._stack_frame_by_pattern(body) is None


@pytest.mark.parametrize(
    "body",
    [
        "RIP: 0010:kf_read+0x12/0x40",  # the symbol found (RIP) is not followed by its offset
        "IP: [<ffffffff82d4e304>] __memset+0x24/0x30",
        "PC is at blk_rq_map_sg+0x70/0x2c0",
        " ? foo+0x1",  # an offset without its size
        " foo+0x/0x2",  # an offset without a digit
        "[<ab>] [<cd>] foo bar+0x1/0x2",
    ],
)
def test_a_symbol_not_followed_by_its_offset_and_size_is_no_frame(body: str) -> None:
    # The scan's reader answers itself (None) where the symbol it finds is not followed by "+0x" hex "/0x" hex: the
    # frame pattern's symbol starts at the same place, and 32-bit arm's pattern cannot match such a line.
    assert frames.read_frame(body) is None
    assert frames._frame_fields_by_pattern(body) is None


_PIECES = [" ", "  ", "\t", "\x0b", "\x1c", "\u2003", "\x85", "?", "? ", ".", "_", "a", "Z", "9", "$", "é", "fn",
           "a.b", "f.cold.1", "+0x", "+0x1f", "+0xAb", "/0x", "/0x40", "0x", "+", "/", "[", "]", "<", ">", "[m]",
           "[inline]", "[a-b_c]", "fs/x.c:12", "x.c:1:2", "x.c:", "a/b.S:9", ".c:1", ":", "12:", "(unreliable)",
           "(P)", "(X)", "(", ")", "[<ffff12>]", "[<0x1>]", "[0x]", "[ <ab>]", "[c01]", "\r", "x.c:12a"]  # fmt: skip
_LEADS = ["", " ", " ? ", "\t", "[<ffff12>] ", " [<0x1>] ? ", "[c01] [c02] "]


@settings(max_examples=400, deadline=None)
@given(
    lead=st.sampled_from(_LEADS),
    frame=st.one_of(st.just(""), st.builds("{}+0x{:x}/0x{:X}".format, st.sampled_from(["f", "a.b", "_x"]),
                                           st.integers(0, 1 << 70), st.integers(0, 999))),
    rest=st.lists(st.sampled_from(_PIECES), max_size=10).map("".join),
)  # fmt: skip
def test_lines_made_of_frame_pieces_are_read_as_the_patterns_read_them(lead: str, frame: str, rest: str) -> None:
    body = lead + frame + rest
    for read, by_pattern in READERS:
        got = read(body)
        assert _unsure(got) or got == by_pattern(body), body
    frames._FIELDS.pop(body, None)
    frames.STACK_FIELDS.pop(body, None)
    frames._frame_fields(body)  # the scan's reading, which keeps the stacks' where it is sure
    shared = frames.STACK_FIELDS.get(body, frames.ABSENT)
    assert shared is frames.ABSENT or shared == stacks._stack_frame_by_pattern(body), body


_SYMBOL_PIECES = ["_", "__", "Z", "R", "_Z", "_R", "__cfi_", "__se_sys_", "__do_sys_", ".", "x", "9", "$", ".cold",
                  "ZN3foo3barE", "_ZN4core3fmt5write17h0123456789abcdefE", "_RNvC7mycrate3foo", "_Z3fooi"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_SYMBOL_PIECES), min_size=1, max_size=6).map("".join))
def test_a_function_name_is_demangled_whenever_the_mangled_pattern_may_take_it(symbol: str) -> None:
    # function_name asks demangle only for names starting "_Z", "_R" or "__cfi_": what any name demangles to.
    name = symbol.split(".", 1)[0].removeprefix("__se_sys_").removeprefix("__do_sys_")
    assert frames.function_name(symbol) == frames.demangle(name)
