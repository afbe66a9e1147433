"""One severity per finding in every table: the log's report table says what its finding says."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.vmcore_cases import CASES_DIR


def _dmesg(*args: str) -> str:
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


@pytest.mark.parametrize("case", ["04-hung-task", "07-sysrq-c"])
def test_a_report_the_kernel_panicked_on_is_critical_in_the_table_and_the_finding(case: str) -> None:
    log = CASES_DIR / case / "console.log"
    if not log.is_file():
        pytest.skip(f"no {log}")
    [finding] = json.loads(_dmesg(str(log), "-f", "json"))["incident"]["findings"]
    table = _dmesg(str(log)).splitlines()
    row = next(line for line in table if line.startswith(str(log)))
    assert finding["severity"] == "critical"
    assert f" {finding['severity']} " in row and finding["title"] in row, row
