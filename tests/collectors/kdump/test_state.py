"""Collecting the kdump state from root trees and from this machine."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from collectors.kdump.config import parse_kdump_conf, parse_kdump_tools
from collectors.kdump.reader import RootReader, VfsStat
from collectors.kdump.state import collect_kdump_state, measure_dump_dir
from forensics.errors import InputError
from forensics.model import NotAvailable
from forensics.types.kdump import BootEntry, DiskSpace, DistroFamily, KdumpConfig, MemInfo, TargetKind, TextFile
from tests.collectors.kdump.roots import MIB, SCENARIOS, build


def _text(lines: str, path: str = "/etc/kdump.conf") -> TextFile:
    return TextFile(path=path, source=path, lines=tuple(lines.splitlines()))


@pytest.mark.parametrize(
    ("scenario", "family", "distro_id"),
    [
        ("debian12-ready", DistroFamily.DEBIAN, "debian"),
        ("ubuntu2404-lzo", DistroFamily.DEBIAN, "ubuntu"),
        ("rhel9-ready", DistroFamily.RHEL, "rhel"),
        ("fedora41-zstd", DistroFamily.RHEL, "fedora"),
        ("unknown-distro", DistroFamily.UNKNOWN, "arch"),
    ],
)
def test_distro_family(tmp_path: Path, scenario: str, family: DistroFamily, distro_id: str) -> None:
    system = SCENARIOS[scenario]
    state = collect_kdump_state(build(tmp_path, system), system.statvfs)
    assert (state.distro.family, state.distro.id) == (family, distro_id)
    assert isinstance(state.os_release, TextFile)
    assert state.os_release.lines[state.distro.evidence_line - 1].startswith("ID=")


def test_ready_debian_tree_is_read_completely(tmp_path: Path) -> None:
    system = SCENARIOS["debian12-ready"]
    state = collect_kdump_state(build(tmp_path, system), system.statvfs)
    assert isinstance(state.crash_size, TextFile)
    assert state.crash_size.first_line() == str(128 * MIB)
    assert state.services.enabled_links == ("/etc/systemd/system/multi-user.target.wants/kdump-tools.service",)
    assert state.images.kernel_bytes == 30 * MIB
    assert state.images.initrd_bytes == 18 * MIB
    assert state.images.modules_count == 4
    assert state.debuginfo.build_id == "3f2a9c0d5e6b7a8190aabbccddeeff0011223344"
    assert state.debuginfo.vmlinux == ("/usr/lib/debug/boot/vmlinux-6.1.0-18-amd64",)
    assert state.boot.crashkernel[0][2] == "384M-:128M"
    assert state.dump_target.kind is TargetKind.LOCAL
    assert isinstance(state.dump_space, DiskSpace)
    assert state.dump_space.free_bytes == system.free_bytes
    assert state.problems == ()
    # Every file read is recorded, with its digest.
    assert any(s.path.endswith("proc/cmdline") and isinstance(s.sha256, str) for s in state.sources)
    # RAM from /proc/iomem's System RAM ranges, close to the configured 4 GiB.
    assert isinstance(state.system_ram_bytes, int)
    assert abs(state.system_ram_bytes - system.ram) < 2 * MIB


def test_absolute_links_resolve_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc/alternatives").mkdir(parents=True)
    (root / "etc/alternatives/real.conf").write_text("inside\n")
    (root / "etc/link.conf").symlink_to("/etc/alternatives/real.conf")
    (root / "etc/escape").symlink_to("../../../../../../..")
    reader = RootReader(root)
    file = reader.read_text("/etc/link.conf")
    assert isinstance(file, TextFile)
    assert file.lines == ("inside",)
    assert reader.host_path("/etc/escape/etc/passwd") == root / "etc/passwd"  # ".." stops at the root


def test_unreadable_file_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    system = SCENARIOS["debian12-unreadable-config"]
    state = collect_kdump_state(build(tmp_path, system), system.statvfs)
    assert isinstance(state.debian_config, NotAvailable)
    assert "Is a directory" in state.debian_config.reason
    assert [p.path for p in state.problems] == ["/etc/default/kdump-tools"]
    assert any(s.error == "Is a directory" for s in state.sources)


def test_free_space_of_a_missing_dump_dir_is_measured_at_its_parent(tmp_path: Path) -> None:
    system = SCENARIOS["rhel9-ready"]
    root = build(tmp_path, system)
    (root / "var/crash").rmdir()
    seen: list[str] = []

    def fake(path: str) -> VfsStat:
        seen.append(path)
        return VfsStat(4096, 1000, 10)

    # The live system's measure (a --root copy is not measured by statvfs: its disk is not the machine's).
    space = measure_dump_dir(RootReader(root), "/var/crash", fake)
    assert seen == [str(root / "var")]
    assert isinstance(space, DiskSpace)
    assert (space.measured_at, space.free_bytes) == ("/var", 40960)


def test_a_dump_dir_under_a_link_loop_is_not_measured(tmp_path: Path) -> None:
    # A directory above the dump directory that cannot be searched: unknown, with why (it ended in exit 3 once).
    root = build(tmp_path, SCENARIOS["rhel9-ready"])
    (root / "var/crash").rmdir()
    (root / "var/loop").symlink_to("loop")
    space = measure_dump_dir(RootReader(root), "/var/loop/crash", SCENARIOS["rhel9-ready"].statvfs)
    assert isinstance(space, NotAvailable)
    assert space.reason.startswith("cannot measure free space for /var/loop/crash: cannot read /var/loop"), space


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a directory"):
        collect_kdump_state(tmp_path / "nothing-here")


def test_kdump_tools_parser() -> None:
    config = parse_kdump_tools(
        _text(
            "USE_KDUMP=1\nKDUMP_COREDIR=\"/srv/crash\" # local\nMAKEDUMP_ARGS='-l -d 31'\n"
            'NFS="host:/export\nbogus line\nexport SSH=\nKDUMP_FAIL_CMD=reboot -f\n',
            "/etc/default/kdump-tools",
        )
    )
    values = {e.key: e.value for e in config.entries}
    assert values["KDUMP_COREDIR"] == "/srv/crash"
    assert values["MAKEDUMP_ARGS"] == "-l -d 31"
    assert values["SSH"] == ""
    assert [(p.line, p.reason) for p in config.problems] == [
        (4, 'unterminated " quote'),
        (5, "not a NAME=value assignment"),
        (7, "unquoted value with spaces (the shell would run it as a command)"),
    ]


def test_kdump_conf_parser() -> None:
    config = parse_kdump_conf(
        _text(
            "# comment\npath /var/crash # trailing\ncore_collector makedumpfile -l -d 31\n"
            "nfs server:/export\nssh user@host\nfoo bar\nxfs\n"
        )
    )
    assert isinstance(config, KdumpConfig)
    path = config.get("path")
    assert path is not None
    assert path.value == "/var/crash"
    reasons = [(p.line, p.reason) for p in config.problems]
    assert (6, "unknown directive 'foo'") in reasons
    assert (7, "directive 'xfs' needs a value") in reasons
    assert (5, "more than one dump target (kdumpctl allows one)") in reasons


def test_remote_targets_are_not_measured(tmp_path: Path) -> None:
    system = SCENARIOS["rhel9-ready"]
    root = build(tmp_path, system)
    with (root / "etc/kdump.conf").open("a") as conf:
        conf.write("nfs nfs.example.org:/export/crash\n")
    state = collect_kdump_state(root, system.statvfs)
    assert state.dump_target.kind is TargetKind.REMOTE
    assert isinstance(state.dump_space, NotAvailable)


@pytest.mark.live
def test_this_machine(tmp_path: Path) -> None:
    """The real /proc and /sys of the test machine: whatever its setup, the collector reads it."""
    state = collect_kdump_state(Path("/"))
    assert isinstance(state.cmdline, TextFile)
    assert isinstance(state.meminfo, MemInfo)
    assert state.meminfo.total > 0
    expect_sysfs = os.path.exists("/sys/kernel/kexec_crash_loaded")
    assert isinstance(state.crash_loaded, TextFile) is expect_sysfs
    assert isinstance(state.dump_space, DiskSpace | NotAvailable)


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    system = SCENARIOS["rhel9-ready"]
    root = build(tmp_path, system)
    (root / "etc/kdump.conf").unlink()
    os.mkfifo(root / "etc/kdump.conf")
    state = collect_kdump_state(root, system.statvfs)
    assert isinstance(state.rhel_config, NotAvailable)
    assert state.problems[0].path == "/etc/kdump.conf"
    assert state.problems[0].reason == "not a regular file"


def test_a_relative_dump_path_is_measured_from_the_root(tmp_path: Path) -> None:
    system = SCENARIOS["rhel9-ready"]
    root = build(tmp_path, system)
    conf = root / "etc/kdump.conf"
    conf.write_text(conf.read_text().replace("path /var/crash", "path var/crash/nested"))
    state = collect_kdump_state(root, system.statvfs)
    assert state.dump_target.location == "var/crash/nested"
    space = measure_dump_dir(RootReader(root), state.dump_target.location, system.statvfs)
    assert isinstance(space, DiskSpace)
    assert space.measured_at == "/var/crash"


def test_a_derivative_gets_the_family_and_default_of_its_parent(tmp_path: Path) -> None:
    from detectors.kdump.checklist import run_checklist

    system = SCENARIOS["ubuntu2404-lzo"]
    root = build(tmp_path, system)
    (root / "etc/os-release").write_text(
        'NAME="Linux Mint"\nVERSION_ID="22"\nID=linuxmint\nID_LIKE="ubuntu debian"\nPRETTY_NAME="Linux Mint 22"\n'
    )
    state = collect_kdump_state(root, system.statvfs)
    assert (state.distro.family, state.distro.like) == (DistroFamily.DEBIAN, ("ubuntu", "debian"))
    assert run_checklist(state).estimate.floor_source == "Ubuntu kdump-tools"


@pytest.mark.parametrize(
    ("data", "path", "reason"),
    [
        (b"USE_KDUMP=1\r\nKDUMP_COREDIR=/var/crash\r\n", "/etc/default/kdump-tools", "carriage return"),
        (b"\xef\xbb\xbfUSE_KDUMP=1\nKDUMP_COREDIR=/var/crash\n", "/etc/default/kdump-tools", "byte-order mark"),
        ("USE_KDUMP=1\n".encode("utf-16-le"), "/etc/default/kdump-tools", "NUL bytes"),
        (b"path /var/crash\r\ncore_collector makedumpfile -l\r\n", "/etc/kdump.conf", "carriage return"),
    ],
)
def test_a_config_saved_the_windows_way_is_a_problem(tmp_path: Path, data: bytes, path: str, reason: str) -> None:
    """CRLF, a BOM, UTF-16: read fine here, not by the shell or kdumpctl (CRLF was '2 settings, no errors')."""
    (tmp_path / path.lstrip("/")).parent.mkdir(parents=True)
    (tmp_path / path.lstrip("/")).write_bytes(data)
    file = RootReader(tmp_path).read_text(path)
    assert isinstance(file, TextFile)
    config = (parse_kdump_tools if path.endswith("kdump-tools") else parse_kdump_conf)(file)
    assert config.problems and reason in config.problems[0].reason
    assert config.problems[0].line == 1


def _rhel8_grubenv(root: Path) -> None:
    # RHEL 8: the BLS entry takes its options from grubenv's kernelopts=; grubenv is read for saved_entry too.
    entry = next((root / "boot/loader/entries").iterdir())
    entry.write_text(entry.read_text().replace("options root=", "options $kernelopts\n#options root="))
    (root / "boot/grub2").mkdir(parents=True, exist_ok=True)
    (root / "boot/grub2/grubenv").write_text(
        "# GRUB Environment Block\nkernelopts=root=/dev/sda1 ro crashkernel=256M\n"
    )


@pytest.mark.parametrize(
    ("scenario", "extra"), [("debian12-ready", None), ("rhel9-ready", None), ("rhel9-ready", _rhel8_grubenv)]
)
def test_each_file_is_declared_once(tmp_path: Path, scenario: str, extra: object) -> None:
    # The sources are what the collector read: a BLS entry, grubenv and the kdump configuration were read (and
    # declared) twice, once for the boot configuration or the config check, again for the boot entry or setup.
    system = replace(SCENARIOS[scenario], extra=extra)
    root = build(tmp_path, system)
    state = collect_kdump_state(root, system.statvfs)
    paths = [s.path for s in state.sources]
    assert sorted(p for p in set(paths) if paths.count(p) > 1) == []
    read = {p.removeprefix(str(root)) for p in paths}
    assert any(p.startswith(("/boot/loader/entries/", "/boot/grub/grub.cfg")) for p in read)
    if extra is not None:
        assert "/boot/grub2/grubenv" in read
        assert isinstance(state.boot.generated, BootEntry)
        assert state.boot.generated.crashkernel == "256M"


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("proc/meminfo", "MemTotal:       ² kB\n"),
        ("proc/modules", "ext4 ² 1 - Live 0x0000000000000000\n"),
        (
            "sos_commands/filesys/df_-al_-x_autofs",
            "Filesystem 1K-blocks Used Available Use% Mounted on\n/dev/x ² 1 1 1% /\n",
        ),
    ],
    ids=["meminfo", "modules", "df"],
)
def test_a_digit_int_refuses_is_not_a_number(tmp_path: Path, path: str, text: str) -> None:
    # "²" is a digit to str.isdigit, not to int(): the check ended in "internal error: ValueError" (exit 4).
    root = build(tmp_path, SCENARIOS["debian12-ready"])
    (root / path).write_text(text)
    state = collect_kdump_state(root)
    unread = {
        "proc/meminfo": state.meminfo,  # no MemTotal read: NotAvailable
        "proc/modules": NotAvailable("none") if state.images.modules_count == 0 else state.images.modules_count,
        "sos_commands/filesys/df_-al_-x_autofs": state.dump_space,  # no mount read: NotAvailable
    }[path]
    assert isinstance(unread, NotAvailable), unread
