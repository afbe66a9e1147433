"""RT throttling's defaults: the budget the kernel gives a CPU's real-time tasks.

Read by the scheduling analysis (detectors/sched/harm.py) and by the incident's plain words for the kernel log's RT
throttling line (detectors/incident/hypotheses.py), which a ``kforensic dmesg`` run makes without importing the
scheduling analysis.
"""

from __future__ import annotations

from typing import Final

#: RT throttling's defaults (s): the RT tasks of a CPU may run sched_rt_runtime_us (950 ms) of every
#: sched_rt_period_us (1 s); only then do CFS tasks get the rest (Documentation/scheduler/sched-rt-group.rst).
RT_RUNTIME: Final = 0.95
RT_PERIOD: Final = 1.0
