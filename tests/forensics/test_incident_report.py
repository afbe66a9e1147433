"""kforensic report on the real fixtures: one story from dump, log, samples and trace."""

from __future__ import annotations

import contextlib
import gzip
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from forensics.model import LocatorKind
from forensics.serialize import incident_from_dict
from tests.forensics.test_cli import run
from tests.helpers import Ran, assert_evidence_resolves, cli_run
from tests.vmcore_cases import VmcoreCase, case_names, load_case

drgn = pytest.importorskip("drgn")

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "kf.ftrace.txt.gz"

# One pytest-xdist group, started early (tests/conftest.py's LONG): the slab-watch samples three of its tests read
# (leak_samples, 0.4 s of CPU) are made once, on one worker; dealt out over make test's workers, each made them.
pytestmark = pytest.mark.xdist_group("incident-report")


#: The 04-hung-task story's first sentence: the waiter's wait, from when the dump says it last ran (its
#: se.exec_start, 2.338 s after boot) to khungtaskd's report (10.53 s).  It began at the report, an instant, until
#: 2026-12-07 (ue17 #6), and said "for 3.285 ms", the time its log lines took to print, until 2026-12-06.
HUNG_FIRST = "First (2026-12-02 20:15:50 UTC ±2.0 s, for 8.2 s): task kf_waiter blocked in D state on mutex kf_dev_lock"
#: ... with the case's own console log, whose report (merged into the dump's) states how long the task was blocked.
#: Its console log's RTC line dates the crashed boot (±1.0 s), where the kdump kernel's boot below it (its own RTC
#: line, line 265) left the log's boot time unknown and the dump's (±2.0 s) was used.
HUNG_FIRST_WITH_ITS_LOG = (
    "First (2026-12-02 20:15:50 UTC ±1.0 s, for 8.2 s (blocked for more than 5 s when reported)): task kf_waiter "
    "blocked in D state"
)


def _need(name: str) -> VmcoreCase:
    if name not in case_names():
        pytest.skip(f"vmcore fixture {name} is absent (vmcore_fixtures/build.sh)")
    return load_case(name)


#: A run of the CLI: ``kf`` below (in this process), or tests.forensics.test_cli.run (a real process).
Run = Callable[..., Any]


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """``kforensic ARGS`` in this process (tests.helpers.cli_run): these tests read what a report says; the report
    as a process is test_report_html_renders_in_chromium's (and test_cli's, test_write_faults', tests/hostile's).
    A report run as a process was 1.0-1.5 s of CPU, 0.4-0.5 s in this process once drgn and matplotlib are in."""

    def invoke(*args: str | Path) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


def _report(run: Run, case: VmcoreCase, out: Path, *extra: str | Path) -> dict[str, Any]:
    result = run(
        "report", "--vmcore", case.directory, "--vmlinux", case.vmlinux,
        *(a for m in case.module_debug for a in ("--module-debug", m)),
        "--dmesg", case.console_log, *extra,
        "-o", out / "incident.md", "--json", out / "incident.json", "--html", out / "incident.html",
        "--digest", out / "digest.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads((out / "incident.json").read_text())
    assert doc["schema"] == "kforensic.report/1"
    return doc


def _report_beside(run: Run, case: VmcoreCase, log: Path, out: Path) -> dict[str, Any]:
    """The report of the case's dump beside ``log`` (another guest's, another kernel's), as markdown and JSON."""
    result = run(
        "report", "--vmcore", case.directory, "--vmlinux", case.vmlinux,
        *(a for m in case.module_debug for a in ("--module-debug", m)),
        "--dmesg", log, "-o", out / "incident.md", "--json", out / "incident.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads((out / "incident.json").read_text())
    return doc


def _check_evidence(doc: dict[str, Any], case: VmcoreCase, tmp: Path, store: Path | None = None) -> None:
    from collectors.slabstore import SlabStore
    from detectors.vmcore.analysis import log_as_text
    from detectors.vmcore.findings import log_source
    from forensics.vmcore.resolve import dump_resolvers
    from forensics.vmcore.system import log_records

    incident = incident_from_dict(doc["incident"], "incident.json")
    prog = drgn.Program()
    prog.set_core_dump(str(case.vmcore))
    prog.load_debug_info([str(case.vmlinux)], main=True)
    with contextlib.suppress(drgn.MissingDebugInfoError):  # modules of the kernel without their .ko
        prog.load_debug_info([str(p) for p in case.module_debug], default=True)
    log = tmp / "dump-log.txt"
    log.write_text(log_as_text(log_records(prog)))
    sources = {log_source(str(case.vmcore)): log}
    # Evidence of a compressed trace cites the decompressed text (kforensic trace --save-text writes it).
    for gz in {e.source for f in incident.findings for e in f.evidence if e.source.endswith(" (gunzipped)")}:
        plain = tmp / (Path(gz.removesuffix(" (gunzipped)")).name + ".txt")
        plain.write_bytes(gzip.decompress(Path(gz.removesuffix(" (gunzipped)")).read_bytes()))
        sources[gz] = plain
    resolvers = dump_resolvers(prog)
    if store is not None:
        opened = SlabStore.open(store, readonly=True)
        resolvers[LocatorKind.SAMPLE] = opened.resolve_evidence
    assert_evidence_resolves(incident.findings, source_paths=sources, resolvers=resolvers)


@pytest.fixture(scope="module")
def leak_samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 08-slab-leak guest's samples imported into a store once for the module (each test reads a copy)."""
    case = _need("08-slab-leak")
    store = tmp_path_factory.mktemp("leak") / "slab.db"
    result = run("slab-import", case.directory / "snapshots", "--store", store, "--no-analysis")
    assert result.returncode == 0, result.stderr
    return store


def _leak_store(samples: Path, tmp: Path) -> Path:
    """A copy of the store ``leak_samples`` made (its mode too), in the test's directory."""
    return Path(shutil.copy2(samples, tmp / "slab.db"))


def test_leak_then_crash_is_one_story_in_order(tmp_path: Path, kf: Run, leak_samples: Path) -> None:
    case = _need("08-slab-leak")
    store = _leak_store(leak_samples, tmp_path)
    doc = _report(kf, case, tmp_path, "--store", store)
    cache = case.expected["leak"]["cache"]  # type: ignore[index]
    assert any(c["rule"] == "leak-outsized" for c in doc["correlations"]), doc["correlations"]
    assert cache in doc["hypotheses"][0]["statement"], doc["hypotheses"][0]
    timeline = doc["timeline"]
    leak_times = [e["wall"] for e in timeline if cache in e["title"]]
    panic_times = [e["wall"] for e in timeline if "sysrq" in e["title"] or "panic" in e["title"].lower()]
    assert leak_times, timeline
    assert panic_times, timeline
    assert min(leak_times) < min(panic_times)
    assert cache in doc["summary"], doc["summary"]
    # Leaking, not exhausted: said from the samples' MemAvailable and from the dump's own free pages,
    # read here straight from the kernel's counters (vm_zone_stat[NR_FREE_PAGES], _totalram_pages).
    prog = drgn.Program()
    prog.set_core_dump(str(case.vmcore))
    prog.load_debug_info([str(case.vmlinux)], main=True)
    free = prog["vm_zone_stat"][prog["NR_FREE_PAGES"]].counter.value_() * 4096
    total = prog["_totalram_pages"].counter.value_() * 4096
    said = f"the dump shows {free / 2**20:,.0f} MiB of {total / 2**20:,.0f} MiB ({free / total:.0%}) free at the crash"
    assert "but memory was not used up: MemAvailable" in doc["summary"] and said in doc["summary"], doc["summary"]
    _check_evidence(doc, case, tmp_path, store)
    assert len((tmp_path / "digest.json").read_bytes()) <= 8192
    markdown = (tmp_path / "incident.md").read_text()
    plots = [line for line in markdown.splitlines() if line.startswith("![")]
    for line in plots:
        target = line.split("](", 1)[1].rstrip(")")
        assert (tmp_path / target).is_file(), target


def test_null_member_story_names_the_field_first(tmp_path: Path, kf: Run) -> None:
    case = _need("01-null-member")
    doc = _report(kf, case, tmp_path)
    first = doc["hypotheses"][0]["statement"]
    assert str(case.expected["null_expression"]) in first
    assert any(c["rule"] == "same-crash" for c in doc["correlations"])
    # The NULL field held before the crash, though cited by the crash's lines only: told as its why, not as a later
    # step ("First: BUG: ... NULL pointer dereference. Then: NULL pointer: dev->sensor was NULL": ue17 #4).
    story = doc["narrative"]
    why = f"Why, from values read in the dump: NULL pointer: {case.expected['null_expression']} was NULL"
    assert story.startswith("First (") and why in story and "Then (" not in story, story
    assert story.index("NULL pointer dereference") < story.index(why), story
    _check_evidence(doc, case, tmp_path)


def test_the_console_logs_rtc_line_dates_the_dumped_boot_over_crashtime(tmp_path: Path, kf: Run) -> None:
    """01-null-member with its console log (ue18 #9): the boot was dated "±2.0 s (vmcore CRASHTIME minus the last
    printk time)" where the log's RTC line of the same boot (line 217) dates it ±1.0 s.  The oops's "after it" line
    cites the kdump kernel's boot (line 273), and its RTC line (502) was pooled with the crashed boot's: ±3.98 s, less
    precise than the dump's.  The boot a report is printed in is dated, not every boot its evidence cites."""
    case = _need("01-null-member")
    result = kf(
        "report", "--vmcore", case.directory, "--vmlinux", case.vmlinux,
        *(a for m in case.module_debug for a in ("--module-debug", m)),
        "--dmesg", case.console_log, "-o", tmp_path / "incident.md", "--json", tmp_path / "incident.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    boot = json.loads((tmp_path / "incident.json").read_text())["incident"]["boot_time"]
    assert boot["uncertainty"] == 1.0, boot
    assert "console.log line 217: the RTC's time" in boot["basis"] and "line 502" not in boot["basis"], boot


def test_a_cause_no_plain_words_tell_is_the_main_problem_in_its_own_words(tmp_path: Path, kf: Run) -> None:
    """05-soft-lockup: hypothesis 1 (0.85) is the loop the dump's machine code shows reads no memory; the verdict
    said "Hypothesis 1 is passed over: ... which the verdict does not tell in plain words" and named the lockup
    report, the crash already named, as the main problem (review ue17 #4)."""
    case = _need("05-soft-lockup")
    doc = _report(kf, case, tmp_path)
    summary = doc["summary"]
    assert doc["hypotheses"][0]["statement"].startswith("kf_poll_ready busy-waits forever"), doc["hypotheses"][0]
    assert "The main problem found: kf_poll_ready busy-waits forever: " in summary, summary
    assert "Hypothesis 1 of the ranking (confidence 0.85) names it." in summary, summary
    assert "passed over" not in summary and "is not the main problem" not in summary, summary
    _check_evidence(doc, case, tmp_path)


def test_hung_task_story_names_the_lock_owner(tmp_path: Path, kf: Run) -> None:
    case = _need("04-hung-task")
    doc = _report(kf, case, tmp_path, "--trace", TRACE)
    lock = case.expected["lock"]
    assert isinstance(lock, dict)
    assert lock["owner_comm"] in doc["hypotheses"][0]["statement"]
    assert {c["rule"] for c in doc["correlations"]} >= {"hung-task", "same-crash"}
    _check_evidence(doc, case, tmp_path)
    # Next steps are code: '- >>> %crash bt 42' was a blockquote ("▌ ▌ ▌ %crash bt 42" on a terminal), and the
    # trace's '--around 797.738806:20 <trace>' an HTML tag that markdown viewers drop.
    from markdown_it import MarkdownIt

    page = MarkdownIt("commonmark").render((tmp_path / "incident.md").read_text())
    assert "<blockquote>" not in page
    assert "<code>&gt;&gt;&gt; %crash bt 42</code>" in page
    assert "--around 797.738806:20 &lt;trace&gt;</code>" in page


def test_a_soft_lockup_titled_two_ways_is_one_crash_not_a_contradiction(tmp_path: Path, kf: Run) -> None:
    """The dump and the console log title the lockup by one rule, syzbot's (the frame before kthread:
    kf_hw_poll_fn); the dump titled it after the frame past the lock helpers (kf_hw_read_status) and the report
    then said "the dump and the log disagree" (medium), listed the lockup twice, and later raised it to 0.99
    "corroborated" by a title naming the other function.  One line at one printk time, one crash."""
    case = _need("14-spin-deadlock")
    doc = _report(kf, case, tmp_path)
    kinds = [f["kind"] for f in doc["incident"]["findings"]]
    assert "contradiction" not in kinds, doc["correlations"]
    assert kinds.count("crash") == 1 and "dmesg.soft-lockup" not in kinds, kinds
    same = [c for c in doc["correlations"] if c["rule"] == "same-crash"]
    assert same and same[0]["statement"].startswith("the dump's crash is the report at "), doc["correlations"]
    [crash] = [f for f in doc["incident"]["findings"] if f["kind"] == "crash"]
    assert crash["title"] == "BUG: soft lockup in kf_hw_poll_fn"
    assert "corroborated" in crash["confidence_reason"]  # the same function, named by both
    assert "kf_hw_lock" in doc["hypotheses"][0]["statement"], doc["hypotheses"][0]
    # The story said "for 3.307 ms", the time the report's lines took to print, of a CPU "stuck for 8s": the dump's
    # crash is an instant, with the duration its log's report states (carried over when the two were merged).
    # (A kworker in D state before it is an interval from its last run, context: not a step of the story.)
    crash = next(e for e in doc["timeline"] if e["title"].startswith("BUG: soft lockup"))
    assert crash["end"] is None and crash["stated"] == "stuck for 8 s when reported", crash
    assert ", stuck for 8 s when reported): BUG: soft lockup in" in doc["narrative"], doc["narrative"]
    _check_evidence(doc, case, tmp_path)


def test_a_log_of_another_kernel_is_not_a_step_of_the_crash_nor_a_cause(tmp_path: Path, kf: Run) -> None:
    """A 6.12.118 guest's log beside the 6.1.192 dump: the story said "First: OOM killer invoked (invoked by
    kf_memhog). Then: kernel panic: Out of memory ..." before the dump's hung task, and ranked the log's OOM as a
    cause; a kernel's release changes only with a boot, so the log is of another boot."""
    case = _need("04-hung-task")
    log = Path(case.directory).parents[1] / "kernels" / "6.12" / "cases" / "09-oom" / "console.log"
    if not log.is_file():
        pytest.skip(f"{log} is absent (vmcore_fixtures/build.sh)")
    doc = _report_beside(kf, case, log, tmp_path)
    said = f"{log} cannot come from the crashed boot: it names kernel 6.12.118, the dump 6.1.192"
    assert said in [c["statement"] for c in doc["correlations"] if c["contradiction"]]
    # What the log's release was compared with: the dump's, and where the dump names it (it named no baseline).
    [other] = [f for f in doc["incident"]["findings"] if f["title"].startswith(said)]
    assert other["baseline"]["value"] == "6.1.192" and other["baseline"]["name"].startswith(
        "the kernel release the dump names"
    )
    assert other["baseline"]["source"] == next(
        f["value"] for f in other["facts"] if f["name"] == "crashed kernel read from"
    )
    assert doc["incident"]["kernel_release"] == "6.1.192"
    # The story is the dump's; the log is told apart, on a lane of its own.
    assert doc["narrative"].startswith(HUNG_FIRST)
    assert f"The input {log} cannot come from the crashed boot: it names kernel 6.12.118" in doc["narrative"]
    assert {e["lane"] for e in doc["timeline"] if "kf_memhog" in e["title"]} == {f"input {log}"}
    assert [h["statement"].split(":")[0] for h in doc["hypotheses"]] == [
        "kf_holder (pid 42, state S) holds the lock and never releases it"
    ]
    _check_evidence(doc, case, tmp_path)


def test_samples_taken_after_the_crash_are_not_its_story_nor_its_cause(
    tmp_path: Path, kf: Run, leak_samples: Path
) -> None:
    """The 08-slab-leak guest's samples (20:16:30-20:18:03) beside the 04-hung-task dump (crashed 20:15:58 on the
    same kernel release): the story began "First (20:16:30 UTC, for 93.0 s): SUnreclaim grows ..." and the first
    hypothesis was the leak, from samples a dead kernel could not have taken."""
    case = _need("04-hung-task")
    store = _leak_store(leak_samples, tmp_path)
    doc = _report(kf, case, tmp_path, "--store", store)
    said = [c["statement"] for c in doc["correlations"] if c["contradiction"]]
    late = "its times start at 2026-12-02T20:16:30+00:00, after the crash at 2026-12-02T20:15:58+00:00 ±2.0 s"
    assert f"{store} cannot come from the crashed boot: {late}" in said
    [later] = [
        f for f in doc["incident"]["findings"] if f["title"] == f"{store} cannot come from the crashed boot: {late}"
    ]
    assert later["baseline"]["value"] == "2026-12-02T20:15:58+00:00 ±2.0 s (+2 s of slack)"
    assert later["baseline"]["source"].startswith("boot time: vmcore CRASHTIME")
    assert doc["narrative"].startswith(HUNG_FIRST_WITH_ITS_LOG)
    assert {e["lane"] for e in doc["timeline"] if "kf_leak_obj" in e["title"]} == {f"input {store}"}
    assert not any("leak" in h["statement"] for h in doc["hypotheses"]), doc["hypotheses"]
    _check_evidence(doc, case, tmp_path, store)


def test_a_leak_of_another_boot_corroborates_nothing_in_the_dump(tmp_path: Path, kf: Run) -> None:
    """The 6.12 guest's 08-slab-leak samples (2026-12-03) beside the 6.1 08-slab-leak dump (crashed 2026-12-02): the
    store is another boot (a contradiction), yet "leak-outsized: kf_leak_obj grows in the samples and is outsized in
    the dump" merged the dump's outsized cache into its leak, "corroborated" to 0.98 and ranked first."""
    case = _need("08-slab-leak")
    other = case.directory.parents[1] / "kernels" / "6.12" / "cases" / "08-slab-leak" / "snapshots"
    if not other.is_dir():
        pytest.skip("the 6.12 08-slab-leak fixture is absent (vmcore_fixtures/build.sh)")
    store = tmp_path / "other.db"
    result = kf("slab-import", other, "--store", store, "--no-analysis")
    assert result.returncode == 0, result.stderr
    doc = _report(kf, case, tmp_path, "--store", store)
    rules = [c["rule"] for c in doc["correlations"]]
    assert "leak-outsized" not in rules and "contradiction" in rules, doc["correlations"]
    assert not any(str(store) in str(h) for h in doc["hypotheses"]), doc["hypotheses"]
    outsized = [f for f in doc["incident"]["findings"] if f["kind"] == "outsized-slab"]
    assert outsized and all(e["source"] != str(store) for f in outsized for e in f["evidence"]), outsized


def test_report_html_renders_in_chromium(tmp_path: Path, leak_samples: Path) -> None:
    """The demo's inputs: the page opens with the verdict, the figure, then one timeline row per finding.
    The report runs as a process, as a user starts it (the other tests here run it in-process)."""
    import re

    import matplotlib.image
    import numpy as np

    from tests.forensics.report.test_html_chromium import CHROMIUM, _chromium

    if CHROMIUM is None:
        pytest.skip("Debian package chromium is not installed")
    case = _need("08-slab-leak")
    doc = _report(run, case, tmp_path, "--store", _leak_store(leak_samples, tmp_path), "--trace", TRACE)
    # One row per finding (the panic seen by the dump and the log is one merged finding, one row).
    finding_ids = [e["finding"] for e in doc["timeline"]]
    assert len(finding_ids) == len(set(finding_ids)), finding_ids
    # The trace was recorded 797 s after its boot; the dump's kernel crashed about 100 s after its boot
    # (its crash evidence, whose time depends on the run; the dump's log ends just after): another boot.
    log_end = float(case.dmesg.read_text().rstrip().rsplit("\n", 1)[-1].split("]", 1)[0].strip("[ "))
    trace_lane = next(lane for lane in doc["lanes"] if lane["key"].startswith("trace "))
    said = re.fullmatch(
        r"its times start at 797\.571 s since boot, after the crash at (\d+\.\d{3}) s", trace_lane["contradiction"]
    )
    assert said is not None, trace_lane["contradiction"]
    assert log_end - 1.0 <= float(said.group(1)) <= log_end
    assert all(e["wall"] is None for e in doc["timeline"] if e["lane"] == trace_lane["key"])
    other = [
        c for c in doc["correlations"] if c["contradiction"] and "cannot come from the crashed boot" in c["statement"]
    ]
    assert len(other) == 1 and "kf.ftrace.txt.gz" in other[0]["statement"], doc["correlations"]
    markdown = (tmp_path / "incident.md").read_text()
    assert "cannot come from the crashed boot" in markdown
    assert markdown.count("| Host |") == 1  # the host table once, not again from the findings' renderer
    page = tmp_path / "incident.html"
    text = page.read_text()
    order = [text.index(x) for x in ("<h2>Verdict</h2>", 'id="incident-timeline"', "<h2>Timeline</h2>",
                                     "<h2>Hypotheses</h2>", "<h2>Findings</h2>")]  # fmt: skip
    assert order == sorted(order), order
    assert text.count("<details>") >= len(finding_ids)
    images = [src for src in re.findall(r'<img src="([^"]+)"', text) if not src.startswith("data:")]
    assert images, "the leak case's plots are linked from the page"
    assert all((page.parent / src).is_file() for src in images), images
    # One browser run (they cost seconds): the screenshot, and the console (logged to stderr) stays quiet.
    shot = tmp_path / "shot.png"
    result = _chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1200,1400")
    assert shot.is_file(), result.stderr[-2000:]
    assert [line for line in result.stderr.splitlines() if "CONSOLE" in line] == []
    rgb = np.round(matplotlib.image.imread(shot)[..., :3] * 255)
    assert (rgb < 242).any(axis=-1).mean() > 0.02  # not blank
    # The figure is on screen: the other boot's lane is the only thing on the page painted #fdecea.
    lane_pixels = (np.abs(rgb - (0xFD, 0xEC, 0xEA)).sum(axis=-1) <= 6).mean()
    assert lane_pixels > 0.03, f"the figure's other-boot lane covers {lane_pixels:.2%} of the screenshot"


def test_two_logs_of_two_kernels_are_two_stories_without_a_dump(tmp_path: Path, kf: Run) -> None:
    """The 6.1.192 01-null-member log beside the 6.12.118 guest's 09-oom findings (``dmesg --format json``), no
    dump: the story interleaved them ("First (2.359 s since boot): BUG ... Then (...): OOM killer invoked ...")
    although the report's own table said "inputs disagree on the kernel release" (with a store of this machine it
    dated the log's crash at the store's boot plus 2 s).  The other-kernel separation ran only beside a dump."""
    log = _need("01-null-member").directory / "dmesg.txt"
    other = _need("09-oom").directory.parents[1] / "kernels" / "6.12" / "cases" / "09-oom" / "console.log"
    if not other.is_file():
        pytest.skip(f"{other} is absent (vmcore_fixtures/build.sh)")
    findings = tmp_path / "oom.json"
    assert kf("dmesg", other, "--format", "json", "-o", findings).returncode in (0, 1)
    result = kf("report", "--dmesg", log, "--from", findings, "-o", tmp_path / "r.md", "--json", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    said = f"{other} cannot come from the crashed boot: it names kernel 6.12.118, {log} names 6.1.192"
    assert said in [c["statement"] for c in doc["correlations"] if c["contradiction"]]
    assert doc["incident"]["kernel_release"] == "6.1.192"
    story = doc["narrative"].split(f"The input {other}")[0]
    # (at its wall time: the log's RTC line, "setting system clock to 2026-12-02T20:15:32 UTC" at [0.669291], dates
    # its boot)
    assert story.startswith("First (2026-12-02 20:15:33 UTC ±1.0 s): BUG: unable to handle kernel NULL"), doc[
        "narrative"
    ]
    assert "OOM" not in story and "Out of memory" not in story, story
    assert f"The input {other} cannot come from the crashed boot: it names kernel 6.12.118" in doc["narrative"]
    assert {e["lane"] for e in doc["timeline"] if "kf_memhog" in e["title"]} == {f"input {other}"}
    assert not any("kf_memhog" in str(h) for h in doc["hypotheses"]), doc["hypotheses"]
    why = next(f for f in doc["incident"]["findings"] if f["title"] == said)
    # The saved findings' release is cited by their log's banner (line 1: the report is of its boot; a secondary CPU's
    # [0.000000] line at 119 was taken for a bannerless boot's start, and their release was "read from the log's own
    # lines"); the log read here cites its crash's CPU line, which prints it (ue6 10g: it cited the crash's first
    # line, "BUG: unable to handle ...", which does not).
    assert f"(read from {other} line 1 (boot banner): '[    0.000000] Linux version 6.12.118" in why["summary"]
    assert "read from the log's own lines" not in why["summary"], why["summary"]
    assert (
        f"{log} names 6.1.192 (read from {log} line 250 (kernel) CPU 1: '[    2.359122] CPU: 1 PID: 41 "
        in why["summary"]
    ), why["summary"]
    assert next((e["source"], e["locator"]["start"]) for e in why["evidence"]) == (str(log), 250), why["evidence"]


@pytest.mark.parametrize(
    ("dumped", "other", "wrong"),
    [
        ("01-null-member", "10-use-after-free", "general protection fault in kf_conn_send"),
        ("11-abba-deadlock", "04-hung-task", "INFO: task hung in kf_waiter_update"),
    ],
)
def test_a_log_of_another_boot_of_the_same_kernel_is_set_apart(
    tmp_path: Path, kf: Run, dumped: str, other: str, wrong: str
) -> None:
    """Another guest's console log of the same release (6.1.192) beside a dump: the story told its crash as this one's
    ("First: general protection fault in kf_conn_send. Then: NULL pointer dereference in kf_null_member_read"), with a
    critical finding and a hypothesis whose ``crash> kmem`` address was of the other boot; only a medium "the dump
    and the log disagree" hinted at it.  The dump's own log names its command line: the log's is another."""
    case, log = _need(dumped), _need(other).console_log
    doc = _report_beside(kf, case, log, tmp_path)
    said = f"{log} cannot come from the crashed boot: its boot's command line is not the dump's"
    assert said in [c["statement"] for c in doc["correlations"] if c["contradiction"]], doc["correlations"]
    assert not any("disagree" in c["statement"] for c in doc["correlations"]), doc["correlations"]
    why = next(f for f in doc["incident"]["findings"] if f["title"] == said)
    assert why["severity"] == "low"  # about the inputs given, not harm to the machine
    # What the check compared the log's boot with: the dumped boot's command line, in the dump's own log.
    assert why["baseline"]["name"] == "the dumped boot's command line: a log of that boot prints the same"
    assert "Command line: " in why["baseline"]["value"] and why["baseline"]["source"].startswith(
        f"the dump's own log, {case.vmcore}#log line "
    )
    assert {e["source"] for e in why["evidence"]} == {f"{case.vmcore}#log", str(log)}
    assert all(e["excerpt"].startswith("[    0.000000] Command line: ") or e["excerpt"].startswith("Command line: ")
               for e in why["evidence"]), why["evidence"]  # fmt: skip
    # The story is the dump's; the log is told apart, on its own lane, its findings never ranked with the crash's.
    story = doc["narrative"].split(f"The input {log}")[0]
    assert wrong not in story and f"The input {log} cannot come from the crashed boot: its boot's" in doc["narrative"]
    assert {e["lane"] for e in doc["timeline"] if e["title"] == wrong} == {f"input {log}"}
    assert not any(str(log) in str(h) for h in doc["hypotheses"]), doc["hypotheses"]
    assert not any("kmem" in h["next_command"] for h in doc["hypotheses"]), doc["hypotheses"]
    [apart] = [f for f in doc["incident"]["findings"] if f["title"] == wrong]
    markdown = (tmp_path / "incident.md").read_text()
    ranked, rest = markdown.split("## Findings by severity", 1)[1].split("## Findings of inputs set apart", 1)
    assert wrong not in ranked.split("\n### ")[0] and wrong in rest.split("\n### ")[0]
    # Examined: every input, the dump first, the log with why it was set apart.
    examined = markdown.split("## Examined\n\n", 1)[1].split("\n## ", 1)[0].splitlines()
    assert examined[0].startswith(f"- examined: crash dump {case.vmcore}: kernel 6.1.192"), examined
    assert any(x.startswith(f"- examined: kernel log {log}: ") for x in examined[1:]), examined
    assert any(x.startswith("  - set apart: its boot's command line is not the dump's: ") for x in examined), examined
    assert apart["id"] not in {f["id"] for f in doc["incident"]["findings"] if f["id"] not in doc["set_apart"]}
    _check_evidence(doc, case, tmp_path)


def test_the_digest_and_the_incident_json_keep_set_apart_findings_apart(tmp_path: Path, kf: Run) -> None:
    """01-null-member's dump beside 10-use-after-free's console log: the digest and the merged incident (``-f json``)
    ranked the other guest's "general protection fault in kf_conn_send" second, before the dump's own NULL pointer
    finding, and counted it in "problems" (4, not 3); ``report --from`` of that document keeps it apart."""
    case, log = _need("01-null-member"), _need("10-use-after-free").console_log
    wrong = "general protection fault in kf_conn_send"
    result = kf(
        "report", "--vmcore", case.directory, "--vmlinux", case.vmlinux,
        *(a for m in case.module_debug for a in ("--module-debug", m)), "--dmesg", log,
        "-f", "json", "-o", tmp_path / "incident.json", "--digest", tmp_path / "digest.json",
        "--json", tmp_path / "report.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    why = "its boot's command line is not the dump's: "
    digest = json.loads((tmp_path / "digest.json").read_text())
    assert wrong not in [f["title"] for f in digest["findings"]], digest["findings"]
    [apart] = digest["set_apart"]
    assert apart["title"] == wrong and apart["severity"] == "critical" and apart["why"].startswith(why), apart
    for doc in (
        json.loads((tmp_path / "incident.json").read_text()),
        json.loads((tmp_path / "report.json").read_text())["incident"],
    ):
        titles = [f["title"] for f in doc["findings"]]
        # listed, last: after every finding of the crashed boot, the low contradiction that sets it apart too
        assert titles[-1] == wrong and titles.count(wrong) == 1, titles
        assert doc["findings"][-1]["set_apart"].startswith(why), doc["findings"][-1]
        assert not any("set_apart" in f for f in doc["findings"][:-1]), doc["findings"]
        own = doc["findings"][:-1]
        # the crash and its NULL pointer (the tainting module in the stack is a clue, info, since ue17 #11)
        assert doc["problems"] == sum(f["severity"] in ("medium", "high", "critical") for f in own) == 2, titles
        assert incident_from_dict(doc, "incident.json").findings  # the reader takes the marked document
    # report --from of the merged incident: the finding stays apart, out of the verdict and of --fail-on's judgement.
    again = kf(
        "report", "--from", tmp_path / "incident.json", "--json", tmp_path / "again.json",
        "-o", tmp_path / "again.md", "--digest", tmp_path / "again-digest.json",
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    doc = json.loads((tmp_path / "again.json").read_text())
    assert [f["id"] for f in doc["incident"]["findings"] if f["title"] == wrong] == doc["set_apart"], doc["set_apart"]
    assert wrong not in doc["summary"] and doc["incident"]["findings"][-1]["title"] == wrong
    assert [f["title"] for f in json.loads((tmp_path / "again-digest.json").read_text())["set_apart"]] == [wrong]
    ranked, rest = (
        (tmp_path / "again.md")
        .read_text()
        .split("## Findings by severity", 1)[1]
        .split("## Findings of inputs set apart", 1)
    )
    assert wrong not in ranked.split("\n### ")[0] and wrong in rest.split("\n### ")[0]


def test_a_wrong_file_given_does_not_fail_the_report_at_medium(tmp_path: Path, kf: Run) -> None:
    """The 07-sysrq-c dump (crashed on purpose: low) beside another guest's log, of the same release and of another:
    ``--fail-on medium`` failed because a wrong file was given (the contradiction was medium, the other boot's
    faults counted); the verdict's main problem was the other boot's general protection fault."""
    case = _need("07-sysrq-c")
    logs = [_need("10-use-after-free").console_log]
    other_kernel = case.directory.parents[1] / "kernels" / "6.12" / "cases" / "09-oom" / "console.log"
    logs += [other_kernel] if other_kernel.is_file() else []
    for log in logs:
        result = kf(
            "report", "--vmcore", case.directory, "--vmlinux", case.vmlinux, "--dmesg", log,
            "--fail-on", "medium", "-o", tmp_path / "incident.md", "--json", tmp_path / "incident.json",
        )  # fmt: skip
        assert result.returncode == 0, (log, result.stderr)
        doc = json.loads((tmp_path / "incident.json").read_text())
        said = [f for f in doc["incident"]["findings"] if f["kind"] == "contradiction"]
        assert [f["severity"] for f in said] == ["low"], said
        assert doc["set_apart"] and doc["summary"].startswith("The Linux kernel on the machine was crashed on request")
        assert "No problem at medium severity or above was found" in doc["summary"], doc["summary"]
        examined = (tmp_path / "incident.md").read_text().split("\n\n", 3)[2]  # under the verdict: what was examined
        assert f"- examined: kernel log {log}: " in examined and "\n  - set apart: " in examined, examined
    # Without --fail-on the low contradiction is reported all the same; with --fail-on low it fails.
    assert kf("report", "--vmcore", case.directory, "--vmlinux", case.vmlinux, "--dmesg", logs[0],
              "--fail-on", "low", "-o", tmp_path / "x.md").returncode == 1  # fmt: skip


def test_crash_free_inputs_of_two_kernels_are_two_boots_not_a_crashed_one(tmp_path: Path, kf: Run) -> None:
    """The 6.1 guest's log up to its WARNING (before panic_on_warn) beside the 6.12 guest's up to its OOM kill
    (before panic_on_oom): nothing crashed, yet the story said the other "cannot come from the crashed boot"."""
    warn, oom = _need("03-warn-on").console_log, _need("09-oom").directory.parents[1] / "kernels" / "6.12"
    oom = oom / "cases" / "09-oom" / "console.log"
    if not oom.is_file():
        pytest.skip(f"{oom} is absent (vmcore_fixtures/build.sh)")
    heads = []
    for log in (warn, oom):
        text = log.read_text()
        head = tmp_path / f"{log.parent.name}-{len(heads)}.log"
        head.write_text(text[: text.index("Kernel panic - not syncing")].rsplit("\n", 1)[0] + "\n")
        heads.append(head)
    findings = tmp_path / "oom.json"
    assert kf("dmesg", heads[1], "--format", "json", "-o", findings).returncode in (0, 1)
    result = kf(
        "report", "--dmesg", heads[0], "--from", findings, "-o", tmp_path / "r.md", "--json", tmp_path / "r.json"
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (
        f"The input {heads[1]} cannot come from the boot this report tells: it names kernel 6.12.118"
        in doc["narrative"]
    ), doc["narrative"]
    assert "crashed boot" not in doc["narrative"] and "apart from the crash" not in doc["narrative"], doc["narrative"]
    assert "WARNING in kf_state_stop" in doc["summary"] and "OOM" not in doc["summary"], doc["summary"]
    markdown = (tmp_path / "r.md").read_text()
    assert "crashed boot" not in markdown.split("## Details")[0]


def test_a_log_on_standard_input_beside_a_dump_is_unconfirmed(tmp_path: Path) -> None:
    """``--dmesg -``: standard input is read once, by the log's analysis; the report ran the boot check on a file
    named "<stdin>" and stopped ("cannot read <stdin>: No such file or directory", exit 3)."""
    import subprocess
    import sys

    case, log = _need("01-null-member"), _need("10-use-after-free").console_log
    with log.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "forensics", "report", "--vmcore", str(case.directory), "--vmlinux",
             str(case.vmlinux), "--dmesg", "-", "-o", str(tmp_path / "r.md")],
            stdin=stdin, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "  - boot: unconfirmed: standard input is not read again" in (tmp_path / "r.md").read_text()


#: An RCU stall as the kernel prints it (kernel/rcu/tree_stall.h): a high finding of the log's own boot.
RCU_STALL_LOG = """\
[  100.000000] rcu: INFO: rcu_preempt self-detected stall on CPU
[  100.000010] rcu: \t1-....: (10500 ticks this GP) idle=a3e/1/0x4000000000000000 softirq=1/1 fqs=2
[  100.000020] \t(t=10500 jiffies g=12045 q=10)
[  100.000040] CPU: 1 PID: 42 Comm: kf_spinner Not tainted 6.1.0 #1
[  100.000050] RIP: 0010:kf_spin+0x10/0x20
"""


def test_a_trace_on_its_own_clock_is_not_the_machines_main_problem(tmp_path: Path, kf: Run) -> None:
    """A kernel log's high RCU stall beside a trace's medium RT hog: the verdict named the RT hog (a kind listed
    before the kernel-log kinds) "The Linux kernel on the machine had a problem ... (high)", the worst severity of
    any finding, though the same verdict said the trace was "on its own clock, apart from the others"."""
    log = tmp_path / "rcu.log"
    log.write_text(RCU_STALL_LOG)
    out = ("-o", tmp_path / "r.md", "--json", tmp_path / "r.json", "--html", tmp_path / "r.html")
    assert kf("report", "--dmesg", log, "--trace", TRACE, *out).returncode == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    said = doc["summary"]
    assert said.startswith("The Linux kernel on the machine had a problem: RCU made no progress for seconds (an RCU "
                           "stall: a CPU or the grace-period thread was stuck). The finding: "
                           "INFO: rcu detected stall in "), said  # fmt: skip
    # The stall's hypothesis is cited by its rank, and why the first is not the verdict's: the trace's RT hog.
    assert " (high). Hypothesis 2 of the ranking (confidence 0.50) names it. " in said, said
    assert said.endswith(
        "Hypothesis 1 is passed over: it names a finding of an input told apart (a trace on its own "
        "clock, another boot or host)."
    ), said
    assert "RT hog" not in said, said
    assert (
        f"The trace {TRACE} (gunzipped) has 9 finding(s) on its own clock, apart from the others." in doc["narrative"]
    )
    assert said in (tmp_path / "r.md").read_text() and said in (tmp_path / "r.html").read_text()
    # Alone, the trace is the report's subject: its RT hog is the problem, with its own severity (medium).
    assert kf("report", "--trace", TRACE, "-o", tmp_path / "t.md", "--json", tmp_path / "t.json").returncode == 0
    alone = json.loads((tmp_path / "t.json").read_text())["summary"]
    assert alone.startswith("On the machine, a real-time task, kf_rthog (pid "), alone
    assert "keeping other tasks waiting (medium). Hypothesis 1 of the ranking (confidence 0.85) names it." in alone


def test_a_trace_set_apart_is_judged_as_it_is_alone_not_with_the_logs_kernel(tmp_path: Path, kf: Run) -> None:
    """The project's trace (times ~797 s since boot) beside a 6.12 log whose kernel crashed at 24 s: set apart as
    another boot, it was still judged with that log's release and preemption model (EEVDF slices), and had three
    findings more than alone (review 7, H).  Its findings are now the ones `kforensic trace` gives it."""
    log = Path("vmcore_fixtures/kernels/6.12/cases/14-spin-deadlock/dmesg.txt")
    alone = kf("trace", TRACE, "-f", "json", "-o", tmp_path / "alone.json")
    assert alone.returncode == 0, alone.stderr
    beside = kf("report", "--dmesg", log, "--trace", TRACE, "-f", "json", "-o", tmp_path / "report.json")
    assert beside.returncode == 0, beside.stderr
    trace_doc = json.loads((tmp_path / "alone.json").read_text())["incident"]
    report_doc = json.loads((tmp_path / "report.json").read_text())

    def of_trace(findings: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        return sorted(
            (f["severity"], f["title"], json.dumps(f.get("baseline"), sort_keys=True))
            for f in findings
            if f["kind"] != "contradiction" and all(e["source"].startswith(str(TRACE)) for e in f["evidence"])
        )

    assert any("cannot come from the crashed boot" in f["title"] for f in report_doc["findings"])
    assert of_trace(report_doc["findings"]) == of_trace(trace_doc["findings"])
    assert of_trace(trace_doc["findings"])  # the trace has findings to compare
    # ... and it says why the log's kernel facts were not taken (review 8, 18)
    (examined,) = [e for e in report_doc["examined"] if str(TRACE) in e["what"]]
    assert any(
        x.startswith("the kernel log's release 6.12.118") and "set apart from the boot this report tells" in x
        for x in examined["could_not"]
    ), examined["could_not"]


def test_a_trace_naming_another_kernel_is_not_judged_with_the_logs_kernel(tmp_path: Path, kf: Run) -> None:
    """The project's LTTng kernel session (a Debian 6.1 kernel, named by its metadata) beside the healthy 6.18 log
    (``Dynamic Preempt: none``): with no finding set apart, the trace was judged with the log's release and
    preemption model ("RT wakeup latency on a kernel of preemption model none") and its rerun command carried
    ``--preempt none --kernel-release 6.18.44-fc-v1252`` (ue22 #3).  Its findings are now the ones it has alone."""
    from tests.collectors.ctf_check import extract_session

    kernel = extract_session(tmp_path / "session") / "kernel"
    log = tmp_path / "healthy.log"
    log.write_bytes(gzip.decompress((TRACE.parents[1] / "healthy" / "dmesg.txt.gz").read_bytes()))
    alone = kf("trace", kernel, "-f", "json", "-o", tmp_path / "alone.json")
    assert alone.returncode == 0, alone.stderr
    beside = kf("report", "--dmesg", log, "--trace", kernel, "--json", tmp_path / "r.json", "-o", tmp_path / "r.md")
    assert beside.returncode == 0, beside.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    trace_doc = json.loads((tmp_path / "alone.json").read_text())["incident"]

    def of_trace(findings: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        return sorted(
            (f["severity"], f["title"], json.dumps(f.get("baseline"), sort_keys=True))
            for f in findings
            if all(e["source"].startswith(str(kernel)) for e in f["evidence"])
        )

    assert of_trace(trace_doc["findings"]), "the session has findings to compare"
    assert of_trace(doc["incident"]["findings"]) == of_trace(trace_doc["findings"])
    assert f"kforensic trace {kernel}" in doc["commands"], doc["commands"]
    (examined,) = [e for e in doc["incident"]["examined"] if str(kernel) in e["what"]]
    assert "RT wakeup latency on a kernel of preemption model none" not in json.dumps(examined)
    assert (
        "the kernel log's release 6.18.44-fc-v1252 and preemption model none: not used, as the trace names kernel "
        "6.1.0-57-amd64 (its own metadata), not the log's 6.18.44-fc-v1252" in examined["could_not"]
    ), examined["could_not"]


def test_a_hog_still_running_when_the_recording_stopped_is_at_least_in_every_renderer(tmp_path: Path, kf: Run) -> None:
    """ue21 #2's report: its verdict said "rthog (pid 6326), kept CPU1 from other tasks for 572.208 ms" (its facts
    table "longest run | 572.208 ms") of a run still open when the recording stopped, where the finding's title said
    "ran at least".  The lower bound is carried on the finding's fact (Fact.lower_bound): the verdict, the markdown,
    the HTML and the JSON say it, and reading the JSON back keeps it."""
    from tests.detectors.sched.traces import rt_hog_to_the_end_text

    trace = tmp_path / "rt_silent.txt"
    trace.write_text(rt_hog_to_the_end_text(cpu1_reports=False))
    out = ("-o", tmp_path / "r.md", "--json", tmp_path / "r.json", "--html", tmp_path / "r.html")
    assert kf("report", "--trace", trace, *out).returncode == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    said = "kept CPU1 from other tasks for at least 960.000 ms. The finding: RT hog: rt task (prio 49) ran at least "
    assert said in doc["summary"], doc["summary"]
    (hog,) = [f for f in doc["incident"]["findings"] if f["kind"] == "sched-rt-hog"]
    assert {"name": "longest run", "value": "960.000 ms", "lower_bound": True} in hog["facts"], hog["facts"]
    read = incident_from_dict(doc["incident"], "r.json").findings
    (fact,) = [x for f in read for x in f.facts if x.name == "longest run"]
    assert fact.lower_bound and fact.said == "at least 960.000 ms"
    md = (tmp_path / "r.md").read_text()
    assert said in md and "| longest run | at least 960.000 ms |" in md
    html = (tmp_path / "r.html").read_text()
    assert "<th>longest run</th><td>at least 960.000 ms</td>" in html
    assert "from other tasks for at least 960.000 ms" in html


def test_the_timeline_of_a_finding_cut_by_the_recordings_end_says_at_least(tmp_path: Path, kf: Run) -> None:
    """ue21 #2's report: "First (32800.063 s since boot, for 799.274 ms): RT hog: rthog ... ran at least 572.208 ms
    ... (still running when the recording stopped)", its timeline row "799.274 ms": an interval whose last evidence
    is the recording's end, not the hog's or the wait's, told as one that lasted that long.  The timeline event
    carries its finding's lower bound (TimelineEvent.open_end): the narrative, the table and the JSON say it."""
    from tests.detectors.sched.traces import rt_hog_to_the_end_text

    trace = tmp_path / "rt_silent.txt"
    trace.write_text(rt_hog_to_the_end_text(cpu1_reports=False))
    assert kf("report", "--trace", trace, "-o", tmp_path / "r.md", "--json", tmp_path / "r.json").returncode == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert "First (10.000 s since boot, for at least 960.000 ms): RT hog: rt task" in doc["narrative"]
    assert "Then (10.050 s since boot, for at least 910.000 ms): Wakeup latency: kworker/1:0" in doc["narrative"]
    rows = {e["title"].split(":")[0]: e for e in doc["timeline"]}
    assert rows["RT hog"]["lower_bound"] is True and rows["RT hog"]["duration"] == pytest.approx(0.96)
    md = (tmp_path / "r.md").read_text()
    assert "| 10.000000 s | 10.960000 s | at least 960.000 ms | RT hog: rt task" in md
