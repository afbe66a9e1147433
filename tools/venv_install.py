"""Install packages into the project's venv with uv where pip's settings allow it, else with pip (the Makefile's).

uv (astral-sh/uv, a PyPI wheel installed into the venv) resolves and unpacks the dev extras' ~60 packages in
parallel; pip, one after another on one core, took 22-24 s of a fresh clone's ``make test`` on a 2-core VM.  uv
reads none of pip's configuration (pip.conf, ``PIP_*`` variables), so the settings that choose what is installed
(index URLs, find-links, constraints, no-index) and how it is fetched (certificate, timeout) are passed to it from
``pip config list``; with more than one index, uv picks the best version over all of them, as pip does.  A setting
with no equivalent here leaves the install to pip, and so does any failure of uv (said on stderr); pip is then
upgraded first, as the venv's bundled one may be old.

    python tools/venv_install.py VENV [--bytecode] -- WHAT...

``--bytecode`` writes the installed packages' bytecode (pip's default; the demo's install); without it none is
written (``make test``: its ``warm`` step compiles what the tests import, once).
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

#: pip settings uv takes as options: pip's name -> uv's option (each of several values given once).
_AS_OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}
#: pip settings uv takes from the environment: pip's name -> uv's variable.
_AS_ENVIRONMENT = {"cert": "SSL_CERT_FILE", "default-timeout": "UV_HTTP_TIMEOUT", "timeout": "UV_HTTP_TIMEOUT"}
#: pip settings about pip's own output or its checks, which change nothing uv installs.
_IGNORED = frozenset(
    {
        "disable-pip-version-check",
        "no-color",
        "progress-bar",
        "quiet",
        "verbose",
        "root-user-action",
        "no-warn-script-location",
        "no-compile",
        "compile",
        "no-input",
        "cache-dir",
        "no-cache-dir",
        "config-file",
    }
)
#: uv's default waits 30 s a request and retries three times (~2 min) before pip may take over.
_TIMEOUT_S = "15"


class UvPlan(NamedTuple):
    """uv's options and environment for pip's settings."""

    options: tuple[str, ...]
    environment: dict[str, str]


def pip_settings(python: Path) -> dict[str, str] | None:
    """pip's configuration as ``pip config list`` prints it (files and ``PIP_*`` variables), by setting name; None
    when pip could not list it (then pip installs, with its settings as they are)."""
    done = subprocess.run([str(python), "-m", "pip", "config", "list"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None
    # "global.index-url", "install.find-links", ":env:.constraint" (a PIP_* variable), in pip's order of precedence
    # (the list is not printed in it); other commands' sections ("download.", "wheel.") are not pip install's.
    by_section: dict[str, dict[str, str]] = {"global": {}, "install": {}, ":env:": {}}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        section, _, name = key.rpartition(".")
        if sep and section in by_section:
            by_section[section][name] = str(ast.literal_eval(value))  # printed as a repr
    return {name: value for section in by_section.values() for name, value in section.items()}


def uv_plan(settings: Mapping[str, str]) -> UvPlan | str:
    """uv's options for pip's settings, or why uv cannot install as pip would."""
    options: list[str] = []
    environment = {"UV_HTTP_TIMEOUT": _TIMEOUT_S}
    for name, value in settings.items():
        if name in _AS_OPTIONS:
            for one in value.split():
                options += [_AS_OPTIONS[name], one]
        elif name in _AS_ENVIRONMENT:
            environment[_AS_ENVIRONMENT[name]] = value
        elif name == "no-index":
            if value.lower() in ("1", "true", "yes", "on"):
                options.append("--no-index")
        elif name not in _IGNORED:
            return f"pip's setting {name!r} has no uv equivalent here"
    if any(name in settings for name in ("extra-index-url", "find-links")):
        options += ["--index-strategy", "unsafe-best-match"]  # pip's choice: the best version over every index
    return UvPlan(tuple(options), environment)


def _cache_options(environment: Mapping[str, str], venv: Path) -> list[str]:
    """A cache in the venv where uv's own (``$XDG_CACHE_HOME`` or ``~/.cache``) cannot be written."""
    if "UV_CACHE_DIR" in environment:
        return []
    home = environment.get("XDG_CACHE_HOME") or str(Path(environment.get("HOME", "/nonexistent")) / ".cache")
    probe = Path(home)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return [] if os.access(probe, os.W_OK) else ["--cache-dir", str(venv / ".uv-cache")]


def _with_uv(venv: Path, bytecode: bool, what: Sequence[str]) -> str | None:
    """Install ``what`` with uv: None when done, else why not."""
    python = venv / "bin" / "python"
    settings = pip_settings(python)
    if settings is None:
        return "pip config list failed"
    plan = uv_plan(settings)
    if isinstance(plan, str):
        return plan
    uv = venv / "bin" / "uv"
    get_uv = [str(python), "-m", "pip", "install", "--quiet", "uv"]
    if not uv.exists() and subprocess.run(get_uv, check=False).returncode:
        return "uv could not be installed (above)"
    environment = {**os.environ, **plan.environment}
    command = [str(uv), "pip", "install", "--quiet", "--python", str(python), *_cache_options(environment, venv)]
    command += [*plan.options, *(["--compile-bytecode"] if bytecode else []), *what]
    return None if subprocess.run(command, check=False, env=environment).returncode == 0 else "uv failed (above)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("venv", type=Path)
    parser.add_argument("--bytecode", action="store_true", help="write the packages' bytecode")
    parser.add_argument("what", nargs="+", help="what pip install would take (after --)")
    args = parser.parse_args(argv)
    why = _with_uv(args.venv, args.bytecode, args.what)
    if why is None:
        return 0
    print(f"venv_install: {why}: installing with pip", file=sys.stderr)
    python = str(args.venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=False)
    pip = [python, "-m", "pip", "install", "--quiet", *([] if args.bytecode else ["--no-compile"]), *args.what]
    return subprocess.run(pip, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
