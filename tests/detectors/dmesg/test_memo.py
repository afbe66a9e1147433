"""The report memo changes the cost, never the reports: repeats of the golden logs, built and memoised."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg.scanner import LogScanner
from forensics.types.dmesg import KernelReport
from tests.detectors.dmesg.test_golden import CASES

#: A line's first printk time, after whatever prefix (level, dmesg -x, syslog) comes before it.
_STAMP = re.compile(rb"^([^\n\[]{0,64}?)\[\s*(\d+)\.(\d+)\]", re.MULTILINE)
_SYSLOG_TIME = re.compile(rb"^([A-Z][a-z]{2} [ \d]\d )\d\d(:\d\d:\d\d)(?= \S+ kernel:)", re.MULTILINE)


def _shifted(text: bytes, seconds: int) -> bytes:
    """The log with every line's printk time (and year-less syslog hour) moved on (a later copy of a crash)."""
    text = _SYSLOG_TIME.sub(lambda m: b"%s%02d%s" % (m.group(1), (seconds // 3600) % 24, m.group(2)), text)
    return _STAMP.sub(lambda m: b"%s[%5d.%s]" % (m.group(1), int(m.group(2)) + seconds, m.group(3)), text)


def _scan(data: bytes, memo: bool) -> tuple[list[KernelReport], int]:
    scanner = LogScanner()
    if not memo:
        scanner._memo.build = lambda window, kind, make: make()  # type: ignore[method-assign]
    reports = scanner.feed(data) + scanner.close()
    return reports, scanner._memo.hits


def _repeated(path: Path) -> bytes:
    text = path.read_bytes().rstrip(b"\n") + b"\n"
    # The same log verbatim, again at a later time, then once more with one character of every frame changed.
    changed = text.replace(b"+0x", b"+0X")
    return text + text + _shifted(text, 1000) + _shifted(text, 100000) + changed


@pytest.mark.parametrize("log", CASES, ids=[p.stem for p in CASES])
def test_memoised_reports_equal_built_ones(log: Path) -> None:
    data = _repeated(log)
    built, _ = _scan(data, memo=False)
    memoised, _ = _scan(data, memo=True)
    assert memoised == built


def test_repeats_are_memoised_with_their_own_lines_and_times() -> None:
    log = next(p for p in CASES if p.stem == "null_deref_x86")
    text = log.read_bytes().rstrip(b"\n") + b"\n"
    # A last copy after the repeats: the report of a log's last copy reaches its end, and is built (a window
    # shorter than the one the memo knows).
    data = text + text + _shifted(text, 1000) + _shifted(text, 2000)
    reports, hits = _scan(data, memo=True)
    assert hits >= 2
    read = data.decode().split("\n")
    per_copy = len(reports) // 4
    first = reports[0]
    for copy, seconds in ((1, 0), (2, 1000)):
        again = reports[copy * per_copy]
        assert (again.title, again.signature) == (first.title, first.signature)
        offset = copy * text.count(b"\n")
        assert again.start_line == first.start_line + offset
        # Each line is cited with its own number and text as the log has them (the times differ).
        assert again.lines == tuple((n + offset, read[n + offset - 1]) for n, _ in first.lines)
        assert isinstance(first.start_time, float) and again.start_time == pytest.approx(first.start_time + seconds)
        assert [f.line for f in again.trace] == [f.line + offset for f in first.trace]


@pytest.mark.parametrize(
    "line",
    [
        b"<4>[ %d.000100] WARNING: CPU: 1 PID: 9 at fs/x.c:10 f+0x1/0x2",
        b"kern  :warn  : [ %d.000100] WARNING: CPU: 1 PID: 9 at fs/x.c:10 f+0x1/0x2",
        b"Nov 30 06:55:%02d host1 kernel: [ 7.000100] WARNING: CPU: 1 PID: 9 at fs/x.c:10 f+0x1/0x2",
        # journalctl -o short-monotonic: the first stamp is the journal's, the second the kernel's.
        b"[ %d.000100] host1 kernel: [ 7.000100] WARNING: CPU: 1 PID: 9 at fs/x.c:10 f+0x1/0x2",
        b"[ 7.000100] host1 kernel: [ %d.000100] WARNING: CPU: 1 PID: 9 at fs/x.c:10 f+0x1/0x2",
    ],
)
def test_prefixed_stamps_are_keyed_and_timed_as_parsed(line: bytes) -> None:
    # The same report under a prefix, its times differing in one place per copy: memoised or built,
    # the reports (times included) are the same.
    data = b"".join(
        b"%s\n%s\n" % (line % t, (line % t).replace(b"WARNING: CPU: 1 PID: 9 at fs/x.c:10 f+0x1/0x2", b"Call Trace:"))
        for t in (10, 11, 23, 59)
    )
    built, _ = _scan(data, memo=False)
    memoised, hits = _scan(data, memo=True)
    assert memoised == built
    assert len(built) == 4
    # The memo was used: the copies but the last (its report reaches the end of the log) are repeats, unless
    # the time that differs is the kernel's after journalctl's (a key blanks a line's first stamp only).
    assert hits >= (0 if line.startswith(b"[ 7.") else 1)


def _same_width_shift(text: bytes, seconds: int) -> bytes:
    """The log with every stamp moved on by ``seconds`` and as wide as before (the digit layout kept)."""
    return _STAMP.sub(
        lambda m: b"%s[%*d.%s]" % (m.group(1), len(m.group(0)) - len(m.group(1)) - len(m.group(3)) - 2,
                                    int(m.group(2)) + seconds, m.group(3)),
        text,
    )  # fmt: skip


def test_repeats_of_one_layout_and_of_a_wider_stamp_equal_built_ones() -> None:
    # Copies whose stamps keep their width are matched by digit layout; once the times grow a digit
    # the layout changes, the key matches, and the later copies are matched by the new layout.
    text = next(p for p in CASES if p.stem == "null_deref_x86").read_bytes().rstrip(b"\n") + b"\n"
    copies = [_same_width_shift(text, s) for s in (0, 1, 2, 3)] + [_shifted(text, s) for s in (100000, 100001, 100002)]
    # A copy with a digit changed outside the stamps (an address) is not a repeat of the first.
    copies.append(copies[1].replace(b"+0x", b"+0x1", 1))
    data = b"".join(copies)
    built, _ = _scan(data, memo=False)
    memoised, hits = _scan(data, memo=True)
    assert memoised == built
    assert hits >= 5
    scanner = LogScanner()
    assert scanner.feed(data) + scanner.close() == built
    assert scanner._memo.fast_hits >= 3  # copies of one digit layout, read off the buffer (no window cut)
    assert len(memoised) == len(copies)
    assert len({r.start_time for r in memoised[:-1]}) == len(copies) - 1  # each copy has its own time


def test_a_repeat_is_made_whole_when_read_and_pickles_as_the_plain_record() -> None:
    import pickle

    text = next(p for p in CASES if p.stem == "null_deref_x86").read_bytes().rstrip(b"\n") + b"\n"
    data = text + _shifted(text, 1000) + _shifted(text, 2000)  # the last copy's report is built: see above
    reports, _ = _scan(data, memo=True)
    built, _ = _scan(data, memo=False)
    again = reports[len(reports) // 3]
    assert type(again) is not KernelReport  # a repeat: its lines are made when first read
    assert "lines" not in vars(again)
    assert again == built[len(built) // 3] and built[len(built) // 3] == again
    assert hash(again) == hash(built[len(built) // 3])
    plain = pickle.loads(pickle.dumps(again))
    assert type(plain) is KernelReport and plain == again


@pytest.mark.parametrize("first", ["header", "lines", "trace", "end_time", "frame_past", "title"])
def test_a_repeats_lazy_fields_read_first_in_any_order_are_its_built_ones(first: str) -> None:
    """Each lazy field (header, lines, frames, end time) made on its first read, whichever is read first, of a repeat
    of the same bytes and of one at a later time: the built report's fields.  Made by descriptors of the class, not
    a ``__getattr__`` hook, through which Python read every attribute of a repeat (~450 instructions a read from
    the compiled code, where a plain one is ~100: ~60 M of the corpus x4)."""
    text = next(p for p in CASES if p.stem == "null_deref_x86").read_bytes().rstrip(b"\n") + b"\n"
    data = text + text + _shifted(text, 1000) + _shifted(text, 2000)  # the last copy's report is built
    built, _ = _scan(data, memo=False)
    reports, _ = _scan(data, memo=True)
    repeats = [r for r in reports if type(r) is not KernelReport]
    assert len(repeats) >= 2  # one of the same bytes, one at a later time
    for r in repeats:
        assert "lines" not in vars(r)  # not made yet
        expected = next(b for b in built if b.start_line == r.start_line)
        assert getattr(r, first) == getattr(expected, first)
        assert r == expected
    assert not hasattr(type(repeats[0]), "__getattr__")


def _fuzzer_copies() -> tuple[bytes, list[bytes]]:
    """Copies of a fuzzer's console block (see below), some at a later time, one with a digit changed."""
    golden = next(p for p in CASES if p.stem == "null_deref_x86").read_bytes()
    text = b"".join(line for line in golden.splitlines(keepends=True) if b"---[ end" not in line)
    tail = b"".join(b"executing program %d\n" % (i % 10) for i in range(130))
    other = text.replace(b"Comm: sh", b"Comm: sx")
    deep = b"[   12.345990]  vfs_write+0xc9/0x3f0\n" * 150
    long = text.replace(b"[   12.346009]  ksys_write", deep + b"[   12.346009]  ksys_write").replace(
        b"Comm: sh", b"Comm: sy"
    )
    quiet = b"".join(b"[   12.400000] eth0: link up %d\n" % i for i in range(30))
    block = text + tail + other + tail + long + quiet + tail
    later = block.replace(b"[   12.", b"[   13.")  # a second later, the stamps as wide
    copies = [block, block, later, block.replace(b"+0x", b"+0x1", 1), block, block]
    return b"".join(copies), copies


def test_repeats_of_reports_read_to_their_window_end_equal_built_ones() -> None:
    # A fuzzer's console: a report without an end marker, then the output of other programs without the
    # kernel's prefix, which the builder reads to the end of its first window.  Two such reports under one
    # header line (another Comm): the memo compares both in turn.  And a report longer than the first window
    # (a deep call trace), built again from the full one.  Their repeats are read off the buffer.
    data, copies = _fuzzer_copies()
    built, _ = _scan(data, memo=False)
    memoised, _ = _scan(data, memo=True)
    assert memoised == built
    assert len(built) == len(copies) * 3
    assert built[6].start_time == pytest.approx(built[0].start_time + 1)  # type: ignore[operator]
    assert len(built[2].trace) > 150
    scanner = LogScanner()
    assert scanner.feed(data) + scanner.close() == built
    # The second and third copies' reports: first (and full) windows compared in place, no window cut.
    assert scanner._memo.fast_hits >= 12


@pytest.mark.parametrize("log", CASES, ids=[p.stem for p in CASES])
def test_a_repeats_header_excerpt_and_frames_are_its_built_ones_without_its_lines(log: Path) -> None:
    # Three copies byte for byte first: the second's builder reads what the first's read (up to the next
    # copy's first lines), the same bytes.
    data = log.read_bytes().rstrip(b"\n") + b"\n" + _repeated(log)
    built, _ = _scan(data, memo=False)
    memoised, _ = _scan(data, memo=True)
    verbatim = 0
    for got, want in zip(memoised, built, strict=True):
        source = got.__dict__.get("_source")
        header, excerpt, trace, end_time = got.header, got.excerpt(), got.trace, got.end_time
        if source is not None and source[3] is None:
            verbatim += 1  # a repeat of the same bytes: none of them made its lines
            assert "lines" not in got.__dict__
        assert (header, excerpt) == (want.header, "\n".join(text for _, text in want.lines))
        assert (trace, end_time) == (want.trace, want.end_time)
        assert excerpt == got.excerpt() == "\n".join(text for _, text in got.lines)
    assert verbatim or not built  # the log's second copy is its first byte for byte, and so is what follows it


def test_a_repeat_cites_its_own_line_past_its_report() -> None:
    # A stall whose frame is read past another report's header (tests/detectors/dmesg/test_why_readers.py) cites
    # that line as printed, its time stamp included: a repeat the memo made cites its own line, not the first's.
    from tests.detectors.dmesg.test_why_readers import STALL_PAST_A_WARNING

    text = STALL_PAST_A_WARNING.encode()
    data = text + b"".join(_shifted(text, 1000 * k) for k in range(1, 10))
    built, _ = _scan(data, memo=False)
    memoised, _ = _scan(data, memo=True)
    assert memoised == built
    stalls = [r for r in memoised if r.kind == "rcu-stall"]
    assert len(stalls) == 10 and any(type(r) is not KernelReport for r in stalls)  # some are the memo's repeats
    for k, stall in enumerate(stalls):
        assert stall.frame_past == (
            14,
            f"[{100 + 1000 * k:5d}.000015][    C0] RIP: 0010:smp_call_function_single+0x123/0x456",
        )


def test_a_repeat_of_the_same_bytes_gives_its_line_past_and_its_parsed_lines_without_making_its_lines() -> None:
    """A repeat of a report's bytes (made as the memo makes it, 1,000 lines on) read first for ``frame_past`` (a
    stall's frame read past another report's header) gives the report's, not the dataclass default (None) it gave
    before its other lazy fields were made; and ``why.own_lines`` of it, made from the report's parsed lines and its
    own numbers without making its lines, are its lines parsed."""
    from types import SimpleNamespace

    from detectors.dmesg.lines import parse_line
    from detectors.dmesg.repeat import moved
    from detectors.dmesg.why import own_lines
    from tests.detectors.dmesg.test_why_readers import STALL_PAST_A_WARNING

    built, _ = _scan(STALL_PAST_A_WARNING.encode(), memo=False)
    stall = next(r for r in built if r.frame_past is not None)
    own = tuple(n - stall.start_line for n, _ in stall.lines)
    entry = SimpleNamespace(report=stall, own=own, timed=None, stamps=(-1, -1), picks=None, frames=None)
    first = stall.start_line + 1000
    assert moved(entry, first, None, None).frame_past == stall.frame_past  # read first
    repeat = moved(entry, first, None, None)
    assert repeat.repeats() == (stall, 1000)
    assert own_lines(repeat) == [parse_line(n + 1000, t) for n, t in stall.lines]
    assert "lines" not in vars(repeat)  # not made for it
    assert repeat.lines == tuple((n + 1000, t) for n, t in stall.lines)


def test_repeats_fed_in_small_pieces_equal_built_ones() -> None:
    # The memo's look-up in place rules out a remembered report by the first bytes that differ from its text,
    # also when its lines are not all in the buffer yet: pieces of odd sizes cut the reports and their lines
    # anywhere, and every report is still the one built from its own lines.
    data, _ = _fuzzer_copies()
    built, _ = _scan(data, memo=False)
    for size in (777, 4093):
        scanner = LogScanner()
        reports = [r for at in range(0, len(data), size) for r in scanner.feed(data[at : at + size])]
        assert reports + scanner.close() == built
        assert scanner._memo.fast_hits >= 12  # the other entries of a header ruled out in place, as a whole log


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 400), max_size=60),
    st.integers(0, 3000),
    st.integers(0, 30000),
    st.integers(0, 30000),
    st.integers(-1, 50),
)
def test_lines_ahead_are_counted_in_steps_as_in_one_count(
    lengths: list[int], start: int, end: int, budget: int, lines: int
) -> None:
    # has_lines counts the newlines ahead in steps of the bytes the lines may take, stopping once it has seen
    # enough: the answer is one count's over the budget, for lines of any length (most longer than 160 bytes too).
    from detectors.dmesg.memo import _Ahead

    data = b"\n".join(b"x" * n for n in lengths)
    start = min(start, len(data))
    end = max(start, end)
    stop = min(end, start + budget)
    assert _Ahead(data, start, end, budget).has_lines(lines) == (data.count(b"\n", start, stop) >= lines)
    # The same answers when the newlines up to the end are given (the scanner's count near the end of its input).
    known = _Ahead(data, start, end, budget, data.count(b"\n", start, end))
    assert known.has_lines(lines) == (data.count(b"\n", start, stop) >= lines)
    assert known.full_window_is(lines) == _Ahead(data, start, end, budget).full_window_is(lines)


def _compare_by_finds(buf: bytes, start: int, end: int, max_bytes: int, text: bytes, more: int) -> bool:
    """What _fast_compare said when it found the newlines of the ``more`` lines after the text one by one: whether
    they are whole, before ``end``, within the byte budget."""
    stop = start + len(text)
    at = stop + 1
    for _ in range(more):
        at = buf.find(b"\n", at, end) + 1
        if not at:
            return False
    return at - start <= max_bytes


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=400), min_size=2, max_size=40),
    st.integers(min_value=1, max_value=5),
    st.integers(min_value=0, max_value=40),
    st.integers(min_value=0, max_value=20_000),
    st.integers(min_value=0, max_value=20_000),
)
def test_a_fast_compare_counts_the_lines_after_the_text_as_finding_them_did(
    sizes: list[int], lines: int, more: int, cut: int, max_bytes: int
) -> None:
    # The text of a remembered report at the buffer's start, then lines of any length: a hit when ``more`` whole
    # lines follow it before the end and within the budget, as one find a line said.
    from detectors.dmesg.memo import _Ahead, _Entry, _fast_compare

    buf = b"\n".join(b"x" * size for size in sizes) + b"\n"
    lines = min(lines, len(sizes) - 1)
    text = b"\n".join(b"x" * size for size in sizes[:lines])
    end = max(len(text) + 1, len(buf) - cut)
    entry = _Entry(lines, -1, text, None, 0, (), None, 0)  # type: ignore[arg-type]
    found = _fast_compare(entry, _Ahead(buf, 0, end, max_bytes), more)
    assert (found is not None) == _compare_by_finds(buf, 0, end, max_bytes, text, more)
    assert found is None or found == (text, True)


#: Pieces of header lines that reach the corners of a slot key's stamp: the white space _STAMP's ``[^\S\n]`` takes (and
#: the kinds it does not), digits, prefixes the pattern takes before a stamp, a syslog time, a NUL.
_KEY_PIECES = [
    *(b"[", b"]", b".", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"\x1c", b"\xa0", b"0", b"12", b"x", b"BUG: y"),
    *(b" kernel:", b"<4>", b"kern  :warn  : ", b"Nov 30 06:55:29 host kernel: ", b"\x00", b"[ 12.5]", b"\xd9\xa1"),
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_KEY_PIECES), max_size=10))
def test_a_slot_key_and_a_stamps_place_read_from_the_bytes_are_those_the_patterns_give(pieces: list[bytes]) -> None:
    from detectors.dmesg import memo

    head = b"".join(pieces)
    blob = b"\n" + head
    if blob.find(b" kernel:") >= 0:
        blob = memo._SYSLOG_TIME.sub(b"\n\x00", blob, count=1)
    assert memo._slot_key(head) == b"\x00".join(memo._STAMP.split(blob, maxsplit=1)), head
    m = memo._STAMP.match(b"\n" + head)
    assert memo._stamp_at(head) == (-1 if head.find(b" kernel:") >= 0 or m is None else len(m.group(1))), head


_BUG_ON = Path(__file__).resolve().parents[3] / "vmcore_fixtures/kernels/6.12/cases/02-bug-on/dmesg.txt"


@pytest.mark.parametrize("printk", [False, True], ids=["bare", "printk-stamped"])
@pytest.mark.parametrize(
    "stamp",
    [
        "Dec 07 14:{m:02d}:{s:02d}",  # journalctl -o short, syslog: no year
        "Mon 2026-12-07 14:{m:02d}:{s:02d} CET",  # journalctl -o short-full: a zone's name, no offset
    ],
    ids=["short", "short-full"],
)
def test_repeats_under_untimed_syslog_times_are_shared(stamp: str, printk: bool) -> None:
    """Copies of one report under syslog times that give no wall-clock time (journalctl -o short and short-full:
    ue6 10f) differ in those times only: the second is the first's repeat, as built (the last, whose report reaches
    the log's end, is built: see test_prefixed_stamps_are_keyed_and_timed_as_parsed)."""
    lines = _BUG_ON.read_text().splitlines()[262:298]  # the kernel BUG report, lines 263-298
    if not printk:
        lines = [re.sub(r"^\[\s*\d+\.\d+\] ", "", x) for x in lines]
    copies = [
        "".join(f"{stamp.format(m=m, s=n % 60)} myhost kernel: {x}\n" for n, x in enumerate(lines))
        for m in (30, 47, 51)
    ]
    data = "".join(copies).encode()
    built, _ = _scan(data, memo=False)
    memoised, hits = _scan(data, memo=True)
    assert memoised == built
    assert [r.title for r in built] == ["kernel BUG in kf_buffer_put"] * 3
    assert hits >= 1
