"""The rule table: each rule classes its own example (none is shadowed); recorded workloads are classed right."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.perf_script import read_profile
from detectors.profile.findings import class_shares, profile_findings
from detectors.profile.hotspots import compute_hotspots, selected_stacks
from detectors.profile.rules import RULES, classify, classify_chains
from forensics.model import LocatorKind, Severity
from forensics.types.profile import HotspotRule
from tests.detectors.profile.glibc_recordings import RECORDS, record
from tests.helpers import assert_evidence_resolves

DATA = Path(__file__).resolve().parents[2] / "data" / "profile"


@pytest.mark.parametrize("index", range(len(RULES)), ids=[f"{r.name}-{r.where}" for r in RULES])
def test_each_rule_classes_its_example_and_no_earlier_rule_does(index: int) -> None:
    rule = RULES[index]
    frames = rule.example[1:]  # the first name is the command
    assert classify(frames, leaf_kernel=None) is rule


def test_plain_code_is_not_classed() -> None:
    assert classify(("main", "spin_math.constprop.0")) is None
    assert classify(()) is None


def test_kernel_only_leaf_rule_ignores_user_frames_of_the_same_name() -> None:
    assert classify(("main", "_raw_spin_lock"), leaf_kernel=False) is None
    assert classify(("main", "_raw_spin_lock"), leaf_kernel=True) is RULES[1]


def _classes(workload: str) -> dict[str, float]:
    profile = read_profile(str(DATA / f"{workload}.perf.txt.gz"))
    stacks = selected_stacks(profile)
    hot = compute_hotspots(profile, stacks)
    return {c.rule.name: c.share for c in class_shares(stacks, hot.total_period)}


# What each recorded workload does (tests/data/profile/src), and the class it must show.
@pytest.mark.parametrize(
    ("workload", "rule", "at_least"),
    [
        ("mixed", "memcpy", 10.0),  # copy_phase: memcpy of 8 MiB buffers
        ("mixed", "syscall", 8.0),  # syscall_phase: 1-byte writes to /dev/null
        ("contend", "lock", 8.0),  # four threads on one mutex
        ("kernel", "memcpy", 50.0),  # dd: copies into the page cache
        ("interp", "interpreter", 60.0),  # a pure-Python loop (most frames unnamed in the stripped binary)
    ],
)
def test_recorded_workloads_are_classed_right(workload: str, rule: str, at_least: float) -> None:
    assert _classes(workload).get(rule, 0.0) >= at_least


@pytest.mark.parametrize("workload", ["mixed", "contend", "kernel", "interp", "jit"])
def test_findings_cite_the_heaviest_sample_header_at_its_line(workload: str, tmp_path: Path) -> None:
    import gzip

    path = DATA / f"{workload}.perf.txt.gz"
    plain = tmp_path / "plain.txt"
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    profile = read_profile(str(path))
    stacks = selected_stacks(profile)
    hot = compute_hotspots(profile, stacks)
    findings = profile_findings(profile, stacks, hot)
    assert all(e.locator.kind is LocatorKind.LINE for f in findings for e in f.evidence)
    # Lines of the decompressed text, named so (as kforensic dmesg and trace name theirs): `grep -n` of the .gz
    # finds nothing at them, `zcat | sed -n Np` does.
    assert {e.source for f in findings for e in f.evidence} == {f"{path} (gunzipped)"}
    assert_evidence_resolves(findings, {f"{path} (gunzipped)": plain})
    for f in findings:
        assert f.next_steps and f.fact("samples") and f.fact("stack")


def test_findings_of_folded_input_cite_its_lines(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "contend.folded"
    text = gzip.decompress((DATA / "contend.folded.gz").read_bytes())
    path.write_bytes(text + text.splitlines(keepends=True)[0])  # a stack repeated on a later line sums
    profile = read_profile(str(path))
    stacks = selected_stacks(profile)
    findings = profile_findings(profile, stacks, compute_hotspots(profile, stacks))
    assert any(f.fact("class") == "lock" for f in findings)
    assert_evidence_resolves(findings)
    gz = tmp_path / "contend.folded.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    profile = read_profile(str(gz))
    findings = profile_findings(profile, selected_stacks(profile), compute_hotspots(profile, selected_stacks(profile)))
    assert {e.source for f in findings for e in f.evidence} == {f"{gz} (gunzipped)"}
    assert_evidence_resolves(findings, {f"{gz} (gunzipped)": path})


def test_the_syscall_class_does_not_call_the_calls_own_work_entry_overhead() -> None:
    # The project's healthy recording (tests/data/healthy, record.sh): ps, ls and find in system calls. Under 10%
    # of that class is the entry and exit path itself (do_syscall_64 ...); the rest is the calls' own work (path
    # lookups, /proc text, unmapping), which the class's title and meaning must not call entry and exit overhead.
    profile = read_profile(str(DATA.parent / "healthy" / "perf.txt.gz"))
    stacks = selected_stacks(profile)
    (syscall,) = (
        c for c in class_shares(stacks, compute_hotspots(profile, stacks).total_period) if c.rule.name == "syscall"
    )
    entry = sum(p for leaf, p in syscall.symbols if classify((leaf,), leaf_kernel=True) is syscall.rule)
    assert entry < 0.1 * sum(p for _leaf, p in syscall.symbols)
    assert "overhead" not in syscall.rule.title and "kernel work" in syscall.rule.title
    assert "the calls' own work" in syscall.rule.why


def test_chains_classed_at_once_get_the_rule_classify_gives() -> None:
    """classify_chains (a table's chains, masks ORed with numpy) gives each chain classify's rule: the rule
    examples with kernel and user leaves, their leaves alone, their roots, no frames, and every chain of the
    bundled recordings."""
    import numpy as np

    from forensics.types.profile import ProfileFrame, StackTable

    chains: list[tuple[ProfileFrame, ...]] = [()]
    for rule in RULES:
        for kernel in (False, True):
            frames = tuple(ProfileFrame(n, "x", kernel, False, False) for n in rule.example)
            chains += [frames, frames[-1:], frames[:1], frames[:-1]]
    for path in sorted(DATA.glob("*.perf.txt.gz")):
        chains += list({id(s.frames): s.frames for s in read_profile(str(path)).stacks}.values())
    empty = np.zeros(0, np.int64)
    table = StackTable(chains, empty, [], empty, empty, empty)
    got = classify_chains(table.names, np.array([bool(c) and c[-1].kernel for c in chains], bool))
    want = [classify(tuple(f.name for f in c), c[-1].kernel if c else None) for c in chains]
    assert [RULES[i] if i >= 0 else None for i in got.tolist()] == want
    assert sum(w is not None for w in want) > 50


@RECORDS
@pytest.mark.parametrize("mode", ["fp", "dwarf"])
def test_user_spinlock_is_found_whichever_way_the_call_graph_was_recorded(mode: str) -> None:
    """Two threads on a pthread_spin_lock: the waiter spins on CPU.  perf names the lock
    ``pthread_spin_lock@@GLIBC_2.34`` with frame pointers and ``__pthread_spin_lock`` (inlined) under
    ``--call-graph dwarf``, the mutex ``___pthread_mutex_lock``, ``lll_mutex_lock_optimized``: either way the
    spinning is a finding at medium or above that says the share is the wait itself, on CPU."""
    profile = read_profile(str(record("spin", mode)))
    stacks = selected_stacks(profile)
    hot = compute_hotspots(profile, stacks)
    findings = {f.fact("class"): f for f in profile_findings(profile, stacks, hot) if f.fact("class")}
    spin = findings["user-spin"]
    assert spin.severity >= Severity.MEDIUM
    assert "this share is the waiting itself, on CPU" in spin.summary
    assert "sched_switch" not in spin.next_steps[0] and "perf c2c" in spin.next_steps[0]


DD_URANDOM = ("dd", "if=/dev/urandom", "of=/dev/null", "bs=1M", "count=100", "status=none")


def test_cpu_work_inside_a_system_call_is_named_as_the_work_not_syscall_overhead(tmp_path: Path) -> None:
    """dd from /dev/urandom in 1 MiB reads: the CPU is the kernel's random generator (ChaCha) working for read(),
    not the entry and exit of 100 calls.  The class says so, names the function and the call, and does not advise
    batching the calls."""
    import subprocess

    from collectors.perf_script import find_perf

    perf = find_perf()
    if perf is None:
        pytest.skip("perf is not installed")
    data = tmp_path / "perf.data"
    rec = subprocess.run(
        [perf, "record", "-q", "-g", "-F", "999", "-o", str(data), "--", *DD_URANDOM],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if rec.returncode != 0:
        pytest.skip(f"perf record is not allowed here: {rec.stderr.decode(errors='replace')[:200]}")
    profile = read_profile(str(data))
    stacks = selected_stacks(profile)
    hot = compute_hotspots(profile, stacks)
    findings = {f.fact("class"): f for f in profile_findings(profile, stacks, hot) if f.fact("class")}
    assert "syscall" not in findings
    work = findings["syscall-work"]
    top = hot.self_symbols[0]
    assert f": most in {top.key} (" in work.title and work.title.endswith("under read()")
    assert "batch" not in work.next_steps[0] and "not the cost of entering and leaving the kernel" in work.summary


def test_where_the_cpu_went_is_info_and_only_waste_is_a_problem() -> None:
    """A class of time (interpreter loop, copies, syscalls, ...) hurt nobody by itself: info, context
    (docs/severity.md).  It was low, "worth a look: beyond what is promised", though nothing promised was exceeded:
    the healthy machine's profile (tests/data/healthy/perf.txt.gz) said "1 low finding to watch: 12.3% of CPU in
    interpreter loop"."""
    for rule in RULES:
        assert rule.severity in (Severity.INFO, Severity.MEDIUM), rule.name
        assert rule.work is None or rule.work.severity is Severity.INFO, rule.name
    profile = read_profile(str(DATA.parents[0] / "healthy" / "perf.txt.gz"))
    stacks = selected_stacks(profile)
    found = [f for f in profile_findings(profile, stacks, compute_hotspots(profile, stacks)) if f.fact("class")]
    assert [(f.title, f.severity) for f in found] == [("12.3% of CPU in interpreter loop", Severity.INFO)]
    assert found[0].baseline is not None and "not harm by itself" in found[0].baseline.name


def test_interrupt_work_is_not_charged_as_the_interrupted_programs_own() -> None:
    """The contend workload (four threads on one mutex, no I/O) was interrupted by other processes' block I/O
    completions (blk_done_softirq under common_interrupt): they were its "filesystem and journal" class, with advice
    to fsync less often (review 11, 12b); they are device interrupts."""
    classes = _classes("contend")
    assert "filesystem" not in classes, classes
    assert classes.get("irq-device", 0.0) > 0.0, classes
    assert classes.get("lock", 0.0) >= 8.0  # (its own class, as before)


def _class_samples(workload: str) -> dict[str, int]:
    profile = read_profile(str(DATA / f"{workload}.perf.txt.gz"))
    stacks = selected_stacks(profile)
    hot = compute_hotspots(profile, stacks)
    return {c.rule.name: c.samples for c in class_shares(stacks, hot.total_period)}


def _entries(workload: str) -> dict[str, int]:
    """How many samples of the recording have each interrupt entry frame (counted from the text, not the rules)."""
    import gzip
    import re

    with gzip.open(DATA / f"{workload}.perf.txt.gz", "rt") as f:
        text = f.read()
    out: dict[str, int] = {}
    for block in text.split("\n\n"):
        m = re.search(r"\basm_(sysvec_\w+|common_interrupt)\+", block)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out


def test_reschedule_ipis_are_scheduler_ipis_not_someone_elses_interrupts() -> None:
    """contend's reschedule IPIs (its threads' own mutex wake-ups, sampled in irqentry_exit_to_user_mode) were
    "interrupt handling ... not the sampled program's own work ... IRQ affinity" (review 13, finding 1): they are
    the IPI class, whose text says the cause is often the program's own, and whose advice is not IRQ affinity;
    the timer tick and the device interrupts have their own classes."""
    entries = _entries("contend")
    samples = _class_samples("contend")
    assert entries["sysvec_reschedule_ipi"] > 10, entries  # the recording holds them (a test that can fail)
    assert samples.get("irq-ipi") == entries["sysvec_reschedule_ipi"] + entries.get("sysvec_call_function", 0)
    assert samples.get("irq-timer") == entries.get("sysvec_apic_timer_interrupt"), (samples, entries)
    # (the third common_interrupt stopped futex_wake: the futex class's kernel work, an earlier rule, as before)
    assert samples.get("irq-device") == entries["common_interrupt"] - 1, (samples, entries)
    assert "interrupt" not in samples
    for rule in RULES:
        assert "not the sampled program's own" not in rule.why, rule.name
        if rule.name != "irq-device":
            assert "affinity" not in rule.next_step, rule.name
    ipi = next(r for r in RULES if r.name == "irq-ipi")
    assert "program's own" in ipi.why and "perf sched" in ipi.next_step


def test_block_completions_interrupting_dds_writes_stay_filesystem() -> None:
    """dd's own buffered writes' completions (blk_done_softirq under common_interrupt, which interrupted
    generic_perform_write) were moved out of "filesystem and journal" (13.9% -> 11.5%, review 13 finding 1):
    a sample that interrupted filesystem code stays filesystem, as before d30f43c5 (63 samples)."""
    entries = _entries("kernel")
    samples = _class_samples("kernel")
    assert entries.get("common_interrupt", 0) >= 5, entries
    assert samples.get("filesystem") == 63, samples
    assert not {"irq-device", "irq-timer", "irq-ipi"} & samples.keys(), samples
    # The same completion under code that is not filesystem or network is a device interrupt.
    completion = ("asm_common_interrupt", "common_interrupt", "__irq_exit_rcu", "handle_softirqs", "blk_done_softirq")
    assert classify(("main", "parse", *completion)) is _rule("irq-device")
    fs = _rule("filesystem")
    assert classify(("dd", "ksys_write", "vfs_write", "generic_perform_write", *completion)) is fs
    tick = ("asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt", "hrtimer_interrupt")
    assert classify(("main", "parse", *tick)) is _rule("irq-timer")


def _rule(name: str) -> HotspotRule:
    return next(r for r in RULES if r.name == name)


_TICK = ("asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt", "hrtimer_interrupt", "__hrtimer_run_queues")
_DD_WRITE = ("dd", "ksys_write", "vfs_write", "ext4_buffered_write_iter", "generic_perform_write")
_SEND = ("nginx", "__sys_sendto", "tcp_sendmsg", "tcp_push")


@pytest.mark.parametrize("interrupted", [_DD_WRITE, _SEND], ids=["ext4-write", "tcp-send"])
def test_a_tick_or_ipi_that_interrupted_io_code_is_the_ticks_not_the_ios(interrupted: tuple[str, ...]) -> None:
    """A timer tick that interrupted filesystem or network code was counted as that code's work ("filesystem and
    journal ... fsync less often"): the sample is in the tick handler (scheduler accounting, RCU, timers), not the
    I/O's completion (ue14 finding 7).  Only a device interrupt's completion stays with the interrupted code."""
    assert classify((*interrupted, *_TICK, "tick_sched_timer", "update_process_times")) is _rule("irq-timer")
    ipi = ("asm_sysvec_reschedule_ipi", "sysvec_reschedule_ipi", "irqentry_exit", "schedule")
    assert classify((*interrupted, *ipi)) is _rule("irq-ipi")
    shootdown = ("asm_sysvec_call_function", "sysvec_call_function", "flush_tlb_func")
    assert classify((*interrupted, *shootdown)) is _rule("irq-ipi")
    # Its own I/O's completion at a device interrupt's exit stays its own (dd's 63 samples of the recording).
    fs = interrupted is _DD_WRITE
    softirq = "blk_done_softirq" if fs else "net_rx_action"
    completion = ("asm_common_interrupt", "common_interrupt", "__irq_exit_rcu", "handle_softirqs", softirq)
    assert classify((*interrupted, *completion)) is _rule("filesystem" if fs else "network")


_IPI = ("asm_sysvec_reschedule_ipi", "sysvec_reschedule_ipi", "irqentry_exit", "schedule")
_DEVICE = ("asm_common_interrupt", "common_interrupt", "handle_irq_event", "nvme_irq")


@pytest.mark.parametrize(
    ("outer", "inner", "name"),
    [(_TICK, _IPI, "irq-ipi"), (_IPI, _TICK, "irq-timer"), (_TICK, _DEVICE, "irq-device")],
    ids=["ipi-in-tick", "tick-in-ipi", "device-in-tick"],
)
def test_an_interrupt_taken_inside_another_is_the_innermost_ones(
    outer: tuple[str, ...], inner: tuple[str, ...], name: str
) -> None:
    """A reschedule IPI sampled inside the tick's handler was the tick's ("irq-timer"), whichever ran: the first
    interrupt rule of the table that matched any frame won (seen on a recording of the contend workload, the
    recorded-mutex test below failed once).  The CPU was running the innermost interrupt: its class is the
    sample's, in classify and in classify_chains alike."""
    import numpy as np

    from forensics.types.profile import ProfileFrame, StackTable

    names = ("main", "parse", *outer, "irq_exit_rcu", *inner)
    assert classify(names, leaf_kernel=True) is _rule(name)
    chain = tuple(ProfileFrame(n, "x", i > 1, False, False) for i, n in enumerate(names))
    empty = np.zeros(0, np.int64)
    table = StackTable([chain], empty, [], empty, empty, empty)
    assert RULES[int(classify_chains(table.names, np.array([True]))[0])] is _rule(name)


@pytest.mark.parametrize(
    ("vector", "name"),
    [
        (
            ("asm_sysvec_irq_work", "sysvec_irq_work", "__sysvec_irq_work", "irq_work_run", "perf_pending_irq"),
            "irq-work",
        ),
        (
            ("asm_sysvec_kvm_asyncpf_interrupt", "sysvec_kvm_asyncpf_interrupt", "kvm_async_pf_task_wake"),
            "irq-hypervisor",
        ),
        (("asm_sysvec_hyperv_callback", "sysvec_hyperv_callback", "vmbus_isr"), "irq-hypervisor"),
        (("asm_sysvec_hyperv_stimer0", "sysvec_hyperv_stimer0", "hv_stimer0_isr"), "irq-timer"),
        (("asm_sysvec_thermal", "sysvec_thermal", "intel_thermal_interrupt"), "irq-other"),
        (("asm_sysvec_threshold", "sysvec_threshold", "amd_threshold_interrupt"), "irq-other"),
        (("asm_sysvec_error_interrupt", "sysvec_error_interrupt"), "irq-other"),
        (("asm_common_interrupt", "common_interrupt", "handle_irq_event", "nvme_irq"), "irq-device"),
    ],
)
def test_system_vectors_are_named_for_what_they_are_not_device_interrupts(vector: tuple[str, ...], name: str) -> None:
    """The catch-all sysvec_ pattern put irq_work (perf's own wake-ups), KVM async page faults and Hyper-V's timer
    under "device interrupts" (ue14 finding 7): each is its own class, and the guest's Hyper-V tick is the tick;
    none of them stays with the filesystem code it interrupted, only a device interrupt does."""
    assert classify(("main", "parse", *vector)) is _rule(name)
    expected = "filesystem" if name == "irq-device" else name
    assert classify((*_DD_WRITE, *vector)) is _rule(expected)
    assert "device" not in _rule(name).title or name == "irq-device"


def test_a_recorded_mutex_contention_has_its_reschedule_ipis_in_the_ipi_class(tmp_path: Path) -> None:
    """A recording made now of the contend workload (tests/data/profile/src/contend.c, perf record -g): each sample
    taken in a reschedule IPI is the IPI class (or the futex class, whose kernel work it interrupted), never a
    device interrupt or "not the program's own work" (review 13, finding 1)."""
    import shutil
    import subprocess

    from collectors.perf_script import find_perf
    from forensics.types.profile import frame_names

    perf, cc = find_perf(), shutil.which("gcc") or shutil.which("cc")
    if perf is None or cc is None:
        pytest.skip("perf or a C compiler is not installed")
    binary, data = tmp_path / "contend", tmp_path / "contend.data"
    src = DATA / "src" / "contend.c"
    subprocess.run([cc, "-O2", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", str(binary), str(src)], check=True)
    rec = subprocess.run(
        [perf, "record", "-q", "-g", "-F", "999", "-o", str(data), "--", str(binary), "1"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if rec.returncode != 0 or not data.exists():
        pytest.skip(f"perf record is not allowed here: {rec.stderr.decode(errors='replace')[:200]}")
    chains = [frame_names(s.frames) for s in selected_stacks(read_profile(str(data)))]
    ipis = [c for c in chains if "asm_sysvec_reschedule_ipi" in c]
    if not ipis:
        pytest.skip("no reschedule IPI was sampled in this recording")
    got = {getattr(classify(c), "name", None) for c in ipis}
    assert got <= {"irq-ipi", "lock"}, got
