"""Where ``make test``'s CPU time goes: every test's CPU seconds (its process and the children it waited for).

Issue #28 asks for ``make test`` in <= 5 min on 2 cores; its pytest step is bound by CPU (3 pytest-xdist
workers on 2 cores), so the wall time follows the CPU seconds, and wall durations (``--durations``) mostly
measure what else the machine was doing.  This script runs the suite as ``make pytest`` does, with itself
loaded as a pytest plugin in each worker (``-p benchmarks.suite_cpu``): around each test it reads
``getrusage`` of the worker and of its waited-for children (crash, drgn, babeltrace2, perl, the ``python -m
forensics`` runs, the ahead-of-time build) and appends one row to a file per worker.  It then prints the
largest tests and files, the sum, pytest's own wall and CPU time and the load average.  Servers a test
starts and kills without waiting (Prometheus, Chromium) are not counted.

It runs every test, both tiers: ``-- -m "not native_build"`` runs what ``make test``'s pytest runs (the tests that
build native code with a C compiler are ``make test-native``'s; tests/conftest.py, ``NATIVE_BUILDS``).

``--children`` also counts each waited-for child by its command line (``kforensic trace``, ``crash``, ``perf``,
``python -c``, ...): in each worker ``os.waitpid`` is answered by ``os.wait4``, whose rusage is the child's and its
own waited-for descendants', and the command line is the one ``subprocess.Popen`` started under that pid (a bare
``os.fork`` shows as ``fork``).  It prints the children's CPU by command and by test file, and what the workers'
children cost that no ``os.waitpid`` saw (``os.system``, C code waiting for its own children).

make test runs its prelude first (``make jit``: the numba kernels compiled into this checkout's cache, which
numba keys on the source files' paths); so does this script unless ``--cold-jit`` is given, else the tests
compile them themselves: +150 s of CPU on 2026-12-06 (test_ctf_aot 49 -> 143 s, test_perf_chains 33 -> 49 s).

    .venv/bin/python benchmarks/suite_cpu.py [--top 30] [--rows FILE] [--cold-jit] [--children] [-- PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUT_ENV = "KFORENSIC_TEST_CPU_DIR"  # where each worker writes its rows (set by main for the children)
CHILDREN_ENV = "KFORENSIC_TEST_CPU_CHILDREN"  # set: each worker also writes a row per child it waits for
_running = {"node": "(between tests)"}  # the test running in this worker, for the children's rows


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _wrapper_skipped(argv: list[str]) -> list[str]:
    """``argv`` without the programs that only start another (env, nice, timeout, capsh's ``exec "$@"``...)."""
    while argv:
        name = os.path.basename(argv[0])
        if name == "env":
            argv = argv[1:]
            while argv and (argv[0].startswith("-") or "=" in argv[0]):
                argv = argv[2:] if argv[0] in ("-u", "--unset", "-C") else argv[1:]
        elif name in ("nice", "ionice", "timeout", "setsid", "stdbuf", "chrt", "taskset", "unshare", "time"):
            argv = argv[1:]
            while argv and (argv[0].startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", argv[0])):
                argv = argv[1:]
        elif name == "capsh" and "--" in argv:
            rest = argv[argv.index("--") + 1 :]
            argv = rest[3:] if rest[:2] == ["-c", 'exec "$@"'] else rest
        elif name == "setpriv":
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[1:]
        else:
            return argv
    return argv


def command_kind(args: Any) -> str:
    """A child's command line as its kind: ``kforensic SUBCOMMAND`` for ``python -m forensics`` (and the
    ``kforensic`` script), ``python -m MODULE``, ``python -c``, ``python SCRIPT``, else the program's name."""
    if isinstance(args, (str, bytes, os.PathLike)):
        text = os.fsdecode(args)
        return f"sh: {os.path.basename(text.split()[0])}" if text.split() else "sh"
    argv = _wrapper_skipped([os.fsdecode(a) for a in args])
    if not argv:
        return "(empty)"
    name = os.path.basename(argv[0])
    rest = argv[1:]
    if name == "kforensic" or (re.fullmatch(r"python[\d.]*", name) and rest[:2] == ["-m", "forensics"]):
        rest = rest if name == "kforensic" else rest[2:]
        words = [a for a in rest if not a.startswith("-")]
        return "kforensic " + (words[0] if words else "(options only)")
    if re.fullmatch(r"python[\d.]*", name):
        while rest and rest[0] in ("-I", "-E", "-s", "-S", "-u", "-B", "-q", "-X", "-W"):
            rest = rest[2:] if rest[0] in ("-X", "-W") else rest[1:]
        if rest[:1] == ["-m"] and len(rest) > 1:
            return f"python -m {rest[1]}"
        if rest[:1] == ["-c"]:
            # a wrapper that execs its arguments (the hostile battery's peak RSS, a terminal's SIGINT): theirs
            wrapped = len(rest) > 2 and "execvp(sys.argv[1]" in rest[1]
            return f"{command_kind(rest[2:])} (wrapped)" if wrapped else "python -c"
        return f"python {os.path.basename(rest[0])}" if rest else "python"
    return name


def _watch_children(where: str) -> None:
    """Each child this worker waits for written as a row (CPU s, test, kind, command line): ``os.waitpid`` answered
    by ``os.wait4`` (and subprocess's poll, which keeps its own reference to waitpid), the command line recorded
    by ``subprocess.Popen`` under the child's pid."""
    import json
    import subprocess as sp

    started: dict[int, Any] = {}
    execute = sp.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(self: sp.Popen[Any], args: Any, *rest: Any, **kw: Any) -> None:
        execute(self, args, *rest, **kw)
        started[self.pid] = args

    def waitpid(pid: int, options: int) -> tuple[int, int]:
        done, status, usage = os.wait4(pid, options)
        if done:
            args = started.pop(done, None)
            cpu = usage.ru_utime + usage.ru_stime
            kind = "fork" if args is None else command_kind(args)
            line = "" if args is None else (args if isinstance(args, str) else " ".join(map(os.fsdecode, args)))
            row = json.dumps([round(cpu, 3), _running["node"], kind, line[:400]])
            with open(Path(where) / f"{os.getpid()}.children", "a", encoding="utf-8") as out:
                out.write(row + "\n")
        return done, status

    sp.Popen._execute_child = execute_child  # type: ignore[attr-defined]
    os.waitpid = waitpid
    poll = sp.Popen._internal_poll  # type: ignore[attr-defined]
    defaults = list(poll.__defaults__)
    defaults[1] = waitpid  # (_deadstate, _waitpid, _WNOHANG, _ECHILD)
    poll.__defaults__ = tuple(defaults)


def pytest_configure(config: pytest.Config) -> None:
    """In a worker of ``--children``'s run: watch the children it waits for."""
    where = os.environ.get(OUT_ENV)
    if where and os.environ.get(CHILDREN_ENV) and os.environ.get("PYTEST_XDIST_WORKER"):
        _watch_children(where)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    """One row per test: own CPU, children's CPU, wall, node id (setup, call and teardown together), its end on the
    monotonic clock (shared by the workers: the run's timeline)."""
    where = os.environ.get(OUT_ENV)
    _running["node"] = item.nodeid
    own0, children0 = _cpu()
    start = time.monotonic()
    yield
    if where:
        own1, children1 = _cpu()
        end = time.monotonic()
        row = f"{own1 - own0:.3f}\t{children1 - children0:.3f}\t{end - start:.3f}\t{item.nodeid}\t{end:.3f}\n"
        with open(Path(where) / f"{os.getpid()}.tsv", "a", encoding="utf-8") as out:
            out.write(row)


def _print_timeline(per_worker: dict[str, list[list[str]]], start: float, wall: float) -> None:
    """When each worker ran its first and last test (seconds after pytest started) and the last tests of the run:
    a worker that ends early leaves a core idle while the others finish (the run's tail)."""
    print("\nworker timeline (s after pytest started; collection and start-up before the first test)")
    ends = []
    for worker, rows in sorted(per_worker.items()):
        times = [(float(r[4]) - start - float(r[2]), float(r[4]) - start, r[3]) for r in rows]
        busy = sum(end - begin for begin, end, _ in times)
        print(
            f"  {worker}: {len(rows)} tests, first at {min(t[0] for t in times):.0f}, last ended at "
            f"{max(t[1] for t in times):.0f}, running tests {busy:.0f} s"
        )
        ends += times
    print(f"  pytest ended at {wall:.0f}; the tests still running in its last 60 s:")
    for begin, end, node in sorted(ends, key=lambda t: t[1])[-400:]:
        if end > wall - 60 and end - begin > 5:
            print(f"    {begin:6.0f} -> {end:6.0f}  {node}")


def print_children(children: list[list[Any]], waited: float, top: int) -> None:
    """The children's CPU by command kind and by test file (``--children``'s rows: CPU, node id, kind, line)."""
    by_kind: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    kind_files: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    file_kinds: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for cpu, node, kind, _line in children:
        name = node.split("::")[0]
        for table, key in ((by_kind, kind), (by_file, name)):
            table[key][0] += cpu
            table[key][1] += 1
        kind_files[kind][name] += cpu
        file_kinds[name][kind] += cpu
    seen = sum(c[0] for c in children)
    print(
        f"\nthe children: {len(children)} waited for, {seen:.0f} s CPU; the tests' children's column {waited:.0f} s "
        f"({waited - seen:.0f} s not seen by os.waitpid: os.system, or reaped in C)"
    )

    def largest(shares: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.1f}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1])[:3])

    print(f"\n{'CPU s':>7} {'runs':>5} {'each':>6}  children by command (the files that ran it most)")
    for kind, (cpu, n) in sorted(by_kind.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{cpu:7.1f} {n:5.0f} {cpu / n:6.2f}  {kind}  ({largest(kind_files[kind])})")
    print(f"\n{'CPU s':>7} {'runs':>5} {'each':>6}  children by test file (their largest commands)")
    for name, (cpu, n) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{cpu:7.1f} {n:5.0f} {cpu / n:6.2f}  {name}  ({largest(file_kinds[name])})")


def main() -> None:
    """Run the suite with the plugin and print where the CPU went."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=30, help="tests and files shown (largest CPU first)")
    parser.add_argument(
        "--rows", type=Path, help="also keep every test's row (own CPU, children's, wall, node id, end) in this file"
    )
    parser.add_argument(
        "--cold-jit",
        action="store_true",
        help="leave numba's cache as it is (default: compile the kernels first, as make test's prelude does)",
    )
    parser.add_argument(
        "--children",
        action="store_true",
        help="also count the waited-for children by command line (rows kept beside --rows, as FILE.children)",
    )
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    from machine import machine_line  # (here: the workers import this file as benchmarks.suite_cpu, a plugin)

    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
    if not args.cold_jit:
        # make test compiles the JIT kernels before pytest (make jit: JIT_PARTS); without them in the cache (a fresh
        # clone, or any change to a keyed source, forensics/jit.py) the first test of each worker to run a kernel
        # compiled it, and its CPU was counted as the test's: test_perf_chains' [flat] and [contend] 14.6 / 14.3 s,
        # 0.7 s for all nine recordings with the chunk pass in the cache.
        make_jit = ["make", "--no-print-directory", "-j2", "jit"]
        jit = subprocess.run(make_jit, cwd=ROOT, capture_output=True, text=True, check=False)
        if jit.returncode != 0:
            sys.exit(f"suite_cpu: make jit failed (exit {jit.returncode}):\n{jit.stderr.strip()}")
    workers = str((os.cpu_count() or 1) + 1)  # as make pytest
    with tempfile.TemporaryDirectory(prefix="kf-test-cpu-") as where:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {CHILDREN_ENV: "1"} if args.children else {}
        env |= {OUT_ENV: where, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))}
        argv = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            workers,
            "--dist",
            "loadgroup",
            "-p",
            "benchmarks.suite_cpu",
        ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        done = subprocess.run(
            [*argv, *args.pytest_args], cwd=ROOT, env=env, check=False, capture_output=True, text=True
        )
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        per_worker = {
            f.stem: [line.split("\t") for line in f.read_text().splitlines()] for f in Path(where).glob("*.tsv")
        }
        rows = [row for worker in per_worker.values() for row in worker]
        children = [json.loads(line) for f in Path(where).glob("*.children") for line in f.read_text().splitlines()]
    if args.rows is not None:
        args.rows.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")
        if args.children:
            kept = args.rows.with_name(args.rows.name + ".children")
            kept.write_text("".join(json.dumps(c) + "\n" for c in children), encoding="utf-8")
    summary = done.stdout.strip().splitlines()[-1:] or ["(no pytest summary)"]
    total = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    tests = sorted(
        ((float(own) + float(kids), float(own), float(kids), node) for own, kids, _, node, _ in rows), reverse=True
    )
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # CPU, own, children's
    for cpu, own, kids, node in tests:
        for i, value in enumerate((cpu, own, kids)):
            by_file[node.split("::")[0]][i] += value
    print(f"pytest: {summary[0]}; {wall:.0f} s wall, {total:.0f} s CPU in all (workers, their children, pytest)")
    # pytest's own output is not shown: the failed tests' lines of its short summary (-ra, pyproject.toml's addopts),
    # or a run with a failure would not say which test it was.
    for line in done.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"  {line[:300]}")
    print(
        f"the tests: {sum(t[0] for t in tests):.0f} s CPU ({sum(t[1] for t in tests):.0f} s in the workers, "
        f"{sum(t[2] for t in tests):.0f} s in waited-for children); load {os.getloadavg()[0]:.1f} at the end"
    )
    print(f"\n{'CPU s':>7} {'own':>6} {'kids':>6}  largest tests")
    for cpu, own, kids, node in tests[: args.top]:
        print(f"{cpu:7.1f} {own:6.1f} {kids:6.1f}  {node}")
    # The children's column: the tools and the `python -m forensics` runs the file's tests waited for (where a
    # command's start-up or a process a test need not start shows).
    for title, column in (("largest files", 0), ("files whose tests' children cost most", 2)):
        print(f"\n{'CPU s':>7} {'own':>6} {'kids':>6}  {title}")
        for name, (cpu, own, kids) in sorted(by_file.items(), key=lambda kv: -kv[1][column])[: args.top]:
            print(f"{cpu:7.1f} {own:6.1f} {kids:6.1f}  {name}")
    if args.children:
        print_children(children, sum(t[2] for t in tests), args.top)
    _print_timeline(per_worker, start, wall)
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n", file=sys.stderr)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
