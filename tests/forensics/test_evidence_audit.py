"""Every command's JSON on the project's own inputs: every finding at every severity cites evidence that checks out.

tests/evidence_audit.py is the checker (what it checks: its docstring). Here it reads the output of each command
run in this process on the bundled inputs (the golden logs, the traces and the LTTng session, the profiles, the
slab-watch recordings, the kdump sysroots, fixture dumps, the demo's report and a ``report --from`` merge), and
first shows on those inputs that it fails on each kind of mismatch it is meant to catch.
"""

from __future__ import annotations

import copy
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.evidence_audit import Inputs, add_dump, add_store, audit, shows_frame
from tests.helpers import cli_in_process

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "detectors" / "dmesg" / "golden"
TRACES = [
    *sorted((DATA / "traces").glob("kf.*.txt.gz")),
    DATA / "lttng" / "kernel.ftrace.txt.gz",
    DATA / "healthy" / "ftrace.txt.gz",
]
PROFILES = [
    *(p for p in sorted((DATA / "profile").glob("*.gz")) if ".report." not in p.name),
    DATA / "healthy" / "perf.txt.gz",
]
WORKLOADS = [DATA / "workloads" / "tcp-time-wait-4min.txt.xz"]
SYSROOTS = sorted((ROOT / "vmcore_fixtures" / "sysroots").iterdir())


@pytest.fixture
def kforensic(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> Any:  # the command's JSON document
    def run(*args: str | Path, json_option: str = "") -> dict[str, Any]:
        out = tmp_path / "out.json"
        where = (json_option, str(out), "-o", str(tmp_path / "out.md")) if json_option else ("--format", "json")
        tail = () if json_option else ("-o", str(out))
        code, _ = cli_in_process(monkeypatch, capsys, *map(str, args), *where, *tail)
        assert code in (0, 1), (args, code)
        doc: dict[str, Any] = json.loads(out.read_text())
        return doc

    return run


def _findings(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc.get("incident", doc)["findings"]  # type: ignore[no-any-return]


def _clean(doc: dict[str, Any], inputs: Inputs) -> None:
    assert _findings(doc), "no findings: nothing was checked"
    problems = audit(doc, inputs)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ the checker fails on each mismatch


def _mutated(doc: dict[str, Any], change: str) -> dict[str, Any]:
    """A copy of ``doc`` with its first finding's first evidence changed as a buggy command would."""
    bad = copy.deepcopy(doc)
    finding = _findings(bad)[0]
    ev = finding["evidence"][0]
    if change == "line off by one":
        ev["locator"]["start"] += 1
        ev["locator"]["end"] = None
    elif change == "time not in the file":
        ev["timestamp"]["seconds"] += 0.5
    elif change == "other CPU":
        ev["cpu"] += 1
    elif change == "other file":
        ev["source"] = str(GOLDEN / "warning_syslog.log")
    elif change == "no evidence":
        finding["evidence"] = []
    return bad


@pytest.mark.parametrize(
    "change", ["line off by one", "time not in the file", "other CPU", "other file", "no evidence"]
)
def test_the_audit_fails_on_a_mismatch(kforensic: Any, tmp_path: Path, change: str) -> None:
    doc = kforensic("dmesg", GOLDEN / "hard_lockup_kmsg.log")
    _clean(doc, Inputs(tmp_path))
    assert audit(_mutated(doc, change), Inputs(tmp_path)), change


def test_the_audit_fails_on_a_timeline_or_hypothesis_citing_other_evidence(kforensic: Any, tmp_path: Path) -> None:
    log = ROOT / "vmcore_fixtures" / "cases" / "02-bug-on" / "console.log"
    doc = kforensic("report", "--dmesg", log, "--dmesg", GOLDEN / "null_deref_x86.log", json_option="--json")
    _clean(doc, Inputs(tmp_path))
    assert doc["timeline"] and doc["hypotheses"]
    bad = copy.deepcopy(doc)
    # (the entry of the 02 log, on whichever lane: the two logs' boots are not known to be one, each has its own)
    entry = next(e for e in bad["timeline"] if e["cite"].startswith(str(log)))
    entry["cite"] = entry["cite"].replace(str(log), str(GOLDEN / "null_deref_x86.log"))
    assert audit(bad, Inputs(tmp_path))
    bad = copy.deepcopy(doc)
    first = bad["hypotheses"][0]["supporting"][0]
    bad["hypotheses"][0]["supporting"][0] = first.replace(" line ", " line 1", 1)
    assert audit(bad, Inputs(tmp_path))


def test_the_audit_fails_on_a_duration_its_events_do_not_span(kforensic: Any, tmp_path: Path) -> None:
    doc = kforensic("trace", TRACES[0])
    _clean(doc, Inputs(tmp_path))
    facts = [x for f in _findings(doc) for x in f["facts"] if x["name"] in ("longest run", "worst wakeup latency")]
    assert facts
    for fact in facts:
        stated = fact["value"]
        fact["value"] = f"{float(stated.split()[0]) + 0.002:.3f} ms"
        assert audit(doc, Inputs(tmp_path)), fact
        fact["value"] = stated


def test_the_audit_fails_on_a_report_fact_or_a_sample_figure_its_evidence_does_not_show(
    kforensic: Any, tmp_path: Path
) -> None:
    doc = kforensic("dmesg", GOLDEN / "hard_lockup_kmsg.log")
    for name, other in (("cpu", "3"), ("pid", "4242"), ("comm", "kf_other"), ("guilty frame", "kf_elsewhere")):
        bad = copy.deepcopy(doc)
        (fact,) = [x for x in _findings(bad)[0]["facts"] if x["name"] == name]
        fact["value"] = other
        assert audit(bad, Inputs(tmp_path)), name
    store = tmp_path / "slab.db"
    doc = kforensic("slab-import", WORKLOADS[0], "--store", store)
    inputs = Inputs(tmp_path)
    add_store(inputs, store)
    _clean(doc, inputs)
    figures = [x for f in _findings(doc) for x in f["facts"] if x["name"] in ("first sample", "last sample")]
    assert figures
    for fact in figures[:2]:
        stated = fact["value"]
        fact["value"] = stated.replace(" KB (", "1 KB (")  # ten times the figure and one more
        assert audit(doc, inputs), stated
        fact["value"] = stated


# ------------------------------------------------------------------ every command on the bundled inputs


def test_dmesg_on_every_golden_log(kforensic: Any, tmp_path: Path) -> None:
    logs = sorted(GOLDEN.glob("*.log"))
    for log in logs:
        doc = kforensic("dmesg", log)
        if _findings(doc):
            problems = audit(doc, Inputs(tmp_path))
            assert not problems, "\n".join(problems)
    doc = kforensic("dmesg", *logs, ROOT / "vmcore_fixtures" / "cases" / "11-abba-deadlock" / "console.log")
    _clean(doc, Inputs(tmp_path))


def test_dmesg_cites_a_guilty_frame_read_past_an_interleaved_report(kforensic: Any, tmp_path: Path) -> None:
    # An RCU stall on CPU 0 of a log with caller prefixes, a WARNING of the same CPU printed into it
    # (panic_on_warn): the stall's own lines end at the WARNING's header and hold no frame; its CPU's stack past
    # them names the system call it loops in (line 29), the frame its title names, as syzkaller's pkg/report
    # reads such a log (a report of a caller context runs on past a second report).  The guilty frame is where
    # the CPU was caught (line 28), as for a stall whose own lines hold its stack (it was the title's frame).
    doc = kforensic("dmesg", GOLDEN / "rcu_stall_into_warning_caller.log")
    (stall,) = [f for f in _findings(doc) if f["title"] == "INFO: rcu detected stall in sys_kf_spin"]
    assert {"name": "guilty frame", "value": "kf_spin_loop"} in [
        {"name": x["name"], "value": x["value"]} for x in stall["facts"]
    ]
    report = [e["locator"] for e in stall["evidence"] if e["locator"]["name"] == "report"]
    assert report == [{"kind": "line", "start": 1, "end": 4, "name": "report"}]
    cited = [(e["locator"]["start"], e["excerpt"]) for e in stall["evidence"] if e["locator"]["name"] == "guilty frame"]
    assert cited == [(28, "[  100.002800][    C0] RIP: 0010:kf_spin_loop+0x2a/0x60")]  # with its time stamp (was not)
    _clean(doc, Inputs(tmp_path))


def _kernel_of(doc: dict[str, Any], title: str) -> tuple[str | None, list[tuple[int, str]]]:
    """The kernel fact of the finding titled ``title`` and the lines it cites as its boot banner."""
    (finding,) = [f for f in _findings(doc) if f["title"] == title]
    kernel = next((x["value"] for x in finding["facts"] if x["name"] == "kernel"), None)
    banners = [
        (e["locator"]["start"], e["excerpt"]) for e in finding["evidence"] if e["locator"]["name"] == "boot banner"
    ]
    return kernel, banners


def test_dmesg_names_the_kernel_of_a_reports_boot_banner(kforensic: Any, tmp_path: Path) -> None:
    # warning_syslog.log's WARNING without its "CPU: ... 6.1.0-13-amd64 #1" line prints no release: the kernel is
    # the one the banner of its boot names (null_deref_x86.log's first line), cited; its own release line wins.
    syslog = "Nov 30 06:55:29 host1 kernel: "
    banner = syslog + (GOLDEN / "null_deref_x86.log").read_text().splitlines()[0]
    other = banner.replace("6.1.0-kf", "6.6.0-kf")
    warning = (GOLDEN / "warning_syslog.log").read_text().splitlines()[1:-1]  # cut here .. end trace
    bare = [line for line in warning if " Comm: " not in line]
    assert len(bare) == len(warning) - 1
    title = "WARNING in e1000e_update_stats"
    second = [line.replace("e1000e_update_stats", "e1000e_read_stats") for line in bare]
    third = [line.replace("e1000e_update_stats", "e1000e_get_stats") for line in warning]

    one = tmp_path / "one-boot.log"
    one.write_text("\n".join([banner, *bare]) + "\n")
    doc = kforensic("dmesg", one)
    assert _kernel_of(doc, title) == ("6.1.0-kf", [(1, banner)])
    _clean(doc, Inputs(tmp_path))

    # Two boots of two kernels: each report is of its own boot's kernel, never the previous boot's.
    two = tmp_path / "two-boots.log"
    boot2 = 2 + len(bare)
    two.write_text("\n".join([banner, *bare, other, *second, *third]) + "\n")
    doc = kforensic("dmesg", two)
    assert _kernel_of(doc, title) == ("6.1.0-kf", [(1, banner)])
    assert _kernel_of(doc, "WARNING in e1000e_read_stats") == ("6.6.0-kf", [(boot2, other)])
    assert _kernel_of(doc, "WARNING in e1000e_get_stats") == ("6.1.0-13-amd64", [])
    _clean(doc, Inputs(tmp_path))

    # No banner: the kernel stays unknown, nothing cited.
    none = tmp_path / "no-banner.log"
    none.write_text("\n".join(bare) + "\n")
    assert _kernel_of(kforensic("dmesg", none), title) == (None, [])

    # A second boot whose banner the log lacks (its start, printed at 0.000000, is there): its report was said to
    # be of the first boot's kernel; it is unknown, and says why and where that boot starts.
    start = syslog + "[    0.000000] Command line: BOOT_IMAGE=/vmlinuz root=/dev/vda1 console=ttyS0"
    lacking = tmp_path / "bannerless-boot.log"
    lacking.write_text("\n".join([banner, *bare, start, *second]) + "\n")
    doc = kforensic("dmesg", lacking)
    assert _kernel_of(doc, title) == ("6.1.0-kf", [(1, banner)])
    unknown = f"unknown (no boot banner for this boot, which starts at line {boot2})"
    assert _kernel_of(doc, "WARNING in e1000e_read_stats") == (unknown, [])
    _clean(doc, Inputs(tmp_path))

    # An unexpected reboot (a banner after a later time, no panic or reboot request above it): its header is the
    # next boot's banner; the kernel that died is the one its own boot's banner names, cited (it had no kernel).
    reboot = tmp_path / "reboot.log"
    link_up = (GOLDEN / "warning_syslog.log").read_text().splitlines()[0]  # [  101.000001] ... NIC Link is Up
    reboot.write_text("\n".join([banner, link_up, other]) + "\n")
    doc = kforensic("dmesg", reboot)
    assert _kernel_of(doc, "unexpected kernel reboot") == ("6.1.0-kf", [(1, banner)])
    _clean(doc, Inputs(tmp_path))
    reboot.write_text("\n".join([start, link_up, other]) + "\n")  # the boot that died without its banner
    doc = kforensic("dmesg", reboot)
    died = "unknown (no boot banner for the boot that died, which starts at line 1)"
    assert _kernel_of(doc, "unexpected kernel reboot") == (died, [])
    _clean(doc, Inputs(tmp_path))


def test_the_audit_reads_a_guilty_frame_as_syzkaller_titles_it() -> None:
    assert shows_frame("synchronize_rcu", "[  1.0]  [<ffffffff81000010>] synchronize_sched+0x10/0x20")
    rust = "_RNvMNtCs1a2b3c_2kf7spinnerNtB2_7Spinner4spin+0x10/0x20"  # <kf::spinner::Spinner>::spin
    assert shows_frame("<kf::spinner::Spinner>::spin", f"[  2.0][  T1]  {rust}")
    assert not shows_frame("<kf::spinner::Spinner>::stop", f"[  2.0][  T1]  {rust}")
    assert not shows_frame("synchronize_rcu", "[  1.0]  rcu_barrier+0x10/0x20")


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_trace(kforensic: Any, tmp_path: Path, trace: Path) -> None:
    _clean(kforensic("trace", trace), Inputs(tmp_path))


def test_trace_of_an_lttng_session(kforensic: Any, tmp_path: Path) -> None:
    """Events of a CTF directory: the stream file holds the offset, and babeltrace2 (when installed) prints the
    event at that time on that CPU."""
    session = tmp_path / "ust"
    with tarfile.open(DATA / "lttng" / "ust.tar.gz") as tar:
        tar.extractall(session, filter="data")
    doc = kforensic("trace", session)
    inputs = Inputs(tmp_path)
    _clean(doc, inputs)
    assert inputs.ctf_printed is None or inputs.ctf_printed  # babeltrace2 read the cited times


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_profile(kforensic: Any, tmp_path: Path, profile: Path) -> None:
    _clean(kforensic("profile", profile), Inputs(tmp_path))


@pytest.mark.parametrize("snapshots", WORKLOADS, ids=lambda p: p.name)
def test_slab_import_and_leaks(kforensic: Any, tmp_path: Path, snapshots: Path) -> None:
    store = tmp_path / "slab.db"
    imported = kforensic("slab-import", snapshots, "--store", store)
    inputs = Inputs(tmp_path)
    add_store(inputs, store)
    _clean(imported, inputs)
    _clean(kforensic("leaks", "--store", store), inputs)


@pytest.mark.parametrize("sysroot", SYSROOTS, ids=lambda p: p.name)
def test_kdump_check(kforensic: Any, tmp_path: Path, sysroot: Path) -> None:
    _clean(kforensic("kdump", "check", "--root", sysroot), Inputs(tmp_path))


def _case(name: str) -> Any:
    pytest.importorskip("drgn")
    from tests.vmcore_cases import case_names, load_case

    if name not in case_names():
        pytest.skip(f"vmcore fixture {name} is absent (vmcore_fixtures/build.sh)")
    return load_case(name)


@pytest.mark.parametrize(
    "name", ["01-null-member", "06-list-corrupt", "10-use-after-free", "11-abba-deadlock", "14-spin-deadlock"]
)
def test_vmcore(kforensic: Any, tmp_path: Path, name: str) -> None:
    """Frames, registers, instructions and memory words as a fresh drgn program reads them (the fault address, a
    list entry, a freed object's words, a lock word: each stated fact's value cited where it was read); the dump's
    log lines, times and CPUs."""
    case = _case(name)
    debug = [a for m in case.module_debug for a in ("--module-debug", m)]
    doc = kforensic("vmcore", case.directory, "--vmlinux", case.vmlinux, *debug)
    inputs = Inputs(tmp_path)
    add_dump(inputs, case.vmcore, case.vmlinux, case.module_debug)
    _clean(doc, inputs)
    # A frame, register or address the dump does not hold there fails: another frame, value or instruction.
    dump_kinds = {"frame", "register", "address"}
    cited = [(i, j) for i, f in enumerate(_findings(doc)) for j, e in enumerate(f["evidence"])
             if e["locator"]["kind"] in dump_kinds]  # fmt: skip
    assert cited
    for i, j in cited:
        bad = copy.deepcopy(doc)
        ev = _findings(bad)[i]["evidence"][j]
        if ev["locator"]["kind"] == "register":
            ev["excerpt"] = "rax=0x0000000000000bad"
        elif (ev["locator"]["name"] or "").startswith("u"):  # memory words (a freed object's poison is uniform)
            ev["excerpt"] = ev["excerpt"].replace("0x", "0x1", 1)
        else:
            ev["locator"]["start"] += 1
        assert audit(bad, inputs), ev


def test_report_of_the_demo_and_report_from(kforensic: Any, tmp_path: Path) -> None:
    """The demo's inputs (a dump, its log, slab samples, a trace) and a profile in one report, then the command's
    JSON merged again with another log's by ``report --from``: each evidence still points at its own input."""
    case = _case("08-slab-leak")
    store = tmp_path / "slab.db"
    kforensic("slab-import", case.directory / "snapshots", "--store", store, "--no-analysis")
    doc = kforensic(
        "report", "--vmcore", case.directory, "--vmlinux", case.vmlinux, "--module-debug", case.module_debug[0],
        "--dmesg", case.console_log, "--store", store, "--trace", TRACES[0], "--profile", PROFILES[0],
        json_option="--json",
    )  # fmt: skip
    inputs = Inputs(tmp_path)
    add_dump(inputs, case.vmcore, case.vmlinux, case.module_debug)
    add_store(inputs, store)
    _clean(doc, inputs)
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(doc))
    other = tmp_path / "dmesg.json"
    other.write_text(json.dumps(kforensic("dmesg", GOLDEN / "lockdep_kasan_interleaved.log")))
    _clean(kforensic("report", "--from", saved, other, json_option="--json"), inputs)
