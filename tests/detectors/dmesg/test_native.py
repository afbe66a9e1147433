"""``kforensic dmesg``'s modules compiled by mypyc (forensics/native.py) give what their Python source gives.

``make compile`` builds the scanner, line parser, report builder and reader (detectors/dmesg/__init__.py's
``NATIVE``) into the per-user cache; a run then imports them compiled.  Here they are built once into a new cache
directory (a subprocess, as ``make compile`` does, with the Tiny C Compiler where installed: ~20 s of CPU, the one
cost CI pays; every other test runs the Python source, ``KFORENSIC_AOT=no`` in tests/conftest.py), and the JSON and
text of every bundled log must be the same bytes both ways, and the line parser's fields the same on lines made to
reach its corners (fractions of 16 to 19 digits, which a division done as two doubles would round otherwise), and
the frame readers' fields the same on frame lines made of pieces.  Also: a damaged or changed build is not loaded,
and ``KFORENSIC_AOT=no`` runs the source.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import detectors.dmesg
from forensics import cachetrim, native

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.skipif(
        shutil.which("gcc") is None and shutil.which("cc") is None, reason="compiling to C needs a C compiler"
    ),
    pytest.mark.xdist_group("dmesg-native"),
]

#: Run in a subprocess: every bundled log through the pipeline and both renderers (the source record's seconds
#: masked), and the line parser on made lines; prints one JSON document, and which files the modules came from.
_RUN = r"""
import glob, json, random, re, sys
from pathlib import Path
import detectors.dmesg.lines as lines
from forensics import native
from forensics.pipelines.dmesg import analyse_logs
from forensics.report.dmesg import DmesgRenderer
from forensics.report.formats import OutputFormat, render_encoded
from tests.vmcore_cases import console_logs

logs = sorted(glob.glob("tests/detectors/dmesg/golden/*.log"))
logs += sorted(glob.glob("tests/detectors/dmesg/corpora/**/*.log", recursive=True))
logs += [str(p) for p in console_logs()] + ["tests/data/healthy/dmesg.txt.gz"]
mask = re.compile(rb'("sha256": "[0-9a-f]+",\n\s*"seconds": )[-0-9.e]+')
out = {}
for log in logs:
    result = analyse_logs([log], False)
    got = [render_encoded(DmesgRenderer(), result, fmt, None) for fmt in (OutputFormat.JSON, OutputFormat.TEXT)]
    data = [g if isinstance(g, bytes) else g.encode() for g in got]
    out[log] = [mask.sub(rb"\1X", data[0]).decode(), data[1].decode()]
rnd = random.Random(28)
made = ["[ 1.%s] x" % "1234567890123456789"[:n] for n in range(1, 20)]
made += ["[%s.%s] w" % ("98765432109876543"[:n], "1234567890123456789"[:k]) for n in range(1, 18) for k in range(1, 18)]
made += ["[%d.%d][T%d] y" % (rnd.randrange(10 ** rnd.randrange(1, 20)), rnd.randrange(10 ** rnd.randrange(1, 20)),
         rnd.randrange(99999)) for _ in range(3000)]
made += ["<%d>[%8d.%06d] z" % (rnd.randrange(8), rnd.randrange(10 ** 8), rnd.randrange(10 ** 6)) for _ in range(500)]
made += ["%d,%d,%d,-;m" % (rnd.randrange(8), rnd.randrange(99), rnd.randrange(10 ** rnd.randrange(1, 20)))
         for _ in range(500)]
parsed = [[repr(v) for v in lines.parse_line(7, text)] for text in made]
parsed += [[repr(v) for v in lines.parse_raw(7, text.encode())] for text in made]
# Frame lines read from their bytes, and their fields (tests/detectors/dmesg/test_frame_reader.py): made of pieces.
from detectors.dmesg import frames, stacks
pieces = [" ", "\t", "?", "? ", ".", "_", "a", "9", "$", "\u00e9", "fn", "a.b", "+0x", "+0x1f", "/0x40", "[", "]",
          "[m]", "[inline]", "fs/x.c:12", "x.c:1:2", ":", "(unreliable)", "(P)", "[<ffff12>]", "[0x]", "x.c:12a"]
leads = ["", " ", " ? ", "\t", "[<ffff12>] ", "[c01] [c02] "]
frame = "%s+0x%x/0x%X"
bodies = [rnd.choice(leads) + frame % (rnd.choice(["f", "a.b", "_x"]), rnd.randrange(1 << 70), rnd.randrange(999))
          + "".join(rnd.choice(pieces) for _ in range(rnd.randrange(6))) for _ in range(1500)]
bodies += ["".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 9))) for _ in range(1500)]
readers = (frames.read_frame, stacks.read_stack_frame, frames.parse_frame, stacks.parse_stack_frame)
parsed += [[repr(read(b)) for read in readers] for b in bodies]
print(json.dumps({"outputs": out, "parsed": parsed, "native": sorted(native.loaded()), "lines": lines.__file__}))
"""


def _env(cache: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != native.AOT_ENV}
    return {**env, "NUMBA_CACHE_DIR": str(cache), **more}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new cache directory with the dmesg modules compiled (``make compile``'s step); their directory."""
    cache = tmp_path_factory.mktemp("cache")
    # The same C mypyc generates for make compile, compiled for the test by the Tiny C Compiler where it is installed
    # (.ci/run installs it): the 10 MB of C in 1 s of CPU instead of gcc's 40 s at -O0 (88 s at make compile's -O3),
    # the whole build in 18-19 s of CPU instead of 58-63 s (2026-12-05, load 4-7).  What is checked is mypyc's
    # translation of the source, which any C compiler builds to the same meaning; without tcc, gcc at -O0.
    code = "import detectors.dmesg as d\nfrom forensics import native\nassert native.build(d.NATIVE, opt_level='0')\n"
    tcc = shutil.which("tcc")
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=_env(cache, **({"CC": tcc} if tcc else {})),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "to C for this interpreter" in done.stderr  # the build says so, with its expected time
    (where,) = (cache / "native").iterdir()
    return where


def _run(cache: Path, **more: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN], cwd=ROOT, env=_env(cache, **more), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got: dict[str, object] = json.loads(done.stdout)
    return got


@pytest.mark.slow
def test_compiled_modules_give_what_the_source_gives(built: Path) -> None:
    cache = built.parent.parent
    compiled = _run(cache)
    source = _run(cache, KFORENSIC_AOT="no")
    assert compiled["native"] == ["kforensic_dmesg"] and str(compiled["lines"]).startswith(str(built))
    assert source["native"] == [] and str(source["lines"]).endswith("lines.py")
    outputs = compiled["outputs"]
    assert isinstance(outputs, dict) and len(outputs) > 100
    assert outputs == source["outputs"]
    assert compiled["parsed"] == source["parsed"]


def test_a_run_stamps_the_build_it_loads(built: Path) -> None:
    """forensics.cachetrim removes builds no run used for a month: a run that loads one says it used it."""
    month_ago = time.time() - cachetrim.IDLE_SECONDS - 86400
    os.utime(built, (month_ago, month_ago))
    assert _run(built.parent.parent)["native"] == ["kforensic_dmesg"]
    assert built.stat().st_mtime > time.time() - 600
    assert native._files(built) is not None  # its files' times, which the manifest holds, untouched
    assert cachetrim.stale(built.parent.parent, now=time.time()) == []


def test_a_damaged_build_is_not_loaded(built: Path, tmp_path: Path) -> None:
    assert native._files(built) is not None
    copy = tmp_path / built.name
    shutil.copytree(built, copy)
    library = next(copy.glob(f"*{native._SUFFIX}"))
    library.write_bytes(library.read_bytes()[:4096])  # cut short, as a full disk leaves it
    assert native._files(copy) is None
    shutil.copy(built / native._MANIFEST, copy / native._MANIFEST)
    (copy / native._MANIFEST).write_text("0" * 64 + "  ../elsewhere" + native._SUFFIX + "\n")
    assert native._files(copy) is None
    (copy / native._MANIFEST).unlink()
    assert native._files(copy) is None


def test_a_changed_source_keys_another_build(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"NUMBA_CACHE_DIR": str(built.parent.parent)}
    assert native.group_dir(detectors.dmesg.NATIVE, env) == built
    source = native._source
    changed = tmp_path / "lines.py"
    changed.write_bytes(source("detectors.dmesg.lines").read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(native, "_source", lambda m: changed if m == "detectors.dmesg.lines" else source(m))
    assert native.group_dir(detectors.dmesg.NATIVE, env) != built


def test_no_build_or_switched_off_runs_the_source(built: Path, tmp_path: Path) -> None:
    code = "import detectors.dmesg.lines as l\nfrom forensics import native\nprint(l.__file__, native.loaded())\n"
    for env in (_env(tmp_path / "empty"), _env(built.parent.parent, KFORENSIC_AOT="no")):
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[0].endswith("detectors/dmesg/lines.py") and "{}" in done.stdout


_PACKAGES = ("collectors", "detectors", "forensics")


def _project_imports(module: str) -> set[str]:
    """The project's modules ``module`` imports (at its top or in a function), by name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(native._read_source(module).read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] in _PACKAGES:
                for alias in node.names:  # `from forensics import regexcache` names a module
                    name = f"{node.module}.{alias.name}"
                    found.add(name if native._read_source(name).is_file() else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] in _PACKAGES}
    return {name for name in found if native._read_source(name).is_file()}


def test_the_build_key_covers_every_module_the_group_imports() -> None:
    """What the compiled modules import, directly or through another module, is in the key (NATIVE.reads): a build
    made before such a file changed is not loaded (mypyc compiled against its types and Final constants)."""
    group = detectors.dmesg.NATIVE
    reached, todo = set(group.modules), list(group.modules)
    while todo:
        for name in _project_imports(todo.pop()) - reached:
            reached.add(name)
            todo.append(name)
    assert sorted(reached - set(group.modules)) == list(group.reads)


def test_no_compiled_module_imports_a_package_its_build_leaves_unanalysed() -> None:
    """mypyc's build takes native.NOT_ANALYSED's packages (numba, numpy, ...) as ``Any`` (forensics/native.py): no
    module of either group, nor one it reads, imports them, so the C is what it would be with them analysed."""
    for group in (detectors.dmesg.NATIVE, native.DMESG_DOCUMENT):
        for module in (*group.modules, *group.reads):
            imported = set()
            for node in ast.walk(ast.parse(native._read_source(module).read_text())):
                if isinstance(node, ast.Import):
                    imported |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    imported.add(node.module.split(".")[0])
            assert not imported & set(native.NOT_ANALYSED), (group.name, module)


def test_a_changed_module_the_group_reads_keys_another_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    before = native.group_dir(detectors.dmesg.NATIVE, env)
    source = native._read_source
    changed = tmp_path / "rules.py"
    changed.write_bytes(source("detectors.dmesg.rules").read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(native, "_read_source", lambda m: changed if m == "detectors.dmesg.rules" else source(m))
    assert native.group_dir(detectors.dmesg.NATIVE, env) != before
