"""The compiled chunk pass of the profile reader, against the numpy passes it stands in for.

:class:`collectors.perf_script.ScriptParser` on its numpy path reads each chunk either with
:func:`collectors.perf_chunk_kernel.scan_chunk` (numba's JIT here; built ahead of time in ``kforensic profile``)
or with :func:`collectors.perf_scan.mask_times`, a split and a dictionary; both must give the same profile
(stacks, counts, first lines and headers, events, span, lines, notes) on every bundled recording, fed in large
and small chunks, on texts that send a chunk to the per-sample code (a time too long, a new text with two
times, a header holding its time, garbage) and on random texts.
"""

from __future__ import annotations

import re
from dataclasses import replace
from operator import is_
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import perf_chunks, perf_script
from collectors.perf_chains_aot import jitted_scan
from collectors.perf_chunks import ChunkSlots
from collectors.perf_script import CHUNK, ScriptParser, read_gzip_text
from detectors.profile.findings import class_shares, profile_findings
from detectors.profile.hotspots import compute_hotspots, folded_lines, folded_rows, selected_stacks
from forensics.model import Finding
from forensics.types.profile import VECTOR_FROM, ClassShare, Hotspots, Profile, StackColumns, stack_table
from tests.collectors.test_perf_chains import _LINE as _CHAIN_LINE
from tests.detectors.profile.glibc_recordings import RECORDS, record

DATA = Path(__file__).resolve().parents[1] / "data" / "profile"


def _read(text: bytes, compiled: bool, chunk: int = CHUNK, folded: bool = False) -> Profile:
    # (the input's size given, as read_profile gives it: the compiled pass's tables presized from it)
    scanner = jitted_scan() if compiled else None
    parser = ScriptParser("x", bulk=True, scanner=scanner, expected=len(text), folded=folded)
    for at in range(0, len(text), chunk):
        parser.feed(text[at : at + chunk])
    return parser.close()


def _same(text: bytes, chunk: int = CHUNK) -> Profile:
    """The profile both ways (equal: every field of every stack, the events, span, lines and notes).

    The table the compiled reader makes from its numbers, when it makes one, is ``stack_table`` of its stacks.
    """
    got = _read(text, True, chunk)
    assert got == _read(text, False, chunk)
    lazy = _read(text, True, chunk).stacks
    if isinstance(lazy, StackColumns):  # counted by number: each stack made alone is the one made with all others
        one_by_one = [lazy[i] for i in range(-len(lazy), 0)]
        assert lazy.made_so_far == len(lazy) and one_by_one == list(got.stacks) and all(map(is_, one_by_one, lazy))
    if got.table is not None:
        want = stack_table(got.stacks)
        assert list(map(id, got.table.chains)) == list(map(id, want.chains))
        assert list(map(id, got.table.threads)) == list(map(id, want.threads))
        for field in ("chain_of", "thread_of", "period", "samples"):
            assert getattr(got.table, field).tolist() == getattr(want, field).tolist()
    _folded_same(text, got, chunk)
    return got


def _folded_same(text: bytes, got: Profile, chunk: int) -> bool:
    """Read with the folded sums asked for: the same profile (its stacks made when read), and, when the reader
    summed them by number, the folded lines of all its stacks; whether it did."""
    summed = _read(text, True, chunk, folded=True)
    if isinstance(summed.stacks, StackColumns) and isinstance(got.stacks, StackColumns):
        # Counted, their events and first lines told before the counters are grouped (when first read).
        assert len(summed.stacks) == len(got.stacks) and summed.stacks.made_so_far == 0
        assert summed.stacks.events == got.stacks.events
        assert summed.stacks.first_lines.tolist() == got.stacks.first_lines.tolist()
    assert summed == got  # (the stacks made from the numbers when first read)
    if summed.folded is None:
        return False
    assert summed.table is None  # no table made for the folded lines
    assert folded_rows(summed.folded) == folded_lines(selected_stacks(got))
    return True


@pytest.mark.parametrize("path", sorted(DATA.glob("*.perf.txt.gz")), ids=lambda p: p.name.split(".")[0])
def test_every_recording_reads_as_with_the_numpy_passes(path: Path) -> None:
    text = read_gzip_text(path)
    # Each copy of the recording under its own command names: known texts, new ones and stacks in every chunk;
    # one copy's threads are java ones (their frames are named another way).
    copies = b"".join(re.sub(rb"(?m)^(?=[A-Za-z])", (b"java%d" if i == 1 else b"c%d") % i, text) for i in range(3))
    copies += text
    samples = None
    for chunk in (CHUNK, 4096, 997):
        got = _same(copies, chunk)
        assert samples in (None, sum(s.samples for s in got.stacks))
        samples = sum(s.samples for s in got.stacks)
    if b"\n\n" in text:  # samples with call chains (the flat recording's go to the per-sample code at the end)
        assert samples and len({s.thread.comm[:2] for s in got.stacks}) >= 4
        assert got.table is not None  # counted by number
    # Without the Java copy (its frames are named another way: the stacks' way), the folded lines summed by number,
    # but for the samples without call chains and those of a second event (the stacks' way).
    plain = copies.replace(b"java1", b"c1")
    summed = _folded_same(plain, _read(plain, True), CHUNK)
    assert summed == (path.name.split(".")[0] not in ("flat", "events"))


def _analysed(profile: Profile) -> tuple[Hotspots, list[ClassShare], list[Finding]]:
    """The hotspots, rule classes and findings of ``profile``, as ``kforensic profile`` makes them."""
    stacks = selected_stacks(profile)
    table = profile.table if stacks is profile.stacks and profile.table is not None else stack_table(stacks)
    hot = compute_hotspots(profile, stacks, table=table)
    classes = class_shares(stacks, hot.total_period, table)
    return hot, classes, profile_findings(profile, stacks, hot, classes, table)


def test_the_analysis_makes_only_the_stacks_it_cites() -> None:
    # Bundled recordings, each sample its own thread (a busy machine's distinct stacks): read by number, the
    # stacks are columns, and the tables, rule classes and findings made from their numbers make a ProfileStack
    # only for the stacks they cite (first lines, evidence, the heaviest of each class); the same results as from
    # every stack made.
    samples = [
        sample
        for copy in range(3)
        for name in ("kernel", "mixed", "contend", "jit")
        for sample in read_gzip_text(DATA / f"{name}.perf.txt.gz").split(b"\n\n")
    ]
    text = b"".join(
        re.sub(rb"^(\S+) \d+ ", b"\\1 %d " % (100 + i), sample, count=1) + b"\n\n" for i, sample in enumerate(samples)
    )
    got = _read(text, True)
    assert isinstance(got.stacks, StackColumns) and len(got.stacks) >= VECTOR_FROM and got.table is not None
    lazy = _analysed(got)
    assert 0 < got.stacks.made_so_far <= 50  # of 5,000
    assert any(f.title.startswith("Top hotspot") for f in lazy[2])  # its stack found by its first line
    every = list(got.stacks)
    assert _analysed(replace(got, stacks=every, table=None)) == lazy

    # Times with leading zeros, 6 and 9 fraction digits, 15 digits in all: the counters' first headers are the
    # texts' own (the compiled pass keeps each text's masked header and its time's digits as one integer).
    chain = b"\n\tffffffff81000000 sym+0x1f ([kernel.kallsyms])\n\n"
    times = [b"0.000001", b"0007.5", b"123456.000000009", b"99.000000001"]
    text = b"".join(b"app %d [00%d] %s: 1 cpu-clock: " % (i, i % 2, t) + chain for i, t in enumerate(times))
    got = _same(text * 2, 61)
    assert [s.first_header for s in got.stacks] == [
        f"app {i} [00{i % 2}] {t.decode()}: 1 cpu-clock: " for i, t in enumerate(times)
    ]
    assert [s.samples for s in got.stacks] == [2, 2, 2, 2]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from([b"", b"a", b"ab", b"\n", b"a\n", b"\nb", b"b\0", b"\t 1 f (x)\n\t 2 g+0x1 (y)"]),
            max_size=30,
        ),
        max_size=6,
    )
)
def test_texts_are_numbered_in_the_order_met(calls: list[list[bytes]]) -> None:
    # Call chain texts given whole (the per-sample code's counters) are numbered as the chunk pass numbers them
    # (each kept as its lines' numbers): equal texts one number, in the order met, each text given back as it was.
    texts = ChunkSlots(jitted_scan()).bodies()
    expected: dict[bytes, int] = {}
    for call in calls:
        joined = b"".join(call)
        sizes = np.array([len(t) for t in call], np.int64)
        got = texts.number(np.frombuffer(joined, np.uint8), np.cumsum(sizes) - sizes, np.cumsum(sizes))
        assert got.tolist() == [expected.setdefault(t, len(expected)) for t in call]
    assert len(texts) == len(expected)
    assert [texts.text(k) for k in range(len(texts))] == list(expected)


@pytest.mark.parametrize("shift", range(8))
def test_texts_given_whole_get_the_numbers_the_chunk_pass_gave_them(shift: int) -> None:
    # The chunk pass hashes a text's 8-byte words read at any offset of its chunk; texts given whole hash the same
    # words made of their bytes: one text, one number, whichever way and at whichever offset it came.
    frame = b"\t ffffffff81000000 sym+0x1f ([kernel.kallsyms])\n\t 4005 main+0x3 (/bin/app)"
    texts = [frame[:n] for n in range(1, len(frame) + 1) if frame[n - 1] != 10]  # (a text ends before a newline)
    head = b"a" + b"p" * shift + b" 10 [001] 5.%06d: 1 cpu-clock: \n"
    chunk = b"".join(head % i + t + b"\n\n" for i, t in enumerate(texts))
    slots = ChunkSlots(jitted_scan())
    assert slots.scan(b"", memoryview(chunk)) is not None
    bodies = slots.bodies()
    assert sorted(map(bodies.text, range(len(bodies)))) == sorted(texts)
    met = len(bodies)
    for pad in range(8):
        joined = b"x" * pad + b"".join(texts)
        sizes = np.array([pad, *map(len, texts)], np.int64)
        got = bodies.number(np.frombuffer(joined, np.uint8), np.cumsum(sizes) - sizes, np.cumsum(sizes))[1:]
        assert list(map(bodies.text, got.tolist())) == texts  # the chunk pass's numbers, no new one
    assert len(bodies) == met + 8  # only the pads ("" and "x" to "xxxxxxx") are new


def test_chunks_the_per_sample_code_reads() -> None:
    head = b"app 10 [001] %s: 1 cpu-clock:ppp: \n\tffffffff81000000 sym+0x1f ([kernel.kallsyms])\n"
    head += b"\t 4005 main+0x3 (/bin/app)\n\n"
    ok = b"".join(head % (b"%d.%06d" % (5 + i, i)) for i in range(40))
    long_time = head % b"1234567890.1234567"  # 17 digits: not read exactly
    two_times = head.replace(b"main+0x3", b"main 7.5: x") % b"9.5"  # a new text with two times
    lost = b":-1    -1 [000]  12.5: 1 cpu-clock: \n\tffffffff81000000 sym+0x1 ([kernel.kallsyms])\n\n"
    garbage = b"not a sample\n\n#comment\n\n"
    cut = head.rstrip(b"\n") % b"99.5"  # a last sample without its blank line
    for middle in (long_time, two_times, lost, garbage, lost + two_times):
        text = ok + middle + ok + middle + ok + cut
        for chunk in (CHUNK, 300, 61):
            got = _same(text, chunk)
            assert sum(s.samples for s in got.stacks) >= 120
    assert len(_same(ok + two_times + ok + two_times, 200).stacks) == 2  # the times masked: one text, and the odd one


@pytest.mark.parametrize("shift", range(8))
def test_newlines_and_colons_are_found_beside_any_byte_at_any_offset(shift: int) -> None:
    # The chunk pass finds them eight bytes at a time (a mask of the bytes equal to each, its set bits taken lowest
    # first): beside every byte value, several in one word, at every offset of a word and in the bytes past the
    # last whole word, it finds the offsets a byte-by-byte search finds, and the times' colons among them.
    odd = b"".join(bytes([v, 10, v, 58, 10, 58, v, v, 58, 10, 0x8A, 0xBA, v]) for v in range(256))
    timed = b"".join(b"a 1 [0] %d.5: 1 c: \n\t 1 f (x)\n\n" % i for i in range(16))
    for tail in (b"", b"\n\n", b"x:\n\n", b"xxxxx:\n\n"):
        text = b"y" * shift + odd + b"\n\n" + timed + tail
        slots = ChunkSlots(jitted_scan())
        got = slots.scan(b"", memoryview(text))
        assert got is not None
        assert got.newlines.tolist() == [i for i, c in enumerate(text) if c == 10]
        assert int(slots.state[perf_chunks.COLONS]) == text.count(b":")
        assert got.colons.tolist() == [m.end() - 2 for m in re.finditer(rb" \d+\.\d+: ", text)]


@pytest.mark.parametrize("shift", range(8))
def test_texts_equal_but_for_one_byte_are_told_apart_at_any_offset(shift: int) -> None:
    # Headers and call chain texts are compared with the stored ones and copied into their stores eight bytes at a
    # time, the chunk's side read at any offset: texts equal but for one byte, wherever it is, are distinct, a
    # text met again is the one kept, and each is kept as it was.
    head = b"app 10 [001] 5.5: 1 cpu-clock: "
    body = b"\t ffffffff81000000 some_symbol+0x1f ([kernel.kallsyms])\n\t 4005 main+0x3 (/bin/app)"
    heads = [head[:i] + b"Z" + head[i + 1 :] for i in range(len(head)) if head[i : i + 1] not in b"5.:"]
    bodies = [body[:i] + b"Z" + body[i + 1 :] for i in range(len(body)) if body[i] != 10]
    pairs = [(h, body) for h in heads] + [(head, b) for b in bodies]
    text = b"y" * shift + b"\n\n" + b"".join(h + b"\n" + b + b"\n\n" for h, b in pairs * 2)
    slots = ChunkSlots(jitted_scan())
    got = slots.scan(b"", memoryview(text))
    assert got is not None
    lead = [b"y" * shift] if shift else []  # (a first piece of a header alone; none: the empty piece, slot 0)
    first = 1 + len(lead)
    numbered = got.slots.tolist()[1:-1]  # (the last piece is empty: slot 0)
    assert numbered[: len(pairs)] == numbered[len(pairs) :] == list(range(first, len(pairs) + first))
    masked = [re.sub(rb" \d\.\d: ", b" 0.0: ", h) for h in [*heads, head]]  # (the time masked where it is one)
    assert sorted(map(slots.header_text, range(slots.headers))) == sorted([*lead, *masked])
    texts = slots.bodies()
    assert sorted(map(texts.text, range(len(texts)))) == sorted([b""] * len(lead) + [body, *bodies])


def test_a_chunk_forgotten_leaves_no_trace() -> None:
    slots = ChunkSlots(jitted_scan())
    one = b"a 1 [0] 1.5: 1 c: \n\t 1 f (x)\n\n"
    two = b"b 2 [0] 2.5: 1 c: \n\t 2 g (y)\n\n"
    first = slots.scan(b"", memoryview(one))
    assert first is not None and first.new_texts == [b"a 1 [0] 0.0: 1 c: \n\t 1 f (x)"] and first.base == 1
    got = slots.scan(one, memoryview(two))
    assert got is not None and got.slots.tolist() == [1, 2, 0] and got.base == 2 and len(got.new_texts) == 1
    slots.forget()  # the reader read that chunk another way: the second text is new again, with the same slot
    again = slots.scan(two, memoryview(one))
    assert again is not None and again.slots.tolist() == [2, 1, 0] and again.new_texts == got.new_texts
    assert (again.lo, again.hi) == (1.5, 2.5) and again.lines.tolist() == [1, 1, 0]
    assert int(np.count_nonzero(slots.table)) == 2
    # A time of 16 digits is not read exactly (mask_times gives up too): nothing interned, the chunk goes elsewhere.
    assert slots.scan(b"", memoryview(b"c 3 [0] 123456789.1234567: 1 c: \n\n")) is None
    assert slots.scan(b"", memoryview(b"c 3 [0] 12345678.1234567: 1 c: \n\n")) is not None


def test_the_tables_rehashed_keep_every_entry() -> None:
    slots = ChunkSlots(jitted_scan())
    text = read_gzip_text(DATA / "kernel.perf.txt.gz")
    text = text[: text.rfind(b"\n\n") + 2]
    first = slots.scan(b"", memoryview(text))
    assert first is not None and first.new_texts
    tables = ("table", "header_table", "body_table", "key_table", "chain_table")
    sizes = [len(getattr(slots, t)) for t in tables]
    made = [int(np.count_nonzero(getattr(slots, t))) for t in tables]
    assert all(made)
    slots._room(0, max(sizes), max(sizes))  # room for as many new pieces and lines again: every table doubles
    assert all(len(getattr(slots, t)) > size for t, size in zip(tables, sizes, strict=True))
    again = slots.scan(text[:100], memoryview(text)[100:])
    assert again is not None and not again.new_texts
    assert again.slots.tolist() == first.slots.tolist()
    assert [int(np.count_nonzero(getattr(slots, t))) for t in tables] == made


_PARTS = st.sampled_from(
    [
        b"app 10 [001] ",
        b"x/7 ",
        b"5.25: ",
        b"12.000001: ",
        b" 3.5: ",
        b"1 cpu-clock: ",
        b"\n\t ffffffff81000000 k+0x1 ([kernel.kallsyms])",
        b"\n\t 4005 u (/bin/a)",
        b"\n",
        b"\n\n",
        b" ",
        b":",
        b"7",
        b"#",
        b"123456789012345678.5: ",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PARTS, max_size=40).map(b"".join), st.integers(7, 200))
def test_any_text_reads_as_with_the_numpy_passes(text: bytes, chunk: int) -> None:
    for parser_text in (text, text * 3):
        _same(parser_text, chunk)


@pytest.mark.parametrize("few", [0, 64])
def test_a_lost_task_keeps_its_chunk_counted_by_number(few: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # perf prints a task it lost as `:-1    -1 [000]  12.5: ...`: the script's header rule takes the time into the
    # command name, so each such sample is its own stack, read sample by sample; the other new texts of its chunk
    # are still counted by number (not parsed text by text), with the same profile as the numpy passes give.
    # Both ways of merging the per-sample counters among the others: sorted all together (few=0), or each put in
    # its place (the few the lost task makes).
    monkeypatch.setattr(perf_script, "_FEW_COUNTED", few)
    head = b"app %d [001] %d.%06d: 1 cpu-clock:ppp: \n\tffffffff81000000 sym+0x%x ([kernel.kallsyms])\n\n"
    lost = b":-1    -1 [000]  %d.5: 1 cpu-clock: \n\tffffffff81000000 sym+0x1 ([kernel.kallsyms])\n\n"
    text = b"".join(head % (i % 7, 5 + i, i, i % 11) + (lost % i if i % 50 == 3 else b"") for i in range(400))
    for chunk in (CHUNK, 4096, 997):
        got = _same(text, chunk)
        assert sum(s.samples for s in got.stacks) == 408
        assert sum(s.thread.comm.startswith(":-1") for s in got.stacks) == 8  # each lost sample its own stack
        parser = ScriptParser("x", bulk=True, scanner=jitted_scan())
        for at in range(0, len(text), chunk):
            parser.feed(text[at : at + chunk])
        assert len(parser._counts) == 8  # only the lost samples went the per-sample way


@RECORDS
def test_a_tracepoint_recorded_with_cpu_clock_is_its_own_event_counted_by_number(tmp_path: Path) -> None:
    """``perf record -e sched:sched_switch -e cpu-clock -g`` (review ue6 #5): the compiled pass reads the tracepoint's
    samples (their header lines end with the payload) as another event, as the numpy passes do, and counts them by
    number, not sample by sample."""
    import subprocess

    from collectors.perf_script import find_perf

    data = record("spin", "sched-cpu", 0.6)
    perf = find_perf()
    assert perf is not None
    text = subprocess.run([perf, "script", "-i", str(data)], capture_output=True, timeout=120, check=True).stdout
    events = subprocess.run(
        [perf, "script", "-i", str(data), "-F", "event"], capture_output=True, timeout=120, check=True
    ).stdout.split()
    cpu = events.count(b"cpu-clock:")
    assert cpu and events.count(b"sched:sched_switch:"), set(events)
    for chunk in (CHUNK, 4096):
        got = _same(text, chunk)
        assert got.first_event == "cpu-clock" and set(got.events) == {"cpu-clock", "sched:sched_switch"}, got.events
        assert got.events["cpu-clock"] == cpu
        assert sum(s.samples for s in selected_stacks(got)) == cpu
        assert any(n.startswith("several events") and "sched:sched_switch: " in n for n in got.notes), got.notes
        parser = ScriptParser("x", bulk=True, scanner=jitted_scan(), expected=len(text))
        for at in range(0, len(text), chunk):
            parser.feed(text[at : at + chunk])
        assert all(k[3] != b"sched:sched_switch" for k in parser._counts)  # none read sample by sample


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(1 << 63), (1 << 63) - 1), max_size=300), st.integers(0, 2))
def test_a_rehashed_table_is_one_linear_probing_makes(hashes: list[int], first: int) -> None:
    # Every entry is found from its home place without crossing a free place (what the kernels' look-ups need),
    # and each place holds one entry: the table the kernels would make inserting them one by one.
    from collectors.perf_chunks import _rehashed

    values = np.array(hashes, np.int64)
    table = _rehashed(len(values), values, first)
    mask = len(table) - 1
    assert sorted(table[table > 0].tolist()) == list(range(first + 1, len(values) + 1))
    for entry in range(first, len(values)):
        place = int(values[entry]) & mask
        while table[place] != entry + 1:
            assert table[place] != 0
            place = (place + 1) & mask
    # Homes crowded at the table's end: runs that go on at its start.
    crowded = np.full(40, 127, np.int64)
    table = _rehashed(40, crowded, 0)
    assert len(table) == 128 and sorted(table[table > 0].tolist()) == list(range(1, 41))


def test_edge_lines_in_samples_read_as_with_the_numpy_passes() -> None:
    # The keyer's edge lines in the samples of a chunk (keyed in the chunk pass itself, as tests/collectors/
    # test_perf_chains.py checks texts given whole): the profile both ways.
    from tests.collectors.test_perf_frames import EDGES

    frame = b"\t ffffffff81000000 sym+0x1f ([kernel.kallsyms])"
    bodies = [*EDGES, *(frame + b"\n" + e for e in EDGES), *(e + b"\n#c\n" + frame for e in EDGES), b"\n".join(EDGES)]
    head = b"app %d [001] %d.5: 1 cpu-clock: \n"
    text = b"".join(head % (i % 5, i) + body + b"\n\n" for i, body in enumerate(bodies * 3) if b"\n\n" not in body)
    for chunk in (CHUNK, 997):
        _same(text, chunk)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_CHAIN_LINE, min_size=1, max_size=6).map(b"\n".join), min_size=1, max_size=20))
def test_any_chain_reads_as_with_the_numpy_passes(bodies: list[bytes]) -> None:
    head = b"app 7 [001] %d.5: 1 cpu-clock: \n"
    _same(b"".join(head % i + b + b"\n\n" for i, b in enumerate(bodies) if b"\n\n" not in b and b[:1] != b"\n"), 61)


def test_folded_sums_leave_out_the_lines_of_no_frame() -> None:
    # A line whose symbol starts with "(" names no frame (left out of its chain, as the script leaves it out), and
    # inlined frames split at "->" may name an empty one (kept): the folded lines summed by number are the stacks'.
    head = b"app %d [001] %d.5: 1 cpu-clock: \n"
    bodies = [
        b"\t ffffffff81000000 k+0x1 ([kernel.kallsyms])\n\t 4005 (unknown) (/bin/a)\n\t 4006 main+0x2 (/bin/a)",
        b"\t 4007 (anon) (/bin/a)\n\t 4006 main+0x2 (/bin/a)",
        b"\t 4008 a->->b+0x3 (/bin/a)\n\t 4005 (unknown) (/bin/a)",
        b"\t 4009 ->c (/bin/a)",
    ]
    text = b"".join(head % (i % 3, i) + body + b"\n\n" for i, body in enumerate(bodies * 4))
    got = _same(text)
    assert _folded_same(text, got, CHUNK)
    assert any(";;" in line for line in folded_lines(selected_stacks(got)))  # the empty inlined frame, kept


@pytest.mark.parametrize(
    ("symbol", "dso"),
    [
        ("do_syscall_64", "[kernel.kallsyms]"),
        ("[unknown]", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"),
        ("[unknown]", "[unknown]"),
        ("a->b->c", "/bin/a"),
        ("std::vector<int>::operator->", "/bin/a"),
        ("->c", "/bin/a"),
        ("(anon)", "/bin/a"),
        ("f(int, char*)", "/bin/a"),
        ("(anonymous namespace)::g(int)", "/bin/a"),
        ("x;y", "/bin/a"),
        ("say\"'hi'", "/bin/a"),
        ("''", "/bin/a"),
        ("/tmp/old (deleted", "deleted)"),
        ("caf\u00e9", "/bin/\u00e9"),
        ("bad\udcff", "/bin/a"),
    ],
)
def test_a_key_names_its_frames_as_the_frames_made_of_it_do(symbol: str, dso: str) -> None:
    # The folded sums name each key without making its frames where its symbol is its one name: the same names.
    from collectors.perf_script import _key_names, _symbol_frames

    for high in (False, True):
        raw, dso_b = symbol.encode("utf-8", "surrogateescape"), dso.encode("utf-8", "surrogateescape")
        frames = _symbol_frames(raw, dso_b, False, high)
        assert _key_names(symbol, dso, high) == (";".join(f.name for f in frames) if frames else None)


def test_keys_that_differ_only_inside_are_told_apart_at_any_offset() -> None:
    # A key's hash reads its lengths and its first and last 8 bytes: keys that differ only between them meet in the
    # table, and the compare (8 bytes at a time, from any offset of the chunk and of the keys' store) tells them apart.
    head = b"app 7 [001] %d.5: 1 cpu-clock: \n"
    bodies = []
    for pad in range(8):
        for middle in (b"X", b"Y", b"XY", b"YX"):
            symbol = b"abcdefgh" + b"m" * pad + middle + b"m" * (8 - pad) + b"stuvwxyz"
            dso = b"/lib/" + b"d" * pad + middle + b"dddddddd.so"
            bodies.append(b"\t" + b" " * pad + b"4005 " + symbol + b"+0x1 (" + dso + b")\n\t 4006 main+0x2 (/bin/a)")
    text = b"".join(head % i + body + b"\n\n" for i, body in enumerate(bodies * 2))
    got = _same(text)
    assert len({s.frames[-1].name for s in got.stacks}) == 32  # (the leaf: each symbol its own)
    assert len({s.frames[-1].dso for s in got.stacks}) == 32
