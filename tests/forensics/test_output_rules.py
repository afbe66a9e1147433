"""The one output writer (forensics/output.py): every kind of target, as docs/cli.md "Output files" says.

Each test names the defect of issues #19/#23 it covers; all of them failed on the writer before
(it renamed a temporary file over whatever the path was).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.errors import InputError, UsageError
from forensics.output import output_directory, register_input, reset_run, write_atomic
from tests.forensics.test_cli import run

CONSOLE = Path("vmcore_fixtures/cases/02-bug-on/console.log")


@pytest.fixture(autouse=True)
def _fresh_run() -> None:
    reset_run()


def _mknod_null(path: Path) -> None:
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the /dev/null device
    except PermissionError:
        pytest.skip("creating a device node needs root")


def test_regular_file_is_replaced_whole_and_private(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    write_atomic(target, "new text")
    assert target.read_text() == "new text"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary file left


def test_character_device_is_written_through_not_replaced(tmp_path: Path) -> None:
    # #19.1: -o /dev/null replaced the device by a 0600 regular file (as root: a broken host).
    null = tmp_path / "null"
    _mknod_null(null)
    write_atomic(null, "report")
    assert stat.S_ISCHR(null.stat().st_mode)


def test_dmesg_to_a_null_device_leaves_it_a_device(tmp_path: Path) -> None:
    null = tmp_path / "null"
    _mknod_null(null)
    result = run("dmesg", CONSOLE, "-o", null)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(null.stat().st_mode)


def test_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    write_atomic(fifo, "through the fifo\n")
    out, _ = reader.communicate(timeout=10)
    assert out == b"through the fifo\n"
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_dev_stdout_writes_to_the_descriptor(tmp_path: Path) -> None:
    # /dev/stdout is a symlink to /proc/self/fd/1: its target must get the text, nothing replaced.
    result = run("dmesg", CONSOLE, "-o", "/dev/stdout")
    assert result.returncode == 0, result.stderr
    assert "kernel BUG" in result.stdout
    result = run("dmesg", CONSOLE, "-o", "/proc/self/fd/1")
    assert result.returncode == 0 and "kernel BUG" in result.stdout


def test_symlink_to_a_file_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    # #19.1: a symlink was followed and its target silently replaced.
    target = tmp_path / "precious"
    target.write_text("keep me")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(UsageError, match="symbolic link"):
        write_atomic(link, "report")
    assert target.read_text() == "keep me" and link.is_symlink()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UsageError, match="symbolic link"):
        write_atomic(dangling, "report")
    assert not (tmp_path / "nowhere").exists()


def test_symlink_to_a_device_is_written_through(tmp_path: Path) -> None:
    null = tmp_path / "null"
    _mknod_null(null)
    link = tmp_path / "to-null"
    link.symlink_to(null)
    write_atomic(link, "x")
    assert link.is_symlink() and stat.S_ISCHR(null.stat().st_mode)


@pytest.mark.parametrize("kind", ["directory", "socket"])
def test_directory_and_socket_are_refused(tmp_path: Path, kind: str) -> None:
    target = tmp_path / kind
    if kind == "directory":
        target.mkdir()
    else:
        import socket

        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
        sock.close()
    with pytest.raises(UsageError, match=f"it is a {kind}"):
        write_atomic(target, "x")


def test_file_of_another_user_needs_force(tmp_path: Path) -> None:
    # #19.1: an existing file owned by another user was silently replaced and became root's.
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    target = tmp_path / "theirs.txt"
    target.write_text("theirs")
    os.chown(target, 65534, 65534)
    result = run("dmesg", CONSOLE, "-o", target)
    assert result.returncode == 2 and "belongs to another user" in result.stderr
    assert target.read_text() == "theirs" and target.stat().st_uid == 65534
    result = run("dmesg", CONSOLE, "-o", target, "--force")
    assert result.returncode == 0, result.stderr
    assert "kernel BUG" in target.read_text()


def test_failed_write_keeps_the_previous_file(tmp_path: Path) -> None:
    # #23.5: a full disk left the old output overwritten with a part of the new one.
    target = tmp_path / "r.txt"
    target.write_text("previous report")

    class BoomError(Exception):
        pass

    from forensics.output import open_output

    with pytest.raises(BoomError), open_output(target) as out:
        out.write(b"half of the new")
        raise BoomError
    assert target.read_text() == "previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["r.txt"]


def test_full_device_is_exit_3_and_keeps_nothing_half_written() -> None:
    # #23.6: stdout on a full device was an internal error (exit 4).
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "forensics", "dmesg", str(CONSOLE)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith("kforensic: error: cannot write to standard output: No space left")
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    with pytest.raises(InputError, match="No space left"):
        write_atomic(Path("/dev/full"), "x")


def test_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "in.log"
    source.write_text("x\n")
    register_input(source)
    hard = tmp_path / "hard.log"
    os.link(source, hard)
    for target in (source, hard, tmp_path / "." / "in.log"):
        with pytest.raises(UsageError, match="is the input"):
            write_atomic(target, "report")
    assert source.read_text() == "x\n"


def test_output_that_standard_input_reads_is_refused(tmp_path: Path) -> None:
    """``kforensic dmesg - -o LOG < LOG``: the shell opened LOG for standard input, and the output named it; the log
    was replaced by its own report (exit 0).  A pipe has no file to protect; a copy of the log is no input."""
    log = tmp_path / "kern.log"
    log.write_bytes(CONSOLE.read_bytes())
    copy = tmp_path / "copy.log"
    copy.write_bytes(log.read_bytes())
    for output in (log, tmp_path / "hard.log"):
        if output != log:
            os.link(log, output)
        with log.open("rb") as stdin:
            done = subprocess.run(
                [sys.executable, "-m", "forensics", "dmesg", "-", "-o", str(output)], stdin=stdin,
                capture_output=True, text=True, check=False,
            )  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"kforensic: error: output {output} is the file standard input reads")
        assert log.read_bytes() == CONSOLE.read_bytes()
    with log.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "forensics", "dmesg", "-", "-o", str(copy), "--format", "json"], stdin=stdin,
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert copy.read_text().startswith("{")


def test_plots_directory_that_is_a_file_is_exit_3(tmp_path: Path) -> None:
    # #19.4: --plots pointing at a file was an internal error (exit 4).
    target = tmp_path / "plots"
    target.write_text("a file")
    with pytest.raises(InputError, match="it is a file"):
        output_directory(target)
    assert output_directory(tmp_path / "new" / "plots").is_dir()


def test_stdout_closed_early_by_the_reader_ends_quietly_with_0(tmp_path: Path) -> None:
    # #23.6: `| head` gave exit 1 (click's EPIPE path); coreutils end quietly.
    big = tmp_path / "big.log"
    big.write_bytes(CONSOLE.read_bytes() * 40)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "forensics", "dmesg", str(big), "--fail-on", "info"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 0 and result.stderr == ""


def test_stdout_closed_is_exit_3_in_one_line() -> None:
    # #19.4: a closed stdout was an internal error.
    result = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", str(CONSOLE)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert result.returncode == 3, result.stderr
    assert (
        result.stderr.splitlines()[0] == "kforensic: error: cannot write to standard output: standard output is closed"
    )
