"""docs/fleet.md's recording rules and alerts are valid: the real ``promtool check rules`` reads them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "fleet.md"


def test_the_recording_rule_example_is_valid(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool (package prometheus) is not installed")
    [rules] = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.S)
    assert "record: instance_slab:node_slabinfo_bytes" in rules and "alert: SlabCacheLeakSuspected" in rules
    path = tmp_path / "rules.yml"
    path.write_text(rules)
    checked = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 4 rules found" in checked.stdout
