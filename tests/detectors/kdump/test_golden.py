"""Golden outputs of ``kdump check``, ``setup`` and ``setup --apply`` on every fake root scenario.

Regenerate after an intended change with::

    KFORENSIC_UPDATE_GOLDEN=1 .venv/bin/pytest tests/detectors/kdump/test_golden.py

and review the diff of tests/data/kdump/golden/.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path

import pytest

from detectors.kdump.sysctl_rules import policy_named
from forensics.pipelines.kdump import collect_check, run_setup
from forensics.report import OutputFormat
from forensics.report.formats import render
from forensics.report.kdump import KdumpCheckRenderer, KdumpSetupRenderer, setup_document
from tests.collectors.kdump.roots import SCENARIOS, build

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "data" / "kdump" / "golden"
UPDATE = os.environ.get("KFORENSIC_UPDATE_GOLDEN") == "1"
FIXED_NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
#: The --policy each scenario's setup golden uses (none when absent).
POLICY = {"debian12-ready": "hang-debug", "rhel9-ready": "strict", "ubuntu2404-lzo": "oops", "unknown-distro": "oops"}


def tree_digest(top: Path, skip: Path | None = None) -> dict[str, str]:
    """Every file, link and directory under ``top`` with a digest of its content (links: their target)."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        if skip is not None and (here == skip or skip in here.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            path = here / name
            key = str(path.relative_to(top))
            if path.is_symlink():
                found[key] = "-> " + os.readlink(path)
            elif path.is_file():
                found[key] = hashlib.sha256(path.read_bytes()).hexdigest() + f" {path.stat().st_mode:o}"
            else:
                found[key] = "dir"
    return found


def check_golden(name: str, header: str, text: str) -> None:
    """Compare ``text`` with the golden file ``name`` (or write it when updating)."""
    regenerate = f"KFORENSIC_UPDATE_GOLDEN=1 pytest tests/detectors/kdump/{Path(__file__).name}"
    content = f"# golden: {header}\n# regenerate: {regenerate}\n{text}"
    path = GOLDEN_DIR / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return
    assert path.exists(), f"no golden file {path}; run with KFORENSIC_UPDATE_GOLDEN=1 to create it"
    assert content == path.read_text(), f"output differs from {path}; rerun with KFORENSIC_UPDATE_GOLDEN=1 if intended"


def _normal(text: str, root: Path) -> str:
    return text.replace(str(root), "<root>")


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_check_golden(tmp_path: Path, scenario: str) -> None:
    system = SCENARIOS[scenario]
    root = build(tmp_path / "root", system)
    check = collect_check(root, system.statvfs)
    checklist = check.checklist
    text = _normal(render(KdumpCheckRenderer(), check, OutputFormat.TEXT), root)
    check_golden(f"{scenario}.check.txt", f"kforensic kdump check --root <root>  ({scenario})", text)
    # The verdict line: READY, NOT READY, or NOT KNOWN TO BE READY (a line capture rests on was not read).
    assert ("\nREADY: the next crash will be captured" in text) is checklist.ready


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_setup_and_apply_golden(tmp_path: Path, scenario: str) -> None:
    system = SCENARIOS[scenario]
    root = build(tmp_path / "root", system)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "sentinel.conf").write_text("kernel.panic = 0\n")
    preset = policy_named(POLICY.get(scenario, "none"))
    before = tree_digest(root)
    before_outside = tree_digest(tmp_path, skip=root)

    plan_doc = run_setup(root, preset, apply=False, statvfs=system.statvfs)
    assert tree_digest(root) == before, "setup without --apply changed the tree"
    flag = f"--policy {preset.name}"
    text = _normal(render(KdumpSetupRenderer(), plan_doc, OutputFormat.TEXT), root)
    check_golden(f"{scenario}.setup.txt", f"kforensic kdump setup --root <root> {flag}  ({scenario})", text)

    applied = run_setup(root, preset, apply=True, statvfs=system.statvfs, now=FIXED_NOW)
    text = _normal(render(KdumpSetupRenderer(), applied, OutputFormat.TEXT), root)
    applied_doc = setup_document(applied)
    check_golden(f"{scenario}.apply.txt", f"kforensic kdump setup --root <root> {flag} --apply  ({scenario})", text)

    # Only the planned files changed, each modified one has a backup holding its old text.
    after = tree_digest(root)
    planned = {c["path"].lstrip("/") for c in applied_doc["changes"]}
    backups = {c["backup"] for c in applied_doc["changes"] if c["backup"]}
    changed = {k for k in after.keys() | before.keys() if after.get(k) != before.get(k)}
    assert changed == planned | {str(Path(b).relative_to(root)) for b in backups} | _new_dirs(before, after)
    for change in applied_doc["changes"]:
        if change["action"] == "modify":
            assert change["backup"], change
            backup = Path(change["backup"])
            digest = hashlib.sha256(backup.read_bytes()).hexdigest()
            assert before[change["path"].lstrip("/")].startswith(digest), "the backup is not the old file"
            assert backup.parent == (root / change["path"].lstrip("/")).parent
            assert "kforensic-20260102T030405Z.bak" in change["backup"]
        else:
            assert change["backup"] is None
    # Commands are never run under --root: they are listed for the target system.
    assert all(c["status"] == "to run on the target system" for c in applied_doc["commands"])
    assert all(c["returncode"] is None for c in applied_doc["commands"])
    # Nothing outside the tree was touched.
    assert tree_digest(tmp_path, skip=root) == before_outside

    # Idempotent: a second run changes nothing.
    again = run_setup(root, preset, apply=True, statvfs=system.statvfs, now=FIXED_NOW + dt.timedelta(hours=1))
    assert setup_document(again)["changes"] == []
    assert tree_digest(root) == after


def _new_dirs(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {k for k, v in after.items() if v == "dir" and k not in before}


def test_goldens_have_no_stale_files() -> None:
    expected = {f"{s}.{kind}.txt" for s in SCENARIOS for kind in ("check", "setup", "apply")}
    present = {p.name for p in GOLDEN_DIR.glob("*.txt")}
    assert present == expected or UPDATE, f"stale: {sorted(present - expected)}, missing: {sorted(expected - present)}"
