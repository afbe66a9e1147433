"""The ``kforensic`` command line: typer app, error boundary and exit codes.

This is the only place where errors become messages and exit statuses, and
where tracebacks are shown (with ``--debug``, on an internal error only).
"""

import contextlib
import errno
import gc
import io
import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any, TextIO

#: What a run interrupted by SIGINT (Ctrl-C) says, wherever the signal lands (exit 130, docs/cli.md).
INTERRUPTED = "interrupted (SIGINT, Ctrl-C) before the run was over"
INTERRUPTED_HINT = "run it again; an output file is complete or as it was before, never half-written"


def _interrupted_at_start_up(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    """Ctrl-C while the interpreter still imports this module, or typer and click at main()'s start (the first
    ~0.1 s of every run).

    main()'s error boundary is not running yet, so nothing catches the KeyboardInterrupt: Python printed its
    traceback and died by SIGINT (the hostile battery's signal cases). Said as every other interrupt is, exit 130.
    """
    if not issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, tb)
        return
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stderr may be closed (None)
        sys.stderr.write(f"kforensic: error: {INTERRUPTED}\nkforensic: hint: {INTERRUPTED_HINT}\n")
        sys.stderr.flush()
    os._exit(130)


sys.excepthook = _interrupted_at_start_up  # before the slow imports below; main() catches what comes later

from forensics import __version__, codecache, regexcache  # noqa: E402 (after the hook)
from forensics.commandline import COMPLETION_VARIABLE, CommandLine, parse, run  # noqa: E402
from forensics.errors import ExitCode, InputError, KforensicError  # noqa: E402

if TYPE_CHECKING:
    # Imported by main() (and by what builds the app), not here: a command line its command's table reads
    # (_typer_free) needs no other option parser, and typer's import was most of the start-up.
    import typer
    from typer import TyperException as _ParseError


# Each command module is imported only when its command runs (start-up time): one registrar per module,
# a plain import inside a function (no import by string).
def _report(app: "typer.Typer") -> None:
    from forensics.commands import report

    report.register(app)


def _vmcore(app: "typer.Typer") -> None:
    from forensics.commands import vmcore

    vmcore.register(app)


def _slabwatch(app: "typer.Typer") -> None:
    from forensics.commands import slabwatch

    slabwatch.register(app)


def _kdump(app: "typer.Typer") -> None:
    from forensics.commands import kdump

    kdump.register(app)


def _trace(app: "typer.Typer") -> None:
    from forensics.commands import trace

    trace.register(app)


def _dmesg(app: "typer.Typer") -> None:
    from forensics.commands import dmesg

    dmesg.register(app)


def _leaks(app: "typer.Typer") -> None:
    from forensics.commands import leaks

    leaks.register(app)


def _profile(app: "typer.Typer") -> None:
    from forensics.commands import profile

    profile.register(app)


#: Command name -> the registrar of its module in forensics.commands, in --help order.
COMMANDS: dict[str, Callable[["typer.Typer"], None]] = {
    "report": _report,
    "vmcore": _vmcore,
    "slab-watch": _slabwatch,
    "slab-import": _slabwatch,
    "slab-export": _slabwatch,
    "kdump": _kdump,
    "trace": _trace,
    "dmesg": _dmesg,
    "leaks": _leaks,
    "profile": _profile,
}


#: What ``kforensic --help`` lists for each command, in its order: the first sentence of the command's help, so
#: that the list (``--help``, ``--version``, no command, an unknown one) is made without importing the command
#: modules (80 -> ~60 ms of CPU; issue #28). tests/forensics/test_cli_startup.py checks it against the commands.
SUMMARIES: dict[str, str] = {
    "report": "Run every analysis the inputs allow and merge the findings into one incident report.",
    "vmcore": "Analyse a kernel crash dump: what crashed, where, on which data, and why.",
    "slab-watch": "Sample kernel slab caches, meminfo, vmstat and the kernel log into a store (SIGTERM/Ctrl-C end it"
    " cleanly).",
    "slab-import": "Import slabinfo/meminfo snapshots (timestamped files or concatenated `cat` output) into a store.",
    "slab-export": "Export a store as CSV, Parquet or Prometheus text (node_exporter metric names).",
    "trace": "Scheduling and latency forensics from ftrace, trace-cmd, perf and LTTng (CTF) traces, and request spans.",
    "dmesg": "Find every kernel report (oops, BUG, WARNING, KASAN, lockdep, stalls, panics, OOM) in kernel logs.",
    "leaks": "Find slab caches and kernel memory that grow like a leak, and say who allocates them.",
    "profile": "Find the hotspots of a CPU profile (perf), say what they mean, and draw flame graphs.",
    "kdump": "Check, set up and test kernel crash dump capture (kdump).",
}


def _listed_only() -> None:
    """What a command of the ``--help`` list runs: nothing can reach it (see :func:`listing`); said if it is."""
    raise RuntimeError("a command of the --help list was run in place of its module's command")


def listing() -> "typer.core.TyperGroup":
    """The root command (its options and callback) with every command listed by name and summary, none of their
    modules imported.

    Used only when the command line names no command (:func:`_requested`): the parser then never reaches one of
    the listed commands, since the first word that is not an option is the command's name and the root takes no
    option value.
    """
    import typer

    group = typer.main.get_command(make_app(()))
    assert isinstance(group, typer.core.TyperGroup)  # a callback makes a group
    for name, summary in SUMMARIES.items():
        group.add_command(typer.core.TyperCommand(name=name, help=summary, callback=_listed_only))
    return group


def _version(value: bool) -> None:
    import typer

    if value:
        print(f"kforensic {__version__}")
        raise typer.Exit(0)


def _reset_run() -> None:
    from forensics.output import reset_run

    reset_run()  # a new run: no inputs read yet, no --force


def _root_callback() -> Callable[..., None]:
    """The root's callback (``--version``): its option is typer's, made when the app is (typer imported then)."""
    import typer

    def _root(
        version: Annotated[
            bool,
            typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
        ] = False,
    ) -> None:
        """Post-mortem crash and memory forensics for Linux kernels."""
        _reset_run()

    return _root


def make_app(commands: tuple[str, ...] | None = None) -> "typer.Typer":
    """The CLI with the given commands (all when None) registered."""
    import typer

    cli = typer.Typer(
        name="kforensic",
        help="Post-mortem crash and memory forensics for Linux kernels.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
        rich_markup_mode=None,
    )
    cli.callback()(_root_callback())
    wanted = COMMANDS if commands is None else {c: COMMANDS[c] for c in commands}
    for register in dict.fromkeys(wanted.values()):
        register(cli)
    return cli


def _requested(argv: list[str]) -> tuple[str, ...] | None:
    """The command the user asked for, to import only its module (start-up time); None for all."""
    first = next((a for a in argv if not a.startswith("-")), None)
    if first in COMMANDS and not any(a in ("-h", "--help") for a in argv[: argv.index(first)]):
        # The command's siblings from the same module keep their help consistent.
        registrar = COMMANDS[first]
        return tuple(c for c, m in COMMANDS.items() if m == registrar)
    return None


def __getattr__(name: str) -> "typer.Typer":
    # ``from forensics.cli import app`` (tests, tools) gets the CLI with every command.
    if name == "app":
        return make_app()
    raise AttributeError(name)


def _fail(message: str, hint: str | None, code: int, debug: str | None = None) -> None:
    # stderr escapes what it cannot encode (a path's non-UTF-8 byte becomes \xNN), it never fails on it.
    print(f"kforensic: error: {message}", file=sys.stderr)
    if hint:
        print(f"kforensic: hint: {hint}", file=sys.stderr)
    if debug:  # --debug on exit 2 or 3: where it was raised, one line (the traceback is for bugs, exit 4)
        print(f"kforensic: debug: {debug}", file=sys.stderr)
    sys.exit(code)


def _show_traceback() -> None:
    """``--debug`` on an internal error (exit 4, a bug): the whole traceback, for the bug report."""
    import traceback

    traceback.print_exc()


def _where_raised(exc: BaseException) -> str | None:
    """Where ``exc`` was raised, as ``--debug`` tells it for exit 2 and 3: one line, never a traceback.

    The innermost frame, relative to the checkout (``collectors/inputs.py:330 (open_input)``); one outside
    kforensic's code (the standard library, click) is named by its last two path parts, with the innermost
    frame of kforensic's own code below it (the one that called in).
    """
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def ours(frame: traceback.FrameSummary) -> bool:
        return os.path.abspath(frame.filename).startswith(root + os.sep) and "site-packages" not in frame.filename

    def said(frame: traceback.FrameSummary) -> str:
        path = os.path.abspath(frame.filename)
        shown = os.path.relpath(path, root) if ours(frame) else os.sep.join(path.split(os.sep)[-2:])
        return f"{shown}:{frame.lineno} ({frame.name})"

    innermost = frames[-1]
    where = f"raised at {said(innermost)}"
    if not ours(innermost):
        own = [f for f in frames if ours(f)]
        if own and own[-1] is not frames[0]:  # below main() itself: the code that called in
            where += f", called from {said(own[-1])}"
    return f"{type(exc).__name__} {where}"


def _command_name(argv: list[str]) -> str:
    first = next((a for a in argv if not a.startswith("-")), None)
    return f"kforensic {first}" if first in COMMANDS else "kforensic"


class _ClosedOutput(io.TextIOBase):
    """Standard output when the process started with it closed (``>&-``): not a terminal, and unwritable."""

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        # An InputError, not an OSError: click's help and --version write here themselves, outside the
        # delivery that turns an OSError into exit 3 (`kforensic --help >&-` was exit 4, an internal error).
        raise InputError("cannot write to standard output: standard output is closed", hint="give -o FILE")


class _ErrorsMayGoNowhere(io.TextIOBase):
    """Standard error that goes quiet, as a closed one does, once its reader has gone (EPIPE).

    ``2>&1 | logger`` with the logger dead, a supervisor's log pipe gone: the first message (a warning, the
    error line) raised BrokenPipeError, which ended the run as if stdout's reader had gone: `slab-watch`
    exit 0 having recorded nothing, `dmesg missing` exit 1 instead of 3 (the hostile battery's stderr cases).
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _gone(self) -> None:
        # What is still buffered then goes to /dev/null, so that the interpreter's last flush cannot fail.
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only, as on the stream it wraps
        return self._stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._stream.errors


class _ClosedInput(io.TextIOBase):
    """Standard input when the process started with it closed (``<&-``): reading it is exit 3 in one line.

    Every reader of ``-`` goes through ``sys.stdin`` (or its ``buffer``), so
    this one object gives every command the same answer.
    """

    def isatty(self) -> bool:
        return False

    def readable(self) -> bool:
        return True

    @staticmethod
    def _refuse() -> InputError:
        return InputError(
            "standard input is closed: there is nothing to read from '-' (the program was started with <&-)",
            hint="give the input's path, or run with data on standard input",
        )

    @property
    def buffer(self) -> io.BufferedIOBase:
        raise self._refuse()

    def read(self, size: int | None = -1) -> str:
        raise self._refuse()

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise self._refuse()


def _refill_standard_streams() -> None:
    """Give closed descriptors 0-2 /dev/null, and the streams objects that say they were closed.

    Without this the first file the run opens gets the free descriptor: a
    message meant for stderr (or a result meant for stdout) would be written
    into the store or the report.  A closed stdin reads as "closed" (exit 3),
    a closed stdout refuses the result (exit 3, ``-o FILE`` still works), and
    a closed stderr (or one whose reader goes) swallows messages without changing the exit code.
    """
    closed: list[int] = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if 0 in closed or sys.stdin is None:
        sys.stdin = _ClosedInput()
    if 1 in closed or sys.stdout is None:  # writing the result fails in one line (exit 3); -o FILE still works
        sys.stdout = _ClosedOutput()
    if 2 in closed or sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False, errors="backslashreplace")  # noqa: SIM115 (lives as long as the process)
    else:
        sys.stderr = _ErrorsMayGoNowhere(sys.stderr)


def _sqlite_cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``exc`` or the exception it was raised from, when it is of ``kind``."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _reading_for_itself(command: object) -> None:
    """Leave "may this file be read" to kforensic's readers, not to the option parser.

    Typer's path parameters default to ``readable=True``: the parser then refuses
    an unreadable input as a bad parameter (exit 2, usage), where a file the user
    may not read is bad input (exit 3, "cannot access PATH: Permission denied"),
    as every reader says it. Existence and file/directory checks stay.
    """
    from typer.models import TyperPath

    for sub in getattr(command, "commands", {}).values():
        _reading_for_itself(sub)
    for param in getattr(command, "params", ()):
        if isinstance(param.type, TyperPath):
            param.type.readable = False


def _dmesg_line() -> CommandLine:
    from forensics.commands.dmesg_run import LINE

    return LINE


def _profile_line() -> CommandLine:
    from forensics.commands.profile_run import LINE

    return LINE


def _leaks_line() -> CommandLine:
    from forensics.commands.leaks_run import LINE

    return LINE


def _trace_line() -> CommandLine:
    from forensics.commands.trace_run import LINE

    return LINE


def _report_line() -> CommandLine:
    from forensics.commands.report_run import LINE

    return LINE


#: Command name -> its table of options (forensics.commandline), for the commands run without typer when the
#: command line is made only of what the table declares: a plain import inside a function each, as the registrars
#: (tests/test_architecture.py: nothing is imported by a string).
TABLES: dict[str, Callable[[], CommandLine]] = {
    "dmesg": _dmesg_line,
    "profile": _profile_line,
    "leaks": _leaks_line,
    "trace": _trace_line,
    "report": _report_line,
}


def _typer_free(argv: list[str]) -> tuple[CommandLine, dict[str, Any], list[str]] | None:
    """The command's table and what it parsed, when typer need not read ``argv`` (command first, then only what
    its table declares); None for typer (every other command line, and a shell's completion request).

    Sets the run's collection threshold (main()'s) when the command has a table, before the table's modules are
    imported, as main() sets it after typer's import for the other commands: their ~15 dataclasses and enums
    made ~20 young collections at 700 allocations (`profile SRC --folded -`: +5 M instructions against the
    narrow bypass it replaced).  A command line of such a command that the table declines (help, an error)
    then imports typer after the threshold.
    """
    table = TABLES.get(argv[0]) if argv else None
    if table is None or COMPLETION_VARIABLE in os.environ:
        return None
    gc.set_threshold(*GC_THRESHOLDS)
    line = table()
    parsed = parse(line, argv[1:])
    return None if parsed is None else (line, *parsed)


class _AbortedError(Exception):
    """An EOFError in a run made without typer, as typer's main turns it into click's Abort (after a newline)."""


def _run_typer_free(line: CommandLine, values: dict[str, Any], given: list[str]) -> int:
    """What typer runs for such a command line: the root's callback, then the options' callbacks and the command
    (the function its typer declaration calls, :func:`forensics.commandline.run`); its exit status."""
    _reset_run()
    try:
        return run(line, values, given)
    except EOFError as exc:  # typer's main: a newline on stderr, then Abort (said as an interrupt, exit 130)
        print(file=sys.stderr)
        raise _AbortedError from exc


#: The cyclic collector's thresholds for a run (see main()).
GC_THRESHOLDS = (50_000, 10, 10)


def main() -> None:
    """Entry point of the ``kforensic`` console script.

    Every way a run can end goes through here with its documented exit code. ``--debug`` never changes the
    code: it adds the traceback to an internal error (exit 4, a bug) and one ``kforensic: debug:`` line, where
    the error was raised, to exit 2 and 3 (never a traceback for bad input or usage, docs/cli.md).
    """
    # A run allocates millions of objects (the imports of typer, rich, numpy and numba; the readers' records),
    # next to none in cycles: collecting the young ones every 700 allocations (the default) cost 0.03-0.07 s
    # of CPU per warm `kforensic trace` (240 collections); every 50,000 costs next to nothing.  Set here, after
    # typer's import, not before it: before, it saved 8 M instructions of every start-up (the ~30 young
    # collections of typer's import), but `kforensic vmcore`'s peak RSS rose 114 -> 120 MiB (the collections
    # of its run fell elsewhere; 2026-12-05, issue #28).
    argv = sys.argv[1:]
    requested = _requested(argv)
    # Before the command's modules (and typer's) make their dataclasses and named tuples: their generated code from
    # the cache.
    codecache.install(requested[0] if requested else "kforensic")
    regexcache.install(requested[0] if requested else "kforensic")  # their patterns (platform's, json's...) too
    typer_free = _typer_free(argv)
    aborted: tuple[type[BaseException], ...] = (_AbortedError,)
    parse_errors: tuple[type[_ParseError], ...] = ()
    if typer_free is None:
        # Before the threshold for the commands without a table (vmcore's peak RSS, above); after it for a command
        # line its table declined (_typer_free).
        import typer

        aborted, parse_errors = (typer.Abort, _AbortedError), (typer.TyperException,)
    gc.set_threshold(*GC_THRESHOLDS)
    debug = "--debug" in argv
    _refill_standard_streams()
    try:
        code: object = None
        if typer_free is not None:
            code = _run_typer_free(*typer_free)
        else:
            command = typer.main.get_command(make_app(requested)) if requested else listing()
            _reading_for_itself(command)
            code = command(prog_name="kforensic", standalone_mode=False)
            if code == 130:  # typer turns a KeyboardInterrupt inside the command into a silent Exit(130)
                raise KeyboardInterrupt
    except KforensicError as exc:
        _fail(exc.message, exc.hint, int(exc.exit_code), _where_raised(exc) if debug else None)
    except aborted:
        _fail(INTERRUPTED, INTERRUPTED_HINT, 130)
    except parse_errors as exc:
        # Bad option values and unknown options: the same one-line format as every other error.
        message = exc.format_message()
        if "\n" in message:  # a group without its command: click's NoArgsIsHelpError carries the whole help
            message = f"{_command_name(argv)}: a command is missing"
        hint = f"{_command_name(argv)} -h shows the options"
        _fail(message, hint, int(ExitCode.USAGE), _where_raised(exc) if debug else None)
    except KeyboardInterrupt:
        _fail(INTERRUPTED, INTERRUPTED_HINT, 130)
    except BrokenPipeError:
        from forensics.output import reader_went_away

        reader_went_away()
    except SystemExit as exc:
        # click ends `--help`/`--version` into a pipe whose reader has gone with sys.exit(1), as if a finding
        # reached --fail-on (`kforensic -h | true` was exit 1); the contract is a quiet exit 0.
        if exc.code == 1 and isinstance(exc.__context__, BrokenPipeError):
            from forensics.output import reader_went_away

            reader_went_away()
        raise
    except MemoryError as exc:
        _fail(
            "out of memory",
            "give a smaller input or more memory",
            int(ExitCode.BAD_INPUT),
            _where_raised(exc) if debug else None,
        )
    except PermissionError as exc:
        # A path the user may not reach, met before its reader could say so (Python 3.11's Path.is_dir raises
        # on EACCES): the user's environment, not a bug in kforensic.
        _fail(
            f"cannot access {exc.filename or 'a file'}: {exc.strerror or exc}",
            "check the permissions of the path and of the directories above it, or run as a user who may read it",
            int(ExitCode.BAD_INPUT),
            _where_raised(exc) if debug else None,
        )
    except Exception as exc:  # the boundary: anything else is a bug, said in one line
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            # Path.is_file()/is_dir() raise it (Python 3.11 swallows only ENOENT, ENOTDIR, EBADF, ELOOP): a path
            # longer than the system allows is the user's input, not a bug (`leaks --store`, `vmcore`, `kdump
            # check --root` with a 300-byte name were exit 4; the hostile battery's long-name cases).
            _fail(
                f"cannot access {exc.filename or 'a path'}: {exc.strerror or exc}",
                "give a shorter path: at most 255 bytes per name and 4096 in all",
                int(ExitCode.BAD_INPUT),
                _where_raised(exc) if debug else None,
            )
        import sqlite3  # here, not at start-up: most commands never open a store

        store_error = _sqlite_cause(exc, sqlite3.DatabaseError)
        if store_error is not None:
            # A damaged store can fail on any query (pandas wraps the error), not only when it is opened.
            from forensics.output import inputs

            where = ", ".join(inputs()) or "a SQLite store"
            _fail(
                f"{where}: SQLite error: {store_error}",
                "the store is damaged or unreadable; salvage what is left with"
                " `sqlite3 STORE .recover | sqlite3 NEW.sqlite` and analyse NEW.sqlite",
                int(ExitCode.BAD_INPUT),
                _where_raised(exc) if debug else None,
            )
        if debug:  # a bug: the whole traceback is what its report needs
            _show_traceback()
        _fail(
            f"internal error: {type(exc).__name__}: {exc}",
            "this is a bug in kforensic; rerun with --debug and report the traceback",
            int(ExitCode.INTERNAL),
        )
    # The run is over: the interpreter's last collection at exit would walk every object left (60 ms of CPU
    # after a compiled trace run, 20 ms after a profile); outputs are closed already, frozen objects are not walked.
    gc.freeze()
    sys.exit(code if isinstance(code, int) else 0)


def entry() -> None:
    """The process's entry (the ``kforensic`` console script, ``python -m forensics``): :func:`main`, then the
    process ended by :func:`forensics.runend.end` where the command kept its delivered result (without freeing it,
    nor the modules: ~13 ms of CPU after a report-dense log's ``dmesg``); otherwise the interpreter's exit."""
    try:
        main()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            from forensics import runend

            runend.end(0 if exc.code is None else exc.code, sys._getframe(1))
        raise
