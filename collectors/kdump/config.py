"""Parsing the two kdump configuration formats into :class:`KdumpConfig`.

* Debian/Ubuntu ``/etc/default/kdump-tools`` is a shell fragment of
  ``NAME=value`` assignments sourced by ``kdump-config``.
* RHEL/Fedora ``/etc/kdump.conf`` is one ``directive value...`` per line,
  read by ``kdumpctl``, which refuses to start on an unknown directive.

Only the syntax is judged here; what the values mean is for the detectors.
"""

from __future__ import annotations

import re

from forensics.types.kdump import ConfigEntry, ConfigProblem, KdumpConfig, TextFile

_ASSIGNMENT = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")

#: Directives kdumpctl accepts in kdump.conf (RHEL 8/9, Fedora kdump-utils).
KDUMP_CONF_DIRECTIVES = frozenset(
    {
        "auto_reset_crashkernel",
        "raw",
        "nfs",
        "ssh",
        "sshkey",
        "path",
        "core_collector",
        "kdump_post",
        "kdump_pre",
        "extra_bins",
        "extra_modules",
        "failure_action",
        "default",
        "final_action",
        "force_rebuild",
        "force_no_rebuild",
        "dracut_args",
        "fence_kdump_args",
        "fence_kdump_nodes",
    }
)
#: File system types that name a local dump target device (``ext4 UUID=...``).
KDUMP_CONF_FS_TYPES = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "minix", "virtiofs"})
#: Directives that choose where the dump goes; kdumpctl allows only one.
KDUMP_CONF_TARGETS = frozenset({"raw", "nfs", "ssh"} | KDUMP_CONF_FS_TYPES)


def _shell_value(raw: str) -> tuple[str, str | None]:
    """The value of a shell assignment's right-hand side, and a problem if it cannot be read."""
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        quote = raw[0]
        end = raw.find(quote, 1)
        if end < 0:
            return raw[1:], f"unterminated {quote} quote"
        rest = raw[end + 1 :].strip()
        if rest and not rest.startswith("#"):
            return raw[1:end], f"text after the closing quote: {rest!r}"
        return raw[1:end], None
    value = re.split(r"\s+#", raw, maxsplit=1)[0].strip()
    if " " in value or "\t" in value:
        return value, "unquoted value with spaces (the shell would run it as a command)"
    return value, None


def _encoding_problem(file: TextFile, number: int, text: str) -> str | None:
    """What makes a line unreadable to the tooling although it looks right: a BOM, NUL bytes, a CR line end.

    A file saved by a Windows editor (UTF-8 with a byte-order mark, UTF-16, CRLF line ends) reads fine here
    but not to the shell or kdumpctl: ``USE_KDUMP=1\\r`` is not 1, ``KDUMP_COREDIR=/var/crash\\r`` another
    directory. Before, such a file was "2 settings, no errors" (CRLF) or "not a NAME=value assignment" (BOM).
    """
    if number == 1 and text.startswith("\ufeff"):
        return "the file starts with a byte-order mark (U+FEFF): the tooling reads it as part of the first word"
    if "\x00" in text:
        return "NUL bytes (the file is UTF-16 or binary?): the tooling reads it as plain ASCII/UTF-8 text"
    if number in file.cr_lines:
        return "ends in a carriage return (Windows line end): the tooling keeps it in the value (run dos2unix on it)"
    return None


def parse_kdump_tools(file: TextFile) -> KdumpConfig:
    """Parse ``/etc/default/kdump-tools`` (shell assignments; comments and blank lines skipped)."""
    entries: list[ConfigEntry] = []
    problems: list[ConfigProblem] = []
    for number, text in enumerate(file.lines, 1):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if (encoding := _encoding_problem(file, number, text)) is not None:
            problems.append(ConfigProblem(number, text, encoding))
            if number not in file.cr_lines:  # a BOM or NULs: the line means nothing to the shell
                continue
        match = _ASSIGNMENT.match(stripped)
        if match is None:
            problems.append(ConfigProblem(number, text, "not a NAME=value assignment"))
            continue
        value, problem = _shell_value(match.group(2))
        if problem is not None:
            problems.append(ConfigProblem(number, text, problem))
        entries.append(ConfigEntry(match.group(1), value, number, text))
    return KdumpConfig(file=file, entries=tuple(entries), problems=tuple(problems))


def parse_kdump_conf(file: TextFile) -> KdumpConfig:
    """Parse ``/etc/kdump.conf`` (``directive value``; ``#`` starts a comment)."""
    entries: list[ConfigEntry] = []
    problems: list[ConfigProblem] = []
    targets: list[ConfigEntry] = []
    for number, text in enumerate(file.lines, 1):
        stripped = re.split(r"(?:^|\s)#", text, maxsplit=1)[0].strip()
        if not stripped:
            continue
        if (encoding := _encoding_problem(file, number, text)) is not None:
            problems.append(ConfigProblem(number, text, encoding))
            if number not in file.cr_lines:  # a BOM or NULs: the line means nothing to kdumpctl
                continue
        directive, _, value = stripped.partition(" ")
        directive = directive.split("\t", 1)[0]
        value = stripped[len(directive) :].strip()
        if directive not in KDUMP_CONF_DIRECTIVES and directive not in KDUMP_CONF_FS_TYPES:
            problems.append(ConfigProblem(number, text, f"unknown directive {directive!r}"))
            continue
        if not value:
            problems.append(ConfigProblem(number, text, f"directive {directive!r} needs a value"))
            continue
        entry = ConfigEntry(directive, value, number, text)
        entries.append(entry)
        if directive in KDUMP_CONF_TARGETS:
            targets.append(entry)
    problems.extend(
        ConfigProblem(extra.line, extra.text, "more than one dump target (kdumpctl allows one)")
        for extra in targets[1:]
    )
    problems.sort(key=lambda p: p.line)
    return KdumpConfig(file=file, entries=tuple(entries), problems=tuple(problems))
