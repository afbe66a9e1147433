"""The documentation keeps up with the CLI: every command and option is in docs/cli.md."""

from __future__ import annotations

from pathlib import Path

import typer.main

from forensics.cli import app

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _commands() -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []

    def walk(command: object, path: list[str]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
            return
        params = getattr(command, "params", [])
        opts = [o for p in params if p.param_type_name == "option" for o in p.opts if o.startswith("--")]
        out.append((" ".join(path), opts))

    walk(typer.main.get_command(app), [])
    return out


def test_every_command_and_option_is_documented() -> None:
    text = (DOCS / "cli.md").read_text()
    commands = _commands()
    assert len(commands) >= 8
    for name, opts in commands:
        heading = f"### `kforensic {name}`"
        assert heading in text, f"{heading} missing from docs/cli.md"
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        for opt in opts:
            assert f"`{opt}`" in section, f"{opt} of kforensic {name} missing from docs/cli.md"


def test_every_linked_doc_exists() -> None:
    text = (DOCS / "cli.md").read_text()
    for name in (
        "vmcore.md",
        "dmesg.md",
        "slab-watch.md",
        "leaks.md",
        "kdump.md",
        "trace.md",
        "report.md",
        "profile.md",
    ):
        assert f"]({name})" in text
        assert (DOCS / name).is_file(), name
