"""``kforensic vmcore``: automatic post-mortem analysis of a kernel crash dump."""

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from forensics.commands.common import DebugOption, FailOnOption, ForceOption, FormatOption, OutputOption
from forensics.delivery import deliver, exit_status
from forensics.errors import UsageError
from forensics.report.formats import OutputFormat, render

if TYPE_CHECKING:
    pass

EXAMPLE = """
Example:

  kforensic vmcore /var/crash/202611300712/ --vmlinux /usr/lib/debug/boot/vmlinux-6.1.0-13-amd64

  kforensic vmcore vmcore --vmlinux vmlinux --module-debug kf_buggy.ko --format json -o crash.json

  kforensic vmcore /var/crash/202611300712/ --source-dir /usr/src/linux-source-6.1 --source-dir ~/src/mydriver

  kforensic vmcore /var/crash/202611300712/ --debuginfod https://debuginfod.debian.net

  kforensic vmcore /var/crash/202611300712/ --shell
"""


def vmcore(
    path: Annotated[Path, typer.Argument(help="The dump, or a crash directory such as /var/crash/<stamp>/.")],
    vmlinux: Annotated[
        Path | None, typer.Option("--vmlinux", help="The kernel image with debug info (DWARF).", metavar="FILE")
    ] = None,
    debug_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--debug-dir", help="A /usr/lib/debug style tree to search by build ID (repeatable).", metavar="DIR"
        ),
    ] = None,
    module_debug: Annotated[
        list[Path] | None,
        typer.Option(
            "--module-debug", help="A module (.ko or .ko.debug) with debug info (repeatable).", metavar="FILE"
        ),
    ] = None,
    source_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--source-dir",
            help="A kernel or module source tree for BUG/WARN lines and their conditions (repeatable).",
            metavar="DIR",
        ),
    ] = None,
    debuginfod: Annotated[
        list[str] | None,
        typer.Option(
            "--debuginfod",
            help="Ask this debuginfod server for debug info missing locally, by build ID (repeatable; "
            "default: $DEBUGINFOD_URLS).",
            metavar="URL",
        ),
    ] = None,
    no_debuginfod: Annotated[
        bool, typer.Option("--no-debuginfod", help="Never ask a debuginfod server, even with DEBUGINFOD_URLS set.")
    ] = False,
    shell: Annotated[
        bool,
        typer.Option(
            "--shell",
            help="After the analysis, open drgn's interactive console on the dump with the analysis' objects "
            "bound to names (the report goes to -o only).",
        ),
    ] = False,
    fmt: FormatOption = OutputFormat.TEXT,
    output: OutputOption = None,
    fail_on: FailOnOption = None,
    debug: DebugOption = False,
    force: ForceOption = False,
) -> None:
    """Analyse a kernel crash dump: what crashed, where, on which data, and why.

    Without the kernel's debug info (none given, none found) the dump's own kernel log is read instead, as
    `kforensic dmesg` reads a log: the log kdump saved beside the dump, else `makedumpfile --dump-dmesg`'s;
    the report says so at its top, and how to get the full analysis.
    """
    from forensics.errors import DebugInfoMismatchError
    from forensics.pipelines.vmcore import analyse_dump, analyse_dump_or_log, refusal
    from forensics.types.results import DumpLogResult, VmcoreResult
    from forensics.vmcore.request import DebugInfoRequest

    if no_debuginfod and debuginfod:
        raise UsageError("--debuginfod and --no-debuginfod contradict each other", hint="give one of them")
    servers = () if no_debuginfod else tuple(debuginfod) if debuginfod else None
    if shell:
        from forensics.vmcore.shell import check_stdin

        check_stdin()  # before the analysis: a refused shell costs nothing
        # drgn loads its plugins (the % commands, crash's commands) with the first program of the process.
        os.environ.setdefault("DRGN_DISABLE_PLUGINS", "")
    request = DebugInfoRequest(
        vmlinux, tuple(debug_dir or ()), tuple(module_debug or ()), tuple(source_dir or ()), servers
    )
    # --shell opens drgn on the dump, which needs the debug info: no log-only result then (the error, exit 3).
    opens = analyse_dump if shell else analyse_dump_or_log

    def analyse(
        path: Path, request: DebugInfoRequest, progress: Callable[[str], None] | None, notice: Callable[[str], None]
    ) -> VmcoreResult | DumpLogResult:
        try:
            return opens(path, request, progress, notice)
        except DebugInfoMismatchError as wrong:  # refused (report reads the dump's log instead): a cut said first
            raise refusal(path, wrong) from None

    if sys.stderr.isatty():
        from rich.console import Console

        console = Console(stderr=True)
        with console.status("opening the dump") as status:
            result = analyse(
                path, request, status.update, lambda m: console.print(f"kforensic: {m}", markup=False, highlight=False)
            )
    else:
        result = analyse(path, request, None, lambda m: print(f"kforensic: {m}", file=sys.stderr, flush=True))
    if not isinstance(result, VmcoreResult):
        from forensics.report.dumplog import DumpLogRenderer

        deliver(render(DumpLogRenderer(), result, fmt, output), output)
        raise typer.Exit(int(exit_status(result.incident, fail_on)))
    from forensics.report.vmcore import VmcoreRenderer

    if shell:
        from forensics.vmcore.shell import run_shell

        if output is not None:
            deliver(render(VmcoreRenderer(), result, fmt, output), output)
        top = result.analysis.hypotheses[0].statement if result.analysis.hypotheses else "no hypothesis"
        frame = result.analysis.crash_frame.index if result.analysis.crash_frame is not None else None
        run_shell(path, request, result.snapshot, frame, top)
        raise typer.Exit(int(exit_status(result.incident, fail_on)))
    deliver(render(VmcoreRenderer(), result, fmt, output), output)
    raise typer.Exit(int(exit_status(result.incident, fail_on)))


def register(app: typer.Typer) -> None:
    """Add the command to the CLI."""
    app.command("vmcore", epilog=EXAMPLE, help=vmcore.__doc__)(vmcore)
