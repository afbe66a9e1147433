"""The room for the dump on a target that is not a local directory: NFS, SSH, a device the crash kernel mounts.

Its free space is another machine's (or a file system not mounted here): not measured, so unknown with the command
that measures it where it is.  Before 2026-12-07 it was a medium WARN, "check the target's free space by hand".
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.model import Severity
from forensics.types.kdump import Checklist, KdumpState, Status
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


# An SSH target's key (review ue21 #6): no rule looked at it, so a key that did not exist was "[PASS] kdump
# configuration ... no errors" and setup's plan never named propagate.
_RHEL_SSH = _RHEL.replace("path /var/crash", "path /dumps") + "ssh kdump@backup.example\n"


def _key(*names: str) -> Callable[[Path], None]:
    """A tree's extra: stand-ins for private keys under /root/.ssh (only their existence is looked at)."""

    def write(root: Path) -> None:
        for name in names:
            key = root / "root/.ssh" / name
            key.parent.mkdir(parents=True, exist_ok=True)
            key.write_text("a stand-in: the check looks the key up, never reads it\n")

    return write


def _manual(state: KdumpState, checklist: Checklist) -> tuple[str, ...]:
    return make_plan(state, checklist, policy_named("none")).manual


def test_an_ssh_target_without_its_key_fails_and_setup_names_propagate(tmp_path: Path) -> None:
    system = replace(SCENARIOS["debian12-ready"], config=_DEBIAN + 'SSH="kdump@backup.example"\n')
    state, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "ssh-key")  # there was no such line
    assert line.status is Status.FAIL, line
    assert (
        line.detail == "/root/.ssh/kdump_id_rsa does not exist (the default: /etc/default/kdump-tools sets no SSH_KEY)"
    )
    assert line.fix.startswith("kdump-config propagate: it makes /root/.ssh/kdump_id_rsa and adds its public half")
    assert line.evidence[0].excerpt == 'SSH="kdump@backup.example"'
    assert not checklist.ready
    assert f"SSH key for the dump: {line.fix}" in _manual(state, checklist)
    assert not [x for x in checklist.lines if x.id == "ssh-key-host"]  # propagate authorizes the key it makes


def test_a_configured_key_that_does_not_exist_fails_citing_its_line(tmp_path: Path) -> None:
    system = replace(SCENARIOS["rhel9-ready"], config=_RHEL_SSH + "sshkey /root/.ssh/missing\n")
    state, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "ssh-key")
    assert line.status is Status.FAIL, line
    assert line.detail.startswith(
        "/root/.ssh/missing does not exist (/etc/kdump.conf line 12: sshkey /root/.ssh/missing)"
    )
    assert "nor does kdumpctl's default /root/.ssh/kdump_id_rsa" in line.detail
    # kdumpctl propagate makes its default while the configured key is missing: the fix makes the configured one.
    assert line.fix.startswith("ssh-keygen -t rsa -N '' -f /root/.ssh/missing"), line.fix
    assert "then kdumpctl propagate" in line.fix and "systemctl restart kdump" in line.fix
    assert line.evidence[0].excerpt == "sshkey /root/.ssh/missing"
    assert f"SSH key for the dump: {line.fix}" in _manual(state, checklist)


def test_a_key_that_exists_passes_and_its_acceptance_is_a_step_by_hand(tmp_path: Path) -> None:
    config = _RHEL_SSH + "sshkey /root/.ssh/id_kdump\n"
    state, checklist = check_root(tmp_path, replace(SCENARIOS["rhel9-ready"], config=config, extra=_key("id_kdump")))
    line = line_of(checklist, "ssh-key")
    assert line.status is Status.PASS, line
    assert line.detail == "/root/.ssh/id_kdump exists (/etc/kdump.conf line 12: sshkey /root/.ssh/id_kdump)"
    assert line.evidence[0].excerpt == "sshkey /root/.ssh/id_kdump"
    host = line_of(checklist, "ssh-key-host")
    assert host.status is Status.UNKNOWN and host.by_hand, host
    assert host.fix == (
        "as root: ssh -i /root/.ssh/id_kdump -o BatchMode=yes kdump@backup.example true (it must succeed without a"
        " password); if it fails: kdumpctl propagate"
    )
    assert f"SSH key accepted by the dump host: not known from here: {host.fix}" in _manual(state, checklist)
    assert not checklist.ready


def test_kdumpctl_falls_back_to_its_default_key_a_warning(tmp_path: Path) -> None:
    system = replace(
        SCENARIOS["rhel9-ready"], config=_RHEL_SSH + "sshkey /root/.ssh/gone\n", extra=_key("kdump_id_rsa")
    )
    _, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "ssh-key")
    assert line.status is Status.WARN, line
    assert "kdumpctl logs in with its default /root/.ssh/kdump_id_rsa instead, which exists" in line.detail
    assert "/root/.ssh/kdump_id_rsa" in line_of(checklist, "ssh-key-host").fix


def test_a_partial_copy_without_the_key_is_unknown(tmp_path: Path) -> None:
    def sos_like(root: Path) -> None:  # a sos report copies no program and no key
        for programs in ("usr/sbin", "usr/bin"):
            shutil.rmtree(root / programs)

    system = replace(SCENARIOS["debian12-ready"], config=_DEBIAN + 'SSH="kdump@backup.example"\n', extra=sos_like)
    _, checklist = check_root(tmp_path, system)
    line = line_of(checklist, "ssh-key")
    assert line.status is Status.UNKNOWN, line
    assert line.detail.startswith("unknown (/root/.ssh/kdump_id_rsa (the default: /etc/default/kdump-tools sets no")


@pytest.mark.parametrize("config", [_DEBIAN, _DEBIAN + 'NFS="nas.example:/srv/dumps"\n'], ids=["local", "nfs"])
def test_no_key_line_for_a_target_not_over_ssh(tmp_path: Path, config: str) -> None:
    _, checklist = check_root(tmp_path, replace(SCENARIOS["debian12-ready"], config=config))
    assert not [line for line in checklist.lines if line.id.startswith("ssh-key")]
