"""The room for the dump of a --root copy: the copy's own df output (sos report's), or unknown.

A copy lies on the disk of whoever copied it: statvfs under it measured that disk ("51200 MiB free at /var/crash" of
the host, a PASS, before 2026-12-07), never the inspected machine's dump target.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from collectors.kdump.reader import VfsStat
from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from forensics.model import Severity
from forensics.types.kdump import CheckLine, Status
from tests.collectors.kdump.roots import GIB, MIB, SCENARIOS, FakeSystem, build, sos_df
from tests.detectors.kdump.lines import line_of

DF = "sos_commands/filesys/df_-al_-x_autofs"


def _room(tmp_path: Path, system: FakeSystem) -> tuple[Path, CheckLine]:
    measured: list[str] = []

    def host_disk(path: str) -> VfsStat:  # the disk the copy lies on: roomy, and not the machine's
        measured.append(path)
        return VfsStat(4096, 100 * GIB // 4096, 50 * GIB // 4096)

    root = build(tmp_path / "root", system)
    state = collect_kdump_state(root, host_disk)
    assert measured == []  # the disk under the copy is never measured
    return root, line_of(run_checklist(state), "dump-space")


def test_a_copy_without_df_output_leaves_the_room_unknown(tmp_path: Path) -> None:
    root, line = _room(tmp_path, replace(SCENARIOS["debian12-ready"], df=False))
    assert line.status is Status.UNKNOWN, line  # was PASS: "51200 MiB free at /var/crash for /var/crash"
    assert line.detail == (
        f"unknown (free space not measured: the root {root} is a copy or a mount of another system; the disk under it"
        f" here is not known to be the machine's, and the copy holds no df output (/{DF}))"
    )
    assert line.fix.startswith("on the machine itself: df -h /var/crash (its nearest existing parent)")
    assert line.severity is Severity.MEDIUM


def test_the_copys_df_output_gives_the_room_of_the_mount_holding_the_dump(tmp_path: Path) -> None:
    # / has 50 GiB free, /var (its own file system) 200 MiB: the dump goes to /var/crash, so /var is what counts.
    def own_var(root: Path) -> None:
        (root / DF).write_text(sos_df(50 * GIB, (("/var", 200 * MIB), ("/var/lib/docker", 9 * GIB))))

    _, line = _room(tmp_path, replace(SCENARIOS["ubuntu2404-lzo"], extra=own_var))
    assert line.status is Status.FAIL, line
    assert line.detail.startswith(
        f"200 MiB free at /var for /var/crash (the copy's df: /{DF} line 6, when it was made); expected dump up to"
    )
    assert line.evidence[0].source.endswith(DF) and line.evidence[0].excerpt.endswith("/var")


def test_a_partial_copy_with_df_output_is_judged_by_it(tmp_path: Path) -> None:
    # A sos report keeps no program (/usr/sbin, /usr/bin): a partial copy, its df read all the same.
    def sos_like(root: Path) -> None:
        for programs in ("usr/sbin", "usr/bin"):
            for path in sorted((root / programs).iterdir()):
                path.unlink()
            (root / programs).rmdir()

    _, line = _room(tmp_path, replace(SCENARIOS["ubuntu2404-full-disk"], extra=sos_like))
    assert line.status is Status.FAIL, line
    assert line.detail.startswith(f"300 MiB free at / for /var/crash (the copy's df: /{DF} line 4, when it was made)")


def test_df_output_not_in_1k_blocks_is_not_read(tmp_path: Path) -> None:
    def human(root: Path) -> None:
        (root / DF).write_text(
            "Filesystem      Size  Used Avail Use% Mounted on\n/dev/vda1       100G   50G   50G  50% /\n"
        )

    _, line = _room(tmp_path, replace(SCENARIOS["debian12-ready"], extra=human))
    assert line.status is Status.UNKNOWN, line
    assert line.detail.endswith(f"; /{DF} line 1 is not df's header in 1K blocks)")
