"""``kforensic vmcore`` and ``kforensic report --vmcore`` rank hypotheses with one rule table: same first hypothesis.

Run through the CLI on every fixture dump.  ``--source-dir`` points at the checkout's module sources:
the module's DW_AT_comp_dir names the directory the fixtures were built in, which a clone elsewhere
lacks, and without the sources the BUG/WARN conditions (and so the root cause) cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.forensics.test_cli import run
from tests.vmcore_cases import FIXTURES_DIR, case_names, load_case

pytest.importorskip("drgn")

CASES = case_names() or ["<no-vmcore-fixtures>"]


@pytest.mark.parametrize("name", CASES)
def test_vmcore_and_report_rank_the_same_hypotheses(name: str, tmp_path: Path) -> None:
    if name not in case_names():
        pytest.skip("the vmcore fixtures are absent (vmcore_fixtures/build.sh)")
    case = load_case(name)
    common: list[str | Path] = ["--vmlinux", case.vmlinux, "--source-dir", FIXTURES_DIR / "kf_buggy"]
    for m in case.module_debug:
        common += ["--module-debug", m]
    alone = run("vmcore", case.directory, *common, "--format", "json", "-o", tmp_path / "vmcore.json")
    assert alone.returncode in (0, 1), alone.stderr
    merged = run("report", "--vmcore", case.directory, *common, "-o", tmp_path / "r.md", "--json", tmp_path / "r.json")
    assert merged.returncode in (0, 1), merged.stderr
    ours = [h["statement"] for h in json.loads((tmp_path / "vmcore.json").read_text())["hypotheses"]]
    theirs = [h["statement"] for h in json.loads((tmp_path / "r.json").read_text())["hypotheses"]]
    assert ours[:1] == theirs[:1]
    assert ours == theirs  # one table, one list: the report adds nothing from a single dump
    why = case.expected.get("why")
    if isinstance(why, dict):  # the ground truth's root-cause class is the one the dump's JSON states
        assert json.loads((tmp_path / "vmcore.json").read_text())["why"]["root_cause"]["class"] == why["class"]
