"""``kforensic dmesg``'s document items compiled by mypyc (forensics/report/dmesg.py's ``NATIVE``) write what their
Python source writes.

``make compile`` builds :mod:`forensics.report.dmesg_json` into the per-user cache (:mod:`forensics.native`); a
run then imports it compiled.  Here it is built once into a new cache directory (a subprocess, as ``make compile``
does, with the Tiny C Compiler where installed), and the JSON document of every bundled log, and of logs that
repeat reports (the templates), must be the same bytes both ways.  Also: the build's key covers every module it
imports, and ``KFORENSIC_AOT=no`` runs the source.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import forensics.report.dmesg
from forensics.jit import AOT_ENV
from tests.detectors.dmesg.test_native import _project_imports

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.skipif(
        shutil.which("gcc") is None and shutil.which("cc") is None, reason="compiling to C needs a C compiler"
    ),
    pytest.mark.xdist_group("dmesg-document-native"),
]

#: Run in a subprocess: the JSON document of every bundled log and of the logs given as arguments (the source
#: record's seconds masked); prints one JSON document, and where the items' module came from.
_RUN = r"""
import glob, json, re, sys
import forensics.report.dmesg
from forensics import native
from forensics.pipelines.dmesg import analyse_logs
from forensics.report.dmesg import DmesgRenderer
import forensics.report.dmesg_json as items
from tests.vmcore_cases import console_logs

logs = sorted(glob.glob("tests/detectors/dmesg/golden/*.log"))
logs += sorted(glob.glob("tests/detectors/dmesg/corpora/**/*.log", recursive=True))
logs += [str(p) for p in console_logs()] + sys.argv[1:]
mask = re.compile(rb'("sha256": "[0-9a-f]+",\n\s*"seconds": )[-0-9.e]+')
out = {log: mask.sub(rb"\1X", DmesgRenderer().json_bytes(analyse_logs([log], False))).decode() for log in logs}
print(json.dumps({"outputs": out, "native": sorted(native.loaded()), "items": items.__file__}))
"""


def _env(cache: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != AOT_ENV}
    return {**env, "NUMBA_CACHE_DIR": str(cache), **more}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new cache directory with the document's items compiled (``make compile``'s step); their directory."""
    cache = tmp_path_factory.mktemp("cache")
    code = "import forensics.report.dmesg as d\nfrom forensics import native\n"
    code += "assert native.build(d.NATIVE, opt_level='0')\n"
    tcc = shutil.which("tcc")  # as tests/detectors/dmesg/test_native.py builds the scanner's (what it checks)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=_env(cache, **({"CC": tcc} if tcc else {})),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "JSON document items to C for this interpreter" in done.stderr
    (where,) = (cache / "native").iterdir()
    return where


def _run(cache: Path, logs: list[Path], **more: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, *map(str, logs)],
        cwd=ROOT, env=_env(cache, **more), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    got: dict[str, object] = json.loads(done.stdout)
    return got


@pytest.mark.slow
def test_compiled_document_items_give_what_the_source_gives(built: Path, tmp_path: Path) -> None:
    # Logs that repeat reports byte for byte: the first and the repeats written from one template, with readings.
    consoles = sorted((ROOT / "vmcore_fixtures" / "cases").glob("*/console.log"))
    repeated = tmp_path / "repeated.log"
    repeated.write_text("".join(p.read_text() for p in consoles[:4]) * 3)
    golden = ROOT / "tests" / "detectors" / "dmesg" / "golden" / "null_deref_x86.log"
    percent = tmp_path / "percent.log"
    percent.write_text(golden.read_text().replace("Comm: sh", "Comm: 50%d%%s") * 3)
    cache = built.parent.parent
    compiled = _run(cache, [repeated, percent])
    source = _run(cache, [repeated, percent], KFORENSIC_AOT="no")
    assert compiled["native"] == ["kforensic_dmesg_document"] and str(compiled["items"]).startswith(str(built))
    assert source["native"] == [] and str(source["items"]).endswith("dmesg_json.py")
    outputs = compiled["outputs"]
    assert isinstance(outputs, dict) and len(outputs) > 100
    assert outputs == source["outputs"]


def test_the_build_key_covers_every_module_the_document_items_import() -> None:
    """What the compiled module imports, directly or through another module, is in the key (NATIVE.reads)."""
    group = forensics.report.dmesg.NATIVE
    reached, todo = set(group.modules), list(group.modules)
    while todo:
        for name in _project_imports(todo.pop()) - reached:
            reached.add(name)
            todo.append(name)
    assert sorted(reached - set(group.modules)) == list(group.reads)
