"""The room for the dump on a target that is not a local directory: NFS, SSH, a device the crash kernel mounts.

Its free space is another machine's (or a file system not mounted here): not measured, so unknown with the command
that measures it where it is.  Before 2026-12-07 it was a medium WARN, "check the target's free space by hand".
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.model import Severity
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import DEBIAN_CONFIG, RHEL_CONFIG, SCENARIOS
from tests.detectors.kdump.lines import check_root, line_of

_RHEL = RHEL_CONFIG.format(collector="makedumpfile -F -l --message-level 7 -d 31")
_DEBIAN = DEBIAN_CONFIG.format(use=1, args="-c -d 31")


@pytest.mark.parametrize(
    ("scenario", "config", "where", "fix"),
    [
        (
            "debian12-ready",
            _DEBIAN + 'NFS="nas.example:/srv/dumps"\n',
            "the NFS export nas.example:/srv/dumps (/etc/default/kdump-tools line 15)",
            "on nas.example: df -h /srv/dumps (the exported directory)",
        ),
        (
            "debian12-ready",
            _DEBIAN + 'SSH="kdump@backup.example"\n',
            "the SSH host kdump@backup.example (/etc/default/kdump-tools line 15)",
            "ssh kdump@backup.example df -h /var/crash (its nearest existing parent)",
        ),
        (
            "rhel9-ready",
            _RHEL.replace("path /var/crash", "path /dumps") + "ssh kdump@backup.example\n",
            "the SSH host kdump@backup.example (/etc/kdump.conf line 11)",
            "ssh kdump@backup.example df -h /dumps (its nearest existing parent)",
        ),
        (
            "rhel9-ready",
            _RHEL + "nfs nas.example:/export/tmp\n",
            "the NFS export nas.example:/export/tmp (/etc/kdump.conf line 11)",
            "on nas.example: df -h /export/tmp (the exported directory)",
        ),
        (
            "rhel9-ready",
            _RHEL + "raw /dev/vg/lv_kdump\n",
            "the raw device /dev/vg/lv_kdump (/etc/kdump.conf line 11)",
            "blockdev --getsize64 /dev/vg/lv_kdump: the dump is written to it whole",
        ),
    ],
    ids=["debian-nfs", "debian-ssh", "rhel-ssh", "rhel-nfs", "rhel-raw"],
)
def test_a_target_elsewhere_is_not_measured_not_a_warning(
    tmp_path: Path, scenario: str, config: str, where: str, fix: str
) -> None:
    state, checklist = check_root(tmp_path, replace(SCENARIOS[scenario], config=config))
    line = line_of(checklist, "dump-space")
    assert line.status is Status.UNKNOWN, line  # was WARN (medium): "check the target's free space by hand"
    assert (
        line.detail
        == f"unknown (not measured: the dump goes to {where}, whose free space cannot be measured from here)"
    )
    assert line.fix == fix
    assert line.severity is Severity.MEDIUM  # a full target truncates the dump: the verdict waits for it
    assert line.evidence  # the configuration line that sends the dump there
    # Only a person can measure it: setup says so as a manual step (it said nothing of the room before).
    assert f"Room for the dump: not known from here: {fix}" in make_plan(state, checklist, policy_named("none")).manual
