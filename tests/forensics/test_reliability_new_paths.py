"""The reliability contract (issues #19, #23) on the paths built beside it: profile, trace spans and CTF.

A hostile but realistic user's tries, one test per defect found; each failed before its fix.
"""

from __future__ import annotations

import gzip
import http.server
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import zstandard

from collectors.perf_script import read_profile
from tests.collectors import test_perf_script
from tests.forensics.commands import test_trace_spans
from tests.forensics.commands.test_slabwatch_cli import kforensic
from tests.forensics.test_reliability_cli import CONSOLE, _digest, _one_error_line
from tests.helpers import serve_prometheus

recording = test_trace_spans.recording  # the LTTng UST session and its ftrace text, unpacked once
PROFILE = Path(__file__).resolve().parents[1] / "data" / "profile"


@pytest.fixture(scope="module")
def span_csv(recording: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workload's 60 requests as a span CSV (ns of CLOCK_MONOTONIC, from the trace_marker lines)."""
    starts: dict[str, int] = {}
    rows = ["tid,name,start_ns,end_ns"]
    text = (recording / "kernel.ftrace.txt").read_text()
    for m in re.finditer(r"\s(\d+)\.(\d+): tracing_mark_write: infer (start|end) (\d+)", text):
        ns = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0"))
        if m.group(3) == "start":
            starts[m.group(4)] = ns
        else:
            rows.append(f"1,req,{starts.pop(m.group(4))},{ns}")
    path = tmp_path_factory.mktemp("spans") / "spans.csv"
    path.write_text("\n".join(rows) + "\n")
    assert len(rows) == 61
    return path


# ---------------------------------------------------------------- trace on a CTF directory, --spans


@pytest.mark.parametrize("option", ["--span-png", "--gantt-png", "-o"])
@pytest.mark.parametrize("member", ["metadata", "channel0_0", "index/channel0_0.idx"])
def test_an_output_into_the_ctf_trace_files_is_refused(recording: Path, option: str, member: str) -> None:
    target = recording / "ust/uid/0/64-bit" / member
    before = _digest(target)
    done = kforensic("trace", str(recording / "ust"), option, str(target))
    assert done.returncode == 2, done.stderr  # was 0: the CTF metadata, a stream or its index replaced by the PNG
    _one_error_line(done.stderr, "is the input", member)
    assert _digest(target) == before


def test_an_output_over_the_spans_csv_is_refused(recording: Path, span_csv: Path) -> None:
    before = _digest(span_csv)
    trace = str(recording / "kernel.ftrace.txt")
    done = kforensic("trace", trace, "--kernel-clock", "mono", "--spans", str(span_csv), "-o", str(span_csv))
    assert done.returncode == 2, done.stderr  # was 0: the CSV replaced by the report
    _one_error_line(done.stderr, "is the input")
    assert _digest(span_csv) == before


def test_a_zstd_span_csv_is_read_by_its_magic(recording: Path, span_csv: Path, tmp_path: Path) -> None:
    packed = tmp_path / "spans.data"  # no telling suffix: the content says zstd
    packed.write_bytes(zstandard.ZstdCompressor().compress(span_csv.read_bytes()))
    trace = str(recording / "kernel.ftrace.txt")
    plain = kforensic("trace", trace, "--kernel-clock", "mono", "--spans", str(span_csv))
    done = kforensic("trace", trace, "--kernel-clock", "mono", "--spans", str(packed))
    assert done.returncode == plain.returncode == 0, done.stderr  # was 3: "not a text file"
    row = next(line for line in done.stdout.splitlines() if line.startswith("req "))
    assert row.split()[1] == "60"
    assert row == next(line for line in plain.stdout.splitlines() if line.startswith("req "))


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"tid":1,"name":"a","start_ns":1,"end_ns":2}\n[1,2]\n', ":2: not a JSON object"),  # was exit 4
        (b'{"a":' * 100_000 + b"\n", ":1: not JSON"),  # was exit 4 (RecursionError)
        (b"", "no span rows"),  # was exit 0, nothing said
        (b"tid,name,start_ns,end_ns\n", "no span rows"),  # was exit 0, nothing said
        (b'tid,name,start_ns,end_ns\n1,"' + b"a" * 200_000 + b'",1,2\n', "not CSV"),  # was exit 4 (csv.Error)
    ],
)
def test_a_bad_span_file_is_exit_3_in_one_line(recording: Path, tmp_path: Path, content: bytes, needle: str) -> None:
    bad = tmp_path / "spans.jsonl"
    bad.write_bytes(content)
    done = kforensic("trace", str(recording / "kernel.ftrace.txt"), "--kernel-clock", "mono", "--spans", str(bad))
    assert done.returncode == 3, done.stderr
    _one_error_line(done.stderr, needle)


# ---------------------------------------------------------------- profile


@pytest.fixture(scope="module")
def perf_text(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recorded `perf script` text, uncompressed."""
    path = tmp_path_factory.mktemp("profile") / "mixed.perf.txt"
    path.write_bytes(gzip.decompress((PROFILE / "mixed.perf.txt.gz").read_bytes()))
    return path


@pytest.mark.parametrize("window", ["nan:", "1:inf", "-inf:nan"])
def test_profile_window_refuses_nan_and_inf(perf_text: Path, window: str) -> None:
    done = kforensic("profile", str(perf_text), "--window", window)
    assert done.returncode == 2, done.stderr  # was 3: "no samples in the --window nan:"
    _one_error_line(done.stderr, "--window", "nan and inf")


def test_profile_force_replaces_another_users_output(perf_text: Path, tmp_path: Path) -> None:
    target = tmp_path / "flame.svg"
    target.write_text("someone else's\n")
    try:
        os.chown(target, 65534, 65534)
    except PermissionError:
        pytest.skip("giving a file to another user needs root")
    refused = kforensic("profile", str(perf_text), "--svg", str(target))
    assert refused.returncode == 2, refused.stderr
    _one_error_line(refused.stderr, "belongs to another user")
    done = kforensic("profile", str(perf_text), "--svg", str(target), "--force")
    assert done.returncode == 0, done.stderr  # was 2: "No such option: --force"
    assert target.read_text().startswith("<?xml") and target.stat().st_uid == os.geteuid()


@pytest.mark.parametrize("option", ["-o", "--folded", "--svg", "--diff-output"])
def test_profile_outputs_over_its_inputs_are_refused(perf_text: Path, tmp_path: Path, option: str) -> None:
    base = tmp_path / "base.folded.gz"  # a gzip base told by its magic, not its name
    base.write_bytes((PROFILE / "mixed.folded.gz").read_bytes())
    args = ["profile", str(perf_text), "--diff", str(base)]
    target = base if option == "--diff-output" else perf_text
    args += ["--svg" if option == "--diff-output" else option, str(target)]
    before = _digest(target)
    done = kforensic(*args)
    assert done.returncode == 2, done.stderr
    _one_error_line(done.stderr, "is the input")
    assert _digest(target) == before


# ---------------------------------------------------------------- leaks --prometheus


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"first\nsecond\n", "more than one line"),  # was exit 4: urllib's "Invalid header value"
        (b"tok\r\nX-Injected: 1\n", "more than one line"),  # was exit 4 (a header of the caller's choosing)
        (b"\xf4\x90\x80\x80\xff", "not UTF-8"),  # was exit 4: UnicodeDecodeError
    ],
)
def test_a_bad_bearer_token_file_is_exit_3(tmp_path: Path, content: bytes, needle: str) -> None:
    token = tmp_path / "token"
    token.write_bytes(content)
    done = kforensic("leaks", "--prometheus", "http://127.0.0.1:1", "--bearer-token-file", str(token))
    assert done.returncode == 3, done.stderr
    _one_error_line(done.stderr, "bearer token file", needle)


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999", "http://prom:port"])
def test_a_malformed_prometheus_url_is_exit_2(url: str) -> None:
    done = kforensic("leaks", "--prometheus", url, "--timeout", "1")
    assert done.returncode == 2, done.stderr  # 'http://[::1' was exit 4 (ValueError: Invalid IPv6 URL)
    _one_error_line(done.stderr, "is not an http(s) URL")


# ---------------------------------------------------------------- dmesg --signatures


def test_signatures_output_over_a_log_read_by_a_worker_is_refused(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "h1.log"
    shutil.copyfile(CONSOLE, log)
    (logs / "h2.log").write_bytes(gzip.compress(CONSOLE.read_bytes()))
    before = _digest(log)
    done = kforensic("dmesg", "--signatures", str(logs), "--workers", "1", "-o", str(log))
    assert done.returncode == 2, done.stderr  # was 0: the workers registered the logs, not the command
    _one_error_line(done.stderr, "is the input")
    assert _digest(log) == before


def test_signatures_with_no_readable_log_is_exit_3(tmp_path: Path) -> None:
    done = kforensic("dmesg", "--signatures", str(tmp_path / "a.log"), str(tmp_path / "b.log"), "--workers", "0")
    assert done.returncode == 3, done.stderr  # was 0: "no kernel reports found"
    _one_error_line(done.stderr, "none of the 2 logs could be read")


def test_profile_json_with_an_undecodable_symbol_byte(perf_text: Path, tmp_path: Path) -> None:
    text = perf_text.read_bytes()
    head = text[: text.index(b"\n\n") + 2]  # the first sample, with a byte perf could not decode in a symbol
    damaged = tmp_path / "p.txt"
    damaged.write_bytes(head + head.replace(b"spin_math", b"spin_\xed\xb3math"))
    out = tmp_path / "p.json"
    done = kforensic("profile", str(damaged), "--format", "json", "-o", str(out))
    assert done.returncode == 0, done.stderr  # was 4: UnicodeEncodeError while sizing the digest (found by the fuzz)
    names = [row["name"] for row in json.loads(out.read_text())["self"]]
    assert any(name.startswith("spin_\udced") for name in names), names


def test_an_undecodable_byte_in_the_top_hotspot_is_exit_0_in_profile_and_report(
    perf_text: Path, tmp_path: Path
) -> None:
    text = perf_text.read_bytes()
    head = text[: text.index(b"\n\n") + 2]  # one sample, its leaf symbol with a byte that is not UTF-8
    damaged = tmp_path / "p.txt"
    damaged.write_bytes(head.replace(b"spin_math", b"spin_\xb2math"))
    out = tmp_path / "p.json"
    done = kforensic("profile", str(damaged), "--format", "json", "-o", str(out))
    assert done.returncode == 0, done.stderr  # was 4: UnicodeEncodeError in the finding's id (found by the fuzz)
    (top,) = [f for f in json.loads(out.read_text())["incident"]["findings"] if f["title"].startswith("Top hotspot")]
    assert "spin_\udcb2math" in top["title"] and re.fullmatch(r"profile:[0-9a-f]{16}", top["id"]), top
    digest = tmp_path / "digest.json"
    done = kforensic("report", "--profile", str(damaged), "-o", str(tmp_path / "r.md"), "--digest", str(digest))
    assert done.returncode == 0, done.stderr  # was 4: UnicodeEncodeError while sizing the digest
    assert top["id"] in {f["id"] for f in json.loads(digest.read_text())["findings"]}


recorded = test_perf_script.recorded  # a perf.data recorded now (skips where perf record is not allowed)


@pytest.mark.parametrize("packing", ["gzip", "zstd"])
def test_a_compressed_perf_data_is_read_like_the_plain_one(recorded: Path, tmp_path: Path, packing: str) -> None:
    data = recorded.read_bytes()
    packed = tmp_path / "perf.data.packed"  # the content says which compression, not the name
    packed.write_bytes(gzip.compress(data) if packing == "gzip" else zstandard.ZstdCompressor().compress(data))
    plain = read_profile(str(recorded))
    profile = read_profile(str(packed))  # was InputError: "perf script failed: incompatible file format"
    assert profile.kind == "perf.data" and profile.notes == plain.notes == []
    assert sorted((s.frames, s.samples) for s in profile.stacks) == sorted((s.frames, s.samples) for s in plain.stacks)


def test_a_cut_compressed_perf_data_names_the_input(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = recorded.read_bytes()
    start = int.from_bytes(data[40:48], "little")
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(data[: start // 2]))  # inside the attribute section: perf script refuses it
    # This test's own temporary directory: with pytest -n, other tests' profile runs spool into the shared /tmp.
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    done = kforensic("profile", str(cut))
    assert done.returncode == 3, done.stderr
    _one_error_line(done.stderr, f"{cut}: perf script failed")  # not the temporary copy's path
    assert list((tmp_path / "tmp").iterdir()) == []  # the copy is gone


def _serve(answers: dict[str, bytes]) -> tuple[http.server.HTTPServer, str]:
    """A local HTTP server answering each /api/v1/ENDPOINT with ``answers[ENDPOINT]`` (a hostile Prometheus)."""
    server, url = serve_prometheus(lambda endpoint, form: answers[endpoint])
    return server, url


def _success(data: object) -> bytes:
    return json.dumps({"status": "success", "data": data}).encode()


ONE_INSTANCE = _success({"resultType": "vector", "result": [{"metric": {"instance": "h:9100"}, "value": [1, "1"]}]})


@pytest.mark.parametrize(
    "answers",
    [
        {"query": b'{"a":' * 100_000},  # was exit 4: RecursionError
        {"query": _success({"resultType": "vector", "result": "oops"})},  # was exit 4: AttributeError
        {"query": _success({"resultType": "vector", "result": [{"metric": {}, "value": None}]})},  # was exit 4
        {
            "query": ONE_INSTANCE,
            "query_range": _success({"resultType": "matrix", "result": [{"metric": {}, "values": [["x", "1"]]}]}),
        },  # was exit 4: ValueError on the time "x"
    ],
)
def test_a_malformed_prometheus_answer_is_exit_3(answers: dict[str, bytes]) -> None:
    server, url = _serve(answers)
    try:
        done = kforensic("leaks", "--prometheus", url, "--since", "1h", "--timeout", "10")
    finally:
        server.shutdown()
    assert done.returncode == 3, done.stderr
    _one_error_line(done.stderr, url)


def test_a_web_server_that_takes_no_post_is_named_not_called_prometheus(tmp_path: Path) -> None:
    """/tmp/ue9 9: python's http.server (501 to a POST) was 'Prometheus at URL failed (HTTP 501)', hint: its log."""
    import threading

    (tmp_path / "index.html").write_text("hello\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        done = kforensic("leaks", "--prometheus", url, "--since", "1h", "--timeout", "10")
    finally:
        server.shutdown()
    assert done.returncode == 3, done.stderr
    _one_error_line(done.stderr, url)
    assert "HTTP 501" in done.stderr and "SimpleHTTP" in done.stderr, done.stderr
    assert "not a Prometheus HTTP API" in done.stderr and "Prometheus at" not in done.stderr, done.stderr
