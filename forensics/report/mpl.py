"""matplotlib for the PNG renderers: the Agg backend, and nothing on stderr about its configuration directory.

matplotlib writes its configuration and font cache under ``$XDG_CONFIG_HOME``/``$XDG_CACHE_HOME`` (or
``~/.config``, ``~/.cache``).  Where one of them cannot be made or written (a read-only or absent home, a
service user), it falls back to a temporary directory and logs two warnings on stderr: a run that succeeded
(exit 0) then printed "mkdir -p failed ... Matplotlib created a temporary cache directory".  Here the same
fallback is taken first, silently: a private temporary directory (0700, removed at exit) as ``MPLCONFIGDIR``,
set only where matplotlib is imported and only when the default cannot be used (a usable one keeps the font
cache between runs).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from forensics.userdirs import home


def _usable(base: str, fallback: str) -> bool:
    """Whether matplotlib's directory under ``$base`` (default ``~/fallback``) can be made and written."""
    try:
        directory = Path(os.environ.get(base) or home() / fallback) / "matplotlib"
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:  # NoHomeError: no home directory to be found
        return False
    return directory.is_dir() and os.access(directory, os.W_OK)


def _private_config_dir() -> None:
    """Point matplotlib at a private temporary directory when its default ones cannot be used."""
    if "matplotlib" in sys.modules or os.environ.get("MPLCONFIGDIR"):
        return
    if _usable("XDG_CONFIG_HOME", ".config") and _usable("XDG_CACHE_HOME", ".cache"):
        return
    directory = tempfile.mkdtemp(prefix="kforensic-matplotlib-")
    atexit.register(shutil.rmtree, directory, True)
    os.environ["MPLCONFIGDIR"] = directory


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend (files, no display), its configuration directory usable."""
    _private_config_dir()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_bytes(fig: Any) -> bytes:
    """The figure as PNG bytes, drawn once.

    ``fig.tight_layout()`` lays the figure out and leaves a placeholder layout engine on it, and ``savefig``
    draws a figure that has any layout engine twice: once with drawing disabled, for the layout, then for the
    picture.  The layout is done, so the engine is dropped first: the same bytes, one draw (text layout, ticks)
    fewer.  (Without the rc context, a matplotlibrc's ``figure.autolayout`` would put a tight engine back.)
    """
    import io

    import matplotlib

    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
