"""Start-up of the CLI (issue #28): a run imports its own command's module alone, and says what it said before.

Real subprocesses, as a user starts them: what a run has imported is read from its ``sys.modules`` when it ends.
What a run said before (typer's parsing of the same command line) is the reference its process is compared with.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from forensics import cli
from forensics.cli import COMMANDS, SUMMARIES, make_app
from tests.helpers import cli_run

DATA = Path(__file__).resolve().parent.parent / "data"
LOG = DATA / "healthy" / "dmesg.txt.gz"
PERF = DATA / "healthy" / "perf.txt.gz"
GOLDEN = Path(__file__).resolve().parent.parent / "detectors" / "dmesg" / "golden"

#: Runs the CLI and prints, at its very end, the modules it imported (one per line, after a marker).
_SHOW_MODULES = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.__stderr__.write('\\nMODULES\\n' + '\\n'.join(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['kforensic', *sys.argv[1:]]\n"
    "from forensics.cli import main\n"
    "main()\n"
)
HEAVY = ("numpy", "numba", "pandas", "scipy", "matplotlib", "drgn", "rich")


def _run(
    code: str, *args: str | Path, columns: int = 80, stdin: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    with open(stdin or os.devnull, "rb") as given:
        return subprocess.run(
            [sys.executable, "-c", code, *map(str, args)],
            stdin=given,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )


def _imported(*args: str | Path, stdin: Path | None = None) -> tuple[int, set[str]]:
    done = _run(_SHOW_MODULES, *args, stdin=stdin)
    _, marker, listed = done.stderr.rpartition("\nMODULES\n")
    assert marker, done.stderr
    return done.returncode, set(listed.split())


def _command_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("forensics.commands.") and m != "forensics.commands.common"}


def test_a_command_imports_its_own_module_and_no_heavy_library() -> None:
    code, modules = _imported("dmesg", "--format", "json", LOG)
    assert code == 0
    # A command line its table reads is run without typer (forensics.commandline): the body's module alone.
    assert _command_modules(modules) == {"forensics.commands.dmesg_run", "forensics.commands.shared"}
    assert not [m for m in modules if m.split(".")[0] in ("typer", "click")]
    assert not [m for m in HEAVY if m in modules]
    # One the table does not read (a bad value: typer says why) goes through typer and the command's declaration.
    code, modules = _imported("dmesg", "--format", "jsn", LOG)
    assert code == 2 and "typer" in modules
    assert _command_modules(modules) == {
        "forensics.commands.dmesg",
        "forensics.commands.dmesg_run",
        "forensics.commands.shared",
    }


def test_a_log_without_a_report_imports_neither_the_reading_nor_inspect() -> None:
    """Start-up (issue #28): a log without a report (the healthy log) imports no reading of report bodies
    (detectors.dmesg.why, its code listing and pointers), and on Python 3.11 no run imports ``inspect``
    (dataclasses' is deferred, forensics.codecache); a log with one reads it."""
    deferred = ("inspect", "dis", "ast") if sys.version_info < (3, 12) else ()  # (3.12's dataclasses asks inspect)
    code, modules = _imported("dmesg", "--format", "json", LOG)
    assert code == 0
    assert not [m for m in ("detectors.dmesg.why", "detectors.dmesg.code", *deferred) if m in modules]
    # A log of one chunk: the C heap left as it is (forensics/heap.py), without ctypes' import (~1.5 ms).
    assert not [m for m in ("forensics.heap", "ctypes") if m in modules]
    code, modules = _imported("dmesg", "--format", "json", GOLDEN / "hard_lockup_kmsg.log")
    assert code == 0
    assert "detectors.dmesg.why" in modules and not [m for m in deferred if m in modules]


def test_folded_stacks_of_a_small_profile_import_neither_numpy_nor_the_report() -> None:
    for extra in ([], ["--top", "15"]):
        code, modules = _imported("profile", "-", "--folded", "-", *extra, stdin=PERF)
        assert code == 0
        assert _command_modules(modules) == {
            "forensics.commands.profile_run",
            "forensics.commands.profile_folded",
            "forensics.commands.shared",
        }
        assert not [m for m in (*HEAVY, "forensics.report.profile", "forensics.report.flamegraph") if m in modules]
        assert not [m for m in modules if m.split(".")[0] in ("typer", "click")]


def test_a_store_that_is_not_there_is_said_before_the_analysis_is_imported(tmp_path: Path) -> None:
    code, modules = _imported("leaks", "--store", tmp_path / "missing.db")
    assert code == 3
    assert not [m for m in (*HEAVY, "detectors.leaks.analysis") if m in modules]


_CLI = "import sys\nsys.argv = ['kforensic', *sys.argv[1:]]\nfrom forensics.cli import main\nmain()\n"
GOLDEN = DATA.parent / "detectors" / "dmesg" / "golden"
FTRACE = DATA / "traces" / "kf.ftrace.txt.gz"  # the small bundled trace: its run 0.2 s of CPU, the healthy one 0.9 s
FINDINGS = GOLDEN / "hard_lockup_kmsg.log"

#: Command lines (after ``kforensic``) both ways must answer alike: results, every exit status, --debug lines.
SAME = [
    ["dmesg", LOG],
    ["dmesg", "--format", "json", FINDINGS],
    ["dmesg", "-f", "md", FINDINGS, "--fail-on", "high"],
    ["dmesg", "-fhtml", FINDINGS, "--fail-on=CRITICAL"],
    ["dmesg", "-"],
    ["dmesg"],
    ["dmesg", "--format", "json", "-o", "out.json", FINDINGS],
    ["dmesg", "-o", "-", FINDINGS],
    ["dmesg", "missing.log"],
    ["dmesg", "--debug", "missing.log"],
    ["dmesg", "a-dir"],
    ["dmesg", "empty.log", "empty.log"],
    ["dmesg", "--debug", "empty.log", "empty.log"],
    ["dmesg", "-", "-"],
    ["dmesg", ""],
    ["dmesg", "garbage.log", "--force"],
    ["dmesg", "--workers", "2", LOG],
    ["dmesg", "--signatures", "--workers", "-1", LOG],
    ["dmesg", "--signatures", "--live"],
    ["dmesg", "--signatures", "--scheduler", "tcp://x:1", "--workers", "1", LOG],
    ["dmesg", "--debug", "--scheduler", "tcp://x:1", LOG],
    ["dmesg", "-o", "a-dir", LOG],
    ["dmesg", "-o", "nodir/", LOG],
    ["dmesg", "--format", "jsn", LOG],
    ["dmesg", "--live=yes"],
    ["dmesg", "--", LOG],
    ["dmesg", "-h"],
    ["profile", PERF, "--folded", "-"],
    ["profile", "-", "--folded", "-", "--top", "3"],
    ["profile", PERF, "--top", "5", "--format", "json"],
    ["profile", PERF, "--folded", "-", "--format", "json"],
    ["profile", PERF, "--kernel-only", "--user-only"],
    ["profile", PERF, "--window", "x"],
    ["profile", "missing.txt", "--folded", "-"],
    ["profile", "garbage.log", "--folded", "-", "--debug"],
    ["profile", "empty.log", "--folded", "-"],
    ["profile", "a-dir"],
    ["profile", PERF, "--top", "0"],
    ["profile"],
    ["leaks", "--store", "slab.db"],
    ["leaks", "--store", "slab.db", "--format", "json", "--fail-on", "low", "--min-rate", "1"],
    ["leaks", "--store", "slab.db", "--min-rate", "nan"],
    ["leaks", "--store", "slab.db", "--timeout", "0", "--min-rate", "-1"],
    ["leaks", "--store", "missing.db"],
    ["leaks", "--store", "slab.db", "--last", "x"],
    ["leaks", "--prometheus", "http://127.0.0.1:9", "--store", "slab.db"],
    ["leaks", "slab.db"],
    ["trace", FTRACE, "--format", "json", "--top", "3"],
    ["trace", FTRACE, "--around", "x"],
    ["trace", FTRACE, "--window", "1:0"],
    ["trace", FTRACE, "--hog-ms", "nan", "--bucket-ms", "0"],
    ["trace", FTRACE, "--kernel-clock", "tsc", "--span", "a..b"],
    ["trace", "-", "--spans", "-"],
    ["trace", "missing.txt", "--debug"],
    ["trace", FTRACE, "--slowest", "0"],
    ["report", "--dmesg", FINDINGS, "--dmesg", LOG, "--fail-on", "high"],
    ["report", "--dmesg", FINDINGS, "-f", "json", "-o", "out.json", "--digest-bytes", "100"],
    ["report", "--debug", "--dmesg", "missing.log"],
    ["report"],
]
SNAPSHOTS = DATA.parent.parent / "vmcore_fixtures" / "cases" / "08-slab-leak" / "snapshots"


@pytest.fixture(scope="module")
def slab_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store, as slab-import writes it: made once for the module's command lines that read one (each reads a
    copy of it); eight slab-import runs were 1.6 s of CPU (issue #28)."""
    store = tmp_path_factory.mktemp("store") / "slab.db"
    made = _run(_CLI, "slab-import", SNAPSHOTS, "--store", store, "--no-analysis")
    assert made.returncode == 0, made.stderr
    return store


@pytest.mark.parametrize("args", SAME, ids=repr)
def test_a_command_line_run_without_typer_says_what_typer_says(
    args: list[str | Path],
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    # Output, standard error, exit status and written files byte for byte those of the same command line parsed by
    # typer (the command's declaration then calling the same body), on results, bad input, usage errors and help.
    # The run as users get it is a real process; typer's answer, the reference, is the same CLI in this process with
    # no command's table (as before forensics.commandline), through its real entry (tests.helpers.cli_run; capfd:
    # what the run writes to descriptors 1 and 2 too, `-o -`).  It was a second process: half the module's 26 s of
    # CPU (issue #28); its answers were those of the process on every command line here (checked 2026-12-06).
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "garbage.log").write_bytes(b"not a log \xff\x00\n\n")
    (tmp_path / "a-dir").mkdir()
    if "slab.db" in args:
        shutil.copy2(request.getfixturevalue("slab_store"), tmp_path / "slab.db")  # its mode too
    monkeypatch.chdir(tmp_path)
    stdin = LOG if "-" in args else None
    done = _run(_CLI, *args, stdin=stdin)
    answers = [(done.returncode, _unclocked(done.stdout), done.stderr, _written())]
    monkeypatch.setattr(cli, "TABLES", {})  # every command line parsed by typer
    monkeypatch.setenv("COLUMNS", "80")  # as _run gives the process
    with open(stdin or os.devnull, encoding="utf-8") as given:
        monkeypatch.setattr(sys, "stdin", given)
        typer_said = cli_run(monkeypatch, capfd, *args)
    answers.append((typer_said.returncode, _unclocked(typer_said.stdout), typer_said.stderr, _written()))
    assert answers[0] == answers[1]
    assert answers[0][0] in (0, 1, 2, 3), answers[0]


def _written() -> str | None:
    """out.json as a run wrote it (without its reading times), removed for the next run; None if none was."""
    out = Path("out.json")
    if not out.exists():
        return None
    written = _unclocked(out.read_bytes())
    out.unlink()
    return written


#: How long an input took to read, the one thing two runs' outputs differ in: JSON, the markdown's table of inputs
#: (after the input's SHA-256), the text's "read in 0.02 s".
_CLOCKS = re.compile(r'(?<="seconds":) ?[0-9.e-]+|(?<=[0-9a-f]{64} \| )[0-9.]+(?= \|)|(?<= read in )[0-9.]+(?= s\b)')


def _unclocked(text: str | bytes) -> str:
    """The output without the inputs' reading times."""
    return _CLOCKS.sub("X", text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text)


@pytest.mark.parametrize("args", [["--help"], ["--version"], [], ["no-such-command"]], ids=repr)
def test_the_root_alone_imports_no_command_module(args: list[str]) -> None:
    _, modules = _imported(*args)
    assert _command_modules(modules) == set()
    assert "forensics.commands.common" not in modules


def test_summaries_are_the_first_sentences_of_the_commands_help_in_their_order() -> None:
    group = typer.main.get_command(make_app())
    assert isinstance(group, typer.core.TyperGroup)
    listed = group.list_commands(typer.Context(group))
    assert listed == list(SUMMARIES)
    assert set(SUMMARIES) == set(COMMANDS)
    for name in listed:
        command = group.commands[name]
        first = (command.help or "").split("\n\n", 1)[0]
        assert SUMMARIES[name] == " ".join(first.split()), name
        assert command.short_help is None and not command.hidden and not command.deprecated


@pytest.mark.parametrize(
    ("args", "columns"),
    [(["--help"], 40), (["--help"], 80), (["--help"], 200), ([], 80), (["dmsg"], 80), (["-h", "dmesg"], 80)],
    ids=repr,
)
def test_the_listing_says_what_every_command_module_said(
    args: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    listing = _run(_CLI, *args, columns=columns)
    # The reference, in this process (as in test_a_command_line_run_without_typer_says_what_typer_says): the same
    # CLI with its list made from every command module (what it was before the summaries).
    monkeypatch.setattr(cli, "listing", lambda: typer.main.get_command(cli.make_app()))
    monkeypatch.setenv("COLUMNS", str(columns))
    with open(os.devnull, encoding="utf-8") as nothing:
        monkeypatch.setattr(sys, "stdin", nothing)
        full = cli_run(monkeypatch, capfd, *args)
    assert (listing.returncode, listing.stdout, listing.stderr) == (full.returncode, full.stdout, full.stderr)
    assert listing.stdout.count("\n  ") >= (len(SUMMARIES) if args[:1] == ["--help"] else 0)
