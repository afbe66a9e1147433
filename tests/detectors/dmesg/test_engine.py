"""Invariants of the dmesg engine: rule order, re-parsing, chunking, prefixes, taint, fuzzing."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from detectors.dmesg import extract as extract_module
from detectors.dmesg import scanner as scanner_module
from detectors.dmesg.extract import match_header
from detectors.dmesg.frames import parse_frame, required_text
from detectors.dmesg.lines import decode, parse_line, parse_raw
from detectors.dmesg.rules import RULES
from detectors.dmesg.scanner import LogScanner, scan_chunks, scan_text
from detectors.dmesg.taint import decode_taint, taint_letters

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.log"))


def test_no_rule_is_shadowed_by_an_earlier_one() -> None:
    # A rule with a ``report`` pattern is conditional: when the report lacks that pattern the next
    # matching rule is tried, so only an earlier unconditional rule can hide a later one.
    names = [r.name for r in RULES]
    assert len(names) == len(set(names)), "rule names must be unique"
    for i, rule in enumerate(RULES):
        assert rule.header.search(rule.example), f"rule {rule.name} does not match its own example"
        for earlier in RULES[:i]:
            if earlier.report is None:
                assert not earlier.header.search(rule.example), f"{earlier.name} shadows {rule.name}"
    assert match_header("[ 1.0] nothing to see here") is None


def test_reparsing_from_a_report_start_finds_the_same_report() -> None:
    for log in GOLDEN:
        data = log.read_bytes()
        lines = data.split(b"\n")
        for report in scan_chunks([data]):
            rest = b"\n".join(lines[report.start_line - 1 :])
            again = next(iter(scan_chunks([rest])))
            assert again.title == report.title, log.name
            assert again.frame == report.frame, log.name
            assert again.end_line - again.start_line == report.end_line - report.start_line, log.name


def test_chunking_does_not_change_the_result() -> None:
    for log in GOLDEN:
        data = log.read_bytes()
        whole = [(r.title, r.start_line, r.end_line) for r in scan_chunks([data])]
        for size in (1, 7, 64, 1000):
            pieces = [data[i : i + size] for i in range(0, len(data), size)]
            assert [(r.title, r.start_line, r.end_line) for r in scan_chunks(pieces)] == whole, (log.name, size)


def test_line_prefixes_of_every_tool() -> None:
    cases = {
        "[   12.345678] BUG: x": ("BUG: x", 12.345678, None, None),
        "<4>[   12.345678][ T1234] BUG: x": ("BUG: x", 12.345678, "T1234", 4),
        "[   12.345678][    C2] BUG: x": ("BUG: x", 12.345678, "C2", None),
        "Nov 30 06:55:29 host kernel: [   12.345678] BUG: x": ("BUG: x", 12.345678, None, None),
        "Nov 30 06:55:29 host kernel: BUG: x": ("BUG: x", None, None, None),
        "2026-11-30T06:55:29+0000 host kernel: BUG: x": ("BUG: x", None, None, None),
        "[   12.345678] host kernel: BUG: x": ("BUG: x", None, None, None),
        "[Mon Nov 30 06:55:29 2026] BUG: x": ("BUG: x", None, None, None),
        "kern  :warn  : [   12.345678] BUG: x": ("BUG: x", 12.345678, None, 4),
        "4,1234,12345678,-;BUG: x": ("BUG: x", 12.345678, None, 4),
        "** 3 printk messages dropped ** [   12.345678] BUG: x": ("BUG: x", 12.345678, None, None),
    }
    for text, (body, ts, ctx, level) in cases.items():
        line = parse_line(1, text)
        assert (line.body, line.timestamp, line.context, line.level) == (body, ts, ctx, level), text


#: Pieces of lines that reach the corners of parse_raw's stamp: tabs and other whitespace the pattern's ``\\s``
#: takes, Arabic-Indic digits its ``\\d`` takes, callers, a ``\\r`` (taken off by decode), `` kernel:``, undecodable
#: bytes, fractions and seconds past 15 digits.
_PIECES = [
    *(b"[", b"]", b" ", b"  ", b"\t", b".", b"0", b"7", b"12345", b"[T12]", b"[ C3]", b"[T", b"\r", b"\xd9\xa1"),
    *(b"\xe2", b" kernel:", b"<4>", b"x", b"\xef\xbf\xbd", b"\x0b", b"\x1c", b"\xc2\xa0", b"1234567890123456"),
]


def _same_line(raw: bytes) -> None:
    got, want = parse_raw(9, raw), parse_line(9, decode(raw))
    assert got == want and repr(got.timestamp) == repr(want.timestamp), raw


def test_a_line_read_from_its_bytes_is_the_line_parsed_from_its_text() -> None:
    made = [
        *(
            b"[   12.345678] BUG: x",
            b"[0.5]",
            b"[ 1.5]\r",
            b"[ 1.5] \r",
            b"[ 1.5]\r\r",
            b"[ 1.5][T1] y",
            b"[ 1.5] [T1]",
        ),
        *(b"[ 000012.000100]  two spaces", b"[ 999999999999999.999999999999999] z", b"[ 1234567890123456.5] z"),
        *(b"[ 1.1234567890123456] z", b"[\t1.5] z", b"[ 1\xd9\xa1.5] z", b"[ 1.5] host kernel: BUG"),
        *(b"[ 1.5] \xe2\x80 bad utf-8", b"[ 1.]", b"[ .5]", b"[1.5", b"1.5]", b""),
        # Where journalctl's "[ sec.usec] host kernel:" may stand, and where it may not.
        *(b"[ 1.5] h kernel:", b"[ 1.5] h kernel", b"[ 1.5]  h kernel: x", b"[ 1.5] h\tx kernel: y", b"[ 1.5] kernel:"),
        *(b"[ 1.5] \xc2\xa0 kernel: x", b"[ 1.5] h\xc2\xa0x kernel: y", b"[ 1.5] hkernel: x", b"[ 1.5] a b kernel: x"),
        *(
            b"[ 1.5]\thost kernel: x",
            b"[ 1.5][T1] host kernel: x",
            b"[ 1.5] host kernel: x\r",
            b"[ 1.5] \xe9 kernel: x",
        ),
    ]
    for raw in made:
        _same_line(raw)
    for line in b"".join(p.read_bytes() for p in GOLDEN).split(b"\n"):
        _same_line(line)


def test_lines_of_one_caller_share_its_text() -> None:
    """A caller is read from its bytes: the lines of one task after another share the first one's string, and any
    other caller (a longer or shorter one, a CPU's) is its own."""
    texts = [b"[ 1.0][ T12] a", b"[ 2.0][ T12] b", b"[ 3.0][T123] c", b"[ 4.0][  T1] d", b"[ 5.0][  C1] e"]
    got = [parse_raw(i, raw) for i, raw in enumerate(texts)]
    assert [line.context for line in got] == ["T12", "T12", "T123", "T1", "C1"]
    assert got[0].context is got[1].context
    assert got == [parse_line(i, decode(raw)) for i, raw in enumerate(texts)]


@settings(max_examples=400, deadline=None)
@given(
    st.integers(0, 10**17),
    st.integers(0, 10**17),
    st.integers(0, 17),
    st.integers(0, 5),
    st.lists(st.sampled_from(_PIECES), max_size=8),
)
def test_any_stamp_read_from_bytes_is_the_stamp_parsed(
    sec: int, frac: int, zeros: int, spaces: int, rest: list[bytes]
) -> None:
    stamp = b"[%s%d.%s%d]" % (b" " * spaces, sec, b"0" * zeros, frac)
    _same_line(stamp + b"".join(rest))
    _same_line(b"".join(rest) + stamp)


#: Bytes around a line's end that reach the corners of the UTF-8 decoder: sequences cut short, bytes that never start
#: one, a CR (ended by a sequence cut short, or by the end of the line).
_END_PIECES = (b"\r", b"a", b"\xe2", b"\xe2\x82", b"\xe2\x82\xac", b"\xf0\x9f", b"\xc3", b"\xff", b"\x80", b"\xed\xa0")


def _decoded_then_cut(raw: bytes) -> None:
    # decode() drops a last CR from the bytes before decoding them: the same text as the whole decoded, its CR cut.
    text = raw.decode("utf-8", "replace")
    assert decode(raw) == (text[:-1] if text.endswith("\r") else text), raw


def test_a_line_decoded_without_its_cr_is_the_line_decoded_then_cut() -> None:
    # Every line of up to five pieces (111,111 lines, 0.15 s): the 400 examples of up to eight pieces hypothesis
    # drew were 1 s of CPU, ~99% its engine's.
    for size in range(6):
        for pieces in itertools.product(_END_PIECES, repeat=size):
            _decoded_then_cut(b"".join(pieces))


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, (1 << 64) - 1))
def test_a_longer_line_decoded_without_its_cr_is_the_line_decoded_then_cut(seed: int) -> None:
    # Lines of six to eight pieces, 20 an example from a random.Random that hypothesis seeds (a failure says its seed,
    # which hypothesis replays, and its line): 2,000 lines.
    rng = random.Random(seed)
    for _ in range(20):
        _decoded_then_cut(b"".join(rng.choices(_END_PIECES, k=rng.randint(6, 8))))


def test_frames_are_structured() -> None:
    f = parse_frame(" ? kf_null_write.isra.0+0x15/0x30 [kf_buggy]")
    assert f is not None
    assert (f.function, f.symbol, f.offset, f.size, f.module, f.reliable) == (
        "kf_null_write",
        "kf_null_write.isra.0",
        0x15,
        0x30,
        "kf_buggy",
        False,
    )
    old = parse_frame(" [<ffffffff81234567>] __do_sys_write+0x1/0x2")
    assert old is not None and old.function == "write" and old.reliable
    assert parse_frame("RSP: 0018:ffffb5c1c04bfdc8 EFLAGS: 00010246") is None


def test_trace_marks_interrupt_stack_boundaries() -> None:
    log = "\n".join(
        [
            "[ 1.0] BUG: soft lockup - CPU#0 stuck for 22s! [x:1]",
            "[ 1.0] Call Trace:",
            "[ 1.0]  <IRQ>",
            "[ 1.0]  tick_sched_timer+0x1/0x2",
            "[ 1.0]  </IRQ>",
            "[ 1.0]  <TASK>",
            "[ 1.0]  kf_loop+0x1/0x2 [kf_buggy]",
            "[ 1.0]  </TASK>",
        ]
    )
    (report,) = scan_chunks([log.encode()])
    assert [(f.function, f.stack) for f in report.trace] == [("tick_sched_timer", "irq"), ("kf_loop", "task")]


def test_taint_letters_decode() -> None:
    assert taint_letters("CPU: 1 PID: 2 Comm: sh Tainted: G    B   W  O      6.1.0 #1") == "BWO"
    assert taint_letters("CPU: 1 PID: 2 Comm: sh Not tainted 6.1.0 #1") == ""
    assert taint_letters("no taint here") is None
    assert decode_taint("W") == ("W: kernel issued warning",)


def test_long_line_is_cut_and_memory_stays_bounded() -> None:
    scanner = LogScanner()
    scanner.feed(b"[ 1.0] start\n")
    for _ in range(100):  # a 100 MB line, fed in 1 MB pieces
        scanner.feed(b"x" * (1 << 20))
        assert len(scanner._buf) < 4 << 20
    reports = scanner.feed(b"\n[ 2.0] Kernel panic - not syncing: boom\n") + scanner.close()
    assert [r.title for r in reports] == ["kernel panic: boom"]
    assert reports[0].start_line == 3


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4000))
def test_fuzz_any_bytes_never_raise(data: bytes) -> None:
    for report in scan_chunks([data[:2000], data[2000:]]):
        assert report.start_line >= 1 and report.end_line >= report.start_line


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                b"[ 1.0] BUG: kernel NULL pointer dereference, address: 0",
                b"[ 1.0] RIP: 0010:foo+0x1/0x2",
                b"[ 1.0] Call Trace:",
                b"[ 1.0]  bar+0x1/0x2",
                b"[ 1.0] Kernel panic - not syncing: Fatal exception",
                b"[ 1.0] WARNING: CPU: 0 PID: 1 at x.c:1 baz+0x1/0x2",
                b"[ 1.0] ---[ end trace 0 ]---",
                b"[ 1.0] INFO: task x:1 blocked for more than 1 seconds.",
                b"\xff\xfe junk",
                b"",
            ]
        ),
        max_size=60,
    )
)
def test_fuzz_report_fragments(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    previous = 0
    for report in scan_chunks([data]):
        assert report.start_line >= previous, "reports come in log order"
        previous = report.start_line
        assert report.title


def test_dated_prefixes_give_wall_time_and_boot_time() -> None:
    line = parse_line(1, "2026-11-30T06:55:29+0000 host kernel: [  100.000000] Kernel panic - not syncing: boom")
    assert (line.wall, line.timestamp) == (1796021729.0, 100.0)
    assert parse_line(1, "Nov 30 06:55:29 host kernel: BUG: x").wall is None  # syslog has no year
    (report,) = scan_chunks([line.text.encode()])
    assert report.boot_time == 1796021629.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=64, max_value=20000), min_size=1, max_size=20))
def test_any_chunking_of_all_golden_logs_gives_the_same_reports(sizes: list[int]) -> None:
    data = b"".join(p.read_bytes() for p in GOLDEN)
    whole = [(r.title, r.start_line, r.end_line, r.frame) for r in scan_chunks([data])]
    pieces, at = [], 0
    while at < len(data):
        size = sizes[len(pieces) % len(sizes)]
        pieces.append(data[at : at + size])
        at += size
    assert [(r.title, r.start_line, r.end_line, r.frame) for r in scan_chunks(pieces)] == whole


def test_oom_dump_ends_at_the_panic_it_caused() -> None:
    # panic_on_oom: the dump has no kill line and the panic ends it; a kill printed later (another boot)
    # is not its victim, and the panic is a report of its own.
    log = (
        b"[ 3.60] kf_memhog invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0\n"
        b"[ 3.61] Mem-Info:\n"
        b"[ 3.61] active_anon:100 inactive_anon:2 isolated_anon:0\n"
        b"[ 3.62] Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled\n"
        + b"".join(b"[ 3.7%d] noise line %d\n" % (i % 10, i) for i in range(40))
        + b"[ 9.00] Out of memory: Killed process 77 (other) total-vm:1kB, anon-rss:1kB\n"
    )
    reports = scan_text(log.decode())
    (oom,) = (r for r in reports if r.kind == "oom")
    assert oom.title == "OOM killer invoked (invoked by kf_memhog)"  # before: "OOM kill of other"
    assert "killed" not in dict(oom.details) and oom.end_line < 4
    assert any(r.kind == "panic" and r.start_line == 4 for r in reports)


def test_a_boot_without_its_banner_is_told_apart_from_the_boot_above_in_any_chunking() -> None:
    # A boot starts at a run of lines printed at 0.000000 after later ones: the report of a boot whose banner the
    # log lacks is not of the banner above (another boot's); the runs are found apart from the per-line scan, so
    # they are checked across chunks and trimming too.
    banner = "[    0.000000] Linux version 6.1.0-kf (builder@kf) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC"
    boot = [banner, "[    0.000000] Command line: console=ttyS0", "[    0.000000] x86/fpu: x87 registers"]
    noise = [f"[   {5 + i}.000000] kf: line {i}" for i in range(150)]  # more than the scanner keeps to look back
    warning = [
        "[  200.000001] ------------[ cut here ]------------",
        "[  200.000002] WARNING: CPU: 0 PID: 7 at drivers/kf/kf.c:10 kf_check+0x10/0x20",
        "[  200.000003] Call Trace:",
        "[  200.000004]  kf_run+0x10/0x20",
        "[  200.000005] ---[ end trace 0000000000000000 ]---",
    ]
    second = boot[1:]  # the second boot's first lines, without its banner
    lines = [*boot, *noise, *warning, *second, *noise, *warning]
    data = ("\n".join(lines) + "\n").encode()
    boot2 = len(boot) + len(noise) + len(warning) + 1
    for size in (len(data), 4096, 97, 7):
        scanner = LogScanner()
        reports = [r for i in range(0, len(data), size) for r in scanner.feed(data[i : i + size])] + scanner.close()
        assert [(r.start_line, r.boot_banner[0] if r.boot_banner else None, r.bannerless_boot) for r in reports] == [
            (len(boot) + len(noise) + 2, 1, None),  # the WARNING: line (its "cut here" is its preamble)
            (boot2 + len(second) + len(noise) + 1, None, boot2),
        ], size


def test_the_per_line_dicts_give_the_same_reports_when_emptied_as_they_fill(monkeypatch: pytest.MonkeyPatch) -> None:
    # The line kinds, trace lines, frame fields and stall anchors are remembered by line body (or function name) in
    # dicts emptied when full (frames.LINES_REMEMBERED): with room for two lines they are emptied all the time, and
    # every report and every stack section of the golden logs must come out the same.
    from detectors.dmesg import extract, frames, stacks
    from forensics.pipelines.dmesg import analyse_logs
    from forensics.report.dmesg import DmesgRenderer
    from forensics.report.formats import OutputFormat, render_encoded

    def documents() -> list[object]:
        for cache in (extract._KINDS, frames._FIELDS, frames._TRACE_LINES, stacks._FIELDS, frames._ANCHORED,
                      frames._MATCHERS):  # fmt: skip
            cache.clear()
        return [render_encoded(DmesgRenderer(), analyse_logs([str(log)], False), OutputFormat.TEXT) for log in GOLDEN]

    full = documents()
    monkeypatch.setattr(frames, "LINES_REMEMBERED", 2)
    assert documents() == full
    assert len(extract._KINDS) <= 2 and len(frames._FIELDS) <= 2 and len(stacks._FIELDS) <= 2
    assert len(frames._ANCHORED) <= 2
    assert frames._MATCHERS and all(len(matcher._names) <= 2 for matcher in frames._MATCHERS.values())


def _window_cut_alone(buf: bytes, start: int, end: int, limit: int) -> tuple[int, list[bytes], bool]:
    """What LogScanner._window gave when it cut each window from the buffer by itself: its first line's number,
    its lines and whether it is complete (the meaning the shared split lines must keep)."""
    budget = min(end, start + scanner_module.MAX_WINDOW_BYTES)
    stop = min(budget, start + limit * 160)
    parts = buf[start:stop].split(b"\n", limit)
    while len(parts) <= limit and stop < budget:
        stop = min(budget, start + (stop - start) * 4)
        parts = buf[start:stop].split(b"\n", limit)
    hit_limit = len(parts) > limit
    complete = hit_limit or stop < end
    parts = parts[:limit]
    if not hit_limit and len(parts) > 1 and (not parts[-1] or stop < end):
        parts.pop()
    return buf.count(b"\n", 0, start) + 1, parts, complete


def _line_starts(buf: bytes) -> list[int]:
    """0 and the offset after each newline that has a byte after it: the lines a window may start at.

    By the newlines' regular expression, not a Python loop over every byte (up to 12 MB an example: 4 of the two
    tests' 6.6 s of CPU)."""
    return [0] + [m.end() for m in re.finditer(b"\n", buf) if m.end() < len(buf)]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0, 1, 20, 70, 159, 161, 700, 5000, 200_000]), min_size=1, max_size=60),
    st.booleans(),
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=80), st.sampled_from([1, 2, 5, 120, 1000]), st.booleans()),
        min_size=1,
        max_size=12,
    ),
)
# Lines split by a later window past an earlier window's byte budget.
@example(sizes=[200_000] * 6, newline_last=True, asks=[(0, 1000, True), (2, 1000, True), (0, 1000, True)])
def test_windows_cut_from_the_shared_split_lines_are_the_windows_cut_alone(
    sizes: list[int], newline_last: bool, asks: list[tuple[int, int, bool]]
) -> None:
    # Windows at any line, of any limit, in any order (forward, back, the same again), with lines long enough to
    # reach the byte budget; the scan's end at the buffer's end or at its last newline.
    buf = b"\n".join(b"x" * size for size in sizes) + (b"\n" if newline_last else b"")
    starts = _line_starts(buf)
    scanner = LogScanner()
    scanner._buf = buf
    for line, limit, to_the_end in asks:
        start = starts[line % len(starts)]
        end = len(buf) if to_the_end else max(start, buf.rfind(b"\n") + 1)
        window, complete = scanner._window(start, end, limit)
        assert (window.first, window.raw, complete) == _window_cut_alone(buf, start, end, limit)


_SIZES = (0, 1, 20, 70, 161, 700)


@settings(max_examples=150, deadline=None)
@given(
    # 300-1,500 line sizes, each one of _SIZES: drawn as one byte string, a byte a line (drawn as a list, one choice
    # a line, hypothesis's drawing was 95% of the test's CPU; the lengths and the sizes' shares are alike).
    st.binary(min_size=300, max_size=1500).map(lambda picks: [_SIZES[b % len(_SIZES)] for b in picks]),
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=1500), st.sampled_from([1, 5, 120, 1000]), st.booleans()),
        min_size=1,
        max_size=12,
    ),
)
def test_windows_of_many_lines_ahead_and_back_are_the_windows_cut_alone(
    sizes: list[int], asks: list[tuple[int, int, bool]]
) -> None:
    # Far enough apart that the split lines above a window are dropped as the windows move on (and split again when
    # one goes back): the windows, and the lines they parse, are still those cut alone.
    buf = b"\n".join(b"[ %d.5] x" % i + b"y" * size for i, size in enumerate(sizes)) + b"\n"
    starts = _line_starts(buf)
    scanner = LogScanner()
    scanner._buf = buf
    for line, limit, to_the_end in sorted(asks) if asks[0][2] else asks:
        start = starts[line % len(starts)]
        end = len(buf) if to_the_end else max(start, buf.rfind(b"\n") + 1)
        window, complete = scanner._window(start, end, limit)
        assert (window.first, window.raw, complete) == _window_cut_alone(buf, start, end, limit)
        for i in range(0, len(window), 37):
            assert window.line(i) == parse_raw(window.first + i, window.raw[i])


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"BUG: KASAN: ([a-z-]+) in (\S+)", "BUG: KASAN: "),
        (r"(?:WARNING|INFO): possible recursive locking detected", ": possible recursive locking detected"),
        (r"WARNING: CPU: \d+ PID: \d+ at lib/refcount\.c", " at lib/refcount.c"),
        (r"ab?cdef", "cdef"),  # the optional "b" and the "a" before it are not read as one run
        (r"x+yz", "yz"),
        (r"abc+d", "abc"),  # "c" at least once; "d" after any number of them
        (r"a{2}bcd", "bcd"),
        (r"a{x}b", ""),  # a brace the engine reads as itself: not read here
        (r"Linux version \d+\.\d+", "Linux version "),
        (r"\[Hardware Error\]: [^\]]+ ok", "[Hardware Error]: "),
        (r"one|two three", ""),  # an alternation at the top level
        (r"(?:a|bc)(?:d|ef)", ""),
        (r"\x41BCDEF", ""),
        (r"(?=look)ahead", "ahead"),
    ],
)
def test_the_text_every_header_match_holds(pattern: str, text: str) -> None:
    assert required_text(pattern, 0) == text
    assert required_text(pattern, re.IGNORECASE) == ""


def test_match_header_finds_the_rule_the_whole_table_finds() -> None:
    # Each rule is tried only on a line holding the text every match of its header holds (one automaton pass):
    # on every line of the bundled logs and every rule's example, the first rule that matches, as trying every
    # rule in order finds it (with the header's literal start as the only hint, as before), and each rule's text is
    # in every line its header matches.
    root = Path(__file__).parents[3]
    logs = [*GOLDEN, *Path(__file__).parent.glob("corpora/*/*.log"), *root.glob("vmcore_fixtures/cases/*/console.log")]
    bodies = {parse_raw(0, raw).body for log in logs for raw in log.read_bytes().split(b"\n")}
    bodies |= {rule.example for rule in RULES}
    assert len(bodies) > 2000

    def whole_table(body: str) -> tuple[str, tuple[int, int]] | None:
        for rule in RULES:
            if (m := rule.header.search(body)) is not None:
                return None if extract_module.IGNORED.search(body) else (rule.name, m.span())
        return None

    for body in bodies:
        found = match_header(body)
        assert (None if found is None else (found[0].name, found[1].span())) == whole_table(body), body
        for rule, text in extract_module._HINTS:
            assert rule.header.search(body) is None or text in body, (rule.name, body)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=40),
    st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=10**6)), min_size=1, max_size=30),
)
def test_the_line_counter_gives_every_offsets_line_whatever_it_counted_before(
    sizes: list[int], asks: list[tuple[bool, int]]
) -> None:
    # The counter goes back and forth from offset to offset; a count to the scan's end leaves marks the counter
    # goes on from: each answer is the line that holds the offset.
    buf = b"\n".join(b"x" * size for size in sizes)
    scanner = LogScanner()
    scanner._buf = buf
    for to_the_end, at in asks:
        off = at % (len(buf) + 1)
        if to_the_end and off >= scanner._count_off:
            assert scanner._line_at_end(off) == buf.count(b"\n", 0, off) + 1
        else:
            assert scanner._line_at(off) == buf.count(b"\n", 0, off) + 1


def test_the_report_builders_trace_hints_are_the_trace_readers() -> None:
    # parse_trace asks the report builder what a line is to it (a stack start, a possible marker or exception
    # line), read with the line's kind in one automaton pass: the same bits as frames.trace_hints finds them, on
    # every line of the bundled logs and on made lines of each marker and exception text.  A report's own lines
    # are given to it with their kinds as report_extent found them: read that way, each line is what the trace
    # reader makes of it alone (a frame's bit is is_frame's answer).
    from detectors.dmesg.frames import (
        TRACE_FRAME,
        TRACE_MARK,
        TRACE_OPENS,
        _trace_line_known,
        _trace_line_of,
        is_frame,
        trace_hints,
    )

    root = Path(__file__).parents[3]
    logs = [*GOLDEN, *Path(__file__).parent.glob("corpora/*/*.log"), *root.glob("vmcore_fixtures/cases/*/console.log")]
    bodies = {parse_raw(0, raw).body for log in logs for raw in log.read_bytes().split(b"\n")}
    made = ("<IRQ>", " </NMI>", "--- interrupt: 900 at f+0x1/0x2", "Exception stack(0x1 to 0x2)", "irq event stamp: 7")
    bodies |= {*made, *(f"x {text} y" for text in made)}
    assert sum(1 for body in bodies if trace_hints(body) & TRACE_MARK) > 20
    assert sum(1 for body in bodies if trace_hints(body) & TRACE_OPENS) > 20
    assert sum(1 for body in bodies if is_frame(body)) > 500
    for body in bodies:
        assert extract_module._trace_hints(body) == trace_hints(body), body
        kind = extract_module._line_kind(body)
        assert (kind & TRACE_FRAME != 0) == is_frame(body), body
        assert _trace_line_known(body, kind, trace_hints) == _trace_line_of(body, trace_hints), body
