"""Test-wide settings: the hypothesis profiles of the fuzz suite (tests/forensics/test_fuzz_contract.py).

``pytest -m fuzz --hypothesis-profile long`` runs the bad-input contract with 500 examples per
input kind; ``make test`` runs the default profile (a few dozen per kind, within 60 s).

The default profile has no per-example deadline and no "too slow" health check: ``make test`` runs
on a shared 2-core machine beside other jobs (CI, issue 27: load >= 4), where an example's wall time
says how busy the machine is, not whether the code is right.  What an example checks is unchanged.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from forensics.cli import GC_THRESHOLDS
from tests.helpers import mount_tmpfs

# The LTTng decoder and engine built ahead of time (forensics/aot.py) are built and checked against the JIT and
# plain paths by tests/collectors/test_ctf_aot.py, in a directory of its own; every other test runs the JIT path
# as before, so that a test forcing the compiled path does not build them (45 s of CPU) into the user's cache.
os.environ.setdefault("KFORENSIC_AOT", "no")
# drgn indexes DWARF with OpenMP threads, one per core; beside pytest-xdist's three workers on two cores they only
# contend (and spin): test_layouts 6.6-7.4 -> 5.1-5.4 s of CPU alone, the vmcore files and test_followup_runs
# 64.1-66.7 -> 55.3-56.4 s under -n 3.  Set here, before any worker or child loads drgn; the product leaves it to
# the user's environment (on an idle machine the threads shorten a run's wait).
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The cyclic collector's thresholds of a kforensic run (forensics.cli.main sets them) in the test processes too: at
# Python's default (700 allocations a young collection) a worker's full collections walked every analysis, decoded
# stream and cached program its tests keep, again and again.  Counted by gc.callbacks in one process (pytest -n 0 on
# sched/test_engine, test_healthy, test_incident_report, test_evidence_audit, test_vmcore_cases, test_held_locks,
# test_same_ranking_on_dumps; 2026-12-07 23:56-00:01, load ~9): the collector 3.71 -> 2.07 s, 12 full collections ->
# none, the process 80.3 -> 78.3 s of CPU, its peak RSS 4646 -> 3099 MB.  No test asserts on the collector; the
# in-process runs (tests.helpers.collector_kept) put back these thresholds, as they put back the default before.
gc.set_threshold(*GC_THRESHOLDS)

settings.register_profile("long", max_examples=500, deadline=None)
settings.register_profile("kforensic", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kforensic")  # --hypothesis-profile NAME still chooses another (loaded after this file)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``small_tmpfs("1m")``: a real tmpfs of that size mounted in the test's directory (skip without root)."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        where = tmp_path / f"tmpfs{len(mounted)}"
        if not mount_tmpfs(where, size):
            pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)


#: The longest tests besides those marked ``live`` or ``slow`` (``pytest --durations=60``, 2 cores): a node id
#: starting with one of these runs early.  A stale entry costs nothing but its place in the order.
LONG = (
    "tests/forensics/test_write_faults.py::",
    "tests/collectors/test_ctf_layouts.py::test_random_layouts_decode_back_by_both_decoders",
    "tests/detectors/sched/test_engine.py::test_random_event_sequences",
    "tests/collectors/test_lttng_kernel_session.py::",
    "tests/detectors/sched/test_analyzer.py::test_scenario_figures_in_every_layout",
    "tests/forensics/test_incident_report.py::",
    "tests/detectors/leaks/test_power.py::test_slab_watch_warns_at_start_when_the_plan_is_too_short",
    "tests/forensics/vmcore/test_debuginfo_lookup.py::",
    "tests/collectors/test_slabwatch.py::test_sigkill_at_random_moments_loses_at_most_the_sample_in_flight",
    "tests/collectors/test_trace_columns.py::test_scanner_equals_the_line_parser",
    "tests/forensics/test_jit.py::test_first_compile_is_announced_and_cached_per_user",
    "tests/detectors/incident/test_same_ranking_on_dumps.py::",
    "tests/hostile/test_hostile.py::",  # one xdist group (its inputs made once): ~25 s of CPU on one worker
)


#: The test files whose tests read a fixture case's analysis, cached once per process (tests.vmcore_cases.analysed).
CASE_GROUPED = ("tests/forensics/vmcore/", "tests/vmcore_fixtures/")

#: The fixtures that build ``make compile``'s optional native code with a C compiler, by the test files that have
#: them: a test using one (itself or through another fixture) is marked ``native_build``.  ``make test`` leaves these
#: tests out (``-m "not native_build"``) and ``make test-native`` runs only them; CI (.ci/run) runs both.  The other
#: tests of those files (build keys, a failed build noted, nowhere to keep a build) build nothing and stay in
#: ``make test``.  tests/test_native_tier.py checks that each entry's fixture is where it says and that every test file
#: starting a build has an entry (else its build would run in ``make test``).
NATIVE_BUILDS = (
    ("tests/collectors/", "aot_built"),  # numba.pycc and gcc: make compile's build_ahead (aot_build.py)
    ("tests/detectors/dmesg/test_native.py", "built"),  # mypyc and tcc (or gcc): kforensic dmesg's modules
    ("tests/forensics/report/test_dmesg_native.py", "built"),  # mypyc and tcc (or gcc): the JSON document's items
)


@pytest.hookimpl(tryfirst=True)  # at collection: before pytest-xdist reads the xdist_group marks (--dist loadgroup)
def pytest_itemcollected(item: pytest.Item) -> None:
    """The tests that build native code are marked ``native_build`` (:data:`NATIVE_BUILDS`).  The tests of one
    fixture case (``kernel/name``) run on one pytest-xdist worker, which analyses the case once: spread over three
    workers, each analysed most of the 32 cases again."""
    from tests.vmcore_cases import PRIMARY_KERNEL, case_group, kernel_cases

    fixtures = getattr(item, "fixturenames", ())  # with the fixtures the test's fixtures use
    if any(item.nodeid.startswith(where) and name in fixtures for where, name in NATIVE_BUILDS):
        item.add_marker(pytest.mark.native_build)
    callspec = getattr(item, "callspec", None)
    if callspec is None or item.get_closest_marker("xdist_group") or not item.nodeid.startswith(CASE_GROUPED):
        return
    keys = {f"{kernel}/{name}" for kernel, name in kernel_cases()}
    # A case named alone is the primary kernel's, unless the test also takes a ``kernel`` (e.g. test_vmcore_slab_locks):
    # grouped under the primary kernel's case, those analysed the other kernel's case on another worker again.
    kernel = callspec.params.get("kernel")
    kernel = kernel if isinstance(kernel, str) else PRIMARY_KERNEL
    for value in callspec.params.values():
        key = value if isinstance(value, str) and "/" in value else f"{kernel}/{value}"
        if key in keys:
            item.add_marker(pytest.mark.xdist_group(case_group(*key.split("/", 1))))
            return


def _order(item: pytest.Item) -> int:
    if item.get_closest_marker("live"):
        return 0
    return 1 if item.get_closest_marker("slow") or item.nodeid.startswith(LONG) else 2


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first, the rest in their order: pytest-xdist hands work out in this order (make test runs
    ``pytest -n``), so a minute-long test started last cannot hold the run while the other workers idle."""
    items.sort(key=_order)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Under ``--dist loadgroup`` (make test) each ``xdist_group`` test must be grouped: pytest-xdist marks its node id
    ``@group`` in the worker.  Where it does not (pytest 9.2 with xdist 3.8, pytest-dev/pytest-xdist#1386), the
    group's tests run on any worker, beside each other: they fail, saying so, instead of passing by luck."""
    if (
        getattr(item.config.option, "loadgroup", False)
        and item.get_closest_marker("xdist_group")
        and "@" not in item.nodeid
    ):
        pytest.fail(
            "pytest-xdist did not group this xdist_group test: this pytest and pytest-xdist do not work together "
            "(pyproject.toml's dev extras pin a pair that does)",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def _sigint_left_as_found() -> Iterator[None]:
    """A test leaves the SIGINT handler as it found it: a later test in the same process (pytest -n: which one differs
    from run to run) would otherwise inherit it.  (A run started in the background of a script starts with SIGINT
    ignored, inherited from the shell: that is the environment's, and stays.)"""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        pytest.fail(f"the test left SIGINT's handler {after!r} (it found {before!r}); restored")


@pytest.fixture
def no_debug_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The root of an empty tree of standard places; no debuginfod, a cache and a home without downloads (the dump
    tests that run without the kernel's debug info).  Here, not in tests/forensics/vmcore/conftest.py: a ``pytest -n 2``
    of files from tests/forensics and tests/forensics/vmcore together did not find it there ("fixture 'no_debug_info'
    not found", 68 errors)."""
    for name in [n for n in os.environ if n.startswith("DEBUGINFOD_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "root"
