"""One module per CLI command; each exposes ``register(app)``.

Modules here import only light libraries at import time: the CLI must answer
``--help`` fast, so drgn, pandas, scipy and matplotlib are imported inside the
command functions that need them.
"""
