"""The first line of ``kdump setup``'s plan: "Nothing to do" only when nothing at all is left.

Review ue21 #9: on an Arch tree with no kdump tooling and nothing reserved, setup printed "Nothing to do: the
configuration is already as the plan wants it." above three steps by hand and "Reboot needed".
"""

from __future__ import annotations

from pathlib import Path

from detectors.kdump.sysctl_rules import policy_named
from forensics.pipelines.kdump import run_setup
from forensics.report import OutputFormat
from forensics.report.formats import render
from forensics.report.kdump import KdumpSetupRenderer
from tests.collectors.kdump.roots import SCENARIOS, build


def _setup_text(tmp_path: Path, scenario: str) -> list[str]:
    system = SCENARIOS[scenario]
    root = build(tmp_path / "root", system)
    setup = run_setup(root, policy_named("none"), apply=False, statvfs=system.statvfs)
    return render(KdumpSetupRenderer(), setup, OutputFormat.TEXT).splitlines()


def test_steps_by_hand_and_a_reboot_are_not_nothing_to_do(tmp_path: Path) -> None:
    lines = _setup_text(tmp_path, "unknown-distro")
    manual = [line for line in lines if line.startswith("manual: ")]
    assert len(manual) == 3, lines  # the packages, crashkernel= on the command line, the debug info
    assert any(line.startswith("Reboot needed: ") for line in lines), lines
    # It was "Nothing to do: the configuration is already as the plan wants it."
    assert lines[2] == "Nothing kdump setup can change here; left: 3 step(s) only you can do and a reboot:", lines
    assert not any("Nothing to do" in line for line in lines), lines


def test_a_step_by_hand_alone_is_counted(tmp_path: Path) -> None:
    lines = _setup_text(tmp_path, "debian12-no-systemd")
    assert lines[2] == "Nothing kdump setup can change here; left: 1 step(s) only you can do:", lines
    assert lines[3].startswith("manual: kdump service enabled at boot: not known from here: "), lines


def test_nothing_left_at_all_is_nothing_to_do(tmp_path: Path) -> None:
    lines = _setup_text(tmp_path, "debian12-ready")
    assert lines[2:] == ["Nothing to do: the configuration is already as the plan wants it."], lines
