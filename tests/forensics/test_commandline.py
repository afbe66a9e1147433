"""The commands' tables of options (forensics.commandline) against the click commands typer builds from their
declarations: the same options, and for any command line either a decline or exactly the values typer passes.

The tables let ``forensics.cli.main`` run a command without typer and click (start-up time, issue #28); a table
that drifted from its declaration would run a command with other values than the user's, or none of typer's
checks.  Real commands, built as ``main`` builds them; the command's body is replaced by a recorder on both ways.
"""

from __future__ import annotations

import contextlib
import functools
import io
import random
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer._click.types import FloatParamType, FuncParamType, IntParamType, IntRange, StringParamType
from typer._types import TyperChoice
from typer.models import TyperPath

from forensics import cli, commandline, output
from forensics.commandline import CommandLine, DeclinedError
from forensics.errors import KforensicError
from forensics.output import reset_run

#: Command -> the name of its body: the function its typer declaration and its table both call.
BODIES = {
    "dmesg": "run_dmesg",
    "profile": "run_profile",
    "leaks": "run_leaks",
    "trace": "run_trace",
    "report": "run_report",
}


def test_every_table_is_tested() -> None:
    assert set(cli.TABLES) == set(BODIES)
    for name, table in cli.TABLES.items():
        assert table().name == name and table().body.__name__ == BODIES[name]


@pytest.mark.parametrize("name", sorted(BODIES))
def test_the_table_declares_what_typer_declares(name: str) -> None:
    line = cli.TABLES[name]()
    command = _click_command_group(name).commands[name]
    assert command.allow_interspersed_args and not command.ignore_unknown_options
    assert not command.no_args_is_help and not command.allow_extra_args
    assert command.context_settings.get("token_normalize_func") is None
    assert command.context_settings.get("auto_envvar_prefix") is None
    assert not command.deprecated  # click's notice, which the table would not print
    options = {o.dest: o for o in line.options}
    arguments = [a.dest for a in line.arguments]
    seen = []
    for param in command.params:
        # (a parameter's ``deprecated``: a later click's, with a notice the table would not print)
        assert param.expose_value and param.envvar is None and not getattr(param, "deprecated", False), param.name
        if isinstance(param, typer.core.TyperOption):
            if "--help" in param.opts:
                assert param.is_eager
                continue
            option = options[param.name]
            seen.append(param.name)
            assert set(option.names) == set(param.opts) and not param.secondary_opts, param.name
            assert not (param.count or param.is_eager or param.required), param.name
            assert param.multiple == option.multiple and not (param.multiple and param.is_flag), param.name
            assert param.prompt is None, param.name  # a prompt would read standard input
            assert param.nargs == 1
            assert param.is_flag == (option.convert is None), param.name
            assert (param.callback is not None) == (option.callback is not None), param.name
            if option.callback is not None:
                _same_callback(param, option)
            if param.is_flag:
                assert param.default is False is option.default and param.is_bool_flag
            else:
                _same_type(param.type, option.convert)
        else:
            assert isinstance(param, typer.core.TyperArgument)
            argument = line.arguments[arguments.index(param.name)]
            seen.append(param.name)
            assert param.nargs == (-1 if argument.many else 1) and param.required == (not argument.many)
            _same_type(param.type, argument.convert)
    assert sorted(seen) == sorted([*options, *arguments])


def _same_type(kind: Any, convert: Any) -> None:
    if isinstance(kind, TyperChoice):
        assert [c for c in kind.choices] == [m.value for m in convert.kind]
        assert kind.case_sensitive == convert.case_sensitive
    elif isinstance(kind, IntRange):
        assert (kind.min, kind.max, kind.min_open, kind.clamp) == (convert.low, None, False, False)
    elif isinstance(kind, FloatParamType):
        # Exactly a float: a FloatRange (its subclass) would refuse values the table takes.
        assert type(kind) is FloatParamType and convert is commandline.real
    elif isinstance(kind, IntParamType):
        assert type(kind) is IntParamType and convert.low is None
    elif isinstance(kind, FuncParamType):  # -o: the same path, or a decline where typer refuses the value
        for value in ("-", "x", "x/", "/", "", "a/b/", "//", "=x", " "):
            try:
                wanted = kind.convert(value, None, None)
            except typer.BadParameter:
                with pytest.raises(DeclinedError):
                    convert(value)
            else:
                assert convert(value) == wanted, value
    elif isinstance(kind, TyperPath):
        assert not (kind.exists or kind.readable or kind.writable or kind.resolve_path) and kind.type in (None, Path)
        assert kind.file_okay and kind.dir_okay and not kind.allow_dash and convert is commandline.path
    else:
        assert isinstance(kind, StringParamType) and convert is commandline.text


def _outcome(call: Any, value: Any) -> tuple[str, Any, bool]:
    """What a callback makes of ``value``: its answer or its error's line, and what it left of --force (from a
    fresh run's state: an earlier test of the same worker may have left --force set)."""
    reset_run()
    try:
        answer: tuple[str, Any] = ("value", call(value))
    except KforensicError as exc:
        answer = ("error", f"{exc.message} / {exc.hint}")
    forced = output._FORCE[0]
    reset_run()
    return (*answer, forced)


def _same_callback(param: Any, option: commandline.Option) -> None:
    """The table's callback does what typer's does, on values of the option's type (a number's edges too)."""
    samples = [True, False] if param.is_flag else [None, float("nan"), float("inf"), -1.0, 0.0, 0.5, 30.0, 1e300]
    for value in samples:
        assert _outcome(option.callback, value) == _outcome(lambda v: param.callback(None, param, v), value), value


def _record(monkeypatch: pytest.MonkeyPatch, name: str) -> list[dict[str, Any]]:
    """The body replaced, where the table and the typer declaration call it, by one that records its values and
    what the options' callbacks did (--force's: may the run replace other users' files)."""
    calls: list[dict[str, Any]] = []

    def body(**values: Any) -> int:
        calls.append({**values, "(forced)": output._FORCE[0]})
        return 0

    monkeypatch.setattr(sys.modules[_declaring_module(name)], BODIES[name], body)
    monkeypatch.setattr(cli.TABLES[name](), "body", body)
    return calls


@functools.cache
def _declaring_module(name: str) -> str:
    """The module of the command's typer declaration, which calls the body (once per command: the hypothesis test
    records its body once per example)."""
    app = cli.make_app(cli._requested([name]))
    (declared,) = [c.callback for c in app.registered_commands if c.name == name]
    assert declared is not None
    return declared.__module__


def _typed(values: dict[str, Any]) -> dict[str, tuple[type, Any]]:
    return {k: (type(v), v) for k, v in values.items()}


def _by_typer(name: str, args: list[str], calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What the body got from typer, None when typer did not call it (an error, --help)."""
    del calls[:]
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    try:
        with quiet[0], quiet[1], contextlib.suppress(typer.TyperException, typer.Abort, typer.Exit):
            _click_command_group(name).main(args=[name, *args], prog_name="kforensic", standalone_mode=False)
    except KforensicError as exc:  # an option's callback refused its value (a number out of range)
        return {"(error)": f"{exc.message} / {exc.hint}"}
    finally:
        reset_run()
    return calls[0] if calls else None


_GROUPS: dict[str, Any] = {}


def _click_command_group(name: str) -> Any:
    """The root with the command, as main() builds it (its paths' checks as main() leaves them)."""
    if name not in _GROUPS:
        group = typer.main.get_command(cli.make_app(cli._requested([name])))
        cli._reading_for_itself(group)
        _GROUPS[name] = group
    return _GROUPS[name]


def _fast(line: CommandLine, args: list[str], calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    del calls[:]
    parsed = commandline.parse(line, args)
    if parsed is None:
        return None
    try:
        commandline.run(line, *parsed)
    except KforensicError as exc:  # an option's callback refused its value (a number out of range)
        assert not calls
        return {"(error)": f"{exc.message} / {exc.hint}"}
    finally:
        reset_run()
    assert len(calls) == 1
    return calls[0]


#: Command lines both ways read: (command, words after it, what the body gets that is not a default).
ACCEPTED = [
    ("dmesg", [], {}),
    ("dmesg", ["kern.log"], {"logs": ["kern.log"]}),
    ("dmesg", ["-", "--format", "json"], {"logs": ["-"], "fmt": "json"}),
    ("dmesg", ["a", "-fjson", "b", "-o", "-"], {"logs": ["a", "b"], "fmt": "json", "output": Path("/dev/stdout")}),
    ("dmesg", ["--format=md", "--fail-on", "HIGH", "x"], {"logs": ["x"], "fmt": "md", "fail_on": "high"}),
    (
        "dmesg",
        ["--live", "--debug", "--force", "-o=r"],
        {"live": True, "debug": True, "force": True, "output": Path("=r")},
    ),
    ("dmesg", ["--signatures", "d/", "--workers", "0"], {"logs": ["d/"], "signatures": True, "workers": 0}),
    ("dmesg", ["", "-f", "text"], {"logs": [""], "fmt": "text"}),
    ("profile", ["p", "--folded", "-"], {"source": "p", "folded": Path("-")}),
    ("profile", ["--top", "3", "-", "--format", "text"], {"source": "-", "top": 3, "format_given": True}),
    (
        "profile",
        ["p", "--pid=-1", "--window", ":5", "--digest-bytes", "1024"],
        {"source": "p", "pid": -1, "window": ":5", "digest_bytes": 1024},
    ),
]

ACCEPTED += [
    ("leaks", [], {}),
    ("leaks", ["--store", "s.db", "--run", "2", "--last=6h"], {"store": Path("s.db"), "run": 2, "last": "6h"}),
    (
        "leaks",
        ["--min-rate", "12.5", "--timeout=5", "--insecure"],
        {"min_rate": 12.5, "timeout": 5.0, "insecure": True},
    ),
    (
        "leaks",
        ["--prometheus", "http://p:9090", "--step", "60s", "-fjson"],
        {"prometheus": "http://p:9090", "fmt": "json"},
    ),
    (
        "leaks",
        ["--min-rate", "nan"],
        {"(error)": "--min-rate nan is not a finite number of KB per hour / give a number of KB per hour"},
    ),
]

ACCEPTED += [
    ("trace", ["t.txt"], {"trace_file": "t.txt"}),
    (
        "trace",
        ["--span", "a..b", "-", "--span=c..d", "--spans", "x.csv", "--hog-ms", "7", "--top=3"],
        {"trace_file": "-", "span_patterns": ["a..b", "c..d"], "span_sources": ["x.csv"], "hog_ms": 7.0, "top": 3},
    ),
    (
        "trace",
        ["t", "--bucket-ms", "0"],
        {"(error)": "--bucket-ms 0 milliseconds is out of range: give more than 0 / in milliseconds"},
    ),
]

ACCEPTED += [
    ("report", [], {}),
    ("report", ["--from", "a.json", "b.json"], {"from_files": [Path("a.json")], "extra": [Path("b.json")]}),
    (
        "report",
        ["--dmesg", "a", "--dmesg=b", "--trace", "t", "--vmcore", "v", "--digest-bytes", "512"],
        {"dmesg": [Path("a"), Path("b")], "trace": [Path("t")], "vmcore": Path("v"), "digest_bytes": 512},
    ),
    ("report", ["--from", "a.json", "-fjson", "--json", "r.json"], {"fmt": "json", "json_out": Path("r.json")}),
]

#: Command lines left to typer: help, errors, forms the tables do not read.
DECLINED = [
    ("dmesg", ["--help"]),
    ("dmesg", ["-h"]),
    ("dmesg", ["--", "x"]),
    ("dmesg", ["--format", "jsn"]),
    ("dmesg", ["--format"]),
    ("dmesg", ["--live=1"]),
    ("dmesg", ["--form", "json"]),
    ("dmesg", ["-x"]),
    ("dmesg", ["-o", "dir/"]),
    ("dmesg", ["--workers", "many"]),
    ("dmesg", ["-f=json"]),
    ("profile", []),
    ("profile", ["a", "b"]),
    ("profile", ["a", "--top", "0"]),
    ("profile", ["a", "--digest-bytes", "1023"]),
    ("leaks", ["s.db"]),
    ("leaks", ["--min-rate", "fast"]),
    ("leaks", ["--timeout"]),
    ("trace", []),
    ("trace", ["t", "--slowest", "0"]),
    ("trace", ["t", "--span"]),
    ("report", ["--digest-bytes", "511"]),
    ("report", ["--format", "pdf"]),
    ("report", ["--from"]),
]


@pytest.mark.parametrize(("name", "args", "values"), ACCEPTED, ids=repr)
def test_common_command_lines_are_read_without_typer(
    name: str, args: list[str], values: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _record(monkeypatch, name)
    fast = _fast(cli.TABLES[name](), args, calls)
    assert fast is not None
    typed = _by_typer(name, args, calls)
    assert typed is not None and _typed(fast) == _typed(typed)
    for key, value in values.items():
        assert getattr(fast[key], "value", fast[key]) == value, key


@pytest.mark.parametrize(("name", "args"), DECLINED, ids=repr)
def test_help_errors_and_other_forms_are_left_to_typer(name: str, args: list[str]) -> None:
    assert commandline.parse(cli.TABLES[name](), args) is None


#: The values an option is given, the words, and the odd words of the command lines drawn below.
_VALUES = (
    *("json", "md", "text", "html", "JSON", "high", "Critical", "info", "ß", "", "5", "0", "-1", " 7"),
    *("1_0", "0x1", "\u0661", "1024", "1023", "x/", "-", "a", "=b", "-fjson", "--live", "1:2", "/"),
    *("nan", "inf", "-0.5", "1e3", "2.5", "1d", "auto"),
)
_WORDS = ("a", "-", "", "x.log", "b/c", "=x")
_ODD = ("--", "-h", "--help", "-x", "--nope", "-fo", "-of", "--for", "--version", "--live=1")
#: How many pieces a line has, 0 to 6, weighted as hypothesis's ``st.lists(piece, max_size=6)`` drew them (3,000
#: draws: 6 pieces 54%, 5 15%, 4 19%, 3 10%, 2 1.6%; 0 and 1 a few, kept a few here).
_LENGTHS = (0, 1, 2, 3, 4, 5, 6)
_LENGTH_WEIGHTS = (1, 1, 3, 10, 19, 15, 54)
#: Command lines checked per drawn seed: 100 examples of 10 lines, the 1,000 lines per command drawn before.
LINES_PER_SEED = 10


@functools.cache
def _pieces(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The command's flags and the options that take a value (once per command)."""
    line = cli.TABLES[name]()
    flags = tuple(sorted(n for o in line.options if o.convert is None for n in o.names))
    takes = tuple(sorted(n for o in line.options if o.convert is not None for n in o.names))
    return flags, takes


def _words(name: str, rng: random.Random) -> list[str]:
    """A command line of well-formed pieces (a word; an option and its value, apart or glued; a flag) and odd ones:
    each piece one of seven kinds, as st.one_of chose among them (a word, a pair twice, a glued pair, a flag twice,
    an odd word), its option and value each drawn uniformly, as st.sampled_from draws.

    Drawn from a ``random.Random`` that hypothesis seeds, ten lines an example: drawn by hypothesis piece by piece,
    one line an example, hypothesis's engine was ~85% of the test's CPU (2 ms a line, the parse and typer's 0.3 ms).
    The same lines, 1,000 per command; a failure says its seed (hypothesis replays it) and its command line."""
    flags, takes = _pieces(name)
    words: list[str] = []
    for _ in range(rng.choices(_LENGTHS, _LENGTH_WEIGHTS)[0]):
        kind = rng.randrange(7)
        if kind == 0:
            words.append(rng.choice(_WORDS))
        elif kind in (4, 5):
            words.append(rng.choice(flags))
        elif kind == 6:
            words.append(rng.choice(_ODD))
        else:
            option, value = rng.choice(takes), rng.choice(_VALUES)
            if kind == 3:
                words.append(f"{option}={value}" if option[1] == "-" else option + value)
            else:
                words += [option, value]
    return words


@pytest.mark.parametrize("name", sorted(BODIES))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, (1 << 64) - 1))
def test_a_parse_declines_or_gives_what_typer_gives(name: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    calls = _record(monkeypatch, name)
    for _ in range(LINES_PER_SEED):
        args = _words(name, rng)
        fast = _fast(cli.TABLES[name](), args, calls)
        if fast is not None:
            typed = _by_typer(name, args, calls)
            assert typed is not None, args
            assert _typed(fast) == _typed(typed), args
