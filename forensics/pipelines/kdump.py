"""``kforensic kdump``: read the system's kdump state, run the checklist, plan and apply the setup."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from forensics.errors import CollectionError, UsageError
from forensics.types.results import KdumpCheck, KdumpSetup

if TYPE_CHECKING:
    import datetime as dt

    from collectors.kdump.reader import StatvfsProvider
    from detectors.kdump.sysctl_rules import Policy
    from forensics.model import Examined, Incident
    from forensics.types.kdump import AppliedChange, Checklist, Command, KdumpState


def collect_check(root: Path, statvfs: StatvfsProvider | None = None) -> KdumpCheck:
    """``kforensic kdump check``: the kdump state under ``root``, the checklist on it and its incident."""
    from collectors.kdump.reader import real_statvfs
    from collectors.kdump.state import collect_kdump_state
    from detectors.kdump.checklist import run_checklist

    state = collect_kdump_state(root, statvfs or real_statvfs)
    checklist = run_checklist(state)
    return KdumpCheck(state, checklist, _incident(state, checklist))


def _incident(state: KdumpState, checklist: Checklist) -> Incident:
    from detectors.kdump.findings import checklist_findings
    from forensics import __version__
    from forensics.model import Incident, NotAvailable
    from forensics.types.kdump import TextFile

    name = state.hostname
    host = (name.first_line() or NotAvailable("empty /etc/hostname")) if isinstance(name, TextFile) else name
    release = state.osrelease
    return Incident(
        examined=(_examined(state, checklist),),
        host=host,
        kernel_release=release.first_line() if isinstance(release, TextFile) else release,
        window=NotAvailable("kdump check reads configuration, not events"),
        sources=state.sources,
        findings=checklist_findings(checklist, state),
        tool_version=__version__,
    )


def _examined(state: KdumpState, checklist: Checklist) -> Examined:
    """What the check read and could judge, and each check whose value was not read (with why): the incident of a
    root where nothing could be read had no finding and no examined item, and ``report --from`` made "no known
    kernel problem" of "NOT KNOWN TO BE READY" (review ue15 #6)."""
    from forensics.model import Examined, InputKind
    from forensics.types.kdump import Status

    where = "this machine" if Path(state.root).resolve() == Path("/") else f"the root {state.root}"
    counts = ", ".join(f"{checklist.count(s)} {s.value}" for s in Status if checklist.count(s))
    judged = [line.title for line in checklist.lines if line.status is not Status.UNKNOWN]
    what = f"kdump check of {where}: {len(state.sources)} file(s) read, {len(checklist.lines)} checks ({counts})"
    could = (f"whether the next crash is captured, by: {', '.join(judged)}",) if judged else ()
    unread = tuple(f"{x.title}: {x.detail}" for x in checklist.lines if x.status is Status.UNKNOWN)
    # Its kind tells a report of a kdump check alone: it says the readiness (detectors/incident/readiness.py)
    return Examined(what, could, unread, input=InputKind.KDUMP)


def _run(command: Command) -> int:
    import subprocess

    try:
        # Their output goes to stderr: stdout carries the plan (possibly JSON).
        result = subprocess.run(list(command.argv), check=False, stdout=sys.stderr)
    except OSError as exc:
        raise CollectionError(
            f"cannot run {command.argv[0]}: {exc.strerror or exc}", hint=command.shell_text()
        ) from None
    if result.returncode != 0:
        raise CollectionError(
            f"{command.shell_text()} failed with exit status {result.returncode}",
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
) -> KdumpSetup:
    """Plan, and with ``apply`` carry out, the setup of ``root``; return what was planned and done.

    Commands (package install, update-grub/grubby, systemctl, sysctl) run only
    on the live system (``root`` is ``/``); under another root they are listed
    as to be run on the target system.
    """
    import datetime as dt

    from detectors.kdump.plan import make_plan

    check = collect_check(root, statvfs)
    plan = make_plan(check.state, check.checklist, preset)
    applied: tuple[AppliedChange, ...] | None = None
    ran: dict[tuple[str, ...], int] = {}
    if apply:
        from collectors.kdump.apply import apply_changes

        live = root.resolve() == Path("/")
        if live and os.geteuid() != 0:
            raise UsageError("setup --apply on this machine needs root", hint="sudo kforensic kdump setup --apply")
        if live and plan.install is not None:
            ran[plan.install.argv] = _run(plan.install)
            check = collect_check(root, statvfs)  # the package brought its config: plan again
            plan = make_plan(check.state, check.checklist, preset)
        when = now or dt.datetime.now(dt.UTC)
        applied = apply_changes(plan.changes, root, when)
        if live:
            from collectors.kdump.apply import back_up

            for command in plan.commands:
                applied += back_up(command.backup, root, when)  # the files it rewrites whole, first
                ran[command.argv] = _run(command)
    return KdumpSetup(check, plan, applied, tuple(ran.items()))
