"""util-linux ``dmesg -J`` (``--json``) is read as the kernel log it holds (forensics/journal_text.py).

Read as text, this machine's ``dmesg -J`` said "No problem found" whatever it held, and a WARNING in it came out as
"WARNING in corrupted [corrupted]" with the message ``},`` and no frames (review ue15 #5).  Here: the real ``dmesg
-J`` of this machine (where util-linux has it and the ring buffer can be read), and the 6.1 WARN_ON fixture's log
written by the same structure, with and without ``-x``'s words; a JSON document of no log format is refused.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.evidence import check_findings
from forensics.journal_text import convert
from forensics.pipelines.dmesg import analyse_logs

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "vmcore_fixtures/cases/03-warn-on/dmesg.txt"
_STAMP = re.compile(r"^\[\s*(\d+\.\d{6})\] ?")
TITLE = "WARNING in kf_state_stop"
#: The level a line of the fixture is given (``dmesg -J``'s "pri" of a kernel message: facility 0, so the level).
_LEVELS = (("WARNING:", 4, "warn"), ("Call Trace", 4, "warn"), ("", 6, "info"))


def _records() -> list[dict[str, object]]:
    if not LOG.is_file():
        pytest.skip("no fixture log")
    out: list[dict[str, object]] = []
    for line in LOG.read_text().splitlines():
        m = _STAMP.match(line)
        if m is None:
            continue
        msg = line[m.end() :]
        level, name = next((n, w) for word, n, w in _LEVELS if word in msg)
        out.append({"pri": level, "name": name, "time": m.group(1), "msg": msg})
    return out


def _dmesg_json(records: list[dict[str, object]], decode: bool) -> str:
    """The records as util-linux 2.38 writes ``dmesg -J`` (``-x``: ``decode``): its indentation, ``},{`` between."""
    body = []
    for r in records:
        pri = f'"fac": "kern",\n         "pri": "{r["name"]}"' if decode else f'"pri": {r["pri"]}'
        time = f"{float(str(r['time'])):12.6f}"
        body.append(f'         {pri},\n         "time": {time},\n         "msg": {json.dumps(r["msg"])}')
    return '{\n   "dmesg": [\n      {\n' + "\n      },{\n".join(body) + "\n      }\n   ]\n}\n"


def _kforensic(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"TZ": "UTC", "PATH": "/usr/bin:/bin", "KFORENSIC_AOT": "no"}
    return subprocess.run(
        [sys.executable, "-m", "forensics", *args], capture_output=True, text=True, timeout=120, check=False,
        cwd=ROOT, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("decode", [False, True], ids=["J", "J-x"])
def test_a_warning_in_dmesg_json_is_read_whole(tmp_path: Path, decode: bool) -> None:
    records = _records()
    path = tmp_path / "dmesg.json"
    path.write_text(_dmesg_json(records, decode))
    done = _kforensic("dmesg", "--format", "json", str(path))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (report,) = doc["sources"][0]["reports"]
    assert report["title"] == TITLE
    assert not report["corrupted"]
    # A line per record: the report starts at the WARNING's record, at its printk time.
    first = next(i for i, r in enumerate(records, 1) if str(r["msg"]).startswith("WARNING:"))
    assert report["start_line"] == first
    assert report["start_time"] == 2.259541
    assert doc["incident"]["kernel_release"] == "6.1.192"
    # What the same log as dmesg text gives: its frames and facts (a -J read as text had no frame, message "},").
    (plain,) = json.loads(_kforensic("dmesg", "--format", "json", str(LOG)).stdout)["sources"][0]["reports"]
    assert report["call_trace"] and report["call_trace"] == plain["call_trace"]
    assert (
        (report["cpu"], report["pid"], report["comm"]) == (plain["cpu"], plain["pid"], plain["comm"]) == (1, 42, "sh")
    )
    # Every cited line resolves in the file, read as the readers read it.
    result = analyse_logs([str(path)], live=False)
    assert result.incident.findings
    assert check_findings(result.incident.findings) == []


def _dmesg(*args: str) -> str:
    try:
        done = subprocess.run(["dmesg", *args], capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        pytest.skip(f"no dmesg: {exc}")
    if done.returncode != 0:
        pytest.skip(f"dmesg {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


@pytest.mark.parametrize(("json_args", "text_args"), [(("-J",), ("-r",)), (("-J", "-x"), ("-x",))], ids=["J", "J-x"])
def test_this_machines_dmesg_json_reads_as_its_text(
    tmp_path: Path, json_args: tuple[str, ...], text_args: tuple[str, ...]
) -> None:
    """The real ``dmesg -J``: each record becomes the line ``dmesg -r`` (``-x``) prints for it, a record of several
    lines one line; and the log is read, its lines counted, never scanned as JSON text."""
    document = _dmesg(*json_args)
    text = _dmesg(*text_args)
    lines = convert(document.encode()).decode().splitlines()
    # The text's records: a continuation line (printed indented under its record) joined to it.
    records: list[str] = []
    for line in text.splitlines():
        if records and line[:1] == " ":
            records[-1] += " " + line.strip()
        else:
            records.append(line)
    same = min(len(lines), len(records))  # the kernel may log between the two runs
    assert same > 10
    assert lines[:same] == records[:same]
    path = tmp_path / "dmesg-J.json"
    path.write_text(document)
    done = _kforensic("dmesg", "--format", "json", str(path))
    assert done.returncode in (0, 1), done.stderr
    result = json.loads(done.stdout)
    examined = result["incident"]["examined"][0]["what"]
    assert f": {len(lines):,} lines" in examined, examined
    # Read as JSON text, a record's escaped lines would make damaged reports; this machine's own reports and events
    # (its log may hold some: an RT throttling line, a warning) are read whole.
    items = [item for source in result["sources"] for item in (*source["reports"], *source.get("events", ()))]
    assert not [item["title"] for item in items if item["corrupted"]]


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ('[\n  {"time": 1.5, "message": "Oops: 0000 [#1] SMP"}\n]\n', ""),
        ('{\n  "schema": "kforensic.kdump-check/1",\n  "root": "/"\n}\n', " (a kforensic result)"),
    ],
    ids=["array", "kforensic"],
)
def test_a_json_document_of_no_log_format_is_refused_in_one_line(tmp_path: Path, document: str, said: str) -> None:
    path = tmp_path / "other.json"
    path.write_text(document)
    done = _kforensic("dmesg", str(path))
    assert done.returncode == 3, done.stdout
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == (
        f"kforensic: error: {path}: not a kernel log: a JSON document that is neither util-linux `dmesg -J` output "
        f"nor a `journalctl -o json` export{said}"
    )
    assert len(lines) == 2 and lines[1].startswith("kforensic: hint: ")
    assert ("kforensic report --from" in lines[1]) == bool(said)


@pytest.mark.parametrize(
    ("fields", "hint"),
    [
        ('"@timestamp": "2026-12-07T08:10:00.000001+00:00", "host": "web-03", "programname": "kernel", "message"',
         "`jq -r .message FILE | kforensic dmesg -`"),
        ('"level": "info", "msg"', "`jq -r .msg FILE | kforensic dmesg -`"),
        ('"level": "info", "text"', "`jq -r .message FILE | kforensic dmesg -` with the field that holds it"),
    ],
    ids=["rsyslog", "msg", "unknown-field"],
)  # fmt: skip
def test_json_lines_of_another_tool_are_refused_as_such_with_how_to_give_their_text(
    tmp_path: Path, fields: str, hint: str
) -> None:
    """An rsyslog/Vector/Fluent Bit export of syslog, a JSON object a line with the kernel's lines in a field, was
    refused as "a JSON document that is neither ..." (review ue16 #6): said as JSON lines, with the command that
    gives its messages' text."""
    lines = ["[  575.000000] ------------[ cut here ]------------", "[  575.000001] WARNING: CPU: 1 PID: 23 at x.c:1"]
    path = tmp_path / "syslog.ndjson"
    path.write_text("".join(f"{{{fields}: {json.dumps(line)}}}\n" for line in lines))
    done = _kforensic("dmesg", str(path))
    assert done.returncode == 3, done.stdout
    assert done.stderr.splitlines() == [
        f"kforensic: error: {path}: not a kernel log: JSON lines of another tool (a JSON object a line, not "
        "journalctl's fields)",
        f"kforensic: hint: give the message text, e.g. {hint}",
    ]


@pytest.mark.parametrize("document", ['{\n   "dmesg": [\n   ]\n}\n', '{"dmesg": []}'], ids=["util-linux", "compact"])
@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
def test_a_dmesg_json_with_no_record_is_said_as_such(tmp_path: Path, document: str, stdin: bool) -> None:
    """``dmesg -J`` of an empty ring buffer: valid output with no record, refused as that (exit 3), not as "empty"
    (review ue16 #7: a statement on the converted text, not the file), nor, piped in, as "standard input was
    empty"."""
    path = tmp_path / "dmesg.json"
    path.write_text(document)
    env = {"TZ": "UTC", "PATH": "/usr/bin:/bin", "KFORENSIC_AOT": "no"}
    with path.open() as given:
        done = subprocess.run(
            [sys.executable, "-m", "forensics", "dmesg", *([] if stdin else [str(path)])], stdin=given,
            capture_output=True, text=True, timeout=120, check=False, cwd=ROOT, env=env,
        )  # fmt: skip
    assert done.returncode == 3, done.stdout
    lines = done.stderr.splitlines()
    assert lines[0] == (
        f"kforensic: error: {'<stdin>' if stdin else path}: not a kernel log: it is a dmesg -J document with no "
        "record, so nothing in it could show a kernel problem"
    )
    assert len(lines) == 2 and lines[1].startswith("kforensic: hint: run dmesg -J where the ring buffer holds")


def test_a_dmesg_json_cut_inside_a_record_keeps_the_records_before_it() -> None:
    """A document cut at its end (a copy interrupted): the whole records are lines, the cut one is kept as its
    text for the log reader to judge, nothing raises; fed in pieces it reads the same."""
    records = [{"pri": 6, "name": "info", "time": "1.000000", "msg": "Linux version 6.1.0"}] * 3
    document = _dmesg_json(records, decode=False)
    cut = document[: document.rindex('"msg"') + 12].encode()
    lines = convert(cut).decode().splitlines()
    assert lines[:2] == ["<6>[    1.000000] Linux version 6.1.0"] * 2
    assert len(lines) == 3 and lines[2].startswith('{ "pri": 6, "time": 1.000000, "msg": "Linu'), lines
    from forensics.journal_text import JournalText

    reader = JournalText("dmesg-json")
    whole = document.encode()
    pieces = b"".join(reader.feed(whole[i : i + 7]) for i in range(0, len(whole), 7)) + reader.close()
    assert pieces == convert(whole)
    assert pieces.count(b"\n") == 3


def _warning(cpu: int, pid: int, function: str) -> list[str]:
    """A WARNING report's lines, printed by task ``pid`` on CPU ``cpu``."""
    return [
        "------------[ cut here ]------------",
        f"WARNING: CPU: {cpu} PID: {pid} at drivers/kf/{function}.c:42 {function}+0x21/0x40 [kf_buggy]",
        "Modules linked in: kf_buggy(O)",
        f"CPU: {cpu} PID: {pid} Comm: kf-{pid} Tainted: G           O       6.1.0-kf #1",
        f"RIP: 0010:{function}+0x21/0x40 [kf_buggy]",
        "Call Trace:",
        " <TASK>",
        f" {function}_write+0x10/0x20 [kf_buggy]",
        " vfs_write+0x9e/0x181",
        " ksys_write+0x66/0x97",
        " do_syscall_64+0x39/0x46",
        " entry_SYSCALL_64_after_hwframe+0x4b/0xb5",
        " </TASK>",
        "---[ end trace 0000000000000000 ]---",
    ]


def test_a_records_caller_tells_two_cpus_interleaved_reports_apart(tmp_path: Path) -> None:
    """util-linux >= 2.39 writes a record's printk caller (``"caller": "T100"``): two tasks' WARNINGs printed at
    once, line by line, read as two reports from the caller ids, in ``dmesg -J`` as in the console's text with
    ``[ T100]`` after the time.  Dropped, the -J gave "WARNING in corrupted" and one report of the two lines."""
    records: list[tuple[str, int, str]] = []
    alpha, beta = _warning(0, 100, "kf_alpha_stop"), _warning(1, 200, "kf_beta_reset")
    for i, (first, second) in enumerate(zip(alpha, beta, strict=True)):
        records += [("T100", 10_000_000 + 2 * i, first), ("T200", 10_000_001 + 2 * i, second)]
    text = "".join(f"<4>[{us // 10**6:5d}.{us % 10**6:06d}][{who:>6}] {msg}\n" for who, us, msg in records)
    document = {"dmesg": [{"pri": 4, "time": f"@{us}", "caller": who, "msg": msg} for who, us, msg in records]}
    # util-linux prints the time as a number with 6 decimals: put in place of the strings json.dumps would quote.
    raw = re.sub(r'"@(\d+)"', lambda m: f"{int(m.group(1)) / 1e6:12.6f}", json.dumps(document, indent=3))
    assert convert(raw.encode()).decode() == text
    reports: dict[str, list[tuple[object, ...]]] = {}
    for name, content in (("dmesg.txt", text), ("dmesg.json", raw)):
        (tmp_path / name).write_text(content)
        done = _kforensic("dmesg", "--format", "json", str(tmp_path / name))
        assert done.returncode == 0, done.stderr
        reports[name] = [
            (r["title"], r["start_line"], r["end_line"], r["cpu"], r["pid"], [f["function"] for f in r["call_trace"]])
            for r in json.loads(done.stdout)["sources"][0]["reports"]
        ]
    assert reports["dmesg.json"] == reports["dmesg.txt"]
    assert [r[:5] for r in reports["dmesg.json"]] == [
        ("WARNING in kf_alpha_stop", 3, 27, 0, 100),
        ("WARNING in kf_beta_reset", 4, 28, 1, 200),
    ]
    assert reports["dmesg.json"][0][5][0] == "kf_alpha_stop_write"


def test_a_cut_dmesg_json_says_it_was_cut(tmp_path: Path) -> None:
    """A ``dmesg -J`` document cut inside a record was read as its records and "No problem found", the cut unsaid
    (the bad-input tries of 2026-12-07); now the input's record says it, and what could not be judged.  One cut
    before its first record is refused as that, not as "a dmesg -J document with no record"."""
    records = _records()
    text = _dmesg_json(records, False)
    cut_at = text.index('"msg"', text.index('"msg"') + 1) + 12  # inside the second record's message
    path = tmp_path / "cut.json"
    path.write_text(text[:cut_at])
    done = _kforensic("dmesg", "--format", "json", str(path))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    said = "the dmesg -J document ends inside its record 2 (the file is cut)"
    (record,) = doc["incident"]["sources"]
    assert said in record["error"], record
    text_out = _kforensic("dmesg", str(path)).stdout
    assert f"could not judge: what the reading lost: {said}" in " ".join(text_out.split()), text_out
    ended = tmp_path / "ended.json"  # every record whole, the closing "]}" missing
    ended.write_text(text[: text.rindex("}", 0, text.rindex("]")) + 1])
    done = _kforensic("dmesg", "--format", "json", str(ended))
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)["incident"]["sources"]
    assert f"ends after {len(records)} record(s), without its closing ']'" in record["error"], record
    whole = tmp_path / "whole.json"
    whole.write_text(text)
    assert _kforensic("dmesg", "--format", "json", str(whole)).stdout.count("ends inside") == 0
    opened = tmp_path / "opened.json"
    opened.write_text(text[: text.index("{", 2)])  # '{\n   "dmesg": [\n      '
    refused = _kforensic("dmesg", str(opened))
    assert refused.returncode == 3, refused
    assert "it is a dmesg -J document cut before its first record" in refused.stderr, refused.stderr
