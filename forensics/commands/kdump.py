"""``kforensic kdump``: will the next crash be captured? Check, set up and test crash dumps."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from forensics.commands.common import DebugOption, FailOnOption, ForceOption, FormatOption, OutputOption, deliver
from forensics.errors import CollectionError, ExitCode, UsageError
from forensics.report import OutputFormat

if TYPE_CHECKING:
    import datetime as dt

    from collectors.kdump.apply import AppliedChange
    from collectors.kdump.reader import StatvfsProvider
    from collectors.kdump.snapshot import KdumpState
    from detectors.kdump.checklist import Checklist
    from detectors.kdump.plan import Command, Plan
    from detectors.kdump.sysctl_rules import Policy
    from forensics.model import Incident

CHECK_SCHEMA = "kforensic.kdump-check/1"
SETUP_SCHEMA = "kforensic.kdump-setup/1"

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

kdump_app = typer.Typer(
    name="kdump",
    help="Check, set up and test kernel crash dump capture (kdump).",
    epilog=CHECK_EXAMPLE + SETUP_EXAMPLE.replace("Example:\n", ""),
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _collect(root: Path, statvfs: StatvfsProvider | None = None) -> tuple[KdumpState, Checklist]:
    from collectors.kdump.reader import real_statvfs
    from collectors.kdump.state import collect_kdump_state
    from detectors.kdump.checklist import run_checklist

    state = collect_kdump_state(root, statvfs or real_statvfs)
    return state, run_checklist(state)


def _incident(state: KdumpState, checklist: Checklist) -> Incident:
    from collectors.kdump.snapshot import TextFile
    from detectors.kdump.findings import checklist_findings
    from forensics import __version__
    from forensics.model import Incident, NotAvailable

    name = state.hostname
    host = (name.first_line() or NotAvailable("empty /etc/hostname")) if isinstance(name, TextFile) else name
    release = state.osrelease
    return Incident(
        host=host,
        kernel_release=release.first_line() if isinstance(release, TextFile) else release,
        window=NotAvailable("kdump check reads configuration, not events"),
        sources=state.sources,
        findings=checklist_findings(checklist, state),
        tool_version=__version__,
    )


def _size(value: object) -> object:
    from forensics.model import NotAvailable

    return {"not_available": value.reason} if isinstance(value, NotAvailable) else value


def check_document(state: KdumpState, checklist: Checklist) -> dict[str, Any]:
    """The ``kforensic.kdump-check/1`` document."""
    from detectors.kdump.crashkernel import format_size
    from forensics.serialize import evidence_to_dict, incident_to_dict

    est = checklist.estimate
    return {
        "schema": CHECK_SCHEMA,
        "root": state.root,
        "distro": {
            "id": state.distro.id,
            "version_id": state.distro.version_id,
            "name": state.distro.name,
            "family": state.distro.family.value,
        },
        "ready": checklist.ready,
        "kernel_ready": checklist.kernel_ready,
        "counts": {s: sum(1 for x in checklist.lines if x.status.value == s) for s in ("pass", "warn", "fail")},
        "crashkernel": {
            "recommended": format_size(est.recommended),
            "recommended_bytes": est.recommended,
            "estimated_bytes": est.estimated,
            "kernel_bytes": _size(est.kernel),
            "initrd_bytes": _size(est.initrd),
            "modules_bytes": _size(est.modules),
            "runtime_bytes": est.runtime,
            "floor_bytes": est.floor,
            "floor_crashkernel": est.floor_crashkernel,
            "floor_source": est.floor_source,
            "complete": est.complete,
        },
        "checks": [
            {
                "id": line.id,
                "title": line.title,
                "status": line.status.value,
                "detail": line.detail,
                "why": line.why,
                "fix": line.fix,
                "kernel_side": line.kernel_side,
                "severity": line.severity.value,
                "evidence": [evidence_to_dict(e) for e in line.evidence],
            }
            for line in checklist.lines
        ],
        "incident": incident_to_dict(_incident(state, checklist)),
    }


def render_check(state: KdumpState, checklist: Checklist, fmt: OutputFormat) -> str:
    """The checklist as text, markdown or JSON."""
    from detectors.kdump.crashkernel import describe_estimate
    from detectors.kdump.util import Status

    if fmt is OutputFormat.JSON:
        return json.dumps(check_document(state, checklist), indent=2, ensure_ascii=False) + "\n"
    md = fmt is OutputFormat.MD
    verdict = "READY: the next crash will be captured" if checklist.ready else "NOT READY: the next crash will be lost"
    counts = ", ".join(f"{checklist.count(s)} {s.value}" for s in Status)
    kernel = "ready" if checklist.kernel_ready else "not ready"
    out = [
        f"{'# ' if md else ''}kforensic kdump check: {state.distro.name} (root {state.root})",
        "",
        f"{'- ' if md else ''}recommended crashkernel: {describe_estimate(checklist.estimate)}",
        "",
    ]
    for line in checklist.lines:
        mark = line.status.value.upper()
        out.append(f"- **{mark}** {line.title}: {line.detail}" if md else f"[{mark}] {line.title}: {line.detail}")
        if line.status.value != "pass":
            indent = "  - " if md else "       "
            out.append(f"{indent}why: {line.why}")
            out.append(f"{indent}fix: {line.fix}")
            out.extend(f"{indent}seen: {e.cite()}: {e.excerpt}" for e in line.evidence)
    out += ["", f"{'**' if md else ''}{verdict}{'**' if md else ''} ({counts}; kernel side {kernel})", ""]
    return "\n".join(out)


@kdump_app.command("check", epilog=CHECK_EXAMPLE)
def check(
    root: RootOption = Path("/"),
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Say whether the next crash will be captured; exit 0 only when it will."""
    from forensics.commands.common import exit_status

    state, checklist = _collect(root)
    deliver(render_check(state, checklist, fmt), output)
    code = exit_status(_incident(state, checklist), fail_on)
    raise typer.Exit(int(ExitCode.FINDINGS) if not checklist.ready else int(code))


def _argv(command: Command) -> str:
    import shlex

    return shlex.join(command.argv)


def setup_document(
    state: KdumpState,
    checklist: Checklist,
    plan: Plan,
    applied: tuple[AppliedChange, ...] | None,
    ran: dict[tuple[str, ...], int],
) -> dict[str, Any]:
    """The ``kforensic.kdump-setup/1`` document."""
    from forensics.serialize import incident_to_dict

    backups = {a.path: a.backup for a in applied or ()}
    commands = [*([plan.install] if plan.install else []), *plan.commands]

    def command_status(argv: tuple[str, ...]) -> str:
        if applied is None:
            return "planned"
        return "run" if argv in ran else "to run on the target system"

    return {
        "schema": SETUP_SCHEMA,
        "root": state.root,
        "distro": state.distro.name,
        "family": plan.family.value,
        "policy": plan.policy,
        "applied": applied is not None,
        "ready_before": checklist.ready,
        "packages": list(plan.packages),
        "changes": [
            {
                "path": c.path,
                "action": "create" if c.old is None else "modify",
                "reason": c.reason,
                "diff": c.diff(),
                "backup": backups.get(c.path),
            }
            for c in plan.changes
        ],
        "commands": [
            {
                "argv": list(c.argv),
                "reason": c.reason,
                "status": command_status(c.argv),
                "returncode": ran.get(c.argv),
            }
            for c in commands
        ],
        "manual": list(plan.manual),
        "reboot_needed": plan.reboot_needed,
        "reboot_reason": plan.reboot_reason,
        "incident": incident_to_dict(_incident(state, checklist)),
    }


def render_setup(doc: dict[str, Any], fmt: OutputFormat) -> str:
    """The plan (and what was done) as text, markdown or JSON."""
    if fmt is OutputFormat.JSON:
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    md = fmt is OutputFormat.MD
    head = "# " if md else ""
    done = doc["applied"]
    out = [f"{head}kforensic kdump setup: {doc['distro']} (root {doc['root']}, policy {doc['policy']})", ""]
    if not (doc["packages"] or doc["changes"] or doc["commands"]):
        out.append("Nothing to do: the configuration is already as the plan wants it.")
    if doc["packages"]:
        out.append(f"{'## ' if md else ''}Packages to install: {' '.join(doc['packages'])}")
        out.append("")
    for change in doc["changes"]:
        verb = ("created" if change["action"] == "create" else "changed") if done else f"to {change['action']}"
        backup = f" (backup {change['backup']})" if change["backup"] else ""
        out.append(f"{'## ' if md else ''}File {change['path']} {verb}{backup}: {change['reason']}")
        out += ["```diff", change["diff"].rstrip("\n"), "```", ""] if md else ["", change["diff"].rstrip("\n"), ""]
    if doc["commands"]:
        out.append(f"{'## ' if md else ''}Commands:")
        for command in doc["commands"]:
            rc = f", exit {command['returncode']}" if command["returncode"] is not None else ""
            argv = " ".join(command["argv"])
            if md:
                out.append(f"- `{argv}` — {command['reason']} [{command['status']}{rc}]")
            else:
                out.append(f"  {argv}    # {command['reason']} [{command['status']}{rc}]")
        out.append("")
    for step in doc["manual"]:
        out.append(f"{'- ' if md else ''}manual: {step}")
    if doc["reboot_needed"]:
        out.append(f"Reboot needed: {doc['reboot_reason']}.")
    if not done and (doc["changes"] or doc["commands"] or doc["packages"]):
        out.append("Nothing was changed. Run again with --apply to carry out this plan.")
    return "\n".join(out).rstrip("\n") + "\n"


def _run(command: Command) -> int:
    import subprocess

    try:
        # Their output goes to stderr: stdout carries the plan (possibly JSON).
        result = subprocess.run(list(command.argv), check=False, stdout=sys.stderr)
    except OSError as exc:
        raise CollectionError(f"cannot run {command.argv[0]}: {exc.strerror or exc}", hint=_argv(command)) from None
    if result.returncode != 0:
        raise CollectionError(
            f"{_argv(command)} failed with exit status {result.returncode}",
            hint="fix the cause and run kforensic kdump setup --apply again (it is idempotent)",
        )
    return result.returncode


def run_setup(
    root: Path,
    preset: Policy,
    *,
    apply: bool,
    statvfs: StatvfsProvider | None = None,
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """Plan, and with ``apply`` carry out, the setup of ``root``; return the setup document.

    Commands (package install, update-grub/grubby, systemctl, sysctl) run only
    on the live system (``root`` is ``/``); under another root they are listed
    as to be run on the target system.
    """
    import datetime as dt

    from detectors.kdump.plan import make_plan

    state, checklist = _collect(root, statvfs)
    plan = make_plan(state, checklist, preset)
    applied: tuple[AppliedChange, ...] | None = None
    ran: dict[tuple[str, ...], int] = {}
    if apply:
        from collectors.kdump.apply import apply_changes

        live = root.resolve() == Path("/")
        if live and os.geteuid() != 0:
            raise UsageError("setup --apply on this machine needs root", hint="sudo kforensic kdump setup --apply")
        if live and plan.install is not None:
            ran[plan.install.argv] = _run(plan.install)
            state, checklist = _collect(root, statvfs)  # the package brought its config: plan again
            plan = make_plan(state, checklist, preset)
        applied = apply_changes(plan.changes, root, now or dt.datetime.now(dt.UTC))
        if live:
            for command in plan.commands:
                ran[command.argv] = _run(command)
    return setup_document(state, checklist, plan, applied, ran)


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
    deliver(render_setup(run_setup(root, preset, apply=apply), fmt), output)
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
    state, checklist = _collect(Path("/"))
    if not checklist.ready:
        failing = [f"  {line.title}: {line.detail}" for line in checklist.lines if line.status.value == "fail"]
        print("kforensic: refusing to crash: kdump check does not pass:", *failing, sep="\n", file=sys.stderr)
        raise typer.Exit(int(ExitCode.FINDINGS))
    if os.geteuid() != 0:
        raise UsageError("kdump test needs root to write /proc/sysrq-trigger", hint="sudo kforensic kdump test ...")
    print(f"kforensic: crashing now; the dump will be in {state.dump_target.location}", file=sys.stderr, flush=True)
    os.sync()
    from collectors.kdump.paths import SYSRQ_TRIGGER

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
