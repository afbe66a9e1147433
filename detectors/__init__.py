"""Detectors: pure analysis. Plain data (typed snapshots) in, findings out.

Nothing in this package reads files, the live system or the clock.
"""
