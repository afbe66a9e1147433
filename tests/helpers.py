"""Test helpers shared by every test package.

``assert_evidence_resolves`` is the one check that a detector's evidence is
real: each excerpt must stand verbatim at its locator in its source.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from collectors.inputs import SOURCE_SUFFIX
from forensics.evidence import Resolver, check_findings
from forensics.model import Finding, LocatorKind


def assert_evidence_resolves(
    findings: Iterable[Finding],
    source_paths: Mapping[str, Path] | None = None,
    resolvers: Mapping[LocatorKind, Resolver] | None = None,
) -> None:
    """Fail the test unless every evidence excerpt of every finding resolves in its source.

    Also fails when there are no findings, so a detector that finds nothing
    cannot pass a test meant to check its evidence.
    """
    found = list(findings)
    assert found, "no findings to check: the detector found nothing"
    with tempfile.TemporaryDirectory() as workdir:
        # A source named ``PATH (gunzipped)`` (/proc/config.gz) cites lines of PATH's decompressed text.
        gunzipped = {
            e.source: Path(workdir) / str(i)
            for i, e in enumerate(e for f in found for e in f.evidence)
            if e.source.endswith(SOURCE_SUFFIX["gzip"]) and e.source not in (source_paths or {})
        }
        for source, plain in gunzipped.items():
            plain.write_bytes(gzip.decompress(Path(source.removesuffix(SOURCE_SUFFIX["gzip"])).read_bytes()))
        problems = check_findings(found, {**gunzipped, **(source_paths or {})}, resolvers)
    assert not problems, "evidence does not resolve:\n" + "\n".join(str(p) for p in problems)


def mount_tmpfs(where: Path, size: str) -> bool:
    """Mount a tmpfs of ``size`` (``"512k"``) on ``where`` (created); False when this machine cannot (not root).

    A small real file system that fills up: the ENOSPC tests write their stores on it.
    """
    import shutil

    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)], check=False, capture_output=True
    )
    return done.returncode == 0


def as_plain_reader(argv: Sequence[str]) -> list[str]:
    """``argv`` run as a reader that file permissions bind: root without the capabilities that bypass them.

    Unchanged when not root (permissions bind already); skips the test where root cannot drop them (no capsh).
    """
    import shutil

    if os.geteuid() != 0:
        return list(argv)
    if shutil.which("capsh") is None:
        pytest.skip("root reads every file, and capsh is missing to drop cap_dac_override")
    drop = "--drop=cap_dac_override,cap_dac_read_search"
    return ["capsh", drop, "--", "-c", 'exec "$@"', "reader", *argv]


def fuse_python() -> str | None:
    """A Python that can import fusepy (the venv's, or Debian's python3-fusepy), or None."""
    for python in (sys.executable, "/usr/bin/python3"):
        check = "import importlib.util as u, sys; sys.exit(0 if u.find_spec('fuse') or u.find_spec('fusepy') else 1)"
        if Path(python).exists() and subprocess.run([python, "-c", check], check=False).returncode == 0:
            return python
    return None


@contextlib.contextmanager
def fuse_mounted(server: Path, source: Path, mount: Path, *args: str, ready: str) -> Iterator[Path]:
    """``mount`` served by the FUSE script ``server`` (fusepy) over ``source``, once ``mount/ready`` shows; unmounted
    when the block ends.  Skips the test where /dev/fuse, fusermount or fusepy are missing, or the mount fails."""
    import shutil
    import time

    python = fuse_python()
    if not os.access("/dev/fuse", os.R_OK | os.W_OK) or python is None or shutil.which("fusermount") is None:
        pytest.skip("needs /dev/fuse, fusermount (fuse3/libfuse2) and fusepy (python3-fusepy)")
    mount.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([python, str(server), str(source), str(mount), *args], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120  # a Python FUSE server starts in seconds, more on a loaded machine
        while time.monotonic() < deadline and not (mount / ready).exists() and proc.poll() is None:
            time.sleep(0.1)
        if not (mount / ready).exists():
            pytest.skip(f"the FUSE mount did not come up: {proc.stderr.read().decode() if proc.stderr else ''}")
        yield mount
    finally:
        subprocess.run(["fusermount", "-u", str(mount)], check=False, capture_output=True)
        proc.terminate()
        proc.wait(timeout=30)


def fill(where: Path, leave: int) -> None:
    """Fill the file system of ``where`` up to ``leave`` bytes free (a file called ``filler``)."""
    free = os.statvfs(where).f_bavail * os.statvfs(where).f_frsize
    (where / "filler").write_bytes(b"\0" * max(0, free - leave))


@contextlib.contextmanager
def child(argv: Sequence[str], **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """``subprocess.Popen(argv, **popen)`` in its own process group, killed (SIGKILL, the whole group) and reaped
    when the block ends however it ends: a failed wait or assertion in the test leaves no process running."""
    proc = subprocess.Popen(argv, start_new_session=True, **popen)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()  # after SIGKILL: at once; reaps the child and closes its pipes
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@contextlib.contextmanager
def collector_kept() -> Iterator[None]:
    """The garbage collector left as it was around an in-process run of :func:`forensics.cli.main`, which sets its
    thresholds and at its end freezes what is alive, for a process about to exit: in a test process that would keep
    each run's garbage for good (+64 MB a ``report --vmcore``) and change the collection of every later test."""
    thresholds, freeze = gc.get_threshold(), gc.freeze
    gc.freeze = lambda: None
    try:
        yield
    finally:
        gc.freeze = freeze
        gc.set_threshold(*thresholds)


def cli_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``kforensic ARGS`` run in this process (:func:`cli_run`): its exit code and standard output."""
    ran = cli_run(monkeypatch, capsys, *args)
    sys.stderr.write(ran.stderr)  # captured again: pytest shows the command's stderr beside a failed assertion
    return ran.returncode, ran.stdout


def as_nobody(body: Callable[[], bool]) -> bool:
    """``body`` run in a forked child that gave up root (user and group 65534), as an ordinary user meets a file
    root can always read; whether it returned True. Skips the test where root may not change its user (a
    container that forbids setuid); only root can call it.
    """
    assert os.geteuid() == 0, "as_nobody needs root"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 2  # an exception in body
        try:
            try:
                os.setgid(65534)
                os.setuid(65534)
            except OSError:
                code = 4  # this container does not let root change its user
                raise
            code = 0 if body() else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) == 4:
        pytest.skip("cannot drop root here (setuid refused), so the ordinary user's view cannot be produced")
    return os.waitstatus_to_exitcode(status) == 0


@dataclass(frozen=True)
class Ran:
    """Exit status and output of an in-process run of the CLI."""

    returncode: int
    stdout: str
    stderr: str


def cli_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str | Path) -> Ran:
    """``kforensic ARGS`` through the CLI's real entry point (its error boundary included) in this process, for a
    test that needs a run's result where another test covers the command as a process: the interpreter's start-up
    and the imports (pandas, matplotlib, drgn: 0.5-1 s of CPU a run) are paid once; the collector left as it was
    (:func:`collector_kept`).  Its stderr holds what the run wrote to ``sys.stderr`` and the warnings a process
    would print (pytest's warnings plugin would take them to its summary instead), not what C code writes to
    file descriptor 2 itself."""
    from forensics.cli import main

    monkeypatch.setattr(sys, "argv", ["kforensic", *map(str, args)])
    capsys.readouterr()
    with warnings.catch_warnings():  # put back at the end: the filters and showwarning
        warnings.simplefilter("default")
        for category in _SILENT_IN_A_PROCESS:
            warnings.simplefilter("ignore", category)
        warnings.showwarning = _shown_on_stderr  # where it was raised among the run's lines, as a process has it
        try:
            with collector_kept():
                main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)


#: The warnings Python's default filters ignore in a process (outside ``__main__``), which cli_run leaves out too.
_SILENT_IN_A_PROCESS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def _shown_on_stderr(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """warnings.showwarning as a process's default: the formatted warning on stderr (here: the run's captured one)."""
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def serve_prometheus(answer: Callable[[str, dict[str, str]], bytes]) -> tuple[Any, str]:
    """A real local HTTP server standing in for Prometheus: each POST to /api/v1/ENDPOINT is answered with
    ``answer(ENDPOINT, form)`` as JSON.  Returns the server (``shutdown()`` it) and its URL."""
    import http.server
    import threading
    import urllib.parse

    class Api(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            form = dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()))
            body = answer(self.path.rsplit("/", 1)[-1], form)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
