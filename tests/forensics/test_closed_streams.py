"""Issue #32 item 4: the program started with a standard stream closed (``<&-``, ``>&-``, ``2>&-``).

Each case runs the real program in a shell that closes the stream, so the
interpreter starts exactly as it would for a user.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

CONSOLE = Path("vmcore_fixtures/cases/02-bug-on/console.log")


def _shell(args: list[str], redirect: str) -> subprocess.CompletedProcess[str]:
    """``python -m forensics ARGS REDIRECT`` through /bin/sh (the redirection closes a descriptor)."""
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "forensics", *args])
    return subprocess.run(
        ["/bin/sh", "-c", f"exec {command} {redirect}"], capture_output=True, text=True, timeout=120, check=False
    )


def _one_line(stderr: str, needle: str) -> None:
    lines = stderr.splitlines()
    assert lines and lines[0].startswith("kforensic: error: "), stderr
    assert needle in lines[0], stderr
    assert len(lines) <= 2 and "Traceback" not in stderr, stderr


@pytest.mark.parametrize(
    "args",
    [["dmesg", "-"], ["trace", "-"], ["profile", "-"], ["dmesg", "-", "--debug"]],
    ids=["dmesg-dash", "trace-dash", "profile-dash", "dmesg-dash-debug"],
)
def test_closed_stdin_is_exit_3_in_one_line(args: list[str]) -> None:
    done = _shell(args, "<&-")
    if "--debug" not in args:
        _one_line(done.stderr, "standard input is closed")
    else:
        assert "kforensic: error: standard input is closed" in done.stderr, done.stderr
    assert done.returncode == 3, done.stderr  # was 4 (internal error) for dmesg


@pytest.mark.parametrize("args", [["dmesg"], ["dmesg", "--debug"]], ids=["dmesg", "dmesg-debug"])
def test_no_log_and_a_closed_stdin_is_a_usage_error(args: list[str]) -> None:
    """Without a LOG, standard input is read only when it has something to read: closed, it is no log given."""
    done = _shell(args, "<&-")
    assert "kforensic: error: dmesg needs a log file, '-' for stdin, or --live" in done.stderr, done.stderr
    if "--debug" not in args:
        _one_line(done.stderr, "dmesg needs a log file")
    assert done.returncode == 2, done.stderr


def test_closed_stdin_does_not_matter_when_a_file_is_given(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    done = _shell(["dmesg", str(CONSOLE), "-o", str(out)], "<&-")
    assert done.returncode == 0, done.stderr
    assert "BUG" in out.read_text()


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["dmesg", str(CONSOLE)], 0),
        (["dmesg", str(CONSOLE), "--fail-on", "low"], 1),
        (["dmesg", "/nonexistent/kern.log"], 3),
        (["dmesg", str(CONSOLE), "--no-such-option"], 2),
    ],
    ids=["ok", "findings", "bad-input", "usage"],
)
def test_closed_stderr_keeps_the_exit_code(args: list[str], code: int) -> None:
    done = _shell(args, "2>&-")
    assert done.returncode == code
    if code in (0, 1):
        assert "BUG" in done.stdout
    else:  # the message goes nowhere; before the fix it went to standard output, mixed with results
        assert done.stdout == "", done.stdout


def test_closed_stderr_with_a_file_output_writes_only_the_file(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    done = _shell(["dmesg", str(CONSOLE), "-o", str(out)], "2>&-")
    assert done.returncode == 0
    text = out.read_text()
    assert "BUG" in text and "kforensic: error" not in text
    assert done.stdout == ""


def test_closed_stdout_is_exit_3_and_the_file_output_still_works(tmp_path: Path) -> None:
    done = _shell(["dmesg", str(CONSOLE)], ">&-")
    _one_line(done.stderr, "standard output is closed")
    assert done.returncode == 3
    out = tmp_path / "report.md"
    done = _shell(["dmesg", str(CONSOLE), "-o", str(out)], ">&-")
    assert done.returncode == 0, done.stderr
    assert "BUG" in out.read_text()
