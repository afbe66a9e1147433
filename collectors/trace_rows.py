"""The columns and status codes the compiled trace scanner writes (:mod:`collectors.trace_scan`).

Kept apart from the scanner so that the reader (:mod:`collectors.trace_columns`)
knows the layout without importing numba: a small input is read without
compiling anything (see ``BatchParser(compiled=False)``).
"""

from __future__ import annotations

# Columns of the integer output (rows are events); spans are [start, end) offsets into the buffer, -1 if none.
KIND, CPU, LINE_NO, PID, PRIO, NEXT_PID, NEXT_PRIO, STATE = range(8)
LINE_S, LINE_E, A_S, A_E, B_S, B_E, C_S, C_E = range(8, 16)
N_COLS = 16
# What scan() stopped at.
DONE, SLOW, FULL = 0, 1, 2
# Results of scan() in its int64 status array.
ST_POS, ST_LINE_NO, ST_ROWS, ST_UNKNOWN, ST_EVENTS, ST_USED, ST_STOP, ST_WAKING, ST_SLOW_S, ST_SLOW_E = range(10)
# Columns of the skipped events scan() writes: name span (-1, -1 when only counted), CPU, line number, line start.
N_SKIPPED = 5
