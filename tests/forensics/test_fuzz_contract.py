"""The bad-input contract, fuzzed per input kind (issue #19): whatever the bytes, every command

* ends with exit 0, 1, 2 or 3 (never 4, an internal error) and prints no traceback;
* leaves its ``-o`` output either complete (valid JSON, when it exits 0/1) or absent, and no
  temporary file beside it;
* leaves every input file byte for byte as it was (sha256 before and after), with no file
  created beside it (no -wal/-shm next to a store).

Inputs are real recorded data of the project, mutated by hypothesis: bytes flipped, inserted,
deleted, duplicated, the file cut, compressed and cut.  Runs in ``make test`` with the default
profile (a few dozen examples per kind, well under 60 s in all); ``pytest -m fuzz
--hypothesis-profile long`` runs 500 per kind (see docs/cli.md, "Input checks").
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import io
import json
import lzma
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.cli import main

pytestmark = pytest.mark.fuzz

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "vmcore_fixtures" / "cases" / "08-slab-leak"
TRACE = REPO / "tests" / "data" / "traces" / "kf.ftrace.txt.gz"

# ---------------------------------------------------------------- mutations


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` after a few random edits (flip, insert, delete, duplicate, cut, compress and cut)."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "duplicate", "cut", "zero"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=64))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 256))]
        elif op == "duplicate":
            data[pos:pos] = data[pos : pos + draw(st.integers(1, 512))]
        elif op == "cut":
            del data[pos:]
        elif op == "zero":
            data[pos : pos + 64] = bytes(len(data[pos : pos + 64]))
    packing = draw(st.sampled_from(["none", "none", "none", "gzip", "xz", "zstd", "gzip-cut"]))
    out = bytes(data)
    if packing == "gzip":
        out = gzip.compress(out)
    elif packing == "xz":
        out = lzma.compress(out)
    elif packing == "zstd":
        import zstandard

        out = zstandard.ZstdCompressor().compress(out)
    elif packing == "gzip-cut":
        packed = gzip.compress(out)
        out = packed[: draw(st.integers(0, len(packed)))]
    return out


# ---------------------------------------------------------------- running the real entry point


def _run(*args: str) -> tuple[int, str]:
    """``kforensic ARGS`` in this process through ``forensics.cli.main``: exit code and stderr."""
    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["kforensic", *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        sys.argv = argv
    return code, err.getvalue()


def _snapshot(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def check_contract(inputs: Path, command: Callable[[Path], list[str]]) -> int:
    """Run ``command(output)`` on the inputs under ``inputs``; assert the contract; return the exit code."""
    with tempfile.TemporaryDirectory(prefix="kf-fuzz-out-") as out_dir:
        output = Path(out_dir) / "out.json"
        before = _snapshot(inputs)
        code, stderr = _run(*command(output), "--format", "json", "-o", str(output))
        assert code in (0, 1, 2, 3), stderr
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr
        if code in (0, 1):
            json.loads(output.read_text())  # complete
        else:
            assert not output.exists()
            assert stderr.startswith("kforensic: error: "), stderr
        assert [p.name for p in Path(out_dir).iterdir()] in ([], ["out.json"])  # no temporary file left
        assert _snapshot(inputs) == before  # inputs unchanged, nothing created beside them
    return code


@contextlib.contextmanager
def _tree() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="kf-fuzz-in-") as name:
        yield Path(name)


#: Examples per input kind: a few in make test (the six kinds together stay well under 60 s), 500 in the
#: long profile registered in tests/conftest.py.
EXAMPLES = 500 if settings.get_current_profile_name() == "long" else 12
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

# ---------------------------------------------------------------- one test per input kind

LOG = (CASE / "console.log").read_bytes() if (CASE / "console.log").is_file() else b""


@FUZZ
@given(data=mutated(LOG[:12000]))
def test_kernel_log(data: bytes) -> None:
    with _tree() as tree:
        (tree / "kern.log").write_bytes(data)
        check_contract(tree, lambda _out: ["dmesg", str(tree / "kern.log")])


SNAPSHOTS = sorted((CASE / "snapshots").glob("sample-*.txt"))[:3]


@FUZZ
@given(data=mutated(b"".join(p.read_bytes() for p in SNAPSHOTS)))
def test_slabinfo_snapshot(data: bytes) -> None:
    with _tree() as tree, tempfile.TemporaryDirectory(prefix="kf-fuzz-store-") as store_dir:
        (tree / "snapshots.txt").write_bytes(data)
        store = Path(store_dir) / "s.sqlite"
        check_contract(
            tree, lambda _out: ["slab-import", str(tree / "snapshots.txt"), "--store", str(store), "--no-analysis"]
        )


TRACE_TEXT = gzip.decompress(TRACE.read_bytes())[:40000] if TRACE.is_file() else b""


@FUZZ
@given(data=mutated(TRACE_TEXT))
def test_trace(data: bytes) -> None:
    with _tree() as tree:
        (tree / "t.txt").write_bytes(data)
        check_contract(tree, lambda _out: ["trace", str(tree / "t.txt")])


@functools.cache
def store_bytes() -> bytes:
    """A real store (three fixture snapshots imported), made once."""
    with tempfile.TemporaryDirectory() as name:
        store = Path(name) / "s.sqlite"
        code, err = _run("slab-import", *map(str, SNAPSHOTS), "--store", str(store), "--no-analysis")
        assert code == 0, err
        return store.read_bytes()


@FUZZ
@given(st.data())
def test_store(data: st.DataObject) -> None:
    damaged = data.draw(mutated(store_bytes()))
    command = data.draw(st.sampled_from(["leaks", "slab-export", "report"]))
    with _tree() as tree:
        (tree / "s.sqlite").write_bytes(damaged)
        args = [command, "--store", str(tree / "s.sqlite")]
        if command == "slab-export":
            # slab-export writes CSV, not JSON: check it through a JSON-producing sibling instead.
            args = ["leaks", "--store", str(tree / "s.sqlite"), "--min-rate", "1"]
        check_contract(tree, lambda _out: args)


DUMP_HEAD = (CASE / "vmcore").read_bytes()[:65536] if (CASE / "vmcore").is_file() else b""


@FUZZ
@given(data=mutated(DUMP_HEAD))
def test_dump_header(data: bytes) -> None:
    with _tree() as tree:
        (tree / "vmcore").write_bytes(data)
        check_contract(tree, lambda _out: ["vmcore", str(tree / "vmcore")])


@FUZZ
@given(data=st.data())
def test_kdump_config(data: st.DataObject) -> None:
    from tests.collectors.kdump.roots import SCENARIOS, build

    name = data.draw(st.sampled_from(sorted(SCENARIOS)))
    with _tree() as tree:
        root = build(tree / "root", SCENARIOS[name])
        configs = [p for p in (root / "etc/default/kdump-tools", root / "etc/kdump.conf") if p.is_file()]
        for config in configs:
            config.write_bytes(data.draw(mutated(config.read_bytes())))
        check_contract(tree, lambda _out: ["kdump", "check", "--root", str(root)])
        plan = data.draw(st.booleans())
        if plan:
            check_contract(tree, lambda _out: ["kdump", "setup", "--root", str(root), "--policy", "oops"])


PROFILES = REPO / "tests" / "data" / "profile"
PERF_TEXT = gzip.decompress((PROFILES / "mixed.perf.txt.gz").read_bytes())[:30000]
FOLDED = gzip.decompress((PROFILES / "mixed.folded.gz").read_bytes())[:30000]


@FUZZ
@given(data=st.data())
def test_profile(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from([PERF_TEXT, FOLDED]))
    damaged = data.draw(mutated(seed))
    with _tree() as tree, tempfile.TemporaryDirectory(prefix="kf-fuzz-folded-") as folded_dir:
        (tree / "p.txt").write_bytes(damaged)
        folded = Path(folded_dir) / "f.txt"
        code = check_contract(tree, lambda _out: ["profile", str(tree / "p.txt"), "--folded", str(folded)])
        assert folded.is_file() == (code in (0, 1))  # written whole, or not at all


LTTNG = REPO / "tests" / "data" / "lttng"


@functools.cache
def lttng_files() -> tuple[dict[str, bytes], bytes]:
    """The UST session's files (relative path: bytes) and its ftrace text (mono clock)."""
    import tarfile

    files: dict[str, bytes] = {}
    with tarfile.open(LTTNG / "ust.tar.gz") as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member) if member.isfile() else None
            if extracted is not None:
                files[member.name] = extracted.read()
    return files, gzip.decompress((LTTNG / "kernel.ftrace.txt.gz").read_bytes())


def _spans_table(jsonl: bool) -> bytes:
    """The workload's requests as a span CSV or JSONL (from the ftrace marker lines)."""
    import re

    _files, kernel = lttng_files()
    starts: dict[bytes, int] = {}
    rows = []
    for m in re.finditer(rb"\s(\d+)\.(\d+): tracing_mark_write: infer (start|end) (\d+)", kernel):
        ns = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, b"0"))
        if m.group(3) == b"start":
            starts[m.group(4)] = ns
        elif m.group(4) in starts:
            rows.append((1, "req", starts.pop(m.group(4)), ns))
    if jsonl:
        keys = ("tid", "name", "start_ns", "end_ns")
        return b"".join(json.dumps(dict(zip(keys, r, strict=True))).encode() + b"\n" for r in rows)
    return b"tid,name,start_ns,end_ns\n" + b"".join(f"{t},{n},{a},{b}\n".encode() for t, n, a, b in rows)


@FUZZ
@given(data=st.data())
def test_span_table(data: st.DataObject) -> None:
    jsonl = data.draw(st.booleans())
    damaged = data.draw(mutated(_spans_table(jsonl)))
    _files, kernel = lttng_files()
    with _tree() as tree:
        (tree / "k.txt").write_bytes(kernel[:40000])  # the spans reach past it: a case of its own
        (tree / "spans").write_bytes(damaged)
        check_contract(
            tree, lambda _out: ["trace", str(tree / "k.txt"), "--kernel-clock", "mono", "--spans", str(tree / "spans")]
        )


@FUZZ
@given(data=st.data())
def test_ctf_trace(data: st.DataObject) -> None:
    files, _kernel = lttng_files()
    victim = data.draw(st.sampled_from(sorted(name for name in files if not name.endswith(".idx"))))
    with _tree() as tree:
        for name, content in files.items():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_bytes(data.draw(mutated(content)) if name == victim else content)
        check_contract(tree, lambda _out: ["trace", str(tree / "ust")])


def test_the_seeds_are_real_data() -> None:
    # A fuzz test on an empty seed would prove nothing: the fixtures must be there.
    assert len(lttng_files()[0]) == 5 and _spans_table(False).count(b"\n") == 61
    assert len(FOLDED) > 4000  # the whole folded fixture
    for seed in (LOG, TRACE_TEXT, DUMP_HEAD, PERF_TEXT):
        assert len(seed) > 10000
    assert len(SNAPSHOTS) == 3 and shutil.which(sys.executable)
