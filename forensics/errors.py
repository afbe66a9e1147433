"""Domain errors: one clear line, a hint saying what to do, and an exit code.

Code below the CLI raises these; only :mod:`forensics.cli` turns them into a
message on stderr and a process exit status (see docs/cli.md).
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit statuses, documented in docs/cli.md."""

    OK = 0
    FINDINGS = 1  # findings at or above --fail-on
    USAGE = 2  # bad command line
    BAD_INPUT = 3  # unreadable or invalid input, or a collection error
    INTERNAL = 4  # a bug in kforensic: please report it with --debug output


class KforensicError(Exception):
    """Base of all errors kforensic reports to the user."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class InputError(KforensicError):
    """An input is missing, unreadable or not what it should be."""

    exit_code = ExitCode.BAD_INPUT


class EmptyLogError(InputError):
    """A log with nothing in it (no line, or blank lines only): refused as no kernel log, or, for a command that
    read standard input without being told to, its usage error (cron's and ssh's empty pipe)."""


class DebugInfoMismatchError(InputError):
    """The ``--vmlinux`` given is another kernel's: its build ID is not the dump's.  The dump's own state cannot be
    read with it; its kernel log still can, without symbols (VMCOREINFO locates it, as ``makedumpfile --dump-dmesg``
    reads it): ``report`` reads that and says the vmlinux was not used, ``kforensic vmcore`` refuses the dump."""


class CollectionError(KforensicError):
    """Reading the live system failed (permissions, missing files)."""

    exit_code = ExitCode.BAD_INPUT


class UsageError(KforensicError):
    """The command line asks for something that cannot be done."""

    exit_code = ExitCode.USAGE


class NoDebugInfoError(InputError):
    """The kernel's debug info of a dump was not found: its own state cannot be read, its kernel log still can.

    ``kforensic vmcore`` and ``report --vmcore`` then read the dump's kernel log instead
    (:func:`forensics.pipelines.vmcore.analyse_dump_or_log`); ``reason`` is the message without the dump's path,
    ``hint`` where the debug info is had.
    """

    def __init__(self, dump: str, reason: str, hint: str) -> None:
        super().__init__(f"{dump}: {reason}", hint=hint)
        self.dump = dump
        self.reason = reason
        self.hint: str = hint
