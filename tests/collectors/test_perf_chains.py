"""The call chains the profile reader's compiled chunk pass numbers, against the line-by-line reading they stand for.

:func:`collectors.perf_chains.chains_compiled` numbers call chain texts given whole as
:func:`collectors.perf_chunk_kernel.scan_chunk` numbers those of the samples it reads (numba's JIT here; ahead of
time in ``kforensic profile``) and must give what
:func:`collectors.perf_script._chains_of` gives: the frames of every call chain text and its lines that
are not frames, on every bundled recording, on the edges of the frame line's regular expression and on
random texts.  The module built ahead of time (in a directory of its own) must make ``kforensic profile``
write what it writes without it, byte for byte, without numba loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors import perf_script
from collectors.perf_chains_aot import jitted_scan
from collectors.perf_script import _chains_compiled, _chains_of, read_gzip_text
from forensics import aot
from forensics.jit import COMPILED_ENV
from tests.collectors.aot_build import AotBuild, profile_probe
from tests.collectors.test_perf_frames import EDGES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "profile"


def _bodies(path: Path) -> list[bytes]:
    """The distinct call chain texts of a recording (what follows each sample's header line)."""
    return list(dict.fromkeys(p.partition(b"\n")[2] for p in read_gzip_text(path).split(b"\n\n")))


def _same(bodies: list[bytes]) -> int:
    """Both readings of ``bodies`` are equal, either java; the texts whose chain the kernel numbered."""
    numbered = 0
    for java in (False, True):
        perf_script._SYMBOLS.clear()
        got = _chains_compiled(bodies, java, jitted_scan(), {})
        assert got == _chains_of(bodies, java, {}, False)
        numbered += sum(bad == 0 for bad in got[1])
    return numbered


@pytest.mark.parametrize("path", sorted(DATA.glob("*.perf.txt.gz")), ids=lambda p: p.name.split(".")[0])
def test_chains_are_read_as_line_by_line_on_every_recording(path: Path) -> None:
    bodies = _bodies(path)
    assert _same(bodies) == 2 * len(bodies)  # no text of a recording has a line that is not a frame


def test_edge_lines_are_read_as_line_by_line() -> None:
    frame = b"\t ffffffff81000000 sym+0x1f ([kernel.kallsyms])"
    bodies = [*EDGES, *(frame + b"\n" + e for e in EDGES), *(e + b"\n#c\n" + frame for e in EDGES), b"\n".join(EDGES)]
    _same(bodies)
    # Texts that differ only in addresses and offsets are one chain; a blank line is no frame.
    perf_script._SYMBOLS.clear()
    texts = [b"\t 1 a+0x1 (x)\n\t 2 b+0x2 (y)", b"\t 3 a+0x9 (x)\n\n\t 4 b+0xf (y)", b"\t 3 b (x)\n\t 4 b (y)"]
    (first, second, third), bad = _chains_compiled(texts, False, jitted_scan(), {})
    assert first is second and first != third and [f.name for f in first] == ["b", "a"] and bad == [0, 0, 0]


_PARTS = st.sampled_from(
    [b" ", b"\t", b"ff", b"ffff", b"(", b")", b" (", b"+0x", b"1a", b"g", b"s", b"->", b"\xff", b"#"]
)
_LINE = st.lists(_PARTS, max_size=12).map(b"".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_LINE, min_size=1, max_size=6).map(b"\n".join), min_size=1, max_size=20))
def test_any_text_is_read_as_line_by_line(bodies: list[bytes]) -> None:
    _same(bodies)


def _profile(cache: Path, text: Path, out: Path, **env: str) -> list[bytes]:
    """``kforensic profile`` of ``text``: its folded stacks, SVG, text and JSON (without the time it took)."""
    run_env = {k: v for k, v in os.environ.items() if k not in (aot.AOT_ENV, COMPILED_ENV)}
    run_env |= {"NUMBA_CACHE_DIR": str(cache), **env}
    got = []
    for fmt in ("text", "json"):
        argv = [sys.executable, "-m", "forensics", "profile", str(text), "--folded", str(out / "f"), "--svg"]
        argv += [str(out / "s"), "--format", fmt, "-o", str(out / "o")]
        done = subprocess.run(argv, env=run_env, capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
        got += [(out / name).read_bytes() for name in ("f", "s", "o")]
    digest = json.loads(got[-1])
    for source in digest["incident"]["sources"]:
        source.pop("seconds")  # how long the reading took
    got[-1] = json.dumps(digest).encode()
    return got


@pytest.mark.skipif(
    shutil.which("gcc") is None and shutil.which("cc") is None, reason="building ahead of time needs a C compiler"
)
@pytest.mark.xdist_group("ctf-aot")  # the build is made once for test_ctf_aot's too (tests/collectors/aot_build.py)
def test_the_module_built_ahead_of_time_writes_what_the_python_path_writes(aot_built: AotBuild, tmp_path: Path) -> None:
    cache, text = aot_built.cache, aot_built.profile_text
    # Not built: an input this small (under COLD_INPUT_BYTES) is read by the Python path, and stderr says how to build.
    first = aot_built.unbuilt
    assert "without compiled code" in first.stderr and first.stdout.split()[1] == "0"
    assert not aot_built.unbuilt_left
    built = aot_built.forced  # forced: built now, announced
    assert "ahead of time" in built.stderr, built.stderr
    again = profile_probe(cache, text)
    stacks, loaded, numba = again.stdout.split()
    assert int(stacks) >= perf_script.COMPILED_FROM and loaded == "1" and numba == "False" and not again.stderr
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _profile(cache, text, tmp_path / "a", **{aot.AOT_ENV: ""}) == _profile(
        cache, text, tmp_path / "b", **{aot.AOT_ENV: "no"}
    )
