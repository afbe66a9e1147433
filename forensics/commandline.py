"""Command lines parsed from a table of the command's options, without typer and click (start-up time; issue #28).

Importing typer and click and building a command was ~17-25 ms of the ~80-90 ms of CPU a run of ``kforensic dmesg`` on
an empty log took.  A command that has a table (:class:`CommandLine`: its options' names, flag or value, how a
value converts, defaults, callbacks; its arguments) is run by :func:`forensics.cli.main` without them when the
command line is made only of what the table declares, in the forms click reads the same way: the same function
typer would run, with the same converted values.  Anything else is *declined* (:func:`parse` returns None) and
goes through typer exactly as before: ``--help``, an unknown option, a value typer would refuse (it says why),
``--``, a form the table does not read, shell completion (``_KFORENSIC_COMPLETE`` set).

Nothing here may raise for a command line: declining is the only answer to what it does not know.
``tests/forensics/test_commandline.py`` compares each table with the click command typer builds from the
command's declaration (drift), and checks on many generated command lines that a parse either declines or gives
exactly the values typer passes to the command.

No typer or click import here, and none in the modules of the commands' tables and bodies.
"""

import enum
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

E = TypeVar("E", bound=enum.Enum)

#: The environment variable that makes click answer a shell's completion request in place of running the command.
COMPLETION_VARIABLE = "_KFORENSIC_COMPLETE"


class DeclinedError(Exception):
    """A value typer would refuse (or read otherwise): the command line is left to typer, which says why."""


def text(value: str) -> str:
    """A string option or argument (click's STRING): the word as given."""
    return value


def path(value: str) -> Path:
    """A ``Path`` option without a parser (typer's path type, nothing checked: see ``forensics.cli``)."""
    return Path(value)


def integer(low: int | None = None) -> Callable[[str], int]:
    """An ``int`` option (click's INT, or IntRange with ``min=low``): what ``int()`` reads, not below ``low``."""

    def convert(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise DeclinedError from None
        if low is not None and number < low:
            raise DeclinedError
        return number

    convert.low = low  # type: ignore[attr-defined]  # read by the drift test
    return convert


def real(value: str) -> float:
    """A ``float`` option (click's FLOAT): what ``float()`` reads (nan and inf too: the option's callback checks)."""
    try:
        return float(value)
    except ValueError:
        raise DeclinedError from None


def choice(kind: type[E], *, case_sensitive: bool = True) -> Callable[[str], E]:
    """An enum option: the member whose value is the word (case-folded on both sides when not case-sensitive)."""
    members = {(str(m.value) if case_sensitive else str(m.value).casefold()): m for m in kind}

    def convert(value: str) -> E:
        found = members.get(value if case_sensitive else value.casefold())
        if found is None:
            raise DeclinedError
        return found

    convert.kind = kind  # type: ignore[attr-defined]  # read by the drift test
    convert.case_sensitive = case_sensitive  # type: ignore[attr-defined]
    return convert


class Option:
    """One option: its names (``--format``, ``-f``), the parameter it fills, how a value converts (None: a flag,
    True when given), its default, the callback click calls with its value (given or not) before the command, and
    whether it may be given more than once (``multiple``: a list of every value given, the default when none)."""

    __slots__ = ("callback", "convert", "default", "dest", "multiple", "names")

    def __init__(
        self,
        names: tuple[str, ...],
        dest: str,
        convert: Callable[[str], Any] | None = None,
        default: Any = None,
        callback: Callable[[Any], Any] | None = None,
        *,
        multiple: bool = False,
    ) -> None:
        self.names, self.dest, self.convert, self.default, self.callback = names, dest, convert, default, callback
        self.multiple = multiple


class Argument:
    """One argument: the parameter it fills, how each word converts, and whether it takes every word left (a list;
    None when there is none) or exactly one (required)."""

    __slots__ = ("convert", "dest", "many")

    def __init__(self, dest: str, convert: Callable[[str], Any] = text, *, many: bool = False) -> None:
        self.dest, self.convert, self.many = dest, convert, many


class CommandLine:
    """A command's table: its options and arguments, and its body (the function its typer declaration calls, with
    every parameter by name; ``given_as``: keywords the body also takes, each True when the option it names was
    given on the command line, click's ParameterSource COMMANDLINE)."""

    __slots__ = ("arguments", "body", "given_as", "long", "name", "options", "short")

    def __init__(
        self,
        name: str,
        options: Sequence[Option],
        arguments: Sequence[Argument],
        body: Callable[..., int],
        *,
        given_as: Mapping[str, str] | None = None,
    ) -> None:
        self.name, self.options, self.arguments, self.body = name, tuple(options), tuple(arguments), body
        self.given_as = dict(given_as or {})
        if any(argument.many for argument in self.arguments[:-1]):
            raise ValueError("only the last argument may take every word left")
        self.long: dict[str, Option] = {}
        self.short: dict[str, Option] = {}
        for option in self.options:
            for name_ in option.names:
                # click: a name of one letter after one dash is a short option (it may be followed by its value
                # in the same word, or by more short flags); any other is long.
                (self.short if len(name_) == 2 and name_[1] != "-" else self.long)[name_] = option


class _Parsed:
    __slots__ = ("order", "values", "words")

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.order: dict[str, None] = {}  # the parameters given, in the order they first appear
        self.words: list[str] = []


def _take(option: Option, value: str | None, parsed: _Parsed) -> None:
    """One occurrence of ``option`` (with its value when it takes one): the last one given wins, as in click, or
    each is kept in order (``multiple``)."""
    converted = True if option.convert is None or value is None else option.convert(value)
    if option.multiple:
        parsed.values.setdefault(option.dest, []).append(converted)
    else:
        parsed.values[option.dest] = converted
    parsed.order.setdefault(option.dest)


def _words(line: CommandLine, args: list[str], parsed: _Parsed) -> None:
    """Options and positional words, read as click's parser reads them (``_OptionParser._process_args_for_options``
    with interspersed arguments); :class:`DeclinedError` where click would fail, or read the words another way."""
    rest = args[::-1]  # popped from the end: the next word last
    while rest:
        word = rest.pop()
        if word == "--":
            raise DeclinedError  # everything after is positional: rare, typer's
        if len(word) < 2 or word[0] != "-":
            parsed.words.append(word)  # "-" (stdin) and "" too
            continue
        name, eq, attached = word.partition("=")
        option = line.long.get(name)
        if option is not None:  # --format json, --format=json, --live
            if option.convert is None:
                if eq:
                    raise DeclinedError  # "--live=x": click says the option takes no value
                _take(option, None, parsed)
            elif eq:
                _take(option, attached, parsed)
            elif rest:
                _take(option, rest.pop(), parsed)
            else:
                raise DeclinedError  # its value is missing
            continue
        if word[1] == "-":
            raise DeclinedError  # no such long option (click does not read "--x" as short options)
        # Short options: -f json, -fjson (the rest of the word is the value: "-o=x" is "=x"), -ab (two flags).
        for i in range(1, len(word)):
            option = line.short.get("-" + word[i])
            if option is None:
                raise DeclinedError
            if option.convert is None:
                _take(option, None, parsed)
            elif i + 1 < len(word):
                _take(option, word[i + 1 :], parsed)
                break
            elif rest:
                _take(option, rest.pop(), parsed)
            else:
                raise DeclinedError


def parse(line: CommandLine, args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The value of every parameter of ``line``'s command and the parameters given (in the order they first
    appear), from ``args`` (the words after the command's name); None when the command line is typer's (see the
    module's docstring).  Nothing is run: the options' callbacks are :func:`run`'s."""
    parsed = _Parsed()
    try:
        _words(line, args, parsed)
    except DeclinedError:
        return None
    values, words = parsed.values, parsed.words
    try:
        for argument in line.arguments:
            if argument.many:
                values[argument.dest] = [argument.convert(w) for w in words] or None
                if words:
                    parsed.order.setdefault(argument.dest)
                words = []
            elif words:
                values[argument.dest] = argument.convert(words[0])
                parsed.order.setdefault(argument.dest)
                words = words[1:]
            else:
                return None  # a required argument is missing
    except DeclinedError:
        return None
    if words:
        return None  # more words than arguments
    for option in line.options:
        values.setdefault(option.dest, option.default)
    return values, list(parsed.order)


def run(line: CommandLine, values: dict[str, Any], given: list[str]) -> int:
    """Run ``line``'s command with what :func:`parse` gave: the options' callbacks first, in click's order (the
    ones given in the order they were given, then the others in the table's), then the command; its exit status."""
    options = {option.dest: option for option in line.options}
    for dest in [*(d for d in given if d in options), *(d for d in options if d not in given)]:
        callback = options[dest].callback
        if callback is not None:
            values[dest] = callback(values[dest])
    return line.body(**values, **{keyword: dest in given for keyword, dest in line.given_as.items()})
