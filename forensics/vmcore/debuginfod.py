"""A debuginfod client: debug files by build ID over HTTP, into a per-user cache.

The protocol is elfutils' (``GET <server>/buildid/<hex>/debuginfo``; 404 when the server
does not have it; ``X-DEBUGINFOD-SIZE`` and ``Content-Length`` give the size).  drgn 0.3.0
has a debuginfod finder (libdebuginfod), but turns it off for every kernel that is not
Fedora's (it calls the other servers too slow for vmlinux) and reports a failed download
only as a log line; kforensic needs the download for Debian and Ubuntu kernels, progress
on stderr and one-line errors that say which server lacked which build ID, hence this
small client (the standard library's urllib: no new dependency).

Servers come from ``--debuginfod URL`` or, when none is given, ``$DEBUGINFOD_URLS``
(space-separated, as libdebuginfod reads it).  Files land in
``$XDG_CACHE_HOME/kforensic/debuginfod/<build-id>/debuginfo`` (``~/.cache`` without
XDG_CACHE_HOME), mode 0600 in 0700 directories, written to a temporary file and renamed
once complete and checked (an ELF file whose build ID is the one asked for).  The
standard debuginfod client cache (``$DEBUGINFOD_CACHE_PATH``, else
``$XDG_CACHE_HOME/debuginfod_client``) is read as well, so files that ``debuginfod-find``,
gdb or drgn fetched are not fetched again.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from forensics.errors import InputError, UsageError
from forensics.userdirs import NoHomeError, cache_home

_BUILD_ID = re.compile(r"[0-9a-f]{16,128}")
_CHUNK = 1 << 20
#: Seconds without progress before a transfer is given up (libdebuginfod's DEBUGINFOD_TIMEOUT default).
DEFAULT_TIMEOUT = 90.0


def kforensic_cache() -> Path:
    """kforensic's own per-user cache directory (downloads, decompressed vmlinux files)."""
    return cache_home() / "kforensic"


def client_cache() -> Path:
    """The standard debuginfod client cache (libdebuginfod's, shared with debuginfod-find, gdb and drgn)."""
    env = os.environ.get("DEBUGINFOD_CACHE_PATH")
    return Path(env) if env else cache_home() / "debuginfod_client"


def check_build_id(build_id: str) -> str:
    """``build_id`` as lower-case hex, refused when it is not one (it becomes a path and a URL)."""
    hexid = build_id.lower()
    if not _BUILD_ID.fullmatch(hexid):
        raise InputError(f"not a build ID: {build_id!r}", hint="a GNU build ID is 16 to 128 hex digits")
    return hexid


def check_url(url: str, origin: str) -> str:
    """A server URL without its trailing slash; only http and https are spoken."""
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(
            f"{origin}: {url!r} is not an http:// or https:// URL",
            hint="e.g. --debuginfod https://debuginfod.debian.net",
        )
    return url.rstrip("/")


def servers(option: tuple[str, ...] | None, environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """The servers the user allows: ``--debuginfod`` URLs, else ``$DEBUGINFOD_URLS``; ``()`` when neither.

    ``option`` is ``None`` when the command line said nothing and ``()`` for ``--no-debuginfod``.
    From DEBUGINFOD_URLS, words that are not http(s) URLs are skipped, not refused: the variable is
    libdebuginfod's, which also takes ``ima:`` policies and ``file://`` URLs, and it may be set for
    every program of the machine.
    """
    if option is not None:
        return tuple(check_url(u, "--debuginfod") for u in option)
    env = (environ if environ is not None else os.environ).get("DEBUGINFOD_URLS", "")
    return tuple(u.rstrip("/") for u in env.split() if u.startswith(("http://", "https://")))


def timeout() -> float:
    """``$DEBUGINFOD_TIMEOUT`` seconds (as libdebuginfod reads it), else 90."""
    try:
        value = float(os.environ.get("DEBUGINFOD_TIMEOUT", ""))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Attempt:
    """What one server said about one build ID."""

    server: str
    outcome: str  # "missing" (HTTP 404), "refused" (another HTTP error, a wrong file), "unreachable"
    reason: str  # "HTTP 404", "HTTP 503", "connection refused", "no answer within 90 s", ...


class DebuginfodError(InputError):
    """No server gave the file: every server's answer is in ``attempts``."""

    def __init__(self, message: str, attempts: tuple[Attempt, ...], hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.attempts = attempts


def describe(build_id: str, attempts: tuple[Attempt, ...]) -> str:
    """One line: which server lacked the build ID, which could not be reached."""
    parts = []
    for a in attempts:
        if a.outcome == "missing":
            parts.append(f"debuginfod server {a.server} does not have build ID {build_id} ({a.reason})")
        elif a.outcome == "refused":
            parts.append(f"debuginfod server {a.server} failed for build ID {build_id} ({a.reason})")
        else:
            parts.append(f"debuginfod server {a.server} unreachable ({a.reason})")
    return "; ".join(parts)


def cached(build_id: str) -> Path | None:
    """A debug file for ``build_id`` already in kforensic's or the standard client cache."""
    hexid = check_build_id(build_id)
    roots: tuple[Callable[[], Path], ...] = (lambda: kforensic_cache() / "debuginfod", client_cache)
    for root in roots:
        try:
            path = root() / hexid / "debuginfo"
        except NoHomeError:  # a user without a home keeps no cache
            continue
        if path.is_file() and path.stat().st_size > 0:
            return path
    return None


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def _reason(exc: BaseException) -> str:
    import urllib.error

    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        inner = exc.reason
        if isinstance(inner, OSError) and inner.strerror:
            return inner.strerror.lower()
        return str(inner)
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout():.0f} s (DEBUGINFOD_TIMEOUT)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


class _CacheWriteError(Exception):
    """Writing the cache failed (not the server's fault)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(exc.strerror or str(exc))


def _download(
    url: str,
    target: Path,
    label: str,
    progress: Callable[[str], None],
    notice: Callable[[str], None],
    verify: Callable[[Path], str | None],
) -> int:
    """GET ``url`` into ``target`` (atomically); returns the size.

    Raises HTTPError/URLError/OSError for the server, ValueError for a wrong file, _CacheWriteError for the cache.
    """
    import urllib.request  # here: with http.client and ssl it costs 20-200 ms, needed only to download

    from forensics import __version__

    request = urllib.request.Request(url, headers={"User-Agent": f"kforensic/{__version__}"})
    with urllib.request.urlopen(request, timeout=timeout()) as answer:
        size_text = answer.headers.get("X-DEBUGINFOD-SIZE") or answer.headers.get("Content-Length")
        total = int(size_text) if size_text and size_text.isdigit() else None
        notice(f"downloading {label}" + (f" ({_mib(total)})" if total else "") + f" into {target.parent}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".debuginfo.")
        except OSError as exc:
            raise _CacheWriteError(exc) from None
        try:
            done = 0
            last = 0.0
            with os.fdopen(fd, "wb") as out:
                while chunk := answer.read(_CHUNK):
                    try:
                        out.write(chunk)
                    except OSError as exc:
                        raise _CacheWriteError(exc) from None
                    done += len(chunk)
                    now = time.monotonic()
                    if now - last >= 0.25:
                        last = now
                        of = f" of {_mib(total)} ({100 * done / total:.0f}%)" if total else ""
                        progress(f"downloading {label}: {_mib(done)}{of}")
                try:
                    out.flush()
                    os.fsync(out.fileno())
                except OSError as exc:
                    raise _CacheWriteError(exc) from None
            if total is not None and done != total:
                raise ValueError(f"the transfer ended after {done} of {total} bytes")
            problem = verify(Path(tmp))
            if problem is not None:
                raise ValueError(problem)
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise _CacheWriteError(exc) from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return done


def fetch(
    build_id: str,
    what: str,
    urls: tuple[str, ...],
    verify: Callable[[Path], str | None],
    progress: Callable[[str], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> Path:
    """The debug file of ``build_id`` from the first server that has it, cached per user.

    ``what`` names the file for messages ("the kernel 6.1.192", "module kf_buggy");
    ``verify`` returns why a downloaded file is not the one asked for (None when it is).
    Raises :class:`DebuginfodError` naming every server's answer when none gives it.
    """
    import urllib.error

    hexid = check_build_id(build_id)
    have = cached(hexid)
    if have is not None:
        return have
    say = progress or (lambda _m: None)
    tell = notice or (lambda _m: None)
    try:
        target = kforensic_cache() / "debuginfod" / hexid / "debuginfo"
    except NoHomeError as exc:
        raise InputError(
            f"no directory to download the debug info of {what} into: {exc}",
            hint="set XDG_CACHE_HOME (or HOME) to a writable directory, or give --vmlinux",
        ) from None
    attempts: list[Attempt] = []
    for server in urls:
        url = f"{server}/buildid/{hexid}/debuginfo"
        label = f"debug info of {what} (build ID {hexid}) from {server}"
        started = time.monotonic()
        try:
            size = _download(url, target, label, say, tell, verify)
        except urllib.error.HTTPError as exc:
            attempts.append(Attempt(server, "missing" if exc.code == 404 else "refused", f"HTTP {exc.code}"))
            continue
        except ValueError as exc:  # a wrong or cut file: another server may do better
            attempts.append(Attempt(server, "refused", str(exc)))
            continue
        except _CacheWriteError as exc:
            raise InputError(
                f"cannot write the debuginfod cache {target.parent}: {exc}",
                hint="free some space, or set XDG_CACHE_HOME to a writable directory",
            ) from None
        except OSError as exc:  # URLError included: refused, no route, name not known, timed out
            attempts.append(Attempt(server, "unreachable", _reason(exc)))
            continue
        tell(f"downloaded {_mib(size)} in {time.monotonic() - started:.1f} s: {target}")
        return target
    found = tuple(attempts)
    raise DebuginfodError(f"no debug info for {what}: {describe(hexid, found)}", found)
