"""kforensic: post-mortem crash and memory forensics for Linux kernels."""

__version__ = "0.1.0"
