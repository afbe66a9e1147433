"""The numpy frame-line keyer of the profile reader, against the per-line parse it stands in for."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import perf_script
from collectors.perf_frames import frame_keys, key_flag
from collectors.perf_script import ScriptParser, read_gzip_text

DATA = Path(__file__).resolve().parents[1] / "data" / "profile"

# Lines at the edges of the regular expression ^\s*(\w+)\s*(.+) \((.*)\): an address it must give
# bytes of back, no symbol, several " (", a ")" missing or doubled, offsets that are not stripped,
# 16-digit addresses in and out of the kernel half, other spaces, bytes that are not UTF-8.
EDGES = [
    b"",
    b"#x",
    b"x",
    b" ",
    b"\t",
    b"\t abc (x)",
    b"\t a (x)",
    b"\tffff (dso)",
    b"\t ffffffff81000000 sym+0x1f ([kernel.kallsyms])",
    b"\t ffffffff81000000 sym+0x ([k])",
    b"\t ffffffff81000000 +0x12 ([k])",
    b"\t ff sym+0x12+0x13 (d)",
    b"\t ff sym+0x12g (d)",
    b"\t ff sym+0x1F (d)",
    b"\t ff s (a) (b)",
    b"\t ff s (a) (b",
    b"\t ff s (a)x",
    b"\t ff  s ( (a))",
    b"\t ff\ts (a)",
    b"\t 1234567890abcdef s (x)",
    b"\t ffff567890abcdef s (x)",
    b"\t ffff567890abcdef0 s (x)",
    b"\t fff (x)",
    b"\t\r\x0b ff s (x)",
    b"\t (x) (y)",
    b"\t ff (x)",
    b"\t ff  (x)",
    b"\t ff x->y+0x1 (inlined)",
    b"\t ff [unknown] ([unknown])",
    b"\t ff s+0x1 ()",
    b"\t ff s+0x1 (",
    b"\t ff s+0x1 )",
    b"\t ff s+0x1 ( )",
    b" ff s+0x1 (a)\r",
    b"\t\xff\xfe ff s (a)",
    b"\t ff \xc3\xa9s+0x1 (\xff)",
    b"\t" + b" " * 60 + b"ff s (x)",  # spaces beyond the window read at the start of a line
    b"\t ff s+0x" + b"1" * 20 + b" (x)",  # an offset longer than the window read after "+0x"
]


def _keyed_frames(key: bytes, java: bool) -> object:
    raw, _, dso = key[1:].partition(b"\0")
    return perf_script._symbol_frames(raw, dso, java, key[0] == key_flag(java, True))


def _check(lines: list[bytes]) -> int:
    """Every keyed line's frames equal the per-line parse's; the number of lines keyed."""
    keyed = 0
    for java in (False, True):
        for line, key in zip(lines, frame_keys(lines, java), strict=True):
            if key is not None:
                keyed += 1
                assert _keyed_frames(key, java) == perf_script._line_frames(line, java), line
    return keyed


def test_keys_name_the_frames_the_line_parse_names_on_every_recording() -> None:
    lines = set(EDGES)
    for path in DATA.glob("*.perf.txt.gz"):
        lines.update(read_gzip_text(path).split(b"\n"))
    ordered = sorted(lines)
    frames = [line for line in ordered if line[:1].isspace() and perf_script._line_frames(line, False)]
    assert _check(ordered) >= 2 * (len(frames) - len(EDGES))  # every recorded frame line keyed, either java


def test_lines_the_keyer_cannot_be_sure_of_get_no_key() -> None:
    keys = frame_keys(EDGES, False)
    unsure = [line for line, key in zip(EDGES, keys, strict=True) if key is None]
    assert b"\t a (x)" in unsure and b"\t ff (x)" in unsure  # the expression gives back address bytes
    assert b"\t" + b" " * 60 + b"ff s (x)" in unsure and b"" in unsure and b"#x" in unsure
    assert keys[EDGES.index(b"\t ffffffff81000000 sym+0x1f ([kernel.kallsyms])")] == b"1sym\0[kernel.kallsyms]"
    # A NUL byte would read as the separator of the key: that batch is parsed line by line.
    assert frame_keys([b"\t ff s\0 (a)", b"\t ff s (a)"], False) == [None, None]


_PARTS = st.sampled_from([b" ", b"\t", b"ff", b"ffff", b"(", b")", b" (", b"+0x", b"1a", b"g", b"s", b"->", b"\xff"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_PARTS, max_size=12).map(lambda p: b"\t" + b"".join(p)), min_size=1, max_size=30))
def test_any_line_is_keyed_as_the_line_parse_reads_it(lines: list[bytes]) -> None:
    _check(lines)


@pytest.mark.parametrize("name", ["mixed", "kernel", "jit", "contend"])
def test_the_reader_keys_frame_lines_as_it_parses_them_line_by_line(name: str) -> None:
    # A bulk reader keys the new lines of a batch when there are KEYED_FROM of them or more.
    text = read_gzip_text(DATA / f"{name}.perf.txt.gz")

    def stacks(keyed_from: int) -> list[object]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(perf_script, "KEYED_FROM", keyed_from)
            perf_script._KEYED.clear()
            parser = ScriptParser("x", bulk=True)
            parser.feed(text)
            return [(s.thread, s.event, s.frames, s.samples, s.period, s.first_line) for s in parser.close().stacks]

    assert stacks(1) == stacks(1 << 40)
