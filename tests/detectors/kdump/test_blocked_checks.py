"""One root cause is one high finding; the checks it makes impossible are listed under it as blocked.

This machine (6.18.44, no CONFIG_CRASH_DUMP, no kdump-tools) had six high
findings: the reservation, the loaded crash kernel and crashkernel= (all the
missing kernel feature), the tooling, its configuration and its service (all
the missing package).  Two things must be fixed, so two are high.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.findings import checklist_findings
from forensics.model import Severity
from forensics.types.kdump import Status
from tests.collectors.kdump.roots import SCENARIOS, FakeSystem, build
from tests.forensics.commands.test_kdump_cli import invoke
from tests.helpers import assert_evidence_resolves

#: This machine's shape: a kernel without kexec crash support, no crashkernel=, no kdump tooling.
THIS_MACHINE = replace(
    SCENARIOS["debian12-no-tooling"], cmdline_crashkernel=None, crash_size=None, loaded=None, service_enabled=False
)
KERNEL = "the kernel has no kexec crash support"
#: The panic sysctls THIS_MACHINE leaves off (roots.DEFAULT_SYSCTLS).
PANIC_OFF = ("hung_task_panic", "softlockup_panic", "hardlockup_panic", "panic_on_rcu_stall")
TOOLING = "the kdump tooling is not installed"


def _check(tmp_path: Path, system: FakeSystem) -> tuple[Path, dict[str, Status], dict[str, str]]:
    root = build(tmp_path / "root", system)
    state = collect_kdump_state(root, system.statvfs)
    checklist = run_checklist(state)
    findings = checklist_findings(checklist, state)
    assert_evidence_resolves(findings)
    # The root causes are the failing checks (high until review ue24 F2; low since: a readiness gap is no harm yet).
    high = {f.facts[1].value for f in findings if f.fact("status") == "fail"}
    assert all(f.severity is Severity.LOW for f in findings if f.fact("status") == "fail")
    blocked = {line.id: line.blocked_by.reason for line in checklist.lines if line.blocked_by is not None}
    # Every blocked line is still a finding, at info, citing its evidence and naming its cause.
    for finding in findings:
        check = finding.facts[1].value
        if check in blocked:
            assert finding.severity is Severity.INFO and finding.summary.startswith(f"Blocked by: {blocked[check]}")
            assert finding.baseline is not None and "(low)" in finding.baseline.value  # the root's severity
    assert {f.facts[1].value for f in findings} >= set(blocked)
    assert not checklist.ready  # the causes still fail: kdump cannot work
    return root, {line.id: line.status for line in checklist.lines}, {"high": ",".join(sorted(high)), **blocked}


def test_this_machine_has_two_high_findings_and_their_consequences(tmp_path: Path) -> None:
    root, status, seen = _check(tmp_path, THIS_MACHINE)
    assert seen["high"] == "crash-reservation,kdump-tooling"
    assert {k: v for k, v in seen.items() if k != "high"} == {
        "crashkernel-cmdline": KERNEL,
        # The boot configuration's crashkernel= reserves nothing on this kernel either: not a WARN of its own.
        "crashkernel-boot": KERNEL,
        "crash-loaded": KERNEL,
        "kdump-config": TOOLING,
        "kdump-service": TOOLING,
        "makedumpfile": TOOLING,
        "dump-space": TOOLING,
        # The panic sysctls that warned "set it": set on this kernel, an oops or a hang reboots with no dump.
        **{f"sysctl:kernel.{name}": KERNEL for name in PANIC_OFF},
    }
    assert status["crash-reservation"] is Status.FAIL and status["kdump-tooling"] is Status.FAIL
    # --fail-on keeps its meaning: exit 1 while kdump cannot work, whatever the threshold.
    for flags in ((), ("--fail-on", "high"), ("--fail-on", "critical")):
        result = invoke("kdump", "check", "--root", str(root), *flags)
        assert result.returncode == 1, (flags, result.stdout)
    text = invoke("kdump", "check", "--root", str(root)).stdout
    assert "[BLOCKED] Crash kernel loaded: /sys/kernel/kexec_crash_loaded does not exist" in text
    assert f"       blocked by: {KERNEL} (Crash kernel memory reserved)" in text
    assert "2 fail" in text and "11 blocked" in text  # kernel.sysrq is a fault of its own (a warn)
    # Its fix names the kernel first: "add crashkernel= ... then reboot" alone cannot work on this kernel.
    boot = text.split("[BLOCKED] crashkernel= in the boot configuration:")[1].split("\n[")[0]
    assert "fix: boot a distribution kernel, or one built with CONFIG_KEXEC" in boot, boot


CRASHKERNEL = "the running kernel was booted without a crashkernel= that reserves memory"


def test_a_kernel_with_crash_support_blames_the_missing_crashkernel(tmp_path: Path) -> None:
    """Same system on a capable kernel: no crashkernel= is the cause; nothing reserved and nothing loaded follow."""
    _root, status, seen = _check(tmp_path, replace(THIS_MACHINE, crash_size=0, loaded=0))
    assert KERNEL not in seen.values()
    assert status["crashkernel-cmdline"] is Status.FAIL
    assert seen["high"] == "crashkernel-cmdline,kdump-tooling"
    assert seen["crash-reservation"] == CRASHKERNEL and seen["crash-loaded"] == CRASHKERNEL


def test_no_crashkernel_is_one_high_finding(tmp_path: Path) -> None:
    """Everything installed, the kernel booted without crashkernel=: one thing to fix (then reboot), not three."""
    root, status, seen = _check(tmp_path, SCENARIOS["debian12-no-crashkernel"])
    assert seen["high"] == "crashkernel-cmdline"
    assert status["crash-reservation"] is Status.BLOCKED and status["crash-loaded"] is Status.BLOCKED
    text = invoke("kdump", "check", "--root", str(root)).stdout
    assert f"       blocked by: {CRASHKERNEL} (crashkernel= on the kernel command line)" in text


def test_a_crashkernel_given_but_not_reserved_is_its_own_fault(tmp_path: Path) -> None:
    """crashkernel= on the command line and nothing reserved (too large for low memory): the reservation is the
    cause, and nothing can be loaded into it."""
    system = replace(SCENARIOS["debian12-no-crashkernel"], cmdline_crashkernel="512M")
    _root, status, seen = _check(tmp_path, system)
    assert status["crashkernel-cmdline"] is Status.PASS and status["crash-reservation"] is Status.FAIL
    assert seen["high"] == "crash-reservation"
    nothing = "no memory is reserved for a crash kernel"
    assert seen == {
        "high": "crash-reservation",
        "crash-loaded": nothing,
        **{f"sysctl:kernel.{name}": nothing for name in PANIC_OFF},
    }


def test_a_reservation_with_nothing_loaded_is_its_own_fault(tmp_path: Path) -> None:
    """Memory reserved, nothing loaded (the service did not run): the loaded check fails on its own."""
    _root, status, seen = _check(tmp_path, SCENARIOS["debian12-not-loaded"])
    assert status["crash-loaded"] is Status.FAIL and "crash-loaded" not in seen


def test_a_broken_configuration_is_not_blamed_on_missing_tooling(tmp_path: Path) -> None:
    """Tooling missing but the configuration present and wrong: the configuration is a fault of its own."""
    system = replace(SCENARIOS["rhel9-malformed-conf"], tooling=False)
    _root, status, seen = _check(tmp_path, system)
    assert any(k.startswith("kdump-config:") and v is Status.FAIL for k, v in status.items()), status
    assert not any(k.startswith("kdump-config") for k in seen), seen


POLICY_FILE = "/etc/sysctl.d/90-kforensic-kdump.conf"


def test_the_panic_policy_waits_for_a_crash_kernel_that_can_load(tmp_path: Path) -> None:
    """On this machine's kernel (no kexec) --policy oops planned panic_on_oops=1 and `sysctl -p`: an oops the system
    survives became a reboot with no dump.  The policy is held back with its cause and what to fix first."""
    root, status, _seen = _check(tmp_path, THIS_MACHINE)
    assert status["sysctl:kernel.hung_task_panic"] is Status.BLOCKED
    result = invoke("kdump", "setup", "--root", str(root), "--policy", "oops", "--apply", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert POLICY_FILE not in {c["path"] for c in doc["changes"]}
    assert not any(c["argv"][0] == "sysctl" for c in doc["commands"])
    assert not (root / POLICY_FILE.lstrip("/")).exists()
    (held,) = doc["held_back"]
    assert held.startswith("the sysctl policy oops (kernel.panic_on_oops = 1, kernel.panic = 10): " + KERNEL)
    assert "first: boot a distribution kernel, or one built with CONFIG_KEXEC" in held
    text = invoke("kdump", "check", "--root", str(root)).stdout
    assert (
        f"[BLOCKED] sysctl kernel.hung_task_panic: 0\n       blocked by: {KERNEL} (Crash kernel memory reserved)"
        in text
    )
    assert not [ln for ln in text.splitlines() if ln.startswith("[WARN] sysctl") and "kernel.sysrq" not in ln]


SYSRQ = "/proc/sys/kernel/sysrq"


def test_sysrq_says_its_own_fault_beside_a_blocked_capture(tmp_path: Path) -> None:
    """kernel.sysrq = 438 (Debian's default: no bit 8, the crash key c) on a kernel without kexec, and with nothing
    loaded: it was "[BLOCKED] sysctl kernel.sysrq: 438", an info finding titled by the kernel's fault, so that the
    mask's own fault (SysRq-c cannot force a dump, whatever kernel is booted next) was not said.  It is a root cause
    of its own: its status, value and evidence are its own, its fix says the dump waits for the capture's cause."""
    for name, system, cause in (
        ("kernel", THIS_MACHINE, KERNEL),
        ("loaded", SCENARIOS["debian12-not-loaded"], "no crash kernel is loaded"),
    ):
        root = build(tmp_path / name / "root", system)
        state = collect_kdump_state(root, system.statvfs)
        checklist = run_checklist(state)
        line = next(x for x in checklist.lines if x.id == "sysctl:kernel.sysrq")
        assert line.status is Status.WARN and line.blocked_by is None, (name, line)
        assert line.detail == "438: the mask 438 (0x1b6) leaves out 8, which allows the crash key c", line.detail
        assert [(e.source, e.locator.start, e.excerpt) for e in line.evidence] == [(str(root) + SYSRQ, 1, "438")]
        assert line.fix.startswith("sysctl kernel.sysrq=1, or a mask including 8; "), line.fix
        assert f"a forced crash is dumped only once a crash kernel can be loaded ({cause}: see " in line.fix
        finding = next(f for f in checklist_findings(checklist, state) if f.facts[1].value == line.id)
        assert finding.title == "kdump: SysRq-c cannot force a crash dump" and finding.severity is Severity.LOW
        assert finding.consequence_of is None
        # The panic settings still follow from the cause, grouped under it.
        assert next(x for x in checklist.lines if x.id == "sysctl:kernel.hung_task_panic").blocked_by is not None


def test_a_crash_kernel_not_loaded_holds_the_policy_back_too(tmp_path: Path) -> None:
    """Reserved but nothing loaded: a panic now starts nothing either; the cause is the loaded check itself."""
    root, _status, seen = _check(tmp_path, SCENARIOS["debian12-not-loaded"])
    assert seen["sysctl:kernel.softlockup_panic"] == "no crash kernel is loaded"
    doc = json.loads(invoke("kdump", "setup", "--root", str(root), "--policy", "hang-debug", "--format", "json").stdout)
    assert POLICY_FILE not in {c["path"] for c in doc["changes"]}
    assert "first: kdump-config load" in doc["held_back"][0]


def test_the_panic_policy_is_planned_where_a_crash_kernel_is_loaded(tmp_path: Path) -> None:
    root = build(tmp_path / "root", SCENARIOS["debian12-ready"])
    doc = json.loads(invoke("kdump", "setup", "--root", str(root), "--policy", "oops", "--format", "json").stdout)
    assert POLICY_FILE in {c["path"] for c in doc["changes"]}
    assert doc["held_back"] == []
