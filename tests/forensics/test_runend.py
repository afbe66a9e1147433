"""The process's end after a delivered result (forensics.runend): what the interpreter's exit does that can be seen
is done (atexit handlers, the standard streams flushed, the status), and it declines where that is not so.

Real subprocesses: ``os._exit`` ends the process that calls it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from forensics import runend

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "detectors" / "dmesg" / "golden" / "panic_no_root_dmesg_x.log"


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``args`` run by this interpreter with a cache directory of the test's own."""
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    return subprocess.run(
        [sys.executable, *args], check=False, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
    )


def _python(code: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(["-c", code, *args], tmp_path)


def test_a_kept_result_ends_the_process_with_the_status_after_atexit_and_the_flushes(tmp_path: Path) -> None:
    marker = tmp_path / "atexit-ran"
    code = (
        "import atexit, sys\n"
        "from forensics import runend\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
        "sys.stdout.write('held in the buffer')\n"  # no newline, no flush: only the end's flush writes it
        "sys.stderr.write('said')\n"
        "runend.keep(object())\n"
        "runend.end(5, sys._getframe())\n"
        "print('not reached')\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 5
    assert done.stdout == "held in the buffer"
    assert done.stderr == "said"
    assert marker.read_text() == "yes"


def test_nothing_kept_or_a_failing_flush_or_a_thread_leaves_the_end_to_the_interpreter(tmp_path: Path) -> None:
    code = (
        "import sys, threading\n"
        "from forensics import runend\n"
        "runend.end(5, sys._getframe())\n"  # nothing kept: returns
        "sys.stderr.write('after nothing kept;')\n"
        "runend.keep([1])\n"
        "stop = threading.Event()\n"
        "t = threading.Thread(target=stop.wait)\n"
        "t.start()\n"
        "runend.end(5, sys._getframe())\n"  # another thread runs: returns
        "stop.set(); t.join()\n"
        "sys.stderr.write('after the thread;')\n"
        "class Full:\n"
        "    def write(self, s): return len(s)\n"
        "    def flush(self): raise OSError(28, 'No space left on device')\n"
        "real, sys.stdout = sys.stdout, Full()\n"
        "runend.end(5, sys._getframe())\n"  # a flush fails: returns
        "sys.stdout = real\n"
        "sys.stderr.write('after the failed flush')\n"
        "sys.exit(7)\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 7
    assert done.stderr == "after nothing kept;after the thread;after the failed flush"


def test_end_returns_in_this_process_without_a_kept_result() -> None:
    kept = list(runend._kept)
    runend._kept.clear()
    try:
        runend.end(3)  # would end pytest otherwise
    finally:
        runend._kept[:] = kept
    assert threading.active_count() >= 1


def test_dmesg_through_the_entry_writes_its_document_and_the_caches(tmp_path: Path) -> None:
    # The command line a user runs: the whole document on stdout, the status of --fail-on, the code and regex
    # caches' tables written back by their atexit handlers (a first run compiles every entry).
    done = _run(["-m", "forensics", "dmesg", "--format", "json", "--fail-on", "low", str(LOG)], tmp_path)
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "kforensic.dmesg/1"
    assert document["sources"][0]["reports"]
    tables = sorted(p.name.split("-cpython-")[0] for p in (tmp_path / "cache" / "kforensic").glob("*.marshal"))
    assert tables == ["code-dmesg", "regex", "regex-dmesg"]


def test_a_caller_that_is_not_the_interpreters_own_run_or_a_profiler_leaves_the_end_to_the_interpreter(
    tmp_path: Path,
) -> None:
    code = (
        "import sys\n"
        "from forensics import runend\n"
        "runend.keep([1])\n"
        "def inner():\n"
        "    runend.end(5, sys._getframe())\n"  # a function's frame: a program that goes on after the module
        "inner()\n"
        "sys.stderr.write('after a function;')\n"
        "sys.setprofile(lambda *a: None)\n"
        "runend.end(5, sys._getframe())\n"  # a profiler set: it writes its figures after the run returns
        "sys.setprofile(None)\n"
        "sys.settrace(lambda *a: None)\n"
        "runend.end(5, sys._getframe())\n"  # a tracer (python -m trace, pdb)
        "sys.settrace(None)\n"
        "sys.stderr.write('after a profiler and a tracer')\n"
        "sys.exit(7)\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 7, done.stderr
    assert done.stderr == "after a function;after a profiler and a tracer"


def test_a_profile_of_the_command_is_written(tmp_path: Path) -> None:
    # python -m cProfile -o FILE -m forensics ...: cProfile writes FILE after the module's run returns.
    profile = tmp_path / "dmesg.prof"
    done = _run(
        ["-m", "cProfile", "-o", str(profile), "-m", "forensics", "dmesg", "--format", "json", str(LOG)], tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schema"] == "kforensic.dmesg/1"
    assert profile.stat().st_size > 1000


def test_a_program_running_the_module_gets_control_back(tmp_path: Path) -> None:
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['forensics', 'dmesg', '--format', 'json', {str(LOG)!r}]\n"
        "try:\n"
        "    runpy.run_module('forensics', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    sys.stderr.write(f'back with {exc.code}')\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("back with 0")
    assert json.loads(done.stdout)["schema"] == "kforensic.dmesg/1"
