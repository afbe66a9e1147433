"""The two paths of ``kforensic trace`` give the same result on every bundled trace.

Small inputs are read by the line parser and analysed by the reference
SchedAnalyzer (nothing compiled); larger ones by the compiled scanner and
engine (forensics.jit.compiled_pays decides, $KFORENSIC_COMPILED forces it).
The whole TraceResult (analysis, parse counts, findings with their evidence,
spans) must be equal (but for the seconds the input took to read), with the options that change what is kept.
"""

from __future__ import annotations

import gzip
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from collectors.trace_columns import text_size
from collectors.trace_text import TraceParser
from forensics.delivery import write_figures
from forensics.jit import COMPILED_ENV, SMALL_INPUT_BYTES, compiled_pays
from forensics.model import NotAvailable
from forensics.pipelines.spans import SpanOptions
from forensics.pipelines.trace import analyse_trace_file
from forensics.types.results import TraceResult
from tests.detectors.sched.traces import quiet_window, silent_window

DATA = Path(__file__).resolve().parents[1] / "data"
BUNDLED = sorted([*(DATA / "traces").glob("*.txt.gz"), *(DATA / "lttng").glob("*.txt.gz")])
OPTIONS: tuple[dict[str, Any], ...] = (
    {},
    {"bucket": 0.01, "png": True},
    {"span": (0.0, 0.0), "span_opts": SpanOptions(slow_ms=1.0)},  # span filled in below: a window inside
    {"span": "quiet", "bucket": 0.001, "png": True},  # a window in which a CPU has no event: its state carried in
    {"span": "silent", "bucket": 0.001, "png": True},  # one in which no CPU has an event: answered all the same
)


def _quiet(path: Path, silent: bool = False) -> tuple[float, float]:
    """A window of the trace in which one CPU has no event while another has some, or (``silent``) no CPU has
    any (tests.detectors.sched.traces)."""
    parser = TraceParser()
    events = [*parser.feed(gzip.decompress(path.read_bytes())), *parser.finish()]
    window = silent_window(events) if silent else quiet_window(events)
    assert window is not None, path
    return window


def _run(
    monkeypatch: pytest.MonkeyPatch, path: Path, compiled: bool, tmp: Path, draw: bool = True, **options: Any
) -> TraceResult:
    """The result on one path; the time the input took to read (SourceRecord.seconds) set to 0.  With ``png`` in
    the options the result holds the timeline's figure (what it draws: the analysis, every run, the title), drawn
    to ``timeline.png`` unless ``draw`` is false."""
    monkeypatch.setenv(COMPILED_ENV, "yes" if compiled else "no")
    png = options.pop("png", False)
    if png:  # one path for both runs (the result names it)
        options["png"] = tmp / "timeline.png"
    result = analyse_trace_file(str(path), **options)
    if png and draw:
        write_figures(result.figures)
    sources = tuple(replace(s, seconds=0.0) for s in result.incident.sources)
    assert sources and all(s.sha256 for s in sources)
    return replace(result, incident=replace(result.incident, sources=sources))


def test_bundled_traces_are_found() -> None:
    assert len(BUNDLED) >= 5, BUNDLED


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
@pytest.mark.parametrize("which", range(len(OPTIONS)))
def test_small_input_path_equals_compiled_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, path: Path, which: int
) -> None:
    options = dict(OPTIONS[which])
    if options.get("span") in ("quiet", "silent"):
        options["span"] = _quiet(path, options["span"] == "silent")
    elif "span" in options:  # a window in the middle of the trace: clipping and the stop after it
        whole = _run(monkeypatch, path, False, tmp_path)
        t0, t1 = whole.analysis.window if isinstance(whole.analysis.window, tuple) else (0.0, 1.0)
        options["span"] = (t0 + (t1 - t0) / 3, t0 + 2 * (t1 - t0) / 3)
    # The timeline is drawn from the plain run's figure alone: the compiled run's figure (what timeline_png draws
    # from: the analysis, every run, the title) is equal to it by the asserts below, repr and all, so its drawing
    # would be the same bytes (a PNG comparison drew both: 0.3 s of CPU each, 18 of this file's tests).
    plain = _run(monkeypatch, path, False, tmp_path, **options)
    fast = _run(monkeypatch, path, True, tmp_path, draw=False, **options)
    assert plain.analysis.tasks or OPTIONS[which].get("span") == "silent", "the trace gave no task: nothing compared"
    assert plain.analysis.cpus, "the trace gave no CPU: nothing was compared"
    assert fast == plain
    assert repr(fast) == repr(plain)  # also tells -0.0 from 0.0
    if "png" in OPTIONS[which]:
        assert [type(f).__name__ for f in fast.figures][-1:] == ["CpuTimelineFigure"], fast.figures
        assert (tmp_path / "timeline.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_size_decides_unless_forced(tmp_path: Path) -> None:
    small = DATA / "traces" / "kf.ftrace.txt.gz"
    size = text_size(str(small))
    assert size is not None and 100_000 < size < SMALL_INPUT_BYTES  # the gzip trailer: the text's size
    assert not compiled_pays(size, environ={})
    assert compiled_pays(SMALL_INPUT_BYTES, environ={})
    assert compiled_pays(None, environ={})  # standard input: unknown size
    assert compiled_pays(size, environ={COMPILED_ENV: "yes"})
    assert not compiled_pays(10 * SMALL_INPUT_BYTES, environ={COMPILED_ENV: "no"})
    # A cut gzip: its last 4 bytes are compressed data, not the size (here they say 2 GiB).  At most deflate's
    # 1032:1: neither the note nor the compile that a 2 GB input gets (the fuzz's cut gzip printed the note).
    cut = tmp_path / "cut.gz"
    cut.write_bytes(small.read_bytes()[:4000] + (2**31).to_bytes(4, "little"))
    assert text_size(str(cut)) == 1032 * 4004
    assert not compiled_pays(text_size(str(cut)), environ={})
    cut.write_bytes(b"\x1f\x8b")  # the magic alone (the fuzz: KeyError, exit 4)
    assert text_size(str(cut)) == 1032 * 2
    plain = tmp_path / "plain.txt"
    plain.write_bytes(b"x" * 1234)
    assert text_size(str(plain)) == 1234
    assert text_size("-") is None
    assert text_size(str(tmp_path / "missing")) is None
    ctf = tmp_path / "ctf"
    (ctf / "kernel").mkdir(parents=True)
    (ctf / "kernel" / "channel0_0").write_bytes(b"\0" * 1000)
    shutil.copy(plain, ctf / "kernel" / "metadata")
    assert text_size(str(ctf)) == 4 * (1000 + 1234)


def test_a_cold_cache_reads_without_compiling(capsys: pytest.CaptureFixture[str]) -> None:
    """Kernels not in the cache: a large input reads without them (said on stderr), a huge one compiles."""
    from forensics.jit import COLD_INPUT_BYTES

    class NotCached:  # a dispatcher whose cache index is empty
        class _cache:  # noqa: N801 (numba's attribute names)
            class _cache_file:  # noqa: N801
                @staticmethod
                def _load_index() -> dict[object, str]:
                    return {}

    assert not compiled_pays(SMALL_INPUT_BYTES, lambda: [NotCached()], environ={})
    assert "analysing without compiled code" in capsys.readouterr().err
    assert compiled_pays(COLD_INPUT_BYTES, lambda: [NotCached()], environ={})
    assert compiled_pays(SMALL_INPUT_BYTES, lambda: [object()], environ={}) is False  # unknown internals: cold


def test_build_fills_the_cache() -> None:
    """What an install runs once: afterwards every kernel of the text path is in the cache."""
    from forensics.jit import is_cached
    from forensics.pipelines.build import build
    from forensics.pipelines.trace import trace_kernels

    assert build() > 0
    assert is_cached(trace_kernels())


def test_build_parts_are_the_build_and_an_unknown_part_is_refused() -> None:
    """make test runs build()'s three compiles side by side, and the profile's chunk pass (forensics.pipelines.build
    .build_part)."""
    from collectors.perf_chains_aot import jitted_scan
    from forensics.jit import is_cached
    from forensics.pipelines.build import build_part
    from forensics.pipelines.trace import trace_kernels

    for part in ("ctf", "scanner", "engine", "perf"):
        build_part(part)
    assert is_cached(trace_kernels())
    assert is_cached([jitted_scan()])
    with pytest.raises(ValueError, match="no part 'all'"):
        build_part("all")


@pytest.mark.parametrize("which", range(2))
def test_both_paths_agree_on_a_cpu_with_no_switch_in_the_trace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, which: int
) -> None:
    """kf.ftrace.txt.gz without CPU1's sched_switch lines: both paths say its busy and idle time are unknown, and
    count no wakeup whose switch-in on CPU1 could not be seen (python3's measured 217 ms to its switch-in on CPU0)."""
    lines = gzip.decompress((DATA / "traces" / "kf.ftrace.txt.gz").read_bytes()).splitlines(keepends=True)
    cut = tmp_path / "no-switch-on-cpu1.txt.gz"
    cut.write_bytes(gzip.compress(b"".join(x for x in lines if not (b"[001]" in x and b" sched_switch:" in x))))
    plain = _run(monkeypatch, cut, False, tmp_path, **OPTIONS[which])
    fast = _run(monkeypatch, cut, True, tmp_path, draw=False, **OPTIONS[which])  # its figure: plain's (repr)
    assert repr(fast) == repr(plain)
    cpu1 = next(c for c in plain.analysis.cpus if c.cpu == 1)
    assert isinstance(cpu1.busy, NotAvailable) and isinstance(cpu1.idle, NotAvailable) and cpu1.irq_time > 0
    python3 = next(t for t in plain.analysis.tasks if t.pid == 15850)
    assert python3.wakeups_unknown == 1 and python3.worst_wakeup and python3.worst_wakeup.span.duration < 0.001


@pytest.mark.parametrize("buffers", [("kfa", "kfb"), ("kfa",), ("", "kfb")])
def test_buffers_that_record_the_same_events_are_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, buffers: tuple[str, ...]
) -> None:
    """trace-cmd report merges the buffers of a trace.dat (record -B NAME: an instance's lines prefixed NAME:): two
    that record the same events were read as one stream, each event twice, and nothing said so.  Now the coverage
    note names the buffers and the events they share; one buffer alone says nothing.  Both paths."""
    from tests.detectors.sched.test_engine import _moved_text

    lines = _moved_text(True).splitlines(keepends=True)
    text = "".join(f"{name}:{line}" if name else line for line in lines for name in buffers)
    path = tmp_path / "report.txt"
    path.write_text("cpus=2\n" + text)
    plain = _run(monkeypatch, path, False, tmp_path)
    fast = _run(monkeypatch, path, True, tmp_path)
    assert repr(fast) == repr(plain)
    note = plain.analysis.coverage.note
    said = f"2 trace-cmd buffers (record -B: {', '.join(repr(b) if b else 'the top one' for b in sorted(buffers))})"
    if len(buffers) == 1:
        assert "trace-cmd buffers" not in note, note
        return
    assert said in note, note
    assert "record the same events (sched_migrate_task, sched_switch, sched_wakeup, sched_waking)" in note, note
    assert "an event both traced is read twice" in note
