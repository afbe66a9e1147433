"""Run the kforensic CLI with ``python -m forensics``."""

from forensics.cli import entry

entry()
