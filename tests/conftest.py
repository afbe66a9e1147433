"""Test-wide settings: the hypothesis profiles of the fuzz suite (tests/forensics/test_fuzz_contract.py).

``pytest -m fuzz --hypothesis-profile long`` runs the bad-input contract with 500 examples per
input kind; ``make test`` runs the default profile (a few dozen per kind, within 60 s).
"""

from __future__ import annotations

from hypothesis import settings

settings.register_profile("long", max_examples=500, deadline=None)
