"""``kforensic kdump``: will the next crash be captured? Check, set up and test crash dumps."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forensics.commands.common import DebugOption, ForceOption, FormatOption, OutputOption
from forensics.delivery import deliver, exit_status
from forensics.errors import CollectionError, ExitCode, UsageError
from forensics.model import Severity
from forensics.pipelines.kdump import collect_check, run_setup
from forensics.report.formats import OutputFormat, render
from forensics.report.kdump import KdumpCheckRenderer, KdumpSetupRenderer

if TYPE_CHECKING:
    pass


CHECK_EXAMPLE = """
Example:

  kforensic kdump check

  kforensic kdump check --root /mnt/sysimage --format json -o kdump.json
"""
SETUP_EXAMPLE = """
Example:

  kforensic kdump setup --policy hang-debug            # print the plan only

  sudo kforensic kdump setup --policy hang-debug --apply
"""
TEST_EXAMPLE = """
Example:

  sudo kforensic kdump test --yes-crash-this-machine
"""

RootOption = Annotated[
    Path,
    typer.Option("--root", help="Check the system tree under DIR instead of this machine.", metavar="DIR"),
]

# kdump check is a readiness gate: not ready exits 1 whatever the threshold (docs/kdump.md, "Exit status"), so
# --fail-on can only add failures; the shared option's help ("Exit 1 when a finding is at or above") read as if
# `--fail-on critical` let a machine that cannot capture a dump pass.  Since review ue24 F2 a failing check is a low
# finding (harm still to come: docs/severity.md), so this rule, not a severity, is what makes the check a gate.
CheckFailOnOption = Annotated[
    Severity | None,
    typer.Option(
        "--fail-on",
        help="Also exit 1 when a finding is at or above this severity (info, low, medium, high, critical); "
        "a machine not ready to capture a dump exits 1 whatever it is. Readiness findings are at most low "
        "(no harm yet): low also fails on warnings.",
        case_sensitive=False,
    ),
]

kdump_app = typer.Typer(
    name="kdump",
    help="Check, set up and test kernel crash dump capture (kdump).",
    epilog=CHECK_EXAMPLE + SETUP_EXAMPLE.replace("Example:\n", ""),
    no_args_is_help=True,
    rich_markup_mode=None,
)


@kdump_app.command("check", epilog=CHECK_EXAMPLE)
def check(
    root: RootOption = Path("/"),
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: CheckFailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Say whether the next crash will be captured; exit 0 only when it will."""
    check = collect_check(root)
    deliver(render(KdumpCheckRenderer(), check, fmt, output), output)
    code = exit_status(check.incident, fail_on)
    raise typer.Exit(int(ExitCode.FINDINGS) if not check.checklist.ready else int(code))


@kdump_app.command("setup", epilog=SETUP_EXAMPLE)
def setup(
    root: RootOption = Path("/"),
    policy: Annotated[
        str,
        typer.Option(help="Sysctl preset: none, oops, hang-debug or strict (see docs/kdump.md).", metavar="NAME"),
    ] = "none",
    apply: Annotated[bool, typer.Option("--apply", help="Carry out the plan (backs up every file changed).")] = False,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Print the plan that makes crash dumps work; with --apply carry it out."""
    from detectors.kdump.sysctl_rules import policy_named

    try:
        preset = policy_named(policy)
    except ValueError as exc:
        raise UsageError(str(exc), hint="kforensic kdump setup --policy hang-debug") from None
    deliver(render(KdumpSetupRenderer(), run_setup(root, preset, apply=apply), fmt, output), output)
    raise typer.Exit(int(ExitCode.OK))


@kdump_app.command("test", epilog=TEST_EXAMPLE)
def test(
    yes: Annotated[
        bool, typer.Option("--yes-crash-this-machine", help="Really crash this machine (SysRq-c) to test kdump.")
    ] = False,
    debug: DebugOption = False,
) -> None:
    """Crash this machine with SysRq-c to prove a dump is captured, after the check passes."""
    if not yes:
        raise UsageError(
            "kdump test crashes this machine on purpose and needs --yes-crash-this-machine",
            hint="run kforensic kdump check first; save your work; then add --yes-crash-this-machine",
        )
    check = collect_check(Path("/"))
    state, checklist = check.state, check.checklist
    if not checklist.ready:
        # Failures, and lines not read that capture rests on (an unknown alone listed nothing before).
        failing = [f"  {line.title}: {line.detail}" for line in checklist.holding_back()]
        print("kforensic: refusing to crash: kdump check does not pass:", *failing, sep="\n", file=sys.stderr)
        raise typer.Exit(int(ExitCode.FINDINGS))
    from forensics.types.kdump_paths import SYSRQ_TRIGGER

    if not os.path.exists(SYSRQ_TRIGGER):
        # A kernel built without CONFIG_MAGIC_SYSRQ (kdump check's kernel.sysrq line says so): nothing to write.
        raise CollectionError(
            f"{SYSRQ_TRIGGER} does not exist: the kernel was built without CONFIG_MAGIC_SYSRQ",
            hint="boot a kernel built with CONFIG_MAGIC_SYSRQ to test kdump with SysRq-c",
        )
    if os.geteuid() != 0:
        raise UsageError("kdump test needs root to write /proc/sysrq-trigger", hint="sudo kforensic kdump test ...")
    print(f"kforensic: crashing now; the dump will be in {state.dump_target.location}", file=sys.stderr, flush=True)
    os.sync()
    try:
        with open(SYSRQ_TRIGGER, "w") as trigger:
            trigger.write("c")
    except OSError as exc:
        raise CollectionError(
            f"cannot write {SYSRQ_TRIGGER}: {exc.strerror or exc}", hint="the kernel needs CONFIG_MAGIC_SYSRQ"
        ) from None


def register(app: typer.Typer) -> None:
    """Add the ``kdump`` sub-commands to the CLI."""
    app.add_typer(kdump_app, name="kdump")
