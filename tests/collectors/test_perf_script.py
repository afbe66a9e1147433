"""Reading profiles: folded output equal to stackcollapse-perf.pl, line numbers, chunking, bad input."""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import perf_script
from collectors.perf_script import ScriptParser, find_perf, read_gzip_text, read_profile
from detectors.profile.hotspots import byte_sorted, folded_lines, selected_stacks
from forensics.errors import InputError
from forensics.report.examined import verdict_line

DATA = Path(__file__).resolve().parents[1] / "data" / "profile"
WORKLOADS = ("mixed", "contend", "kernel", "interp", "jit")
STACKCOLLAPSE = Path(__file__).resolve().parents[3] / "shared" / "tools" / "flamegraph" / "stackcollapse-perf.pl"


def _folded(path: Path) -> str:
    profile = read_profile(str(path))
    return "".join(line + "\n" for line in folded_lines(selected_stacks(profile)))


@pytest.mark.parametrize("workload", WORKLOADS)
def test_folded_equals_the_stored_stackcollapse_output(workload: str) -> None:
    expected = gzip.decompress((DATA / f"{workload}.folded.gz").read_bytes()).decode()
    assert expected  # the stored output is not empty
    assert _folded(DATA / f"{workload}.perf.txt.gz") == expected


@pytest.mark.skipif(shutil.which("perl") is None or not STACKCOLLAPSE.exists(), reason="needs perl and FlameGraph")
@pytest.mark.parametrize("workload", [*WORKLOADS, "events"])
def test_folded_equals_stackcollapse_perf_pl_run_now(workload: str) -> None:
    text = read_gzip_text(DATA / f"{workload}.perf.txt.gz")
    perl = subprocess.run(["perl", str(STACKCOLLAPSE)], input=text, capture_output=True, check=True, timeout=60)
    assert _folded(DATA / f"{workload}.perf.txt.gz") == perl.stdout.decode()


def test_folded_lines_sort_by_their_bytes_where_undecodable_bytes_sort_apart_from_their_code_points() -> None:
    # b"\xff" (kept as the lone surrogate U+DCFF) sorts after U+E000's three bytes, though its code point is lower.
    texts = ["b", "\udcff", "\ue000", "a\u00e9", "a"]
    assert byte_sorted(list(texts)) == ["a", "a\u00e9", "b", "\ue000", "\udcff"]
    assert byte_sorted(["\u00e9", "z"]) == ["z", "\u00e9"]  # no surrogate: sorted as strings, the same order


@given(st.lists(st.binary(max_size=6), unique=True))
def test_folded_lines_sort_as_perl_sorts_bytes(raw: list[bytes]) -> None:
    texts = [b.decode("utf-8", "surrogateescape") for b in raw]
    assert [t.encode("utf-8", "surrogateescape") for t in byte_sorted(texts)] == sorted(raw)


@pytest.mark.parametrize("vectorised", [False, True], ids=["counted", "numpy"])
def test_headers_whose_command_name_holds_the_time_are_read_as_the_script_reads_them(
    vectorised: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # perf prints ``:-1    -1 [000]  4465.794124: ...`` for a task it lost; the script's header rule
    # then takes the time into the command name, so each such sample is a stack of its own.  Excerpt
    # of a `perf record -a -g` recording (tests/data/profile/lost.*), with the script's output.
    import collectors.perf_script as ps

    monkeypatch.setattr(ps, "NUMPY_FROM", 0 if vectorised else 1 << 40)
    expected = gzip.decompress((DATA / "lost.folded.gz").read_bytes()).decode()
    assert expected.count(":-1____-1_[000]__44") == 3  # the time is in the name, not masked
    text = read_gzip_text(DATA / "lost.perf.txt.gz")
    for size in (len(text), 4096):
        parser = ScriptParser("x")
        for i in range(0, len(text), size):
            parser.feed(text[i : i + size])
        assert "".join(line + "\n" for line in folded_lines(selected_stacks(parser.close()))) == expected


@pytest.mark.parametrize("vectorised", [False, True], ids=["counted", "numpy"])
def test_samples_of_exited_tasks_are_comm_minus_one_tid_minus_one(
    vectorised: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # perf prints comm ``:-1`` and tid -1 for a task that exited before perf read its comm.  They were read as
    # comm ``:-1    -1 [001]  4456.121700:`` and tid 1001001 (the period), which the per-thread table, the JSON
    # and --pid's lists showed; the folded stacks keep that name (stackcollapse-perf.pl's, the test above).
    import collectors.perf_script as ps

    monkeypatch.setattr(ps, "NUMPY_FROM", 0 if vectorised else 1 << 40)
    parser = ScriptParser("x")
    parser.feed(read_gzip_text(DATA / "lost.perf.txt.gz"))
    stacks = parser.close().stacks
    exited = [s for s in stacks if s.thread.exited]
    assert {(s.thread.comm, s.thread.pid, s.thread.tid) for s in exited} == {(":-1", None, -1)}
    assert sum(s.samples for s in exited) == 4
    assert sorted(s.thread.folded_name for s in exited)[0] == ":-1    -1 [000]  4465.794124:"
    assert not any(s.thread.comm.startswith(":-1 ") or s.thread.tid == 1001001 for s in stacks)
    two = ScriptParser("x")  # perf script -F comm,pid,tid,...: pid/tid -1/-1
    two.feed(b":-1    -1/-1    [001]  12.5:    250 cpu-clock: \n\tffffffff81000000 sym+0x1 ([kernel.kallsyms])\n\n")
    (only,) = two.close().stacks
    assert (only.thread.comm, only.thread.pid, only.thread.tid, only.thread.exited) == (":-1", -1, -1, True)
    assert folded_lines([only]) == [":-1____-1/-1____[001]__12.5:;sym 250"]  # as stackcollapse-perf.pl


def test_first_line_and_header_of_each_stack_stand_in_the_text() -> None:
    lines = read_gzip_text(DATA / "contend.perf.txt.gz").decode().split("\n")
    profile = read_profile(str(DATA / "contend.perf.txt.gz"))
    assert len(profile.stacks) > 10
    for s in profile.stacks:
        assert lines[s.first_line - 1] == s.first_header


@pytest.mark.parametrize("vectorised", [False, True], ids=["counted", "numpy"])
@pytest.mark.parametrize("size", [7, 4096, 1 << 20])
def test_chunk_size_and_window_path_do_not_change_the_result(
    size: int, vectorised: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import collectors.perf_script as ps

    monkeypatch.setattr(ps, "NUMPY_FROM", 0 if vectorised else 1 << 40)
    text = read_gzip_text(DATA / "mixed.perf.txt.gz")
    whole = ScriptParser("x", (float("-inf"), float("inf")))  # the per-sample path is the reference
    whole.feed(text)
    ref = {(s.thread, s.frames): (s.samples, s.period, s.first_line) for s in whole.close().stacks}
    for window in (None, (float("-inf"), float("inf"))):  # the window takes the per-sample path
        parser = ScriptParser("x", window)
        for i in range(0, len(text), size):
            parser.feed(text[i : i + size])
        got = {(s.thread, s.frames): (s.samples, s.period, s.first_line) for s in parser.close().stacks}
        assert got == ref


def test_inlined_frames_split_as_perls_split_does() -> None:
    """stackcollapse-perf.pl splits ``a->b`` (perf's inlined frames) with Perl's split, which drops trailing empty
    fields: ``operator->`` (a C++ operator, met in a recording of a busy machine: llvmlite) is one frame."""
    from collectors.perf_script import parse_frame_line

    def names(symbol: bytes) -> list[str]:
        got = parse_frame_line(b"\t 4b5218 " + symbol + b"+0x18 (/lib/libllvmlite.so)", False)
        assert got is not None
        return [f.name for f in got]

    assert names(b"llvm::Value::use_iterator_impl<llvm::Use>::operator->") == [
        "llvm::Value::use_iterator_impl<llvm::Use>::operator"
    ]
    assert names(b"inner->outer") == ["inner", "outer"]
    assert names(b"a->->b") == ["a", "", "b"]  # inner empty fields stay, as Perl keeps them
    assert names(b"->") == []
    text = (
        b"python 10 [000] 5.5: 1 cpu-clock: \n\t 4b5218 X::operator->+0x18 (/lib/a.so)\n\t 4005 main+0x3 (/bin/a)\n\n"
    )
    parser = ScriptParser("x")
    parser.feed(text)
    assert folded_lines(parser.close().stacks) == ["python;main;X::operator 1"]


def test_kinds_of_frames_kernel_jit_unknown() -> None:
    profile = read_profile(str(DATA / "jit.perf.txt.gz"))
    frames = {f.name: f for s in profile.stacks for f in s.frames}
    jit = frames["jit::loop<int&, q>"]  # quotes dropped as stackcollapse-perf.pl drops them
    assert jit.jit and not jit.kernel and jit.dso.startswith("/tmp/perf-")
    assert frames["[unknown]"].dso == "[unknown]"
    kernel = read_profile(str(DATA / "kernel.perf.txt.gz"))
    assert any(f.kernel and f.dso == "[kernel.kallsyms]" for s in kernel.stacks for f in s.frames)


def test_window_keeps_only_samples_inside_it(tmp_path: Path) -> None:
    profile = read_profile(str(DATA / "mixed.perf.txt.gz"))
    assert profile.start is not None and profile.end is not None
    mid = (profile.start + profile.end) / 2
    half = read_profile(str(DATA / "mixed.perf.txt.gz"), window=(profile.start, mid))
    n_all = sum(s.samples for s in profile.stacks)
    n_half = sum(s.samples for s in half.stacks)
    assert 0 < n_half < n_all
    assert half.end is not None and half.end <= mid
    assert any("outside the --window" in n for n in half.notes)


def test_samples_without_callchains_give_flat_stacks_and_say_so() -> None:
    profile = read_profile(str(DATA / "flat.perf.txt.gz"))
    assert profile.flat_samples > 100
    assert all(len(s.frames) == 1 for s in profile.stacks)
    assert any("no call chain" in n for n in profile.notes)
    assert max(profile.stacks, key=lambda s: s.samples).frames[0].name == "spin_math.constprop.0"


def test_several_events_use_the_first_and_note_the_others() -> None:
    profile = read_profile(str(DATA / "events.perf.txt.gz"))
    assert profile.first_event == "page-faults"
    assert set(profile.events) == {"page-faults", "cpu-clock"}
    assert any("several events" in n and "cpu-clock" in n for n in profile.notes)


_SWITCH = b"\tffffffff81000000 __schedule+0x1 ([kernel.kallsyms])\n\n"
_CLOCK = b"\tffffffff81000001 spin+0x1 ([kernel.kallsyms])\n\n"


@pytest.mark.parametrize(
    ("header", "event", "period", "traced"),
    [
        (
            b"app 7 [000] 1.5: sched:sched_switch: prev_comm=a prev_pid=7 ==> next_comm=b",
            b"sched:sched_switch",
            1,
            True,
        ),
        # The payload ends as a header whose event ends the line: ": 12 b:" (stackcollapse-perf.pl's rule reads
        # event b, period 12); perf prints the event after the time.
        (b"app 7 [000] 1.5: sched:sched_switch: prev_comm=a: 12 b:", b"sched:sched_switch", 1, True),
        (b"app 7 [000] 1.5:          3 probe_app:enter: comm=x:1 7 y: 9.5: z:", b"probe_app:enter", 3, True),
        (b"my app 7/8 1.5: irq:irq_handler_entry: irq=24 name=eth0:", b"irq:irq_handler_entry", 1, True),
        # perf script -F without the trace field: nothing after the event (review ue8 #10).
        (b"sh 4382 74681.431619: sched:sched_process_exec: ", b"sched:sched_process_exec", 1, True),
        (b"sh 4382 74681.431619:          1 sched:sched_process_exec:", b"sched:sched_process_exec", 1, True),
        # Not a tracepoint: the event the header ends with, as before; a line without call chain reads as before.
        (b"app 7 [000] 1.5:     250000 cpu-clock:ppp: ", b"cpu-clock:ppp", 250000, False),
        (b"app 7 [000] 1.5:     250000 cycles:u: ", b"cycles:u", 250000, False),
        # perf's newer modifiers (parse-events.l: R, X): no tracepoint either
        (b"app 7 [000] 1.5:     250000 cycles:R: ", b"cycles:R", 250000, False),
        (b"app 7 [000] 1.5:     250000 cycles:ppX: ", b"cycles:ppX", 250000, False),
        (b"app 7 [000] 1.5:     250000 cycles:ppp:  ffffffff81000000 sym+0x1 ([kernel.kallsyms])", b"", 1, False),
        # A comm that reads as the pid: no event where perf prints it, the end rule's (none here) as before.
        (b"ab 1 c: 7 [000] 1.5: sched:sched_switch: x", b"", 1, False),
    ],
)
def test_a_tracepoint_is_named_where_perf_prints_its_event_never_inside_its_payload(
    header: bytes, event: bytes, period: int, traced: bool
) -> None:
    m = perf_script._HEADER.match(header)
    assert m is not None
    named: set[bytes] = set()
    got = perf_script._parse_header(header, m, named)
    assert got is not None and got[3:] == (event, period), got
    assert named == ({event} if traced else set())


def test_tracepoint_samples_beside_another_event_are_left_out_in_every_path() -> None:
    # The tracepoint's sample comes first: the event of the samples' rule is kept (stackcollapse-perf.pl's filter).
    switch = b"app 7 [000] %d.5: sched:sched_switch: prev_comm=a: 12 b:\n" + _SWITCH
    clock = b"app 7 [000] %d.6:     250000 cpu-clock: \n" + _CLOCK
    text = b"".join(switch % i + clock % i + clock % (i + 1) for i in range(40))
    for parser in (ScriptParser("x"), ScriptParser("x", (0.0, 1e9)), ScriptParser("x", bulk=True, scanner=None)):
        for at in range(0, len(text), 256):
            parser.feed(text[at : at + 256])
        profile = parser.close()
        assert profile.events == {"sched:sched_switch": 40, "cpu-clock": 80}
        assert profile.first_event == "cpu-clock"
        (note,) = [n for n in profile.notes if n.startswith("several events")]
        assert note.endswith(
            "use the first that is not a tracepoint, cpu-clock (sched:sched_switch: 40 samples left out)"
        )
        stacks = selected_stacks(profile)
        assert [(s.event, s.samples, s.period) for s in stacks] == [("cpu-clock", 80, 80 * 250000)]


def test_tracepoints_recorded_alone_name_no_event_as_before() -> None:
    # (named then by the perf.data header or their field: detectors.profile.events)
    text = b"".join(
        b"app 7 [000] %d.5: sched:sched_switch: prev_comm=a\n" % i
        + _SWITCH
        + b"app 7 [000] %d.6: sched:sched_wakeup: comm=a\n" % i
        + _CLOCK
        for i in range(5)
    )
    for parser in (ScriptParser("x"), ScriptParser("x", (0.0, 1e9)), ScriptParser("x", bulk=True, scanner=None)):
        parser.feed(text)
        profile = parser.close()
        assert (profile.events, profile.first_event) == ({"": 10}, None)
        assert {s.event for s in profile.stacks} == {""} and not profile.notes


def test_garbage_lines_are_skipped_with_a_note(tmp_path: Path) -> None:
    text = read_gzip_text(DATA / "mixed.perf.txt.gz")
    cut = text.index(b"\n\n", 5000) + 2
    bad = tmp_path / "bad.txt"
    bad.write_bytes(text[:cut] + b"this is not a sample\n\n\x00\xff garbage\n\n" + text[cut:])
    profile = read_profile(str(bad))
    assert profile.skipped_lines == 2
    assert any("not perf script samples" in n for n in profile.notes)
    assert sum(s.samples for s in profile.stacks) == sum(
        s.samples for s in read_profile(str(DATA / "mixed.perf.txt.gz")).stacks
    )


def test_folded_input_round_trips(tmp_path: Path) -> None:
    folded = gzip.decompress((DATA / "kernel.folded.gz").read_bytes())
    path = tmp_path / "k.folded"
    path.write_bytes(folded)
    profile = read_profile(str(path))
    assert profile.kind == "folded"
    assert "".join(line + "\n" for line in folded_lines(profile.stacks)) == folded.decode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\n\n  \n", "is empty"),
        (bytes(range(256)) * 4, "binary, not text"),  # said so, not quoted as a line (user-eye round 5 #11)
        (b"\x1f\x8b\x08garbage", "gzip"),
    ],
)
def test_bad_inputs_raise_one_line_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        read_profile(str(path))
    assert "\n" not in info.value.message


def test_truncated_gzip_is_read_up_to_the_cut_and_said(tmp_path: Path) -> None:
    data = (DATA / "mixed.perf.txt.gz").read_bytes()
    path = tmp_path / "cut.gz"
    path.write_bytes(data[: len(data) // 2])
    whole = read_profile(str(DATA / "mixed.perf.txt.gz"))
    cut = read_profile(str(path))
    assert any("ends early" in n for n in cut.notes)
    assert not any("ends early" in n for n in whole.notes)
    assert 0 < sum(s.samples for s in cut.stacks) < sum(s.samples for s in whole.stacks)


def test_perf_data_without_perf_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import collectors.perf_script as ps

    path = tmp_path / "perf.data"
    path.write_bytes(b"PERFILE2" + bytes(200))
    monkeypatch.setattr(ps, "find_perf", lambda: None)
    with pytest.raises(InputError, match="perf is not installed"):
        read_profile(str(path))


PERF = find_perf()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A perf.data recorded now (a short dd: kernel-heavy, a few hundred samples)."""
    if PERF is None:
        pytest.skip("perf is not installed")
    d = tmp_path_factory.mktemp("perf")
    out = d / "perf.data"
    proc = subprocess.run(
        [
            PERF,
            "record",
            "-q",
            "-g",
            "-F",
            "999",
            "-o",
            str(out),
            "--",
            "dd",
            "if=/dev/zero",
            f"of={d / 'f'}",
            "bs=1M",
            "count=60",
            "conv=fsync",
            "status=none",
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0 or not out.exists():
        pytest.skip(f"perf record is not allowed here: {proc.stderr.decode(errors='replace')[:200]}")
    return out


def test_perf_data_is_read_through_perf_script(recorded: Path) -> None:
    profile = read_profile(str(recorded))
    assert profile.kind == "perf.data"
    assert sum(s.samples for s in profile.stacks) > 10
    assert any(s.thread.comm == "dd" for s in profile.stacks)


def test_perf_data_header_names_the_host_and_kernel(recorded: Path, tmp_path: Path) -> None:
    """perf.data's header (perf report --header-only) names the host and kernel; text without it does not."""
    import os

    from forensics.model import NotAvailable
    from forensics.pipelines.profile import analyse_profile

    me = os.uname()
    result = analyse_profile(str(recorded))
    assert (result.incident.host, result.incident.kernel_release) == (me.nodename, me.release)
    what = result.incident.examined[0].what
    assert f"'# hostname : {me.nodename}'" in what and f"'# os release : {me.release}'" in what
    assert PERF is not None
    plain, headed = tmp_path / "plain.perf.txt", tmp_path / "headed.perf.txt"
    for out, extra in ((plain, []), (headed, ["--header"])):
        with open(out, "wb") as f:
            subprocess.run(
                [PERF, "script", *extra, "-i", str(recorded)], stdout=f, stderr=subprocess.DEVNULL, check=True
            )
    named = analyse_profile(str(headed)).incident
    assert (named.host, named.kernel_release) == (me.nodename, me.release)
    unnamed = analyse_profile(str(plain)).incident
    assert unnamed.host == NotAvailable("perf script text does not name the host")
    assert unnamed.kernel_release == NotAvailable("perf script text does not name the kernel release")
    # The header's command line is kept: how it was recorded.
    recorded_by, from_text = read_profile(str(recorded)).recorded_by, read_profile(str(headed)).recorded_by
    assert recorded_by is not None and recorded_by.startswith("# cmdline : ") and " -g " in recorded_by
    assert from_text == recorded_by


#: ``perf script --header`` text of a stripped program built without frame pointers, recorded with -g: each of its
#: samples is one frame perf could not name (as Debian's gzip, where a user's recording was told to "record with
#: perf record -g" and to run a perf annotate that finds no samples).
STRIPPED = """\
# ========
# captured on    : Sun Dec  6 16:12:00 2026
# hostname : kf
# os release : 6.1.0-kf
# cmdline : /usr/bin/perf record -g -F 999 -o kf.data -- gzip -c big
# ========
#
"""
SAMPLE = "gzip 19640 {t:.6f}:    1001001 cpu-clock:ppp: \n\t            {a:x} [unknown] (/usr/bin/gzip)\n\n"


def test_one_frame_stacks_of_a_recording_with_call_graphs_blame_frame_pointers(tmp_path: Path) -> None:
    from forensics.pipelines.profile import analyse_profile

    samples = "".join(SAMPLE.format(t=100 + i / 1000, a=0x4330 + i % 3) for i in range(200))
    asked, unasked = tmp_path / "asked.perf.txt", tmp_path / "unasked.perf.txt"
    asked.write_text(STRIPPED + samples)
    unasked.write_text(STRIPPED.replace(" -g", "") + samples)
    result = analyse_profile(str(asked))
    (said,) = [c for e in result.incident.examined for c in e.could_not if c.startswith("call paths")]
    assert "asked for call chains" in said and "-- gzip -c big" in said and "--call-graph dwarf" in said
    (plain,) = [c for e in analyse_profile(str(unasked)).incident.examined for c in e.could_not if "call paths" in c]
    assert plain == "call paths: most samples carry no call chain (record with perf record -g)"
    # Its top hotspot is the program's unnamed addresses: perf report lists them, perf annotate cannot.
    (top,) = [f for f in result.incident.findings if "Top hotspot" in f.title]
    assert top.title.startswith("Top hotspot: [gzip]")
    assert top.next_steps[0].startswith("`perf report --stdio --dsos /usr/bin/gzip --sort sym`")


def test_truncated_perf_data_is_an_error_or_a_note(recorded: Path, tmp_path: Path) -> None:
    data = recorded.read_bytes()
    whole = read_profile(str(recorded))
    assert whole.notes == []  # the whole file: nothing to say
    # Named here, recorded here: not another host's (review ue19 #10).
    assert whole.read_on == os.uname().nodename and whole.host == whole.read_on and not whole.recorded_elsewhere
    start, size = int.from_bytes(data[40:48], "little"), int.from_bytes(data[48:56], "little")
    cut = tmp_path / "cut-header.data"
    # inside the attribute section, before the first sample (the data section starts at
    # `start`, a few hundred bytes in): perf script refuses the file
    cut.write_bytes(data[: start // 2])
    with pytest.raises(InputError) as info:
        read_profile(str(cut))
    assert "\n" not in info.value.message and str(cut) in info.value.message
    assert "exit status -" not in info.value.message  # a signal is named (a cut DWARF recording: SIGBUS, 7)
    cut = tmp_path / "cut-data.data"
    cut.write_bytes(data[: start + size // 2])  # inside the samples: perf script reads up to the cut
    try:
        profile = read_profile(str(cut))
    except InputError as exc:  # a perf that refuses it
        assert "\n" not in exc.message
    else:
        assert any("truncated" in n for n in profile.notes)


def test_a_perf_data_cut_in_its_samples_says_so_in_what_was_examined(tmp_path: Path) -> None:
    """Review ue19 #9: a perf.data cut at 35% of its bytes (69% of the samples missing) gave "No problem found" on an
    examined line that read as a whole recording (the cut in a note only), and "the header does not name the host"
    where the feature sections that name it were cut off."""
    from forensics.model import NotAvailable
    from forensics.pipelines.profile import analyse_profile

    if PERF is None:
        pytest.skip("perf is not installed")
    whole = tmp_path / "whole.data"
    # A small ring buffer (-m 2 pages) makes perf record write a round every few KB, so that perf script reads the
    # rounds before the cut (a cut inside the first round leaves it nothing to print).
    busy = ["timeout", "2", "sh", "-c", "while :; do :; done"]
    record = [PERF, "record", "-q", "-g", "-F", "999", "-m", "2", "-o", str(whole), "--", *busy]
    subprocess.run(record, check=False, capture_output=True, timeout=120)
    data = whole.read_bytes()
    start, size = int.from_bytes(data[40:48], "little"), int.from_bytes(data[48:56], "little")
    # Cut 8 bytes into the record after the last round but one (PERF_RECORD_FINISHED_ROUND, type 68): perf script
    # prints the rounds before it, then stops at the cut record.
    at, rounds, samples = start, [], 0
    while at + 8 <= start + size:
        kind = int.from_bytes(data[at : at + 4], "little")
        samples += kind == 9  # PERF_RECORD_SAMPLE
        if kind == 68 and samples:
            rounds.append(at + 8)
        at += max(8, int.from_bytes(data[at + 6 : at + 8], "little"))
    assert len(rounds) >= 2, f"perf record wrote {len(rounds)} round(s) with samples: nothing to cut between"
    end = rounds[-2] + 8
    cut = tmp_path / "cut.data"
    cut.write_bytes(data[:end])
    result = analyse_profile(str(cut))
    (examined,) = result.incident.examined
    said = f"; cut off: the file has {end:,} of the {start + size:,} bytes its header announces ("
    assert said in examined.what and "the samples after " in examined.what, examined.what
    assert any(c.startswith("hotspots of the part cut off") for c in examined.could_not)
    # the verdict names the cut too (Examined.cut, the same as a cut LTTng stream's: ue22 #10)
    (cut_off,) = examined.cut
    assert cut_off in examined.could_not and verdict_line(result.incident).endswith(f"cut off: {cut_off}.")
    host = result.incident.host
    assert isinstance(host, NotAvailable) and "cut off before the header sections" in str(host), host
    (entire,) = analyse_profile(str(whole)).incident.examined
    assert "cut off" not in entire.what and not any("cut off" in c for c in entire.could_not)


def test_a_cut_perf_data_is_measured_from_its_header() -> None:
    """The share missing is the data section's past the cut, from the header's offset and size (bytes 40, 48)."""
    from collectors.perf_script import PERF_DATA_MAGIC, perf_data_cut

    head = PERF_DATA_MAGIC + bytes(32) + (1000).to_bytes(8, "little") + (9000).to_bytes(8, "little")
    assert perf_data_cut(head, 12_000) is None  # the data section ends at 10,000: whole (features after it)
    cut = perf_data_cut(head, 4000)
    assert cut is not None and cut.announced == 10_000 and cut.missing_share == pytest.approx(100 * 6000 / 9000)
    assert cut.said() == "the file has 4,000 of the 10,000 bytes its header announces (66.7% of its samples' data " \
                         "is missing)"  # fmt: skip
    unfinished = perf_data_cut(head[:48] + bytes(8), 4000)
    assert unfinished is not None and unfinished.missing_share is None and "never finished" in unfinished.said()
    assert perf_data_cut(b"not perf" + head[8:], 4000) is None


def test_a_perf_killed_by_a_signal_is_said_so() -> None:
    """perf script on a DWARF recording cut inside its samples dies of SIGBUS: "exit status -7" said nothing."""
    from collectors.perf_script import signal_name

    assert signal_name(7) == "SIGBUS" and signal_name(9) == "SIGKILL" and signal_name(999) == "signal 999"


def test_findings_of_a_perf_data_input_resolve_through_perf_script(recorded: Path) -> None:
    from collectors.perf_script import perf_script_lines
    from detectors.profile.findings import profile_findings
    from detectors.profile.hotspots import compute_hotspots
    from forensics.model import Evidence, LocatorKind
    from tests.helpers import assert_evidence_resolves

    profile = read_profile(str(recorded))
    stacks = selected_stacks(profile)
    findings = profile_findings(profile, stacks, compute_hotspots(profile, stacks))
    lines = perf_script_lines(recorded)

    def resolve(evidence: Evidence) -> str | None:
        n = evidence.locator.start
        return lines[n - 1] if evidence.source == str(recorded) and 0 < n <= len(lines) else None

    assert all(e.locator.kind is LocatorKind.SAMPLE for f in findings for e in f.evidence)
    assert_evidence_resolves(findings, resolvers={LocatorKind.SAMPLE: resolve})


# Pieces of perf script text for the property below: headers with and without pid/tid and CPU,
# times of different lengths (a fraction of 6 or 9 digits, seconds beyond the gather window),
# lost-task headers whose command name holds the time, frame lines (one that looks like a time),
# comment lines, garbage, a sample without its blank line.
_COMMS = [b"app", b"kworker/0:1", b"my app", b":-1"]
_FRAMES = [
    b"\tffffffff81000010 do_syscall_64+0x10 ([kernel.kallsyms])",
    b"\t    7f0000001234 memcpy+0x4 (/usr/lib/libc.so.6)",
    b"\t            1234 main+0x1a (/tmp/app)",
    b"\t               0 [unknown] ([unknown])",
    b"\t            55aa f 1.5: g (/tmp/app)",  # a frame that holds a time-like field
]


# The strategies of the pieces, built once: built in each draw, hypothesis validated them again each time (half the
# property's CPU).
_SAMPLES = st.integers(1, 40)
_KIND = st.sampled_from(["sample"] * 8 + ["comment", "garbage", "no-cpu"])
_COMM = st.sampled_from(_COMMS)
_PID = st.sampled_from([b"7", b"7/8", b"-1"])
_CPU = st.integers(0, 3)
_WHOLE = st.sampled_from([1, 42, 4456, 123456789])
_FRAC = st.integers(0, 10**9 - 1)
_FRAC_DIGITS = st.sampled_from([6, 6, 9])
_PERIOD = st.sampled_from([b"", b" 1001001", b" 250"])
# (a tracepoint: its payload follows the event, and ends as an event would, ": 12 b: ")
_EVENT = st.sampled_from([b"cpu-clock:ppp", b"page-faults", b"sched:sched_switch: prev_comm=a: 12 b"])
_BODY = st.lists(st.sampled_from(_FRAMES), min_size=0, max_size=4)


@st.composite
def _script_texts(draw: st.DrawFn) -> bytes:
    out = []
    for _ in range(draw(_SAMPLES)):
        kind = draw(_KIND)
        if kind == "comment":
            out.append(b"# captured on: x\n# a: 1.5: b\n\n")
            continue
        if kind == "garbage":
            out.append(b"not a sample line\n\n")
            continue
        comm = draw(_COMM)
        pid = draw(_PID)
        cpu = b"" if kind == "no-cpu" else b" [00" + str(draw(_CPU)).encode() + b"]"
        whole = str(draw(_WHOLE)).encode()
        frac = str(draw(_FRAC)).zfill(draw(_FRAC_DIGITS)).encode()
        period = draw(_PERIOD)
        event = draw(_EVENT)
        header = comm + b" " + pid + cpu + b"  " + whole + b"." + frac + b":" + period + b" " + event + b": "
        body = b"\n".join(draw(_BODY))
        out.append(header + (b"\n" + body if body else b"") + b"\n\n")
    text = b"".join(out)
    if draw(st.booleans()):
        text = text[:-1]  # no blank line after the last sample: the script does not count it
    return text


def _result(parser: ScriptParser, text: bytes, size: int) -> tuple[object, ...]:
    for i in range(0, len(text), size):
        parser.feed(text[i : i + size])
    p = parser.close()
    stacks = sorted(
        (
            (
                s.thread.comm,
                s.thread.pid,
                s.thread.tid,
                s.event,
                s.frames,
                s.samples,
                s.period,
                s.first_line,
                s.first_header,
            )
            for s in p.stacks
        ),
        key=repr,
    )
    return (stacks, p.events, p.start, p.end, p.lines, p.skipped_lines, p.first_skipped, p.flat_samples)


@settings(max_examples=150, deadline=None)
@given(text=_script_texts(), sizes=st.lists(st.integers(16, 700), min_size=1, max_size=2))
def test_the_bulk_paths_equal_the_per_sample_path(text: bytes, sizes: list[int]) -> None:
    # The window path reads sample by sample: the reference for the counted and the numpy path,
    # whatever the chunking (a chunk may end between the two newlines of a blank line).
    reference = _result(ScriptParser("x", (float("-inf"), float("inf"))), text, len(text) + 1)
    for size in [len(text) + 1, *sizes]:
        assert _result(ScriptParser("x", bulk=True), text, size) == reference
        assert _result(ScriptParser("x"), text, size) == reference


_JAVA_AND_NOT = b"".join(
    comm + b" [000] 1.00000" + str(i).encode() + b": 1 cycles: \n"
    b"\t    1234 Lcom/x/Y;.run(I)V+0x4 (/tmp/perf-7.map)\n"
    b"\t    ffffffff81000000 do_syscall_64+0x10 ([kernel.kallsyms])\n\n"
    for i, comm in enumerate([b"java 7/8", b"python 9/9", b"java 7/8"])
)


@pytest.mark.parametrize(("bulk", "keyed_from"), [(False, 1024), (True, 1024), (True, 1)])
def test_one_chain_text_reads_as_java_frames_only_in_a_java_thread(
    bulk: bool, keyed_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # stackcollapse-perf.pl drops the L of Java class names in threads named java*, and only there
    # (its output on this text, checked by hand against the script); also with the frame lines keyed
    # by numpy (collectors.perf_frames), which a bulk reader does from KEYED_FROM new lines.
    from collectors import perf_script

    monkeypatch.setattr(perf_script, "KEYED_FROM", keyed_from)
    perf_script._KEYED.clear()
    parser = ScriptParser("x", bulk=bulk)
    parser.feed(_JAVA_AND_NOT)
    stacks = parser.close().stacks
    assert folded_lines(stacks) == ["java;do_syscall_64;com/x/Y:.run 2", "python;do_syscall_64;Lcom/x/Y:.run 1"]


def test_call_chains_parsed_in_small_batches_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from collectors import perf_script

    expected = gzip.decompress((DATA / "mixed.folded.gz").read_bytes()).decode()
    monkeypatch.setattr(perf_script, "CHAIN_BATCH", 3)
    assert _folded(DATA / "mixed.perf.txt.gz") == expected


@pytest.mark.parametrize("workload", [*WORKLOADS, "events", "lost"])
@pytest.mark.parametrize("batch", [4096, 7])
def test_the_numpy_reader_makes_the_frames_of_the_per_sample_one(
    workload: str, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The numpy path (masked texts, keyed frame lines) reads the stacks the per-sample path reads.

    Equal frames are one tuple (later stages group stacks by its identity), also when the call
    chains are parsed in batches of 7 texts.
    """
    from collectors import perf_script

    monkeypatch.setattr(perf_script, "CHAIN_BATCH", batch)
    text = read_gzip_text(DATA / f"{workload}.perf.txt.gz")
    reference = _result(ScriptParser("x"), text, len(text) + 1)
    assert _result(ScriptParser("x", bulk=True), text, len(text) + 1) == reference
    bulk = ScriptParser("x", bulk=True)
    bulk.feed(text)
    frames = [s.frames for s in bulk.close().stacks]
    assert len({id(f) for f in frames}) == len(set(frames)) < len(frames)


def test_a_recording_cut_inside_its_last_sample_says_so(tmp_path: Path) -> None:
    """perf script ends every sample with a blank line: a text cut inside the last one (a copy cut short, an
    interrupted ``perf script > file``) leaves it out, as stackcollapse-perf.pl does, and says where."""
    whole = read_gzip_text(DATA / "mixed.perf.txt.gz")
    cut = whole[: whole.rindex(b"\n\n") - 5]  # inside the last sample's last frame line
    path = tmp_path / "cut.perf.txt"
    path.write_bytes(cut)
    last_header = (
        cut[: cut.rindex(b"\n\n")].count(b"\n") + 3
    )  # the line after the blank one that ends the sample before
    profile = read_profile(str(path))
    whole_profile = read_profile(str(DATA / "mixed.perf.txt.gz"))
    assert sum(s.samples for s in profile.stacks) == sum(s.samples for s in whole_profile.stacks) - 1
    assert [n for n in profile.notes if "ends inside" in n] == [
        f"the input ends inside the sample at line {last_header} (no blank line after it: a cut file?); "
        "that sample is not counted, as stackcollapse-perf.pl does not count it"
    ]
    assert not [n for n in whole_profile.notes if "ends inside" in n]


def _shifted(text: bytes, after: int, by: float) -> bytes:
    """``text`` with the times of its samples after the first ``after`` moved by ``by`` seconds (6 decimals)."""
    pieces = text.split(b"\n\n")
    for i in range(after, len(pieces)):
        pieces[i] = re.sub(rb" (\d+\.\d+): ", lambda m: b" %.6f: " % (float(m.group(1)) + by), pieces[i], count=1)
    return b"\n\n".join(pieces)


@pytest.mark.parametrize(("by", "says"), [(432000.0, "two successive samples are 432000."), (-1.5, "step back by 1.4")])
def test_a_span_across_a_clock_jump_or_a_gap_is_flagged(by: float, says: str, tmp_path: Path) -> None:
    """The mixed recording with its clock moved forward 5 days (or back 1.5 s) after its 200th sample: the span
    (432,002 s, 'over 432002.043 s') is not presented as the recording's length: a note says why, on every
    reading path (the regular expression's, per sample with --window, numpy's, the compiled pass's)."""
    from collectors.perf_chains_aot import jitted_scan

    text = _shifted(read_gzip_text(DATA / "mixed.perf.txt.gz"), 200, by)
    path = tmp_path / "jumped.perf.txt"
    path.write_bytes(text)
    plain = read_profile(str(path))
    assert plain.span_doubt is not None and [n for n in plain.notes if says in n]
    windowed = read_profile(str(path), window=(0.0, 1e9))
    assert windowed.span_doubt == plain.span_doubt and [n for n in windowed.notes if says in n]
    for scanner in (None, jitted_scan()):
        parser = ScriptParser("x", bulk=True, scanner=scanner)
        for at in range(0, len(text), 4096):
            parser.feed(text[at : at + 4096])
        got = parser.close()
        assert got.span_doubt == plain.span_doubt and [n for n in got.notes if says in n]
    out = subprocess.run(
        [sys.executable, "-m", "forensics", "profile", str(path), "--format", "json"], capture_output=True, check=False
    )
    doc = json.loads(out.stdout)
    assert out.returncode in (0, 1) and any(says in n for n in doc["notes"])
    assert "see the notes" in json.dumps(doc["incident"])


@pytest.mark.parametrize("path", sorted(DATA.glob("*.perf.txt.gz")), ids=lambda p: p.name.split(".")[0])
def test_recordings_without_a_jump_say_nothing_of_their_span(path: Path) -> None:
    # lost.perf.txt: a 9.7 s step in 10.5 s, the others 24 ms apart on average: not a jump by the bounds.
    profile = read_profile(str(path))
    assert profile.span_doubt is None
    assert not [n for n in profile.notes if "step back" in n or "successive samples" in n]


@pytest.mark.parametrize("folded", [False, True], ids=["script", "folded"])
def test_a_line_too_long_for_a_profile_is_cut_and_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folded: bool
) -> None:
    # A line past MAX_LINE_BYTES (16 MiB; 1 MiB here) is kept as its head and read as no sample: a 2 GB one held
    # 3 GB and took minutes.  The samples around it, and their line numbers, are those of a short garbage line.
    monkeypatch.setattr(perf_script, "MAX_LINE_BYTES", 1 << 20)
    if folded:  # (past the 50 lines the format is told from)
        text = gzip.decompress((DATA / "kernel.folded.gz").read_bytes()) * 3
        cut = text.index(b"\n", sum(len(line) + 1 for line in text.split(b"\n")[:60])) + 1
        long_line, after = b"a;b;" + b"c" * 3_000_000 + b" 5", b"\n"  # its head would be a stack
    else:
        text = gzip.decompress((DATA / "mixed.perf.txt.gz").read_bytes())
        cut = text.index(b"\n\n", 5000) + 2
        long_line, after = b"x 1   1.0:    1 cpu-clock:ppp:" + b" " * 3_000_000, b"\n\n"  # its head: a header
    for where, tail in (("inside", after + text[cut:]), ("at the end", b"")):
        long = tmp_path / f"long-{where}.txt"
        long.write_bytes(text[:cut] + long_line + tail)
        short = tmp_path / f"short-{where}.txt"
        short.write_bytes(text[:cut] + b"not a sample" + tail)
        got, want = read_profile(str(long)), read_profile(str(short))
        assert got.kind == want.kind == ("folded" if folded else "perf script")
        assert got.skipped_lines == want.skipped_lines == 1
        assert got.first_skipped is not None and want.first_skipped is not None
        assert got.first_skipped[0] == want.first_skipped[0]
        assert got.first_skipped[1].startswith(" " + long_line[:40].decode())
        assert sorted(map(repr, got.stacks)) == sorted(map(repr, want.stacks))
        assert (got.lines, got.start, got.end) == (want.lines, want.start, want.end)


@pytest.mark.parametrize("folded", [False, True], ids=["script", "folded"])
def test_blank_text_before_a_profile_past_its_bound_counts_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folded: bool
) -> None:
    # Blank text before the first line was held whole (2 GB of newlines: 3.8 GB); past BLANK_HEAD_MAX only its
    # newlines are: the same samples, at the same line numbers, as when it is held whole.
    text = gzip.decompress((DATA / ("kernel.folded.gz" if folded else "mixed.perf.txt.gz")).read_bytes())
    path = tmp_path / "padded.txt"
    # 2.5 M lines: several chunks (CHUNK) past the bound set below (perf script reads a line of blanks as a line, not
    # as the blank line between samples).  (4.5 M lines took 1.3-1.8x the CPU for no other path.)
    path.write_bytes((b" \t\n" if folded else b"\n") * 2_500_000 + text)
    whole = read_profile(str(path))
    monkeypatch.setattr(perf_script, "BLANK_HEAD_MAX", 1 << 20)
    bounded = read_profile(str(path))
    assert bounded.kind == whole.kind == ("folded" if folded else "perf script")
    assert sorted(map(repr, bounded.stacks)) == sorted(map(repr, whole.stacks))
    assert (bounded.lines, bounded.skipped_lines) == (whole.lines, whole.skipped_lines)
    assert min(s.first_line for s in bounded.stacks) > 2_500_000


@pytest.mark.parametrize(
    ("line", "old", "new"),
    [(0, b"12796", b"7" * 5000), (0, b"1001001", b"7" * 5000), (0, b"12796", b"1/" + b"7" * 5000)],
    ids=["pid", "period", "tid"],
)
def test_a_header_of_a_number_past_64_bits_is_skipped(line: int, old: bytes, new: bytes, tmp_path: Path) -> None:
    """perf prints 64-bit numbers: a header whose pid, tid or period has 5,000 digits is no header (was exit 4: int()
    refuses 4,300 digits), skipped and said; the other samples are counted as before."""
    lines = gzip.decompress((DATA / "contend.perf.txt.gz").read_bytes()).splitlines(keepends=True)
    lines[line] = lines[line].replace(old, new, 1)
    path = tmp_path / "blown.perf.txt"
    path.write_bytes(b"".join(lines))
    whole = read_profile(str(DATA / "contend.perf.txt.gz"))
    profile = read_profile(str(path))
    assert profile.skipped_lines == 1 and profile.first_skipped is not None
    assert profile.first_skipped[0] == line + 1
    assert sum(s.samples for s in profile.stacks) == sum(s.samples for s in whole.stacks) - 1


def test_a_folded_count_past_64_bits_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "blown.folded"
    path.write_bytes(b"a;b;c 3\n" + b"a;b;d " + b"9" * 5000 + b"\n")
    profile = read_profile(str(path))
    assert profile.skipped_lines == 1
    assert [s.samples for s in profile.stacks] == [3]


def test_a_long_digit_run_in_a_header_is_read_once() -> None:
    # stackcollapse-perf.pl's rules as it writes them, ``(\d+)*``, tried each split of a digit run not followed by
    # whitespace: 2^n ways (4 s for 26 digits, a line of a hostile or damaged text).  Read as ``(\d+)?``: no match,
    # at once, and the same groups where there is one.
    run = b"7" * 64
    assert perf_script._EVENT.search(b"app 1 [000] 1.5: " + run + b"x") is None
    assert perf_script._HEADER.match(b"app " + run + b"x") is None
    event = perf_script._EVENT.search(b"app 1 [000] 1.5: " + run + b" cycles:")
    assert event is not None and event.groups() == (run, b"cycles")
    header = perf_script._HEADER.match(b"app 12/" + run + b" [000]")
    assert header is not None and header.groups() == (b"app", b"12", run)


# stackcollapse-perf.pl's rules as it writes them: the reference the two rules above must agree with on every line
# short enough for its backtracking (a digit run of at most 16 here: 2^16 splits at worst).
_SCRIPT_HEADER = re.compile(rb"^(\S.+?)\s+(\d+)/*(\d+)*\s+")
_SCRIPT_EVENT = re.compile(rb":\s*(\d+)*\s+(\S+):\s*$")


#: Pieces of perf script's header lines, joined in any order (random text rarely takes both rules' shapes).
_PIECES = (
    "app",
    "kworker/0:1",
    " ",
    "  ",
    "12",
    "/",
    "3456",
    " [000] ",
    "1.5:",
    "12.000001:",
    " cycles:",
    "777",
    "x",
    ":",
)


_CHARS = "0123456789 /:[]x."
#: The lines' lengths, weighted as hypothesis drew them (4,000 draws): st.text(max_size=16)'s characters (16: 10%,
#: 2-3: 12% each, falling from there) and st.lists(max_size=8)'s pieces (8: 43%, 3: 13%, 4: 12%, falling).
_TEXT_WEIGHTS = (1, 2, 13, 12, 10, 10, 9, 8, 6, 5, 3, 4, 4, 2, 2, 1, 10)
_PIECES_WEIGHTS = (0.1, 0.4, 6, 13, 12, 10, 9, 8, 43)
LINES_PER_SEED = 20


def _header_line(rng: random.Random) -> bytes:
    """A line of characters of headers, or of their pieces joined in any order (random text rarely takes both rules'
    shapes), each half the time."""
    if rng.randrange(2):
        size = rng.choices(range(len(_TEXT_WEIGHTS)), _TEXT_WEIGHTS)[0]
        return "".join(rng.choices(_CHARS, k=size)).encode()
    size = rng.choices(range(len(_PIECES_WEIGHTS)), _PIECES_WEIGHTS)[0]
    return "".join(rng.choices(_PIECES, k=size)).encode()


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, (1 << 64) - 1))
def test_the_header_and_event_rules_match_as_the_scripts_rules(seed: int) -> None:
    # 3,000 lines (1,500 before), twenty an example from a random.Random that hypothesis seeds (a failure says its
    # seed, which hypothesis replays, and its line): drawn by hypothesis one line an example, its engine was ~95% of
    # the test's CPU (2 ms a line; the four matches some microseconds).
    rng = random.Random(seed)
    rules = ((perf_script._HEADER.match, _SCRIPT_HEADER.match), (perf_script._EVENT.search, _SCRIPT_EVENT.search))
    for _ in range(LINES_PER_SEED):
        line = _header_line(rng)
        for ours, script in rules:
            got, want = ours(line), script(line)
            assert (got is None) == (want is None), line
            if got is not None and want is not None:
                assert (got.span(), got.groups()) == (want.span(), want.groups()), line


def test_a_perf_data_without_samples_is_said_to_be_one(tmp_path: Path) -> None:
    """A real perf.data in which perf recorded no sample (a 1 s period over `true`) is named as one, not "not perf
    script text, folded stacks or perf.data" (review 11, 12a)."""
    if PERF is None:
        pytest.skip("perf is not installed")
    out = tmp_path / "zero.data"
    proc = subprocess.run(
        [PERF, "record", "-q", "-e", "cpu-clock", "-c", "1000000000", "-o", str(out), "--", "true"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0 or not out.exists():
        pytest.skip(f"perf record is not allowed here: {proc.stderr.decode(errors='replace')[:200]}")
    with pytest.raises(InputError) as got:
        read_profile(str(out))
    assert str(got.value) == f"{out}: a perf.data with no samples (perf script prints none)"
    assert got.value.hint is not None and f"perf report --header-only -i {out}" in got.value.hint


def test_a_trace_given_to_profile_points_to_kforensic_trace(tmp_path: Path) -> None:
    """The project's LTTng UST session (a directory) and its ftrace text are traces: each is named as one with the
    command that reads it (were "cannot read DIR: it is a directory / give a file inside it" and "not perf script
    text, folded stacks or perf.data"; review 11, 12h)."""
    import tarfile

    lttng = Path(__file__).resolve().parents[1] / "data" / "lttng"
    with tarfile.open(lttng / "ust.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    session = tmp_path / "ust"
    with pytest.raises(InputError) as got:
        read_profile(str(session))
    assert str(got.value) == f"{session}: an LTTng (CTF) trace directory, not a profile"
    assert got.value.hint is not None and got.value.hint.startswith(f"read it with `kforensic trace {session}`")
    kernel = str(lttng / "kernel.ftrace.txt.gz")
    with pytest.raises(InputError) as got:
        read_profile(kernel)
    assert str(got.value).startswith(f"{kernel} (gunzipped): no samples: an ftrace text trace, not a profile (line ")
    assert got.value.hint is not None and got.value.hint.startswith(f"read it with `kforensic trace {kernel}`")


def test_a_perf_data_sample_is_cited_by_its_time_and_cpu_and_its_line_of_perf_script_output(
    recorded: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A perf.data's evidence read "perf.data sample 547 (perf script line) 1440.446205 (trace clock)": a "sample
    547" that is a line of no file the user has.  Now the sample's time (``perf script --time``) and CPU when perf
    printed one come first, then "perf script output line N"; the call paths' "first sample" column says the same
    (it said "line 547", as of a text file), and the JSON's paths give the time and CPU."""
    from detectors.profile.findings import profile_findings
    from detectors.profile.hotspots import compute_hotspots
    from forensics.types.profile import sample_at
    from tests.helpers import cli_run

    profile = read_profile(str(recorded))
    stacks = selected_stacks(profile)
    findings = profile_findings(profile, stacks, compute_hotspots(profile, stacks))
    header = re.compile(r"(?:\[(\d+)\]\s+)?(\d+\.\d+):")
    cited = [e for f in findings for e in f.evidence]
    assert cited
    for e in cited:
        m = header.search(e.excerpt)
        assert m, e.excerpt
        on = f" on CPU {int(m.group(1))}" if m.group(1) else ""
        assert e.cite() == f"{recorded} sample at {m.group(2)}{on} (perf script output line {e.locator.start})"
    table = cli_run(monkeypatch, capsys, "profile", recorded, "--format", "md")
    assert table.returncode in (0, 1), table.stderr
    rows = [r for r in table.stdout.splitlines() if r.startswith("| ") and "perf script output line" in r]
    assert rows and not re.search(r"\| line \d+ \|", table.stdout)
    assert all(re.search(r"\| sample at \d+\.\d{6}( on CPU \d+)? \(perf script output line \d+\) \|$", r) for r in rows)
    doc = json.loads(cli_run(monkeypatch, capsys, "profile", recorded, "--format", "json").stdout)
    paths = [p for ps in doc["paths"].values() for p in ps]
    assert paths and all(isinstance(p["time"], float) and "cpu" in p for p in paths)
    # perf script's header with a CPU (a system-wide record's), as the reader takes it
    assert sample_at("dd 4242 [003] 1440.446205:    1001001 cpu-clock:ppp:") == (1440.446205, 3)
    assert sample_at("dd 4242  1440.446205:    1001001 cpu-clock:ppp:") == (1440.446205, None)


def test_the_documented_perf_script_command_prints_exactly_the_cited_sample(recorded: Path) -> None:
    """docs/profile.md said a cited sample is found with ``perf script -i FILE --time T,T``; perf prints T cut to the
    microsecond and the sample lies up to 999 ns after it (3932.397100933 cited as 3932.397100), so that printed
    nothing.  The command the doc gives now is run on a real recording for every cited sample: it prints exactly one
    sample, the cited one (its header as the evidence quotes it)."""
    from detectors.profile.findings import profile_findings
    from detectors.profile.hotspots import compute_hotspots

    assert PERF is not None
    doc = (Path(__file__).resolve().parents[2] / "docs" / "profile.md").read_text()
    form = re.search(r"`perf script -i FILE --time T,T(?:\+(0\.\d+))?( -C N)?`", doc)
    assert form, "docs/profile.md gives no `perf script -i FILE --time ...` command"
    after = float(form.group(1) or 0)
    profile = read_profile(str(recorded))
    stacks = selected_stacks(profile)
    cited = [e for f in profile_findings(profile, stacks, compute_hotspots(profile, stacks)) for e in f.evidence]
    assert cited
    for e in cited:
        assert e.timestamp is not None
        t = e.timestamp.seconds
        window = ["--time", f"{t:.6f},{t + after:.6f}"] + (["-C", str(e.cpu)] if e.cpu is not None else [])
        out = subprocess.run(
            [PERF, "script", "-i", str(recorded), *window], capture_output=True, text=True, check=True
        ).stdout
        headers = [line.strip() for line in out.splitlines() if line and not line[0].isspace()]
        assert headers == [e.excerpt], (window, out[:400])
