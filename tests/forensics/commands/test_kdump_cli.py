"""``kforensic kdump`` as a user runs it, on fake root trees and on this machine (error paths in a real subprocess)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from forensics.cli import app
from tests.collectors.kdump.roots import SCENARIOS, build
from tests.detectors.kdump.test_golden import tree_digest


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m forensics ARGS`` and capture its output (for the error boundary and the live machine)."""
    return subprocess.run(
        [sys.executable, "-m", "forensics", *args], capture_output=True, text=True, timeout=120, check=False
    )


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process (faster); for commands that do not end in an error message."""
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), result.exit_code, result.stdout, "")


def _one_clear_error(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.splitlines()
    assert "Traceback" not in result.stderr
    assert lines, "no error message"
    assert lines[0].startswith("kforensic: error: ")
    assert len(lines) <= 2
    return lines[0]


def _holding_back(doc: dict[str, Any]) -> list[str]:
    """The check lines of a JSON checklist that keep it from READY (for an assertion's message)."""
    return [f"{c['id']}: {c['status']}: {c['detail']}" for c in doc["checks"] if c["status"] in ("fail", "unknown")]


def test_check_ready_tree_exits_0(tmp_path: Path) -> None:
    # The room for the dump is the copy's df output (roots.sos_df), never the free space of the disk the tree lies on.
    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])
    result = invoke("kdump", "check", "--root", str(root))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "READY: the next crash will be captured" in result.stdout


@pytest.mark.parametrize("scenario", ["debian12-no-crashkernel", "rhel9-no-crashkernel", "unknown-distro"])
def test_check_not_ready_exits_1(tmp_path: Path, scenario: str) -> None:
    root = build(tmp_path / "root", SCENARIOS[scenario])
    result = invoke("kdump", "check", "--root", str(root))
    assert result.returncode == 1
    assert "NOT READY" in result.stdout
    assert "[FAIL] crashkernel= on the kernel command line: no crashkernel= parameter" in result.stdout


def test_an_installed_tree_without_a_running_kernel_is_not_judged_on_its_kernel(tmp_path: Path) -> None:
    """The ready Debian tree as an installed system mounted for inspection (/proc and /sys empty): it was
    "NOT READY" with "/sys/kernel/kexec_crash_size does not exist: the kernel was built without kexec crash support"
    and crashkernel= BLOCKED by it, of a tree that holds no running kernel at all."""
    import shutil

    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])
    for pseudo in ("proc", "sys"):
        shutil.rmtree(root / pseudo)
        (root / pseudo).mkdir()
    result = invoke("kdump", "check", "--root", str(root), "--format", "json")
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    kernel = {
        c["id"]: c for c in doc["checks"] if c["id"] in ("crashkernel-cmdline", "crash-reservation", "crash-loaded")
    }
    assert {c["status"] for c in kernel.values()} == {"unknown"}, kernel
    assert all("is empty (not a running system's, nor a copy of it)" in c["detail"] for c in kernel.values())
    assert not any("without kexec crash support" in c["detail"] for c in doc["checks"])
    text = invoke("kdump", "check", "--root", str(root)).stdout
    assert "NOT KNOWN TO BE READY: the kernel side and Room for the dump could not be read" in text
    # Nothing there was judged: no problem is counted, and what could not be judged is counted apart.
    assert "0 fail; 13 could not be judged (unknown); kernel side unknown" in text, text
    assert not [f for f in doc["incident"]["findings"] if f["severity"] in ("medium", "high", "critical")]


def test_fail_on_makes_warnings_count(tmp_path: Path) -> None:
    """A warning is at most low (a gap in the next crash's dump, no harm yet: review ue24 F2), so --fail-on low makes
    it count; medium, which did until then, no longer does: no readiness finding reaches it."""
    root = build(tmp_path / "root", SCENARIOS["fedora41-zstd"])
    assert invoke("kdump", "check", "--root", str(root)).returncode == 0
    assert invoke("kdump", "check", "--root", str(root), "--fail-on", "low").returncode == 1
    assert invoke("kdump", "check", "--root", str(root), "--fail-on", "medium").returncode == 0


def test_check_json_embeds_an_incident_that_report_merges(tmp_path: Path) -> None:
    root = build(tmp_path / "root", SCENARIOS["ubuntu2404-lzo"])
    out = tmp_path / "kdump.json"
    result = invoke("kdump", "check", "--root", str(root), "--format", "json", "-o", str(out))
    assert result.returncode == 0, _holding_back(json.loads(out.read_text())) if out.exists() else result.stderr
    doc = json.loads(out.read_text())
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert doc["schema"] == "kforensic.kdump-check/1"
    assert doc["ready"] is True
    assert doc["kernel_ready"] is True
    assert doc["crashkernel"]["recommended"] == "512M"
    assert doc["distro"] == {"id": "ubuntu", "version_id": "24.04", "name": "Ubuntu 24.04.1 LTS", "family": "debian"}
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert statuses["crash-loaded"] == "pass"
    assert doc["incident"]["schema"] == "kforensic.incident/1"
    assert doc["incident"]["host"] == "ubuntu2404-host"
    assert doc["incident"]["kernel_release"] == "6.8.0-45-generic"
    merged = tmp_path / "merged.json"
    result = invoke("report", "--from", str(out), "--format", "json", "-o", str(merged))
    assert result.returncode == 0, result.stderr
    titles = {f["title"] for f in json.loads(merged.read_text())["findings"]}
    assert "kdump: no kernel debug info for the running kernel" in titles


def test_check_markdown(tmp_path: Path) -> None:
    root = build(tmp_path / "root", SCENARIOS["rhel9-malformed-conf"])
    result = invoke("kdump", "check", "--root", str(root), "--format", "md")
    assert result.returncode == 1
    assert "- **FAIL** kdump configuration: /etc/kdump.conf line 11: unknown directive 'core_colector'" in result.stdout


@pytest.mark.parametrize(
    ("scenario", "expected_line"),
    [
        (
            "debian12-unreadable-config",
            "[UNKNOWN] Could not read /etc/default/kdump-tools: unknown (Is a directory (EISDIR))",
        ),
        ("rhel9-malformed-conf", "[FAIL] kdump configuration: /etc/kdump.conf line 12: directive 'ext4' needs a value"),
        ("debian12-no-systemd", "[UNKNOWN] kdump service enabled at boot: unknown (no systemd, no kdump init script"),
        ("rhel9-no-kexec-kernel", "[BLOCKED] Crash kernel loaded: /sys/kernel/kexec_crash_loaded does not exist"),
    ],
)
def test_bad_input_gives_clear_lines_not_tracebacks(tmp_path: Path, scenario: str, expected_line: str) -> None:
    root = build(tmp_path / "root", SCENARIOS[scenario])
    result = invoke("kdump", "check", "--root", str(root))
    assert result.returncode in (0, 1)
    assert "Traceback" not in result.stderr
    assert result.stderr == ""
    assert expected_line in result.stdout


def test_missing_root_exits_3(tmp_path: Path) -> None:
    result = run("kdump", "check", "--root", str(tmp_path / "absent"))
    assert result.returncode == 3
    assert "not a directory" in _one_clear_error(result)


@pytest.mark.parametrize("command", ["check", "setup"])
def test_a_root_with_nothing_to_read_is_refused_in_one_line(tmp_path: Path, command: str) -> None:
    """An empty --root (a mistyped path) printed a 19-line report of unknowns, recommended crashkernel=64M from no
    value read, and its JSON had no finding and nothing examined (review ue15 #6): now one line, exit 3."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "home").mkdir()  # a directory kdump reads nothing under
    result = run("kdump", command, "--root", str(tmp_path / "empty"))
    assert result.returncode == 3, result.stdout
    line = _one_clear_error(result)
    assert "not a system root: it has none of etc, usr, boot, proc, sys, var" in line, line
    assert result.stdout == ""


def test_a_partial_root_says_what_was_examined_and_recommends_no_size_from_nothing(tmp_path: Path) -> None:
    """A root of only /etc/os-release: what was read and what could not be judged reach the incident (``report
    --from`` said "Nothing recorded what was examined" and "no known kernel problem" of a check whose verdict was
    NOT KNOWN TO BE READY), and no crashkernel size is recommended (no RAM, kernel, initramfs or modules read)."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "os-release").write_text("ID=debian\nVERSION_ID=12\n")
    out = tmp_path / "kdump.json"
    assert invoke("kdump", "check", "--root", str(root), "-f", "json", "-o", str(out)).returncode == 1
    doc = json.loads(out.read_text())
    assert doc["crashkernel"]["recommended"] is None
    assert doc["crashkernel"]["recommended_bytes"] is None
    (examined,) = doc["incident"]["examined"]
    assert examined["what"].startswith(f"kdump check of the root {root}: 1 file(s) read, 19 checks")
    assert any(x.startswith("Crash kernel memory reserved: unknown (") for x in examined["could_not"])
    text = invoke("kdump", "check", "--root", str(root)).stdout
    assert "recommended crashkernel: unknown (nothing it rests on was read: kernel: " in text
    assert "64M" not in text
    report = tmp_path / "report.md"
    assert invoke("report", "--from", str(out), "-o", str(report)).returncode == 0
    said = report.read_text()
    assert "Nothing recorded what was examined" not in said
    assert "could not judge: Crash kernel memory reserved: unknown (" in said


def test_setup_prints_the_plan_and_changes_nothing(tmp_path: Path) -> None:
    root = build(tmp_path / "root", SCENARIOS["debian12-no-crashkernel"])
    before = tree_digest(tmp_path)
    result = invoke("kdump", "setup", "--root", str(root), "--policy", "hang-debug")
    assert result.returncode == 0, result.stderr
    assert '+GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT crashkernel=384M-:128M"' in result.stdout
    assert "update-grub" in result.stdout
    assert "Nothing was changed" in result.stdout
    assert tree_digest(tmp_path) == before


def test_setup_apply_then_again_is_idempotent(tmp_path: Path) -> None:
    # Loaded (by hand) although kdump-tools is off: the panic policy is planned only where a crash kernel is loaded.
    root = build(tmp_path / "root", replace(SCENARIOS["debian12-not-loaded"], loaded=1))
    first = invoke("kdump", "setup", "--root", str(root), "--policy", "oops", "--apply", "--format", "json")
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["schema"] == "kforensic.kdump-setup/1"
    assert doc["applied"] is True
    assert {c["path"] for c in doc["changes"]} == {"/etc/default/kdump-tools", "/etc/sysctl.d/90-kforensic-kdump.conf"}
    assert "USE_KDUMP=1\n" in (root / "etc/default/kdump-tools").read_text()
    backup = Path(next(c["backup"] for c in doc["changes"] if c["backup"]))
    assert "USE_KDUMP=0\n" in backup.read_text()
    assert stat.S_IMODE((root / "etc/sysctl.d/90-kforensic-kdump.conf").stat().st_mode) == 0o644
    assert {c["status"] for c in doc["commands"]} == {"to run on the target system"}
    after = tree_digest(tmp_path)
    second = invoke("kdump", "setup", "--root", str(root), "--policy", "oops", "--apply")
    assert second.returncode == 0, second.stderr
    assert "File " not in second.stdout
    assert tree_digest(tmp_path) == after


def test_setup_rejects_an_unknown_policy(tmp_path: Path) -> None:
    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])
    result = run("kdump", "setup", "--root", str(root), "--policy", "panic-always")
    assert result.returncode == 2
    assert "unknown policy 'panic-always'" in _one_clear_error(result)


@pytest.fixture
def read_only_root(tmp_path: Path) -> Iterator[Path]:
    """A fake tree on a tmpfs remounted read-only (needs root and mount rights)."""
    mount = tmp_path / "ro"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], check=False)
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        build(mount / "root", SCENARIOS["debian12-no-crashkernel"])
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        yield mount / "root"
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_setup_apply_on_a_read_only_root(read_only_root: Path) -> None:
    before = tree_digest(read_only_root)
    result = run("kdump", "setup", "--root", str(read_only_root), "--apply")
    assert result.returncode == 3
    message = _one_clear_error(result)
    assert "read-only file system" in message
    assert "zz-kforensic-kdump.cfg" in message
    assert tree_digest(read_only_root) == before
    # Without --apply the plan is still shown.
    assert run("kdump", "setup", "--root", str(read_only_root)).returncode == 0


def test_kdump_test_refuses_without_the_flag() -> None:
    result = run("kdump", "test")
    assert result.returncode == 2
    assert "--yes-crash-this-machine" in _one_clear_error(result)


@pytest.mark.live
def test_kdump_test_refuses_when_the_check_fails() -> None:
    """On a machine where kdump is not ready the guarded crash must refuse (it never crashes here)."""
    check = run("kdump", "check")
    if check.returncode == 0:
        pytest.skip("kdump is ready on this machine: the refusal cannot be shown without crashing it")
    result = run("kdump", "test", "--yes-crash-this-machine")
    assert result.returncode == 1
    assert result.stderr.startswith("kforensic: refusing to crash: kdump check does not pass:")
    assert "Traceback" not in result.stderr


@pytest.mark.live
def test_check_on_this_machine() -> None:
    result = run("kdump", "check", "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    assert doc["root"] == "/"
    assert (result.returncode == 0) is doc["ready"]


def test_report_of_a_kdump_check_counts_root_causes_and_titles_say_the_fault(tmp_path: Path) -> None:
    """A kernel without kexec and no kdump tooling: ``report --from`` a check counted every blocked info line as a
    problem ("16 problem(s)" on a healthy machine, review ue15 #4) and titled the failures by the check's name
    ("high: kdump: Crash kernel memory reserved", read as a success).  Now the problems are the failures at medium
    or above, the blocked lines are said to follow from them, linked to their root, and titles name the fault."""
    system = replace(SCENARIOS["debian12-no-tooling"], crash_size=None, loaded=None)
    root = build(tmp_path / "root", system)
    check = tmp_path / "kdump.json"
    assert invoke("kdump", "check", "--root", str(root), "-f", "json", "-o", str(check)).returncode == 1
    doc = json.loads(check.read_text())
    blocked = [c for c in doc["checks"] if c["status"] == "blocked"]
    assert len(blocked) >= 3, [c["id"] for c in doc["checks"]]
    incident = doc["incident"]
    by_check = {next(x["value"] for x in f["facts"] if x["name"] == "check"): f for f in incident["findings"]}
    # The root is named by the deepest fault, the one its blocked lines give (it was "no crash kernel memory
    # reserved", which reads as a crashkernel= problem, above lines "blocked (the kernel has no kexec crash support)").
    assert by_check["crash-reservation"]["title"] == "kdump: the kernel has no kexec crash support"
    assert by_check["kdump-tooling"]["title"] == "kdump: kdump tooling not installed"
    loaded = by_check["crash-loaded"]
    assert loaded["severity"] == "info"
    assert loaded["consequence_of"]["id"] == by_check["crash-reservation"]["id"]
    assert loaded["title"] == "kdump: Crash kernel loaded: blocked (the kernel has no kexec crash support)"
    # Its baseline names the root by its fault too (it said "Crash kernel memory reserved (high)"), at the root's
    # severity: low since review ue24 F2 (a readiness gap is harm still to come: docs/severity.md).
    assert loaded["baseline"]["value"] == "kdump: the kernel has no kexec crash support (low)", loaded["baseline"]
    assert loaded["consequence_of"]["title"] == by_check["crash-reservation"]["title"]
    for finding in incident["findings"]:
        if finding.get("consequence_of") and finding["consequence_of"]["id"] == by_check["crash-reservation"]["id"]:
            assert finding["title"].endswith(": blocked (the kernel has no kexec crash support)"), finding["title"]
    # No readiness finding is a problem (review ue24 F2: "Kforensic found 3 problem(s)", 2 of them high): a report
    # of the check alone says the machine's readiness, the failing checks named, the blocked ones counted.
    assert not [f for f in incident["findings"] if f["severity"] in ("medium", "high", "critical")]
    blocked_count = sum(1 for f in incident["findings"] if f.get("consequence_of"))
    out = tmp_path / "report.md"
    assert invoke("report", "--from", str(check), "-o", str(out)).returncode == 0
    verdict = out.read_text().splitlines()[2]
    assert verdict.startswith("On debian12-host, kdump is not ready: 2 check(s) fail ("), verdict
    assert "kdump tooling not installed" in verdict and "the kernel has no kexec crash support" in verdict, verdict
    assert f"{blocked_count} blocked by them" in verdict, verdict
    assert "problem(s)" not in verdict and "had a problem" not in verdict, verdict


def test_report_of_a_healthy_log_and_a_failing_kdump_check_counts_no_problem(tmp_path: Path) -> None:
    """Review ue24 F2: the healthy machine's log beside its kdump check (kernel without kexec, no kdump-tools) listed
    2 high and 1 medium readiness findings above the log's, without a baseline.  Now nothing is at medium or above,
    no problem is counted, and the verdict says the readiness in one sentence after the incident's."""
    healthy = Path(__file__).resolve().parents[2] / "data" / "healthy" / "dmesg.txt.gz"
    root = build(tmp_path / "root", SCENARIOS["debian12-direct-boot"])
    (root / "proc/sys/kernel/osrelease").write_text("6.18.44-fc-v1252\n")  # the healthy log's kernel: one machine
    check = tmp_path / "kdump.json"
    assert invoke("kdump", "check", "--root", str(root), "-f", "json", "-o", str(check)).returncode == 1
    out, doc = tmp_path / "report.md", tmp_path / "report.json"
    result = invoke("report", "--dmesg", str(healthy), "--from", str(check), "-o", str(out), "--json", str(doc))
    assert result.returncode == 0, result.stdout
    report = json.loads(doc.read_text())
    findings = report["incident"]["findings"]
    assert any(f["kind"] == "kdump-readiness" for f in findings), findings
    assert not [f["title"] for f in findings if f["severity"] in ("medium", "high", "critical")]
    assert report["incident"]["problems"] == 0, report["incident"]["problems"]
    verdict = out.read_text().split("\n\n")[1]
    assert "problem(s)" not in verdict and "had a problem" not in verdict, verdict
    assert verdict.startswith("kforensic found no"), verdict
    readiness = "Readiness: kdump is not ready: 2 check(s) fail ("
    assert readiness in verdict and report["readiness"].startswith(readiness), (verdict, report["readiness"])
    # The readiness gaps are told apart: not "low finding(s) to watch" of the incident, nor counted below medium.
    assert "to watch: kdump" not in verdict, verdict
