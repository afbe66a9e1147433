"""crashkernel=start-end:size is matched as the kernel matches it: from 6.0 with the RAM rounded up to 128 MiB
("kdump: round up the total memory size to 128M for crashkernel reservation").  A 1 GiB KVM guest has 1023 MiB of
System RAM; on its 6.1 kernel crashkernel=1G-2G:128M reserves 128 MiB, and the check said "no range covers this
machine's 1023 MiB of RAM", a FAIL, and setup replaced the value.  On a 5.10 kernel it does reserve nothing; where
the release was not read, or is a Red Hat kernel older than 6.0 that may carry the backport, it is not known."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from detectors.kdump.crashkernel import (
    GIB,
    MIB,
    crashkernel_problem,
    match_ranges,
    parse_crashkernel,
    ram_rounding,
)
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import policy_named
from forensics.model import NotAvailable
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import SCENARIOS, FakeSystem
from tests.detectors.kdump.lines import check_root, line_of

VALUE = "1G-2G:128M"
#: /proc/iomem of a 1 GiB guest: the first page and the 640K-1M hole are not System RAM (1023.5 MiB of it).
_IOMEM_1G = "00000000-00000fff : Reserved\n00001000-0009fbff : System RAM\n00100000-3ffdffff : System RAM\n"


def _release(root: Path, release: str | None) -> None:
    """The kernel release under ``root`` (None: /proc/sys/kernel/osrelease unreadable)."""
    path = root / "proc/sys/kernel/osrelease"
    if release is None:
        path.unlink()
        path.mkdir()  # EISDIR, for root too
    else:
        path.write_text(f"{release}\n")


def _guest(release: str | None) -> Callable[[Path], None]:
    """The 1 GiB guest's /proc/iomem, and its kernel release."""

    def write(root: Path) -> None:
        (root / "proc/iomem").write_text(_IOMEM_1G)
        _release(root, release)

    return write


def _system(release: str | None, reserved: int) -> FakeSystem:
    return replace(
        SCENARIOS["debian12-ready"],
        ram=GIB,
        cmdline_crashkernel=VALUE,
        boot_crashkernel=VALUE,
        crash_size=reserved,
        extra=_guest(release),
    )


def test_a_6_1_kernel_reserves_for_1023_mib(tmp_path: Path) -> None:
    # The patch's case: 1023 MiB matched as 1024 MiB.  Before: FAIL "no range covers this machine's 1023 MiB".
    state, checklist = check_root(tmp_path, _system("6.1.0-18-amd64", 128 * MIB))
    assert isinstance(state.system_ram_bytes, int) and state.system_ram_bytes // MIB == 1023
    assert state.system_ram_source == "/proc/iomem System RAM"
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is Status.PASS, cmdline
    assert cmdline.detail == (
        "crashkernel=1G-2G:128M (128 MiB for 1023 MiB RAM of /proc/iomem System RAM, matched as 1024 MiB: kernels "
        "from 6.0 round the RAM up to 128 MiB)"
    )
    boot = line_of(checklist, "crashkernel-boot")
    assert boot.status is Status.PASS, boot
    assert "reserves nothing" not in boot.detail
    # setup does not replace a value that reserves here (it planned crashkernel=<explicit size> before).
    plan = make_plan(state, checklist, policy_named("none"))
    assert not any("crashkernel=" in (change.new or "") for change in plan.changes), plan.changes
    assert not any("crashkernel=" in " ".join(command.argv) for command in plan.commands), plan.commands


def test_a_5_10_kernel_reserves_nothing_for_1023_mib(tmp_path: Path) -> None:
    # Before the patch the ranges are matched with the RAM as it is: 1023 MiB is below 1G-.
    state, checklist = check_root(tmp_path, _system("5.10.0-28-amd64", 0))
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is Status.FAIL, cmdline
    assert cmdline.detail.startswith(
        "crashkernel=1G-2G:128M: no range covers this machine's 1023 MiB of RAM (/proc/iomem System RAM; matched as "
        "read, not rounded up to 1024 MiB as kernels from 6.0 do)"
    ), cmdline.detail
    assert line_of(checklist, "crashkernel-boot").status is Status.FAIL
    plan = make_plan(state, checklist, policy_named("none"))
    # The Debian default replaces it, which reserves 128 MiB on this RAM whether rounded or not.
    assert any("crashkernel=384M-:128M" in (change.new or "") for change in plan.changes), plan.changes


@pytest.mark.parametrize(
    ("release", "why"),
    [
        (None, "the running kernel's release was not read"),
        ("5.14.0-70.13.1.el9_0.x86_64", "a Red Hat or Fedora kernel older than 6.0, which may carry the rounding"),
    ],
    ids=["release-unread", "rhel9.0"],
)
def test_where_the_kernel_s_rounding_is_not_known_it_is_unknown(tmp_path: Path, release: str | None, why: str) -> None:
    _, checklist = check_root(tmp_path, _system(release, 0))
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is Status.UNKNOWN, cmdline
    assert cmdline.detail.startswith(
        "unknown (whether crashkernel=1G-2G:128M reserves memory here is not known: this machine's 1023 MiB of RAM "
        "(/proc/iomem System RAM) is matched as 1024 MiB by a kernel that rounds it up to 128 MiB (mainline from "
        "6.0), where 128 MiB is reserved, and as read by one that does not, where nothing is; "
    ), cmdline.detail
    assert why in cmdline.detail
    assert "kernels from 6.0 round the RAM up to 128 MiB" in cmdline.fix
    assert "crashkernel=auto" not in cmdline.fix and "dmesg | grep -i crashkernel" in cmdline.fix
    assert line_of(checklist, "crashkernel-boot").status is Status.UNKNOWN
    # What this boot reserved settles it: the kernel matched the ranges.
    _, reserved = check_root(tmp_path / "b", _system(release, 128 * MIB))
    assert line_of(reserved, "crashkernel-cmdline").status is Status.PASS


@pytest.mark.parametrize("release", ["6.1.0-18-amd64", "5.10.0-28-amd64", None])
def test_ram_well_inside_a_range_is_unchanged(tmp_path: Path, release: str | None) -> None:
    # 8 GiB (8191 MiB of System RAM): as read or rounded, 2G- matches; nothing about rounding is said.
    value = "1G-2G:128M,2G-:256M"

    system = replace(
        SCENARIOS["debian12-ready"],
        cmdline_crashkernel=value,
        boot_crashkernel=value,
        extra=lambda root: _release(root, release),
    )
    state, checklist = check_root(tmp_path, system)
    cmdline = line_of(checklist, "crashkernel-cmdline")
    assert cmdline.status is Status.PASS, cmdline
    ram = state.system_ram_bytes
    assert isinstance(ram, int)
    assert cmdline.detail == f"crashkernel={value} (256 MiB for {ram // MIB} MiB RAM)"


@pytest.mark.parametrize(
    ("release", "rounds"),
    [
        ("6.0.0", True),
        ("6.1.0-18-amd64", True),
        ("6.12.0-55.el10.x86_64", True),
        ("5.14.0-427.13.1.el9_4.x86_64", True),  # RHEL 9 from 5.14.0-133.el9 carries it
        ("5.19.17", False),
        ("5.10.0-28-amd64", False),
        ("5.15.0-91-generic", False),
        ("5.14.0-70.13.1.el9_0.x86_64", None),
        ("4.18.0-513.5.1.el8_9.x86_64", None),
        ("5.10.13-200.fc33.x86_64", None),
        ("", None),
    ],
)
def test_which_kernels_round(release: str, rounds: bool | None) -> None:
    answer = ram_rounding(release)
    assert (None if isinstance(answer, NotAvailable) else answer) is rounds


def test_the_rounding_matches_ranges_and_leaves_a_fixed_size() -> None:
    parsed = parse_crashkernel("512M-1G:64M,1G-2G:128M")
    ram = 1023 * MIB + 512 * 1024
    assert parsed.size_for(ram) == 64 * MIB
    assert parsed.size_for(ram, rounded=True) == 128 * MIB
    assert parsed.size_for(1024 * MIB, rounded=True) == 128 * MIB  # a multiple of 128 MiB stays
    assert parse_crashkernel("256M").size_for(ram, rounded=True) == 256 * MIB
    # Reserves either way, how much depends on the rounding: not unknown whether, the least is 64 MiB.
    unsure = match_ranges(parsed, ram, "")
    assert unsure.size is None and unsure.reserves is True and unsure.least == 64 * MIB
    assert match_ranges(parsed, ram, "6.1.0").size == 128 * MIB
    assert match_ranges(parsed, ram, "5.10.0").size == 64 * MIB


@pytest.mark.parametrize(
    ("value", "ram", "release", "problem"),
    [
        # Read in order, 2G-:1G comes before the range that covers 900 MiB: the kernel rejects the value.
        ("2G-:1G,512M-2G:128M", 900 * MIB, "6.1.0", "its range 2G-:1G's size is not below this machine's 900 MiB"),
        ("0-:1G", 1023 * MIB + 512 * 1024, "5.10.0", "its range 0-:1G's size is not below this machine's 1023 MiB"),
        # A size not below the RAM as read, below it rounded up (1024 MiB): rejected before 6.0 only.
        ("0-:1000M", 999 * MIB, "5.10.0", "its range 0-:1000M's size is not below this machine's 999 MiB"),
        ("0-:1000M", 999 * MIB, "6.1.0", None),
    ],
)
def test_a_size_not_below_the_ram_is_rejected(value: str, ram: int, release: str, problem: str | None) -> None:
    # parse_crashkernel_mem: "if (size >= total_mem) { pr_warn("crashkernel: invalid size"); return -EINVAL; }" for
    # every range it reads up to the one that matches (total_mem rounded up to 128 MiB from 6.0).
    found = crashkernel_problem(value, ram, release)
    if problem is None:
        assert found is None
    else:
        assert found is not None and found.startswith(problem) and "crashkernel: invalid size" in found, found
