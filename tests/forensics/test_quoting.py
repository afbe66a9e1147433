"""#23.2: values written into generated files stay one value, checked by the real tools that read those files.

Every hostile value (newline, quotes, ``$``, ``%``, backslash, blanks, non-UTF-8) either comes
back unchanged from the file as its reader parses it, or is refused (exit 2).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forensics.errors import UsageError
from forensics.quoting import (
    kernel_param_value,
    shell_assignment,
    shell_double_inner,
    sysctl_line,
    systemd_arg,
    systemd_path,
)
from tests.forensics.commands.test_slabwatch_cli import kforensic

HOSTILE = [
    "/var/lib/x\nExecStartPre=/bin/touch /tmp/p",
    "a b",
    "it's",
    'say "hi"',
    "$HOME",
    "${PATH}",
    "100%",
    "%n%i",
    "back\\slash",
    "`id`",
    "$(id)",
    "tab\there",
    "bell\x07",
    "caf\u00e9",
    os.fsdecode(b"/tmp/k\xff"),
    "",
    "-",
]
# Text a value may hold: printable characters, shell and systemd specials, and controls that must be refused.
VALUES = st.text(
    alphabet=st.sampled_from([*list("ab /._-%$\\\"'`(){};&|<>*?!#~=:@,+\n\t\r\x00\x1b"), "é", "�"]),
    max_size=24,
)


def _refused(value: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in value) or "\udcff" in value or "\udc80" <= value[:1] <= "\udcff"


def _systemd_unquote(word_line: str) -> list[str]:
    """How systemd splits and unescapes an ExecStart= line we wrote (only \\\\ and \\" escapes, %% and $$)."""
    return [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(word_line, posix=True)]


@pytest.mark.parametrize("value", HOSTILE)
def test_systemd_argument_round_trip_or_refusal(value: str) -> None:
    try:
        quoted = systemd_arg(value, "--store")
    except UsageError:
        assert _refused(value)
        return
    assert not _refused(value)
    assert "\n" not in quoted
    assert _systemd_unquote("/bin/true " + quoted) == ["/bin/true", value]


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_systemd_argument_property(value: str) -> None:
    try:
        quoted = systemd_arg(value)
    except UsageError:
        assert _refused(value)
        return
    assert _systemd_unquote("/bin/true " + quoted) == ["/bin/true", value]


def _unit_for(store: str) -> str:
    done = kforensic("slab-watch", "--systemd-unit", "--store", store)
    assert done.returncode in (0, 2), done.stderr
    return done.stdout if done.returncode == 0 else ""


@pytest.mark.parametrize("value", HOSTILE)
def test_generated_unit_has_no_extra_directive_and_verifies(tmp_path: Path, value: str) -> None:
    store = f"/srv/{value}/s.sqlite"
    unit = _unit_for(store)
    if not unit:
        assert _refused(value)
        return
    keys = [line.split("=", 1)[0] for line in unit.splitlines() if "=" in line and not line.startswith("#")]
    assert keys.count("ExecStart") == 1 and "ExecStartPre" not in keys
    exec_line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    argv = _systemd_unquote(exec_line.removeprefix("ExecStart="))
    assert argv[argv.index("--store") + 1] == os.path.normpath(store) or argv[argv.index("--store") + 1] == store
    if shutil.which("systemd-analyze") is None:
        return
    path = tmp_path / "kforensic-slab-watch.service"
    path.write_text(unit)
    checked = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, check=False, timeout=60
    )
    # The kforensic launcher exists; no quoting, specifier or unknown-setting complaint may appear.
    complaints = [
        line
        for line in checked.stderr.splitlines()
        if "quoting" in line.lower() or "specifier" in line.lower() or "unknown" in line.lower()
    ]
    assert checked.returncode == 0 and not complaints, checked.stderr


def _sh(script: str) -> bytes:
    return subprocess.run(["sh", "-c", script], capture_output=True, check=True, timeout=30).stdout


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=VALUES)
def test_shell_sourced_assignment_round_trip(tmp_path: Path, value: str) -> None:
    # /etc/default/kdump-tools style: `. file` in a POSIX shell gives the value back.
    try:
        line = shell_assignment("KF_VALUE", value)
    except UsageError:
        assert _refused(value)
        return
    config = tmp_path / "kdump-tools"
    config.write_text(line + "\n")
    assert _sh(f'. {shlex.quote(str(config))}; printf %s "$KF_VALUE"') == value.encode()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=VALUES)
def test_grub_snippet_inner_text_round_trip(tmp_path: Path, value: str) -> None:
    # GRUB's /etc/default/grub.d/*.cfg is sourced by a shell: "$GRUB_CMDLINE_LINUX_DEFAULT <ours>".
    try:
        inner = shell_double_inner(value)
    except UsageError:
        assert _refused(value)
        return
    config = tmp_path / "kforensic.cfg"
    config.write_text(f'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT {inner}"\n')
    got = _sh(
        f'GRUB_CMDLINE_LINUX_DEFAULT=quiet; . {shlex.quote(str(config))}; printf %s "$GRUB_CMDLINE_LINUX_DEFAULT"'
    )
    assert got == b"quiet " + value.encode()


@pytest.mark.parametrize("value", [*HOSTILE, "256M", "1G-4G:192M,4G-64G:256M,64G-:512M", "128M@16M"])
def test_kernel_parameter_values_are_plain_or_refused(value: str) -> None:
    try:
        kept = kernel_param_value(value, "crashkernel")
    except UsageError:
        return
    assert kept == value and shlex.split(f"crashkernel={kept}") == [f"crashkernel={value}"]
    assert value in ("256M", "1G-4G:192M,4G-64G:256M,64G-:512M", "128M@16M", "-")


@pytest.mark.parametrize("value", [*HOSTILE, "1", "0 4 1 7"])
def test_sysctl_line_is_one_line_or_refused(tmp_path: Path, value: str) -> None:
    try:
        line = sysctl_line("kernel.panic", value)
    except UsageError:
        return
    assert "\n" not in line and line == f"kernel.panic = {value}"
    with pytest.raises(UsageError):
        sysctl_line("kernel.panic\nkernel.x", "1")


def test_systemd_path_keeps_dollar_and_doubles_percent() -> None:
    assert systemd_path("/srv/a b/100%/$x") == '"/srv/a b/100%%/$x"'
