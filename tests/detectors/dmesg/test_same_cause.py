"""The same hypothesis for the same bug from a fixture's console log and from its dump, through the CLI.

For each fixture case with a bug class both inputs show (use-after-free, double free, list corruption twice,
lock cycle, OOM), ``kforensic dmesg CASE/console.log --format json`` and ``kforensic vmcore CASE --format
json`` are run.  The log's first hypothesis must be of the dump's root-cause class, and be the dump's
statement with the fields only a dump can know left out: the log's cause fields (the JSON's
``why.cause.fields``), completed with the fields the dump's explaining finding states (the slab cache, who
freed the object, the struct member, the locks each task holds), are worded by the one function of
forensics/types/causes.py into exactly the dump's statement.  So the log and the dump agree on every field they
both have (the function, the pointer and its register, the object address, the tasks, the top memory user),
and say it in the same words.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from forensics.types import causes
from tests.helpers import cli_run
from tests.vmcore_cases import FIXTURES_DIR, case_names, load_case

pytest.importorskip("drgn")

CASES = ("10-use-after-free", "12-double-free", "06-list-corrupt", "13-list-overflow", "11-abba-deadlock", "09-oom")


def _facts(finding: dict[str, Any]) -> dict[str, str]:
    return {f["name"]: f["value"] for f in finding["facts"]}


def _dump_only(cls: str, facts: dict[str, str], log_fields: dict[str, Any]) -> dict[str, Any]:
    """The fields of the dump's explaining finding that a kernel log without KASAN or lockdep does not show."""
    if cls == "use_after_free":
        return {
            "cache": re.search(r"in cache (\S+?):", facts["object"]).group(1),  # type: ignore[union-attr]
            "freed_by": facts["freed by"].split("+")[0] if "freed by" in facts else None,
            "referenced_by": facts["still pointed to by"].split(", ") if "still pointed to by" in facts else (),
        }
    if cls == "double_free":
        return {
            "cache": re.search(r"in cache (\S+?):", facts["object"]).group(1),  # type: ignore[union-attr]
            "where": facts["second free"].split(" at ", 1)[1] if " at " in facts.get("second free", "") else None,
        }
    if cls == "list_corruption":
        member = facts["list head"].split(" at offset")[0]
        out: dict[str, Any] = {"member": member}
        words = [int(w, 16) for w in facts["entry words (next, prev)"].split(", ")]
        if "poisons" in log_fields and words[1:] == [0xDEAD000000000122]:
            out["poisons"] = [*log_fields["poisons"], "prev"]
        if "text" in log_fields:
            name, kind = facts["member before it"].split(" ", 1)
            out["source"] = f"{member.rsplit('.', 1)[0]}.{name} {kind}"
        return out
    if cls == "lock_cycle":
        waiters = []
        for w in log_fields["waiters"]:
            prefix = next(k.removesuffix(" holds") for k in facts if k.startswith(f"{w['comm']} (pid ") and
                          k.endswith(" holds"))  # fmt: skip
            wants = facts[f"{prefix} wants"].split(" (held by")[0].split(" ", 1)[1]
            waiters.append({**w, "holds": facts[f"{prefix} holds"], "wants": wants})
        return {"waiters": waiters}
    return {}


@pytest.mark.parametrize("name", CASES)
def test_log_and_dump_state_the_same_cause(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if name not in case_names():
        pytest.skip("the vmcore fixtures are absent (vmcore_fixtures/build.sh)")
    case = load_case(name)
    common: list[str | Path] = ["--vmlinux", case.vmlinux, "--source-dir", FIXTURES_DIR / "kf_buggy"]
    for m in case.module_debug:
        common += ["--module-debug", m]
    # In this process (the CLI's entry, its documents as a process writes them): what is compared is the two
    # documents; vmcore as a process on a real dump is tested in tests/forensics/test_reliability_cli.py and
    # vmcore/test_shell.py, dmesg in tests/forensics/commands/test_dmesg_cli.py (0.5-1 s of CPU a vmcore process).
    dumped = cli_run(
        monkeypatch, capsys, "vmcore", case.directory, *common, "--format", "json", "-o", tmp_path / "vmcore.json"
    )
    assert dumped.returncode in (0, 1), dumped.stderr
    logged = cli_run(monkeypatch, capsys, "dmesg", case.console_log, "--format", "json", "-o", tmp_path / "dmesg.json")
    assert logged.returncode in (0, 1), logged.stderr
    dump = json.loads((tmp_path / "vmcore.json").read_text())
    log = json.loads((tmp_path / "dmesg.json").read_text())

    root = dump["why"]["root_cause"]
    found = [r["why"]["cause"] for s in log["sources"] for r in (*s["reports"], *s["events"])
             if r.get("why") and r["why"]["cause"] and r["why"]["cause"]["class"] == root["class"]]  # fmt: skip
    assert found, f"the log states no {root['class']} cause"
    cause = found[0]
    # The log's top hypothesis is that cause; the dump's is its root cause.
    assert log["hypotheses"][0]["statement"] == cause["statement"]
    assert dump["hypotheses"][0]["statement"] == root["statement"]
    # One wording: the log's fields alone give the log's statement, and with the dump's own fields the dump's.
    assert causes.render(cause["class"], cause["fields"]) == cause["statement"]
    finding = next(f for f in dump["incident"]["findings"] if f["id"] == root["finding"])
    fields = cause["fields"] | {k: v for k, v in _dump_only(root["class"], _facts(finding), cause["fields"]).items()
                                if v not in (None, ())}  # fmt: skip
    assert causes.render(root["class"], fields) == root["statement"]
