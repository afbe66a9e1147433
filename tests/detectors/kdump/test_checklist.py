"""The checklist and the setup plan on the fake root scenarios: verdicts, line statuses, evidence."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from collectors.kdump.state import collect_kdump_state
from detectors.kdump.checklist import run_checklist
from detectors.kdump.findings import checklist_findings
from detectors.kdump.kernel_rules import required_options_text
from detectors.kdump.plan import make_plan
from detectors.kdump.sysctl_rules import POLICIES, policy_named
from forensics.model import Severity
from forensics.types.kdump import CheckLine, Checklist, KdumpState, Status
from tests.collectors.kdump.roots import RELEASE, SCENARIOS, FakeSystem, build, kernel_config
from tests.helpers import assert_evidence_resolves

#: scenario -> (ready, kernel side ready, {line id: status} that must hold)
EXPECTED: dict[str, tuple[bool, bool, dict[str, Status]]] = {
    "debian12-ready": (True, True, {"crashkernel-cmdline": Status.PASS, "crash-loaded": Status.PASS}),
    "debian12-no-crashkernel": (
        False,
        False,
        {"crashkernel-cmdline": Status.FAIL, "crash-reservation": Status.BLOCKED, "crashkernel-boot": Status.WARN},
    ),
    "debian12-not-loaded": (
        False,
        False,
        {"crash-loaded": Status.FAIL, "kdump-enabled": Status.FAIL, "kdump-service": Status.FAIL},
    ),
    "debian12-no-tooling": (False, False, {"kdump-tooling": Status.FAIL, "kdump-config": Status.BLOCKED}),
    "debian12-direct-boot": (
        False,
        False,
        {"crash-reservation": Status.FAIL, "crashkernel-cmdline": Status.BLOCKED, "crashkernel-boot": Status.BLOCKED},
    ),
    "debian12-unreadable-config": (
        False,
        True,
        {"kdump-config": Status.FAIL, "unreadable:/etc/default/kdump-tools": Status.UNKNOWN},
    ),
    # No systemd, no kdump init script nor start link: whether kdump starts at boot was not read (was a WARN, READY).
    "debian12-no-systemd": (False, True, {"kdump-service": Status.UNKNOWN}),
    "ubuntu2404-lzo": (True, True, {"makedumpfile": Status.PASS, "debuginfo": Status.WARN}),
    "ubuntu2404-full-disk": (False, True, {"dump-space": Status.FAIL}),
    "ubuntu2404-small-reservation": (True, True, {"crash-reservation": Status.WARN}),
    "ubuntu2404-no-crashkernel": (False, False, {"crashkernel-cmdline": Status.FAIL, "crashkernel-boot": Status.WARN}),
    "fedora41-not-loaded": (False, False, {"crash-loaded": Status.FAIL, "kdump-service": Status.FAIL}),
    "rhel9-ready": (True, True, {"crashkernel-boot": Status.PASS, "kdump-service": Status.PASS}),
    "rhel9-no-crashkernel": (False, False, {"crashkernel-cmdline": Status.FAIL, "kdump-service": Status.FAIL}),
    "rhel9-malformed-conf": (
        False,
        False,
        {
            "kdump-config:unknown directive 'core_colector'": Status.FAIL,
            "kdump-config:directive 'ext4' needs a value": Status.FAIL,
        },
    ),
    "rhel9-no-kexec-kernel": (False, False, {"crash-reservation": Status.FAIL, "crash-loaded": Status.BLOCKED}),
    "fedora41-zstd": (True, True, {"makedumpfile": Status.WARN}),
    "fedora41-dump-level-0": (True, True, {"makedumpfile": Status.WARN}),
    "unknown-distro": (False, False, {"distro": Status.WARN, "kdump-tooling": Status.FAIL}),
}


def _run(tmp_path: Path, scenario: str) -> tuple[KdumpState, Checklist]:
    system = SCENARIOS[scenario]
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    return state, run_checklist(state)


def test_every_scenario_has_expectations() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_verdict_and_lines(tmp_path: Path, scenario: str) -> None:
    _state, checklist = _run(tmp_path, scenario)
    ready, kernel_ready, statuses = EXPECTED[scenario]
    assert checklist.ready is ready
    assert checklist.kernel_ready is kernel_ready
    by_id: dict[str, list[Status]] = {}
    for line in checklist.lines:
        by_id.setdefault(line.id, []).append(line.status)
    for line_id, status in statuses.items():
        assert status in by_id.get(line_id, []), f"{line_id}: {by_id.get(line_id)}"
    # Every line says why it matters; a line that is not a pass also says what to do.
    for line in checklist.lines:
        assert line.why, line
        if line.status is not Status.PASS:
            assert line.fix, line


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_findings_cite_real_lines(tmp_path: Path, scenario: str) -> None:
    state, checklist = _run(tmp_path, scenario)
    findings = checklist_findings(checklist, state)
    assert_evidence_resolves(findings)
    failing = sum(1 for line in checklist.lines if line.status is Status.FAIL)
    # One finding per failing check, low: the next crash's dump would be lost, no harm yet (high until ue24 F2).
    assert sum(1 for f in findings if f.fact("status") == "fail" and f.severity is Severity.LOW) == failing
    assert len({f.id for f in findings}) == len(findings)


def test_finding_ids_are_stable_across_roots(tmp_path: Path) -> None:
    state_a, list_a = _run(tmp_path / "a", "debian12-no-crashkernel")
    state_b, list_b = _run(tmp_path / "b", "debian12-no-crashkernel")
    ids_a = [f.id for f in checklist_findings(list_a, state_a)]
    assert ids_a == [f.id for f in checklist_findings(list_b, state_b)]


def test_cmdline_evidence_quotes_the_parameter(tmp_path: Path) -> None:
    _, checklist = _run(tmp_path, "ubuntu2404-lzo")
    line = next(x for x in checklist.lines if x.id == "crashkernel-cmdline")
    assert line.evidence[0].excerpt == "crashkernel=2G-4G:320M,4G-32G:512M,32G-64G:1024M,64G-128G:2048M,128G-:4096M"
    assert "512 MiB" in line.detail


def test_full_disk_line_names_sizes(tmp_path: Path) -> None:
    _, checklist = _run(tmp_path, "ubuntu2404-full-disk")
    line = next(x for x in checklist.lines if x.id == "dump-space")
    assert line.detail.startswith("300 MiB free")
    assert "KDUMP_COREDIR" in line.fix


def test_estimate_uses_the_distro_floor(tmp_path: Path) -> None:
    _, checklist = _run(tmp_path, "ubuntu2404-lzo")
    estimate = checklist.estimate
    assert estimate.floor == 512 << 20  # 16 GiB machine: the 4G-32G:512M range of Ubuntu's default
    assert estimate.recommended == 512 << 20
    assert estimate.kernel == 30 << 20  # the bzImage's init_size
    assert estimate.complete


def test_plan_fixes_what_fails(tmp_path: Path) -> None:
    state, checklist = _run(tmp_path, "rhel9-malformed-conf")
    plan = make_plan(state, checklist, policy_named("none"))
    (change,) = plan.changes
    assert change.path == "/etc/kdump.conf"
    assert "-core_colector makedumpfile -c -d 31" in change.diff()
    assert "+#kforensic-disabled# core_colector makedumpfile -c -d 31" in change.diff()
    assert ("systemctl", "restart", "kdump.service") in [c.argv for c in plan.commands]
    assert not plan.reboot_needed


def test_plan_keeps_compression_when_fixing_the_dump_level(tmp_path: Path) -> None:
    state, checklist = _run(tmp_path, "fedora41-dump-level-0")
    plan = make_plan(state, checklist, policy_named("none"))
    assert "+core_collector makedumpfile -l --message-level 7 -d 31" in plan.changes[0].diff()


def test_plan_for_rhel_without_crashkernel_uses_grubby(tmp_path: Path) -> None:
    state, checklist = _run(tmp_path, "rhel9-no-crashkernel")
    plan = make_plan(state, checklist, policy_named("none"))
    argv = ("grubby", "--update-kernel=ALL", "--args=crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M")
    assert argv in [c.argv for c in plan.commands]
    assert ("systemctl", "enable", "kdump.service") in [c.argv for c in plan.commands]
    assert plan.reboot_needed


def test_plan_installs_the_tooling(tmp_path: Path) -> None:
    state, checklist = _run(tmp_path, "debian12-no-tooling")
    plan = make_plan(state, checklist, policy_named("none"))
    assert plan.packages == ("kdump-tools", "makedumpfile")
    assert plan.install is not None
    assert plan.install.argv[-3:] == ("-y", "kdump-tools", "makedumpfile")


def test_ready_system_needs_nothing_without_a_policy(tmp_path: Path) -> None:
    state, checklist = _run(tmp_path, "debian12-ready")
    assert make_plan(state, checklist, policy_named("none")).empty


@pytest.mark.parametrize("policy", [p.name for p in POLICIES if p.settings])
def test_policy_snippet_lists_its_sysctls(tmp_path: Path, policy: str) -> None:
    state, checklist = _run(tmp_path / policy, "debian12-ready")
    preset = policy_named(policy)
    (change,) = make_plan(state, checklist, preset).changes
    assert change.path == "/etc/sysctl.d/90-kforensic-kdump.conf"
    for name, value in preset.settings:
        assert f"{name} = {value}\n" in change.new


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="hang-debug"):
        policy_named("crash-often")


@pytest.mark.parametrize(
    ("scenario", "fixed"),
    [
        ("rhel9-malformed-conf", "kdump-config"),
        ("fedora41-dump-level-0", "makedumpfile"),
        ("debian12-not-loaded", "kdump-config"),  # USE_KDUMP=1: the config line passes, no kdump-enabled line
        ("debian12-no-crashkernel", "crashkernel-boot"),
    ],
)
def test_applied_plan_makes_its_lines_pass(tmp_path: Path, scenario: str, fixed: str) -> None:
    from forensics.pipelines.kdump import run_setup

    system = SCENARIOS[scenario]
    root = build(tmp_path / "root", system)
    run_setup(root, policy_named("hang-debug"), apply=True, statvfs=system.statvfs)
    checklist = run_checklist(collect_kdump_state(root, system.statvfs))
    statuses = [line.status for line in checklist.lines if line.id.split(":")[0] == fixed]
    assert statuses == [Status.PASS], [line for line in checklist.lines if line.id.startswith(fixed)]


def test_missing_use_kdump_fails_and_is_planned(tmp_path: Path) -> None:
    from dataclasses import replace

    from tests.collectors.kdump.roots import DEBIAN_CONFIG

    config = DEBIAN_CONFIG.format(use=1, args="-c -d 31").replace("USE_KDUMP=1\n", "")
    system = replace(SCENARIOS["debian12-ready"], config=config)
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    checklist = run_checklist(state)
    assert not checklist.ready
    assert [line.status for line in checklist.lines if line.id == "kdump-enabled"] == [Status.FAIL]
    (change,) = make_plan(state, checklist, policy_named("none")).changes
    assert change.new.endswith("USE_KDUMP=1\n")


@pytest.mark.live
def test_this_machine_findings_cite_real_lines() -> None:
    """The real /proc and /sys of the test machine: every warn/fail finding quotes a line read."""
    state = collect_kdump_state(Path("/"))
    checklist = run_checklist(state)
    findings = checklist_findings(checklist, state)
    if not findings:
        pytest.skip("kdump is fully set up on this machine: nothing to cite")
    assert_evidence_resolves(findings)
    # The verdict is said with its reasons: not READY exactly when some line holds it back (the refusal of
    # kdump test lists them), each a failure or a line not read.  (It restated ``ready``'s own expression.)
    held = checklist.holding_back()
    assert checklist.ready == (not held)
    assert all(line.status in (Status.FAIL, Status.UNKNOWN) for line in held)


@pytest.mark.parametrize(("free_mib", "status"), [(300, Status.FAIL), (2500, Status.WARN), (5000, Status.PASS)])
def test_free_space_thresholds_account_for_compression(tmp_path: Path, free_mib: int, status: Status) -> None:
    from dataclasses import replace

    system = replace(SCENARIOS["ubuntu2404-lzo"], free_bytes=free_mib << 20)  # expected dump up to 3644 MiB
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    (line,) = [x for x in run_checklist(state).lines if x.id == "dump-space"]
    assert line.status is status, line.detail


def test_plan_writes_a_fixed_size_above_the_distro_default(tmp_path: Path) -> None:
    from dataclasses import replace

    system = replace(SCENARIOS["debian12-no-crashkernel"], initrd_bytes=200 << 20)
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    checklist = run_checklist(state)
    assert checklist.estimate.recommended == 304 << 20  # 30 + 200 + 2 + 64 MiB, rounded up to 16 MiB
    (change,) = make_plan(state, checklist, policy_named("none")).changes
    assert change.new.endswith('GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT crashkernel=304M"\n')


def test_a_low_companion_does_not_hide_the_main_reservation(tmp_path: Path) -> None:
    from dataclasses import replace

    system = replace(SCENARIOS["rhel9-ready"], cmdline_crashkernel="512M,high crashkernel=72M,low")
    state = collect_kdump_state(build(tmp_path / "root", system), system.statvfs)
    (line,) = [x for x in run_checklist(state).lines if x.id == "crashkernel-cmdline"]
    assert line.status is Status.PASS
    assert line.detail.startswith("crashkernel=512M,high (512 MiB")
    assert line.evidence[0].excerpt == "crashkernel=512M,high"


def test_a_kernel_without_crash_support_is_fixed_by_another_kernel_first(tmp_path: Path) -> None:
    """No /sys/kernel/kexec_crash_size: no service restart loads a crash kernel, and crashkernel= alone reserves none.

    This machine's kernel (6.18.44, no CONFIG_CRASH_DUMP) was told "fix: kdump-config load" for the crash kernel
    not loaded, and "kdump setup --apply, then reboot" for the missing crashkernel=, into the same kernel.
    """
    from dataclasses import replace

    kernel = f"boot a distribution kernel, or one built with {required_options_text()}"
    for name in ("rhel9-no-kexec-kernel", "debian12-no-crashkernel"):
        system = replace(SCENARIOS[name], crash_size=None, loaded=None)
        lines = {line.id: line for line in run_checklist(collect_kdump_state(build(tmp_path / name, system))).lines}
        for line_id in ("crash-reservation", "crash-loaded"):
            assert lines[line_id].fix.startswith(kernel), lines[line_id]
        assert lines["crash-reservation"].status is Status.FAIL
        assert lines["crash-loaded"].status is Status.BLOCKED  # a consequence of the reservation's cause
        cmdline = lines["crashkernel-cmdline"]
        assert cmdline.status is Status.PASS or cmdline.fix.startswith(f"{kernel}; then kforensic kdump setup"), cmdline
    with_kexec = {line.id: line for line in _run(tmp_path / "ready", "debian12-not-loaded")[1].lines}
    assert with_kexec["crash-loaded"].fix.startswith("kdump-config load")  # a capable kernel: load it


def test_a_kernel_without_crash_support_is_shown_by_its_build_configuration(tmp_path: Path) -> None:
    """The absent /sys/kernel/kexec_crash_size was the only ground of "built without kexec crash support", though
    this machine's /proc/config.gz says "# CONFIG_KEXEC is not set" (review 5, #12): the configuration is cited."""
    from dataclasses import replace

    def lines(name: str, system: FakeSystem) -> dict[str, CheckLine]:
        state = collect_kdump_state(build(tmp_path / name, system))
        checklist = run_checklist(state)
        assert_evidence_resolves(checklist_findings(checklist, state))
        return {line.id: line for line in checklist.lines}

    unset = ("# CONFIG_KEXEC is not set", "# CONFIG_KEXEC_FILE is not set")
    for name, cited in (("debian12-direct-boot", "/proc/config.gz"), ("rhel9-no-kexec-kernel", "/boot/config-")):
        by_id = lines(name, SCENARIOS[name])
        for line_id in ("crash-reservation", "crash-loaded"):
            assert [e.excerpt for e in by_id[line_id].evidence] == list(unset), by_id[line_id]
            assert all(cited in e.source for e in by_id[line_id].evidence)
        reservation = by_id["crash-reservation"]
        assert reservation.status is Status.FAIL
        assert f"without kexec crash support ({cited}" in reservation.detail
        assert all(text in reservation.detail for text in unset)
    # No configuration to read: the inference from the absent file is said to be one.
    bare = lines("bare", replace(SCENARIOS["debian12-direct-boot"], kernel_config=None))["crash-reservation"]
    assert bare.status is Status.FAIL and not bare.evidence
    assert "no build configuration read to confirm it: /proc/config.gz does not exist; /boot/config-" in bare.detail
    # A configuration with crash support contradicts the inference: the absent files are not read as its absence.
    config = kernel_config(RELEASE["debian12"], kexec=True)
    sysfs_gone = replace(
        SCENARIOS["debian12-ready"],
        crash_size=None,
        loaded=None,
        kernel_config=None,
        extra=lambda root: (root / "proc/config.gz").write_bytes(gzip.compress(config.encode())),
    )
    by_id = lines("contradicted", sysfs_gone)
    for line_id in ("crash-reservation", "crash-loaded"):
        assert by_id[line_id].status is Status.UNKNOWN, by_id[line_id]
        # 6.1: kexec's core alone gates the files (CRASH_DUMP from 6.9)
        assert "CONFIG_KEXEC_CORE=y: the kernel has kexec crash support" in by_id[line_id].detail
        assert "CRASH_DUMP" not in by_id[line_id].detail
    assert by_id["crashkernel-cmdline"].status is Status.PASS


def test_crash_dump_off_is_no_proof_before_the_release_it_gates_the_sysfs_files(tmp_path: Path) -> None:
    """Before 6.9 /sys/kernel/kexec_crash_size and kexec_crash_loaded need CONFIG_KEXEC_CORE only: a 5.14 kernel
    with KEXEC_CORE=y and "# CONFIG_CRASH_DUMP is not set" has them, and that line was cited as proof of "built
    without kexec crash support" (review 6, #9).  On 6.9 and later the same line is the proof."""
    from dataclasses import replace

    def config(release: str) -> str:
        without_dump = kernel_config(release, kexec=True).replace(
            "CONFIG_CRASH_DUMP=y", "# CONFIG_CRASH_DUMP is not set"
        )
        assert "# CONFIG_CRASH_DUMP is not set" in without_dump
        return without_dump

    def lines(name: str, distro: str) -> dict[str, CheckLine]:
        rel = RELEASE[distro]
        system = replace(
            SCENARIOS["rhel9-no-kexec-kernel"],
            distro=distro,
            kernel_config=None,
            extra=lambda root: (root / f"boot/config-{rel}").write_text(config(rel)),
        )
        state = collect_kdump_state(build(tmp_path / name, system))
        checklist = run_checklist(state)
        assert_evidence_resolves(checklist_findings(checklist, state))
        return {line.id: line for line in checklist.lines}

    for distro in ("rhel9", "ubuntu2404"):  # 5.14, 6.8: kexec core is in, the absent files are not the kernel's
        old = lines(distro, distro)
        for line_id in ("crash-reservation", "crash-loaded"):
            line = old[line_id]
            assert line.status is Status.UNKNOWN, line
            assert "CRASH_DUMP" not in line.detail and all("CRASH_DUMP" not in e.excerpt for e in line.evidence), line
            assert "CONFIG_KEXEC_CORE=y: the kernel has kexec crash support" in line.detail, line
    new = lines("fedora41", "fedora41")  # 6.11: CRASH_DUMP gates the files
    reservation = new["crash-reservation"]
    assert reservation.status is Status.FAIL, reservation
    assert [e.excerpt for e in reservation.evidence] == ["# CONFIG_CRASH_DUMP is not set"], reservation
