"""``kforensic vmcore DUMP --shell``: drgn on the dump with the analysis' objects bound, on real dumps.

Scripts are piped on stdin (run like ``drgn -c DUMP < script``) and print what the names hold;
the values are checked against each case's ground truth. One test drives the interactive console
through a pseudo-terminal, as a user at a terminal gets it.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.vmcore_cases import FIXTURES_DIR, VmcoreCase, case_names, load_case


def _cases(suffix: str) -> list[str]:
    """The cases of every fixture kernel that end with ``suffix`` (one per kernel)."""
    return [n for n in case_names() if n.endswith(suffix)] or [suffix]


def _argv(case: VmcoreCase) -> list[str]:
    return [
        sys.executable, "-m", "forensics", "vmcore", str(case.directory), "--vmlinux", str(case.vmlinux),
        *(a for m in case.module_debug for a in ("--module-debug", str(m))), "--source-dir", str(FIXTURES_DIR),
        "--shell",
    ]  # fmt: skip


def _env(tmp_path: Path) -> dict[str, str]:
    # drgn keeps its console history under $HOME (XDG_STATE_HOME): never the tester's own.
    return {**os.environ, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}


def _script(name: str, script: str, tmp_path: Path) -> tuple[VmcoreCase, subprocess.CompletedProcess[str]]:
    case = load_case(name)
    done = subprocess.run(
        _argv(case), input=script, capture_output=True, text=True, timeout=300, check=False, env=_env(tmp_path)
    )
    return case, done


def _printed(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    return dict(json.loads(line) for line in done.stdout.splitlines() if line.startswith("["))


@pytest.mark.parametrize("name", _cases("02-bug-on"))
def test_bug_on_frame_and_its_variables(name: str, tmp_path: Path) -> None:
    case, done = _script(name, """
import json
print(json.dumps(["comm", task.comm.string_().decode()]))
print(json.dumps(["frame", frame.name]))
print(json.dumps(["refcount", buf.refcount.value_()]))
print(json.dumps(["same", buf.value_() == frame["buf"].value_()]))
""", tmp_path)  # fmt: skip
    got = _printed(done)
    assert got == {"comm": case.expected["task_comm"], "frame": "kf_buffer_put", "refcount": 0, "same": True}
    # The banner on stderr lists each name with what it is.
    assert "  task " in done.stderr and "  buf " in done.stderr and "kf_buffer_put" in done.stderr


@pytest.mark.parametrize("name", _cases("10-use-after-free"))
def test_use_after_free_binds_the_freed_object(name: str, tmp_path: Path) -> None:
    _, done = _script(name, """
import json
info = freed_object
print(json.dumps(["cache", info.slab_cache.name.string_().decode()]))
print(json.dumps(["allocated", info.allocated]))
print(json.dumps(["conn_in_it", info.address <= conn.value_() < info.address + info.slab_cache.object_size]))
""", tmp_path)  # fmt: skip
    assert _printed(done) == {"cache": "kf_conn", "allocated": False, "conn_in_it": True}


@pytest.mark.parametrize("name", _cases("11-abba-deadlock"))
def test_lock_cycle_binds_its_tasks_and_locks(name: str, tmp_path: Path) -> None:
    case, done = _script(name, """
import json
from drgn.helpers.linux.locking import mutex_owner
waiters = {n: v for n, v in list(globals().items()) if n.startswith("waiter_")}
print(json.dumps(["waiters", sorted(t.comm.string_().decode() for t in waiters.values())]))
locks = sorted(n for n in list(globals()) if n.startswith("lock_"))
print(json.dumps(["locks", locks]))
print(json.dumps(["owners", {n: mutex_owner(globals()[n]).comm.string_().decode() for n in locks}]))
""", tmp_path)  # fmt: skip
    tasks = case.expected["why"]["tasks"]  # type: ignore[index]
    assert _printed(done) == {
        "waiters": sorted(tasks),
        "locks": sorted(f"lock_{t['holds']}" for t in tasks.values()),
        "owners": {f"lock_{t['holds']}": comm for comm, t in tasks.items()},
    }


@pytest.mark.parametrize("name", _cases("14-spin-deadlock"))
def test_spinlock_is_bound(name: str, tmp_path: Path) -> None:
    case, done = _script(name, """
import json
print(json.dumps(["word", hex(spinlock.val.counter.value_())]))
print(json.dumps(["symbol", prog.symbol(spinlock.value_()).name]))
""", tmp_path)  # fmt: skip
    why = case.expected["why"]
    assert _printed(done) == {"word": why["lock_word"], "symbol": why["lock"]}  # type: ignore[index]


@pytest.mark.parametrize("name", _cases("09-oom"))
def test_oom_binds_the_top_memory_user(name: str, tmp_path: Path) -> None:
    case, done = _script(name, 'import json\nprint(json.dumps(["top", top_user.comm.string_().decode()]))\n', tmp_path)
    assert _printed(done) == {"top": case.expected["oom"]["process"]}  # type: ignore[index]


def test_failing_script_shows_its_own_error(tmp_path: Path) -> None:
    _, done = _script(_cases("02-bug-on")[0], "print('before')\nno_such_name\n", tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "before\n"
    assert 'File "<stdin>", line 2' in done.stderr and "NameError" in done.stderr
    assert "forensics/" not in done.stderr.split("Traceback", 1)[1]  # only the script's frames
    assert done.stderr.rstrip().splitlines()[-1].startswith("kforensic: error: the --shell script on stdin failed")


def test_refused_without_a_terminal_or_a_script(tmp_path: Path) -> None:
    """stdin /dev/null (a cron job, CI): one line, exit 2, before any analysis."""
    case = load_case(_cases("02-bug-on")[0])
    started = time.monotonic()
    done = subprocess.run(
        _argv(case), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False,
        env=_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == "kforensic: error: --shell needs a terminal, or drgn commands piped to stdin " \
                       "(stdin is /dev/null or another device)"  # fmt: skip
    assert len(lines) == 2 and lines[1].startswith("kforensic: hint: ")
    assert time.monotonic() - started < 60  # refused before the dump is opened (not a timing claim: a bound)


def _read_until(fd: int, needle: bytes, limit: float = 120) -> bytes:
    seen = b""
    deadline = time.monotonic() + limit
    while needle not in seen:
        left = deadline - time.monotonic()
        assert left > 0, seen[-2000:]
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_interactive_console_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal: drgn's console, the banner with the names, a prompt that evaluates them."""
    case = load_case(_cases("02-bug-on")[0])
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        _argv(case), stdin=secondary, stdout=secondary, stderr=secondary, env={**_env(tmp_path), "TERM": "dumb"},
        close_fds=True,
    )  # fmt: skip
    os.close(secondary)
    try:
        banner = _read_until(primary, b">>> ")
        assert b"The analysis' objects" in banner and b"  buf " in banner and b"For help, type help(drgn)." in banner
        os.write(primary, b"buf.refcount.value_() + 4321 * 2\n")
        answer = _read_until(primary, b"8642")
        assert b"8642" in answer
        os.write(primary, b"exit()\n")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(primary)
