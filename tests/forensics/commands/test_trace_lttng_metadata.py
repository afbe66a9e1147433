"""What an LTTng kernel trace's own metadata says of its kernel, as ``kforensic trace`` reads it: the preemption
model (env.kernel_version, the kernel's ``uname -v``), and its events cited by their locator, never a "line".

The project's LTTng session (tests/data/lttng/kernel-session.tar.xz, a Debian 6.1 PREEMPT_DYNAMIC kernel); its
metadata rewritten as TSDL text where a test needs another kernel (the reader takes either form).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.collectors.ctf_check import extract_session, with_env
from tests.helpers import Ran, cli_run

# One pytest-xdist group: the session unpacked and its JSON document made once, on one worker (issue #28).
pytestmark = pytest.mark.xdist_group("lttng-metadata")


def trace(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> Ran:
    return cli_run(monkeypatch, capsys, "trace", *args)


_DOCS: dict[Path, dict[str, Any]] = {}


def session_doc(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    """The session's ``kforensic trace -f json -o FILE`` document, made once for the tests that read it (~0.8 s of
    CPU a run, issue #28): by the first of them to run, the others read it (a test alone still makes it)."""
    if session not in _DOCS:
        out = tmp_path / "doc.json"
        assert trace(monkeypatch, capsys, str(session), "-f", "json", "-o", str(out)).returncode in (0, 1)
        _DOCS[session] = json.loads(out.read_text())
    return _DOCS[session]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


def keyed(doc: Any, key: str) -> Iterator[Any]:
    """Every value of ``key`` anywhere in a JSON document."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == key:
                yield v
            yield from keyed(v, key)
    elif isinstance(doc, list):
        for v in doc:
            yield from keyed(v, key)


def test_a_waits_prio_is_cited_by_the_event_it_was_read_from(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``prio_from`` of an LTTng session's wait names its event as every other citation of the document does (it
    wrote ``{"line": N}``, the event's byte position in the session, in a trace that has no lines)."""
    doc = session_doc(session, tmp_path, monkeypatch, capsys)
    cited = list(keyed(doc["tasks"], "prio_from"))
    assert len(cited) > 5
    for at in cited:
        assert set(at) == {"event"} and at["event"]["stream"].startswith("kernel/"), at
        assert at["event"]["number"] >= 1 and at["event"]["clock"] == "monotonic"


def test_the_preemption_model_is_read_from_the_kernels_uname_v(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The build flags of ``uname -v`` (env.kernel_version) say the model, cited where read; PREEMPT_DYNAMIC's is
    chosen at boot: not known, and the line says why; --preempt still decides over the metadata."""

    def examined(path: Path, *args: str) -> dict[str, Any]:
        ran = trace(monkeypatch, capsys, str(path), "-f", "json", *args)
        assert ran.returncode in (0, 1), ran.stderr
        (exam,) = json.loads(ran.stdout)["incident"]["examined"]
        return dict(exam)

    (dynamic,) = session_doc(session, tmp_path, monkeypatch, capsys)["incident"]["examined"]
    (line,) = [x for x in dynamic["could_not"] if x.startswith("the kernel's preemption model")]
    assert "env.kernel_version '#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)'" in line
    assert "chosen at boot" in line
    full = examined(with_env(session, tmp_path / "full", kernel_version="#1 SMP PREEMPT Debian 6.1.192-3"))
    assert not [x for x in full["could_not"] if "preemption model" in x]
    assert (
        "RT wakeup latency on a kernel of preemption model full (read from the trace's metadata, "
        "env.kernel_version '#1 SMP PREEMPT Debian 6.1.192-3')" in full["could_find"]
    )
    plain = with_env(session, tmp_path / "plain", kernel_version="#1 SMP Debian 5.10.226-1 (2024-10-03)")
    assert any("preemption model none or voluntary (read from" in x for x in examined(plain)["could_find"])
    declared = examined(plain, "--preempt", "full")
    assert "RT wakeup latency on a kernel of preemption model full" in declared["could_find"]


def test_traces_of_two_hosts_are_refused_naming_them(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two machines' kernel traces in one directory (env.hostname VM1 and VM3, each its own boot's clock): one line
    naming the hosts and saying to analyse each trace on its own, exit 3 (it said "different clocks", with a hint
    for a kernel + user-space session, which one host records)."""
    with_env(session, tmp_path / "both" / "src", hostname="VM1")
    with_env(session, tmp_path / "both" / "dest", clock_uuid="74715693-28c1-4d0d-bee9-24790a4942b0", hostname="VM3")
    ran = trace(monkeypatch, capsys, str(tmp_path / "both"))
    assert ran.returncode == 3 and "Traceback" not in ran.stderr
    error, hint = ran.stderr.splitlines()
    assert error == (
        f"kforensic: error: {tmp_path / 'both'}: the traces are of 2 different hosts (src/kernel: VM1,"
        " dest/kernel: VM3); analyse each trace directory on its own"
    )
    assert hint == (
        f"kforensic: hint: kforensic trace {tmp_path / 'both' / 'src' / 'kernel'} ;"
        f" kforensic trace {tmp_path / 'both' / 'dest' / 'kernel'}"
    )
    # One host's two boots: still two clocks, said as before.
    with_env(session, tmp_path / "boots" / "a")
    with_env(session, tmp_path / "boots" / "b", clock_uuid="74715693-28c1-4d0d-bee9-24790a4942b0")
    ran = trace(monkeypatch, capsys, str(tmp_path / "boots"))
    assert ran.returncode == 3 and "the traces use different clocks" in ran.stderr


@pytest.mark.skipif(shutil.which("babeltrace2") is None, reason="needs babeltrace2")
def test_every_event_is_analysed_skipped_or_said_not_analysed(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The header counts every event: analysed, skipped by name, or read for something else (syscalls: the
    syscall latency table, test_trace_syscall_latency.py; the statedump's threads, user-space events) (31,556
    events of bug446190 were 7,885 analysed + 19,846 skipped: 3,825 said nowhere).  The figures against
    babeltrace2's count of each event name."""
    from tests.collectors.test_lttng_kernel_session import babeltrace_counts

    names = babeltrace_counts(session)
    parse = session_doc(session, tmp_path, monkeypatch, capsys)["parse"]
    aside = parse["not_analysed_events"]
    assert parse["events"] == sum(names.values())
    assert parse["events"] == parse["events_analysed"] + sum(parse["skipped_events"].values()) + sum(aside.values())
    syscalls = sum(n for name, n in names.items() if name.startswith(("syscall_entry_", "syscall_exit_")))
    assert aside == {
        "syscalls": syscalls,
        "statedump": names["lttng_statedump_process_state"],
        "user_space": sum(n for name, n in names.items() if ":" in name),  # provider:event
    }  # (a sched_wakeup after its sched_waking is analysed: where it queued the task)
    text = trace(monkeypatch, capsys, str(session)).stdout
    said = " ".join(text.split())
    assert f"not analysed: {syscalls} syscall entry/exit events (the syscall latency table)," in said
