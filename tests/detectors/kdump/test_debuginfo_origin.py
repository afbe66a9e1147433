"""The debug info hint names a distribution package only when the package database says one installed the kernel.

This machine runs a locally built 6.18.44-fc-v1272 (``/proc/version``: builder@sandboxing; no linux-image package in
dpkg's status file): the hint was "install linux-image-6.18.44-fc-v1272-dbg", a package that does not exist.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.findings import checklist_findings
from forensics.model import Severity
from forensics.types.kdump import CheckLine
from tests.collectors.kdump.roots import SCENARIOS, FakeSystem, build
from tests.helpers import assert_evidence_resolves

LOCAL_BUILD = (
    "Linux version 6.1.0-18-amd64 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld (GNU Binutils) 2.46) #1 SMP\n"
)
#: Ready but for the debug info: its line is the one warning about it.
DEBIAN = replace(SCENARIOS["debian12-ready"], debug_vmlinux=False)


def _debuginfo(tmp_path: Path, system: FakeSystem, version: str | None = None) -> CheckLine:
    root = build(tmp_path / "root", system)
    if version is not None:
        (root / "proc/version").write_text(version)
    state = collect_kdump_state(root, system.statvfs)
    checklist = run_checklist(state)
    assert_evidence_resolves(checklist_findings(checklist, state))
    return next(line for line in checklist.lines if line.id == "debuginfo")


def test_a_kernel_from_a_package_gets_its_debug_package(tmp_path: Path) -> None:
    line = _debuginfo(tmp_path, DEBIAN)
    assert line.fix == "install linux-image-6.1.0-18-amd64-dbg, or configure debuginfod"
    assert "the kernel is from the package linux-image-6.1.0-18-amd64 (/var/lib/dpkg/status)" in line.detail
    assert line.evidence[0].excerpt == "Package: linux-image-6.1.0-18-amd64"


def test_a_locally_built_kernel_is_pointed_at_its_build_tree(tmp_path: Path) -> None:
    """dpkg's status file read, no package of this release installed (an older one's config files only)."""
    line = _debuginfo(tmp_path, replace(DEBIAN, kernel_package=False), LOCAL_BUILD)
    assert "-dbg" not in line.fix and "install" not in line.fix
    assert line.fix.startswith("use the vmlinux of the build tree it was built in (with CONFIG_DEBUG_INFO=y;")
    assert "no package in /var/lib/dpkg/status installs it (/proc/version: built by builder@sandboxing)" in line.detail
    assert [e.excerpt for e in line.evidence] == [LOCAL_BUILD.strip()]


def test_no_package_database_leaves_the_origin_unknown(tmp_path: Path) -> None:
    """Without dpkg's status file nothing says where the kernel came from: both ways, each with its condition."""

    def drop_status(root: Path) -> None:
        (root / "var/lib/dpkg/status").unlink()

    line = _debuginfo(tmp_path, replace(DEBIAN, extra=drop_status))
    assert "whether a package installed it is unknown (/var/lib/dpkg/status does not exist)" in line.detail
    # Each branch on its own, nothing said of one branch after the other (review 7, 15b: "...; no distribution
    # package has it" followed the built-locally steps, contradicting the package branch).
    assert line.fix == (
        "if a package installed it: install linux-image-6.1.0-18-amd64-dbg;"
        " if it was built locally (no distribution package has its debug info): use the vmlinux of the build tree it"
        " was built in (with CONFIG_DEBUG_INFO=y; from that very build, build id"
        " 3f2a9c0d5e6b7a8190aabbccddeeff0011223344), or a debuginfod server that indexes that build"
    )


def test_a_ready_distribution_machine_without_debug_info_has_no_problem(tmp_path: Path) -> None:
    """Ubuntu 24.04 and RHEL 9, ready, no debug info installed (the usual install): "no kernel debug info" was a
    medium WARN, so a healthy machine's report said "1 problem(s)".  A distribution's kernel gets its debug info
    when a vmcore is to be read: low.  A local build's may be gone with its build tree: medium, as before."""
    for name, scenario in (("ubuntu", "ubuntu2404-lzo"), ("rhel", "rhel9-ready")):
        root = build(tmp_path / name, SCENARIOS[scenario])
        state = collect_kdump_state(root, SCENARIOS[scenario].statvfs)
        checklist = run_checklist(state)
        assert checklist.ready, scenario
        line = next(x for x in checklist.lines if x.id == "debuginfo")
        assert line.severity is Severity.LOW, (scenario, line.detail)
        problems = [f.title for f in checklist_findings(checklist, state) if f.severity >= Severity.MEDIUM]
        assert problems == [], (scenario, problems)
    local = _debuginfo(tmp_path / "local", replace(DEBIAN, kernel_package=False), LOCAL_BUILD)
    assert local.severity is Severity.MEDIUM
