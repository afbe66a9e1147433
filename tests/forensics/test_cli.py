"""The CLI as a user runs it: a real subprocess, real files, exit codes and messages."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from forensics.cli import app
from forensics.serialize import incident_to_dict
from tests.forensics.factories import incident_of, line_evidence, null_deref_finding, write_log


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m forensics ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "forensics", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _command_paths() -> list[list[str]]:
    """Every command of the CLI as argv prefixes, sub-commands of groups included."""
    paths: list[list[str]] = []

    def walk(typer_app: typer.Typer, prefix: list[str]) -> None:
        for cmd in typer_app.registered_commands:
            paths.append([*prefix, cmd.name or (cmd.callback.__name__ if cmd.callback else "")])
        for group in typer_app.registered_groups:
            assert group.typer_instance is not None
            name = group.name or group.typer_instance.info.name
            assert isinstance(name, str)
            paths.append([*prefix, name])
            walk(group.typer_instance, [*prefix, name])

    walk(app, [])
    return paths


def test_help_lists_every_command() -> None:
    result = run("--help")
    assert result.returncode == 0
    top = {p[0] for p in _command_paths()}
    assert "report" in top
    for name in top:
        assert name in result.stdout


@pytest.mark.parametrize("path", _command_paths(), ids=" ".join)
def test_every_command_has_help_with_an_example(path: list[str]) -> None:
    result = run(*path, "-h")
    assert result.returncode == 0, result.stderr
    assert "Example" in result.stdout
    assert "kforensic " in result.stdout.split("Example", 1)[1]


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("kforensic ")


def test_heavy_libraries_are_not_imported_at_start_up() -> None:
    heavy = "('drgn', 'pandas', 'scipy', 'matplotlib', 'numpy', 'numba')"
    code = f"import sys, forensics.cli; print(sorted(m for m in {heavy} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("raised", "code", "said"),
    [("KeyboardInterrupt", 130, "kforensic: error: interrupted"), ("ValueError('x')", 1, "Traceback")],
)
def test_ctrl_c_while_starting_up_is_exit_130_in_one_line(raised: str, code: int, said: str) -> None:
    # Ctrl-C in the first ~0.2 s lands while the interpreter imports typer, before main() can catch it: it was a
    # traceback and a death by SIGINT (tests/hostile/battery.py, signal cases). Anything else keeps its traceback.
    result = subprocess.run(
        [sys.executable, "-c", f"import forensics.cli\nraise {raised}"], capture_output=True, text=True, check=False
    )
    assert result.returncode == code, result.stderr
    assert said in result.stderr
    assert ("Traceback" in result.stderr) == (code != 130), result.stderr


def _findings_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    log = write_log(tmp_path)
    ev1 = line_evidence(log, 2, "BUG: kernel NULL pointer dereference, address: 0000000000000018", 12.345678)
    ev2 = line_evidence(log, 4, "RIP: 0010:kf_null_member_read+0x1a/0x40 [kf_buggy]", 12.345701)
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps(incident_to_dict(incident_of((null_deref_finding((ev1,)),)))))
    b.write_text(json.dumps(incident_to_dict(incident_of((null_deref_finding((ev2,)),)))))
    return log, a, b


def test_report_merges_overlapping_findings_with_all_evidence(tmp_path: Path) -> None:
    log, a, b = _findings_files(tmp_path)
    out = tmp_path / "incident.json"
    result = run("report", "--from", str(a), str(b), "--format", "json", "-o", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert len(doc["findings"]) == 1
    evidence = doc["findings"][0]["evidence"]
    assert [e["locator"]["start"] for e in evidence] == [2, 4]
    assert all(e["source"] == str(log) for e in evidence)
    assert {Path(s["path"]).name for s in doc["sources"]} >= {"a.json", "b.json"}
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_report_markdown_to_file(tmp_path: Path) -> None:
    _, a, b = _findings_files(tmp_path)
    out = tmp_path / "incident.md"
    result = run("report", "--from", str(a), "--from", str(b), "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.count("### 1. BUG: unable to handle kernel NULL pointer dereference in kf_null_member_read") == 1
    assert "line 2" in text
    assert "line 4" in text
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_fail_on(tmp_path: Path) -> None:
    _, a, _ = _findings_files(tmp_path)
    assert run("report", "--from", str(a), "--fail-on", "high").returncode == 1
    assert run("report", "--from", str(a), "--fail-on", "critical").returncode == 0
    assert run("report", "--from", str(a)).returncode == 0


@pytest.mark.parametrize("kind", ["missing", "directory", "not-json", "wrong-schema"])
def test_unreadable_input_exits_3_with_one_line_naming_it(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "input.json"
    if kind == "directory":
        target.mkdir()
    elif kind == "not-json":
        target.write_bytes(b"\x7fELF\x00\x01garbage")
    elif kind == "wrong-schema":
        target.write_text('{"schema": "something/9"}')
    result = run("report", "--from", str(target))
    assert result.returncode == 3
    lines = result.stderr.splitlines()
    assert lines[0].startswith("kforensic: error: ")
    assert str(target) in lines[0]
    assert len(lines) <= 2
    assert "Traceback" not in result.stderr


LOG = "vmcore_fixtures/cases/02-bug-on/console.log"
PERF = "tests/data/profile/lost.perf.txt.gz"

# Every command with bad input (exit 3) or a usage error (exit 2): "{missing}" is a path that does not exist.
DEBUG_CASES = [
    ("dmesg", "{missing}"),
    ("dmesg", LOG, "--fail-on", "bogus"),
    ("dmesg", LOG, "--no-such-option"),
    ("vmcore", "{missing}", "--no-debuginfod"),
    ("trace", "{missing}"),
    ("trace", LOG, "--bucket-ms", "0"),
    ("profile", "README.md"),
    ("profile", PERF, "--pid", "abc"),
    ("profile", PERF, "--comm", "nosuch"),
    ("leaks", "--store", "{missing}"),
    ("slab-watch", "--interval", "nan", "--store", "{missing}"),
    ("slab-import", "{missing}", "--store", "{missing}.sqlite"),
    ("slab-export", "--store", "{missing}"),
    ("kdump", "check", "--root", "{missing}"),
    ("kdump", "setup", "--root", "{missing}"),
    ("report", "--from", "{missing}"),
    ("report", "--dmesg", LOG, "--fail-on", "nope"),
    ("report",),
]


@pytest.mark.parametrize("args", DEBUG_CASES, ids=[" ".join(a) for a in DEBUG_CASES])
def test_debug_tells_where_bad_input_was_raised_never_a_traceback(args: tuple[str, ...], tmp_path: Path) -> None:
    # The developers' guide: bad input and usage errors are one clear line, also under --debug (a traceback
    # was printed before the line). --debug adds one line: where the error was raised, in kforensic's code.
    argv = [a.replace("{missing}", str(tmp_path / "missing")) for a in args]
    plain = run(*argv)
    debug = run(*argv, "--debug")
    assert plain.returncode in (2, 3), plain.stderr
    assert debug.returncode == plain.returncode, debug.stderr
    assert "Traceback" not in debug.stderr and "Traceback" not in plain.stderr, debug.stderr
    told = debug.stderr.splitlines()
    assert told[:-1] == plain.stderr.splitlines(), debug.stderr
    said = re.fullmatch(r"kforensic: debug: (\w+) raised at (\S+):(\d+) \((\w+)\)(, called from .*)?", told[-1])
    assert said, told[-1]
    where = Path(said[2])
    if where.parts[0] in ("forensics", "collectors", "detectors"):  # kforensic's own code: the raising line
        source = where.read_text().splitlines()[int(said[3]) - 1]
        assert "raise" in source or "fail" in source, source


def test_debug_keeps_the_traceback_of_an_internal_error(tmp_path: Path) -> None:
    # Exit 4 is a bug in kforensic: --debug is there for its traceback. A command planted for the test raises.
    code = (
        "import sys, typer, forensics.cli as cli\n"
        "def register(app):\n"
        "    @app.command('boom')\n"
        "    def boom(debug: bool = typer.Option(False, '--debug')) -> None:\n"
        "        raise ZeroDivisionError('planted')\n"
        "cli.COMMANDS['boom'] = register\n"
        "sys.argv = ['kforensic', *sys.argv[1:]]\n"
        "cli.main()\n"
    )
    for debug in (False, True):
        done = subprocess.run(
            [sys.executable, "-c", code, "boom", *(["--debug"] if debug else [])],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 4, done.stderr
        assert "kforensic: error: internal error: ZeroDivisionError: planted" in done.stderr
        assert ("Traceback (most recent call last)" in done.stderr) == debug, done.stderr


def test_bad_option_and_missing_arguments_exit_2(tmp_path: Path) -> None:
    assert run("report", "--no-such-option").returncode == 2
    assert run("no-such-command").returncode == 2
    missing = run("report")
    assert missing.returncode == 2
    assert "at least one input" in missing.stderr
    assert run("report", "--format", "pdf", "--from", "x").returncode == 2


def test_unwritable_output_exits_3(tmp_path: Path) -> None:
    _, a, _ = _findings_files(tmp_path)
    result = run("report", "--from", str(a), "-o", str(tmp_path / "no" / "such" / "dir" / "x.md"))
    assert result.returncode == 3
    assert "cannot write" in result.stderr


def test_existing_output_survives_a_failed_run(tmp_path: Path) -> None:
    out = tmp_path / "incident.md"
    out.write_text("previous report\n")
    result = run("report", "--from", str(tmp_path / "missing.json"), "-o", str(out))
    assert result.returncode == 3
    assert out.read_text() == "previous report\n"


def test_python_dash_m_and_console_script_agree() -> None:
    script = Path(sys.executable).with_name("kforensic")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, check=False, env=os.environ)
    assert result.stdout == run("--version").stdout


def test_command_table_names_every_registered_command() -> None:
    from forensics.cli import COMMANDS, make_app

    registered = {p[0] for p in _command_paths()}
    assert registered == set(COMMANDS)
    for name in COMMANDS:
        alone = {c.name for c in make_app((name,)).registered_commands} | {
            g.name or "" for g in make_app((name,)).registered_groups
        }
        assert name in alone
