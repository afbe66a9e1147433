"""Quoting values into the files kforensic generates, the way each file format quotes.

A value that comes from an option or from a file under ``--root`` must stay
one value in the generated file: it must never end a line and start a
directive of its own (``--store "$(printf '/x\\nExecStartPre=...')"``).  Each
format has one helper; a value the format cannot carry safely (a newline, a
control character, bytes that are not UTF-8) is refused with
:class:`UsageError` (exit 2) naming what it is for.

* systemd unit ``ExecStart=`` arguments (systemd.syntax(7), systemd.service(5)
  "Command lines"): double-quoted when needed, ``\\`` and ``"`` escaped,
  ``%`` specifiers doubled, ``$`` variable references doubled.
* systemd directives taking a path (``ReadWritePaths=``, ``StateDirectory=``):
  the same, ``%`` doubled (they expand specifiers too).
* shell-sourced configuration (``/etc/default/kdump-tools``, GRUB's
  ``/etc/default/grub.d/*.cfg``): single quotes, or double quotes with ``\\``,
  ``"``, ``$`` and backquote escaped when an existing variable is to be expanded.
* sysctl.d: ``name = value``; names of sysctl keys only, values one line.
* kernel command line parameters (GRUB ``crashkernel=``): no blanks, quotes
  or shell-special characters at all.
"""

from __future__ import annotations

import re
import shlex

from forensics.errors import UsageError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SYSTEMD_PLAIN = re.compile(r"[A-Za-z0-9_/.:=+@,-]+")
_SYSCTL_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./*-]*")
_KERNEL_PARAM_VALUE = re.compile(r"[A-Za-z0-9_.,:@+\-]+")


def _require_line_safe(value: str, what: str) -> None:
    """Refuse what no format here can carry on one line: control characters, non-UTF-8 bytes."""
    bad = _CONTROL.search(value)
    if bad is not None:
        raise UsageError(
            f"{what} {value!r} holds the control character {bad.group(0)!r}: it would break the generated file",
            hint="give a value without newlines or control characters",
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"{what} {value!r} is not valid UTF-8: it cannot be written into the generated file",
            hint="give a value in UTF-8",
        ) from None


def systemd_arg(value: str, what: str = "value") -> str:
    """One ``ExecStart=`` argument: ``%`` and ``$`` doubled, double-quoted with ``\\``/``"`` escaped when needed."""
    _require_line_safe(value, what)
    escaped = value.replace("%", "%%").replace("$", "$$")
    if escaped and _SYSTEMD_PLAIN.fullmatch(escaped):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_path(value: str, what: str = "path") -> str:
    """A path for a directive such as ``ReadWritePaths=`` (space-separated list, specifiers expanded)."""
    return systemd_arg(value, what).replace("$$", "$")  # these directives do not expand $VARIABLES


def comment_text(text: str) -> str:
    """Free text for a ``#`` comment line: control characters become spaces, so it stays one comment line."""
    return _CONTROL.sub(" ", text)


def shell_single(value: str, what: str = "value") -> str:
    """A word for a POSIX shell that sources the file: single-quoted (nothing inside is special)."""
    _require_line_safe(value, what)
    return "'" + value.replace("'", "'\\''") + "'"


def shell_double_inner(value: str, what: str = "value") -> str:
    """Text to place inside double quotes in a shell-sourced file, with nothing in it expanded."""
    _require_line_safe(value, what)
    return re.sub(r'([\\"$`])', r"\\\1", value)


def shell_assignment(name: str, value: str) -> str:
    """``NAME='value'`` for a shell-sourced configuration file such as /etc/default/kdump-tools."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UsageError(f"{name!r} is not a shell variable name")
    return f"{name}={shell_single(value, name)}"


def sysctl_line(name: str, value: str) -> str:
    """``name = value`` for /etc/sysctl.d: one key, one value on one line."""
    if not _SYSCTL_NAME.fullmatch(name):
        raise UsageError(f"{name!r} is not a sysctl key", hint="e.g. kernel.panic_on_oops")
    _require_line_safe(value, f"sysctl {name}")
    if value != value.strip() or not value:
        raise UsageError(f"sysctl {name} value {value!r} has blanks around it or is empty")
    return f"{name} = {value}"


def kernel_param_value(value: str, what: str = "kernel parameter") -> str:
    """A kernel command line parameter value (``crashkernel=VALUE``): refused unless plainly safe.

    The value lands in a double-quoted shell string that GRUB later splits on
    blanks, so only the characters such values use (sizes, ranges, offsets)
    are allowed.
    """
    _require_line_safe(value, what)
    if not _KERNEL_PARAM_VALUE.fullmatch(value):
        raise UsageError(
            f"{what} {value!r} holds characters a kernel parameter value cannot carry safely",
            hint="e.g. crashkernel=256M or 1G-4G:192M,4G-:512M",
        )
    return value


def shown_path(path: str) -> str:
    """A path as a report prints it in its text: as it is, or, when it holds a control character, as Python's repr of
    it, quoted, with that character escaped (``'odd dir/x\\ny/kf.c'``), as this module's refusals name such a value.

    A newline printed as it is broke the line (the path's rest on the next one); printed as a space (markdown's
    cells) it named a file that does not exist (ue6 10e).  The JSON keeps the path's own string.
    """
    return repr(path) if _CONTROL.search(path) else path


def shell_word(value: str) -> str:
    """One word of a command a report prints for the reader to run: :func:`shlex.quote`'s, or, when the value holds a
    control character, bash's ``$'...'`` with it escaped (``$'/tmp/odd dir/x\\ny/kf.c'``).

    shlex.quote keeps a newline inside its quotes, and a report shows each command on one line: the newline came out
    as a space (``'odd dir/x y/kf.c'``), a file that does not exist (ue10 #12).
    """
    if not _CONTROL.search(value):
        return shlex.quote(value)
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", "'": "\\'"}
    return "$'" + "".join(named.get(c) or (f"\\x{ord(c):02x}" if _CONTROL.match(c) else c) for c in value) + "'"
