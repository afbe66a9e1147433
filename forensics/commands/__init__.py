"""One module per CLI command; each exposes ``register(app)``.

Modules here import only light libraries at import time: the CLI must answer
``--help`` fast, so drgn, pandas, scipy and matplotlib are imported inside the
command functions that need them.

They (and ``forensics/cli.py``) do not use ``from __future__ import annotations``: typer reads each command's
and callback's parameters with ``typing.get_type_hints``, which compiled and evaluated every string annotation
again on every run (building ``kforensic trace``'s command took 8.7 ms of CPU, 1.7 ms with the annotations
evaluated once at import). A name imported only for type checking is quoted where it is used.
"""
