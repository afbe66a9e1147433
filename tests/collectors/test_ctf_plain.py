"""The plain-Python CTF decoder (small sessions, nothing compiled) gives what the compiled one gives.

``kforensic trace`` decodes a session under 10 MB without numba (collectors/ctf/plain.py, chosen by
forensics.jit.compiled_pays on the session's size; $KFORENSIC_COMPILED forces either). Row for row the
two decoders are compared on every stream and on random layouts by tests/collectors/ctf_check.py; here
the whole result of ``kforensic trace`` on the project's LTTng session must be equal both ways, and the
plain run must not import numba at all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from forensics.jit import COMPILED_ENV
from forensics.pipelines.spans import SpanOptions
from forensics.pipelines.trace import analyse_trace_file
from forensics.types.results import TraceResult
from tests.collectors.ctf_check import extract_session

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


def _run(monkeypatch: pytest.MonkeyPatch, path: Path, compiled: bool, **options: object) -> TraceResult:
    monkeypatch.setenv(COMPILED_ENV, "yes" if compiled else "no")
    result = analyse_trace_file(str(path), **options)  # type: ignore[arg-type]
    sources = tuple(replace(s, seconds=0.0) for s in result.incident.sources)
    return replace(result, incident=replace(result.incident, sources=sources))


def test_plain_decoder_gives_the_compiled_result(monkeypatch: pytest.MonkeyPatch, session: Path) -> None:
    options = {"span_opts": SpanOptions(slow_ms=2.0), "bucket": 0.01}  # the span breakdown and the buckets too
    plain = _run(monkeypatch, session, False, **options)
    fast = _run(monkeypatch, session, True, **options)
    assert plain.spans is not None and len(plain.spans.spans) >= 48  # the spans were compared
    assert plain.parse.events > 40_000
    assert fast == plain
    assert repr(fast) == repr(plain)


def test_a_small_session_imports_no_numba(session: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    code = (
        "import sys\n"
        "from forensics.cli import main\n"
        f"sys.argv = ['kforensic', 'trace', {str(session)!r}, '--format', 'json', '-o', {str(out)!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, 1, None), e.code\n"
        "assert 'numba' not in sys.modules, 'numba was imported'\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KFORENSIC_COMPILED": "auto"}
    done = subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(out.read_text())["input"]["traces"][0]["streams"], "nothing was read"
