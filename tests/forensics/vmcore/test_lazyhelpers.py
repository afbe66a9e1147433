"""drgn.helpers.linux as a namespace loaded on demand: the same helpers, without drgn.cli's imports."""

from __future__ import annotations

import json
import subprocess
import sys

LAZY = """
import json, sys
from forensics.vmcore.lazyhelpers import defer_linux_helpers
defer_linux_helpers()
from drgn.helpers.linux.slab import for_each_slab_cache
from drgn.helpers.linux import cpumask
loaded_cli = "drgn.cli" in sys.modules
from drgn.helpers.linux import for_each_task
import drgn.helpers.linux as linux
print(json.dumps({"cli_before": loaded_cli, "all": sorted(linux.__all__), "task": for_each_task.__module__,
                  "same": for_each_slab_cache is linux.for_each_slab_cache, "cpumask": cpumask.__name__}))
"""

EAGER = """
import json
import drgn.helpers.linux as linux
print(json.dumps(sorted(linux.__all__)))
"""

STAR = """
from forensics.vmcore.lazyhelpers import defer_linux_helpers
defer_linux_helpers()
from drgn.helpers.linux import *
print(for_each_task.__module__)
"""


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_helpers_load_on_demand_and_the_package_names_stay_the_same() -> None:
    lazy = json.loads(_python(LAZY))
    assert lazy["cli_before"] is False  # importing one helper module left drgn.cli (and its REPL) out
    assert lazy["all"] == json.loads(_python(EAGER))  # a top-level name loads what drgn's __init__ loads
    assert lazy["task"] == "drgn.helpers.linux.pid" and lazy["same"] is True
    assert lazy["cpumask"] == "drgn.helpers.linux.cpumask"
    assert _python(STAR) == "drgn.helpers.linux.pid"
