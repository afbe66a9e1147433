"""``kforensic vmcore`` and ``kforensic report --vmcore`` rank hypotheses with one rule table: same first hypothesis.

Run through the CLI on every fixture dump, in this process (tests.helpers.cli_in_process: what is compared is
the two commands' JSON; ``vmcore``'s runs on a real dump as a process, exit codes and streams, are
tests/forensics/test_reliability_cli.py's and tests/forensics/vmcore/test_shell.py's, ``report``'s
tests/forensics/test_cli.py's and the hostile battery's).  ``--source-dir`` points at the checkout's module sources: the
module's DW_AT_comp_dir names the directory the fixtures were built in, which a clone elsewhere lacks, and without
the sources the BUG/WARN conditions (and so the root cause) cannot be read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import cli_in_process
from tests.vmcore_cases import FIXTURES_DIR, case_names, load_case

pytest.importorskip("drgn")

CASES = case_names() or ["<no-vmcore-fixtures>"]


@pytest.mark.parametrize("name", CASES)
def test_vmcore_and_report_rank_the_same_hypotheses(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if name not in case_names():
        pytest.skip("the vmcore fixtures are absent (vmcore_fixtures/build.sh)")
    case = load_case(name)
    common = ["--vmlinux", str(case.vmlinux), "--source-dir", str(FIXTURES_DIR / "kf_buggy")]
    for m in case.module_debug:
        common += ["--module-debug", str(m)]
    dump, out = str(case.directory), str(tmp_path)
    vmcore = ["vmcore", dump, *common, "--format", "json", "-o", f"{out}/vmcore.json"]
    report = ["report", "--vmcore", dump, *common, "-o", f"{out}/r.md", "--json", f"{out}/r.json"]
    alone, _ = cli_in_process(monkeypatch, capsys, *vmcore)
    assert alone in (0, 1)
    merged, _ = cli_in_process(monkeypatch, capsys, *report)
    assert merged in (0, 1)
    ours = [h["statement"] for h in json.loads((tmp_path / "vmcore.json").read_text())["hypotheses"]]
    theirs = [h["statement"] for h in json.loads((tmp_path / "r.json").read_text())["hypotheses"]]
    assert ours[:1] == theirs[:1]
    assert ours == theirs  # one table, one list: the report adds nothing from a single dump
    why = case.expected.get("why")
    if isinstance(why, dict):  # the ground truth's root-cause class is the one the dump's JSON states
        assert json.loads((tmp_path / "vmcore.json").read_text())["why"]["root_cause"]["class"] == why["class"]
