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
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import forensics.report.dmesg
from tests.detectors.dmesg import test_native as native_test
from tests.detectors.dmesg.test_native import _project_imports
from tests.vmcore_cases import console_logs

ROOT = Path(__file__).resolve().parents[3]

# The scanner's test's: skipped without a C compiler, its environment of a cache directory (the source not forced).
pytestmark = [native_test.pytestmark[0], pytest.mark.xdist_group("dmesg-document-native")]
_env = native_test._env

#: Run in a subprocess: the JSON document of each log given (the source record's seconds masked); prints one JSON
#: document, and where the items' module came from.
_RUN = r"""
import json, re, sys
from forensics.report.dmesg import DmesgRenderer
from forensics import native
from forensics.pipelines.dmesg import analyse_logs
import forensics.report.dmesg_json as items

mask = re.compile(rb'("sha256": "[0-9a-f]+",\n\s*"seconds": )[-0-9.e]+')
out = {log: mask.sub(rb"\1X", DmesgRenderer().json_bytes(analyse_logs([log], False))).decode() for log in sys.argv[1:]}
print(json.dumps({"outputs": out, "native": sorted(native.loaded()), "items": items.__file__}))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new cache directory with the document's items compiled (``make compile``'s step); their directory."""
    cache = tmp_path_factory.mktemp("cache")
    # As make compile builds it: forensics.report not imported (a pipeline imports no renderer), its sources found
    # from the install's root; a run that imports it finds the same key.
    code = "import sys\nfrom forensics import native\nassert native.build(native.DMESG_DOCUMENT, opt_level='0')\n"
    code += "assert 'forensics.report' not in sys.modules\n"
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
    logs = sorted((ROOT / "tests" / "detectors" / "dmesg" / "golden").glob("*.log"))
    logs += sorted((ROOT / "tests" / "detectors" / "dmesg" / "corpora").glob("**/*.log"))
    logs += [*console_logs(), repeated, percent]
    cache = built.parent.parent
    compiled = _run(cache, logs)
    source = _run(cache, logs, KFORENSIC_AOT="no")
    assert compiled["native"] == ["kforensic_dmesg_document"] and str(compiled["items"]).startswith(str(built))
    assert source["native"] == [] and str(source["items"]).endswith("dmesg_json.py")
    outputs = compiled["outputs"]
    assert isinstance(outputs, dict) and len(outputs) > 100
    assert outputs == source["outputs"]


def test_the_build_key_covers_every_module_the_document_items_import() -> None:
    """What the compiled module imports, directly or through another module, is in the key (NATIVE.reads)."""
    group = forensics.report.dmesg.NATIVE
    reached: set[str] = set()
    frontier = set(group.modules)
    while frontier:  # each step: what the modules reached last import that is not reached yet
        reached |= frontier
        frontier = set().union(*map(_project_imports, frontier)) - reached
    assert sorted(reached - set(group.modules)) == list(group.reads)
