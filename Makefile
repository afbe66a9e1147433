# kforensic — developer entry points. `make demo` and `make test` work on a fresh
# Debian/Ubuntu machine with Python >= 3.11 and python3-venv installed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEMO   := demo-out

.PHONY: demo test test-native check lint typecheck pytest pytest-native clean check-python compile jit warm

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kforensic needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'

# Packages are installed by tools/venv_install.py: with uv (astral-sh/uv, installed into the venv from PyPI), given
# pip's own settings (index URLs, find-links, constraints, certificate, timeout), where they all have an equivalent;
# else, or where uv fails, with pip (said on stderr).  pip took 22-24 s of a fresh clone's make test on a 2-core VM
# for the dev extras, one package after another; uv resolves and unpacks in parallel.
$(BIN)/python: | check-python
	$(PYTHON) -m venv $(VENV) || { echo "creating the venv failed: install python3-venv (apt-get install python3-venv)"; exit 1; }

# The demo's install writes the packages' bytecode, as pip does by default (the demo's runs import them).
$(VENV)/.installed: pyproject.toml tools/venv_install.py | $(BIN)/python
	$(BIN)/python tools/venv_install.py $(VENV) --bytecode -- -e .
	@touch $@

# No bytecode: pip byte-compiled every module of every package it installed (scipy, pandas, dask, mypy, ...), 28 of
# the 44 s of CPU of this step on a fresh clone; the tests compile only what they import, once (make warm, make
# pytest).
$(VENV)/.installed-dev: pyproject.toml tools/venv_install.py | $(BIN)/python
	$(BIN)/python tools/venv_install.py $(VENV) -- -e '.[dev]'
	@touch $@ $(VENV)/.installed $(VENV)/.installed-compile

# make compile's own packages (the compile extra: mypyc, setuptools), which the dev extras hold too.  After the
# venv's own install (one install into a venv at a time, also under make -j); where they cannot be installed
# (offline, an index without mypy), make compile still builds the rest, and kforensic dmesg runs its Python source.
$(VENV)/.installed-compile: pyproject.toml tools/venv_install.py | $(VENV)/.installed
	@$(BIN)/python tools/venv_install.py $(VENV) -- -e '.[compile]' && touch $@ \
		|| echo "make compile: mypyc (the compile extra) not installed: kforensic dmesg runs its Python source" >&2

# The main job on data bundled in the repository: a real kdump of the fixture kernel
# that leaked slab objects before it crashed, the kernel log beside it, the slab
# snapshots taken during the leak (imported into a store) and a small bundled trace,
# merged into one incident report.
CASE  := vmcore_fixtures/cases/08-slab-leak
TRACE := tests/data/traces/kf.ftrace.txt.gz

$(DEMO)/vmlinux: vmcore_fixtures/vmlinux.xz | $(BIN)/python
	@mkdir -p $(DEMO)
	$(BIN)/python -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' $< $@.tmp
	@mv $@.tmp $@

demo: $(VENV)/.installed $(DEMO)/vmlinux
	@rm -f $(DEMO)/slab.db $(DEMO)/slab.db-wal $(DEMO)/slab.db-shm
	$(BIN)/kforensic slab-import $(CASE)/snapshots --store $(DEMO)/slab.db --no-analysis -o $(DEMO)/slab-import.txt
	$(BIN)/kforensic report --vmcore $(CASE) --vmlinux $(DEMO)/vmlinux --module-debug vmcore_fixtures/kf_buggy.ko \
		--dmesg $(CASE)/console.log --store $(DEMO)/slab.db --trace $(TRACE) \
		-o demo-report.md --html demo-report.html --json $(DEMO)/report.json --digest $(DEMO)/digest.json
	@echo "wrote demo-report.md and demo-report.html (inputs and intermediate files in $(DEMO)/)"

# Optional, once per install: compiles the trace reader and engine, and the profile reader's chunk pass and call chain interner,
# into the per-user cache (~/.cache/kforensic/numba), so that traces over 10 MB and profiles of many distinct
# stacks read compiled from their first run; and, with mypyc (the compile extra, installed here), kforensic dmesg's
# scanner, report reader and JSON document's items compiled to C (needs a C compiler and Python's headers:
# gcc, python3-dev), with which the syzkaller corpus four times over takes ~0.6x the CPU of the Python source.
# Small traces (the demo's) never need it. Prints what it compiles and how long it is expected to take.
compile: $(VENV)/.installed $(VENV)/.installed-compile
	$(BIN)/python -m forensics.pipelines.build

lint: $(VENV)/.installed-dev
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# pytest-xdist: one worker per core plus one, because the live tests spend minutes waiting on real time
# (slab-watch windows, a Prometheus scraping): the extra worker keeps both cores busy meanwhile.
# --dist loadgroup keeps each xdist_group on one worker (the leak tests and their controls, in turn).
# PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))

# compileall first: the tests start hundreds of `python -m forensics` children, and each compiled the project's
# modules it imports again where Python writes no bytecode itself (PYTHONDONTWRITEBYTECODE, set in some CI
# environments): 37 s of CPU instead of 23 s for test_reliability_cli.py and tests/hostile.  Stale files are
# recompiled by their timestamps, as Python would.  The tests run without PYTHONDONTWRITEBYTECODE for the same
# reason: the installed packages' modules (pip installs them uncompiled, above) are compiled at their first import
# into the venv, not again in every child.
#
# Two tiers.  make pytest runs every test but those marked native_build: the tests that build make compile's optional
# native code with a C compiler (numba.pycc and gcc, mypyc and tcc) and check it against the JIT and Python paths
# (tests/conftest.py, NATIVE_BUILDS).  make pytest-native runs only those.  CI (.ci/run) runs both.
# --no-loadscope-reorder: pytest-xdist hands out the groups in the collection's order (tests/conftest.py puts the live
# tests first, then the long ones), not by their number of tests, which it does by default: the live tests' one group
# (a few tests, ~3 min of real time waiting on slab-watch windows and a Prometheus scraping, on one worker) went out
# late and ran alone for the last 35-48 s of each run (2026-12-07: a fresh clone's last 2% of tests took 34 s and 48 s).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q --dist loadgroup --no-loadscope-reorder
pytest: $(VENV)/.installed-dev
	$(BIN)/python -m compileall -q forensics collectors detectors tests
	$(PYTEST) -n $(PYTEST_WORKERS) -m "not native_build"

# One worker per core: the tier is three xdist groups (the ahead-of-time build and its tests, each mypyc build and its
# tests), each a build then its checks on one worker; a third worker would only collect the suite once more.
NATIVE_WORKERS ?= $(shell nproc 2>/dev/null || echo 1)
pytest-native: $(VENV)/.installed-dev
	$(BIN)/python -m compileall -q forensics collectors detectors tests
	$(PYTEST) -n $(NATIVE_WORKERS) -m native_build

# The numba kernels of the trace path compiled into the per-user cache once (forensics.pipelines.build, without the
# ahead-of-time modules, which tests/collectors/aot_build.py builds in a directory of its own).  numba keys its
# cache on the source file's path, so on a fresh clone each pytest-xdist worker compiled them, all at once: three
# times 50 s of CPU.  make test runs these compiles (one process, one core each) beside mypy, then pytest:
# 23 s instead of 40 s one after another (load 2-3).  jit-perf: the profile reader's chunk pass, which the profile
# tests run through numba's JIT: ~10 s of CPU here, where each worker compiled it (the three perf test files 49.8 ->
# 21.6 s of CPU, 2026-12-06, load 5-6).  Each part is still run by make test's tests with the native tier left out
# (2026-12-06, each kernel's first load in a test recorded through numba's Dispatcher.add_overload, single files):
# engine by test_engine.py's random event sequences, scanner by its recorded traces, ctf by test_ctf_plain.py, perf
# by test_perf_chunks.py; make test-native's builds and checks read them too (below).
JIT_PARTS := jit-engine jit-scanner jit-perf jit-ctf  # longest first (make test's prelude starts them in this order)
jit: $(JIT_PARTS)
.PHONY: $(JIT_PARTS)
# Their bytecode (numba's, llvmlite's, numpy's) is written too, for the tests' processes: each part compiles it
# anyway (~2 s of CPU).  (make warm, which starts beside them in make test, may compile some of it again.)
$(JIT_PARTS): jit-%: $(VENV)/.installed-dev
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -c 'from forensics.pipelines.build import build_part; build_part("$*")'

# The bytecode the three pytest-xdist workers each compiled at once, at their collection, written once beside mypy:
# the tests' modules (rewritten by pytest for their asserts) and the packages they import (scipy, pandas, dask,
# hypothesis, drgn...: pip installs them uncompiled, above), where Python writes no bytecode itself
# (PYTHONDONTWRITEBYTECODE) as in make pytest.  A worker's collection on a fresh clone 13.3-15.5 -> 4.9-5.4 s of CPU
# (three at once, as pytest -n 3 starts them; load 10-14), for this step's 15.8-19.1 s.  Again with the native tier
# split off (2026-12-06 21:05-21:13, a fresh clone, three `pytest --collect-only` at once after compileall, A/B
# alternated twice, load 7-12): the three 50.4-53.0 s of CPU without it, 18.9-19.0 s after its 19.5-23.7 s; 52.6-54.6
# -> 38.6-42.7 s in all.  The project's modules are compiled here too: make pytest's compileall then finds them
# compiled.
warm: $(VENV)/.installed-dev
	$(BIN)/python -m compileall -q forensics collectors detectors tests
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest --collect-only -q -p no:cacheprovider > /dev/null \
		|| echo "warm: pytest's collection failed (make pytest says why)" >&2

# The prelude's six jobs, longest first (CPU seconds each, one after another on a fresh clone, load 3.3-3.7:
# typecheck 25.2, warm 19.5, jit-engine 19.3, jit-scanner 13.0, jit-perf 11.2, jit-ctf 8.0): four at once on two
# cores, the short ones last, so that no long job is left alone on one core at the end while the other waits.
test: lint
	@$(MAKE) --no-print-directory --output-sync=target -j4 typecheck warm $(JIT_PARTS)
	@$(MAKE) --no-print-directory pytest

# The native tier alone: the JIT kernels first, which its builds and checks read from the per-user cache (the
# ahead-of-time build compiles its kernels' callees from them; the JIT runs it compares with load them).  On an empty
# cache the tier compiled them itself, several times: 183 s of CPU, against 69 s for make jit then 70 s for the tier
# (2026-12-06 20:52-21:03, load 5.5-7.9).  After make test they are cached: make jit then loads them, ~5 s of CPU.
test-native: $(VENV)/.installed-dev
	@$(MAKE) --no-print-directory --output-sync=target -j2 $(JIT_PARTS)
	@$(MAKE) --no-print-directory pytest-native

# Every test: make test, then the native tier on the kernels make test's prelude compiled (what CI runs, .ci/run).
check: test
	@$(MAKE) --no-print-directory pytest-native

clean:
	rm -rf $(VENV) $(DEMO) demo-report.md demo-report.html demo-report-plots .mypy_cache .ruff_cache .pytest_cache
