"""The checklist of a fake root, and one of its lines by id: what the kdump rule tests look at."""

from __future__ import annotations

from pathlib import Path

from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from forensics.types.kdump import CheckLine, Checklist, KdumpState
from tests.collectors.kdump.roots import DEBIAN_CONFIG, GIB, FakeSystem, build

#: The reviewer's kdump trees (/tmp/ue7/rd*): Debian 12, 16 GiB, kdump-tools configured, nothing reserved nor loaded;
#: each test gives the crashkernel= of its command line and boot configuration.
DEBIAN_16G = FakeSystem(
    distro="debian12", ram=16 * GIB, crash_size=0, loaded=0, config=DEBIAN_CONFIG.format(use=1, args="-c -d 31")
)


def check_root(tmp_path: Path, system: FakeSystem) -> tuple[KdumpState, Checklist]:
    """Build ``system`` under ``tmp_path/root`` and run the checklist on it."""
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    return state, run_checklist(state)


def line_of(checklist: Checklist, line_id: str) -> CheckLine:
    """The line ``line_id`` of the checklist (StopIteration when there is none)."""
    return next(line for line in checklist.lines if line.id == line_id)
