"""The kdump service line of a system without systemd: read from its init script and start links, or unknown.

Before 2026-12-07 such a system without a start link was a medium WARN, "cannot tell whether kdump starts at boot":
a problem counted for a fault not seen.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.model import Severity
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import SCENARIOS
from tests.detectors.kdump.lines import check_root, line_of

NO_SYSTEMD = SCENARIOS["debian12-no-systemd"]


def _init_script(root: Path) -> None:
    script = root / "etc/init.d/kdump-tools"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/sh\n### BEGIN INIT INFO\n# Provides: kdump-tools\n# Default-Start: 2 3 4 5\n")
    script.chmod(0o755)


def test_no_systemd_no_init_script_is_unknown_not_a_warning(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, NO_SYSTEMD)
    line = line_of(checklist, "kdump-service")
    assert line.status is Status.UNKNOWN, line  # was WARN (medium): "cannot tell whether kdump starts at boot"
    assert "no kdump init script (/etc/init.d/kdump-tools nor /etc/init.d/kdump)" in line.detail
    assert "the crash kernel is loaded now" in line.detail  # the scenario's kexec_crash_loaded is 1
    assert line.fix.startswith("make your init system run kdump-config load at every boot")
    assert line.severity is Severity.MEDIUM  # a service that never starts loses the first crash after a reboot
    assert not checklist.ready  # not known to be ready: it was READY with a warning
    # setup plans no systemctl enable without systemd: the boot start is a manual step (it was not in the plan at all).
    plan = make_plan(state, checklist, policy_named("none"))
    assert not [c for c in plan.commands if c.argv[0] == "systemctl"], plan.commands
    assert f"{line.title}: not known from here: {line.fix}" in plan.manual, plan.manual


def test_no_systemd_an_init_script_without_start_link_is_unknown(tmp_path: Path) -> None:
    _, checklist = check_root(tmp_path, replace(NO_SYSTEMD, extra=_init_script))
    line = line_of(checklist, "kdump-service")
    assert line.status is Status.UNKNOWN, line
    assert "/etc/init.d/kdump-tools is installed, with no /etc/rc[2345].d/S*kdump* start link" in line.detail
    assert line.fix.startswith("on sysvinit: update-rc.d kdump-tools defaults")


@pytest.mark.parametrize("level", ["2", "4"])
def test_no_systemd_a_start_link_passes_citing_use_kdump(tmp_path: Path, level: str) -> None:
    def link(root: Path) -> None:
        _init_script(root)
        (root / f"etc/rc{level}.d").mkdir(parents=True)
        os.symlink("../init.d/kdump-tools", root / f"etc/rc{level}.d/S01kdump-tools")

    _, checklist = check_root(tmp_path, replace(NO_SYSTEMD, extra=link))
    line = line_of(checklist, "kdump-service")
    assert line.status is Status.PASS, line
    assert line.detail == (
        f"SysV start link /etc/rc{level}.d/S01kdump-tools; the script loads the crash kernel: USE_KDUMP=1"
        " (/etc/default/kdump-tools line 7)"
    )
    assert line.evidence[0].excerpt == "USE_KDUMP=1"
    assert checklist.ready


def test_a_running_system_runs_systemd_only_with_run_systemd_system(tmp_path: Path) -> None:
    """On the live system, systemd's program installed (this test machine's: PID 1 is not systemd) starts nothing:
    its unit links were judged as if it did (the service line "no kdump-tools.service link", a FAIL).  A tree keeps
    the program as its test: it has no /run of its own."""
    from collectors.kdump.reader import RootReader
    from collectors.kdump.state import _services
    from tests.collectors.kdump.roots import build

    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])  # systemd installed, kdump-tools.service enabled
    assert _services(RootReader(root), live=False).systemd
    assert not _services(RootReader(root), live=True).systemd
    (root / "run/systemd/system").mkdir(parents=True)
    assert _services(RootReader(root), live=True).systemd


@pytest.mark.parametrize("loaded", [1, 0])
def test_under_systemd_a_start_link_of_a_script_with_a_native_unit_is_ignored(tmp_path: Path, loaded: int) -> None:
    """systemd-sysv-generator skips a SysV script whose name has a native unit (kdump-tools.service): its rc?.d
    start link starts nothing, and was a PASS ("SysV start link /etc/rc2.d/S01kdump-tools") of a unit not enabled."""

    def native_unit_and_start_link(root: Path) -> None:
        unit = root / "usr/lib/systemd/system/kdump-tools.service"
        unit.parent.mkdir(parents=True, exist_ok=True)
        unit.write_text("[Unit]\nDescription=Kernel crash dump capture service\n[Install]\nWantedBy=basic.target\n")
        (root / "etc/rc2.d").mkdir(parents=True)
        os.symlink("../init.d/kdump-tools", root / "etc/rc2.d/S01kdump-tools")

    system = replace(
        SCENARIOS["debian12-ready"], service_enabled=False, loaded=loaded, extra=native_unit_and_start_link
    )
    _, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "kdump-service")
    assert line.status is (Status.WARN if loaded else Status.FAIL), line
    assert line.detail.startswith(
        "no kdump-tools.service link in /etc/systemd/system/*.wants/ (the SysV start link /etc/rc2.d/S01kdump-tools"
        " is ignored: systemd runs /usr/lib/systemd/system/kdump-tools.service instead)"
    )
    assert line.fix == "systemctl enable kdump-tools.service: kforensic kdump setup --apply"


def test_a_start_link_of_a_script_without_a_native_unit_passes_under_systemd(tmp_path: Path) -> None:
    # No native unit: systemd-sysv-generator makes one of the script, started by its start links.
    def start_link(root: Path) -> None:
        _init_script(root)
        (root / "etc/rc2.d").mkdir(parents=True)
        os.symlink("../init.d/kdump-tools", root / "etc/rc2.d/S01kdump-tools")

    _, checklist = check_root(tmp_path, replace(SCENARIOS["debian12-ready"], service_enabled=False, extra=start_link))
    line = line_of(checklist, "kdump-service")
    assert line.status is Status.PASS, line
    assert line.detail.startswith("SysV start link /etc/rc2.d/S01kdump-tools")
