"""Start-up of the CLI (issue #28): a run imports its own command's module alone, and says what it said before.

Real subprocesses, as a user starts them: what a run has imported is read from its ``sys.modules`` when it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from forensics.cli import COMMANDS, SUMMARIES, make_app

DATA = Path(__file__).resolve().parent.parent / "data"
LOG = DATA / "healthy" / "dmesg.txt.gz"
PERF = DATA / "healthy" / "perf.txt.gz"

#: Runs the CLI and prints, at its very end, the modules it imported (one per line, after a marker).
_SHOW_MODULES = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.__stderr__.write('\\nMODULES\\n' + '\\n'.join(sorted(sys.modules)) + '\\n'))\n"
    "sys.argv = ['kforensic', *sys.argv[1:]]\n"
    "from forensics.cli import main\n"
    "main()\n"
)
#: The same CLI with its ``--help`` list made from every command module (what it was before the summaries).
_FULL_LISTING = (
    "import sys, typer, forensics.cli as cli\n"
    "cli.listing = lambda: typer.main.get_command(cli.make_app())\n"
    "sys.argv = ['kforensic', *sys.argv[1:]]\n"
    "cli.main()\n"
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
    assert _command_modules(modules) == {"forensics.commands.dmesg"}
    assert not [m for m in HEAVY if m in modules]


def test_folded_stacks_of_a_small_profile_import_neither_numpy_nor_the_report() -> None:
    code, modules = _imported("profile", "-", "--folded", "-", stdin=PERF)
    assert code == 0
    # `profile SRC --folded -` alone is run without the option parser (forensics.cli._folded_only): no typer.
    assert _command_modules(modules) == {"forensics.commands.profile_folded"}
    assert not [m for m in (*HEAVY, "forensics.report.profile", "forensics.report.flamegraph") if m in modules]
    assert not [m for m in modules if m.split(".")[0] in ("typer", "click")]
    # One word more and the command line is parsed as every other (typer), the command's module then running the
    # same folded-only way.
    code, modules = _imported("profile", "-", "--folded", "-", "--top", "15", stdin=PERF)
    assert code == 0 and "typer" in modules
    assert _command_modules(modules) == {"forensics.commands.profile", "forensics.commands.profile_folded"}


_CLI = "import sys\nsys.argv = ['kforensic', *sys.argv[1:]]\nfrom forensics.cli import main\nmain()\n"


@pytest.mark.parametrize(
    "source",
    [PERF, DATA / "profile" / "flat.perf.txt.gz", "-", "missing.txt", "empty.txt", "garbage.txt", "a-dir", ""],
    ids=str,
)
def test_folded_stacks_alone_say_what_the_parsed_command_says(source: str | Path, tmp_path: Path) -> None:
    # Made without typer, `profile SRC --folded -` writes, says and exits as the same command parsed by typer (one
    # option more, at its default) does: on recordings, on stdin, and on inputs that fail (exit 3).
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "garbage.txt").write_bytes(b"not a profile\n\n")
    (tmp_path / "a-dir").mkdir()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        alone = _run(_CLI, "profile", source, "--folded", "-", stdin=PERF)
        parsed = _run(_CLI, "profile", source, "--folded", "-", "--top", "15", stdin=PERF)
    finally:
        os.chdir(cwd)
    assert (alone.returncode, alone.stdout, alone.stderr) == (parsed.returncode, parsed.stdout, parsed.stderr)
    assert alone.returncode in (0, 3) and (alone.stdout or alone.stderr.startswith("kforensic: error: "))


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
def test_the_listing_says_what_every_command_module_said(args: list[str], columns: int) -> None:
    listing = _run(_FULL_LISTING.replace("cli.listing = ", "_ = "), *args, columns=columns)
    full = _run(_FULL_LISTING, *args, columns=columns)
    assert (listing.returncode, listing.stdout, listing.stderr) == (full.returncode, full.stdout, full.stderr)
    assert listing.stdout.count("\n  ") >= (len(SUMMARIES) if args[:1] == ["--help"] else 0)
