"""Hotspot shares against ``perf report --stdio --no-children`` of the same recordings (stored beside them)."""

from __future__ import annotations

import gzip
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from collectors.perf_script import find_perf, read_profile
from detectors.profile.diff import diff_hotspots
from detectors.profile.hotspots import NO_FRAMES_DSO, compute_hotspots, selected_stacks
from forensics.types.profile import ProfileStack, Thread
from tests.detectors.profile.glibc_recordings import RECORDS, perf_report_dsos, record

DATA = Path(__file__).resolve().parents[2] / "data" / "profile"
_ROW = re.compile(r"^\s+(\d+\.\d+)%\s+\[([.k])\]\s+(.+?)\s*$")


def perf_report_shares(text: str) -> dict[str, float]:
    """Symbol -> self share of a `perf report --stdio --no-children --sort sym` listing."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if m:
            # The same tidying as the folded names: quotes dropped.
            out[m.group(3).replace('"', "")] = out.get(m.group(3), 0.0) + float(m.group(1))
    return out


@pytest.mark.parametrize("workload", ["mixed", "contend", "kernel", "interp", "jit"])
def test_top_hotspots_agree_with_perf_report_within_one_point(workload: str) -> None:
    report = perf_report_shares(gzip.decompress((DATA / f"{workload}.report.txt.gz").read_bytes()).decode())
    profile = read_profile(str(DATA / f"{workload}.perf.txt.gz"))
    hot = compute_hotspots(profile, selected_stacks(profile))
    mine = {r.key: r.share for r in hot.self_symbols}
    top = [s for s in sorted(report, key=lambda k: -report[k]) if not s.startswith("0x")][:5]
    assert top
    for sym in top:
        assert abs(mine.get(sym, 0.0) - report[sym]) <= 1.0, (sym, mine.get(sym), report[sym])


def test_kernel_user_and_thread_tables_add_up() -> None:
    profile = read_profile(str(DATA / "contend.perf.txt.gz"))
    hot = compute_hotspots(profile, selected_stacks(profile))
    assert abs(hot.kernel.share + hot.user.share - 100.0) < 1e-6
    assert abs(sum(r.share for r in hot.threads) - 100.0) < 1e-6
    assert len(hot.threads) >= 4  # four workers (and the main thread)
    assert hot.paths[hot.self_symbols[0].key][0].frames[-1] == "critical"


def test_filters_kernel_only_and_thread() -> None:
    profile = read_profile(str(DATA / "mixed.perf.txt.gz"))
    kernel = selected_stacks(profile, space="kernel")
    assert kernel and all(f.kernel for s in kernel for f in s.frames)
    user = selected_stacks(profile, space="user")
    assert user and not any(f.kernel for s in user for f in s.frames)
    tid = profile.stacks[0].thread.tid
    assert selected_stacks(profile, tid=tid) and not selected_stacks(profile, tid=-1)
    assert not selected_stacks(profile, comm="nosuchcomm")


def test_diff_puts_the_largest_change_first() -> None:
    a = read_profile(str(DATA / "mixed.perf.txt.gz"))
    b = read_profile(str(DATA / "kernel.perf.txt.gz"))
    deltas = diff_hotspots(compute_hotspots(a, selected_stacks(a)), compute_hotspots(b, selected_stacks(b)))
    assert deltas[0].symbol in ("copy_folio_from_iter_atomic", "spin_math.constprop.0")
    assert abs(deltas[0].delta) >= abs(deltas[-1].delta)


@pytest.mark.parametrize("workload", ["mixed", "contend", "kernel", "interp", "jit", "events", "flat", "lost"])
@pytest.mark.parametrize("space", [None, "kernel", "user"])
def test_numpy_tables_equal_the_stack_by_stack_ones(
    workload: str, space: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large profiles are summed with numpy: the same hotspots, rows, order and call paths as stack by stack."""
    from detectors.profile import hotspots

    profile = read_profile(str(DATA / f"{workload}.perf.txt.gz"))
    stacks = selected_stacks(profile, space=space)
    # Copies in other DSOs (chains of their own with the same names: call paths merge across chains), some of
    # them first met earlier than the stacks they copy.
    stacks += [
        replace(
            s,
            frames=tuple(f._replace(dso=f.dso + "x") for f in s.frames),
            first_line=s.first_line + (-(10**6) if i % 3 else 10**6),
            first_header=f"copy {i}",
        )
        for i, s in enumerate(stacks)
    ]
    # And copies in other threads (the same chains: several stacks per chain), some first met earlier.
    stacks += [
        replace(s, thread=Thread(f"t{i % 5}", 1, i), first_line=s.first_line + (-(10**7) + i if i % 2 else 10**7))
        for i, s in enumerate(stacks)
    ]
    monkeypatch.setattr(hotspots, "VECTOR_FROM", 1 << 60)
    by_stack = compute_hotspots(profile, stacks)
    monkeypatch.setattr(hotspots, "VECTOR_FROM", 0)
    assert compute_hotspots(profile, stacks) == by_stack
    assert by_stack.self_symbols and by_stack.total_symbols


@pytest.mark.skipif(find_perf() is None, reason="perf is not installed")
def test_shares_agree_with_perf_report_on_a_recording_made_now(tmp_path: Path) -> None:
    perf = find_perf()
    assert perf is not None
    data = tmp_path / "perf.data"
    rec = subprocess.run(
        [
            perf,
            "record",
            "-q",
            "-g",
            "-F",
            "999",
            "-o",
            str(data),
            "--",
            "dd",
            "if=/dev/zero",
            f"of={tmp_path / 'f'}",
            "bs=1M",
            "count=60",
            "status=none",
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if rec.returncode != 0:
        pytest.skip("perf record is not allowed here")
    report = subprocess.run(
        [perf, "report", "-i", str(data), "--stdio", "--no-children", "--sort", "sym"],
        capture_output=True,
        timeout=120,
        check=True,
    )
    shares = perf_report_shares(report.stdout.decode(errors="replace"))
    profile = read_profile(str(data))
    hot = compute_hotspots(profile, selected_stacks(profile))
    mine = {r.key: r.share for r in hot.self_symbols}
    top = [s for s in sorted(shares, key=lambda k: -shares[k]) if not s.startswith("0x")][:3]
    for sym in top:
        assert abs(mine.get(sym, 0.0) - shares[sym]) <= 1.0, (sym, mine.get(sym), shares[sym])


@pytest.mark.parametrize("workload", ["mixed", "contend", "kernel", "interp", "jit", "events", "flat", "lost"])
@pytest.mark.parametrize("space", [None, "kernel", "user"])
def test_classes_unknown_frames_and_command_sums_by_number_equal_the_stack_by_stack_ones(
    workload: str, space: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large profiles are summed over their stacks numbered by chain: the same classes (order, heaviest stack),
    unknown-frame finding and per-command sums as stack by stack."""
    from detectors.profile import findings
    from forensics.types.profile import periods_by_command, stack_table

    profile = read_profile(str(DATA / f"{workload}.perf.txt.gz"))
    stacks = selected_stacks(profile, space=space)
    # Every stack's thread made its own command: the sums per (command, chain) have many keys.
    stacks += [replace(s, thread=Thread(f"c{i % 7}", 1, i)) for i, s in enumerate(stacks)]
    total = compute_hotspots(profile, stacks).total_period
    monkeypatch.setattr(findings, "VECTOR_FROM", 1 << 60)
    by_stack = (findings.class_shares(stacks, total), findings.unknown_frames(profile, stacks))
    monkeypatch.setattr(findings, "VECTOR_FROM", 0)
    table = stack_table(stacks)
    assert (findings.class_shares(stacks, total, table), findings.unknown_frames(profile, stacks, table)) == by_stack
    assert findings.class_shares(stacks, total) == by_stack[0]  # the table made when not given
    merged = periods_by_command(stacks)
    assert periods_by_command(stacks, table) == merged and list(periods_by_command(stacks, table)) == list(merged)
    assert by_stack[0] or space is not None or workload in ("flat", "jit")  # the classes are compared, not empty


def test_unknown_frames_by_number_find_the_first_worst_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most frames [unknown]: the finding cites the first stack of the largest unknown weight, either way."""
    from detectors.profile import findings
    from forensics.types.profile import ProfileFrame

    unknown = ProfileFrame("[unknown]", "[unknown]", False, False, False)
    named = ProfileFrame("main", "/bin/app", False, False, False)
    chains = [(named, unknown, unknown), (unknown,), (named,)]
    stacks = [
        ProfileStack(Thread("app", 1, 1), "cycles", chains[i % 3], 1, 10 * (i % 5), i, f"app {i}") for i in range(30)
    ]
    profile = read_profile(str(DATA / "mixed.perf.txt.gz"))
    monkeypatch.setattr(findings, "VECTOR_FROM", 1 << 60)
    by_stack = findings.unknown_frames(profile, stacks)
    monkeypatch.setattr(findings, "VECTOR_FROM", 0)
    assert by_stack is not None and findings.unknown_frames(profile, stacks) == by_stack
    assert by_stack.evidence[0].excerpt == "app 9"  # two unknown frames, period 40: the first such stack


@pytest.mark.parametrize("vector_from", [1 << 60, 0], ids=["python", "numpy"])
def test_samples_without_a_call_chain_have_a_row_in_the_dso_table(
    monkeypatch: pytest.MonkeyPatch, vector_from: int
) -> None:
    """ue15 #13: 51 of 7,980 samples perf script printed without frames were left out of the per-DSO table (cc1
    25.80% beside perf report's 26.36%, the header alone saying "no call chain 0.64%"): they are a row of their
    own, so the table adds up to every sample, both ways the tables are made."""
    from detectors.profile import hotspots
    from forensics.types.profile import Profile, ProfileFrame

    cc1 = ProfileFrame("walk_stmt", "/usr/lib/gcc/x86_64-linux-gnu/12/cc1", False, False, False)
    stacks = [
        ProfileStack(Thread("cc1", 7, 7), "cpu-clock", (cc1,) if i % 4 else (), 1, 1, i, f"cc1 {i}") for i in range(40)
    ]
    profile = Profile("cc1.data", "perf.data", stacks, {"cpu-clock": 40}, "cpu-clock", None, None, 40)
    monkeypatch.setattr(hotspots, "VECTOR_FROM", vector_from)
    hot = compute_hotspots(profile, stacks)
    assert {r.key: r.samples for r in hot.dsos} == {cc1.dso: 30, NO_FRAMES_DSO: 10}
    assert hot.no_frames is not None and hot.no_frames.samples == 10
    assert [r.share for r in hot.dsos] == [75.0, 25.0]


@pytest.mark.parametrize("vector_from", [1 << 60, 0], ids=["python", "numpy"])
def test_an_inlined_frame_moves_only_its_own_time_to_its_dso(monkeypatch: pytest.MonkeyPatch, vector_from: int) -> None:
    """glibc inlines a ``futex_wait`` of its own (perf script prints it "(inlined)", no DSO) and the kernel has a
    ``futex_wait`` too.  Only the inlined frames' time moves to libc: the kernel's stays in [kernel.kallsyms],
    whichever of the two the first stack holds (the CI's recording counted one or the other twice)."""
    from detectors.profile import hotspots
    from forensics.types.profile import INLINED_DSO, Profile, ProfileFrame

    libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
    lock = ProfileFrame("__GI___lll_lock_wait", libc, False, False, False)
    inlined = ProfileFrame("futex_wait", INLINED_DSO, False, False, True)
    kernel = ProfileFrame("futex_wait", "[kernel.kallsyms]", True, False, False)
    spin = ProfileFrame("pthread_spin_lock", libc, False, False, False)
    for chains in ([(lock, inlined), (lock, kernel), (spin,)], [(lock, kernel), (lock, inlined), (spin,)]):
        stacks = [
            ProfileStack(Thread("app", 1, 1), "cycles", chains[i % 3], 1, 1 + i % 3, i, f"app {i}") for i in range(30)
        ]
        profile = Profile("spin.data", "perf.data", stacks, {"cycles": 30}, "cycles", None, None, 30)
        profile.inlined_dsos = {"futex_wait": libc}
        monkeypatch.setattr(hotspots, "VECTOR_FROM", vector_from)
        hot = compute_hotspots(profile, stacks)
        dsos = {r.key: r.period for r in hot.dsos}
        period = [sum(1 + i % 3 for i in range(30) if chains[i % 3] == c) for c in chains]
        at = {c[-1].dso: p for c, p in zip(chains, period, strict=True)}
        assert dsos == {libc: at[INLINED_DSO] + at[libc], "[kernel.kallsyms]": at["[kernel.kallsyms]"]}, chains
        assert sum(r.period for r in hot.dsos) == hot.total_period


def test_an_unlinked_binary_is_the_dso_perf_report_names() -> None:
    """perf prints an unlinked file's DSO as ``(/path (deleted))``: the per-DSO table showed ``deleted)``.

    Found in a ``perf record -a -g`` of the project's machine (a ``/memfd:sealed-... (deleted)`` JIT
    region); the stored recording is the mixed workload with its binary removed while it ran.
    """
    report = gzip.decompress((DATA / "deleted.report.txt.gz").read_bytes()).decode()
    theirs = {m[2]: float(m[1]) for m in re.finditer(r"^\s+(\d+\.\d+)%\s+(\S.*?)\s*$", report, re.M)}
    assert "mixed (deleted)" in theirs
    profile = read_profile(str(DATA / "deleted.perf.txt.gz"))
    mine = {r.key.rsplit("/", 1)[-1]: r.share for r in compute_hotspots(profile, selected_stacks(profile)).dsos}
    assert mine.keys() == theirs.keys()
    for dso, share in theirs.items():
        assert abs(mine[dso] - share) <= 1.0, (dso, mine[dso], share)


def test_rows_are_the_largest_period_first_then_by_key() -> None:
    """_rows sorts by key, then stably by period (C-level sorts): the order of (-period, key), with ties and
    the meta of each key, and the same Share objects as Share(...) makes."""
    from detectors.profile.hotspots import _rows
    from forensics.types.profile import Share

    table = {k: [p, s] for k, p, s in [("b", 5, 1), ("a", 5, 2), ("c", 9, 3), ("é", 5, 4), ("A", 0, 0), ("", 9, 1)]}
    meta = {"c": (True, "[kernel.kallsyms]"), "a": (False, "/bin/a")}
    want = tuple(
        Share(k, v[0], v[1], 100.0 * v[0] / 33, *meta.get(k, (False, "")))
        for k, v in sorted(table.items(), key=lambda kv: (-kv[1][0], kv[0]))
    )
    assert _rows(table, 33, meta) == want
    assert [r.key for r in want] == ["", "c", "a", "b", "é", "A"]
    assert _rows(table, 0)[0] == Share("", 9, 1, 0.0)
    assert _rows({}, 10) == ()


def test_unknown_frames_are_left_out_of_the_total_table_and_said_in_a_note() -> None:
    """[unknown] (a caller perf could not name) is no hotspot: out of the with-callees ranking, counted in a note
    whose samples are the unknown-frames finding's."""
    from forensics.pipelines.profile import analyse_profile

    result = analyse_profile(str(DATA / "interp.perf.txt.gz"))  # a Python without frame pointers
    hot = result.hot
    assert "[unknown]" not in [r.key for r in hot.total_symbols]
    assert hot.unresolved is not None and hot.unresolved.share > 50
    through = [s for s in result.stacks if any(f.name == "[unknown]" for f in s.frames)]
    assert hot.unresolved.samples == sum(s.samples for s in through)
    assert hot.unresolved.period == sum(s.period for s in through)
    [finding] = [f for f in result.incident.findings if "[unknown]" in f.title]
    [samples] = [fact.value for fact in finding.facts if fact.name == "samples"]
    assert samples == str(hot.unresolved.samples)
    note = f"{hot.unresolved.samples:,} samples ({hot.unresolved.share:.2f}% of the period) passed through [unknown]"
    assert any(n.startswith(note) for n in result.profile.notes)
    clean = analyse_profile(str(DATA / "contend.perf.txt.gz"))  # no [unknown] frame: no note
    assert clean.hot.unresolved is None and not any("[unknown]" in n for n in clean.profile.notes)


def test_the_idle_tasks_of_every_cpu_are_labelled_so(tmp_path: Path) -> None:
    """perf names every CPU's idle task ``swapper`` with pid 0: the thread table said "swapper/0", which reads as CPU
    0's idle task (the kernel's name for it), for the idle time of both CPUs."""
    from detectors.profile.hotspots import IDLE_LABEL

    sample = (
        "{comm} {tid:>6} [{cpu:03d}] {t:.6f}:     250000 cpu-clock:ppp: \n"
        "\tffffffff81000000 {leaf}+0x1 ([kernel.kallsyms])\n\n"
    )
    text = "".join(
        sample.format(comm=comm, tid=tid, cpu=cpu, t=100 + i / 1000, leaf=leaf)
        for i, (comm, tid, cpu, leaf) in enumerate(
            [("swapper", 0, 0, "default_idle"), ("swapper", 0, 1, "default_idle"), ("worker", 42, 1, "do_work")] * 3
        )
    )
    script = tmp_path / "idle.perf.txt"
    script.write_text(text)
    profile = read_profile(str(script))
    hot = compute_hotspots(profile, selected_stacks(profile))
    assert {r.key: round(r.share, 1) for r in hot.threads} == {IDLE_LABEL: 66.7, "worker/42": 33.3}
    assert "every CPU" in IDLE_LABEL


def _perf_split(perf: str, data: Path) -> float:
    """perf's own kernel share of a recording (the sum of `perf report -F overhead_sys` over its DSOs)."""
    report = subprocess.run(
        [perf, "report", "-i", str(data), "--stdio", "--no-children", "-g", "none", "-F", "overhead_sys,dso"],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return sum(float(m.group(1)) for m in re.finditer(r"^\s+(\d+\.\d+)%\s", report.stdout.decode(), re.M))


@RECORDS
def test_vdso_is_user_code_as_perf_counts_it(tmp_path: Path) -> None:
    """A clock_gettime loop spends its time in the vDSO: user-mode code (no kernel entry).  The kernel/user split,
    the space of each hotspot and --kernel-only follow perf's own split (`perf report -F overhead_sys`)."""
    data = record("clock", "fp", 0.5)
    perf = find_perf()
    assert perf is not None
    profile = read_profile(str(data))
    hot = compute_hotspots(profile, selected_stacks(profile))
    vdso = [r for r in hot.self_symbols if r.dso == "[vdso]"]
    assert vdso and sum(r.share for r in vdso) > 20.0  # the loop is recorded in the vDSO
    assert not any(r.kernel for r in vdso)
    assert abs(hot.kernel.share - _perf_split(perf, data)) < 0.1, (hot.kernel.share, _perf_split(perf, data))
    kernel_only = selected_stacks(profile, space="kernel")
    assert not any(f.dso == "[vdso]" for s in kernel_only for f in s.frames)


@RECORDS
def test_samples_without_frames_are_named_in_the_split_and_of_no_space(tmp_path: Path) -> None:
    """Recorded with kernel call chains only, the user-mode samples have none: perf script prints their headers
    and no frame.  They are neither kernel nor user in the split (which then adds up to 100% with them, named),
    their self row's space is unknown, and the header line says how many they are."""
    from forensics.pipelines.profile import analyse_profile
    from forensics.report.profile import _head

    data = record("clock", "kernel-chains", 0.3)
    profile = read_profile(str(data))
    hot = compute_hotspots(profile, selected_stacks(profile))
    assert hot.no_frames is not None and hot.no_frames.samples > 10
    assert hot.kernel.samples + hot.user.samples + hot.no_frames.samples == hot.total_samples
    assert abs(hot.kernel.share + hot.user.share + hot.no_frames.share - 100.0) < 1e-6
    row = next(r for r in hot.self_symbols if r.key == "[no frames]")
    assert row.kernel is None and row.samples == hot.no_frames.samples
    # ue15 #13: the per-DSO table dropped them (its shares summed to 100% less theirs, unsaid); now a row of their own
    dsos = {r.key: r for r in hot.dsos}
    assert dsos[NO_FRAMES_DSO].samples == hot.no_frames.samples and dsos[NO_FRAMES_DSO].share == hot.no_frames.share
    assert sum(r.samples for r in hot.dsos) == hot.total_samples
    head = _head(analyse_profile(str(data)))
    assert f"no call chain {hot.no_frames.share:.2f}% ({hot.no_frames.samples:,} samples" in head


@RECORDS
def test_inlined_frames_count_in_the_dso_perf_counts_them_in(tmp_path: Path) -> None:
    """Under --call-graph dwarf perf script prints ``__pthread_spin_lock+0x12 (inlined)``: "(inlined)" where the DSO
    goes (glibc's debug info names the function other than its symbol table).  From the perf.data, those frames
    count in the DSO `perf report --sort dso` counts them in (libc); from the text, which does not say it, the row
    says perf printed none and a note says so.  No DSO is named "inlined" either way."""
    from forensics.pipelines.profile import analyse_profile
    from forensics.types.profile import INLINED_DSO

    data = record("spin", "dwarf")
    perf = find_perf()
    assert perf is not None
    theirs = perf_report_dsos(data)
    result = analyse_profile(str(data))
    mine = {r.key.rsplit("/", 1)[-1]: r.share for r in result.hot.dsos}
    assert theirs.get("libc.so.6", 0.0) > 10.0  # the spinning is in libc
    for dso, share in theirs.items():
        assert abs(mine.get(dso, 0.0) - share) < 0.1, (dso, mine, theirs)
    assert not any(r.dso in ("inlined", INLINED_DSO) for r in result.hot.self_symbols)

    text = tmp_path / "spin.perf.txt"
    with open(text, "wb") as f:
        subprocess.run([perf, "script", "-i", str(data)], stdout=f, stderr=subprocess.DEVNULL, check=True)
    result = analyse_profile(str(text))
    dsos = {r.key: r for r in result.hot.dsos}
    assert "inlined" not in dsos
    row = dsos[INLINED_DSO]
    assert any(
        n.startswith(f"{row.samples:,} samples ({row.share:.2f}% of the period) end in a frame perf script")
        for n in result.profile.notes
    )


@RECORDS
def test_the_two_readings_in_step_find_every_sample_whatever_the_uptime() -> None:
    """The DSO and symbol-table name of an "(inlined)" frame come from ``perf script -F time,ip,sym,dso`` read with
    and without --no-inline, sample by sample.  perf right-aligns the time in 12 columns: under 10,000 s of uptime
    a sample's header is indented as its frame lines are (``  795.085854: ``), and none was found (on a freshly
    booted machine: the "(inlined)" DSO row, ``perf annotate -s __pthread_spin_lock`` "has no samples").  With
    --reltime every time is short, indented: the samples read are the ones perf report counts, with their frames."""
    from collectors.perf_script import _samples

    data = record("spin", "dwarf")
    perf = find_perf()
    assert perf is not None
    # The samples as perf's raw dump lists them: its report's "# Samples: 1K" rounds from 1,000 on (a quiet machine's
    # recording of the spin: 1,158, read as 1 until 2026-12-07).
    dump = subprocess.run([perf, "report", "-i", str(data), "-D"], capture_output=True, timeout=120, check=True).stdout
    counted = len(re.findall(rb" PERF_RECORD_SAMPLE\(", dump))
    assert counted > 0
    for extra in (["--reltime"], []):
        out = subprocess.run(
            [perf, "script", "-i", str(data), *extra, "-F", "time,ip,sym,dso"],
            capture_output=True,
            timeout=120,
            check=True,
        ).stdout
        assert out.startswith(b" ") or not extra  # the premise: a short time is indented
        got = list(_samples(out.splitlines(keepends=True)))
        assert len(got) == counted, (extra, len(got), counted)
        assert sum(map(len, (lines for _, lines in got))) == out.count(b"\n\t")
        assert any(b"(inlined)" in line for _, lines in got for line in lines)


@RECORDS
def test_hot_instructions_step_names_the_symbol_perf_annotate_finds(tmp_path: Path) -> None:
    """Under --call-graph dwarf the spinning's frame is glibc's debug-info name ``__pthread_spin_lock``, which perf
    annotate -s does not find ("has no samples"); the next step names the symbol table's symbol at that address
    (``pthread_spin_lock@@GLIBC_2.34`` as perf script --no-inline prints it), and that command annotates it."""
    import shlex

    from detectors.profile.findings import _hot_instructions_step

    data = record("spin", "dwarf")
    profile = read_profile(str(data))
    hot = compute_hotspots(profile, selected_stacks(profile))
    assert "__pthread_spin_lock" in {r.key for r in hot.self_symbols}
    step = _hot_instructions_step(profile, "__pthread_spin_lock", None)
    command = shlex.split(step.split("`")[1])
    assert command[:2] == ["perf", "annotate"], step
    perf = find_perf()
    assert perf is not None
    # As given (review ue19 #11: it had no -i FILE, and perf annotate said "failed to open perf.data" in any other
    # directory than the recording's).
    out = subprocess.run([perf, *command[1:]], capture_output=True, timeout=120, check=False, cwd=tmp_path)
    text = out.stdout.decode(errors="replace")
    assert out.returncode == 0 and "Source code & Disassembly of libc" in text, (step, out.stderr[-300:])


def test_a_perf_data_of_another_host_takes_its_symbols_from_there() -> None:
    """Review ue19 #10: a perf.data recorded on host otherbox, read on vm where the binary is not, was told "install
    its debug symbols, e.g. the -dbgsym package" with no word of the other host.  Its step and what was examined say
    the recording is from otherbox and its symbols must come from there (perf archive); a perf.data of this host keeps
    the -dbgsym advice; the perf annotate step names the file (review ue19 #11)."""
    from detectors.profile.findings import _hot_instructions_step
    from forensics.pipelines.profile import examined_profile
    from forensics.types.profile import Profile

    def profile(host: str) -> Profile:
        return Profile("/r/other.data", "perf.data", [], {}, None, None, None, 0, host=host, read_on="vm")

    other, here = profile("otherbox"), profile("vm")
    step = _hot_instructions_step(other, "[hot2]", "/tmp/other/hot2")
    assert step.startswith("`perf report -i /r/other.data --stdio --dsos /tmp/other/hot2 --sort sym` lists")
    assert "the recording is from host otherbox and was read on vm" in step and "perf archive" in step, step
    assert "-dbgsym" not in step
    assert "-dbgsym" in _hot_instructions_step(here, "[hot2]", "/tmp/other/hot2")
    (said,) = [c for c in examined_profile(other, []).could_not if "otherbox" in c]
    assert said.startswith("frame names as host otherbox has them: the recording is from otherbox")
    assert not [c for c in examined_profile(here, []).could_not if "frame names" in c]
    annotate = _hot_instructions_step(here, "crunch", None)
    assert annotate.startswith("`perf annotate -i /r/other.data --stdio -s crunch` shows the hot instructions")
