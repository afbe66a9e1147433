"""Reading series from a Prometheus server through its HTTP API (``/api/v1/query_range``, ``/api/v1/query``).

The client is the standard library's ``urllib``: the fleet path makes a few
dozen requests per run, and urllib already does what Prometheus users expect
of a client (TLS with a CA file or a client certificate, or no verification
when asked; bearer and basic authentication headers; timeouts; POST with a
form body so long selectors do not hit URL length limits).  A dependency such
as requests or httpx would add nothing the run needs.

Range queries are paged by time: Prometheus refuses a query_range that would
return more than 11,000 points per series, so a long window at a fine step is
asked for in pages of at most :data:`PAGE_POINTS` steps and the pages are
joined per series.  Every error becomes one line naming the server and what
to do (:class:`~forensics.errors.InputError`, exit 3; a query the server
cannot parse is the user's ``--match``: :class:`~forensics.errors.UsageError`, exit 2).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import math
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.errors import InputError, UsageError

#: Prometheus refuses range queries over 11,000 points per series (web/api/v1: "exceeded maximum resolution").
SERVER_POINT_LIMIT = 11_000
#: Steps asked for per request: under the server's limit, with room for the inclusive end.
PAGE_POINTS = 10_000
#: Longest series a run reads (points per series over the whole window): a guard against --step 1s --since 1y.
MAX_POINTS = 2_000_000


@dataclass(frozen=True)
class PromAuth:
    """How to reach the server: authentication and TLS, as in Prometheus' own ``http_config``."""

    bearer_token_file: Path | None = None
    basic_auth_file: Path | None = None  # one line: ``user:password``
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    insecure: bool = False
    timeout: float = 30.0  # seconds to wait for an answer; also sent as the query's ``timeout`` (the server stops then)
    server_timeout: float | None = None  # the query ``timeout`` sent when it must differ from ``timeout``


@dataclass(frozen=True)
class Series:
    """One series of a range query: its labels, and (unix seconds, value) points in time order."""

    labels: Mapping[str, str]
    points: tuple[tuple[float, float], ...]

    @property
    def name(self) -> str:
        """The metric name."""
        return self.labels.get("__name__", "")


class _Deadline:
    """A wall-clock bound on one whole request: at ``seconds`` it shuts the request's socket down.

    A socket timeout bounds each read alone: a server trickling its answer a byte at a time (an overloaded server,
    a stuck proxy) reset it at every byte and ``--timeout 5`` waited for ever.  Shutting the socket down wakes
    the read blocked on it, which then fails; :attr:`expired` says why.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[Any] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def watch(self, sock: Any) -> None:
        """Cut ``sock`` at the deadline (at once when it has passed: the connect took the time)."""
        with self._lock:
            self._sockets.append(sock)
            late = self.expired
        if late:
            _shut(sock)


def _shut(sock: Any) -> None:
    import socket

    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _opener(watchdog: _Deadline, context: ssl.SSLContext | None) -> urllib.request.OpenerDirector:
    """urllib's opener whose HTTP(S) connections hand their socket to ``watchdog`` once connected."""

    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            watchdog.watch(self.sock)

    class TLSConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            watchdog.watch(self.sock)

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Connection, req)

    class TLSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(TLSConnection, req, context=context)

    return urllib.request.build_opener(Handler, TLSHandler(context=context))


@dataclass
class PromClient:
    """A Prometheus HTTP API client: ``url`` is the server root (``http://host:9090``, or behind a path prefix)."""

    url: str
    auth: PromAuth = field(default_factory=PromAuth)
    requests: int = 0  # how many HTTP requests this client made (counted under a lock: instances are read in threads)

    def __post_init__(self) -> None:
        try:
            parsed = urllib.parse.urlsplit(self.url)
            _ = parsed.port  # a port out of range or not a number raises here, not in the first request
        except ValueError:
            parsed = urllib.parse.urlsplit("")  # e.g. 'http://[::1': told as not a URL below
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise UsageError(
                f"--prometheus {self.url!r} is not an http(s) URL", hint="give the server root, e.g. http://prom:9090"
            )
        self.url = self.url.rstrip("/")
        self._lock = threading.Lock()
        self._headers = self._auth_headers()
        self._context = self._tls_context() if parsed.scheme == "https" else None

    # ------------------------------------------------------------ setup

    def _read_secret(self, path: Path, what: str) -> str:
        try:
            secret = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise InputError(
                f"cannot read the {what} file {path}: {exc.strerror or exc}", hint="give a readable file"
            ) from None
        except UnicodeDecodeError:
            raise InputError(f"the {what} file {path} is not UTF-8 text", hint="write the secret as one line") from None
        if any(ord(c) < 32 or ord(c) == 127 for c in secret):  # a newline would end the HTTP header
            raise InputError(
                f"the {what} file {path} holds more than one line or a control character",
                hint="write the secret as one line",
            )
        return secret

    def _auth_headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "kforensic"}
        a = self.auth
        if a.bearer_token_file is not None and a.basic_auth_file is not None:
            raise UsageError("give --bearer-token-file or --basic-auth-file, not both")
        if a.bearer_token_file is not None:
            token = self._read_secret(a.bearer_token_file, "bearer token")
            if not token:
                raise InputError(
                    f"the bearer token file {a.bearer_token_file} is empty", hint="write the token as one line"
                )
            headers["Authorization"] = f"Bearer {token}"
        if a.basic_auth_file is not None:
            secret = self._read_secret(a.basic_auth_file, "basic auth")
            if ":" not in secret:
                raise InputError(
                    f"the basic auth file {a.basic_auth_file} does not hold user:password",
                    hint="write one line: user:password",
                )
            headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
        return headers

    def _tls_context(self) -> ssl.SSLContext:
        a = self.auth
        try:
            context = ssl.create_default_context(cafile=str(a.ca_file) if a.ca_file else None)
            if a.cert_file is not None:
                context.load_cert_chain(str(a.cert_file), str(a.key_file) if a.key_file else None)
        except (OSError, ssl.SSLError) as exc:
            raise InputError(
                f"cannot load the TLS files: {exc}", hint="check --ca-file, --cert-file, --key-file"
            ) from None
        if a.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    # ------------------------------------------------------------ requests

    def _post(self, endpoint: str, form: Mapping[str, str]) -> Any:
        """POST a form to ``/api/v1/<endpoint>``; the ``data`` of a success, or one clear error."""
        target = f"{self.url}/api/v1/{endpoint}"
        body = urllib.parse.urlencode(form).encode()
        request = urllib.request.Request(target, data=body, headers=self._headers, method="POST")
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
        with self._lock:
            self.requests += 1
        watchdog = _Deadline(self.auth.timeout)
        error: Exception | None = None
        with watchdog:  # (an error's body is read under it too)
            try:
                raw = self._read_answer(request, watchdog)
            except (OSError, http.client.HTTPException) as exc:
                error = self._request_error(target, exc, form)
        if error is not None:  # whatever a socket cut at the deadline raised: the answer took too long
            raise (self._too_slow() if watchdog.expired else error) from None
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: an answer nested deeper than the JSON reader goes
            raise InputError(
                f"{target} did not answer with JSON: not a Prometheus HTTP API",
                hint="give the server root, e.g. http://prom:9090 (not a /graph or exporter URL)",
            ) from None
        if not isinstance(doc, dict) or doc.get("status") != "success" or "data" not in doc:
            raise InputError(f"{target} answered without a result: {str(doc)[:200]}")
        return doc["data"]

    def _read_answer(self, request: urllib.request.Request, watchdog: _Deadline) -> bytes:
        # The per-operation timeout bounds the connect; the watchdog the whole exchange (a trickled answer).
        with _opener(watchdog, self._context).open(request, timeout=self.auth.timeout) as response:
            raw: bytes = response.read()
        return raw

    def _too_slow(self) -> InputError:
        return InputError(
            f"Prometheus at {self.url} did not answer within {self.auth.timeout:g} s",
            hint="raise --timeout, or ask for less (--since, a larger --step, a narrower --match)",
        )

    def _request_error(
        self, target: str, exc: OSError | http.client.HTTPException, form: Mapping[str, str]
    ) -> Exception:
        """The one-line error of a request that failed before its deadline."""
        if isinstance(exc, urllib.error.HTTPError):
            return self._http_error(target, exc, form.get("query", ""))
        if isinstance(exc, urllib.error.URLError):
            reason = exc.reason
            if isinstance(reason, ssl.SSLError | ssl.CertificateError):
                return InputError(
                    f"TLS with {self.url} failed: {reason}",
                    hint="give the server's CA with --ca-file, or --insecure to skip verification",
                )
            if isinstance(reason, TimeoutError):
                return self._too_slow()
            text = getattr(reason, "strerror", None) or str(reason)
            return InputError(
                f"cannot reach Prometheus at {self.url}: {text}",
                hint="check the --prometheus URL and that the server is running",
            )
        if isinstance(exc, TimeoutError):
            return self._too_slow()
        return InputError(f"cannot reach Prometheus at {self.url}: {exc or type(exc).__name__}")

    def _http_error(self, target: str, exc: urllib.error.HTTPError, query: str) -> Exception:
        detail = ""
        kind = ""
        prometheus = False  # the body is Prometheus's error document ({"status": "error", "errorType": ...})
        try:
            doc = json.loads(exc.read())
            detail, kind = str(doc.get("error", "")), str(doc.get("errorType", ""))
            prometheus = doc.get("status") == "error"
        except (ValueError, AttributeError, OSError, http.client.HTTPException):
            pass
        said = f": {kind + ': ' if kind else ''}{detail}" if detail else ""
        server = exc.headers.get("Server") if exc.headers is not None else None
        answered = f"HTTP {exc.code} {exc.reason}".rstrip() + (f", from {server}" if server else "")
        if exc.code in (401, 403):
            return InputError(
                f"Prometheus at {self.url} refused the request (HTTP {exc.code}){said}",
                hint="give credentials with --bearer-token-file or --basic-auth-file",
            )
        if exc.code == 404 or (exc.code == 405 and not detail):
            return InputError(
                f"{target} does not exist (HTTP {exc.code}): not a Prometheus HTTP API",
                hint="give the server root, e.g. http://prom:9090, with any path prefix it is served under",
            )
        if exc.code == 400 and "resolution" in detail:
            return InputError(
                f"Prometheus at {self.url} refused a range query as too many points{said}",
                hint="give a larger --step or a shorter --since",
            )
        if exc.code == 400 and kind == "bad_data":
            return UsageError(f"Prometheus rejected the query {query!r}{said}", hint="check the --match selector")
        if exc.code == 501 and not prometheus:
            # Method not implemented: a web server that takes no POST (python -m http.server), not Prometheus.
            return InputError(
                f"{target} does not take a query ({answered}): not a Prometheus HTTP API",
                hint="give the server root, e.g. http://prom:9090, with any path prefix it is served under",
            )
        if not prometheus:
            # No error document of Prometheus's: a proxy or another server answered; name it, not "Prometheus".
            return InputError(
                f"the server at {self.url} failed ({answered}) without Prometheus's error document",
                hint="look at that server's log (a proxy in front of Prometheus?); retry later or ask for less",
            )
        return InputError(
            f"Prometheus at {self.url} failed (HTTP {exc.code}){said}",
            hint="look at the server's log; retry later or ask for less",
        )

    # ------------------------------------------------------------ queries

    def _server_timeout(self) -> str:
        seconds = self.auth.server_timeout if self.auth.server_timeout is not None else self.auth.timeout
        return f"{seconds:.6f}".rstrip("0").rstrip(".") or "0"

    def query_range(
        self, query: str, start: float, end: float, step: float, page_points: int = PAGE_POINTS
    ) -> list[Series]:
        """A range query, paged by time so that no request exceeds ``page_points`` steps per series.

        Points come back at ``start + k * step``; pages are joined per series
        (by its labels), in time order.
        """
        if step <= 0 or end < start:
            raise UsageError("a range query needs a positive step and end >= start")
        total = math.floor((end - start) / step) + 1
        if total > MAX_POINTS:
            raise UsageError(
                f"{total:,} points per series ({(end - start) / 86400:.1f} days at a step of {step:g} s) is too many",
                hint=f"give a larger --step (at most {MAX_POINTS:,} points per series are read)",
            )
        merged: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
        first = 0
        while first < total:
            count = min(page_points, total - first)
            page_start = start + first * step
            page_end = start + (first + count - 1) * step
            data = self._post(
                "query_range",
                {
                    "query": query,
                    "start": _num(page_start),
                    "end": _num(page_end),
                    "step": _num(step),
                    "timeout": self._server_timeout(),
                },
            )
            try:
                for item in data.get("result", []) if isinstance(data, dict) else []:
                    labels = tuple(sorted((str(k), str(v)) for k, v in item.get("metric", {}).items()))
                    points = merged.setdefault(labels, [])
                    points.extend((float(t), _value(v)) for t, v in item.get("values", []))
            except (AttributeError, TypeError, ValueError) as exc:
                raise _malformed(self.url, "query_range", exc) from None
            first += count
        return [Series(dict(labels), tuple(sorted(points))) for labels, points in merged.items()]

    def query(self, query: str, at: float) -> list[tuple[Mapping[str, str], float]]:
        """An instant query at ``at``: (labels, value) of each series."""
        data = self._post("query", {"query": query, "time": _num(at), "timeout": self._server_timeout()})
        if not isinstance(data, dict) or data.get("resultType") != "vector":
            return []
        try:
            return [(dict(item.get("metric", {})), _value(item["value"][1])) for item in data.get("result", [])]
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
            raise _malformed(self.url, "query", exc) from None


def _malformed(url: str, endpoint: str, exc: Exception) -> InputError:
    """A success answer whose result is not shaped as the Prometheus HTTP API documents it."""
    return InputError(
        f"Prometheus at {url} answered /api/v1/{endpoint} with a malformed result ({type(exc).__name__}: {exc})",
        hint="is it a Prometheus server (or a proxy rewriting its answers)? check the --prometheus URL",
    )


def _num(value: float) -> str:
    """A time or step as Prometheus reads it (decimal seconds, milliseconds at most)."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _value(text: object) -> float:
    """A sample value: Prometheus sends them as strings (``"NaN"``, ``"+Inf"`` included)."""
    return float(str(text))


def selector(name: str, match: Mapping[str, str] | str, **labels: str) -> str:
    """A PromQL selector of metric ``name`` with the ``--match`` matchers and exact ``labels``."""
    parts = [f'{k}="{escape(v)}"' for k, v in labels.items()]
    inner = match if isinstance(match, str) else ",".join(f'{k}="{escape(v)}"' for k, v in match.items())
    if inner:
        parts.insert(0, inner)
    return f"{name}{{{','.join(parts)}}}"


def escape(value: str) -> str:
    """A label value inside double quotes."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def parse_match(text: str | None) -> str:
    """The inside of a ``--match`` selector (``{job="node"}`` or ``job="node"``), braces removed."""
    if text is None:
        return ""
    inner = text.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1].strip()
    if not inner:
        return ""
    if "{" in inner or "}" in inner:
        raise UsageError(f"--match {text!r} is not one label selector", hint="give e.g. --match '{job=\"node\"}'")
    return inner


@dataclass(frozen=True)
class StepChoice:
    """The resolution picked from the data: where the series start, how often they are scraped, the step."""

    start: float  # the window's start: --since, or the first data in it when later
    step: float  # seconds
    interval: float | None  # the scrape interval seen, None when it could not be measured
    reason: str  # one line: how the step was chosen


#: Points per series the picked step aims at, at most (one page of a range query).
AUTO_POINTS = PAGE_POINTS
#: Look-back over which the scrape interval is measured (samples counted with count_over_time).
INTERVAL_LOOKBACK = 300.0
#: Points of the coarse query that finds where the data start within the window.
PROBE_POINTS = 500


def pick_step(client: PromClient, selector_text: str, start: float, end: float) -> StepChoice:
    """A step from the data: the scrape interval, coarsened only as far as the window needs.

    ``selector_text`` selects the series to be read (e.g. every instance's slab objects).  The data's
    first point within [start, end] is found with a coarse range query (at most :data:`PROBE_POINTS`
    steps).  The scrape interval is measured where the data are: ``count_over_time`` over back-to-back
    look-backs (:data:`INTERVAL_LOOKBACK`, at most half the data's span) across the window, and the fullest
    one gives it (look-back / samples).  One look-back at the window's end read 5-s data that stopped 175 s
    before it, or had a gap there, as "a sample every 10.3 s": the step doubled and every other sample went
    unread, unsaid.  A look-back with a gap holds fewer samples, never more, so the fullest is the scrape.
    The step is that interval (whole seconds), or the data's span over :data:`AUTO_POINTS` when larger (then
    said: about one sample in N is read).
    """
    probe = max(1.0, math.ceil((end - start) / PROBE_POINTS))
    # Evaluated back from ``end`` so that the last point is the end itself (data younger than a probe step).
    first_eval = end - math.floor((end - start) / probe) * probe
    probed = client.query_range(f"count({selector_text})", first_eval, end, probe)
    firsts = [s.points[0][0] for s in probed if s.points]
    begin = max(start, min(firsts) - probe) if firsts else start
    if firsts and probe > 1.0 and begin > start:
        # The first sample lies within the probe step before the first point: read that step again, finer, so
        # that the window said starts where the data do (--since 30d said data from 5,184 s, one 30-d probe step,
        # before the end, for series 12 min long; the per-instance lines said 12 min).
        fine = max(1.0, math.ceil(probe / PROBE_POINTS))
        near = client.query_range(f"count({selector_text})", min(firsts) - probe, min(firsts), fine)
        closer = [s.points[0][0] for s in near if s.points]
        begin = max(start, min(closer) - fine) if closer else begin
    lookback = float(max(2, int(min(INTERVAL_LOOKBACK, (end - begin) / 2))))
    windows = client.query_range(
        f"max(count_over_time({selector_text}[{int(lookback)}s]))", min(begin + lookback, end), end, lookback
    )
    fullest = max((v for series in windows for _, v in series.points), default=0.0)
    interval = lookback / fullest if fullest >= 2 else None
    scrape = max(1.0, math.floor(interval)) if interval else 60.0
    coarse = math.ceil((end - begin) / AUTO_POINTS)
    step = float(max(scrape, coarse))
    seen = (
        f"a sample every {interval:.3g} s: the fullest {int(lookback)}-s stretch of the data"
        if interval
        else "scrape interval unknown (60 s assumed)"
    )
    data = "" if begin <= start else f"; data from {math.ceil(end - begin):,} s before the end"
    if step == scrape:
        why = "the scrape interval"
    else:
        skipped = f": about 1 sample in {step / interval:.3g} is read" if interval else ""
        why = f"{AUTO_POINTS:,} points over the data's span, coarser than the scrape interval{skipped}"
    return StepChoice(begin, step, interval, f"step {step:g} s from {why} ({seen}{data})")
