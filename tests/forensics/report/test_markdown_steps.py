"""Next steps in markdown and HTML: commands in code, advice as prose."""

from __future__ import annotations

from pathlib import Path

from forensics.report.html import next_step_html
from forensics.report.markdown import next_step_md


def test_advice_is_prose_and_only_commands_are_code() -> None:
    """The next steps of the bundled demo's report (kforensic report on 08-slab-leak): "boot with slub_debug=U,...,
    then read ..." and "compare the boot ids ..." were code spans, read as commands to paste."""
    boot = (
        "boot with slub_debug=U,kf_leak_obj (also stops merging it), then read "
        "/sys/kernel/debug/slab/kf_leak_obj/alloc_traces for the allocating call sites"
    )
    assert next_step_md(boot) == boot
    assert next_step_md("compare the boot ids (/proc/sys/kernel/random/boot_id) and host names of the inputs") == (
        "compare the boot ids (/proc/sys/kernel/random/boot_id) and host names of the inputs"
    )
    assert next_step_md("if it was a kdump test, the dump is the test's result: kforensic kdump check") == (
        "if it was a kdump test, the dump is the test's result: `kforensic kdump check`"
    )
    assert next_step_md("count VMAs per process: wc -l /proc/[0-9]*/maps | sort -n | tail") == (
        "count VMAs per process: `wc -l /proc/[0-9]*/maps | sort -n | tail`"
    )
    assert next_step_md("ps -eLf | wc -l (threads)") == "`ps -eLf | wc -l` (threads)"
    # Commands stay code, prompts and the prose after "  # " as before.
    assert next_step_md("kforensic trace --around 797.702480:20 <trace>") == (
        "`kforensic trace --around 797.702480:20 <trace>`"
    )
    assert next_step_md("crash> log  # who requested it") == "`crash> log` — who requested it"
    assert next_step_md("crash> dis -l f; crash> kmem <entry>  # in a dump") == (
        "`crash> dis -l f`, then `crash> kmem <entry>` — in a dump"
    )
    assert next_step_html("crash> kmem <entry>  # in a dump") == "<code>crash&gt; kmem &lt;entry&gt;</code> — in a dump"
    assert next_step_html(boot) == boot


def test_the_markdown_of_a_real_log_shows_advice_as_prose(tmp_path: Path) -> None:
    """kforensic dmesg -f md on the 02-bug-on guest's console: its hypothesis said "next: `read the condition at
    kf_buggy/kf_buggy.c:156; kforensic vmcore DUMP --source-dir DIR evaluates it`" and its finding's step
    "`Search the title on the kernel mailing lists and syzbot; ...`"."""
    from tests.forensics.test_cli import run

    log = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "cases" / "02-bug-on" / "console.log"
    done = run("dmesg", log, "-f", "md", "-o", tmp_path / "out.md")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out.md").read_text()
    assert "next: read the condition at kf_buggy/kf_buggy.c:156; kforensic vmcore DUMP" in text
    assert "- Search the title on the kernel mailing lists and syzbot;" in text
    assert "`read the condition" not in text and "`Search the title" not in text


def test_the_commands_a_steps_prose_quotes_stay_code(tmp_path: Path) -> None:
    """kforensic profile -f md on the bundled lock-contention recording: its steps quote commands in backticks
    ("record sched_switch (`perf sched record`, ...)", "`perf annotate --stdio -s critical` shows the hot
    instructions").  Taken for prose, their backticks were escaped to quotes: "'perf sched record'", and HTML
    showed the backticks as text."""
    from tests.forensics.test_cli import run

    recording = Path(__file__).resolve().parents[2] / "data" / "profile" / "contend.perf.txt.gz"
    done = run("profile", recording, "-f", "md", "-o", tmp_path / "out.md")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out.md").read_text()
    assert "- `perf annotate --stdio -s critical` shows the hot instructions;" in text
    assert "record sched_switch (`perf sched record`, `perf record -e sched:sched_switch -g`) or run " in text
    assert "'perf" not in text
    step = "count them with `perf trace -s -p PID` or `strace -c -f -p PID`; batch the work"
    assert next_step_html(step) == (
        "count them with <code>perf trace -s -p PID</code> or <code>strace -c -f -p PID</code>; batch the work"
    )
