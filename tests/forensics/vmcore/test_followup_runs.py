"""Every ``next:`` command the vmcore report prints runs as printed, on every fixture case; so do the ``crash>``
commands of the causes ``kforensic dmesg`` reads from the case's console log (the same crash).

The report's markdown is read the way a user reads it: the Follow-up section says how to open
the dump in crash and drgn, and each ``next:`` line holds commands in code spans. ``crash>``
commands are run in one crash session per case (``crash -s VMLINUX DUMP -i SCRIPT``: the
follow-up's ``mod -s`` lines first, then each command between ``eval`` markers), ``>>>``
expressions in one drgn session (the follow-up's drgn command line, the expressions on stdin),
everything else in a POSIX shell from the repository's top directory. A command passes when
it exits 0, prints something, and crash prints no error for it (``invalid``, ``not found``,
``Usage:`` ...).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from forensics.report.document import PASTE_LANG
from tests.vmcore_cases import FIXTURES_DIR, PRIMARY_KERNEL, analysed, case_group, case_names, on_case

REPO = FIXTURES_DIR.parent
#: The case the harness' own check reads (in its xdist group: the worker that analysed it for its other tests).
FIRST = (case_names() or ["01-null-member"])[0]
_CODE = re.compile(r"`([^`]+)`")
#: What crash prints when a command did not do what it says.
_CRASH_ERRORS = re.compile(
    r"^(?:\w+: )?(?:invalid|symbol not found|cannot|no such|unknown|ambiguous|not supported)|^Usage:|^crash: "
    r"|^\S+: kernel virtual address not found|^WARNING: cannot",
    re.M,
)
#: Commands that record data for hours: checked as printed plus a flag that prints their plan and exits.
_RECORDERS = {"kforensic slab-watch": "--systemd-unit"}
#: drgn's interactive mode, as ``drgn -c DUMP -s FILE...`` starts it on a terminal (stdin lines typed at ``>>>``).
_DRGN_PROMPT = """
import contextlib, sys, drgn, drgn.cli
args = sys.argv[1:]
prog = drgn.Program()
prog.set_core_dump(args[args.index("-c") + 1])
files = [args[i + 1] for i, a in enumerate(args) if a == "-s"]
with contextlib.suppress(drgn.MissingDebugInfoError):
    prog.load_debug_info(files, default=True)
drgn.cli.run_interactive(prog)
"""


@dataclass
class Printed:
    """The follow-up sessions and next commands of one printed report."""

    crash: str = ""
    crash_setup: list[str] = field(default_factory=list)
    drgn: str = ""
    commands: list[str] = field(default_factory=list)


def _blocks_after(markdown: str, lead: str) -> list[str]:
    """The lines of the code block that follows the paragraph starting with ``lead``, continuations joined."""
    after = markdown.split(lead, 1)[1].split(f"```{PASTE_LANG}\n", 1)[1].split("\n```", 1)[0]
    return after.replace(" \\\n    ", " ").splitlines()


def _read_report(markdown: str) -> Printed:
    out = Printed()
    # (a dump the installed crash does not open has no crash session: "crash: not for this dump")
    if "The `crash>` commands run in crash" in markdown:
        crash = _blocks_after(markdown, "The `crash>` commands run in crash")
        out.crash = crash[0]
        out.crash_setup = [line.removeprefix("crash> ") for line in crash[1:]]
    out.drgn = _blocks_after(markdown, "The `>>>` commands run in drgn")[0]
    for line in markdown.splitlines():
        if " next: " in line:
            out.commands += _CODE.findall(line.split(" next: ", 1)[1])
    return out


def _report(name: str, kernel: str = PRIMARY_KERNEL) -> tuple[str, Printed]:
    """``kforensic vmcore CASE --vmlinux V --module-debug KO --source-dir vmcore_fixtures -f md``, in process: the
    markdown of the case's analysis the other tests of its xdist group read (tests.vmcore_cases.analysed, once per
    worker; this test analysed it again, 0.2-0.5 s of CPU a case)."""
    from forensics.report.vmcore import render_vmcore_markdown

    _case, result = analysed(name, kernel)
    markdown = render_vmcore_markdown(result)
    return markdown, _read_report(markdown)


def _dmesg_commands(name: str) -> list[str]:
    """The ``crash>`` commands of the causes ``kforensic dmesg`` reads from the case's console log (the same crash
    as the dump's): a user with the log and the dump runs them in the same session."""
    from forensics.pipelines.dmesg import triage_file
    from forensics.report.markdown import next_commands
    from tests.vmcore_cases import load_case

    result = triage_file(str(load_case(name).console_log))
    steps = [w.cause.next_command for w in result.whys.values() if w.cause is not None]
    steps += [c.next_command for c in result.group_causes.values()]
    return [c for step in steps for c in next_commands(step)[0] if c.startswith("crash> ")]


def _run_crash(printed: Printed, commands: list[str], tmp_path: Path) -> list[tuple[str, str]]:
    """Each crash command with what crash printed for it."""
    if shutil.which("crash") is None:
        pytest.skip("crash is not installed (apt-get install crash)")
    script = tmp_path / "follow-up.crash"
    lines = [*printed.crash_setup]
    for i, command in enumerate(commands):
        lines += [f"eval {0x7F000 + i:#x}", command]
    lines += [f"eval {0x7F000 + len(commands):#x}", "exit"]
    script.write_text("\n".join(lines) + "\n")
    argv = [*shlex.split(printed.crash), "-i", str(script)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (argv, done.stdout[-3000:], done.stderr[-3000:])
    # eval's first line, e.g. "hexadecimal: 7f000  (508KB)": the marker before command N is 0x7f000 + N.
    pieces = re.split(r"^hexadecimal: 7f([0-9a-f]{3})\b.*$", done.stdout, flags=re.M)
    outputs: dict[int, str] = {}
    for i in range(1, len(pieces) - 1, 2):
        outputs[int(pieces[i], 16)] = "\n".join(
            line for line in pieces[i + 1].splitlines() if not re.match(r"\s*(decimal|octal|binary):", line)
        )
    assert len(outputs) == len(commands) + 1, done.stdout[-3000:]  # every marker seen: crash ran every command
    return [(c, outputs[i]) for i, c in enumerate(commands)]


#: The harness check's crash commands (test_the_harness_sees_a_command_fail): two that fail, one that does not.
_HARNESS_CRASH = ["struct -o struct kf_device", "bt 99999", "sys"]
#: What crash printed for each command of a case's session, by case: one session a case on this worker.
_crash_sessions: dict[str, dict[str, str]] = {}


def _crash_commands(name: str, printed: Printed) -> list[str]:
    """The ``crash>`` commands of a case's report and of the causes dmesg reads from its log, once each."""
    return list(
        dict.fromkeys(
            c.removeprefix("crash> ") for c in printed.commands + _dmesg_commands(name) if c.startswith("crash> ")
        )
    )


def _crash_session(name: str, printed: Printed, tmp_path: Path) -> dict[str, str]:
    """What crash printed for each of the case's commands, in one session run once on this worker: the case FIRST's
    also runs the harness check's commands (each started crash on the same dump before, ~1 s of CPU; crash runs each
    command between its own markers, and a command that fails changes nothing for the next)."""
    if name not in _crash_sessions:
        commands = _crash_commands(name, printed) + (_HARNESS_CRASH if name == FIRST else [])
        _crash_sessions[name] = dict(_run_crash(printed, list(dict.fromkeys(commands)), tmp_path))
    return _crash_sessions[name]


def _run_drgn(printed: Printed, expressions: list[str], tmp_path: Path) -> list[tuple[str, str]]:
    """Each ``>>>`` line with what drgn's interactive console printed for it; no line may raise."""
    done, outputs, errors = _drgn_session(printed, expressions, tmp_path)
    _no_errors(done, errors)
    return outputs


def _no_errors(done: subprocess.CompletedProcess[str], errors: list[str]) -> None:
    assert not errors, (errors, done.stdout[-3000:], done.stderr[-3000:])


def _drgn_session(
    printed: Printed, expressions: list[str], tmp_path: Path
) -> tuple[subprocess.CompletedProcess[str], list[tuple[str, str]], list[str]]:
    """The console's run, each ``>>>`` line with what it printed, and the errors it wrote."""
    argv = shlex.split(printed.drgn)
    assert argv[0] == "drgn"
    # A user's drgn loads its plugins (the % commands); the analysis in this process turned them off.
    env = {k: v for k, v in os.environ.items() if k != "DRGN_DISABLE_PLUGINS"} | {"HOME": str(tmp_path)}
    lines = "".join(f"print('@@@{i}')\n{e}\n" for i, e in enumerate(expressions)) + f"print('@@@{len(expressions)}')\n"
    done = subprocess.run(
        [sys.executable, "-c", _DRGN_PROMPT, *argv[1:]], input=lines, capture_output=True, text=True,
        timeout=300, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    pieces = re.split(r"^(?:>>> )*@@@(\d+)\s*$", done.stdout, flags=re.M)
    # Each output without the prompts the console wrote before it (">>> ", "... ").
    outputs = {
        int(pieces[i]): re.sub(r"^(?:(?:>>>|\.\.\.) )+", "", pieces[i + 1], flags=re.M)
        for i in range(1, len(pieces) - 1, 2)
    }
    # drgn's console writes a failed % command as "drgn: ..." and a Python error as its traceback.
    errors = re.findall(r"^(?:\w*(?:Error|Exception)\b|drgn: ).*$", done.stdout + done.stderr, flags=re.M)
    return done, [(e, outputs.get(i, "")) for i, e in enumerate(expressions)], errors


def _drgn_failures(printed: Printed, expressions: list[str], tmp_path: Path) -> list[str]:
    """The ``>>>`` lines that printed nothing, or an error of drgn's crash-compatible commands."""
    return _failed(_run_drgn(printed, expressions, tmp_path))


def _failed(outputs: list[tuple[str, str]]) -> list[str]:
    """Of ``>>>`` lines and what they printed: those that printed nothing, or an error of the %crash commands."""
    out = []
    for command, output in outputs:
        # %crash commands answer as crash does ("no such process with PID 7"): crash's error forms count.
        if not output.strip() or (command.startswith("%crash") and _CRASH_ERRORS.search(output)):
            out.append(f">>> {command}\n{output[:800]}")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", case_names())
def test_every_next_command_runs(name: str, tmp_path: Path) -> None:
    _, printed = _report(name)
    assert printed.crash.startswith("crash -s "), "the Follow-up section names the crash command line"
    assert printed.drgn.startswith("drgn -c "), "the Follow-up section names the drgn command line"
    assert ".xz" not in printed.crash and ".xz" not in printed.drgn
    assert not re.search(r"<[a-z][a-z ]*>", " ".join(printed.commands)), printed.commands  # no <placeholder>
    crash_cmds = _crash_commands(name, printed)
    drgn_cmds = [c.removeprefix(">>> ") for c in printed.commands if c.startswith(">>> ")]
    shell_cmds = [c for c in printed.commands if not c.startswith(("crash> ", ">>> "))]
    failures: list[str] = []
    # crash (gdb reading vmlinux's DWARF: the longest part) runs beside drgn and the shell commands.
    pool = ThreadPoolExecutor(1)
    crashed = pool.submit(_crash_session, name, printed, tmp_path) if crash_cmds else None
    if drgn_cmds:
        failures += _drgn_failures(printed, list(dict.fromkeys(drgn_cmds)), tmp_path)
    failures += _shell_failures(shell_cmds)
    if crashed is not None:
        outputs = crashed.result()
        for command, output in ((c, outputs[c]) for c in crash_cmds):
            if not output.strip() or _CRASH_ERRORS.search(output):
                failures.append(f"crash> {command}\n{output[:800]}")
    pool.shutdown()
    assert not failures, "\n\n".join(failures)


def _shell_failures(commands: list[str]) -> list[str]:
    """The shell commands that exit non-zero or print nothing, run from the repository's top directory."""
    failures = []
    for command in dict.fromkeys(commands):
        flag = next((f for prefix, f in _RECORDERS.items() if command.startswith(prefix)), None)
        path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"  # kforensic and drgn of this venv
        done = subprocess.run(
            ["sh", "-c", f"{command} {flag}" if flag else command], capture_output=True, text=True, timeout=300,
            check=False, cwd=REPO, stdin=subprocess.DEVNULL, env={**os.environ, "PATH": path},
        )  # fmt: skip
        if done.returncode != 0 or not done.stdout.strip():
            failures.append(f"$ {command}: exit {done.returncode}\n{done.stdout[-500:]}{done.stderr[-500:]}")
    return failures


#: Dumps of a kernel the installed crash (8.0.2) does not open: their steps are drgn's and the shell's.
_NO_CRASH = [pytest.param("6.12", n, marks=pytest.mark.xdist_group(case_group("6.12", n))) for n in case_names("6.12")]


def _every_step(markdown: str) -> list[str]:
    """The commands of every step the report prints: the ``next:`` lines and each finding's Next steps list."""
    steps, listing = [], False
    for line in markdown.splitlines():
        listing = line == "**Next steps**" or (listing and (line.startswith("- ") or not line))
        if " next: " in line:
            steps += _CODE.findall(line.split(" next: ", 1)[1])
        elif listing and line.startswith("- "):
            steps += _CODE.findall(line.split(" — ", 1)[0])
    return steps


@pytest.mark.slow
@pytest.mark.parametrize(("kernel", "name"), _NO_CRASH)
def test_the_steps_for_a_dump_crash_does_not_open_run_in_drgn(kernel: str, name: str, tmp_path: Path) -> None:
    """crash 8.0.2 opens no 6.12 dump ("seek error: kernel virtual address ... page_offset_base"): the steps are
    drgn's %crash commands and shell commands (objdump, gdb for disassembly), each run here on the dump it is printed
    for (the OOM's ``ps -G`` by pid: the task list walk breaks on a task_struct makedumpfile left out, "Excluded
    page")."""
    if name not in case_names(kernel):
        pytest.skip(f"the {name} fixture is absent on {kernel}")
    markdown, printed = _report(name, kernel)
    commands = _every_step(markdown)
    assert set(printed.commands) <= set(commands)
    # The incident's "deliberate crash" step (detectors/incident/deliberate.py) too (ue10 #8), and no crash session.
    assert not [c for c in commands if c.startswith("crash> ")], commands
    assert not printed.crash and "crash: not for this dump" in markdown
    drgn_cmds = [c.removeprefix(">>> ") for c in commands if c.startswith(">>> ")]
    failures = _drgn_failures(printed, list(dict.fromkeys(drgn_cmds)), tmp_path) if drgn_cmds else []
    # (the outsized cache's "kforensic leaks --store STORE  # if samples exist" names a store the user records)
    shell = [c for c in commands if not c.startswith((">>> ", "crash> ")) and "--store STORE" not in c]
    failures += _shell_failures(shell)
    assert not failures, "\n\n".join(failures)


@on_case(FIRST)
def test_the_harness_sees_a_command_fail(tmp_path: Path) -> None:
    """The checks above can fail: crash's and drgn's errors for wrong commands are caught (the crash commands in the
    case's own session, the drgn lines in one console)."""
    _, printed = _report(FIRST)
    outputs = _crash_session(FIRST, printed, tmp_path)
    assert _CRASH_ERRORS.search(outputs["struct -o struct kf_device"])  # "symbol not found: kf_device"
    assert _CRASH_ERRORS.search(outputs["bt 99999"])  # "invalid task or pid value"
    assert not _CRASH_ERRORS.search(outputs["sys"]) and "RELEASE" in outputs["sys"]
    lines = ["%crash bt 99999", "prog['jiffies']", "task_state_to_char(prog['init_task'])", "no_such_helper(prog)"]
    done, printed_for, errors = _drgn_session(printed, lines, tmp_path)
    assert [f.splitlines()[0] for f in _failed(printed_for[:3])] == [">>> %crash bt 99999"]
    assert [e.split(":")[0] for e in errors] == ["NameError"]  # the last line's, and only it
    with pytest.raises(AssertionError, match="NameError"):
        _no_errors(done, errors)


@pytest.mark.parametrize(
    ("step", "commands", "prose"),
    [
        ("crash> dis -rl 0x1; crash> bt -FF  # the values", ("crash> dis -rl 0x1", "crash> bt -FF"), "the values"),
        (">>> %crash ps -G | sort -k 8 -n | tail; >>> %crash kmem -i", (">>> %crash ps -G | sort -k 8 -n | tail",
                                                                     ">>> %crash kmem -i"), ""),
        ("grep -n 'x' a.c; echo done  # where x is set", ("grep -n 'x' a.c; echo done",), "where x is set"),
        ("modinfo kf_buggy  # on the crashed machine", ("modinfo kf_buggy",), "on the crashed machine"),
        (">>> %crash bt -a; objdump -d a.ko  # x", (">>> %crash bt -a", "objdump -d a.ko"), "x"),
    ],
)  # fmt: skip
def test_a_next_step_is_split_into_commands_and_prose(step: str, commands: tuple[str, ...], prose: str) -> None:
    from forensics.report.markdown import next_commands

    assert next_commands(step) == (commands, prose)
