"""Collectors: read the live system or files into typed snapshots.

A collector declares what it reads, takes a ``root`` path so tests can point
it at a fake tree, and records each input it read (size, sha256, time, error)
as a :class:`forensics.model.SourceRecord` for the report.
"""
