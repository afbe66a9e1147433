"""tools/venv_install.py: pip's settings given to uv, or the install left to pip (the Makefile's installs)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_PATH = Path(__file__).resolve().parent.parent / "tools" / "venv_install.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("venv_install", _PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


venv_install = _load()


def test_pips_settings_are_read_from_its_own_config_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nindex-url = http://127.0.0.1:9/simple\nextra-index-url =\n    http://a/simple\n    http://b/simple\n"
        "[install]\nno-index = true\n[download]\nfind-links = /not/for/install\n"
    )
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.setenv("PIP_CONSTRAINT", str(tmp_path / "c.txt"))
    settings = venv_install.pip_settings(Path(sys.executable))
    assert settings["index-url"] == "http://127.0.0.1:9/simple"
    assert settings["extra-index-url"].split() == ["http://a/simple", "http://b/simple"]
    assert settings["no-index"] == "true" and settings["constraint"] == str(tmp_path / "c.txt")
    assert settings.get("find-links") != "/not/for/install"  # another command's section


def test_what_pip_would_install_from_is_given_to_uv() -> None:
    plan = venv_install.uv_plan(
        {
            "index-url": "http://mirror/simple",
            "extra-index-url": "\nfile:///opt/pypi/simple\nfile:///opt/more",
            "find-links": "/opt/wheels",
            "constraint": "/etc/xdg/pip/constraints.txt",
            "cert": "/etc/ssl/certs/ca-certificates.crt",
            "default-timeout": "180",
            "disable-pip-version-check": "1",
        }
    )
    assert not isinstance(plan, str)
    assert plan.options == (
        "--index-url", "http://mirror/simple",
        "--extra-index-url", "file:///opt/pypi/simple", "--extra-index-url", "file:///opt/more",
        "--find-links", "/opt/wheels",
        "--constraint", "/etc/xdg/pip/constraints.txt",
        "--index-strategy", "unsafe-best-match",
    )  # fmt: skip
    assert plan.environment == {"UV_HTTP_TIMEOUT": "180", "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"}


def test_no_settings_is_pypi_with_a_short_timeout_and_no_index_is_kept() -> None:
    assert venv_install.uv_plan({}) == venv_install.UvPlan((), {"UV_HTTP_TIMEOUT": "15"})
    assert venv_install.uv_plan({"no-index": "true", "find-links": "/w"}).options == (
        "--no-index", "--find-links", "/w", "--index-strategy", "unsafe-best-match",
    )  # fmt: skip
    assert "--no-index" not in venv_install.uv_plan({"no-index": "false"}).options


@pytest.mark.parametrize("name", ["trusted-host", "proxy", "require-hashes", "pre", "only-binary"])
def test_a_setting_uv_is_not_given_leaves_the_install_to_pip(name: str) -> None:
    assert venv_install.uv_plan({"index-url": "http://mirror/simple", name: "x"}) == (
        f"pip's setting {name!r} has no uv equivalent here"
    )


def test_a_pip_that_cannot_list_its_settings_leaves_the_install_to_pip(tmp_path: Path) -> None:
    import venv

    venv.create(tmp_path / "v", with_pip=False)  # no pip: "pip config list" fails, said, never a traceback
    assert venv_install.pip_settings(tmp_path / "v" / "bin" / "python") is None
