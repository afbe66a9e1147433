"""The user's home and cache directories, or a typed "there is none" instead of a guess.

Python's ``Path.home()`` raises RuntimeError where ``HOME`` is unset and the user id has no passwd entry (a
container started with ``--user 12345``, an OpenShift pod), and returns a relative path for a relative ``HOME``:
per-user files (the regex and code caches, numba's kernels, debuginfod's downloads) would then fail the run or
land in the current directory, which may be the evidence.  Here such a user has no home: :class:`NoHomeError`, an
``OSError``, which every cache's "cannot be written" path already takes (the run goes on without that cache).
"""

from __future__ import annotations

import os
from pathlib import Path


class NoHomeError(OSError):
    """No absolute home directory can be told for this user: per-user files are not kept."""


def home(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """``$HOME`` when absolute, else the passwd entry's directory when absolute; :class:`NoHomeError` otherwise."""
    given = environ.get("HOME")
    if given:
        if os.path.isabs(given):
            return Path(given)
        raise NoHomeError(f"HOME={given!r} is not an absolute path")
    import pwd

    try:
        directory = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        raise NoHomeError(f"HOME is not set and user id {os.getuid()} has no passwd entry") from None
    if not os.path.isabs(directory):
        raise NoHomeError(f"HOME is not set and user id {os.getuid()}'s passwd entry names no absolute home")
    return Path(directory)


def cache_home(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """``$XDG_CACHE_HOME`` when absolute, else ``~/.cache`` (:func:`home`; :class:`NoHomeError` without one)."""
    xdg = environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg and os.path.isabs(xdg) else home(environ) / ".cache"
