"""The project's own LTTng kernel + user-space session (tests/data/lttng/kernel-session.tar.xz).

Recorded by lttng_fixtures/build.sh on a stock Debian 6.1 kernel with lttng-modules 2.13.9 and
`--syscall -a`: its poll, epoll_wait and select exits carry sequences of structs of bit-fields and
byte sequences.  Every event must be read (counts per name equal babeltrace2's), both decoders must
agree, and every payload must equal python3-bt2's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from collectors.ctf import layouts as d
from collectors.ctf.general import Event
from collectors.ctf.metadata import parse_metadata
from collectors.ctf.reader import K_SYSCALL_ENTRY, K_SYSCALL_EXIT, NARROW, Session
from forensics.model import StreamEvent
from forensics.units import iso_utc
from tests.collectors.ctf_check import GENERAL_DECODED, compare, extract_session, stream_events

BT2_DUMP = Path(__file__).with_name("bt2_dump.py")
BT2_STREAMS = Path(__file__).with_name("bt2_streams.py")
needs_babeltrace = pytest.mark.skipif(shutil.which("babeltrace2") is None, reason="needs babeltrace2")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


def babeltrace_counts(path: Path) -> Counter[str]:
    text = subprocess.run(["babeltrace2", str(path)], capture_output=True, text=True, check=True).stdout
    return Counter(m.group(1) for m in re.finditer(r"^\[[^\]]+\] \([^)]+\) \S+ ([\w:]+):", text, re.M))


@needs_babeltrace
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_every_event_is_read_as_babeltrace2_counts_it(session: Path, compiled: bool) -> None:
    s = Session(str(session), compiled)
    for _rows, _owner in s.rows():
        pass
    assert not s.notes()
    ours: Counter[str] = Counter()
    for t in s.traces:
        for (sid, eid), name in t.layouts.names.items():
            if t.counts[sid, eid]:
                ours[name] += int(t.counts[sid, eid])
    expected = babeltrace_counts(session)
    assert ours == expected
    assert sum(expected.values()) == sum(st.events for st in s.streams) > 40_000
    for name in ("syscall_exit_poll", "syscall_exit_epoll_wait", "syscall_exit_pselect6", "lttng_ust_tracef:event"):
        assert ours[name] > 0, name  # the layouts of issue 33 are in the session


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_split_chunks_hold_the_merged_rows(session: Path, compiled: bool) -> None:
    """Session.split_rows (what the analyses read) gives the rows of Session.rows: every row's first NARROW
    columns, every column of the rows that are not syscall events, the same streams, in the same time order."""
    rows, owner = (np.concatenate(x) for x in zip(*Session(str(session), compiled).rows(), strict=True))
    chunks = list(Session(str(session), compiled).split_rows())
    head = np.concatenate([c.head for c in chunks])
    assert np.array_equal(head, rows[:, :NARROW])
    assert np.array_equal(np.concatenate([c.owner for c in chunks]), owner)
    wide = (rows[:, d.R_KIND] != K_SYSCALL_ENTRY) & (rows[:, d.R_KIND] != K_SYSCALL_EXIT)
    assert 0 < int(wide.sum()) < len(rows) // 2  # the session is mostly syscalls: both kinds of row are there
    assert np.array_equal(np.concatenate([c.wide for c in chunks]), rows[wide])
    at, start = [], 0
    for c in chunks:
        assert np.array_equal(c.full(c.wide_at), c.wide)
        at.append(c.wide_at + start)
        start += len(c.head)
    assert np.array_equal(np.concatenate(at), np.flatnonzero(wide))


@pytest.mark.xdist_group(GENERAL_DECODED)  # the streams' general decoding shared (ctf_check.stream_events)
def test_both_decoders_agree_on_every_stream(session: Path) -> None:
    n = 0
    for meta_path in sorted(session.rglob("metadata")):
        meta = parse_metadata(meta_path)
        for stream in sorted(meta_path.parent.iterdir()):
            if stream.is_file() and stream.name != "metadata" and not stream.name.startswith("."):
                n += compare(meta, stream)
    assert n > 40_000


def _general_events(trace: Path) -> list[Event]:
    out: list[Event] = []
    for stream in sorted(p for p in trace.iterdir() if p.is_file() and p.name != "metadata"):
        out += stream_events(stream)
    return out


@pytest.mark.xdist_group(GENERAL_DECODED)
@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="needs the system python3 with python3-bt2")
def test_every_payload_equals_python_bt2(session: Path) -> None:
    """Field by field.  babeltrace2 2.0.4 shows an empty user-space string (a failed copy, recorded as one
    NUL byte) as the value of the previous event's string: those, and only those, differ."""
    res = subprocess.run(
        ["/usr/bin/python3", str(BT2_DUMP), str(session / "kernel")], capture_output=True, text=True, check=False
    )
    if res.returncode == 2:
        pytest.skip(res.stderr.strip())
    assert res.returncode == 0, res.stderr[-2000:]
    bt = {(e["cycles"], e["name"], json.dumps(e["fields"], sort_keys=True)) for e in json.loads(res.stdout)}
    ours = _general_events(session / "kernel")
    assert len(json.loads(res.stdout)) == len(ours)
    stale = 0
    for ev in ours:
        key = (ev.cycles, ev.name, json.dumps(ev.fields, sort_keys=True))
        if key in bt:
            continue
        empty = [k for k, v in ev.fields.items() if v == "" and ev.flat.get(f"{k}#len") == 0]
        assert empty, (ev.name, ev.offset, ev.fields)
        stale += 1
    assert stale < len(ours) // 100


def bt2_streams(path: Path) -> dict[str, list[list[Any]]]:
    """Each stream file's events as python3-bt2 lists them (tests/collectors/bt2_streams.py), else a skip."""
    if not Path("/usr/bin/python3").exists():
        pytest.skip("needs the system python3 with python3-bt2")
    res = subprocess.run(["/usr/bin/python3", str(BT2_STREAMS), str(path)], capture_output=True, text=True, check=False)
    if res.returncode == 2:
        pytest.skip(res.stderr.strip())
    assert res.returncode == 0, res.stderr[-2000:]
    out: dict[str, list[list[Any]]] = json.loads(res.stdout)
    return out


def test_an_event_is_named_as_babeltrace2_lists_it(session: Path) -> None:
    """An event cited by its stream file, 1-based number in it, packet and time (the clock's offset applied): the
    event python3-bt2 lists at that number of that stream is the one of that name, time, clock value and packet,
    for events of every stream of the kernel and the user-space traces; the two decoders name them alike."""
    bt = bt2_streams(session)
    named: dict[bool, list[tuple[StreamEvent | None, str]]] = {}
    for compiled in (True, False):
        s = Session(str(session), compiled)
        got = []
        for rows, owner in s.rows():
            cited = np.flatnonzero(rows[:, d.R_OFF] >= 0)
            last = [int(cited[owner[cited] == k][-1]) for k in np.unique(owner[cited]).tolist()]  # each stream's
            for i in sorted({*cited[::53].tolist(), *last}):
                stream = int(owner[i])
                at = s.stream_event(s.position(stream, int(rows[i, d.R_OFF])))
                got.append((at, s.event_name(stream, int(rows[i, d.R_EID]))))
        named[compiled] = got
    assert named[True] == named[False] and len(named[True]) > 500
    streams: Counter[str] = Counter()
    for at, name in named[True]:
        assert at is not None
        ns, cycles, bt_name, epoch, packet = bt[str(session / at.stream)][at.number - 1]
        assert (at.ns, at.cycles, at.packet, at.epoch, at.clock) == (ns, cycles, packet, epoch, "monotonic"), at
        assert name == bt_name and epoch, (at, bt_name)
        streams[at.stream] += 1
    assert set(streams) == {"kernel/kch_0", "kernel/kch_1", "ust/uid/0/64-bit/uch_0"}  # (uch_1 holds no event)


@needs_babeltrace
def test_x86_interrupt_vectors_are_irqs_named_by_their_event(session: Path) -> None:
    from forensics.pipelines.trace import analyse_trace_file

    expected = babeltrace_counts(session / "kernel")
    irqs = {i.irq: i for i in analyse_trace_file(str(session)).analysis.irqs}
    for vector_event in ("local_timer", "call_function_single"):
        entries = expected[f"x86_irq_vectors_{vector_event}_entry"]
        got = [i for i in irqs.values() if i.name == vector_event]
        assert len(got) == 1 and got[0].irq < 0, got  # IRQ -vector, as ftrace text gives it
        assert got[0].durations.n == entries > 0


#: A CTF clock block's offset from the Epoch, in cycles (LTTng's monotonic clock runs at 1 GHz: ns).
CLOCK_OFFSET = re.compile(r'clock \{[^}]*name = "?monotonic"?;[^}]*\boffset = (\d+);')


def test_the_boot_time_is_the_monotonic_clocks_offset(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report --trace`` on an LTTng session said "Boot time: not available: no input records when the kernel
    booted" while it cited every event in UTC, computed from the clock's offset: the UTC of monotonic 0, the boot."""
    from collectors.ctf.reader import MONOTONIC_BOOT_UNCERTAINTY, session_boot_time
    from forensics.model import BootTime
    from tests.helpers import cli_run

    # The offsets as the metadata writes them, the kernel trace's and user space's (each measured on its own).
    found = {p.parent.name: CLOCK_OFFSET.search(p.read_text("latin-1")) for p in session.rglob("metadata")}
    offsets = {name: int(m.group(1)) for name, m in found.items() if m is not None}
    assert len(offsets) == 2 and len(set(offsets.values())) == 2, offsets
    first, last = min(offsets.values()), max(offsets.values())
    boot = session_boot_time(Session(str(session), False))
    assert isinstance(boot, BootTime) and boot.wall == first / 1e9
    assert boot.uncertainty == pytest.approx(MONOTONIC_BOOT_UNCERTAINTY + (last - first) / 1e9)
    assert "suspended" in boot.basis and "NTP" in boot.basis
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    assert cli_run(monkeypatch, capsys, "report", "--trace", session, "-o", md, "--json", out).returncode == 0
    doc = json.loads(out.read_text())
    assert doc["incident"]["boot_time"]["wall"] == boot.wall
    assert f"| Boot time | {iso_utc(boot.wall)} ±{boot.uncertainty:.1f} s (LTTng clock monotonic's offset" in (
        md.read_text()
    )
    # A kernel event's UTC as cited is the kernel trace's offset plus its clock value: the boot plus its time.
    events = [e["locator"]["event"] for f in doc["incident"]["findings"] for e in f["evidence"]]
    kernel = [e for e in events if e and e["stream"].startswith("kernel/")]
    assert kernel and all(e["timestamp_ns"] == offsets["kernel"] + e["cycles"] for e in kernel)
