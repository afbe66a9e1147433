"""The sysctl configuration applied at boot, against the running values and setup's snippet.

Review 7 (5): ``kdump setup --policy hang-debug --apply`` wrote /etc/sysctl.d/90-kforensic-kdump.conf beside a
99-local.conf setting kernel.panic = 0 and an /etc/sysctl.conf setting kernel.panic_on_oops = 0, both applied after
it at boot; the next run said "Nothing to do" (though /proc/sys still held 0 and ``sysctl -p`` had not been run) and
check named neither file.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from collectors.kdump.apply import apply_changes
from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.types import kdump_paths as paths
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import SCENARIOS
from tests.detectors.kdump.lines import check_root, line_of

WHEN = dt.datetime(2026, 12, 7, 5, 0, 0, tzinfo=dt.UTC)
HANG_DEBUG = policy_named("hang-debug")


def _overrides(root: Path) -> None:
    (root / "etc/sysctl.d/99-local.conf").write_text("kernel.panic = 0\n")
    (root / "etc/sysctl.conf").write_text("# local\nkernel/panic_on_oops=0\n")
    vendor = root / "usr/lib/sysctl.d"
    vendor.mkdir(parents=True)
    (vendor / "95-vendor.conf").write_text("kernel.hung_task_panic = 0\n")
    (vendor / "50-early.conf").write_text("kernel.softlockup_panic = 0\n")  # applied before the snippet: harmless
    (vendor / "96-masked.conf").write_text("kernel.hardlockup_panic = 0\n")
    (root / "etc/sysctl.d/96-masked.conf").symlink_to("/dev/null")  # masks the vendor file of its name


#: The reviewer's /tmp/ue7/rd4: every panic sysctl 0 in /proc/sys.
SYSTEM = replace(
    SCENARIOS["debian12-ready"],
    sysctls={name.removeprefix("kernel."): "0" for name, _ in HANG_DEBUG.settings},
    extra=_overrides,
)


def test_setup_comments_out_what_would_undo_the_policy_and_converges(tmp_path: Path) -> None:
    state, checklist = check_root(tmp_path, SYSTEM)
    panic = line_of(checklist, "sysctl:kernel.panic")
    assert panic.status is Status.WARN
    assert panic.detail == "0; at boot /etc/sysctl.d/99-local.conf line 1 sets kernel.panic = 0"
    plan = make_plan(state, checklist, HANG_DEBUG)
    by_path = {c.path: c for c in plan.changes}
    assert set(by_path) == {
        paths.SYSCTL_SNIPPET,
        "/etc/sysctl.d/99-local.conf",
        "/etc/sysctl.conf",
        "/etc/sysctl.d/95-vendor.conf",
    }
    assert by_path["/etc/sysctl.conf"].new == "# local\n#kforensic-disabled# kernel/panic_on_oops=0\n"
    assert "which sysctl --system applies after every sysctl.d file" in by_path["/etc/sysctl.conf"].reason
    assert "applied after 90-kforensic-kdump.conf" in by_path["/etc/sysctl.d/99-local.conf"].reason
    vendor = by_path["/etc/sysctl.d/95-vendor.conf"]
    assert vendor.old is None and vendor.new == "#kforensic-disabled# kernel.hung_task_panic = 0\n"
    root = tmp_path / "root"
    applied = apply_changes(plan.changes, root, WHEN)
    assert {a.path for a in applied if a.backup} == {"/etc/sysctl.d/99-local.conf", "/etc/sysctl.conf"}
    assert (root / "usr/lib/sysctl.d/95-vendor.conf").read_text() == "kernel.hung_task_panic = 0\n"

    # Applied, but sysctl -p not run: the running kernel still differs, so the command stays in the plan.
    state = collect_kdump_state(root, SYSTEM.statvfs)
    checklist = run_checklist(state)
    again = make_plan(state, checklist, HANG_DEBUG)
    assert again.changes == ()
    assert [c.argv for c in again.commands] == [("sysctl", "-p", paths.SYSCTL_SNIPPET)]
    assert "kernel.panic = 0" in again.commands[0].reason
    line = line_of(checklist, "sysctl:kernel.panic")
    assert line.detail == (
        "0 now; /etc/sysctl.d/90-kforensic-kdump.conf line 3 sets kernel.panic = 10 for the next boot: not applied yet"
    )
    assert line.fix == "sysctl -p /etc/sysctl.d/90-kforensic-kdump.conf (or reboot)"

    # Once sysctl -p has run: nothing left.
    for name, value in HANG_DEBUG.settings:
        (root / "proc/sys" / name.replace(".", "/")).write_text(f"{value}\n")
    state = collect_kdump_state(root, SYSTEM.statvfs)
    checklist = run_checklist(state)
    done = make_plan(state, checklist, HANG_DEBUG)
    assert done.changes == () and done.commands == ()
    assert line_of(checklist, "sysctl:kernel.panic").status is Status.PASS


def test_check_names_the_later_file_that_overrides_the_snippet(tmp_path: Path) -> None:
    def written(root: Path) -> None:
        _overrides(root)
        (root / "etc/sysctl.d/90-kforensic-kdump.conf").write_text("kernel.panic_on_oops = 1\nkernel.panic = 10\n")

    state, checklist = check_root(
        tmp_path, replace(SYSTEM, sysctls={"panic": "10", "panic_on_oops": "1"}, extra=written)
    )
    panic = line_of(checklist, "sysctl:kernel.panic")
    assert panic.status is Status.WARN
    assert panic.detail == (
        "10 now, but /etc/sysctl.d/99-local.conf line 1 sets kernel.panic = 0, applied after 90-kforensic-kdump.conf:"
        " the next boot sets it back"
    )
    assert [e.excerpt for e in panic.evidence][-1] == "kernel.panic = 0"
    oops = line_of(checklist, "sysctl:kernel.panic_on_oops")
    assert oops.detail == (
        "1 now, but /etc/sysctl.conf line 2 sets kernel.panic_on_oops = 0, which sysctl --system applies after every"
        " sysctl.d file: the next boot sets it back"
    )
    # The masked vendor file sets nothing; the one sorted before the snippet is overridden by nothing it sets.
    assert line_of(checklist, "sysctl:kernel.hardlockup_panic").detail == "0"
    assert state.boot_sysctl("kernel.softlockup_panic") is not None
