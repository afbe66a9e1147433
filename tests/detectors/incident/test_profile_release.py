"""A perf.data of another kernel beside a crashed log: the contradiction says where the perf.data named its kernel.

The release of a perf.data comes from its header (``perf report --header-only``: ``# os release : ...``), not from
a slab-watch store's run record, and the header line is what the contradiction cites (user-eye round 5 #7).  The
recording is made now on this machine (tests/detectors/profile/glibc_recordings.py), beside the 6.12.118 guest's
use-after-free log (vmcore_fixtures): two kernels, unless this machine runs that very release.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from collectors.perf_script import find_perf
from detectors.incident.correlate import other_hosts, other_kernels, release_read_at
from forensics.pipelines.profile import HEADER_LINE
from forensics.pipelines.sources import analyse_dmesg, analyse_profile
from tests.detectors.profile.glibc_recordings import RECORDS, record
from tests.evidence_audit import Inputs, add_perf_data, audit_findings

LOG = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "kernels" / "6.12" / "cases" / "10-use-after-free"


def _header_line(data: Path, text: str) -> int:
    """The number of ``text``'s line in ``perf report --header-only -i DATA``, as perf itself prints it."""
    perf = find_perf()
    assert perf is not None
    header = subprocess.run(
        [perf, "report", "--header-only", "-i", str(data)], capture_output=True, check=True
    ).stdout.decode()
    return header.split("\n").index(text) + 1


@RECORDS
def test_a_perf_data_of_another_kernel_is_cited_by_its_header_line(tmp_path: Path) -> None:
    data = record("clock", "fp", 0.3)
    log = analyse_dmesg((LOG / "dmesg.txt",)).incident
    profile = analyse_profile(data).incident
    if profile.kernel_release == log.kernel_release:
        pytest.skip(f"this machine runs {log.kernel_release}, the log's kernel: no contradiction to make")
    (found,) = other_kernels((log, profile))
    n = _header_line(data, f"# os release : {profile.kernel_release}")
    read_at = found.fact("kernel read from")
    assert read_at == f"{data} line {n} ({HEADER_LINE}): '# os release : {profile.kernel_release}'", read_at
    assert "store" not in found.summary and "slab-watch" not in found.summary, found.summary
    cited = [e for e in found.evidence if e.source == str(data)]
    assert [(e.locator.start, e.locator.name, e.excerpt) for e in cited] == [
        (n, HEADER_LINE, f"# os release : {profile.kernel_release}")
    ]
    inputs = Inputs(tmp_path)
    add_perf_data(inputs, data)
    inputs.texts[str(LOG / "dmesg.txt")] = LOG / "dmesg.txt"
    assert not [p for p in audit_findings([found], inputs) if str(data) in p]


@RECORDS
def test_a_saved_profile_digest_still_says_the_header_named_its_kernel(tmp_path: Path) -> None:
    """``report --from profile.json``: the digest keeps no header line; the release is still the header's."""
    data = record("clock", "fp", 0.3)
    profile = analyse_profile(data).incident
    saved = replace(profile, examined=tuple(replace(x, named_by=()) for x in profile.examined))
    assert isinstance(profile.kernel_release, str)
    said = release_read_at(saved, profile.kernel_release)
    assert said == "the perf.data header ('# os release', as perf report --header-only prints it)", said


@RECORDS
def test_a_perf_data_has_a_lane_of_its_own_on_perfs_clock(tmp_path: Path) -> None:
    """Its findings carry their samples' times (perf's clock): ``report`` gives the profile its lane, titled as a
    profile, with the contradiction of its kernel (user-eye round 5 #12: only "Boot" and the store had one)."""
    data = record("spin", "fp", 0.3)
    out = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "forensics", "report", "--dmesg", str(LOG / "dmesg.txt"), "--profile", str(data),
         "-o", str(tmp_path / "r.md"), "--json", str(out)],
        capture_output=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    (lane,) = [x for x in doc["lanes"] if x["key"].endswith(str(data))]
    assert lane["label"].startswith(f"profile {data}: perf's clock"), lane
    events = [e for e in doc["timeline"] if e["lane"] == lane["key"]]
    perf = find_perf()
    assert perf is not None
    script = subprocess.run([perf, "script", "-i", str(data)], capture_output=True, check=True).stdout.decode()
    lines = script.split("\n")
    assert events and all(e["cite"].startswith(f"{data} sample ") for e in events)
    for e in events:  # the time is the cited sample's, as perf script prints it
        n = int(e["cite"].split("(perf script output line ")[1].rstrip(")"))
        assert f" {e['when'].split()[0]}: " in lines[n - 1], (e, lines[n - 1])
        assert e["cite"].startswith(f"{data} sample at {e['when'].split()[0]}")  # found in the recording by its time
    if lane["contradiction"] is not None:
        assert f"The profile {data} cannot come from the crashed boot" in doc["narrative"]
        assert f"Its {len(events)} finding(s) are shown on its own clock" in doc["narrative"]
        # The contradiction is no event of the crash: not an "instant" at the Oops, cited by the Oops line.
        assert not [e for e in doc["timeline"] if str(data) in e["title"]], doc["timeline"]


@RECORDS
def test_a_perf_data_of_another_host_is_cited_by_its_header_line(tmp_path: Path) -> None:
    """The "comes from host H, not HOME" contradiction cited a sched_switch sample line, which names no host (review
    6, #6): it cites the header's ``# hostname : H`` line, and the log line whose syslog prefix names HOME."""
    data = record("clock", "fp", 0.3)
    profile = analyse_profile(data).incident
    assert isinstance(profile.host, str)
    home = "crashhost" if profile.host != "crashhost" else "otherhost"
    # The guest's log as syslog keeps it: each line prefixed with its time and the host that wrote it.
    log = tmp_path / "syslog.log"
    lines = (LOG / "dmesg.txt").read_text().splitlines()
    log.write_text("".join(f"2026-12-07T14:30:{n % 60:02d}+01:00 {home} kernel: {ln}\n" for n, ln in enumerate(lines)))
    log_incident = analyse_dmesg((log,)).incident
    assert log_incident.host == home, log_incident.host
    (found,) = other_hosts((log_incident, profile))
    n = _header_line(data, f"# hostname : {profile.host}")
    cited = [e for e in found.evidence if e.source == str(data)]
    assert [(e.locator.start, e.locator.name, e.excerpt) for e in cited] == [
        (n, HEADER_LINE, f"# hostname : {profile.host}")
    ]
    (home_line,) = [e for e in found.evidence if e.source == str(log)]
    assert f" {home} kernel: " in home_line.excerpt, home_line
    assert found.baseline is not None and (found.baseline.value, found.baseline.source) == (home, home_line.cite())
    inputs = Inputs(tmp_path)
    add_perf_data(inputs, data)
    inputs.texts[str(log)] = log
    assert not audit_findings([found], inputs)


#: ``perf script --header`` text recorded under another kernel than the 6.12.118 guest's (its header's release line
#: is line 3).
OTHER_KERNEL = """\
# ========
# hostname : kf
# os release : 6.18.44-kf
# cmdline : /usr/bin/perf record -g -F 999 -o kf.data -- gzip -c big
# ========
#
""" + "".join(
    f"gzip 19640 {100 + i / 1000:.6f}:    1001001 cpu-clock:ppp: \n\t            {0x4330 + i % 3:x} [unknown] "
    "(/usr/bin/gzip)\n\n"
    for i in range(50)
)


@pytest.mark.parametrize(
    ("printed", "line", "excerpt"),
    [
        # The report's "CPU: 1 ... 6.12.118 #1" line (its first line, 263, "kernel BUG at ...", does not show it).
        (True, 265, "[    8.959870] CPU: 1 UID: 0 PID: 50 Comm: sh Kdump: loaded Tainted: G    "),
        # A report that does not print its release: its boot's banner, which its finding cites.
        (False, 1, "[    0.000000] Linux version 6.12.118 (kforensic@fixtures)"),
    ],
)  # fmt: skip
def test_the_crashed_logs_release_is_cited_by_the_line_that_prints_it(
    tmp_path: Path, printed: bool, line: int, excerpt: str
) -> None:
    """The log's side of a contradiction of kernels cited the crash's first line, ``kernel BUG at
    kf_buggy/kf_buggy.c:156!``, which does not show 6.12.118 (ue6 10g): it cites the line that does."""
    bug = LOG.parent / "02-bug-on" / "dmesg.txt"
    log = tmp_path / "dmesg.txt"
    text = bug.read_text()
    if not printed:
        # Its release cut from the CPU line; its secondary CPU's "[    0.000000] calibrate_delay_direct() ..." (line
        # 115) stamped past boot, else read as a boot's start without a banner, and the banner as another boot's.
        text = text.replace("O       6.12.118 #1 ", "O       #1 ").replace(
            "[    0.000000] calibrate", "[    0.204400] calibrate"
        )
    log.write_text(text)
    profile_text = tmp_path / "other.perf.txt"
    profile_text.write_text(OTHER_KERNEL)
    incidents = (analyse_dmesg((log,)).incident, analyse_profile(profile_text).incident)
    assert [i.kernel_release for i in incidents] == ["6.12.118", "6.18.44-kf"]
    (found,) = other_kernels(incidents)
    (home,) = [e for e in found.evidence if e.source == str(log)]
    assert (home.locator.start, home.locator.end) == (line, None), home
    assert home.excerpt.startswith(excerpt) and "6.12.118" in home.excerpt, home
    assert found.fact("crashed kernel read from") == f"{home.cite()}: {home.excerpt.strip()!r}"
    (other,) = [e for e in found.evidence if e.source == str(profile_text)]
    assert (other.locator.start, other.excerpt) == (3, "# os release : 6.18.44-kf")
    inputs = Inputs(tmp_path)
    inputs.texts[str(log)] = log
    inputs.texts[str(profile_text)] = profile_text
    assert not audit_findings([found], inputs)


def test_a_log_of_another_kernel_is_said_against_the_release_the_crashed_log_names() -> None:
    """Two crashed logs of two kernels, no dump: the home is the first log, named from data (review ue20 #12: its
    name was cut out of the rendered words "LOG names" with ``removesuffix(' names')``)."""
    from detectors.incident.correlate import _home_of

    first, other = LOG / "dmesg.txt", LOG.parents[3] / "cases" / "10-use-after-free" / "dmesg.txt"
    logs = (analyse_dmesg((first,)).incident, analyse_dmesg((other,)).incident)
    home = _home_of(logs)
    assert home is not None and (home.holder, home.dump, home.names) == (str(first), False, f"{first} names")
    (found,) = other_kernels(logs)
    assert found.baseline is not None and found.baseline.name == (
        f"the kernel release {first} names: an input of its boot names the same (a release changes only with a boot)"
    )
    assert f"it names kernel {logs[1].kernel_release}, {first} names {logs[0].kernel_release}" in found.title
    assert found.fact("crashed kernel of") == f"{first} names"
