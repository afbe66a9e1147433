"""The LTTng decoder, the text scanner and the engine compiled ahead of time give what numba's JIT and the plain
path give.

``kforensic trace`` on an LTTng session or an ftrace text runs the kernels built by ``numba.pycc``
(forensics/aot.py, collectors/ctf/decode_aot.py, collectors/trace_scan_aot.py, detectors/sched/engine_aot.py)
when they are built, without numba loaded.  Here they are built once into a new cache directory (a
subprocess running ``make compile``'s step, ``build_ahead``, after a forced profile run built the chunk pass, with
numba's C runtime compiled at -O0: tests/collectors/aot_build.py; the other tests run with ``KFORENSIC_AOT=no``,
see tests/conftest.py), and the whole result on the project's
session and on its bundled text traces must be equal three ways: ahead of time, JIT, plain.  Also: a run
on the built code imports neither numba nor llvmlite and writes the JIT run's JSON; a call with other
types goes to the JIT kernel; a changed source keys another module; a failed build is noted and not
tried again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from collectors.ctf import decode_aot
from detectors.sched import engine_aot
from forensics import aot, cachetrim
from forensics.jit import COMPILED_ENV
from forensics.pipelines.spans import SpanOptions
from forensics.pipelines.trace import analyse_trace_file
from forensics.types.results import TraceResult
from tests.collectors.aot_build import AotBuild, aot_env, use_in_process
from tests.collectors.ctf_check import extract_session

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "tests" / "data" / "traces"
TEXTS = sorted(p.name for p in TRACES.glob("kf.*.txt.gz"))  # ftrace, trace-cmd report (3 forms), perf script

# One xdist group: the ``built`` fixture (tests/collectors/aot_build.py, 25 s of CPU) is built once, on one pytest-xdist
# worker; spread over the workers (make test), each worker that ran one of its tests built it again (2-3 times).
pytestmark = [
    pytest.mark.skipif(
        shutil.which("gcc") is None and shutil.which("cc") is None, reason="building ahead of time needs a C compiler"
    ),
    pytest.mark.xdist_group("ctf-aot"),
]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


def _jit_env(**more: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in (aot.AOT_ENV, COMPILED_ENV)}, **more}


@pytest.fixture(scope="module")
def built(aot_built: AotBuild) -> Path:
    """A new cache directory with the decoder, the scanner, the engine and the profile's interner built ahead of time
    (``make compile``'s step, after a profile run built the interner: tests/collectors/aot_build.py)."""
    done, cache = aot_built.ahead, aot_built.cache
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ahead of time for this machine" in done.stderr  # the build says so, with its expected time
    modules = sorted(p.name for p in (cache / "aot").glob("*.so"))
    names = [m.split("-")[0] for m in modules]
    assert names == [
        "kforensic_ctf_decode",
        "kforensic_perf_chains",
        "kforensic_sched_engine",
        "kforensic_trace_scan",
    ], done.stderr
    assert aot_built.stamped == names, done.stderr  # each built by it, or loaded (the interner, built before it)
    return cache


def _run(monkeypatch: pytest.MonkeyPatch, path: Path, compiled: bool, **options: Any) -> TraceResult:
    monkeypatch.setenv(COMPILED_ENV, "yes" if compiled else "no")
    result = analyse_trace_file(str(path), **options)
    sources = tuple(replace(s, seconds=0.0) for s in result.incident.sources)
    return replace(result, incident=replace(result.incident, sources=sources))


@pytest.mark.slow
@pytest.mark.parametrize("part", ["", "kernel"], ids=["session", "kernel-only"])
def test_ahead_of_time_equals_jit_and_plain(
    monkeypatch: pytest.MonkeyPatch, session: Path, built: Path, part: str
) -> None:
    path = session / part if part else session
    options = {"span_opts": SpanOptions(slow_ms=2.0), "bucket": 0.01}  # the span breakdown and the buckets too
    use_in_process(monkeypatch, built)
    monkeypatch.delenv(aot.AOT_ENV, raising=False)
    ahead = _run(monkeypatch, path, True, **options)
    used = [p for p in aot.loaded() if p.parent == built / "aot"]
    assert len(used) == 2, "the run did not load the modules built ahead of time"
    monkeypatch.setenv(aot.AOT_ENV, "no")
    jit = _run(monkeypatch, path, True, **options)
    plain = _run(monkeypatch, path, False, **options)
    assert ahead.parse.events > 40_000
    if not part:
        assert ahead.spans is not None and len(ahead.spans.spans) >= 48  # the spans were compared
    assert ahead == jit == plain
    assert repr(ahead) == repr(jit) == repr(plain)


@pytest.mark.slow
def test_a_cut_stream_ahead_of_time_equals_jit_and_plain(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, built: Path
) -> None:
    """A stream file that ends inside a packet: the three decoders keep the same events before the cut."""
    root = extract_session(tmp_path)
    stream = root / "kernel" / "kch_1"  # one packet: every event kept is one before the cut
    stream.write_bytes(stream.read_bytes()[: stream.stat().st_size // 2])
    use_in_process(monkeypatch, built)
    monkeypatch.delenv(aot.AOT_ENV, raising=False)
    ahead = _run(monkeypatch, root, True)
    assert any(p.parent == built / "aot" for p in aot.loaded()), "the run did not load the modules built ahead of time"
    monkeypatch.setenv(aot.AOT_ENV, "no")
    jit = _run(monkeypatch, root, True)
    plain = _run(monkeypatch, root, False)
    assert any("kch_1" in n and "events of the cut packet before it were read" in n for n in ahead.notes)
    assert ahead == jit == plain
    assert repr(ahead) == repr(jit) == repr(plain)


@pytest.mark.slow
@pytest.mark.parametrize("name", TEXTS)
def test_text_ahead_of_time_equals_jit_and_plain(monkeypatch: pytest.MonkeyPatch, built: Path, name: str) -> None:
    path = TRACES / name
    use_in_process(monkeypatch, built)
    monkeypatch.delenv(aot.AOT_ENV, raising=False)
    ahead = _run(monkeypatch, path, True, bucket=0.01)
    used = sorted(p.name.split("-")[0] for p in aot.loaded() if p.parent == built / "aot")
    assert "kforensic_trace_scan" in used and "kforensic_sched_engine" in used, used
    monkeypatch.setenv(aot.AOT_ENV, "no")
    jit = _run(monkeypatch, path, True, bucket=0.01)
    plain = _run(monkeypatch, path, False, bucket=0.01)
    assert ahead.parse.events > (1_000 if name == "kf.perf-lost.txt.gz" else 2_000)  # (a 0.5 s recording)
    assert ahead == jit == plain
    assert repr(ahead) == repr(jit) == repr(plain)


def _without_timings(text: str) -> Any:
    out = json.loads(text)
    for source in out["incident"]["sources"]:
        source.pop("seconds")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("text", [False, True], ids=["lttng", "ftrace-text"])
def test_a_run_on_code_built_ahead_of_time_loads_no_numba(
    session: Path, built: Path, tmp_path: Path, text: bool
) -> None:
    trace = TRACES / "kf.ftrace.txt.gz" if text else session
    # forensics.cachetrim removes modules no run used for a month: the run that loads one stamps the note beside it.
    notes = sorted((built / "aot").glob("*.sha256"))
    # The cache is the session's (tests/collectors/aot_build.py, test_perf_chains reads it after this file): its
    # notes' times are put back as they were, so no later trim takes a month-old note for a module no run uses.
    times = {note: note.stat() for note in notes}
    month_ago = time.time() - cachetrim.IDLE_SECONDS - 86400
    for note in notes:
        os.utime(note, (month_ago, month_ago))
    try:
        _runs_load_no_numba(trace, built, tmp_path, notes, text)
    finally:
        for note, was in times.items():
            os.utime(note, ns=(was.st_atime_ns, was.st_mtime_ns))


def _runs_load_no_numba(trace: Path, built: Path, tmp_path: Path, notes: list[Path], text: bool) -> None:
    """``trace`` run on the code built ahead of time (neither numba nor llvmlite loaded, nothing compiled) and on the
    JIT kernels: the same JSON; the ahead-of-time run stamped the notes of the modules it loaded."""
    outs = {}
    for name, more in (("ahead", {}), ("jit", {aot.AOT_ENV: "no"})):
        out = tmp_path / f"{name}.json"
        code = (
            "import sys\n"
            "from forensics.cli import main\n"
            f"sys.argv = ['kforensic', 'trace', {str(trace)!r}, '--format', 'json', '-o', {str(out)!r}]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, 1, None), e.code\n"
            "print(sorted(m for m in ('numba', 'llvmlite') if m in sys.modules))\n"
        )
        # The JIT run reads the per-user cache that make test's prelude filled (forensics.pipelines.build): in
        # ``built`` it compiled the LTTng decoder again, ~8 s of CPU for nothing this test checks.
        env = aot_env(built, **{COMPILED_ENV: "yes"}) if name == "ahead" else _jit_env(**{COMPILED_ENV: "yes"}, **more)
        done = subprocess.run(
            [sys.executable, "-c", code], check=False, cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == ("[]" if name == "ahead" else "['llvmlite', 'numba']"), done.stdout
        if name == "ahead":
            assert "compiling" not in done.stderr  # built already: nothing to build or compile
        outs[name] = _without_timings(out.read_text())
    assert outs["ahead"]["parse"]["events"] > (2_000 if text else 40_000)
    assert outs["ahead"] == outs["jit"]
    stamped = [n.name.split("-")[0] for n in notes if n.stat().st_mtime > time.time() - 600]
    assert (
        "kforensic_sched_engine" in stamped and ("kforensic_trace_scan" if text else "kforensic_ctf_decode") in stamped
    )


@pytest.mark.slow
def test_a_call_of_other_types_runs_the_jit_kernel(monkeypatch: pytest.MonkeyPatch, built: Path) -> None:
    from collectors.ctf import decode

    use_in_process(monkeypatch, built)
    monkeypatch.delenv(aot.AOT_ENV, raising=False)
    k = decode_aot.kernels()
    assert k is not None
    buf = np.frombuffer(b"comm\x00swapper/0\x00kworker", dtype=np.uint8)
    off, length = np.array([0, 5, 15]), np.array([4, 9, 7])
    expected = decode.string_keys(buf, off, length, 3)
    assert k.string_keys(buf, off, length, 3).tolist() == expected.tolist()  # built types
    assert k.string_keys(buf, off.astype(np.int32), length.astype(np.int32), 3).tolist() == expected.tolist()
    assert k.string_keys(buf, off[::-1][::-1], length, 3).tolist() == expected.tolist()
    engine = engine_aot.kernels()
    assert engine is not None
    maps = engine.new_maps()
    with pytest.raises(TypeError, match="not of the types it was built for"):  # no JIT kernel takes handles
        engine.state_refs(*([np.zeros(1, dtype=np.int32)] * 6), maps[5], np.zeros((1, 1, 1), dtype=np.int64))
    engine.free(maps)


@pytest.mark.parametrize("damage", ["cut", "flipped", "no note"])
def test_a_damaged_module_is_not_loaded(built: Path, tmp_path: Path, damage: str) -> None:
    """A module cut short (a full disk), changed, or without its digest note is built again, never mapped.

    Loading a cut module ended the process with SIGBUS (exit 135) on every later run.  Asked in a child
    process, so that a regression kills the child, not the test run.
    """
    source = tmp_path / "intact"
    shutil.copytree(built / "aot", source / "aot")
    damaged = tmp_path / "damaged"
    shutil.copytree(built / "aot", damaged / "aot")
    module = next((damaged / "aot").glob("kforensic_trace_scan-*.so"))
    if damage == "cut":
        module.write_bytes(module.read_bytes()[: module.stat().st_size // 2])
    elif damage == "flipped":
        data = bytearray(module.read_bytes())
        data[len(data) // 2] ^= 0xFF
        module.write_bytes(bytes(data))
    else:
        module.with_suffix(".sha256").unlink()
    code = "from collectors import trace_scan_aot\nprint(trace_scan_aot.kernels() is not None)\n"
    for cache, loads in ((source, "True"), (damaged, "False")):
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=aot_env(cache), capture_output=True, text=True, check=False
        )
        assert (done.returncode, done.stdout.strip()) == (0, loads), done.stderr[-2000:]


def test_a_changed_source_keys_another_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "aot_probe_src.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    group = replace(decode_aot.GROUP, sources=("aot_probe_src",))
    before = aot.module_path(group)
    assert before == aot.module_path(group)  # stable
    (tmp_path / "aot_probe_src.py").write_text("X = 2\n")
    after = aot.module_path(group)
    assert after != before and after.parent == before.parent == tmp_path / "cache" / "aot"


def test_a_failed_build_is_noted_and_not_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(aot.AOT_ENV, raising=False)

    def no_toolchain() -> dict[str, Any]:
        raise FileNotFoundError("gcc")  # what a machine without a C compiler raises

    group = replace(decode_aot.GROUP, name="kforensic_probe", functions=no_toolchain)
    assert aot.ensure(group) is None
    err = capsys.readouterr().err
    assert "could not compile" in err and "numba compiles it at run time instead" in err
    assert aot.failed(group)
    assert aot.ensure(group) is None
    assert capsys.readouterr().err == ""  # not tried again: nothing said


def test_nowhere_to_keep_it_runs_the_jit_path_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/proc/kforensic-no-such-dir")  # not even root can make it
    monkeypatch.delenv(aot.AOT_ENV, raising=False)
    assert decode_aot.kernels(build=True) is None
    assert capsys.readouterr().err == ""
